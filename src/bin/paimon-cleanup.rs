//! `paimon-cleanup`: a command-line front end over the library's Rust API.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use paimon_cleanup::clean::partitions::filter::parse_partition_spec;
use paimon_cleanup::clean::shared::clock::now_millis;
use paimon_cleanup::clean::{
    delete_tags, expire_changelogs, expire_consumers, expire_tags, maintain, ChangelogExpireConfig,
    ChangelogExpireReport, ConsumerReport, MaintainConfig, TagReport,
};
use paimon_cleanup::clean::{
    drop_partitions, expire_partitions, preview_drop_partitions, PartitionExpireConfig,
    PartitionReport,
};
use paimon_cleanup::clean::{
    expire_snapshots, DeletionReport, ExpireConfig, RetentionOverrides, RunControl,
};
use paimon_cleanup::clean::{remove_orphan_files, OrphanConfig};
use paimon_cleanup::spec::options::parse_duration;
use paimon_cleanup::spec::time_text::parse_older_than;
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::inspect::inspect_branch_named;
use paimon_cleanup::table::{resolve_table_ref, Table, BRANCH_OPTION};
use paimon_cleanup::{Error, Result};

#[derive(Parser)]
#[command(
    name = "paimon-cleanup",
    version,
    about = "Apache Paimon table maintenance"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct TableArgs {
    /// Table root: a path, file://, s3://, gs://, az:// or memory:// URI. A last segment
    /// `<table>$branch_<name>` names a branch, as Paimon Java's `t$branch_<name>` does.
    table: String,
    /// Branch to work on (default `main`; also `-o branch=NAME` or a `$branch_NAME` suffix of
    /// the table). Expiry, tags, consumers and partitions change only this branch's
    /// snapshots, changelogs, tags and consumers, and keep every file any version of any
    /// branch reads. Orphan removal is table-wide whatever the branch (its references are
    /// every branch, as Java's `remove_orphan_files`).
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// Table option or storage option override, `key=value` (repeatable).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Worker threads of the runtime (default: number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
    /// Bound on the memory the run's large structures may hold (candidate files, protection,
    /// the deletion plan, the report), e.g. `512MiB`, `1GiB`, `800M` or plain bytes. Past it
    /// the run stops with an error while planning, before deleting anything.
    #[arg(long, value_name = "SIZE")]
    max_memory: Option<String>,
}

/// Bytes of a size such as `1024`, `64KiB`, `512MiB`, `1GiB`, `800M`, `2G` (K/M/G/T and
/// KB/MB/GB/TB are decimal, KiB/MiB/GiB/TiB binary).
fn parse_bytes(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let factor: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "K" | "KB" | "k" | "kB" => 1_000,
        "M" | "MB" => 1_000_000,
        "G" | "GB" => 1_000_000_000,
        "T" | "TB" => 1_000_000_000_000,
        "KiB" | "Ki" => 1 << 10,
        "MiB" | "Mi" => 1 << 20,
        "GiB" | "Gi" => 1 << 30,
        "TiB" | "Ti" => 1 << 40,
        other => {
            return Err(Error::InvalidArgument(format!(
                "--max-memory {s}: unknown unit {other:?} (use B, KiB, MiB, GiB, K, M, G)"
            )))
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| Error::InvalidArgument(format!("--max-memory {s}: not a size")))?;
    let bytes = n * factor as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(Error::InvalidArgument(format!(
            "--max-memory {s}: must be at least 1 byte"
        )));
    }
    Ok(bytes as u64)
}

/// The run control of one command: `--max-memory`, defaults otherwise.
fn control(args: &TableArgs) -> Result<RunControl> {
    Ok(RunControl {
        max_memory: args.max_memory.as_deref().map(parse_bytes).transpose()?,
        ..RunControl::default()
    })
}

