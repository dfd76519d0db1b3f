//! Synthetic Paimon tables at scale, shared by the `paimon-gen` and `paimon-bench` binaries.
//!
//! A generated table is a primary-key table `(id INT NOT NULL, v STRING, <partition>)` with a
//! fixed number of buckets, written the way Java's streaming writer leaves it:
//!
//! * **APPEND** commits add `files_per_commit` level-0 files to the current partition (10 %
//!   late data to the previous one); with `changelog` each touched bucket also gets a changelog
//!   file listed in the snapshot's `changelogManifestList`.
//! * **COMPACT** commits (every `compact_every`) compact every bucket of the current and
//!   previous partition: several files → DELETE them all, ADD one level-5 file (a real
//!   compaction); a single level-0 file → DELETE + ADD of the same file at level 5 (a level
//!   upgrade).
//! * **OVERWRITE** commits (every `overwrite_every`) replace one partition; every
//!   `drop_every` the oldest non-empty partition is dropped (DELETE only, like Java's drop
//!   partition).
//! * With `index`, every `index_every`-th append rewrites the HASH index file of each touched
//!   bucket and a DELETION_VECTORS file covering one of its compacted files; the snapshot's
//!   index manifest holds the full set (ADD entries only), reused while nothing changes.
//! * Base lists are the previous base + delta, merged like Java's manifest merge (tiered:
//!   `merge_min` same-tier manifests at the tail become one, rolled at `roll_entries`), so base
//!   lists stay short at 10,000 snapshots; once the base holds `full_compaction_deletes`
//!   DELETE entries it is rewritten whole without them (Java's manifest full compaction).
//! * Tags (`tag/tag-nightly-NNNN`), one branch created from a tag (`branch/branch-<name>` with a
//!   schema copy, the tag, the tagged snapshot and its own commits), consumers, and optional
//!   orphan files.
//!
//! Data files are empty by default (`_FILE_SIZE` 0), or `data_file_bytes` zero bytes each
//! (`_FILE_SIZE` says so): every reader plans them, none can read rows. Index files are always
//! empty. All names derive from the seed, so a configuration always generates the same table.
//!
//! Work is split in two phases over a pool of writer threads: (A) the simulation creates the
//! empty files and writes manifests and index manifests; (B) once every manifest's size and
//! partition stats are known, the manifest lists, snapshots and tags are written.

pub mod model;
mod pool;
pub mod rng;
mod sim;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use paimon_cleanup::spec::binary_row::BinaryRowWriter;
use paimon_cleanup::spec::manifest::{encode_manifest_list, ManifestCompression, ManifestFileMeta};
use paimon_cleanup::spec::options::TableOptions;
use paimon_cleanup::spec::schema::TableSchema;
use paimon_cleanup::spec::snapshot::Snapshot;
use paimon_cleanup::storage::Location;
use paimon_cleanup::table::PathFactory;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use model::{kinds, Ctx};
use pool::Pool;
use sim::{Sim, SnapSpec};

/// Type of the single partition key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionKind {
    /// `dt STRING`, values `2024-01-01`, `2024-01-02`, ...
    Date,
    /// `pt INT`, values 0, 1, 2, ...
    Int,
}

