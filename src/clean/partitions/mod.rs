//! Drop partitions and expire partitions (spec §5.7, §5.8): [`drop_partitions`] and
//! [`expire_partitions`].
//!
//! **What it deletes:** no file. Each drop is one OVERWRITE commit whose delta marks every live
//! file of the matched partitions DELETE ([`filter`] matches them), published through the
//! atomic commit protocol ([`commit::commit`]). **What keeps a file:** everything, here:
//! snapshot expiry deletes the dropped files once the snapshots before the drop expire and no
//! tag or branch needs them. Which partitions expire is decided by the `values-time` or
//! `update-time` strategy, at most `partition.expiration-max-num` of them.
//!
//! * [`drop_partitions`] takes partition specs (key → value text; a prefix of the keys is
//!   enough). A spec names partition values, matched on the decoded partition row as Java's
//!   `convertSpecToInternalRow` reads them (see [`crate::clean::partitions::filter`]): the default
//!   partition name means NULL only, `""` the empty string only, `" "` one space only, although
//!   all three live in the directory `k=__DEFAULT_PARTITION__`. Like Java, a drop that matches
//!   no live file still commits an (empty) OVERWRITE snapshot (P14).
//! * [`expire_partitions`] selects partitions older than the expiration time by the
//!   `values-time` or `update-time` strategy and drops them, `partition.expiration-max-num` at
//!   most, in batches of `partition.expiration-batch-size` (one commit per batch). It always runs
//!   when called (no `partition.expiration-check-interval` throttling, P20). Expired partitions
//!   are dropped exactly (by their serialized row), so the NULL partition can expire without the
//!   `''` partition that shares its directory.
//!
//! Time zones: `values-time` compares the partition's time with the local wall clock minus the
//! expiration time. `update-time` compares with each partition's largest `_CREATION_TIME`, which
//! writers store as their local wall-clock time encoded as if it were UTC; like Java, it is read
//! back in this process's local time zone (writer and cleaner are assumed to share a zone).
//! DATE keys, stored as epoch days, are read as `yyyy-MM-dd` dates by `values-time` (Java reads
//! the epoch-day number, which never parses, so it never expires DATE partitions).

pub(crate) mod budget;
pub mod commit;
pub mod filter;
pub mod iceberg;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use chrono::{NaiveDateTime, TimeZone};
use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::partitions::budget::{entry_bytes, partition_set_bytes, Charges};
use crate::clean::partitions::commit::{commit, Changes, CommitIdentity, CommitOutcome};
use crate::clean::partitions::filter::{describe, PartitionFilter};
use crate::clean::shared::clock::now_millis;
use crate::error::{Error, Result};
use crate::memory::MemoryBudget;
use crate::spec::manifest::{FileKind, IndexManifestEntry, ManifestEntry};
use crate::spec::partition::{format_date, PartitionComputer};
use crate::spec::partition_time::PartitionTimeExtractor;
use crate::spec::snapshot::CommitKind;
use crate::spec::types::DataType;
use crate::table::Table;

/// Paimon's default `partition.expiration-max-num`.
pub const DEFAULT_EXPIRATION_MAX_NUM: usize = 100;

/// Batch commits use this identifier (Java `Long.MAX_VALUE`).
pub const BATCH_COMMIT_IDENTIFIER: i64 = i64::MAX;

/// How expired partitions are found (`partition.expiration-strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionExpireStrategy {
    /// The time in the partition values (`values-time`, the default).
    ValuesTime,
    /// The last file creation time in the partition (`update-time`).
    UpdateTime,
}

impl std::str::FromStr for PartitionExpireStrategy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "values-time" => Ok(PartitionExpireStrategy::ValuesTime),
            "update-time" => Ok(PartitionExpireStrategy::UpdateTime),
            other => Err(Error::InvalidArgument(format!(
                "unknown partition expiration strategy '{other}' (values-time or update-time)"
            ))),
        }
    }
}

