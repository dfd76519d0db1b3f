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
    /// `clean::expiry::snapshots`, everything but the latest snapshot.
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

/// A [`PlanFile`] without its paths: what the measured phases (`op`, `profile`) need. Read
/// streamed ([`PlanHead::read`]), so that a process whose peak memory is the figure never holds
/// the dry run's path list (1.15 M paths, ~125 MiB, at the large size).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PlanHead {
    /// First expired snapshot (expire).
    pub first_expired: Option<i64>,
    /// Last expired snapshot (expire).
    pub last_expired: Option<i64>,
    /// Partition to drop (drop), key → value.
    pub partition: Option<BTreeMap<String, String>>,
}

impl PlanHead {
    /// The head of the plan file at `path`; its `paths` are skipped as they are parsed (one
    /// reused scratch buffer, no path kept).
    pub fn read(path: &Path) -> Result<PlanHead, String> {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_reader(std::io::BufReader::new(file))
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Every file of `manifest/` and `snapshot/` (name → size), the directories a commit writes to.
fn metadata_files(table: &Path) -> Result<BTreeMap<String, u64>, String> {
    let mut out = BTreeMap::new();
    for dir in ["manifest", "snapshot"] {
        let entries = std::fs::read_dir(table.join(dir)).map_err(|e| format!("{dir}: {e}"))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{dir}: {e}"))?;
            let size = entry.metadata().map_err(|e| format!("{dir}: {e}"))?.len();
            out.insert(
                format!("{dir}/{}", entry.file_name().to_string_lossy()),
                size,
            );
        }
    }
    Ok(out)
}

/// What a commit wrote: the files of `after` that are new or changed since `before`, by kind
/// (manifest, manifest list, index manifest, snapshot, the `LATEST` hint), with their bytes.
fn metadata_written(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> serde_json::Value {
    let mut kinds: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut files = Vec::new();
    for (name, &size) in after {
        let changed = before.get(name).is_none_or(|&b| b != size) || name == "snapshot/LATEST";
        if !changed {
            continue;
        }
        let file = name.rsplit('/').next().unwrap_or(name);
        let kind = if file == "LATEST" || file == "EARLIEST" {
            "hint"
        } else if file.starts_with("snapshot-") {
            "snapshot"
        } else if file.starts_with("manifest-list-") {
            "manifest list"
        } else if file.starts_with("index-manifest-") {
            "index manifest"
        } else if file.starts_with("manifest-") {
            "manifest"
        } else {
            "other"
        };
        let k = kinds.entry(kind).or_default();
        k.0 += 1;
        k.1 += size;
        files.push(json!({"path": name, "kind": kind, "bytes": size}));
    }
    // The hint is rewritten in place (same size): count it, but apart from the commit's files.
    let (total_files, total_bytes) = kinds
        .iter()
        .filter(|(k, _)| **k != "hint")
        .fold((0, 0), |(f, b), (_, (n, s))| (f + n, b + s));
    json!({
        "files": total_files,
        "bytes": total_bytes,
        "by_kind": kinds.iter().map(|(k, (n, s))| (k.to_string(), json!({"files": n, "bytes": s})))
            .collect::<serde_json::Map<_, _>>(),
        "list": files,
    })
}

/// A multi-threaded runtime like the CLI's.
pub fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .max_blocking_threads(paimon_cleanup::storage::max_blocking_sections())
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
        ..Default::default()
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
    let subscriber = tracing_subscriber::registry().with(
        events
            .clone()
            .with_filter(tracing::level_filters::LevelFilter::DEBUG),
    );
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
    plan: &PlanHead,
    threads: usize,
    concurrency: usize,
    max_memory: Option<u64>,
) -> Result<Measure, String> {
    let rt = runtime(threads)?;
    let progress = ProgressLog::new(Instant::now());
    let mut clock = Clock::start();
    let ctl = RunControl {
        progress: Some(progress.callback()),
        io_concurrency: concurrency,
        max_memory,
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
                    json!({"snapshots_expired": r.snapshots_expired, "elapsed_ms": r.elapsed_ms,
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
                           "elapsed_ms": r.elapsed_ms,
                           "failed": r.deletion.failed.len(), "deleted": r.deletion.deleted}),
                )
            }
            Op::Drop => {
                let spec = plan.partition.clone().ok_or("plan has no partition")?;
                let before = metadata_files(table)?;
                let r = drop_partitions(&t, &[spec], None, None, &ctl)
                    .await
                    .map_err(|e| e.to_string())?;
                let written = metadata_written(&before, &metadata_files(table)?);
                (
                    r.files_marked_deleted,
                    json!({"snapshots": r.snapshot_ids, "partitions": r.partitions.len(),
                           "elapsed_ms": r.elapsed_ms, "metadata_written": written}),
                )
            }
        })
    })?;
    clock.extend(progress.steps());
    Ok(clock.finish("op", files, extra))
}