/// A branch forked from main.
#[derive(Debug, Clone)]
pub struct BranchConfig {
    /// Branch name (directory `branch/branch-<name>`).
    pub name: String,
    /// Main snapshot the branch is created from (through a tag `<name>-base`).
    pub at: u32,
    /// Commits made on the branch after creation.
    pub commits: u32,
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenConfig {
    /// Table directory (created; must not exist unless `force`).
    pub out: PathBuf,
    /// Remove an existing table directory first.
    pub force: bool,
    /// Snapshots on main.
    pub snapshots: u32,
    /// Number of partitions the writes move through.
    pub partitions: u32,
    /// Partition key type.
    pub partition_kind: PartitionKind,
    /// Data files per APPEND commit.
    pub files_per_commit: u32,
    /// `bucket` option.
    pub buckets: u32,
    /// Every n-th snapshot compacts (0: never).
    pub compact_every: u32,
    /// Every n-th snapshot overwrites a partition (0: never).
    pub overwrite_every: u32,
    /// Every n-th snapshot drops the oldest non-empty partition (0: never).
    pub drop_every: u32,
    /// Tags, spread evenly.
    pub tags: u32,
    /// Optional branch.
    pub branch: Option<BranchConfig>,
    /// Consumers (all at the latest snapshot).
    pub consumers: u32,
    /// Write changelog files (`changelog-producer = input`).
    pub changelog: bool,
    /// Write HASH and DELETION_VECTORS index files (`deletion-vectors.enabled = true`).
    pub index: bool,
    /// Every n-th append updates index files.
    pub index_every: u32,
    /// Orphan data files to add (plus 1 % orphan manifests and index files, and a temp file).
    pub orphans: u32,
    /// Bytes of each data, changelog and orphan data file (zeros; 0 = empty files, which take
    /// an inode and no data block).
    pub data_file_bytes: u32,
    /// Write the metadata only: manifests reference data and changelog files that are never
    /// created (for scale runs past the disk's inodes; deleting a missing file is a no-op).
    pub metadata_only: bool,
    /// Return main's latest live files as relative paths ([`Generated::live_latest`]); without
    /// it the list stays empty (one string per live file: gigabytes at tens of millions).
    pub live_paths: bool,
    /// Same-tier manifests at the tail of a base list that trigger a merge (Java's
    /// `manifest.merge-min-count`, 30).
    pub merge_min: u32,
    /// Entries per merged manifest before rolling (stands in for `manifest.target-file-size`).
    pub roll_entries: u32,
    /// When the base list holds this many DELETE entries, it is rewritten whole without them
    /// (Java's manifest full compaction, `manifest.full-compaction-threshold-size`); 0: never.
    pub full_compaction_deletes: u32,
    /// Writer threads.
    pub threads: usize,
    /// Seed of every random choice and name.
    pub seed: u64,
    /// Milliseconds between snapshots.
    pub step_millis: i64,
    /// `timeMillis` of the last main snapshot.
    pub end_millis: i64,
}

/// Named sizes used by the benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// 100 snapshots, ~10,000 data files.
    Small,
    /// 1,000 snapshots, ~100,000 data files.
    Medium,
    /// 10,000 snapshots, ~1,000,000 data files.
    Large,
    /// 100,000 snapshots, ~10,000,000 data files (about 11.4 M inodes and 4 GB with empty data
    /// files, the default).
    XLarge,
    /// Metadata-heavy (manifests never merged, as old writers or misconfigured merge options
    /// leave them): 1,000 snapshots, ~97,000 data files.
    Meta1k,
    /// Metadata-heavy: 2,000 snapshots, ~194,000 data files.
    Meta2k,
    /// Metadata-heavy: 4,000 snapshots, ~389,000 data files.
    Meta4k,
}

impl Size {
    /// Parses `small`, `medium`, `large` or `xlarge`.
    pub fn parse(s: &str) -> Option<Size> {
        match s {
            "small" => Some(Size::Small),
            "medium" => Some(Size::Medium),
            "large" => Some(Size::Large),
            "xlarge" => Some(Size::XLarge),
            "meta-1k" => Some(Size::Meta1k),
            "meta-2k" => Some(Size::Meta2k),
            "meta-4k" => Some(Size::Meta4k),
            _ => None,
        }
    }

    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Medium => "medium",
            Size::Large => "large",
            Size::XLarge => "xlarge",
            Size::Meta1k => "meta-1k",
            Size::Meta2k => "meta-2k",
            Size::Meta4k => "meta-4k",
        }
    }
}

