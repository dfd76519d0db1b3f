//! Snapshot expiration (spec §5.2), safer than Java: a file is deleted only when no retained
//! snapshot, no tag of any branch, no snapshot of another branch and no long-lived changelog
//! still needs it. Deletion order is crash-safe: data → changelog data → empty directories →
//! manifests / index files / statistics → manifest lists / index manifests → snapshot files →
//! EARLIEST hint.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::deleter::{Deleter, Planned};
use crate::clean::protectors::{other_protectors, snapshot_line};
use crate::clean::references::{ProtectMode, Protector, ReferenceReader};
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::retention::{now_millis, Retention, RetentionOverrides};
use crate::error::{Error, Result};
use crate::spec::manifest::FileKind;
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
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
    /// Files deleted per kind, failures and paths.
    pub deletion: DeletionReport,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// The range `[begin, end)` to expire, or None.
pub(crate) async fn expire_range(
    table: &Table,
    r: &Retention,
    honour_consumers: bool,
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<(i64, i64)>> {
    let storage = table.storage();
    let dir = table.snapshots();
    let (Some(latest), Some(earliest)) = (
        dir.latest_id(storage).await?,
        dir.earliest_id(storage).await?,
    ) else {
        return Ok(None);
    };
    let min = (latest - r.retain_max + 1).max(earliest);
    let mut max_exclusive = latest - r.retain_min + 1;
    if honour_consumers {
        if let Some(c) = table
            .consumers()
            .await?
            .values()
            .map(|(c, _)| c.next_snapshot)
            .min()
        {
            max_exclusive = max_exclusive.min(c);
        }
    }
    max_exclusive = max_exclusive.min(earliest.saturating_add(r.limit));
    let mut end = max_exclusive;
    for id in min..max_exclusive {
        if let Some(next) = all.get(&(id + 1)) {
            if r.older_than_ms <= next.time_millis {
                end = id;
                break;
            }
        }
    }
    Ok(Some((earliest, end)))
}

/// Expire snapshots of `table`'s branch.
pub async fn expire_snapshots(
    table: &Table,
    cfg: &ExpireConfig,
    ctl: &RunControl,
) -> Result<ExpireReport> {
    let started = Instant::now();
    let now = now_millis();
    let r = Retention::resolve_snapshot(table.options(), &cfg.retention, now)?;
    let decoupled = r.changelog_decoupled;
    let clean_dirs = match cfg.clean_empty_dirs {
        Some(v) => v,
        None => table
            .options()
            .get_bool("snapshot.clean-empty-directories")?
            .or(table
                .options()
                .get_bool("snapshot.expire.clean-empty-directories")?)
            .unwrap_or(false),
    };
    let changelog_only = decoupled
        && table
            .options()
            .get_bool("consumer.changelog-only")?
            .unwrap_or(false);
    let storage = table.storage();
    let all = read_snapshots(table).await?;
    let mut report = ExpireReport::default();
    let mut deleter = Deleter::new(storage, ctl, cfg.dry_run);

    let Some((earliest, end)) = expire_range(table, &r, !changelog_only, &all).await? else {
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    };
    let dir = table.snapshots();
    if end <= earliest {
        if !cfg.dry_run && !storage.exists(&dir.hint_location("EARLIEST")).await? {
            write_hint(table, &dir.hint_location("EARLIEST"), earliest).await?;
        }
        report.earliest_after = Some(earliest);
        report.deletion = deleter.report;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }
    let Some(end_snapshot) = all.get(&end).cloned() else {
        return Err(Error::Conflict(format!(
            "snapshot {end}, the first one to keep, is missing; refusing to expire (nothing deleted)"
        )));
    };
    let expired: Vec<Snapshot> = all.range(earliest..end).map(|(_, s)| s.clone()).collect();
    let Some(begin) = expired.first().map(|s| s.id) else {
        report.earliest_after = Some(end);
        report.deletion = deleter.report;
        return Ok(report);
    };

    if cfg.refuse_if_tags_pin_expired {
        let pinned: Vec<String> = table
            .tags()
            .await?
            .into_iter()
            .filter(|(_, t)| t.snapshot.id < end)
            .map(|(n, t)| format!("{n} (snapshot {})", t.snapshot.id))
            .collect();
        if !pinned.is_empty() {
            return Err(Error::Conflict(format!(
                "tags pin snapshots older than the retention window: {}",
                pinned.join(", ")
            )));
        }
    }
    ctl.cancel.check()?;

    // Candidates: files deleted by the deltas of (begin, end], keyed by location (an ADD of the
    // same location in the same delta cancels: level upgrade), and changelog files of [begin, end).
    let mut rr = ReferenceReader::new(table);
    let later: Vec<&Snapshot> = all.range(begin + 1..=end).map(|(_, s)| s).collect();
    let delta_lists: Vec<String> = later
        .iter()
        .map(|s| s.delta_manifest_list.clone())
        .collect();
    let changelog_lists: Vec<String> = expired
        .iter()
        .filter_map(|s| s.changelog_manifest_list.clone())
        .collect();
    let expired_lists: Vec<String> = expired
        .iter()
        .flat_map(|s| s.manifest_lists().map(String::from).collect::<Vec<_>>())
        .collect();
    rr.load_lists(
        &[
            delta_lists.clone(),
            changelog_lists.clone(),
            expired_lists.clone(),
        ]
        .concat(),
        true,
    )
    .await?;
    let manifests_of = |rr: &ReferenceReader, lists: &[String]| -> Vec<String> {
        lists
            .iter()
            .flat_map(|l| {
                rr.list(l)
                    .iter()
                    .map(|m| m.file_name.clone())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let data_manifests = manifests_of(&rr, &delta_lists);
    let changelog_manifests = manifests_of(&rr, &changelog_lists);
    rr.load_full(
        &[data_manifests.clone(), changelog_manifests.clone()].concat(),
        true,
    )
    .await?;

    let mut candidates: HashMap<Location, Candidate> = HashMap::new();
    for s in &later {
        let mut per_snapshot: HashMap<Location, Candidate> = HashMap::new();
        for m in rr.list(&s.delta_manifest_list).iter() {
            for e in rr.full(&m.file_name).iter() {
                let loc = rr.location(e)?;
                match e.kind {
                    FileKind::Delete => {
                        let mut files =
                            table
                                .paths()
                                .data_file_with_extras(&e.partition, e.bucket, &e.file)?;
                        files.remove(0);
                        per_snapshot.insert(
                            loc,
                            Candidate {
                                class: FileClass::Data,
                                bytes: e.file.file_size.max(0) as u64,
                                extras: files,
                            },
                        );
                    }
                    FileKind::Add => {
                        per_snapshot.remove(&loc);
                    }
                }
            }
        }
        candidates.extend(per_snapshot);
    }
    for s in &expired {
        let Some(list) = &s.changelog_manifest_list else {
            continue;
        };
        for m in rr.list(list).iter() {
            for e in rr
                .full(&m.file_name)
                .iter()
                .filter(|e| e.kind == FileKind::Add)
            {
                candidates.entry(rr.location(e)?).or_insert(Candidate {
                    class: FileClass::ChangelogData,
                    bytes: e.file.file_size.max(0) as u64,
                    extras: Vec::new(),
                });
            }
        }
    }

    // Protectors: the kept snapshots of this branch, every tag, other branches, changelogs, and
    // (decoupled lifecycle) the expired snapshots that become long-lived changelogs now.
    let kept: Vec<Snapshot> = std::iter::once(end_snapshot.clone())
        .chain(all.range(end + 1..).map(|(_, s)| s.clone()))
        .collect();
    let mut protectors = snapshot_line(&format!("branch {}", table.branch_name()), &kept);
    protectors.extend(other_protectors(table).await?);
    if decoupled {
        protectors.extend(expired.iter().map(|s| Protector {
            label: format!("new changelog {}", s.id),
            snapshot: s.clone(),
            mode: ProtectMode::Changelog,
        }));
    }
    ctl.cancel.check()?;
    let candidate_set: HashSet<Location> = candidates.keys().cloned().collect();
    let protected = rr.protected_files(&protectors, &candidate_set).await?;
    let referenced = rr.referenced_metadata(&protectors).await?;

    // Plan.
    let mut data = Vec::new();
    let mut changelog_data = Vec::new();
    let mut sorted: Vec<(Location, Candidate)> = candidates
        .into_iter()
        .filter(|(l, _)| !protected.contains(l))
        .collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (loc, c) in sorted {
        let bucket = if c.class == FileClass::Data {
            &mut data
        } else {
            &mut changelog_data
        };
        bucket.push(Planned {
            location: loc,
            class: c.class,
            bytes: Some(c.bytes),
        });
        for x in c.extras {
            bucket.push(Planned {
                location: x,
                class: c.class,
                bytes: None,
            });
        }
    }
    let mut manifests = Vec::new();
    let mut index_files = Vec::new();
    let mut lists = Vec::new();
    let mut stats = Vec::new();
    let mut planned_names: HashSet<String> = HashSet::new();
    for s in &expired {
        for l in s.manifest_lists() {
            for m in rr.list(l).iter() {
                if !referenced.manifest_dir_names.contains(&m.file_name)
                    && planned_names.insert(m.file_name.clone())
                {
                    manifests.push(Planned {
                        location: table.paths().manifest(&m.file_name)?,
                        class: FileClass::Manifest,
                        bytes: Some(m.file_size.max(0) as u64),
                    });
                }
            }
            if !referenced.manifest_dir_names.contains(l) && planned_names.insert(l.to_string()) {
                lists.push(Planned {
                    location: table.paths().manifest(l)?,
                    class: FileClass::ManifestList,
                    bytes: None,
                });
            }
        }
        if let Some(im) = &s.index_manifest {
            if !referenced.manifest_dir_names.contains(im) {
                for f in rr.index_files_of(im, true).await?.iter() {
                    if !referenced.index_files.contains(f) {
                        index_files.push(Planned {
                            location: f.clone(),
                            class: FileClass::Index,
                            bytes: None,
                        });
                    }
                }
                if planned_names.insert(im.clone()) {
                    lists.push(Planned {
                        location: table.paths().manifest(im)?,
                        class: FileClass::IndexManifest,
                        bytes: None,
                    });
                }
            }
        }
        if let Some(st) = &s.statistics {
            if !referenced.statistics.contains(st) && planned_names.insert(format!("stat:{st}")) {
                stats.push(Planned {
                    location: table.paths().statistics(st)?,
                    class: FileClass::Statistics,
                    bytes: None,
                });
            }
        }
    }

    // Delete, in crash-safe order.
    let touched_dirs: Vec<Location> = data
        .iter()
        .chain(changelog_data.iter())
        .filter_map(|p| p.location.parent())
        .collect();
    deleter.delete("data files", data).await?;
    deleter.delete("changelog files", changelog_data).await?;
    if clean_dirs {
        remove_empty_dirs(table, &mut deleter, touched_dirs).await;
    }
    deleter.delete("manifests", manifests).await?;
    deleter.delete("index files", index_files).await?;
    deleter.delete("statistics", stats).await?;
    deleter.delete("manifest lists", lists).await?;
    if decoupled && !cfg.dry_run {
        let cl = table.changelogs();
        for s in &expired {
            storage
                .put(&cl.location(s.id), bytes::Bytes::from(s.to_json()?))
                .await?;
            report.changelogs_written += 1;
        }
        if let Some(last) = expired.last() {
            write_hint(table, &cl.hint_location("LATEST"), last.id).await?;
        }
    }
    let snapshot_files: Vec<Planned> = expired
        .iter()
        .map(|s| Planned {
            location: dir.location(s.id),
            class: FileClass::SnapshotMeta,
            bytes: None,
        })
        .collect();
    deleter.delete("snapshot files", snapshot_files).await?;
    if !cfg.dry_run {
        write_hint(table, &dir.hint_location("EARLIEST"), end).await?;
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

struct Candidate {
    class: FileClass,
    bytes: u64,
    extras: Vec<Location>,
}

/// Read every snapshot of the table's branch, by id.
pub(crate) async fn read_snapshots(table: &Table) -> Result<BTreeMap<i64, Snapshot>> {
    Ok(table
        .all_snapshots()
        .await?
        .into_iter()
        .map(|s| (s.id, s))
        .collect())
}

/// Write a hint file (EARLIEST / LATEST).
pub(crate) async fn write_hint(table: &Table, loc: &Location, id: i64) -> Result<()> {
    table
        .storage()
        .put(loc, bytes::Bytes::from(id.to_string()))
        .await
}

/// Remove bucket directories left empty, then their partition directories, deepest first,
/// never above the data root.
pub(crate) async fn remove_empty_dirs(
    table: &Table,
    deleter: &mut Deleter<'_>,
    dirs: Vec<Location>,
) {
    let data_root = table.paths().data_root().clone();
    let levels = table.schema().partition_keys.len();
    let mut bucket_dirs: Vec<Location> = dirs
        .into_iter()
        .filter(|d| d.is_under(&data_root))
        .collect();
    bucket_dirs.sort();
    bucket_dirs.dedup();
    let mut parents: HashSet<Location> = HashSet::new();
    for d in bucket_dirs {
        if !d.name().starts_with("bucket-") {
            continue;
        }
        if deleter.remove_dir_if_empty(&d).await {
            if let Some(p) = d.parent() {
                parents.insert(p);
            }
        }
    }
    for _ in 0..levels {
        let mut next = HashSet::new();
        let mut level: Vec<Location> = parents.drain().collect();
        level.sort();
        for p in level {
            if p == data_root || !p.is_under(&data_root) || !p.name().contains('=') {
                continue;
            }
            if deleter.remove_dir_if_empty(&p).await {
                if let Some(pp) = p.parent() {
                    next.insert(pp);
                }
            }
        }
        parents = next;
    }
}

/// A duration as whole milliseconds.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
