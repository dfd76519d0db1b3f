//! The atomic commit protocol shared by capabilities that write snapshots (spec §5.8, design
//! rule 6), used today for OVERWRITE commits (drop / expire partitions).
//!
//! One attempt: read the latest snapshot `S`; merge its live files; ask the `Changes` for the
//! delta entries and the index entries to remove; write the new delta manifest(s), the delta
//! manifest list, a base manifest list holding exactly `S`'s base + delta manifests, and (only
//! when index entries go) a new index manifest; then publish `snapshot-<S+1>` with an exclusive
//! create ([`crate::storage::Storage::put_if_absent`]) and overwrite the `LATEST` hint.
//!
//! * Lost race (the snapshot already exists): the attempt's files are deleted (nothing refers to
//!   them), and the next attempt starts from the re-read latest snapshot after a backoff of
//!   `min(commit.min-retry-wait · 2^retry, commit.max-retry-wait)` plus up to 20 % jitter, at most
//!   `commit.max-retries` times (and within `commit.timeout` if set).
//! * Unknown outcome (the publish itself failed): the files are kept, and before retrying the
//!   snapshots after the previously seen latest are scanned for one with this commit's user,
//!   identifier and kind — if there is one, the commit already landed.
//! * Right before the create, `snapshot/` is listed again: an id at or past ours means the
//!   latest moved on (a lost race). After the create, the snapshot stands only if its
//!   predecessor still exists, or no snapshot follows it, or the first that follows was created
//!   after our create: else the id had been published and expired meanwhile (a writer and an
//!   expiry keeping one snapshot can both finish between the read and the create), the new
//!   snapshot would sit below `EARLIEST` on deleted files, and it is withdrawn and retried.
//! * After a successful create the snapshot is read back: a peer that publishes with a
//!   non-exclusive rename (e.g. pypaimon's local-filesystem commit checks, then renames) could
//!   have replaced it; then the commit is retried (the replaced attempt's files are left for
//!   orphan cleanup).
//!
//! Every metadata file is written in Avro, in the writer schema of the same kind of file the
//! table already has (spec §3.8); tables whose manifests are ORC or Parquet are refused.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;

use crate::clean::control::{CommitStep, RunControl};
use crate::clean::shared::clock::now_millis;
use crate::error::{Error, Result};
use crate::spec::manifest::{
    self, encode_manifest, encode_manifest_list, encode_records, manifest_file_meta,
    read_raw_records, AvroValue, FileKind, IndexManifestEntry, ManifestCompression, ManifestEntry,
    ManifestFileMeta, MetadataFileKind, WriterSchema,
};
use crate::spec::options::parse_memory_size;
use crate::spec::snapshot::{CommitKind, Snapshot};
use crate::storage::Location;
use crate::table::{latest_schema, Table};

/// Paimon's default `commit.max-retries`.
pub const DEFAULT_MAX_RETRIES: u32 = 10;
/// Paimon's default `commit.min-retry-wait`.
pub const DEFAULT_MIN_RETRY_WAIT: Duration = Duration::from_millis(10);
/// Paimon's default `commit.max-retry-wait`.
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// Paimon's default `manifest.target-file-size`.
pub const DEFAULT_MANIFEST_TARGET_SIZE: u64 = 8 << 20;

/// What this library writes as `writerVersion`.
const WRITER_VERSION: &str = concat!("rust-paimon-cleanup-", env!("CARGO_PKG_VERSION"));

/// What a commit changes, recomputed from every attempt's latest snapshot.
pub(crate) trait Changes {
    /// The delta entries (DELETE and/or ADD) given the live entries of the latest snapshot.
    fn delta(&mut self, live: &[ManifestEntry]) -> Result<Vec<ManifestEntry>>;
    /// Whether an entry of the latest index manifest is dropped from the new one.
    fn removes_index(&mut self, entry: &IndexManifestEntry) -> bool;
}

/// Commit settings from the table options.
#[derive(Debug, Clone)]
pub(crate) struct CommitSettings {
    pub max_retries: u32,
    pub min_wait: Duration,
    pub max_wait: Duration,
    pub timeout: Option<Duration>,
    pub compression: ManifestCompression,
    pub target_file_size: u64,
}