/// Current wall-clock time in epoch milliseconds.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl GenConfig {
    /// A small default table at `out` (20 snapshots with every feature).
    pub fn new(out: PathBuf) -> Self {
        GenConfig {
            out,
            force: false,
            snapshots: 20,
            partitions: 4,
            partition_kind: PartitionKind::Date,
            files_per_commit: 5,
            buckets: 2,
            compact_every: 4,
            overwrite_every: 7,
            drop_every: 13,
            tags: 2,
            branch: Some(BranchConfig {
                name: "x".into(),
                at: 10,
                commits: 2,
            }),
            consumers: 1,
            changelog: true,
            index: true,
            index_every: 2,
            orphans: 0,
            data_file_bytes: 0,
            metadata_only: false,
            live_paths: true,
            merge_min: 30,
            roll_entries: 65_536,
            full_compaction_deletes: 100_000,
            threads: default_threads(),
            seed: 42,
            step_millis: 1000,
            end_millis: now_millis() - 60_000,
        }
    }

    /// The benchmark table of `size` at `out`: 5 % compactions, overwrites, drops, tags, a
    /// branch, consumers, changelog and index files.
    ///
    /// The metadata-heavy sizes (`meta-1k`, `meta-2k`, `meta-4k`) never merge manifests
    /// (`merge_min` unreachable, no full compaction): every snapshot's base list names every
    /// delta manifest before it, so the lists grow with the square of the snapshots and the
    /// manifests with the data files.
    pub fn sized(out: PathBuf, size: Size) -> Self {
        let (snapshots, partitions, files) = match size {
            Size::Small => (100, 10, 128),
            Size::Medium => (1_000, 30, 128),
            Size::Large => (10_000, 100, 128),
            Size::XLarge => (100_000, 1_000, 128),
            Size::Meta1k => (1_000, 30, 120),
            Size::Meta2k => (2_000, 60, 120),
            Size::Meta4k => (4_000, 120, 120),
        };
        let never_merged = matches!(size, Size::Meta1k | Size::Meta2k | Size::Meta4k);
        let base = GenConfig::new(out);
        GenConfig {
            merge_min: if never_merged {
                u32::MAX
            } else {
                base.merge_min
            },
            full_compaction_deletes: if never_merged {
                0
            } else {
                base.full_compaction_deletes
            },
            snapshots,
            partitions,
            files_per_commit: files,
            buckets: 4,
            compact_every: 5,
            overwrite_every: 97,
            drop_every: 250,
            tags: 10,
            branch: Some(BranchConfig {
                name: "x".into(),
                at: snapshots / 2,
                commits: 3,
            }),
            consumers: 2,
            changelog: true,
            index: true,
            index_every: 10,
            orphans: 0,
            ..base
        }
    }
}

/// Writer threads by default: twice the cores (creating files waits on the file system).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 2)
        .unwrap_or(4)
}

/// What was generated.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GenSummary {
    /// Table directory.
    pub table: String,
    /// Snapshots on main.
    pub snapshots: u64,
    /// Snapshots on the branch (its own commits, plus the copied base snapshot).
    pub branch_snapshots: u64,
    /// Commits per kind (main and branch).
    pub commit_kinds: BTreeMap<String, u64>,
    /// Tags on main.
    pub tags: u64,
    /// Consumers.
    pub consumers: u64,
    /// Data files created (all referenced by some snapshot).
    pub data_files: u64,
    /// Changelog files created.
    pub changelog_files: u64,
    /// Index files created.
    pub index_files: u64,
    /// Orphan files created.
    pub orphan_files: u64,
    /// Bytes of each data, changelog and orphan data file.
    #[serde(default)]
    pub data_file_bytes: u64,
    /// Manifests written (deltas, changelog manifests and merged ones).
    pub manifests: u64,
    /// Of those, written by merges.
    pub merged_manifests: u64,
    /// Full compactions of the base list.
    pub full_compactions: u64,
    /// Entries over all manifests.
    pub manifest_entries: u64,
    /// Manifest lists written.
    pub manifest_lists: u64,
    /// Entries over all manifest lists.
    pub manifest_list_entries: u64,
    /// Longest base list.
    pub max_base_list: u64,
    /// Index manifests written.
    pub index_manifests: u64,
    /// Live data files of main's latest snapshot.
    pub live_files_latest: u64,
    /// Files referenced by some version: data + changelog + index files (no metadata).
    pub referenced_files: u64,
    /// Wall time of the simulation phase (empty files, manifests), ms.
    pub phase_a_ms: u64,
    /// Wall time of the lists/snapshots phase, ms.
    pub phase_b_ms: u64,
    /// Total wall time, ms.
    pub elapsed_ms: u64,
}

/// A generated table: the summary and main's expected live files (relative paths, sorted).
#[derive(Debug, Clone)]
pub struct Generated {
    /// Counters and timings.
    pub summary: GenSummary,
    /// Live data files of main's latest snapshot, as relative paths, sorted (empty unless
    /// [`GenConfig::live_paths`]).
    pub live_latest: Vec<String>,
}

