//! The measured operations through the crate's public API, their dry-run plans, and the
//! baseline process.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use paimon_cleanup::clean::{
    drop_partitions, expire_snapshots, remove_orphan_files, ExpireConfig, OrphanConfig,
    RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::Layer;

use super::measure::{events::EventLog, Clock, Measure, ProgressLog};

/// A benchmarked operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `clean::expire_snapshots`, everything but the latest snapshot.
    Expire,
    /// `clean::remove_orphan_files`, cut-off now, no writers running.
    Orphans,
    /// `clean::drop_partitions` of the largest live partition.
    Drop,
}

impl Op {
    /// Every operation, in report order.
    pub const ALL: [Op; 3] = [Op::Expire, Op::Orphans, Op::Drop];

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Option<Op> {
        match s {
            "expire-snapshots" | "expire" => Some(Op::Expire),
            "remove-orphan-files" | "orphans" => Some(Op::Orphans),
            "drop-partition" | "drop" => Some(Op::Drop),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Expire => "expire-snapshots",
            Op::Orphans => "remove-orphan-files",
            Op::Drop => "drop-partition",
        }
    }
}

/// What the dry run found: the input of the floor and of the checks after the real run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PlanFile {
    /// Files the operation deletes, relative to the table root.
    pub paths: Vec<String>,
    /// First expired snapshot (expire).
    pub first_expired: Option<i64>,
    /// Last expired snapshot (expire).
    pub last_expired: Option<i64>,
    /// Partition to drop (drop), key → value.
    pub partition: Option<BTreeMap<String, String>>,
    /// Live files of that partition (drop).
    pub partition_files: u64,
}

/// A multi-threaded runtime like the CLI's.
pub fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

async fn open(table: &Path) -> Result<Table, String> {
    let storage = Storage::open(table.to_str().ok_or("non-UTF-8 path")?, &HashMap::new())
        .map_err(|e| e.to_string())?;
    Table::open(Arc::new(storage), &HashMap::new())
        .await
        .map_err(|e| e.to_string())
}

fn expire_config(dry_run: bool) -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            older_than_ms: Some(super::now_millis()),
            limit: Some(i64::MAX),
            ..Default::default()
        },
        clean_empty_dirs: Some(false),
        dry_run,
        refuse_if_tags_pin_expired: false,
    }
}

fn orphan_config(dry_run: bool) -> OrphanConfig {
    OrphanConfig {
        older_than_ms: Some(super::now_millis()),
        dry_run,
        no_writers_running: true,
        ..Default::default()
    }
}

/// The baseline: a process that starts a runtime and opens the table, nothing else.
pub fn baseline(table: &Path, threads: usize) -> Result<Measure, String> {
    let rt = runtime(threads)?;
    let clock = Clock::start();
    rt.block_on(open(table))?;
    Ok(clock.finish("baseline", 0, json!({})))
}

/// The dry run of `op`, profiled by the library's own tracing events; writes the plan.
pub fn plan(op: Op, table: &Path, out: &Path, threads: usize) -> Result<Measure, String> {
    let events = EventLog::new(Instant::now());
    let subscriber = tracing_subscriber::registry()
        .with(events.clone().with_filter(tracing::level_filters::LevelFilter::DEBUG));
    tracing::subscriber::set_global_default(subscriber).map_err(|e| e.to_string())?;
    let rt = runtime(threads)?;
    let mut clock = Clock::start();
    let mut plan = PlanFile::default();
    let extra = rt.block_on(async {
        let t = open(table).await?;
        let ctl = RunControl::default();
        Ok::<_, String>(match op {
            Op::Expire => {
                let r = expire_snapshots(&t, &expire_config(true), &ctl)
                    .await
                    .map_err(|e| e.to_string())?;
                plan.paths = r.deletion.paths.iter().map(|p| p.path.clone()).collect();
                plan.first_expired = r.first_expired;
                plan.last_expired = r.last_expired;
                json!({"snapshots_expired": r.snapshots_expired, "deleted": r.deletion.deleted})
            }
            Op::Orphans => {
                let r = remove_orphan_files(&t, &orphan_config(true), &ctl)
                    .await
                    .map_err(|e| e.to_string())?;
                plan.paths = r.deletion.paths.iter().map(|p| p.path.clone()).collect();
                json!({"files_listed": r.files_listed, "candidates": r.candidates,
                       "referenced": r.referenced, "manifests_read": r.manifests_read,
                       "versions_read": r.versions_read, "deleted": r.deletion.deleted})
            }
            Op::Drop => {
                let latest = t
                    .snapshots()
                    .latest_id(t.storage())
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or("no snapshot")?;
                let s = t
                    .snapshots()
                    .read(t.storage(), latest)
                    .await
                    .map_err(|e| e.to_string())?;
                let live = t.live_data_files(&s).await.map_err(|e| e.to_string())?;
                let mut per: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
                for e in &live {
                    *per.entry(e.partition.clone()).or_default() += 1;
                }
                let (row, n) = per
                    .into_iter()
                    .max_by_key(|(_, n)| *n)
                    .ok_or("no live files")?;
                let path = t.paths().partition_path(&row).map_err(|e| e.to_string())?;
                let spec: BTreeMap<String, String> = path
                    .trim_end_matches('/')
                    .split('/')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                plan.partition = Some(spec.clone());
                plan.partition_files = n;
                json!({"partition": spec, "live_files": live.len(), "partition_files": n})
            }
        })
    })?;
    let files = match op {
        Op::Drop => plan.partition_files,
        _ => plan.paths.len() as u64,
    };
    let bytes = serde_json::to_vec(&plan).map_err(|e| e.to_string())?;
    std::fs::write(out, bytes).map_err(|e| format!("write {}: {e}", out.display()))?;
    clock.extend(events.steps());
    Ok(clock.finish("plan", files, extra))
}

/// The real run of `op` through the crate's API.
pub fn run(
    op: Op,
    table: &Path,
    plan: &PlanFile,
    threads: usize,
    concurrency: usize,
) -> Result<Measure, String> {
    let rt = runtime(threads)?;
    let progress = ProgressLog::new(Instant::now());
    let mut clock = Clock::start();
    let ctl = RunControl {
        progress: Some(progress.callback()),
        io_concurrency: concurrency,
        ..Default::default()
    };
    let (files, extra) = rt.block_on(async {
        let t = open(table).await?;
        Ok::<_, String>(match op {
            Op::Expire => {
                let r = expire_snapshots(&t, &expire_config(false), &ctl)
                    .await
                    .map_err(|e| e.to_string())?;
                (
                    r.deletion.total_files(),
                    json!({"snapshots_expired": r.snapshots_expired,
                           "failed": r.deletion.failed.len(), "deleted": r.deletion.deleted}),
                )
            }
            Op::Orphans => {
                let r = remove_orphan_files(&t, &orphan_config(false), &ctl)
                    .await
                    .map_err(|e| e.to_string())?;
                (
                    r.deletion.total_files(),
                    json!({"files_listed": r.files_listed, "candidates": r.candidates,
                           "failed": r.deletion.failed.len(), "deleted": r.deletion.deleted}),
                )
            }
            Op::Drop => {
                let spec = plan.partition.clone().ok_or("plan has no partition")?;
                let r = drop_partitions(&t, &[spec], None, None, &ctl)
                    .await
                    .map_err(|e| e.to_string())?;
                (
                    r.files_marked_deleted,
                    json!({"snapshots": r.snapshot_ids, "partitions": r.partitions.len()}),
                )
            }
        })
    })?;
    clock.extend(progress.steps());
    Ok(clock.finish("op", files, extra))
}