impl CommitSettings {
    /// Reads `commit.*`, `manifest.compression`, `manifest.target-file-size` and refuses
    /// `manifest.format` other than avro.
    pub fn from_table(table: &Table) -> Result<Self> {
        let options = table.options();
        if let Some(f) = options.get("manifest.format") {
            if !f.trim().eq_ignore_ascii_case("avro") {
                return Err(Error::Unsupported(format!(
                    "table option manifest.format = '{f}': this library writes Avro manifests only, \
                     which Paimon would not read for this table"
                )));
            }
        }
        let max_retries = match options.get_i64("commit.max-retries")? {
            None => DEFAULT_MAX_RETRIES,
            Some(n) => u32::try_from(n).map_err(|_| {
                Error::InvalidArgument(format!("commit.max-retries {n} is out of range"))
            })?,
        };
        Ok(CommitSettings {
            max_retries,
            min_wait: options
                .get_duration("commit.min-retry-wait")?
                .unwrap_or(DEFAULT_MIN_RETRY_WAIT),
            max_wait: options
                .get_duration("commit.max-retry-wait")?
                .unwrap_or(DEFAULT_MAX_RETRY_WAIT),
            timeout: options.get_duration("commit.timeout")?,
            compression: ManifestCompression::from_options(options)?,
            target_file_size: match options.get("manifest.target-file-size") {
                Some(v) => parse_memory_size(v)?.max(1),
                None => DEFAULT_MANIFEST_TARGET_SIZE,
            },
        })
    }

    /// Backoff before retry number `retry` (0-based): exponential, capped, plus ≤ 20 % jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let base = self
            .min_wait
            .saturating_mul(1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX))
            .min(self.max_wait);
        let random_byte = u64::from(uuid::Uuid::new_v4().as_bytes()[0]);
        base + base.mul_f64(0.2 * random_byte as f64 / 255.0)
    }
}

/// Identity of a commit (who, which).
#[derive(Debug, Clone)]
pub(crate) struct CommitIdentity {
    pub user: String,
    pub identifier: i64,
}

/// The result of a successful commit.
#[derive(Debug, Clone, Default)]
pub(crate) struct CommitOutcome {
    /// The new snapshot.
    pub snapshot_id: i64,
    /// The delta entries committed.
    pub delta: Vec<ManifestEntry>,
    /// Index entries dropped from the index manifest.
    pub index_removed: u64,
    /// Attempts that lost a race (or had an unknown outcome) before this one.
    pub retries: u32,
    /// True when an earlier attempt with an unknown outcome turned out to have landed.
    pub found_after_unknown_outcome: bool,
}

/// Files written by one attempt.
#[derive(Default)]
struct Written {
    files: Vec<Location>,
}

/// The files of an attempt whose publish had an unknown outcome: they may be referenced by
/// `snapshot-<target>` if that publish landed after all.
struct Pending {
    written: Written,
    target: i64,
    uuid: Option<Value>,
}

/// The outcome of one attempt.
enum Attempt {
    Committed(Box<CommitOutcome>),
    /// Someone else published that snapshot id first.
    Lost,
    /// The publish failed; the snapshot may or may not have landed.
    Unknown(Error, Pending),
}

/// Deletes the files of pending attempts whose target snapshot now exists with another uuid:
/// that publish can never land (the id is taken), so nothing will reference them.
async fn settle(table: &Table, pending: &mut Vec<Pending>, ctl: &RunControl) {
    let dir = table.snapshots();
    let mut keep = Vec::new();
    for p in pending.drain(..) {
        match dir.try_read(table.storage(), p.target).await {
            Ok(Some(s)) if s.extra.get("uuid") != p.uuid.as_ref() => {
                discard(table, p.written, ctl).await
            }
            _ => keep.push(p),
        }
    }
    *pending = keep;
}