/// Where expiry's time goes: `clean::expiry::snapshots` replayed step by step through the same
/// public building blocks (`clean::expiry::plan`, `clean::expiry::protected`, `clean::expiry::protected::protectors`), timed
/// per step, in dry-run mode (the deletion steps only compute sizes). The real operation is one
/// call; this replica exists to attribute its time.
pub fn profile_expire(table: &Path, plan: &PlanHead, threads: usize) -> Result<Measure, String> {
    use paimon_cleanup::clean::expiry::plan::{DeletionPlan, MetadataScope};
    use paimon_cleanup::clean::expiry::protected::protectors::{other_protectors, snapshot_line};
    use paimon_cleanup::clean::expiry::protected::ReferenceReader;
    use paimon_cleanup::clean::expiry::removed::{added_by_lists, deleted_by_deltas};
    use paimon_cleanup::clean::shared::deleter::Deleter;
    use paimon_cleanup::clean::FileClass;

    let rt = runtime(threads)?;
    let mut clock = Clock::start();
    let e = |e: paimon_cleanup::Error| e.to_string();
    rt.block_on(async {
        let t0 = clock.now_ms();
        let t = open(table).await?;
        let all = t.all_snapshots().await.map_err(e)?;
        let step = |clock: &mut Clock, name: &str, start: f64, count: u64| {
            clock.extend([super::measure::Step {
                name: name.to_string(),
                start_ms: start,
                end_ms: clock.now_ms(),
                count,
                rss_kb: super::measure::vmrss_kb(),
            }]);
        };
        step(
            &mut clock,
            "open table, read every snapshot",
            t0,
            all.len() as u64,
        );
        let first = plan.first_expired.ok_or("nothing expired")?;
        let last = plan.last_expired.ok_or("nothing expired")?;
        let expired: Vec<_> = all
            .iter()
            .filter(|s| s.id >= first && s.id <= last)
            .cloned()
            .collect();
        let kept: Vec<_> = all.iter().filter(|s| s.id > last).cloned().collect();

        let t1 = clock.now_ms();
        let mut rr = ReferenceReader::new(&t);
        let deltas: Vec<String> = all
            .iter()
            .filter(|s| s.id > first && s.id <= last + 1)
            .map(|s| s.delta_manifest_list.clone())
            .collect();
        let mut candidates = deleted_by_deltas(&rr, &t, &deltas, &Default::default())
            .await
            .map_err(e)?;
        step(
            &mut clock,
            "candidates: delta lists + manifests, reduced per manifest (deleted_by_deltas)",
            t1,
            candidates.len() as u64,
        );
        let t2 = clock.now_ms();
        let cl: Vec<String> = expired
            .iter()
            .filter_map(|s| s.changelog_manifest_list.clone())
            .collect();
        candidates
            .append(
                added_by_lists(&rr, &t, &cl, FileClass::ChangelogData)
                    .await
                    .map_err(e)?,
            )
            .map_err(e)?;
        step(
            &mut clock,
            "candidates: changelog lists (added_by_lists)",
            t2,
            candidates.len() as u64,
        );

        let t3 = clock.now_ms();
        let mut protectors = snapshot_line("main", &kept);
        protectors.extend(other_protectors(&t).await.map_err(e)?);
        step(
            &mut clock,
            "protectors: tags, branches, changelogs (other_protectors)",
            t3,
            protectors.len() as u64,
        );

        let set: std::collections::HashSet<_> = candidates.locations().collect();
        let t4 = clock.now_ms();
        let protected = rr.protected_files(&protectors, &set).await.map_err(e)?;
        step(
            &mut clock,
            "protected_files (protector lists + slim manifests)",
            t4,
            protected.len() as u64,
        );
        let t5 = clock.now_ms();
        let again = rr.protected_files(&protectors, &set).await.map_err(e)?;
        step(
            &mut clock,
            "protected_files again (caches warm: merge work only)",
            t5,
            again.len() as u64,
        );
        let t6 = clock.now_ms();
        let referenced = rr.referenced_metadata(&protectors).await.map_err(e)?;
        step(
            &mut clock,
            "referenced_metadata (protector index manifests)",
            t6,
            referenced.manifest_dir_names.len() as u64,
        );

        let t7 = clock.now_ms();
        let built = DeletionPlan::build(
            &mut rr,
            &t,
            candidates,
            &expired,
            MetadataScope::All,
            &protectors,
        )
        .await
        .map_err(e)?;
        let planned = (built.data.len()
            + built.changelog_data.len()
            + built.manifests.len()
            + built.index_files.len()
            + built.lists.len()) as u64;
        step(
            &mut clock,
            "DeletionPlan::build (repeats the two above, + removed lists and index manifests)",
            t7,
            planned,
        );

        let t8 = clock.now_ms();
        let ctl = RunControl::default();
        let mut deleter = Deleter::for_table(&t, &ctl, true);
        built.execute(&t, &mut deleter, false).await.map_err(e)?;
        step(
            &mut clock,
            "execute, dry run (per-file guard + HEAD of files without a known size)",
            t8,
            deleter.report.total_files(),
        );
        Ok::<_, String>(())
    })?;
    Ok(clock.finish("profile", 0, json!({})))
}