/// Caller settings for partition expiry; unset fields take the table options
/// (`partition.expiration-*`, `partition.timestamp-*`), then Paimon's defaults.
#[derive(Debug, Clone, Default)]
pub struct PartitionExpireConfig {
    /// Partitions older than this expire (`partition.expiration-time`; required somewhere).
    pub expiration_time: Option<Duration>,
    /// `partition.expiration-strategy` (default `values-time`).
    pub strategy: Option<PartitionExpireStrategy>,
    /// `partition.timestamp-formatter`: a Java `DateTimeFormatter` pattern such as `yyyyMMdd`.
    pub timestamp_formatter: Option<String>,
    /// `partition.timestamp-pattern`: e.g. `$dt $hour:00:00` (default: the first key's value).
    pub timestamp_pattern: Option<String>,
    /// `partition.expiration-max-num`: at most this many partitions per run (default 100).
    pub max_expires: Option<usize>,
    /// `partition.expiration-batch-size`: partitions per commit (default: all in one).
    pub batch_size: Option<usize>,
    /// Select and report, commit nothing.
    pub dry_run: bool,
    /// The "now" expiry is measured from, epoch ms (default: the wall clock).
    pub now_millis: Option<i64>,
}

/// What a drop or expiry did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PartitionReport {
    /// True when nothing was committed.
    pub dry_run: bool,
    /// The partitions whose files were marked deleted, one per distinct partition value, as
    /// specs: each key's value as the text that names exactly this value again (the table's
    /// default partition name for NULL, a string key's value verbatim — possibly empty or
    /// blank —, other types in their directory form). Sorted; `names` is in the same order.
    pub partitions: Vec<BTreeMap<String, String>>,
    /// The same partitions for display, `k=v/k2=v2`: NULL shows as `NULL` and empty, blank or
    /// otherwise ambiguous strings in quotes (`k=''`, `k=' '`, `k='NULL'`).
    pub names: Vec<String>,
    /// Data files marked DELETE.
    pub files_marked_deleted: u64,
    /// Rows of those files.
    pub rows_marked_deleted: u64,
    /// Bytes of those files.
    pub bytes_marked_deleted: u64,
    /// Index entries (hash / deletion-vector / global index files) dropped from the index
    /// manifest.
    pub index_entries_removed: u64,
    /// The OVERWRITE snapshots committed, in order.
    pub snapshot_ids: Vec<i64>,
    /// Attempts that lost a race and were retried.
    pub retries: u64,
    /// The Iceberg-compatible metadata of each committed snapshot, when the table keeps it
    /// (`metadata.iceberg.storage`): written, or why not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iceberg: Vec<iceberg::IcebergUpdate>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// The changes of a drop: DELETE every live file of the matched partitions (bucket ≥ 0 unless
/// the table is in postpone-bucket mode), drop their index entries. What an attempt holds (the
/// merged live entries, the plan) is charged to `charges` before the commit writes anything.
struct DropChanges {
    filter: PartitionFilter,
    postpone: bool,
    charges: Charges,
}

impl DropChanges {
    fn new(filter: PartitionFilter, postpone: bool, budget: &MemoryBudget) -> Self {
        DropChanges {
            filter,
            postpone,
            charges: Charges::new(budget.clone()),
        }
    }
}

impl Changes for DropChanges {
    fn delta(&mut self, live: &[ManifestEntry]) -> Result<Vec<ManifestEntry>> {
        // A retry starts from a fresh merge: what the previous attempt held is gone.
        self.charges.release_all();
        self.charges.charge_live(live)?;
        let mut out = Vec::new();
        for e in live {
            if (self.postpone || e.bucket >= 0) && self.filter.matches(&e.partition)? {
                self.charges
                    .charge("the drop's DELETE entries", entry_bytes(e))?;
                let mut d = e.clone();
                d.kind = FileKind::Delete;
                out.push(d);
            }
        }
        Ok(out)
    }

    fn removes_index(&mut self, entry: &IndexManifestEntry) -> bool {
        match self.filter.matches(&entry.partition) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(file = %entry.file_name, error = %e, "index entry with an unreadable partition is kept");
                false
            }
        }
    }
}

/// Charges the floor of the merge the commit is about to do, from the latest snapshot's manifest
/// lists (none without a snapshot). The commit's own [`Changes::delta`] replaces it with the
/// exact live entries.
async fn charge_merge_floor(table: &Table, charges: &mut Charges) -> Result<()> {
    let storage = table.storage();
    if let Some(latest) = table.snapshots().latest_id(storage).await? {
        if let Some(snapshot) = table.snapshots().try_read(storage, latest).await? {
            charges.charge_merge_floor(table, &snapshot).await?;
        }
    }
    Ok(())
}

fn computer(table: &Table) -> Result<PartitionComputer> {
    let options = table.options();
    PartitionComputer::new(
        table.schema().partition_fields(),
        options.partition_default_name(),
        options.partition_legacy_name()?,
    )
}