/// Runs the commit protocol with retries. `kind` is the snapshot's commit kind.
pub(crate) async fn commit(
    table: &Table,
    id: &CommitIdentity,
    kind: CommitKind,
    changes: &mut impl Changes,
    ctl: &RunControl,
) -> Result<CommitOutcome> {
    let settings = CommitSettings::from_table(table)?;
    let started = Instant::now();
    let mut retry: u32 = 0;
    // Latest snapshot id seen by an attempt whose publish had an unknown outcome.
    let mut unknown_since: Option<Option<i64>> = None;
    let mut pending: Vec<Pending> = Vec::new();
    loop {
        ctl.cancel.check()?;
        let latest = table.snapshots().latest_id(table.storage()).await?;
        if let Some(since) = unknown_since {
            if let Some(found) = find_committed(table, id, &kind, since, latest).await? {
                tracing::info!(
                    snapshot = found,
                    "an attempt with an unknown outcome had committed"
                );
                return Ok(CommitOutcome {
                    snapshot_id: found,
                    retries: retry,
                    found_after_unknown_outcome: true,
                    ..Default::default()
                });
            }
        }
        let outcome = attempt(table, &settings, id, &kind, changes, latest, ctl).await?;
        match outcome {
            Attempt::Committed(mut o) => {
                settle(table, &mut pending, ctl).await;
                o.retries = retry;
                return Ok(*o);
            }
            Attempt::Lost => {
                settle(table, &mut pending, ctl).await;
                tracing::info!(
                    retry,
                    "commit lost a race; retrying from the new latest snapshot"
                )
            }
            Attempt::Unknown(e, p) => {
                tracing::warn!(retry, error = %e, "commit outcome unknown; will check before retrying");
                pending.push(p);
                if unknown_since.is_none() {
                    unknown_since = Some(latest);
                }
            }
        }
        let timed_out = settings.timeout.is_some_and(|t| started.elapsed() > t);
        if retry >= settings.max_retries || timed_out {
            return Err(Error::Conflict(format!(
                "commit failed after {} attempts in {} ms: other commits kept winning the race \
                 (commit.max-retries = {}, commit.timeout = {:?})",
                retry + 1,
                started.elapsed().as_millis(),
                settings.max_retries,
                settings.timeout
            )));
        }
        tokio::time::sleep(settings.backoff(retry)).await;
        retry += 1;
    }
}

/// A snapshot in `(since, latest]` made by this commit (same user, identifier and kind).
async fn find_committed(
    table: &Table,
    id: &CommitIdentity,
    kind: &CommitKind,
    since: Option<i64>,
    latest: Option<i64>,
) -> Result<Option<i64>> {
    let Some(latest) = latest else {
        return Ok(None);
    };
    let dir = table.snapshots();
    // `since` is at most `latest`; at i64::MAX nothing follows it.
    let Some(first) = since.map_or(Some(1), |s| s.checked_add(1)) else {
        return Ok(None);
    };
    for sid in first..=latest {
        if let Some(s) = dir.try_read(table.storage(), sid).await? {
            if s.commit_user == id.user
                && s.commit_identifier == id.identifier
                && s.commit_kind == *kind
            {
                return Ok(Some(sid));
            }
        }
    }
    Ok(None)
}

/// Reads an Avro metadata file: bytes (for typed decoding) and its raw records.
async fn read_raw(
    table: &Table,
    kind: MetadataFileKind,
    name: &str,
) -> Result<(Bytes, manifest::RawRecords)> {
    let loc = table.paths().manifest(name)?;
    let bytes = table.storage().get(&loc).await?;
    let raw = read_raw_records(kind, &bytes, loc.as_str())?;
    Ok((bytes, raw))
}

async fn put_new(table: &Table, written: &mut Written, name: &str, data: Bytes) -> Result<i64> {
    let loc = table.paths().manifest(name)?;
    let size = data.len() as i64;
    if !table.storage().put_if_absent(&loc, data).await? {
        return Err(Error::Internal(format!(
            "{loc} already exists although its name is fresh"
        )));
    }
    written.files.push(loc);
    Ok(size)
}

/// Deletes an attempt's files (nothing references them).
async fn discard(table: &Table, written: Written, ctl: &RunControl) {
    for (loc, r) in table
        .storage()
        .delete_files(written.files, ctl.io_concurrency)
        .await
    {
        if let Err(e) = r {
            tracing::warn!(path = %loc, error = %e, "could not delete a file of a failed commit attempt");
        }
    }
}