fn schema_json(cfg: &GenConfig) -> Value {
    let (pname, ptype) = match cfg.partition_kind {
        PartitionKind::Date => ("dt", "STRING NOT NULL"),
        PartitionKind::Int => ("pt", "INT NOT NULL"),
    };
    let mut options = serde_json::Map::new();
    options.insert("bucket".into(), json!(cfg.buckets.to_string()));
    options.insert("file.format".into(), json!("parquet"));
    if cfg.changelog {
        options.insert("changelog-producer".into(), json!("input"));
    }
    if cfg.index {
        options.insert("deletion-vectors.enabled".into(), json!("true"));
    }
    json!({
        "version": 3,
        "id": 0,
        "fields": [
            {"id": 0, "name": "id", "type": "INT NOT NULL"},
            {"id": 1, "name": "v", "type": "STRING"},
            {"id": 2, "name": pname, "type": ptype},
        ],
        "highestFieldId": 2,
        "partitionKeys": [pname],
        "primaryKeys": [pname, "id"],
        "options": options,
        "timeMillis": cfg.end_millis - cfg.snapshots as i64 * cfg.step_millis - 1000,
    })
}

fn partition_row(kind: PartitionKind, p: u32) -> Result<Vec<u8>, String> {
    let mut w = BinaryRowWriter::new(1);
    match kind {
        PartitionKind::Date => {
            let day = chrono::NaiveDate::from_ymd_opt(2024, 1, 1)
                .and_then(|d| d.checked_add_days(chrono::Days::new(p as u64)))
                .ok_or("partition date out of range")?;
            w.write_string(0, &day.format("%Y-%m-%d").to_string())
        }
        PartitionKind::Int => w.write_int(0, p as i32),
    }
    .map_err(|e| e.to_string())?;
    Ok(w.finish())
}

fn mkdir(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| format!("mkdir {}: {e}", p.display()))
}

fn write(p: &Path, bytes: impl AsRef<[u8]>) -> Result<(), String> {
    std::fs::write(p, bytes).map_err(|e| format!("write {}: {e}", p.display()))
}

fn check(cfg: &GenConfig) -> Result<(), String> {
    if cfg.snapshots == 0 || cfg.partitions == 0 || cfg.buckets == 0 {
        return Err("snapshots, partitions and buckets must be at least 1".into());
    }
    if cfg.buckets > u16::MAX as u32 {
        return Err("at most 65535 buckets".into());
    }
    if let Some(b) = &cfg.branch {
        if b.at == 0 || b.at > cfg.snapshots {
            return Err(format!(
                "branch point {} is not a snapshot (1..={})",
                b.at, cfg.snapshots
            ));
        }
        if b.name.is_empty() || b.name == "main" || b.name.chars().all(|c| c.is_ascii_digit()) {
            return Err(format!("invalid branch name '{}'", b.name));
        }
    }
    Ok(())
}