#[derive(Args, Clone)]
struct RetentionArgs {
    /// Minimum number of snapshots kept (default: table option, then 10).
    #[arg(long)]
    retain_min: Option<i64>,
    /// Maximum number of snapshots kept.
    #[arg(long)]
    retain_max: Option<i64>,
    /// Keep versions younger than this (Paimon duration: `0s`, `30 min`, `1 h`, `7d`).
    #[arg(long, conflicts_with_all = ["older_than_ms", "older_than"])]
    time_retained: Option<String>,
    /// Cut-off as Java's `older_than`: versions older than this may expire. A timestamp
    /// (`'2024-01-01 12:00:00'`, `2024-01-01T12:00`, `2024-01-01`; local time zone unless it ends
    /// with one: `Z`, `+08:00`) or a duration back from now (`1 d`). Not in the future.
    #[arg(
        long,
        conflicts_with = "older_than_ms",
        value_name = "TIMESTAMP|DURATION"
    )]
    older_than: Option<String>,
    /// Absolute cut-off instead of --time-retained (epoch milliseconds; not in the future).
    #[arg(long)]
    older_than_ms: Option<i64>,
    /// Maximum snapshots expired in this run (`snapshot.expire.limit`).
    #[arg(long)]
    max_deletes: Option<i64>,
    /// Compute and report, change nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Show branches, and the snapshots, tags, consumers and the live files of the latest
    /// snapshot of the branch (`--branch`, default main).
    Inspect(TableArgs),
    /// Delete old files that no snapshot, tag, branch or changelog references. Table-wide: the
    /// references are every branch's, so `--branch` changes nothing (as in Java, where
    /// `remove_orphan_files` on `t$branch_b` cleans the whole table).
    RemoveOrphanFiles {
        #[command(flatten)]
        table: TableArgs,
        /// Only files older than this may be deleted (default `1 d`): a timestamp as Java's
        /// `older_than` (`'2024-01-01 12:00:00'`; local time zone unless it ends with one: `Z`,
        /// `+08:00`) or a duration back from now (`1 d`). A bare number is refused (use
        /// --older-than-ms).
        #[arg(
            long,
            conflicts_with = "older_than_ms",
            value_name = "TIMESTAMP|DURATION"
        )]
        older_than: Option<String>,
        /// Absolute cut-off instead of --older-than (epoch milliseconds, not in the future).
        #[arg(long)]
        older_than_ms: Option<i64>,
        /// No writer is running: allow a cut-off within the last hour, up to now. With writers
        /// running, files written but not yet committed would be deleted.
        #[arg(long)]
        no_writers_running: bool,
        /// The table's external data roots (`data-file.external-paths`) belong to it alone:
        /// list and clean them too. Without it they are skipped: Paimon writes external files
        /// without the table name, so tables sharing a root share its directories, and each
        /// one's live files look like orphans to the other.
        #[arg(long)]
        external_roots_owned: bool,
        /// Compute and report, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Expire old snapshots and delete every file only they referenced. With a decoupled
    /// changelog lifecycle (`changelog.num-retained.*` above `snapshot.num-retained.*`) the
    /// expired snapshots become long-lived changelogs that keep what a changelog reader needs.
    /// On `--branch`, only that branch's snapshots expire; files any branch reads stay.
    ExpireSnapshots {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        retention: RetentionArgs,
        /// Remove bucket and partition directories left empty.
        #[arg(long)]
        clean_empty_dirs: bool,
        /// Refuse to run when a tag pins a snapshot that would expire (name the tags).
        #[arg(long)]
        refuse_if_tags_pin: bool,
    },
    /// Expire long-lived changelogs (decoupled changelog lifecycle) with the files only they
    /// kept: their changelog files, and (producer `none`) the data files compacted away that
    /// they read.
    ///
    /// Unset arguments take the table's options (`changelog.num-retained.*`,
    /// `changelog.time-retained`, falling back to the `snapshot.*` ones), so without arguments
    /// this runs the table's own changelog retention, as Java's expiry at commit does. Java's
    /// `expire_changelogs` procedure ignores the options instead: without arguments it keeps
    /// everything, and with only `older_than` it may keep a single changelog whatever
    /// `changelog.num-retained.min` says; here that minimum is always kept.
    ExpireChangelogs {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        retention: RetentionArgs,
        /// Delete every changelog older than the earliest snapshot.
        #[arg(long)]
        delete_all: bool,
    },
    /// Delete tags (a comma-separated list) and the files only they kept (also their
    /// snapshots' changelog files when the snapshots expired, which Java leaves behind, and
    /// Java's `tag-success-file/<tag>_SUCCESS`).
    DeleteTag {
        #[command(flatten)]
        table: TableArgs,
        /// Tag name, or several separated by commas (`t1,t2`), as Java's `delete_tag`; names are
        /// trimmed. Tags that do not exist are reported, not an error.
        #[arg(value_name = "TAG[,TAG...]")]
        tag: String,
        /// Compute and report, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete tags whose retention passed, and with --older-than those created before it.
    ///
    /// As Java's `expire_tags` procedure: time expiry (`tag.time-retained` of each tag) is
    /// enabled for this call even when the table sets `tag.time-expire-enabled = false`;
    /// `maintain` follows that option (as Java's expiry at commit does).
    ExpireTags {
        #[command(flatten)]
        table: TableArgs,
        /// Also delete tags created before this: a timestamp as Java's `older_than`
        /// (`'2024-01-01 12:00:00'`; local time zone unless it ends with one) or a duration back
        /// from now (`7 d`). Not in the future (Java accepts one and deletes every tag).
        #[arg(
            long,
            conflicts_with = "older_than_ms",
            value_name = "TIMESTAMP|DURATION"
        )]
        older_than: Option<String>,
        /// Also delete tags created before this epoch-ms time (not in the future).
        #[arg(long)]
        older_than_ms: Option<i64>,
        /// Compute and report, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete consumers that have not advanced for longer than the expiration time.
    ExpireConsumers {
        #[command(flatten)]
        table: TableArgs,
        /// Paimon duration (default: the table's consumer.expiration-time).
        #[arg(long)]
        expiration_time: Option<String>,
        /// Compute and report, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Drop partitions with one OVERWRITE commit (their files go at a later snapshot expiry).
    ///
    /// A spec names partition values, as Java's `drop_partition` reads them, and matches the
    /// partition rows, not the directory names: NULL, '' and ' ' are three partitions although
    /// Paimon writes all three to `k=__DEFAULT_PARTITION__`.
    DropPartitions {
        #[command(flatten)]
        table: TableArgs,
        /// Partition spec `k=v[,k2=v2]`, repeatable (a partition matching any spec is dropped; a
        /// prefix of the keys is enough). Keys and values are trimmed, as in Java. The table's
        /// default partition name (`__DEFAULT_PARTITION__` unless `partition.default-name` says
        /// otherwise) means NULL; `k=` and `k=''` mean the empty string, `k=' '` one space (a
        /// quoted value is kept verbatim). `\` escapes the next character (`\,` a comma, also
        /// inside quotes). Stricter than Java: an unquoted `NULL` is refused (write the default
        /// name, or `'NULL'` for the string), and so are unbalanced quotes; Java reads `k=''` as
        /// two quote characters.
        #[arg(long = "partition", value_name = "K=V[,K2=V2]", required = true)]
        partitions: Vec<String>,
        /// Report what the drop would mark deleted at the latest snapshot; commit nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Drop the partitions older than the expiration time (values-time or update-time).
    ExpirePartitions {
        #[command(flatten)]
        table: TableArgs,
        /// Paimon duration (default: the table's partition.expiration-time).
        #[arg(long)]
        expiration_time: Option<String>,
        /// `values-time` or `update-time` (default: partition.expiration-strategy).
        #[arg(long)]
        strategy: Option<String>,
        /// Java DateTimeFormatter pattern of the partition time, e.g. `yyyyMMdd`.
        #[arg(long)]
        timestamp_formatter: Option<String>,
        /// How to build the time string from the keys, e.g. `$dt $hr:00:00`.
        #[arg(long)]
        timestamp_pattern: Option<String>,
        /// At most this many partitions (default: partition.expiration-max-num, then 100).
        #[arg(long)]
        max_num: Option<usize>,
        /// Partitions per commit (default: partition.expiration-batch-size, else all in one).
        #[arg(long)]
        batch_size: Option<usize>,
        /// Select and report, commit nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Run what the table's options ask for: tag, consumer, snapshot and changelog expiry.
    Maintain {
        #[command(flatten)]
        table: TableArgs,
        /// Compute and report, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

impl RetentionArgs {
    fn overrides(&self) -> Result<RetentionOverrides> {
        Ok(RetentionOverrides {
            retain_min: self.retain_min,
            retain_max: self.retain_max,
            time_retained: self
                .time_retained
                .as_deref()
                .map(parse_duration)
                .transpose()?,
            older_than_ms: cutoff(self.older_than.as_deref(), self.older_than_ms)?,
            limit: self.max_deletes,
        })
    }
}

/// The cut-off of `--older-than TEXT` (a timestamp or a duration, see [`parse_older_than`]) or
/// `--older-than-ms MS` (clap lets at most one through).
fn cutoff(older_than: Option<&str>, older_than_ms: Option<i64>) -> Result<Option<i64>> {
    let now = now_millis();
    match (older_than, older_than_ms) {
        (Some(text), _) => parse_older_than(text, now).map(Some),
        (None, Some(ms)) if ms > now => Err(Error::InvalidArgument(format!(
            "--older-than-ms {ms} is in the future (now is {now} ms)"
        ))),
        (None, ms) => Ok(ms),
    }
}

/// Java `Table.deleteTags`: names separated by commas, each trimmed; a name given twice counts
/// once.
fn tag_names(list: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in list.split(',').map(str::trim) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

fn parse_options(pairs: &[String]) -> Result<HashMap<String, String>> {
    pairs
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .ok_or_else(|| Error::InvalidArgument(format!("option '{p}' is not key=value")))
        })
        .collect()
}

/// A relative local path is taken relative to the current directory.
fn table_uri(arg: &str) -> Result<String> {
    let looks_like_uri = arg.contains("://") || arg.to_ascii_lowercase().starts_with("file:");
    if looks_like_uri || std::path::Path::new(arg).is_absolute() {
        return Ok(arg.to_string());
    }
    let abs = std::fs::canonicalize(arg)
        .map_err(|e| Error::InvalidArgument(format!("cannot resolve table path '{arg}': {e}")))?;
    Ok(abs.to_string_lossy().into_owned())
}

fn runtime(threads: Option<usize>) -> Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        if n == 0 {
            return Err(Error::InvalidArgument(
                "--threads must be at least 1".into(),
            ));
        }
        b.worker_threads(n);
    }
    // No more blocking threads than blocking sections in flight: tokio would otherwise start a
    // thread for nearly every hand-over between sections (each with a stack, an arena, a zstd
    // context).
    b.max_blocking_threads(paimon_cleanup::storage::max_blocking_sections())
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start runtime: {e}")))
}

/// What one command works on: options, runtime, storage and branch.
struct Opened {
    options: HashMap<String, String>,
    rt: tokio::runtime::Runtime,
    storage: Arc<Storage>,
    branch: String,
}

impl Opened {
    /// The branch, opened (on the runtime).
    async fn table(&self) -> Result<Table> {
        Table::open_branch(self.storage.clone(), &self.options, &self.branch).await
    }
}

/// Options, runtime, storage and branch for one command. `--branch`, `-o branch=` and a
/// `$branch_<name>` suffix of the table may each name the branch; they must agree.
fn open(args: &TableArgs) -> Result<Opened> {
    let options = parse_options(&args.options)?;
    let explicit = match (args.branch.as_deref(), options.get(BRANCH_OPTION)) {
        (Some(a), Some(b)) if a != b => {
            return Err(Error::InvalidArgument(format!(
                "--branch {a} and -o {BRANCH_OPTION}={b} disagree"
            )))
        }
        (Some(a), _) => Some(a),
        (None, b) => b.map(String::as_str),
    };
    let table_ref = resolve_table_ref(&args.table, explicit)?;
    let rt = runtime(args.threads)?;
    let storage = Arc::new(Storage::open(&table_uri(&table_ref.uri)?, &options)?);
    Ok(Opened {
        options,
        rt,
        storage,
        branch: table_ref.branch,
    })
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| Error::Internal(e.to_string()))?;
    println!("{text}");
    Ok(())
}