/// What an attempt reads of the previous snapshot.
struct State {
    /// Writer schema of its manifest lists (the delta list's).
    list_schema: Option<WriterSchema>,
    /// Its base + delta manifest list records, raw (every field kept), in order.
    base_records: Vec<AvroValue>,
    /// Writer schema of its last manifest.
    manifest_schema: Option<WriterSchema>,
    /// Its live data files.
    live: Vec<ManifestEntry>,
    /// Its index manifest, raw and typed (same order).
    index: Option<(manifest::RawRecords, Vec<IndexManifestEntry>)>,
}

async fn read_state(table: &Table, prev: Option<&Snapshot>) -> Result<State> {
    let mut list_schema: Option<WriterSchema> = None;
    let mut base_records: Vec<AvroValue> = Vec::new();
    let mut manifest_names: Vec<String> = Vec::new();
    let Some(s) = prev else {
        return Ok(State {
            list_schema,
            base_records,
            manifest_schema: None,
            live: Vec::new(),
            index: None,
        });
    };
    for list in [&s.base_manifest_list, &s.delta_manifest_list] {
        let (bytes, raw) = read_raw(table, MetadataFileKind::ManifestList, list).await?;
        let metas = manifest::decode_manifest_list(&bytes, list)?;
        if metas.len() != raw.records.len() {
            return Err(Error::Internal(format!(
                "manifest list {list}: typed and raw record counts differ"
            )));
        }
        manifest_names.extend(metas.into_iter().map(|m| m.file_name));
        base_records.extend(raw.records);
        list_schema = Some(raw.schema);
    }
    let live = table
        .reader()
        .merged_manifests(table.paths(), &manifest_names)
        .await?;
    let manifest_schema = match manifest_names.last() {
        Some(last) => {
            let loc = table.paths().manifest(last)?;
            let bytes = table.storage().get(&loc).await?;
            Some(WriterSchema::from_file(
                MetadataFileKind::Manifest,
                &bytes,
                loc.as_str(),
            )?)
        }
        None => None,
    };
    let index = match &s.index_manifest {
        Some(name) => {
            let (bytes, raw) = read_raw(table, MetadataFileKind::IndexManifest, name).await?;
            let typed = manifest::decode_index_manifest(&bytes, name)?;
            if typed.len() != raw.records.len() {
                return Err(Error::Internal(format!(
                    "index manifest {name}: typed and raw record counts differ"
                )));
            }
            Some((raw, typed))
        }
        None => None,
    };
    Ok(State {
        list_schema,
        base_records,
        manifest_schema,
        live,
        index,
    })
}

/// One attempt from the latest snapshot `latest`: read its state, compute the changes, write
/// the new metadata files, publish the snapshot, then move the `LATEST` hint.
async fn attempt(
    table: &Table,
    settings: &CommitSettings,
    id: &CommitIdentity,
    kind: &CommitKind,
    changes: &mut impl Changes,
    latest: Option<i64>,
    ctl: &RunControl,
) -> Result<Attempt> {
    let storage = table.storage();
    let dir = table.snapshots();
    let prev = match latest {
        Some(l) => match dir.try_read(storage, l).await? {
            Some(s) => Some(s),
            // Expired between listing and reading: a newer one exists; retry.
            None => return Ok(Attempt::Lost),
        },
        None => None,
    };
    // Before anything is written: the new snapshot's id must exist, and on a local disk the
    // directories the commit writes to must lie beneath the table root with no symlinked
    // component (as for deletions), so that no file is written outside the table.
    let next = next_snapshot_id(table, prev.as_ref())?;
    storage
        .check_beneath([
            &dir.location(next),
            &table.paths().manifest("manifest-probe")?,
        ])
        .await?;
    let schema_id = latest_schema(storage, table.branch_root()).await?.id;
    let Some(mut state) = read_state_unless_moved(table, prev.as_ref(), latest).await? else {
        return Ok(Attempt::Lost);
    };
    let delta = changes.delta(&state.live)?;
    ctl.cancel.check()?;
    let (index_removed, index_rewrite) = index_rewrite(state.index.take(), changes);

    let mut written = Written::default();
    let files = match write_files(
        table,
        settings,
        &state,
        &delta,
        index_rewrite.as_ref(),
        schema_id,
        &mut written,
    )
    .await
    {
        Ok(v) => v,
        Err(e) => {
            discard(table, written, ctl).await;
            return Err(e);
        }
    };
    // Index manifest: the rewritten one, or the previous one's name.
    let index_manifest = files
        .index_manifest
        .or_else(|| prev.as_ref().and_then(|s| s.index_manifest.clone()));
    let snapshot = new_snapshot(
        table,
        prev.as_ref(),
        &state.live,
        &delta,
        NewSnapshot {
            id,
            kind,
            schema_id,
            base: files.base,
            delta: files.delta,
            index_manifest,
            uuid: uuid::Uuid::new_v4().to_string(),
        },
    )
    .await?;
    if let Some(ended) = publish(table, &snapshot, written, ctl).await? {
        return Ok(ended);
    }
    if let Err(e) = dir.write_hint(storage, "LATEST", snapshot.id).await {
        tracing::warn!(error = %e, "could not update the LATEST hint");
    }
    tracing::info!(
        snapshot = snapshot.id,
        entries = delta.len(),
        index_removed,
        "committed"
    );
    Ok(Attempt::Committed(Box::new(CommitOutcome {
        snapshot_id: snapshot.id,
        delta,
        index_removed,
        retries: 0,
        found_after_unknown_outcome: false,
    })))
}