/// Generates the table described by `cfg`.
pub fn generate(cfg: &GenConfig) -> Result<Generated, String> {
    check(cfg)?;
    let started = Instant::now();
    let root = cfg.out.clone();
    if root.exists() {
        let empty = std::fs::read_dir(&root)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !empty && !cfg.force {
            return Err(format!(
                "{} exists and is not empty (use --force to replace it)",
                root.display()
            ));
        }
        if !empty {
            if !root.join("schema").is_dir() {
                return Err(format!(
                    "{} is not a Paimon table; refusing to remove it",
                    root.display()
                ));
            }
            std::fs::remove_dir_all(&root)
                .map_err(|e| format!("remove {}: {e}", root.display()))?;
        }
    }
    for d in ["schema", "snapshot", "manifest", "index", "tag", "consumer"] {
        mkdir(&root.join(d))?;
    }
    let schema = schema_json(cfg);
    let schema_text = serde_json::to_string_pretty(&schema).map_err(|e| e.to_string())?;
    write(&root.join("schema/schema-0"), &schema_text)?;
    let parsed =
        TableSchema::parse(schema_text.as_bytes(), "schema-0").map_err(|e| e.to_string())?;
    let options = TableOptions::new(&parsed.options, &HashMap::new());
    let location = Location::from_local_path(&root).map_err(|e| e.to_string())?;
    let paths = PathFactory::new(&location, &options, parsed.partition_fields())
        .map_err(|e| e.to_string())?;
    let mut part_rows = Vec::with_capacity(cfg.partitions as usize);
    let mut part_paths = Vec::with_capacity(cfg.partitions as usize);
    for p in 0..cfg.partitions {
        let row = partition_row(cfg.partition_kind, p)?;
        part_paths.push(paths.partition_path(&row).map_err(|e| e.to_string())?);
        part_rows.push(row);
    }
    let ctx = Arc::new(Ctx {
        root: root.clone(),
        seed: cfg.seed,
        buckets: cfg.buckets,
        part_rows,
        part_paths,
        partition_fields: parsed.partition_fields(),
        data_file_bytes: cfg.data_file_bytes,
        metadata_only: cfg.metadata_only,
    });
    for p in 0..cfg.partitions {
        for b in 0..cfg.buckets {
            mkdir(&ctx.bucket_dir(p, b as u16))?;
        }
    }

    // Phase A: simulation, empty files, manifests, index manifests.
    let (meta_tx, meta_rx) = crossbeam_channel::unbounded::<(u32, ManifestFileMeta)>();
    let pool = Pool::new(ctx.clone(), cfg.threads);
    let mut sim = Sim::new(cfg, ctx.clone(), &pool, meta_tx);
    let outcome = sim.run().and_then(|main| {
        let orphans = sim.orphans(cfg.orphans)?;
        Ok((main, orphans))
    });
    let specs = std::mem::take(&mut sim.specs);
    let counts = sim.counts.clone();
    drop(sim);
    let finished = pool.finish();
    let (main, orphans) = outcome?;
    finished?;
    let mut metas: Vec<Option<ManifestFileMeta>> = vec![None; counts.manifests as usize];
    for (id, m) in meta_rx.try_iter() {
        metas[id as usize] = Some(m);
    }
    let metas: Arc<Vec<ManifestFileMeta>> = Arc::new(
        metas
            .into_iter()
            .enumerate()
            .map(|(i, m)| m.ok_or(format!("manifest {i} was not written")))
            .collect::<Result<_, _>>()?,
    );
    let phase_a = started.elapsed();

    // Phase B: manifest lists, snapshots, tags, branch copies.
    let b_started = Instant::now();
    if let Some(b) = &cfg.branch {
        let broot = root.join(format!("branch/branch-{}", b.name));
        for d in ["schema", "snapshot", "tag"] {
            mkdir(&broot.join(d))?;
        }
        write(&broot.join("schema/schema-0"), &schema_text)?;
        write(&broot.join("snapshot/EARLIEST"), b.at.to_string())?;
        write(
            &broot.join("snapshot/LATEST"),
            (b.at + b.commits).to_string(),
        )?;
    }
    let commit_user = rng::uuid(cfg.seed, kinds::USER, 0);
    let pool = Pool::new(ctx.clone(), cfg.threads);
    for spec in &specs {
        let spec = spec.clone();
        let metas = metas.clone();
        let user = commit_user.clone();
        pool.submit(Box::new(move |ctx: &Ctx| {
            write_snapshot(ctx, &spec, &metas, &user)
        }))?;
    }
    pool.finish()?;
    write(&root.join("snapshot/EARLIEST"), "1")?;
    write(&root.join("snapshot/LATEST"), cfg.snapshots.to_string())?;
    for i in 0..cfg.consumers {
        write(
            &root.join(format!("consumer/consumer-c{i}")),
            json!({"nextSnapshot": cfg.snapshots}).to_string(),
        )?;
    }
    let phase_b = b_started.elapsed();

    let live_files_latest = main.live.iter().map(|v| v.len() as u64).sum();
    let mut live_latest: Vec<String> = if cfg.live_paths {
        main.live
            .iter()
            .flatten()
            .map(|f| ctx.relative_path(f))
            .collect()
    } else {
        Vec::new()
    };
    live_latest.sort();
    let summary = GenSummary {
        table: root.display().to_string(),
        snapshots: cfg.snapshots as u64,
        branch_snapshots: cfg.branch.as_ref().map_or(0, |b| b.commits as u64 + 1),
        commit_kinds: counts.kinds.clone(),
        tags: specs
            .iter()
            .filter(|s| s.branch.is_none())
            .map(|s| s.tags.len() as u64)
            .sum(),
        consumers: cfg.consumers as u64,
        data_files: counts.data_files,
        changelog_files: counts.changelog_files,
        index_files: counts.index_files,
        orphan_files: orphans,
        data_file_bytes: u64::from(cfg.data_file_bytes),
        manifests: counts.manifests,
        merged_manifests: counts.merged_manifests,
        full_compactions: counts.full_compactions,
        manifest_entries: counts.manifest_entries,
        manifest_lists: specs
            .iter()
            .map(|s| 2 + s.changelog_list.is_some() as u64)
            .sum(),
        manifest_list_entries: counts.list_entries,
        max_base_list: counts.max_base_list,
        index_manifests: counts.index_manifests,
        live_files_latest,
        referenced_files: counts.data_files + counts.changelog_files + counts.index_files,
        phase_a_ms: phase_a.as_millis() as u64,
        phase_b_ms: phase_b.as_millis() as u64,
        elapsed_ms: started.elapsed().as_millis() as u64,
    };
    Ok(Generated {
        summary,
        live_latest,
    })
}