fn print_deletion(d: &DeletionReport) {
    for (class, c) in &d.deleted {
        println!(
            "  {:<16} {:>8} files {:>14} bytes",
            format!("{class:?}"),
            c.files,
            c.bytes
        );
    }
    if d.dirs_removed > 0 {
        println!("  directories removed: {}", d.dirs_removed);
    }
    for f in &d.failed {
        println!("  FAILED {}: {}", f.path, f.error);
    }
}

fn run_expire_snapshots(
    args: &TableArgs,
    retention: &RetentionArgs,
    clean_empty_dirs: bool,
    refuse_if_tags_pin: bool,
) -> Result<()> {
    let opened = open(args)?;
    let ctl = control(args)?;
    let cfg = ExpireConfig {
        retention: retention.overrides()?,
        clean_empty_dirs: clean_empty_dirs.then_some(true),
        dry_run: retention.dry_run,
        refuse_if_tags_pin_expired: refuse_if_tags_pin,
        ..Default::default()
    };
    let report = opened.rt.block_on(async {
        let table = opened.table().await?;
        expire_snapshots(&table, &cfg, &ctl).await
    })?;
    if args.json {
        return print_json(&report);
    }
    let verb = if cfg.dry_run {
        "would expire"
    } else {
        "expired"
    };
    match (report.first_expired, report.last_expired) {
        (Some(a), Some(b)) => println!("{verb} {} snapshots ({a}..={b})", report.snapshots_expired),
        _ => println!("nothing to expire"),
    }
    print_deletion(&report.deletion);
    if cfg.dry_run {
        for p in &report.deletion.paths {
            println!("  would delete {}", p.path);
        }
    }
    Ok(())
}