/// [`read_state`], or `None` when a file is missing because a concurrent expiry removed it
/// while the latest snapshot moved on past `latest`: a lost race, not an error.
async fn read_state_unless_moved(
    table: &Table,
    prev: Option<&Snapshot>,
    latest: Option<i64>,
) -> Result<Option<State>> {
    match read_state(table, prev).await {
        Ok(s) => Ok(Some(s)),
        Err(e)
            if e.is_not_found()
                && table.snapshots().latest_id(table.storage()).await? != latest =>
        {
            tracing::info!(error = %e, "metadata vanished under a newer snapshot; retrying");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The previous index manifest's raw records and which of them the new one keeps.
type IndexRewrite = (manifest::RawRecords, Vec<bool>);

/// How many entries of the previous index manifest (raw and typed) `changes` removes, and the
/// rewrite that drops them (`None` when none goes: the new snapshot names the same manifest).
fn index_rewrite(
    index: Option<(manifest::RawRecords, Vec<IndexManifestEntry>)>,
    changes: &mut impl Changes,
) -> (u64, Option<IndexRewrite>) {
    let Some((raw, typed)) = index else {
        return (0, None);
    };
    let keep: Vec<bool> = typed.iter().map(|e| !changes.removes_index(e)).collect();
    let removed = keep.iter().filter(|k| !**k).count() as u64;
    (removed, (removed > 0).then_some((raw, keep)))
}

/// The metadata files one attempt wrote: (name, size) of the base and delta manifest lists,
/// and the new index manifest's name if the index was rewritten.
struct AttemptFiles {
    base: (String, i64),
    delta: (String, i64),
    index_manifest: Option<String>,
}

/// Writes an attempt's files, each under a fresh name (recorded in `written`): the delta
/// manifest(s) of `delta`, the base manifest list (the previous base + delta manifests, raw),
/// the delta manifest list, and the rewritten index manifest if any.
async fn write_files(
    table: &Table,
    settings: &CommitSettings,
    state: &State,
    delta: &[ManifestEntry],
    index_rewrite: Option<&IndexRewrite>,
    schema_id: i64,
    written: &mut Written,
) -> Result<AttemptFiles> {
    let uuid = uuid::Uuid::new_v4();
    let fields = table.schema().partition_fields();
    let mut delta_metas: Vec<ManifestFileMeta> = Vec::new();
    for (n, chunk) in roll(delta, state.manifest_schema.as_ref(), settings)?
        .into_iter()
        .enumerate()
    {
        let name = format!("manifest-{uuid}-{n}");
        let size = put_new(table, written, &name, chunk.bytes).await?;
        delta_metas.push(manifest_file_meta(
            &name,
            size,
            &delta[chunk.range],
            &fields,
            schema_id,
        )?);
    }
    let base_name = format!("manifest-list-{uuid}-0");
    let base_bytes = encode_records(
        MetadataFileKind::ManifestList,
        &state.base_records,
        state.list_schema.as_ref(),
        settings.compression,
    )?;
    let base_size = put_new(table, written, &base_name, base_bytes).await?;
    let delta_name = format!("manifest-list-{uuid}-1");
    let delta_bytes = encode_manifest_list(
        &delta_metas,
        state.list_schema.as_ref(),
        settings.compression,
    )?;
    let delta_size = put_new(table, written, &delta_name, delta_bytes).await?;
    let mut index_manifest = None;
    if let Some((raw, keep)) = index_rewrite {
        let kept: Vec<AvroValue> = raw
            .records
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(r, _)| r.clone())
            .collect();
        let name = format!("index-manifest-{uuid}-0");
        let bytes = encode_records(
            MetadataFileKind::IndexManifest,
            &kept,
            Some(&raw.schema),
            settings.compression,
        )?;
        put_new(table, written, &name, bytes).await?;
        index_manifest = Some(name);
    }
    Ok(AttemptFiles {
        base: (base_name, base_size),
        delta: (delta_name, delta_size),
        index_manifest,
    })
}

/// Publishes `snapshot` with an exclusive create, then reads it back. `None`: the snapshot is
/// ours. Otherwise how the attempt ended: lost (the id was taken, or a non-exclusive peer
/// replaced our file) or unknown outcome (the create failed; the files stay pending). `written`
/// is discarded when nothing can reference it.
async fn publish(
    table: &Table,
    snapshot: &Snapshot,
    written: Written,
    ctl: &RunControl,
) -> Result<Option<Attempt>> {
    let storage = table.storage();
    let dir = table.snapshots();
    let json = Bytes::from(snapshot.to_json()?);
    let target = dir.location(snapshot.id);
    if let Err(e) = ctl.cancel.check() {
        discard(table, written, ctl).await;
        return Err(e);
    }
    ctl.at_commit_step(CommitStep::Prepared {
        snapshot: snapshot.id,
    });
    match newest_id(table).await {
        Ok(Some(newest)) if newest >= snapshot.id => {
            tracing::debug!(
                snapshot = snapshot.id,
                newest,
                "the latest snapshot moved on before publishing: lost the race"
            );
            discard(table, written, ctl).await;
            return Ok(Some(Attempt::Lost));
        }
        Ok(_) => {}
        Err(e) => {
            discard(table, written, ctl).await;
            return Err(e);
        }
    }
    ctl.at_commit_step(CommitStep::Publishing {
        snapshot: snapshot.id,
    });
    let before_put = now_millis();
    match storage.put_if_absent(&target, json).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::debug!(
                snapshot = snapshot.id,
                "snapshot already exists: lost the race"
            );
            discard(table, written, ctl).await;
            return Ok(Some(Attempt::Lost));
        }
        Err(e) => {
            return Ok(Some(Attempt::Unknown(
                e,
                Pending {
                    written,
                    target: snapshot.id,
                    uuid: snapshot.extra.get("uuid").cloned(),
                },
            )))
        }
    }
    // Read back: a non-exclusive peer could have replaced the file.
    match dir.try_read(storage, snapshot.id).await {
        Ok(Some(s)) if s.extra.get("uuid") != snapshot.extra.get("uuid") => {
            tracing::warn!(
                snapshot = snapshot.id,
                "our snapshot file was replaced by another committer (non-exclusive rename?); retrying"
            );
            return Ok(Some(Attempt::Lost));
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "could not read back the committed snapshot"),
    }
    if landed_below_newer(table, snapshot.id, before_put).await {
        tracing::warn!(
            snapshot = snapshot.id,
            "the snapshot id had been published and expired meanwhile: withdrawing our snapshot \
             and retrying"
        );
        let withdrawn = storage
            .delete_files(vec![target.clone()], ctl.io_concurrency)
            .await;
        if let Some((_, Err(e))) = withdrawn.into_iter().next() {
            return Err(Error::Conflict(format!(
                "{target} was published after a newer snapshot had been committed and expired \
                 its predecessors, and could not be withdrawn: {e}"
            )));
        }
        discard(table, written, ctl).await;
        return Ok(Some(Attempt::Lost));
    }
    Ok(None)
}

