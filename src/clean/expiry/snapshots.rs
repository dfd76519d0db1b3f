//! Snapshot expiration (spec §5.2), safer than Java: a file is deleted only when no retained
//! snapshot, no tag of any branch, no snapshot of another branch and no long-lived changelog
//! still needs it. Deletion order is crash-safe: data → changelog data → empty directories →
//! manifests / index files / statistics → manifest lists / index manifests → snapshot files →
//! EARLIEST hint.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::expiry::plan::{stop_if_failed, DeletionPlan, MetadataScope, RemovedMetadata};
use crate::clean::expiry::protected::protectors::{other_protectors_except, snapshot_line};
use crate::clean::expiry::protected::{ProtectMode, Protector, ReferenceReader};
use crate::clean::expiry::range::{snapshot_range, ExpiryBound};
use crate::clean::expiry::removed::{added_by_lists, deleted_by_deltas, manifests_by_list};
use crate::clean::expiry::retention::{AssumeRemoved, Retention, RetentionOverrides};
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::clock::now_millis;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::error::{Error, Result};
use crate::spec::snapshot::Snapshot;
use crate::table::Table;

/// Caller settings for snapshot expiry; unset fields take the table's options, then Paimon's
/// defaults.
#[derive(Debug, Clone, Default)]
pub struct ExpireConfig {
    /// Retention overrides (min/max retained, time retained or absolute cut-off, limit).
    pub retention: RetentionOverrides,
    /// Remove bucket and partition directories left empty (`snapshot.clean-empty-directories`).
    pub clean_empty_dirs: Option<bool>,
    /// Compute and report everything, change nothing.
    pub dry_run: bool,
    /// Lance's policy: refuse to run (naming the tags) when a tag pins a snapshot that would
    /// otherwise expire, instead of silently keeping its files.
    pub refuse_if_tags_pin_expired: bool,
    /// Tags and consumers to treat as removed (see [`AssumeRemoved`]).
    pub assume_removed: AssumeRemoved,
}

/// What an expiry run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExpireReport {
    /// Number of snapshots expired.
    pub snapshots_expired: u64,
    /// First expired id.
    pub first_expired: Option<i64>,
    /// Last expired id.
    pub last_expired: Option<i64>,
    /// Earliest snapshot after the run.
    pub earliest_after: Option<i64>,
    /// Long-lived changelog files written (decoupled changelog lifecycle).
    pub changelogs_written: u64,
    /// The bound that kept the snapshots from `earliest_after` on (retain-min, a consumer, the
    /// limit, the time rule; no snapshot at all): why nothing, or no more, expired.
    pub kept_by: Option<ExpiryBound>,
    /// Files deleted per kind, failures and paths.
    pub deletion: DeletionReport,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// Expire snapshots of `table`'s branch: resolve the retention, pick the range to expire, plan