/// Open the table and run one capability, printing its report as JSON or a short summary.
fn run_capability<R, F, Fut>(
    args: &TableArgs,
    what: &str,
    f: F,
    deletion: fn(&R) -> &DeletionReport,
) -> Result<()>
where
    R: serde::Serialize,
    F: FnOnce(Table) -> Fut,
    Fut: std::future::Future<Output = Result<R>>,
{
    let opened = open(args)?;
    let report = opened.rt.block_on(async {
        let table = opened.table().await?;
        f(table).await
    })?;
    if args.json {
        return print_json(&report);
    }
    let d = deletion(&report);
    println!(
        "{what}: {} {} files, {} bytes",
        if d.dry_run { "would delete" } else { "deleted" },
        d.total_files(),
        d.total_bytes()
    );
    print_deletion(d);
    if d.dry_run {
        for p in &d.paths {
            println!("  would delete {}", p.path);
        }
    }
    print_not_found(&report);
    Ok(())
}

/// Requested tags that did not exist (a warning, not an error, as in Java), for reports that
/// list them (`tags_not_found`).
fn print_not_found(report: &impl serde::Serialize) {
    let Ok(v) = serde_json::to_value(report) else {
        return;
    };
    let names: Vec<&str> = v
        .get("tags_not_found")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    if !names.is_empty() {
        println!(
            "  tags not found (nothing deleted for them): {}",
            names.join(", ")
        );
    }
}