/// The highest snapshot id listed in `snapshot/` (the listing, not the `LATEST` hint: a hint
/// may lag behind).
async fn newest_id(table: &Table) -> Result<Option<i64>> {
    Ok(table
        .snapshots()
        .list_ids(table.storage())
        .await?
        .last()
        .copied())
}

/// Whether the snapshot `id` this commit has just created (its exclusive create started at
/// `before_put`) took an id that had already been published and then expired.
///
/// An exclusive create cannot tell "never existed" from "existed, then expired": in the window
/// between reading the latest snapshot `id - 1` and creating `id`, a writer can publish `id` and
/// more, and an expiry keeping a single snapshot can delete `id - 1` and `id`. The new snapshot
/// then sits below `EARLIEST`, names metadata and data the expiry may have deleted, and its
/// changes are missing from the newer snapshots. Expiry deletes snapshot files in ascending
/// order and never the latest one, hence:
/// * `id - 1` still exists after the create: `id` was not expired before it (not a hole);
/// * no snapshot after `id` exists: nothing newer was ever published (not a hole);
/// * else the first readable snapshot after `id` tells: built on ours, it was created after our
///   create (its time is not before `before_put`); created before our create, it is older.
///
/// Anything unreadable counts as "not a hole": withdrawing a snapshot another commit built on
/// would lose that commit's base.
async fn landed_below_newer(table: &Table, id: i64, before_put: i64) -> bool {
    let dir = table.snapshots();
    let storage = table.storage();
    if let Some(prev) = id.checked_sub(1).filter(|p| *p > 0) {
        if storage.exists(&dir.location(prev)).await.unwrap_or(true) {
            return false;
        }
    }
    let ids = match dir.list_ids(storage).await {
        Ok(ids) => ids,
        Err(e) => {
            tracing::warn!(error = %e, "could not list snapshots after publishing");
            return false;
        }
    };
    for later in ids.into_iter().filter(|l| *l > id) {
        match dir.try_read(storage, later).await {
            Ok(Some(s)) => return s.time_millis < before_put,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(snapshot = later, error = %e, "could not read a newer snapshot");
                return false;
            }
        }
    }
    false
}