/// the deletions against every protector, delete in the crash-safe order, then move the
/// `EARLIEST` hint.
pub async fn expire_snapshots(
    table: &Table,
    cfg: &ExpireConfig,
    ctl: &RunControl,
) -> Result<ExpireReport> {
    let started = Instant::now();
    let storage = table.storage();
    let mut report = ExpireReport::default();
    let mut deleter = Deleter::for_table(table, ctl, cfg.dry_run);
    let run = match prepare(table, cfg, ctl).await? {
        Prepared::Nothing => {
            report.kept_by = Some(ExpiryBound::NoSnapshots);
            report.elapsed_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
        Prepared::HintOnly { earliest, bound } => {
            report.kept_by = Some(bound);
            write_earliest_if_absent(table, cfg.dry_run, earliest).await?;
            report.earliest_after = Some(earliest);
            report.deletion = deleter.report;
            report.elapsed_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
        Prepared::AllKept { end, bound } => {
            report.kept_by = Some(bound);
            report.earliest_after = Some(end);
            report.deletion = deleter.report;
            report.elapsed_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
        Prepared::Expire(run) => run,
    };
    let ExpiryRun {
        settings,
        expired,
        kept,
        sizes,
        begin,
        end,
        delta_lists,
        bound,
    } = run;
    report.kept_by = Some(bound);
    let decoupled = settings.retention.changelog_decoupled;
    let plan = plan_deletions(
        table,
        &delta_lists,
        &expired,
        &kept,
        decoupled,
        &cfg.assume_removed.tags,
        &deleter,
    )
    .await?;
    ctl.cancel.check()?;
    let snapshot_files = snapshot_files(table, &expired, &sizes);
    // The snapshot files go after the plan: they are checked with it, before anything goes.
    deleter.check_plan(&snapshot_files).await?;
    plan.execute(table, &mut deleter, settings.clean_dirs)
        .await?;
    if decoupled && !cfg.dry_run {
        report.changelogs_written = write_long_lived_changelogs(table, &expired).await?;
    }
    deleter.delete("snapshot files", snapshot_files).await?;
    // A snapshot file left behind must stay visible to a rerun: no EARLIEST past it.
    stop_if_failed(&deleter)?;
    if !cfg.dry_run {
        table
            .snapshots()
            .write_hint(storage, "EARLIEST", end)
            .await?;
    }

    report.snapshots_expired = expired.len() as u64;
    report.first_expired = Some(begin);
    report.last_expired = expired.last().map(|s| s.id);
    report.earliest_after = Some(end);
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        expired = report.snapshots_expired,
        files = report.deletion.total_files(),
        "expired snapshots"
    );
    Ok(report)
}

/// What a snapshot expiry has to do once its range is known ([`prepare`]).
pub(crate) enum Prepared {
    /// Nothing: no snapshot, or nothing may expire.
    Nothing,
    /// Nothing expires, but `EARLIEST` is written (when absent) at `earliest`.
    HintOnly {
        /// The earliest snapshot.
        earliest: i64,
        /// The bound that held.
        bound: ExpiryBound,
    },
    /// Every snapshot of the range is kept; the earliest after the run is `end`.
    AllKept {
        /// The first kept snapshot.
        end: i64,
        /// The bound that held.
        bound: ExpiryBound,
    },
    /// Snapshots expire.
    Expire(ExpiryRun),
}

/// The snapshots a run expires and keeps, with its settings.
pub(crate) struct ExpiryRun {
    /// The resolved settings.
    pub(crate) settings: Settings,
    /// The expired snapshots, ascending (only the list-size keys of their extra fields unless
    /// the changelog lifecycle is decoupled).
    pub(crate) expired: Vec<Snapshot>,
    /// `end` and every later snapshot, ascending.
    pub(crate) kept: Vec<Snapshot>,
    /// The snapshot files' sizes from the listing.
    pub(crate) sizes: BTreeMap<i64, u64>,
    /// The first expired id.
    pub(crate) begin: i64,
    /// The first kept id.
    pub(crate) end: i64,
    /// The delta lists whose DELETE entries are candidates: those of the expired snapshots
    /// but the first, and of `end`.
    pub(crate) delta_lists: Vec<String>,
    /// The bound that kept `end` and what follows.
    pub(crate) bound: ExpiryBound,
}

/// Resolves the settings, reads the snapshots and picks the range to expire; refuses
/// (Lance's policy) when tags pin expired snapshots. Reads only.
pub(crate) async fn prepare(
    table: &Table,
    cfg: &ExpireConfig,
    ctl: &RunControl,
) -> Result<Prepared> {
    let settings = Settings::resolve(table, cfg)?;
    let decoupled = settings.retention.changelog_decoupled;
    let (all, sizes) = read_snapshots_sized(table).await?;

    let Some((earliest, end, bound)) = snapshot_range(
        table,
        &settings.retention,
        !settings.changelog_only,
        &cfg.assume_removed.consumers,
        &all,
    )
    .await?
    else {
        return Ok(Prepared::Nothing);
    };
    if end <= earliest {
        return Ok(Prepared::HintOnly { earliest, bound });
    }
    if !all.contains_key(&end) {
        return Err(Error::Conflict(format!(
            "snapshot {end}, the first one to keep, is missing; refusing to expire (nothing deleted)"
        )));
    }
    // The snapshots are split, not copied (10,000 snapshots take about 6 MB): `end` and every
    // later one are kept, [earliest, end) expire, the older ones are not needed.
    let mut older = all;
    let kept_map = older.split_off(&end);
    let expired_map = older.split_off(&earliest);
    drop(older);
    let mut expired: Vec<Snapshot> = expired_map.into_values().collect();
    if !decoupled {
        // Held until the run ends, and only their ids and manifest names are needed then,
        // with the sizes of their lists (reported): the other keys go. A decoupled
        // run copies them whole into long-lived changelogs.
        for s in &mut expired {
            s.extra.retain(|k, _| LIST_SIZE_KEYS.contains(&k));
        }
    }
    let Some(begin) = expired.first().map(|s| s.id) else {
        return Ok(Prepared::AllKept { end, bound });
    };
    if cfg.refuse_if_tags_pin_expired {
        refuse_if_tags_pin(table, &cfg.assume_removed.tags, end).await?;
    }
    ctl.cancel.check()?;

    // Candidates: files deleted by the deltas of (begin, end] and changelog files of
    // [begin, end); protectors: `end` and every later snapshot (`end` first), and everything
    // else.
    let kept: Vec<Snapshot> = kept_map.into_values().collect();
    let delta_lists: Vec<String> = expired
        .iter()
        .skip(1)
        .chain(kept.first())
        .map(|s| s.delta_manifest_list.clone())
        .collect();
    Ok(Prepared::Expire(ExpiryRun {
        settings,
        expired,
        kept,
        sizes,
        begin,
        end,
        delta_lists,
        bound,
    }))
}

/// Writes `EARLIEST` at `earliest` when it is absent (not in a dry run).
pub(crate) async fn write_earliest_if_absent(
    table: &Table,
    dry_run: bool,
    earliest: i64,
) -> Result<()> {
    let storage = table.storage();
    let dir = table.snapshots();
    if !dry_run && !storage.exists(&dir.hint_location("EARLIEST")).await? {
        dir.write_hint(storage, "EARLIEST", earliest).await?;
    }
    Ok(())
}

/// The keys of a snapshot that record the sizes of its manifest lists.
const LIST_SIZE_KEYS: [&str; 3] = [
    "baseManifestListSize",
    "deltaManifestListSize",
    "changelogManifestListSize",
];

/// What a snapshot expiry runs with: the caller's settings over the table's options.
pub(crate) struct Settings {
    /// Resolved retention (it also says whether the changelog lifecycle is decoupled).
    pub(crate) retention: Retention,
    /// Remove directories left empty.
    pub(crate) clean_dirs: bool,
    /// Consumers read changelogs only (`consumer.changelog-only`, decoupled lifecycle): they
    /// do not hold snapshots back.
    pub(crate) changelog_only: bool,
}

impl Settings {
    fn resolve(table: &Table, cfg: &ExpireConfig) -> Result<Settings> {
        let options = table.options();
        let retention = Retention::resolve_snapshot(options, &cfg.retention, now_millis())?;
        let clean_dirs = match cfg.clean_empty_dirs {
            Some(v) => v,
            None => options
                .get_bool("snapshot.clean-empty-directories")?
                .or(options.get_bool("snapshot.expire.clean-empty-directories")?)
                .unwrap_or(false),
        };
        let changelog_only = retention.changelog_decoupled
            && options
                .get_bool("consumer.changelog-only")?
                .unwrap_or(false);
        Ok(Settings {
            retention,
            clean_dirs,
            changelog_only,
        })
    }
}

/// Lance's policy ([`ExpireConfig::refuse_if_tags_pin_expired`]): a conflict naming every tag
/// of the branch (but `skip_tags`) on a snapshot before `end`.
async fn refuse_if_tags_pin(table: &Table, skip_tags: &[String], end: i64) -> Result<()> {
    let pinned: Vec<String> = table
        .tags()
        .await?
        .into_iter()
        .filter(|(n, _)| !skip_tags.contains(n))
        .filter(|(_, t)| t.snapshot.id < end)
        .map(|(n, t)| format!("{n} (snapshot {})", t.snapshot.id))
        .collect();
    if pinned.is_empty() {
        return Ok(());
    }
    Err(Error::Conflict(format!(
        "tags pin snapshots older than the retention window: {}",
        pinned.join(", ")
    )))
}

/// The deletion plan of expiring `expired`: candidates are the files deleted by `delta_lists`
/// (an ADD of the same location in the same delta cancels: level upgrade) and the changelog
/// files of `expired`; protectors are `kept` (this branch's snapshots from the first kept one)
/// and everything [`read_protectors`] adds.
///
/// The protectors and their lists are read first, with the delta lists; then the delta
/// manifests, each decoded once: one a protector names is also kept for protection. On object
/// stores the protectors' other manifests and index manifests are fetched meanwhile
/// (`ReferenceReader::prefetch`). The changelog candidates and the expired versions' own
/// metadata (lists, index manifests) are read alongside all of it.
async fn plan_deletions(
    table: &Table,
    delta_lists: &[String],
    expired: &[Snapshot],
    kept: &[Snapshot],
    decoupled: bool,
    skip_tags: &[String],
    deleter: &Deleter<'_>,
) -> Result<DeletionPlan> {
    // The deleter's budget: planning and the report share the run's memory bound.
    let ctl = deleter.control();
    let mut rr = ReferenceReader::new(table).with_memory(deleter.memory());
    let changelog_lists: Vec<String> = expired
        .iter()
        .filter_map(|s| s.changelog_manifest_list.clone())
        .collect();
    let deltas_and_protectors = async {
        let ((protectors, named), ()) = futures::try_join!(
            read_protectors(&rr, table, kept, expired, decoupled, skip_tags),
            rr.load_lists(delta_lists, true)
        )?;
        let read_by_candidates: HashSet<String> = manifests_by_list(&rr, delta_lists)
            .into_iter()
            .map(|(_, m)| m)
            .filter(|m| named.contains(m))
            .collect();
        let (candidates, ()) = futures::try_join!(
            deleted_by_deltas(&rr, table, delta_lists, &named),
            rr.prefetch(&protectors, &read_by_candidates),
        )?;
        Ok::<_, Error>((candidates, protectors))
    };
    let ((mut candidates, protectors), changelog_candidates, removed_metadata) = futures::try_join!(
        deltas_and_protectors,
        added_by_lists(&rr, table, &changelog_lists, FileClass::ChangelogData),
        RemovedMetadata::read(&rr, table, expired, MetadataScope::All),
    )?;
    candidates.append(changelog_candidates)?;
    ctl.cancel.check()?;
    tracing::debug!(
        candidates = candidates.len(),
        protectors = protectors.len(),
        "candidates and protectors read"
    );
    let plan =
        DeletionPlan::from_parts(&mut rr, table, candidates, removed_metadata, &protectors).await?;
    tracing::debug!(data_files = plan.data.len(), "deletion plan ready");
    Ok(plan)
}

/// Every version that protects files from a snapshot expiry, and the manifests they name: the
/// kept snapshots of this branch (their lists read first: known already), every tag (but
/// `skip_tags` of this branch), other branches, changelogs, and (decoupled lifecycle) the
/// expired snapshots that become long-lived changelogs now.
pub(crate) async fn read_protectors(
    rr: &ReferenceReader<'_>,
    table: &Table,
    kept: &[Snapshot],
    expired: &[Snapshot],
    decoupled: bool,
    skip_tags: &[String],
) -> Result<(Vec<Protector>, HashSet<String>)> {
    let mut protectors = snapshot_line(&format!("branch {}", table.branch_name()), kept);
    let (mut others, mut named) = futures::try_join!(
        other_protectors_except(table, skip_tags),
        rr.protector_manifests(&protectors),
    )?;
    if decoupled {
        others.extend(expired.iter().map(|s| Protector {
            label: format!("new changelog {}", s.id),
            snapshot: s.clone(),
            mode: ProtectMode::Changelog,
        }));
    }
    named.extend(rr.protector_manifests(&others).await?);
    protectors.append(&mut others);
    Ok((protectors, named))
}

/// The files of the `expired` snapshots, with their sizes from the listing.
pub(crate) fn snapshot_files(
    table: &Table,
    expired: &[Snapshot],
    sizes: &BTreeMap<i64, u64>,
) -> Vec<Planned> {
    let dir = table.snapshots();
    expired
        .iter()
        .map(|s| Planned {
            location: dir.location(s.id),
            class: FileClass::SnapshotMeta,
            bytes: sizes.get(&s.id).copied(),
        })
        .collect()
}

/// Decoupled lifecycle: writes the long-lived changelog of every `expired` snapshot, then the
/// changelog `LATEST` hint; returns how many were written.
pub(crate) async fn write_long_lived_changelogs(
    table: &Table,
    expired: &[Snapshot],
) -> Result<u64> {
    let storage = table.storage();
    let changelogs = table.changelogs();
    let mut written = 0;
    for s in expired {
        storage
            .put(
                &changelogs.location(s.id),
                bytes::Bytes::from(changelog_of(s).to_json()?),
            )
            .await?;
        written += 1;
    }
    if let Some(last) = expired.last() {
        changelogs.write_hint(storage, "LATEST", last.id).await?;
    }
    Ok(written)
}

/// The long-lived changelog a decoupled expiry writes for snapshot `s`: the snapshot without
/// its index manifest and statistics. Those go with the snapshot (as in Java, whose changelog
/// still names them once deleted); a changelog reader needs neither, and a changelog that
/// named deleted files would make every strict reader (orphan removal) refuse the table.
fn changelog_of(s: &Snapshot) -> Snapshot {
    let mut c = s.clone();
    c.index_manifest = None;
    c.statistics = None;
    c
}

/// Every snapshot of the table's branch by id, and each snapshot file's size from the listing.
async fn read_snapshots_sized(
    table: &Table,
) -> Result<(BTreeMap<i64, Snapshot>, BTreeMap<i64, u64>)> {
    let mut all = BTreeMap::new();
    let mut sizes = BTreeMap::new();
    for (s, size) in table.all_snapshots_sized().await? {
        sizes.insert(s.id, size);
        all.insert(s.id, s);
    }
    Ok((all, sizes))
}