fn print_partition_report(what: &str, r: &PartitionReport) {
    let verb = if r.dry_run { "would drop" } else { "dropped" };
    println!(
        "{what}: {verb} {} partitions: {} files, {} rows, {} bytes marked deleted",
        r.partitions.len(),
        r.files_marked_deleted,
        r.rows_marked_deleted,
        r.bytes_marked_deleted
    );
    for name in &r.names {
        println!("  {name}");
    }
    if !r.snapshot_ids.is_empty() {
        println!(
            "  snapshots: {:?} ({} retries, {} index entries removed)",
            r.snapshot_ids, r.retries, r.index_entries_removed
        );
    }
}

fn run_partition_op<F, Fut>(args: &TableArgs, what: &str, f: F) -> Result<()>
where
    F: FnOnce(Table) -> Fut,
    Fut: std::future::Future<Output = Result<PartitionReport>>,
{
    let opened = open(args)?;
    let report = opened.rt.block_on(async {
        let table = opened.table().await?;
        f(table).await
    })?;
    if args.json {
        return print_json(&report);
    }
    print_partition_report(what, &report);
    Ok(())
}

fn run_drop_partitions(args: &TableArgs, partitions: &[String], dry_run: bool) -> Result<()> {
    let specs = partitions
        .iter()
        .map(|p| parse_partition_spec(p))
        .collect::<Result<Vec<_>>>()?;
    let ctl = control(args)?;
    run_partition_op(args, "drop partitions", |t| async move {
        if dry_run {
            preview_drop_partitions(&t, &specs, &ctl).await
        } else {
            drop_partitions(&t, &specs, None, None, &ctl).await
        }
    })
}