/// One manifest's worth of delta entries.
struct Chunk {
    bytes: Bytes,
    range: std::ops::Range<usize>,
}

/// Encodes `entries` into manifests of at most `manifest.target-file-size` (halving a chunk
/// that comes out larger; a single entry always fits). No entries give no manifest.
fn roll(
    entries: &[ManifestEntry],
    schema: Option<&WriterSchema>,
    settings: &CommitSettings,
) -> Result<Vec<Chunk>> {
    let mut out = Vec::new();
    let mut todo: Vec<std::ops::Range<usize>> = Vec::new();
    todo.push(0..entries.len());
    while let Some(r) = todo.pop() {
        if r.is_empty() {
            continue;
        }
        let bytes = encode_manifest(&entries[r.clone()], schema, settings.compression)?;
        if bytes.len() as u64 > settings.target_file_size && r.len() > 1 {
            let mid = r.start + r.len() / 2;
            todo.push(mid..r.end);
            todo.push(r.start..mid);
            continue;
        }
        out.push(Chunk { bytes, range: r });
    }
    Ok(out)
}

struct NewSnapshot<'a> {
    id: &'a CommitIdentity,
    kind: &'a CommitKind,
    schema_id: i64,
    base: (String, i64),
    delta: (String, i64),
    index_manifest: Option<String>,
    uuid: String,
}