/// Deletion-path probe: removes a copy of the planned files through `clean::shared::deleter::Deleter`
/// (the path every operation deletes through), on a storage rooted at the copy.
pub fn probe_delete(
    copy: &Path,
    plan: &PlanFile,
    threads: usize,
    concurrency: usize,
) -> Result<Measure, String> {
    use paimon_cleanup::clean::shared::deleter::{Deleter, Planned};
    use paimon_cleanup::clean::shared::kinds::KindRules;
    use paimon_cleanup::clean::FileClass;
    use paimon_cleanup::storage::Location;

    let rt = runtime(threads)?;
    let storage = Storage::open(copy.to_str().ok_or("non-UTF-8 path")?, &HashMap::new())
        .map_err(|e| e.to_string())?;
    let root = Location::from_local_path(copy).map_err(|e| e.to_string())?;
    // Each path gets the first class the table's kind rules allow there (deletions are
    // kind-checked).
    let kinds = rt.block_on(async {
        let t = Table::open(Arc::new(storage.with_delete_roots(&[])), &HashMap::new())
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(KindRules::of(&t))
    })?;
    let planned: Vec<Planned> = plan
        .paths
        .iter()
        .map(|p| {
            let location = root.join(p);
            let class = FileClass::ALL
                .into_iter()
                .find(|c| kinds.check(*c, &location).is_ok())
                .unwrap_or(FileClass::Other);
            Planned {
                location,
                class,
                bytes: Some(0),
            }
        })
        .collect();
    let n = planned.len() as u64;
    let mut clock = Clock::start();
    let ctl = RunControl {
        io_concurrency: concurrency,
        ..Default::default()
    };
    let failed = rt.block_on(async {
        let mut d = Deleter::new(&storage, kinds, &ctl, false);
        d.delete("probe", planned)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(d.report.failed.len())
    })?;
    clock.extend([super::measure::Step {
        name: "Deleter::delete of the copy (sizes known)".into(),
        start_ms: 0.0,
        end_ms: clock.now_ms(),
        count: n,
        rss_kb: super::measure::vmrss_kb(),
    }]);
    Ok(clock.finish("probe-delete", n, json!({"failed": failed})))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paimon_bench::copy::{copy_table, prepare_probe};
    use crate::paimon_gen::{generate, GenConfig};

    /// `--profile`'s probe deletes a copy holding only the planned files (and the schema): it
    /// must open that copy, delete every planned file through the `Deleter` and fail none.
    #[test]
    fn probe_delete_removes_a_copy_of_the_planned_files() {
        let dir = tempfile::tempdir().unwrap();
        let master = dir.path().join("master");
        generate(&GenConfig::new(master.clone())).unwrap();
        let table = dir.path().join("table");
        copy_table(&master, &table).unwrap();
        let plan_path = dir.path().join("plan.json");
        plan(Op::Expire, &table, &plan_path, 2).unwrap();
        let planned: PlanFile =
            serde_json::from_slice(&std::fs::read(&plan_path).unwrap()).unwrap();
        assert!(planned.paths.len() > 100, "{}", planned.paths.len());

        let probe = dir.path().join("probe");
        prepare_probe(&table, &probe, &planned.paths).unwrap();
        assert!(planned.paths.iter().all(|p| probe.join(p).exists()));
        let m = probe_delete(&probe, &planned, 2, 8).unwrap();
        assert_eq!(m.files, planned.paths.len() as u64);
        assert_eq!(m.extra["failed"], 0);
        let left: Vec<&String> = planned
            .paths
            .iter()
            .filter(|p| probe.join(p).exists())
            .collect();
        assert!(left.is_empty(), "not deleted: {left:?}");
        // The working copy the plan came from keeps its files.
        assert!(planned.paths.iter().all(|p| table.join(p).exists()));
    }
}