fn run_maintain(args: &TableArgs, dry_run: bool) -> Result<()> {
    let opened = open(args)?;
    let report = opened.rt.block_on(async {
        let table = opened.table().await?;
        maintain(&table, &MaintainConfig { dry_run }, &control(args)?).await
    })?;
    if args.json {
        return print_json(&report);
    }
    let steps: [(&str, Option<&DeletionReport>); 4] = [
        ("tag expiry", report.tags.as_ref().map(|r| &r.deletion)),
        (
            "consumer expiry",
            report.consumers.as_ref().map(|r| &r.deletion),
        ),
        (
            "snapshot expiry",
            report.snapshots.as_ref().map(|r| &r.deletion),
        ),
        (
            "changelog expiry",
            report.changelogs.as_ref().map(|r| &r.deletion),
        ),
    ];
    match &report.partitions {
        Some(p) => println!(
            "partition expiry: {} partitions dropped, {} files marked deleted",
            p.partitions.len(),
            p.files_marked_deleted
        ),
        None => println!("partition expiry: not configured"),
    }
    for (name, d) in steps {
        match d {
            Some(d) => {
                println!(
                    "{name}: {} files, {} bytes",
                    d.total_files(),
                    d.total_bytes()
                );
                print_deletion(d);
            }
            None => println!("{name}: not configured"),
        }
    }
    Ok(())
}