/// The new snapshot document (version 3).
async fn new_snapshot(
    table: &Table,
    prev: Option<&Snapshot>,
    live: &[ManifestEntry],
    delta: &[ManifestEntry],
    n: NewSnapshot<'_>,
) -> Result<Snapshot> {
    let rows = |k: FileKind| -> i64 {
        delta
            .iter()
            .filter(|e| e.kind == k)
            .map(|e| e.file.row_count)
            .sum()
    };
    let delta_records = rows(FileKind::Add) - rows(FileKind::Delete);
    let previous_total = match prev.and_then(|s| s.total_record_count) {
        Some(t) => t,
        None => live.iter().map(|e| e.file.row_count).sum(),
    };
    let mut extra = crate::spec::snapshot::Extra::new();
    extra.insert("baseManifestListSize".into(), n.base.1.into());
    extra.insert("deltaManifestListSize".into(), n.delta.1.into());
    if let Some(w) = prev
        .and_then(|s| s.extra.get("watermark"))
        .filter(|w| !w.is_null())
    {
        extra.insert("watermark".into(), w.clone());
    }
    let next_row_id = prev
        .and_then(|s| s.extra.get("nextRowId"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    extra.insert("nextRowId".into(), next_row_id.into());
    extra.insert("uuid".into(), n.uuid.into());
    extra.insert("writerVersion".into(), WRITER_VERSION.into());
    let statistics = match prev.and_then(|s| s.statistics.as_deref()) {
        Some(st) => inherited_statistics(table, st, n.schema_id).await,
        None => None,
    };
    Ok(Snapshot {
        version: Some(3),
        id: next_snapshot_id(table, prev)?,
        schema_id: n.schema_id,
        base_manifest_list: n.base.0,
        delta_manifest_list: n.delta.0,
        changelog_manifest_list: None,
        index_manifest: n.index_manifest,
        commit_user: n.id.user.clone(),
        commit_identifier: n.id.identifier,
        commit_kind: n.kind.clone(),
        time_millis: now_millis(),
        total_record_count: Some(previous_total + delta_records),
        delta_record_count: Some(delta_records),
        statistics,
        extra,
    })
}

/// The id a commit on top of `prev` publishes; an error (malformed metadata) when `prev`'s id
/// has no successor in i64, so that no `snapshot--9223372036854775808` is ever written.
fn next_snapshot_id(table: &Table, prev: Option<&Snapshot>) -> Result<i64> {
    match prev {
        None => Ok(1),
        Some(s) => s.id.checked_add(1).ok_or_else(|| {
            Error::malformed(
                "snapshot",
                table.snapshots().location(s.id).as_str(),
                format!("snapshot id {} has no successor (i64 overflow)", s.id),
            )
        }),
    }
}

/// The previous snapshot's statistics file name if its schema id is the latest (Java inherits
/// statistics only then); unreadable statistics are not inherited.
async fn inherited_statistics(table: &Table, name: &str, schema_id: i64) -> Option<String> {
    let loc = table.paths().statistics(name).ok()?;
    let bytes = match table.storage().get(&loc).await {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(path = %loc, error = %e, "statistics not inherited: unreadable");
            return None;
        }
    };
    let v: HashMap<String, Value> = serde_json::from_slice(&bytes).ok()?;
    (v.get("schemaId").and_then(Value::as_i64) == Some(schema_id)).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let s = CommitSettings {
            max_retries: 10,
            min_wait: Duration::from_millis(10),
            max_wait: Duration::from_millis(100),
            timeout: None,
            compression: ManifestCompression::default(),
            target_file_size: 1,
        };
        let b0 = s.backoff(0);
        assert!(b0 >= Duration::from_millis(10) && b0 <= Duration::from_millis(12));
        let b2 = s.backoff(2);
        assert!(b2 >= Duration::from_millis(40) && b2 <= Duration::from_millis(48));
        let b40 = s.backoff(40);
        assert!(b40 >= Duration::from_millis(100) && b40 <= Duration::from_millis(120));
    }

    #[test]
    fn rolling_splits_large_manifests() {
        let s = CommitSettings {
            max_retries: 0,
            min_wait: Duration::ZERO,
            max_wait: Duration::ZERO,
            timeout: None,
            compression: ManifestCompression::Null,
            target_file_size: 4096,
        };
        let entries: Vec<ManifestEntry> = (0..200)
            .map(|i| {
                let mut e = ManifestEntry::default();
                e.file.file_name = format!("data-{i:0>40}.parquet");
                e
            })
            .collect();
        let chunks = roll(&entries, None, &s).unwrap();
        assert!(chunks.len() > 1);
        let mut covered: Vec<usize> = chunks.iter().flat_map(|c| c.range.clone()).collect();
        covered.sort();
        assert_eq!(covered, (0..200).collect::<Vec<_>>());
        for c in &chunks {
            assert!(c.bytes.len() <= 4096 || c.range.len() == 1);
        }
        assert!(roll(&[], None, &s).unwrap().is_empty());
    }
}