fn postpone(table: &Table) -> Result<bool> {
    Ok(table.options().bucket()? == -2)
}

/// Adds partitions to the report's `partitions` and `names`, keeping both sorted (by spec,
/// then name) and distinct.
fn add_partitions<'a>(
    report: &mut PartitionReport,
    computer: &PartitionComputer,
    partitions: impl IntoIterator<Item = &'a [u8]>,
) -> Result<()> {
    let mut all: Vec<(BTreeMap<String, String>, String)> = std::mem::take(&mut report.partitions)
        .into_iter()
        .zip(std::mem::take(&mut report.names))
        .collect();
    for p in partitions {
        all.push(describe(computer, p)?);
    }
    all.sort();
    all.dedup();
    (report.partitions, report.names) = all.into_iter().unzip();
    Ok(())
}

/// Adds one commit's outcome to the report.
fn add_outcome(
    report: &mut PartitionReport,
    filter: &PartitionFilter,
    outcome: &CommitOutcome,
    iceberg_update: Option<iceberg::IcebergUpdate>,
) -> Result<()> {
    if outcome.found_after_unknown_outcome {
        tracing::warn!(
            snapshot = outcome.snapshot_id,
            "commit found after an unknown outcome: its file counts are not in the report"
        );
    }
    let mut parts: HashSet<&[u8]> = HashSet::new();
    for e in outcome.delta.iter().filter(|e| e.kind == FileKind::Delete) {
        report.files_marked_deleted += 1;
        report.rows_marked_deleted += e.file.row_count.max(0) as u64;
        report.bytes_marked_deleted += e.file.file_size.max(0) as u64;
        parts.insert(&e.partition);
    }
    add_partitions(report, filter.computer(), parts)?;
    report.index_entries_removed += outcome.index_removed;
    report.snapshot_ids.push(outcome.snapshot_id);
    report.iceberg.extend(iceberg_update);
    report.retries += u64::from(outcome.retries);
    Ok(())
}

fn identity(user: Option<String>, identifier: Option<i64>) -> CommitIdentity {
    CommitIdentity {
        user: user.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        identifier: identifier.unwrap_or(BATCH_COMMIT_IDENTIFIER),
    }
}

/// Drops partitions with one OVERWRITE commit: every live file of a partition matching any of
/// `specs` is marked DELETE, and the partitions' index entries leave the index manifest.
/// `commit_user` defaults to a fresh UUID, `commit_identifier` to `i64::MAX`.
///
/// A spec value names a partition value (the table's `partition.default-name` is NULL, `""` the
/// empty string, `" "` one space; see [`crate::clean::partitions::filter`]), never a directory.
/// Bad input (no spec, an empty spec, a key that is not a partition key, a value that cannot be
/// of its key's type — `""` for a non-string key among them —, an unpartitioned table) is
/// [`Error::InvalidArgument`] and commits nothing;
/// tables whose manifests are ORC/Parquet are [`Error::Unsupported`].
pub async fn drop_partitions(
    table: &Table,
    specs: &[BTreeMap<String, String>],
    commit_user: Option<String>,
    commit_identifier: Option<i64>,
    ctl: &RunControl,
) -> Result<PartitionReport> {
    let started = Instant::now();
    let filter = PartitionFilter::from_specs(computer(table)?, specs)?;
    let mut changes = DropChanges::new(filter, postpone(table)?, &ctl.memory_budget());
    charge_merge_floor(table, &mut changes.charges).await?;
    let id = identity(commit_user, commit_identifier);
    let outcome = commit(table, &id, CommitKind::Overwrite, &mut changes, ctl).await?;
    changes.charges.release_all();
    let ice = iceberg::refresh(table, &outcome).await;
    let mut report = PartitionReport::default();
    add_outcome(&mut report, &changes.filter, &outcome, ice)?;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        partitions = report.partitions.len(),
        files = report.files_marked_deleted,
        snapshot = outcome.snapshot_id,
        "dropped partitions"
    );
    Ok(report)
}

