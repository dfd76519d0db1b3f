//! `paimon-gen`: writes a synthetic but valid Apache Paimon table, fast, at any scale (up to
//! millions of empty data files and tens of thousands of snapshots). See the module
//! documentation of `paimon_gen` for what a generated table contains.
//!
//! ```text
//! paimon-gen /tmp/t --size large            # 10,000 snapshots, ~1,000,000 data files
//! paimon-gen /tmp/t --size xlarge           # 100,000 snapshots, ~10,000,000 data files
//! paimon-gen /tmp/t --snapshots 20 --files-per-commit 5 --verify
//! paimon-gen /tmp/t --snapshots 50000 --files-per-commit 1000 --metadata-only  # 50 M references
//! ```

mod paimon_gen;

use std::error::Error;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use paimon_gen::{BranchConfig, GenConfig, PartitionKind, Size};

#[derive(Clone, Copy, ValueEnum)]
enum PartitionArg {
    /// `dt STRING` (2024-01-01, 2024-01-02, ...)
    Date,
    /// `pt INT` (0, 1, 2, ...)
    Int,
}

/// Generate a synthetic Apache Paimon table (empty or zero-filled data files, real metadata).
#[derive(Parser)]
#[command(name = "paimon-gen", version)]
struct Cli {
    /// Table directory to create.
    table: PathBuf,
    /// Start from a benchmark preset (other flags override it).
    #[arg(long, value_parser = ["small", "medium", "large", "xlarge"])]
    size: Option<String>,
    /// Replace an existing table at that directory.
    #[arg(long)]
    force: bool,
    /// Snapshots on main.
    #[arg(long)]
    snapshots: Option<u32>,
    /// Partitions the writes move through over time.
    #[arg(long)]
    partitions: Option<u32>,
    /// Partition key type.
    #[arg(long, value_enum)]
    partition_type: Option<PartitionArg>,
    /// Data files per APPEND commit.
    #[arg(long)]
    files_per_commit: Option<u32>,
    /// Buckets (`bucket` option).
    #[arg(long)]
    buckets: Option<u32>,
    /// Every n-th snapshot is a compaction (0: none).
    #[arg(long)]
    compact_every: Option<u32>,
    /// Every n-th snapshot overwrites a partition (0: none).
    #[arg(long)]
    overwrite_every: Option<u32>,
    /// Every n-th snapshot drops the oldest partition (0: none).
    #[arg(long)]
    drop_every: Option<u32>,
    /// Number of tags.
    #[arg(long)]
    tags: Option<u32>,
    /// Branch name (`none` for no branch).
    #[arg(long)]
    branch: Option<String>,
    /// Main snapshot the branch starts from (default: the middle).
    #[arg(long)]
    branch_at: Option<u32>,
    /// Commits on the branch.
    #[arg(long)]
    branch_commits: Option<u32>,
    /// Consumers.
    #[arg(long)]
    consumers: Option<u32>,
    /// Changelog files on/off.
    #[arg(long)]
    changelog: Option<bool>,
    /// Index files (HASH + DELETION_VECTORS) on/off.
    #[arg(long)]
    index: Option<bool>,
    /// Every n-th append rewrites index files.
    #[arg(long)]
    index_every: Option<u32>,
    /// Orphan data files to add.
    #[arg(long)]
    orphans: Option<u32>,
    /// Bytes of each data, changelog and orphan data file, zeros (default 0: empty files, an
    /// inode and no data block each; `_FILE_SIZE` in the manifests says the same). The cleanup
    /// operations never read data files, so the size changes only the disk space the table
    /// takes (a file of 1..4096 bytes takes a 4 KiB block on ext4: 10 M files of 1 KiB are
    /// ~41 GB) and the bytes the reports count.
    #[arg(long)]
    data_file_bytes: Option<u32>,
    /// Manifests of one tier that trigger a merge (Java manifest.merge-min-count).
    #[arg(long)]
    merge_min: Option<u32>,
    /// Write the metadata only: manifests reference data and changelog files that are never
    /// created (scale runs past the disk's inodes: 50 M references take no inode each).
    #[arg(long)]
    metadata_only: bool,
    /// Entries per merged manifest before rolling.
    #[arg(long)]
    roll_entries: Option<u32>,
    /// DELETE entries in a base list that trigger its full compaction (0: never).
    #[arg(long)]
    full_compaction_deletes: Option<u32>,
    /// Writer threads (default: 2 × cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of every choice and name.
    #[arg(long)]
    seed: Option<u64>,
    /// Check main's latest live files with this crate's reader afterwards.
    #[arg(long)]
    verify: bool,
}

fn config(cli: &Cli) -> GenConfig {
    let mut c = match cli.size.as_deref().and_then(Size::parse) {
        Some(size) => {
            eprintln!("preset: {}", size.name());
            GenConfig::sized(cli.table.clone(), size)
        }
        None => GenConfig::new(cli.table.clone()),
    };
    c.force = cli.force;
    c.metadata_only = cli.metadata_only;
    // Only --verify reads the live files' paths.
    c.live_paths = cli.verify;
    macro_rules! set {
        ($($f:ident),*) => { $( if let Some(v) = cli.$f { c.$f = v; } )* };
    }
    set!(
        snapshots,
        partitions,
        files_per_commit,
        buckets,
        compact_every,
        overwrite_every,
        drop_every,
        tags,
        consumers,
        changelog,
        index,
        index_every,
        orphans,
        data_file_bytes,
        merge_min,
        roll_entries,
        full_compaction_deletes,
        threads,
        seed
    );
    if let Some(p) = cli.partition_type {
        c.partition_kind = match p {
            PartitionArg::Date => PartitionKind::Date,
            PartitionArg::Int => PartitionKind::Int,
        };
    }
    match cli.branch.as_deref() {
        Some("none") => c.branch = None,
        Some(name) => {
            c.branch = Some(BranchConfig {
                name: name.to_string(),
                ..c.branch.clone().unwrap_or(BranchConfig {
                    name: String::new(),
                    at: 1,
                    commits: 2,
                })
            })
        }
        None => {}
    }
    let snapshots = c.snapshots;
    if let Some(b) = c.branch.as_mut() {
        b.at = cli.branch_at.unwrap_or((snapshots / 2).max(1));
        if let Some(n) = cli.branch_commits {
            b.commits = n;
        }
    }
    c
}

fn main() -> Result<(), Box<dyn Error>> {
    let cli = Cli::parse();
    let cfg = config(&cli);
    let generated = paimon_gen::generate(&cfg)?;
    if cli.verify {
        paimon_gen::verify(&cfg.out, &generated.live_latest)?;
        eprintln!(
            "verified: the crate reads the {} live files the generator wrote",
            generated.live_latest.len()
        );
    }
    println!("{}", serde_json::to_string_pretty(&generated.summary)?);
    Ok(())
}