/// Writes one snapshot's manifest lists and JSON (plus its tags and branch copies).
fn write_snapshot(
    ctx: &Ctx,
    spec: &SnapSpec,
    metas: &[ManifestFileMeta],
    user: &str,
) -> Result<(), String> {
    let list = |name: String, ids: &[u32]| -> Result<(String, u64), String> {
        let m: Vec<ManifestFileMeta> = ids.iter().map(|i| metas[*i as usize].clone()).collect();
        let bytes = encode_manifest_list(&m, None, ManifestCompression::default())
            .map_err(|e| format!("encode {name}: {e}"))?;
        write(&ctx.manifest_path(&name), &bytes)?;
        Ok((name, bytes.len() as u64))
    };
    let (base, base_size) = list(ctx.list_name(spec.base_list), &spec.base)?;
    let delta_ids: Vec<u32> = spec.delta.into_iter().collect();
    let (delta, delta_size) = list(ctx.list_name(spec.delta_list), &delta_ids)?;
    let changelog = match (spec.changelog_list, spec.changelog) {
        (Some(l), Some(m)) => Some(list(ctx.list_name(l), &[m])?),
        _ => None,
    };
    let mut extra = paimon_cleanup::spec::snapshot::Extra::new();
    extra.insert("baseManifestListSize".into(), json!(base_size));
    extra.insert("deltaManifestListSize".into(), json!(delta_size));
    if let Some((_, size)) = &changelog {
        extra.insert("changelogManifestListSize".into(), json!(size));
    }
    extra.insert("changelogRecordCount".into(), json!(spec.changelog_rows));
    extra.insert("nextRowId".into(), json!(0));
    let snapshot = Snapshot {
        version: Some(3),
        id: spec.id,
        schema_id: 0,
        base_manifest_list: base,
        delta_manifest_list: delta,
        changelog_manifest_list: changelog.map(|(n, _)| n),
        index_manifest: spec.index_manifest.clone(),
        commit_user: user.to_string(),
        commit_identifier: spec.id,
        commit_kind: spec.kind.clone(),
        time_millis: spec.time,
        total_record_count: Some(spec.total_rows),
        delta_record_count: Some(spec.delta_rows),
        statistics: None,
        extra,
    };
    let text = snapshot.to_json().map_err(|e| e.to_string())?;
    let broot = |b: &str| ctx.root.join(format!("branch/branch-{b}"));
    let meta_root = spec.branch.as_deref().map_or(ctx.root.clone(), broot);
    write(
        &meta_root.join(format!("snapshot/snapshot-{}", spec.id)),
        &text,
    )?;
    for t in &spec.tags {
        write(&meta_root.join(format!("tag/tag-{t}")), &text)?;
    }
    if let Some((b, tag)) = &spec.branch_from_here {
        write(
            &broot(b).join(format!("snapshot/snapshot-{}", spec.id)),
            &text,
        )?;
        write(&broot(b).join(format!("tag/tag-{tag}")), &text)?;
    }
    Ok(())
}

/// Compares main's latest live files as this crate reads them (`table::inspect`) with what the
/// generator meant to write. `Err` names the first differences.
pub fn verify(root: &Path, expected: &[String]) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let storage = paimon_cleanup::storage::Storage::open(
        root.to_str().ok_or("non-UTF-8 table path")?,
        &HashMap::new(),
    )
    .map_err(|e| e.to_string())?;
    let got = rt
        .block_on(paimon_cleanup::table::inspect::inspect(
            Arc::new(storage),
            &HashMap::new(),
        ))
        .map_err(|e| e.to_string())?
        .live_files;
    if got == expected {
        return Ok(());
    }
    let g: std::collections::BTreeSet<&String> = got.iter().collect();
    let e: std::collections::BTreeSet<&String> = expected.iter().collect();
    let missing: Vec<_> = e.difference(&g).take(5).collect();
    let extra: Vec<_> = g.difference(&e).take(5).collect();
    Err(format!(
        "live files differ: crate reads {}, generator expects {}; missing {missing:?}, extra {extra:?}",
        got.len(),
        expected.len()
    ))
}