fn run_remove_orphan_files(
    args: &TableArgs,
    older_than: Option<&str>,
    older_than_ms: Option<i64>,
    no_writers_running: bool,
    external_roots_owned: bool,
    dry_run: bool,
) -> Result<()> {
    let older_than_ms = cutoff(older_than, older_than_ms)?;
    let cfg = OrphanConfig {
        older_than_ms,
        dry_run,
        no_writers_running,
        external_roots_owned,
        ..Default::default()
    };
    let opened = open(args)?;
    let report = opened.rt.block_on(async {
        let table = opened.table().await?;
        remove_orphan_files(&table, &cfg, &control(args)?).await
    })?;
    if args.json {
        return print_json(&report);
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    println!(
        "{verb} {} orphan files ({} bytes); {} candidates: {} referenced (any age), {} vetoed, the others older than {} ms",
        report.deletion.total_files(),
        report.deletion.total_bytes(),
        report.candidates,
        report.referenced,
        report.vetoed,
        report.older_than_ms
    );
    print_deletion(&report.deletion);
    for p in &report.kept_name_referenced_elsewhere {
        println!("  kept (its name is referenced at another location): {p}");
    }
    for b in &report.branches_without_schema {
        println!("  branch without schema (its versions still protect files): {b}");
    }
    for s in &report.skipped {
        println!("  not listed: {s}");
    }
    if dry_run {
        for p in &report.deletion.paths {
            println!("  would delete {}", p.path);
        }
    }
    Ok(())
}

fn run_inspect(args: &TableArgs) -> Result<()> {
    let opened = open(args)?;
    let report = opened.rt.block_on(inspect_branch_named(
        opened.storage.clone(),
        &opened.options,
        &opened.branch,
    ))?;
    if args.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| Error::Internal(e.to_string()))?;
        println!("{text}");
    } else {
        println!("table:      {}", report.table);
        println!("branch:     {}", report.branch);
        println!("branches:   {}", report.branches.join(", "));
        match (report.earliest_snapshot_id, report.latest_snapshot_id) {
            (Some(a), Some(b)) => println!("snapshots:  {} ({a}..={b})", report.snapshots.len()),
            _ => println!("snapshots:  none"),
        }
        println!("tags:       {}", report.tags.len());
        println!("consumers:  {}", report.consumers.len());
        println!(
            "live files: {} ({} bytes)",
            report.live_files.len(),
            report.live_file_bytes
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PAIMON_CLEANUP_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Inspect(a) => run_inspect(a),
        Command::RemoveOrphanFiles {
            table,
            older_than,
            older_than_ms,
            no_writers_running,
            external_roots_owned,
            dry_run,
        } => run_remove_orphan_files(
            table,
            older_than.as_deref(),
            *older_than_ms,
            *no_writers_running,
            *external_roots_owned,
            *dry_run,
        ),
        Command::ExpireSnapshots {
            table,
            retention,
            clean_empty_dirs,
            refuse_if_tags_pin,
        } => run_expire_snapshots(table, retention, *clean_empty_dirs, *refuse_if_tags_pin),
        Command::ExpireChangelogs {
            table,
            retention,
            delete_all,
        } => retention.overrides().and_then(|r| {
            let cfg = ChangelogExpireConfig {
                retention: r,
                delete_all: *delete_all,
                dry_run: retention.dry_run,
                ..Default::default()
            };
            run_capability(
                table,
                "expire changelogs",
                |t| async move { expire_changelogs(&t, &cfg, &control(table)?).await },
                |r: &ChangelogExpireReport| &r.deletion,
            )
        }),
        Command::DeleteTag {
            table,
            tag,
            dry_run,
        } => {
            let names = tag_names(tag);
            run_capability(
                table,
                "delete tag",
                |t| async move { delete_tags(&t, &names, *dry_run, &control(table)?).await },
                |r: &TagReport| &r.deletion,
            )
        }
        Command::ExpireTags {
            table,
            older_than,
            older_than_ms,
            dry_run,
        } => cutoff(older_than.as_deref(), *older_than_ms).and_then(|cut| {
            run_capability(
                table,
                "expire tags",
                |t| async move { expire_tags(&t, cut, *dry_run, &control(table)?).await },
                |r: &TagReport| &r.deletion,
            )
        }),
        Command::ExpireConsumers {
            table,
            expiration_time,
            dry_run,
        } => expiration_time
            .as_deref()
            .map(parse_duration)
            .transpose()
            .and_then(|d| {
                run_capability(
                    table,
                    "expire consumers",
                    |t| async move { expire_consumers(&t, d, *dry_run, &control(table)?).await },
                    |r: &ConsumerReport| &r.deletion,
                )
            }),
        Command::DropPartitions {
            table,
            partitions,
            dry_run,
        } => run_drop_partitions(table, partitions, *dry_run),
        Command::ExpirePartitions {
            table,
            expiration_time,
            strategy,
            timestamp_formatter,
            timestamp_pattern,
            max_num,
            batch_size,
            dry_run,
        } => (|| {
            let cfg = PartitionExpireConfig {
                expiration_time: expiration_time.as_deref().map(parse_duration).transpose()?,
                strategy: strategy.as_deref().map(str::parse).transpose()?,
                timestamp_formatter: timestamp_formatter.clone(),
                timestamp_pattern: timestamp_pattern.clone(),
                max_expires: *max_num,
                batch_size: *batch_size,
                dry_run: *dry_run,
                now_millis: None,
            };
            run_partition_op(table, "expire partitions", |t| async move {
                expire_partitions(&t, &cfg, &control(table)?).await
            })
        })(),
        Command::Maintain { table, dry_run } => run_maintain(table, *dry_run),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod max_memory_tests {
    use super::parse_bytes;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse_bytes("1024").unwrap(), 1024);
        assert_eq!(parse_bytes("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_bytes("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("1.5G").unwrap(), 1_500_000_000);
        assert_eq!(parse_bytes(" 800M ").unwrap(), 800_000_000);
        for bad in ["", "0", "-1", "12 parsecs", "GiB", "1e999"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }
}