/// What [`drop_partitions`] would do now, without committing: the partitions of the latest
/// snapshot matching any of `specs`, the live files / rows / bytes it would mark deleted and the
/// index entries it would remove. The report has `dry_run` set and no snapshot ids. Input is
/// checked exactly as by [`drop_partitions`] (same errors), so a preview that succeeds names
/// what a drop started at the same snapshot commits; a writer that commits in between can
/// change that.
pub async fn preview_drop_partitions(
    table: &Table,
    specs: &[BTreeMap<String, String>],
    ctl: &RunControl,
) -> Result<PartitionReport> {
    let started = Instant::now();
    let filter = PartitionFilter::from_specs(computer(table)?, specs)?;
    // One budget for the run: what the merge and the changes hold count together.
    let budget = ctl.memory_budget();
    let mut changes = DropChanges::new(filter, postpone(table)?, &budget);
    let mut report = PartitionReport {
        dry_run: true,
        ..Default::default()
    };
    let storage = table.storage();
    if let Some(latest) = table.snapshots().latest_id(storage).await? {
        ctl.cancel.check()?;
        let snapshot = table.snapshots().read(storage, latest).await?;
        let mut merge = Charges::new(budget.clone());
        merge.charge_merge_floor(table, &snapshot).await?;
        let live = table.live_data_files(&snapshot).await?;
        merge.release_all();
        let mut parts: HashSet<Vec<u8>> = HashSet::new();
        for e in changes.delta(&live)? {
            report.files_marked_deleted += 1;
            report.rows_marked_deleted += e.file.row_count.max(0) as u64;
            report.bytes_marked_deleted += e.file.file_size.max(0) as u64;
            parts.insert(e.partition);
        }
        add_partitions(
            &mut report,
            changes.filter.computer(),
            parts.iter().map(Vec::as_slice),
        )?;
        if let Some(name) = &snapshot.index_manifest {
            ctl.cancel.check()?;
            let entries = table.reader().index_manifest(table.paths(), name).await?;
            report.index_entries_removed =
                entries.iter().filter(|e| changes.removes_index(e)).count() as u64;
        }
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Per-partition totals of the live files.
#[derive(Debug, Default, Clone)]
struct PartitionStat {
    files: u64,
    rows: u64,
    bytes: u64,
    /// Largest `_CREATION_TIME` (writer-local wall clock as if UTC).
    last_creation: Option<i64>,
}

/// Resolved expiry settings.
struct Resolved {
    expiration: Duration,
    strategy: PartitionExpireStrategy,
    extractor: PartitionTimeExtractor,
    max_num: usize,
    batch: Option<usize>,
    now_ms: i64,
}

fn resolve(table: &Table, cfg: &PartitionExpireConfig) -> Result<Resolved> {
    let options = table.options();
    let expiration = match cfg.expiration_time {
        Some(d) => d,
        None => options
            .get_duration("partition.expiration-time")?
            .ok_or_else(|| {
                Error::InvalidArgument(
                    "no expiration time: set partition.expiration-time or pass one".into(),
                )
            })?,
    };
    let strategy = match cfg.strategy {
        Some(s) => s,
        None => options
            .get_or("partition.expiration-strategy", "values-time")
            .parse()?,
    };
    let formatter = cfg.timestamp_formatter.clone().or_else(|| {
        options
            .get("partition.timestamp-formatter")
            .map(String::from)
    });
    let pattern = cfg
        .timestamp_pattern
        .clone()
        .or_else(|| options.get("partition.timestamp-pattern").map(String::from));
    let count = |v: Option<usize>, key: &str| -> Result<Option<usize>> {
        match v {
            Some(n) => Ok(Some(n)),
            None => options
                .get_i64(key)?
                .map(|n| {
                    usize::try_from(n)
                        .map_err(|_| Error::InvalidArgument(format!("{key} {n} is out of range")))
                })
                .transpose(),
        }
    };
    let batch = count(cfg.batch_size, "partition.expiration-batch-size")?;
    if batch == Some(0) {
        return Err(Error::InvalidArgument(
            "partition.expiration-batch-size must be at least 1".into(),
        ));
    }
    Ok(Resolved {
        expiration,
        strategy,
        extractor: PartitionTimeExtractor::new(pattern.as_deref(), formatter.as_deref())?,
        max_num: count(cfg.max_expires, "partition.expiration-max-num")?
            .unwrap_or(DEFAULT_EXPIRATION_MAX_NUM),
        batch,
        now_ms: cfg.now_millis.unwrap_or_else(now_millis),
    })
}

/// The local wall-clock time of an instant.
fn local_naive(epoch_ms: i64) -> Result<NaiveDateTime> {
    chrono::DateTime::from_timestamp_millis(epoch_ms)
        .map(|t| t.with_timezone(&chrono::Local).naive_local())
        .ok_or_else(|| Error::InvalidArgument(format!("time {epoch_ms} ms is out of range")))
}

/// The instant of a local wall-clock time (the earlier one in a DST overlap; a time in a DST
/// gap is taken as UTC).
fn local_epoch_ms(t: NaiveDateTime) -> i64 {
    chrono::Local
        .from_local_datetime(&t)
        .earliest()
        .map(|d| d.timestamp_millis())
        .unwrap_or_else(|| t.and_utc().timestamp_millis())
}

/// The values `values-time` reads: Java's internal strings, but DATE keys as `yyyy-MM-dd`.
fn time_values(computer: &PartitionComputer, partition: &[u8]) -> Result<Vec<Option<String>>> {
    let strings = computer.internal_strings(partition)?;
    Ok(strings
        .into_iter()
        .zip(computer.fields())
        .map(|((_, v), f)| match (&f.data_type, v) {
            (DataType::Date, Some(days)) => days.parse::<i32>().ok().map(format_date),
            (_, v) => v,
        })
        .collect())
}

/// Finds partitions older than the expiration time and drops them (see the module docs).
/// Errors: no expiration time anywhere, an unknown strategy, a bad formatter, an unpartitioned
/// table ([`Error::InvalidArgument`]).
pub async fn expire_partitions(
    table: &Table,
    cfg: &PartitionExpireConfig,
    ctl: &RunControl,
) -> Result<PartitionReport> {
    let started = Instant::now();
    let settings = resolve(table, cfg)?;
    let computer = computer(table)?;
    if computer.fields().is_empty() {
        return Err(Error::InvalidArgument(
            "the table is not partitioned: there are no partitions to expire".into(),
        ));
    }
    let mut report = PartitionReport {
        dry_run: cfg.dry_run,
        ..Default::default()
    };
    let storage = table.storage();
    let Some(latest) = table.snapshots().latest_id(storage).await? else {
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    };
    let snapshot = table.snapshots().read(storage, latest).await?;
    // One budget for the run: the live entries and per-partition totals held here count
    // together with what each batch's commit holds.
    let budget = ctl.memory_budget();
    let mut held = Charges::new(budget.clone());
    held.charge_merge_floor(table, &snapshot).await?;
    let live = table.live_data_files(&snapshot).await?;
    held.release_all();
    held.charge_live(&live)?;
    let stats = partition_stats(&live, &mut held)?;

    let mut expired = select_expired(table, &settings, &computer, &stats)?;
    // The live entries are no longer needed: each batch's commit merges its own.
    drop(live);
    held.release_all();
    held.charge(
        "per-partition totals",
        stats
            .keys()
            .map(|p| (std::mem::size_of::<PartitionStat>() + 48 + p.len()) as u64)
            .sum(),
    )?;
    held.charge(
        "partitions selected to expire",
        expired
            .iter()
            .map(|(k, p)| (std::mem::size_of::<(String, Vec<u8>)>() + k.len() + p.len()) as u64)
            .sum(),
    )?;
    expired.sort();
    expired.truncate(settings.max_num);
    tracing::info!(
        expired = expired.len(),
        strategy = ?settings.strategy,
        "partitions selected for expiry"
    );

    if cfg.dry_run || expired.is_empty() {
        for (_, p) in &expired {
            if let Some(s) = stats.get(p) {
                report.files_marked_deleted += s.files;
                report.rows_marked_deleted += s.rows;
                report.bytes_marked_deleted += s.bytes;
            }
        }
        add_partitions(
            &mut report,
            &computer,
            expired.iter().map(|(_, p)| p.as_slice()),
        )?;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }

    commit_batches(
        table,
        &settings,
        &computer,
        &expired,
        &budget,
        ctl,
        &mut report,
    )
    .await?;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        partitions = report.partitions.len(),
        files = report.files_marked_deleted,
        snapshots = ?report.snapshot_ids,
        "expired partitions"
    );
    Ok(report)
}

/// Per partition of the `live` entries: files, rows, bytes and the latest creation time,
/// charged to `held`.
fn partition_stats(
    live: &[ManifestEntry],
    held: &mut Charges,
) -> Result<BTreeMap<Vec<u8>, PartitionStat>> {
    let mut stats: BTreeMap<Vec<u8>, PartitionStat> = BTreeMap::new();
    for e in live {
        if !stats.contains_key(&e.partition) {
            held.charge(
                "per-partition totals",
                (std::mem::size_of::<PartitionStat>() + 48 + e.partition.len()) as u64,
            )?;
        }
        let s = stats.entry(e.partition.clone()).or_default();
        s.files += 1;
        s.rows += e.file.row_count.max(0) as u64;
        s.bytes += e.file.file_size.max(0) as u64;
        if let Some(t) = e.file.creation_time {
            s.last_creation = Some(s.last_creation.map_or(t, |x| x.max(t)));
        }
    }
    Ok(stats)
}

/// The partitions of `stats` that expire by `settings`' strategy, each with the text it is
/// ordered by (its values joined, NULL as the default partition name). A partition whose time
/// cannot be extracted never expires (logged).
fn select_expired(
    table: &Table,
    settings: &Resolved,
    computer: &PartitionComputer,
    stats: &BTreeMap<Vec<u8>, PartitionStat>,
) -> Result<Vec<(String, Vec<u8>)>> {
    let expire_at = local_naive(settings.now_ms)?
        .checked_sub_signed(
            chrono::Duration::from_std(settings.expiration).map_err(|_| {
                Error::InvalidArgument(format!(
                    "expiration time {:?} is too large",
                    settings.expiration
                ))
            })?,
        )
        .ok_or_else(|| Error::InvalidArgument("expiration time is too large".into()))?;
    let expire_at_ms = local_epoch_ms(expire_at);
    let keys: Vec<String> = computer.fields().iter().map(|f| f.name.clone()).collect();
    let default_name = table.options().partition_default_name().to_string();
    let mut expired: Vec<(String, Vec<u8>)> = Vec::new();
    let mut no_time: Vec<Vec<u8>> = Vec::new();
    for (p, s) in stats {
        let is_expired = match settings.strategy {
            PartitionExpireStrategy::ValuesTime => {
                let values = time_values(computer, p)?;
                match settings.extractor.extract(&keys, &values) {
                    Some(t) => t < expire_at,
                    None => {
                        no_time.push(p.clone());
                        false
                    }
                }
            }
            PartitionExpireStrategy::UpdateTime => match s.last_creation {
                Some(c) => {
                    let created = chrono::DateTime::from_timestamp_millis(c)
                        .map(|t| local_epoch_ms(t.naive_utc()));
                    created.is_some_and(|c| expire_at_ms > c)
                }
                None => false,
            },
        };
        if is_expired {
            let sort_key = computer
                .internal_strings(p)?
                .into_iter()
                .map(|(_, v)| v.unwrap_or_else(|| default_name.clone()))
                .collect::<Vec<_>>()
                .join(",");
            expired.push((sort_key, p.clone()));
        }
    }
    if !no_time.is_empty() {
        let examples: Vec<String> = no_time
            .iter()
            .take(3)
            .filter_map(|p| computer.path(p).ok())
            .collect();
        tracing::warn!(
            count = no_time.len(),
            examples = ?examples,
            "partitions whose time cannot be extracted (NULL or unparsable values) never expire"
        );
    }
    Ok(expired)
}

/// Drops the `expired` partitions in batches of `settings.batch`, one OVERWRITE commit each,
/// adding each commit's outcome to `report`.
async fn commit_batches(
    table: &Table,
    settings: &Resolved,
    computer: &PartitionComputer,
    expired: &[(String, Vec<u8>)],
    budget: &crate::memory::MemoryBudget,
    ctl: &RunControl,
    report: &mut PartitionReport,
) -> Result<()> {
    let id = identity(None, None);
    let batch = settings.batch.unwrap_or(expired.len()).max(1);
    let postpone = postpone(table)?;
    let batches = expired.len().div_ceil(batch) as u64;
    for (i, chunk) in expired.chunks(batch).enumerate() {
        ctl.cancel.check()?;
        ctl.progress("expire partitions", i as u64, batches, 0);
        let set: HashSet<Vec<u8>> = chunk.iter().map(|(_, p)| p.clone()).collect();
        let set_bytes = partition_set_bytes(set.iter().map(Vec::as_slice));
        let mut changes = DropChanges::new(
            PartitionFilter::exact(computer.clone(), set),
            postpone,
            budget,
        );
        changes
            .charges
            .charge("the batch's partitions", set_bytes)?;
        charge_merge_floor(table, &mut changes.charges).await?;
        let outcome = commit(table, &id, CommitKind::Overwrite, &mut changes, ctl).await?;
        changes.charges.release_all();
        let ice = iceberg::refresh(table, &outcome).await;
        add_outcome(report, &changes.filter, &outcome, ice)?;
    }
    ctl.progress("expire partitions", batches, batches, 0);
    Ok(())
}
