//! `paimon-cleanup`: a command-line front end over the library's Rust API.

/// Prints one line on standard output; a closed pipe ends the program quietly (see `out`).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out::line(&format!($($arg)*))
    };
}

#[path = "paimon_cleanup/exit.rs"]
mod exit;
#[path = "paimon_cleanup/options.rs"]
mod options;
#[path = "paimon_cleanup/out.rs"]
mod out;
#[path = "paimon_cleanup/plan.rs"]
mod plan;
#[path = "paimon_cleanup/progress.rs"]
mod progress;
#[path = "paimon_cleanup/report.rs"]
mod report;
#[path = "paimon_cleanup/sweep.rs"]
mod sweep;
#[path = "paimon_cleanup/values.rs"]
mod values;

use std::collections::HashMap;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use paimon_cleanup::clean::orphans::MIN_WINDOW_WITH_WRITERS_MS;
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
    expire_snapshots, DeletionReport, ExpireConfig, ExpiryBound, RetentionOverrides, RunControl,
};
use paimon_cleanup::clean::{remove_orphan_files, OrphanConfig};
use paimon_cleanup::spec::time_text::parse_older_than;
use paimon_cleanup::storage::config::is_secret_key;
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::inspect::inspect_branch_named;
use paimon_cleanup::table::{resolve_table_ref, Table, BRANCH_OPTION};
use paimon_cleanup::{Error, Result};

/// The end of `--help`: exit codes, logging, credentials.
const AFTER_HELP: &str = "\
Exit codes: 0 done; 1 failed (storage, not found, cancelled, memory limit, internal error);
  2 usage (a bad argument, option or option value); 3 refused for safety (malformed metadata,
  a path outside the table, an unsupported feature, an invariant that does not hold: nothing
  was deleted); 4 partially done (a sweep in which some tables failed). With --json an error is printed on
  stdout as {\"error\":{\"code\":\"<kind>\",\"exit_code\":N,\"message\":\"...\"}}.

Logging: PAIMON_CLEANUP_LOG sets what is logged on stderr, as a tracing filter (default
  `warn`; e.g. `info`, `debug`, `paimon_cleanup=trace`). Colours only when stderr is a
  terminal (and NO_COLOR is unset).

Credentials: do not type secrets as `-o s3.secret-key=...`: every user of the machine can read
  the command line (ps, /proc). Use the store's environment variables (AWS_ACCESS_KEY_ID,
  AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; GOOGLE_SERVICE_ACCOUNT_PATH,
  GOOGLE_APPLICATION_CREDENTIALS; AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY, ...),
  an options file (`--options-file FILE`, key=value lines, `-` for stdin) or a value read from
  a file (`-o s3.secret-key=@FILE`, `@-` for stdin). No log, error or report prints a secret.";

#[derive(Parser)]
#[command(
    name = "paimon-cleanup",
    version,
    about = "Apache Paimon table maintenance",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct TableArgs {
    /// Table root: a path, file://, s3://, gs://, az:// or memory:// URI. A last segment
    /// `<table>$branch_<name>` names a branch, as Paimon Java's `t$branch_<name>` does.
    /// Not with --warehouse.
    #[arg(required_unless_present = "warehouse", conflicts_with = "warehouse")]
    table: Option<String>,
    /// Sweep: run the command on every table of this local filesystem-catalog warehouse
    /// (`ROOT/<db>.db/<table>/` with a `schema/` directory) that --table names, each table in a
    /// process of its own, one table's failure reported and the others run; a summary table
    /// closes the run. Exit 0 when every table succeeded, 4 when some failed, 1 when all did.
    #[arg(long, value_name = "ROOT", requires = "pattern")]
    warehouse: Option<String>,
    /// The tables of the sweep: `DB.TABLE`, where either part may be or hold `*` (`db.*`,
    /// `'*.*'`, `db.t`).
    #[arg(long = "table", value_name = "DB.TABLE", requires = "warehouse")]
    pattern: Option<String>,
    /// Tables run at once in a sweep, 1 to 1024 (default 1).
    #[arg(long, value_name = "N", value_parser = values::threads, default_value = "1", requires = "warehouse")]
    parallel_tables: usize,
    /// Branch to work on (default `main`; also `-o branch=NAME` or a `$branch_NAME` suffix of
    /// the table). Expiry, tags, consumers and partitions change only this branch's
    /// snapshots, changelogs, tags and consumers, and keep every file any version of any
    /// branch reads. Orphan removal is table-wide whatever the branch (its references are
    /// every branch, as Java's `remove_orphan_files`).
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// Table option or storage option override, `key=value` (repeatable; wins over
    /// --options-file). `key=@FILE` reads the value from FILE (one trailing newline removed),
    /// `key=@-` from standard input, `key=@@text` is the value `@text`. Give secrets that way,
    /// in an options file or in the environment, never as plain `-o` values (a warning says so):
    /// the command line is visible to every user in `ps`.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Options file: `key=value` lines (`#` comments, blank lines skipped, key and value
    /// trimmed), repeatable; `-` reads standard input. The place for credentials.
    #[arg(long = "options-file", value_name = "FILE")]
    options_files: Vec<String>,
    /// Worker threads of the runtime, 1 to 1024 (default: number of cores).
    #[arg(long, value_name = "N", value_parser = values::threads)]
    threads: Option<usize>,
    /// Print the result as one JSON object (an error as {"error":{...}}).
    #[arg(long)]
    json: bool,
    /// Bound on the memory the run's large structures may hold (candidate files, protection,
    /// the deletion plan, the report), e.g. `512MiB`, `1GiB`, `800M` or plain bytes; 1 byte to
    /// 2^64-1. Past it the run stops with an error while planning, before deleting anything.
    #[arg(long, value_name = "SIZE", value_parser = values::memory_size)]
    max_memory: Option<u64>,
    /// Progress on standard error: `auto` draws a live display per phase (count, bytes, rate,
    /// ETA) when standard error is a terminal and nothing otherwise; `json` writes one JSON
    /// line per phase per second (`{"progress":{"phase","done","total","bytes","rate",
    /// "elapsed_ms"}}`), terminal or not, for schedulers; `none` shows nothing.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    progress: progress::Choice,
    /// No progress display (the report is printed as usual).
    #[arg(short = 'q', long, conflicts_with = "progress")]
    quiet: bool,
    /// List the paths deleted (or, in a dry run, that would be deleted) after the totals:
    /// `--list` every one, `--list N` the first N (1 to 2147483647). Without it the text report
    /// gives the totals per kind and per step only.
    #[arg(long, value_name = "N", num_args = 0..=1, value_parser = values::count_usize)]
    list: Option<Option<usize>>,
    /// Also write the full JSON report (the document --json prints, every path included) to
    /// FILE, for audits. The file is created before the run: one that cannot be written stops
    /// the command before it changes anything.
    #[arg(long = "report", value_name = "FILE")]
    report_file: Option<std::path::PathBuf>,
    /// Write the exact plan to FILE instead of deleting (implies --dry-run): every path with
    /// its kind and size, the table's identity, each branch's latest snapshot and the versions
    /// read, the command and its options (secrets redacted), the creation time. Review it,
    /// then `paimon-cleanup apply FILE` deletes exactly those files after checking them again.
    /// For the commands that delete files; not in a sweep.
    #[arg(long = "plan-out", value_name = "FILE", conflicts_with = "warehouse")]
    plan_out: Option<std::path::PathBuf>,
}

impl TableArgs {
    /// A dry run when asked for, or when the command writes a plan.
    fn dry(&self, dry_run: bool) -> bool {
        dry_run || self.plan_out.is_some()
    }

    /// Writes the plan of `deletions` when `--plan-out` asks for it.
    fn write_plan(
        &self,
        opened: &Opened,
        command: &str,
        deletions: &[&DeletionReport],
    ) -> Result<()> {
        let Some(file) = &self.plan_out else {
            return Ok(());
        };
        plan::write(
            &opened.rt,
            opened.storage.clone(),
            &opened.options,
            &opened.branch,
            file,
            command,
            deletions,
            self.json,
        )
    }

    /// The paths the text report lists.
    fn listing(&self) -> report::Listing {
        report::Listing::of(self.list)
    }

    /// Writes the `--report` file, then prints the JSON report when `--json` asks for it;
    /// true when the report was printed as JSON (the text report is then not printed).
    fn emit<T: serde::Serialize>(&self, value: &T) -> Result<bool> {
        if let Some(file) = &self.report_file {
            report::write(file, value)?;
        }
        if self.json {
            print_json(value)?;
        }
        Ok(self.json)
    }
}

/// The run control of one command: `--max-memory`, the progress display, defaults otherwise.
fn control(args: &TableArgs) -> RunControl {
    RunControl {
        max_memory: args.max_memory,
        progress: progress::callback(),
        ..RunControl::default()
    }
}

#[derive(Args, Clone)]
struct RetentionArgs {
    /// Minimum number of snapshots kept, 1 to 2147483647 (default: table option, then 10).
    #[arg(long, value_name = "N", value_parser = values::count)]
    retain_min: Option<i64>,
    /// Maximum number of snapshots kept, 1 to 2147483647.
    #[arg(long, value_name = "N", value_parser = values::count)]
    retain_max: Option<i64>,
    /// Keep versions younger than this (Paimon duration: `0s`, `30 min`, `1 h`, `7d`; at most
    /// 2^63-1 ms).
    #[arg(long, value_name = "DURATION", value_parser = values::duration, conflicts_with_all = ["older_than_ms", "older_than"])]
    time_retained: Option<Duration>,
    /// Cut-off as Java's `older_than`: versions older than this may expire. A timestamp
    /// (`'2024-01-01 12:00:00'`, `2024-01-01T12:00`, `2024-01-01`; local time zone unless it ends
    /// with one: `Z`, `+08:00`) or a duration back from now (`1 d`). Not in the future.
    #[arg(
        long,
        conflicts_with = "older_than_ms",
        value_name = "TIMESTAMP|DURATION"
    )]
    older_than: Option<String>,
    /// Absolute cut-off instead of --time-retained (epoch milliseconds, 0 or more; not in the
    /// future).
    #[arg(long, value_name = "MS", value_parser = values::epoch_ms)]
    older_than_ms: Option<i64>,
    /// Maximum snapshots expired in this run (`snapshot.expire.limit`), 1 to 2147483647.
    #[arg(long, value_name = "N", value_parser = values::count)]
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
        /// Absolute cut-off instead of --older-than (epoch milliseconds, 0 or more, not in the
        /// future).
        #[arg(long, value_name = "MS", value_parser = values::epoch_ms)]
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
        /// trimmed. Tags that do not exist are reported, not an error. In a sweep (no table
        /// argument) give them with --tag.
        #[arg(value_name = "TAG[,TAG...]", required_unless_present = "tag_option")]
        tag: Option<String>,
        /// The tags as an option instead of the second argument (needed with --warehouse).
        #[arg(long = "tag", value_name = "TAG[,TAG...]", conflicts_with = "tag")]
        tag_option: Option<String>,
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
        /// Also delete tags created before this epoch-ms time (0 or more, not in the future).
        #[arg(long, value_name = "MS", value_parser = values::epoch_ms)]
        older_than_ms: Option<i64>,
        /// Compute and report, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete consumers that have not advanced for longer than the expiration time.
    ExpireConsumers {
        #[command(flatten)]
        table: TableArgs,
        /// Paimon duration, 1 ms to 2^63-1 ms (default: the table's consumer.expiration-time).
        #[arg(long, value_name = "DURATION", value_parser = values::positive_duration)]
        expiration_time: Option<Duration>,
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
        /// Paimon duration, 1 ms to 2^63-1 ms (default: the table's partition.expiration-time).
        #[arg(long, value_name = "DURATION", value_parser = values::positive_duration)]
        expiration_time: Option<Duration>,
        /// `values-time` or `update-time` (default: partition.expiration-strategy).
        #[arg(long)]
        strategy: Option<String>,
        /// Java DateTimeFormatter pattern of the partition time, e.g. `yyyyMMdd`.
        #[arg(long)]
        timestamp_formatter: Option<String>,
        /// How to build the time string from the keys, e.g. `$dt $hr:00:00`.
        #[arg(long)]
        timestamp_pattern: Option<String>,
        /// At most this many partitions, 1 to 2147483647 (default:
        /// partition.expiration-max-num, then 100).
        #[arg(long, value_name = "N", value_parser = values::count_usize)]
        max_num: Option<usize>,
        /// Partitions per commit, 1 to 2147483647 (default: partition.expiration-batch-size,
        /// else all in one).
        #[arg(long, value_name = "N", value_parser = values::count_usize)]
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
    /// Apply a reviewed plan (`--plan-out FILE` of a deleting command): delete exactly the
    /// files it lists, after checking each again. Refused whole (exit 3, nothing deleted) when
    /// the plan is older than --max-plan-age, the table was replaced, a version file it deletes
    /// changed, the branch was rolled back, or a consumer now reads a planned snapshot; a path
    /// outside the table or where no file of its kind lives refuses it too. A planned file
    /// that a version present now references (a commit, tag or branch made since) is kept and
    /// reported. Deletes in the crash-safe order: tag and consumer files, data, manifests,
    /// lists, snapshot and changelog files, then the EARLIEST hint.
    Apply(plan::ApplyArgs),
}

impl RetentionArgs {
    fn overrides(&self) -> Result<RetentionOverrides> {
        Ok(RetentionOverrides {
            retain_min: self.retain_min,
            retain_max: self.retain_max,
            time_retained: self.time_retained,
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
            "--older-than-ms {ms} ({}) is in the future (now is {})",
            readable_ms(ms),
            readable_ms(now)
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

/// The options of one command from every source (see `options`); warns when a secret was
/// typed on the command line.
fn parse_options(args: &TableArgs) -> Result<HashMap<String, String>> {
    let collected = options::collect(&args.options_files, &args.options, &mut std::io::stdin())?;
    for key in options::secrets_on_command_line(&collected) {
        tracing::warn!(
            "option {key} holds a secret and was typed on the command line, where every user of \
             the machine can read it (ps, /proc): pass it in the environment, in \
             --options-file FILE or as -o {key}=@FILE instead"
        );
    }
    Ok(collected.into_iter().map(|(k, (v, _))| (k, v)).collect())
}

/// True when `arg` is a URI rather than a local path.
fn is_uri(arg: &str) -> bool {
    arg.contains("://") || arg.to_ascii_lowercase().starts_with("file:")
}

/// A local path is made absolute and canonical once here (relative to the current directory,
/// `.`, `..` and symlinks resolved), so that `../wh/db.db/t` works; the library then keeps
/// every path it touches beneath that root. URIs are passed as they are.
fn table_uri(arg: &str) -> Result<String> {
    if is_uri(arg) {
        return Ok(arg.to_string());
    }
    let abs = std::fs::canonicalize(arg).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound {
                path: arg.to_string(),
            }
        } else {
            Error::InvalidArgument(format!("cannot resolve table path '{arg}': {e}"))
        }
    })?;
    abs.to_str().map(str::to_string).ok_or_else(|| {
        Error::InvalidArgument(format!("table path '{}' is not UTF-8", abs.display()))
    })
}

fn runtime(threads: Option<usize>) -> Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        b.worker_threads(n);
    }
    // No more blocking threads than blocking sections in flight: tokio would otherwise start a
    // thread for nearly every hand-over between sections (each with a stack, an arena, a zstd
    // context).
    b.max_blocking_threads(paimon_cleanup::storage::max_blocking_sections())
        .enable_all();
    // Tokio panics when the system refuses a worker thread (a thread or memory limit): that is
    // an error here, not a crash. The panic message is kept off stderr while it is caught.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.build()));
    std::panic::set_hook(hook);
    let workers = threads.map_or_else(|| "the".to_string(), |n| n.to_string());
    match built {
        Ok(Ok(rt)) => Ok(rt),
        Ok(Err(e)) => Err(Error::Internal(format!(
            "cannot start {workers} worker threads: {e}"
        ))),
        Err(_) => Err(Error::Internal(format!(
            "cannot start {workers} worker threads: the system refused a thread (lower --threads)"
        ))),
    }
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
    let options = parse_options(args)?;
    let explicit = match (args.branch.as_deref(), options.get(BRANCH_OPTION)) {
        (Some(a), Some(b)) if a != b => {
            return Err(Error::InvalidArgument(format!(
                "--branch {a} and -o {BRANCH_OPTION}={b} disagree"
            )))
        }
        (Some(a), _) => Some(a),
        (None, b) => b.map(String::as_str),
    };
    let table_ref = resolve_table_ref(args.table.as_deref().unwrap_or_default(), explicit)?;
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
    outln!("{text}");
    Ok(())
}

fn print_deletion(d: &DeletionReport) {
    for (class, c) in &d.deleted {
        outln!(
            "  {:<16} {:>8} files {:>14} bytes",
            format!("{class:?}"),
            c.files,
            c.bytes
        );
    }
    if d.dirs_removed > 0 {
        outln!("  directories removed: {}", d.dirs_removed);
    }
    for f in &d.failed {
        outln!("  FAILED {}: {}", f.path, f.error);
    }
}

fn run_expire_snapshots(
    args: &TableArgs,
    retention: &RetentionArgs,
    clean_empty_dirs: bool,
    refuse_if_tags_pin: bool,
) -> Result<()> {
    let opened = open(args)?;
    let ctl = control(args);
    let cfg = ExpireConfig {
        retention: retention.overrides()?,
        clean_empty_dirs: clean_empty_dirs.then_some(true),
        dry_run: args.dry(retention.dry_run),
        refuse_if_tags_pin_expired: refuse_if_tags_pin,
        ..Default::default()
    };
    let report = opened.rt.block_on(async {
        let table = opened.table().await?;
        if args.plan_out.is_some() {
            refuse_decoupled_plan(&table, &cfg.retention)?;
        }
        expire_snapshots(&table, &cfg, &ctl).await
    })?;
    args.write_plan(&opened, "expire-snapshots", &[&report.deletion])?;
    if args.emit(&report)? {
        return Ok(());
    }
    let verb = if cfg.dry_run {
        "would expire"
    } else {
        "expired"
    };
    match (report.first_expired, report.last_expired) {
        (Some(a), Some(b)) => outln!(
            "{verb} {} snapshots ({a}..={b}): {} files, {} bytes",
            report.snapshots_expired,
            report.deletion.total_files(),
            report.deletion.total_bytes()
        ),
        _ => match &report.kept_by {
            Some(bound) => outln!("nothing to expire: {}", bound_text(bound)),
            None => outln!("nothing to expire"),
        },
    }
    if report.snapshots_expired > 0 {
        if let Some(bound) = &report.kept_by {
            outln!(
                "  kept from snapshot {} on: {}",
                report.earliest_after.unwrap_or_default(),
                bound_text(bound)
            );
        }
    }
    print_deletion(&report.deletion);
    report::print_paths(&report.deletion, args.listing());
    Ok(())
}

/// Which bound kept the snapshots, for a person (times readable, in the local zone).
fn bound_text(bound: &ExpiryBound) -> String {
    match bound {
        ExpiryBound::Time {
            snapshot,
            time_millis,
            older_than_ms,
        } => format!(
            "time: snapshot {snapshot} was committed at {}, not before the cut-off {} \
             (a snapshot expires once the next one is older than the cut-off: --time-retained, \
             --older-than, snapshot.time-retained)",
            readable_ms(*time_millis),
            readable_ms(*older_than_ms)
        ),
        ExpiryBound::RetainMin { retain_min, latest } => format!(
            "retain-min: the latest {retain_min} snapshots are kept, up to snapshot {latest} \
             (--retain-min, snapshot.num-retained.min)"
        ),
        ExpiryBound::Limit { limit } => format!(
            "the limit: at most {limit} snapshots expire per run (--max-deletes, \
             snapshot.expire.limit)"
        ),
        other => other.describe(),
    }
}

/// Open the table and run one capability, printing its report as JSON or a short summary.
fn run_capability<R, F, Fut>(
    args: &TableArgs,
    command: &str,
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
    args.write_plan(&opened, command, &[deletion(&report)])?;
    if args.emit(&report)? {
        return Ok(());
    }
    let d = deletion(&report);
    outln!(
        "{what}: {} {} files, {} bytes",
        if d.dry_run { "would delete" } else { "deleted" },
        d.total_files(),
        d.total_bytes()
    );
    print_deletion(d);
    report::print_paths(d, args.listing());
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
        outln!(
            "  tags not found (nothing deleted for them): {}",
            names.join(", ")
        );
    }
}

fn print_partition_report(what: &str, r: &PartitionReport) {
    let verb = if r.dry_run { "would drop" } else { "dropped" };
    outln!(
        "{what}: {verb} {} partitions: {} files, {} rows, {} bytes marked deleted",
        r.partitions.len(),
        r.files_marked_deleted,
        r.rows_marked_deleted,
        r.bytes_marked_deleted
    );
    for name in &r.names {
        outln!("  {name}");
    }
    if !r.snapshot_ids.is_empty() {
        outln!(
            "  snapshots: {:?} ({} retries, {} index entries removed)",
            r.snapshot_ids,
            r.retries,
            r.index_entries_removed
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
    if args.emit(&report)? {
        return Ok(());
    }
    print_partition_report(what, &report);
    Ok(())
}

fn run_drop_partitions(args: &TableArgs, partitions: &[String], dry_run: bool) -> Result<()> {
    let specs = partitions
        .iter()
        .map(|p| parse_partition_spec(p))
        .collect::<Result<Vec<_>>>()?;
    let ctl = control(args);
    run_partition_op(args, "drop partitions", |t| async move {
        if dry_run {
            preview_drop_partitions(&t, &specs, &ctl).await
        } else {
            drop_partitions(&t, &specs, None, None, &ctl).await
        }
    })
}

fn run_maintain(args: &TableArgs, dry_run: bool) -> Result<()> {
    let dry_run = args.dry(dry_run);
    let opened = open(args)?;
    let report = opened.rt.block_on(async {
        let table = opened.table().await?;
        if args.plan_out.is_some() {
            refuse_decoupled_plan(&table, &RetentionOverrides::default())?;
        }
        maintain(&table, &MaintainConfig { dry_run }, &control(args)).await
    })?;
    if args.plan_out.is_some() {
        if report
            .partitions
            .as_ref()
            .is_some_and(|p| !p.partitions.is_empty())
        {
            return Err(Error::Unsupported(
                "maintain would also expire partitions, a commit a plan cannot carry: run \
                 expire-partitions first, then plan maintain"
                    .into(),
            ));
        }
        let deletions: Vec<&DeletionReport> = [
            report.tags.as_ref().map(|r| &r.deletion),
            report.consumers.as_ref().map(|r| &r.deletion),
            report.snapshots.as_ref().map(|r| &r.deletion),
            report.changelogs.as_ref().map(|r| &r.deletion),
        ]
        .into_iter()
        .flatten()
        .collect();
        args.write_plan(&opened, "maintain", &deletions)?;
    }
    if args.emit(&report)? {
        return Ok(());
    }
    let deletions = [
        report.tags.as_ref().map(|r| &r.deletion),
        report.consumers.as_ref().map(|r| &r.deletion),
        report.snapshots.as_ref().map(|r| &r.deletion),
        report.changelogs.as_ref().map(|r| &r.deletion),
    ];
    let (files, bytes) = deletions.iter().flatten().fold((0u64, 0u64), |(f, b), d| {
        (f + d.total_files(), b + d.total_bytes())
    });
    outln!(
        "maintain: {} {files} files, {bytes} bytes",
        if dry_run { "would delete" } else { "deleted" }
    );
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
        Some(p) => outln!(
            "partition expiry: {} partitions dropped, {} files marked deleted",
            p.partitions.len(),
            p.files_marked_deleted
        ),
        None => outln!("partition expiry: not configured"),
    }
    for (name, d) in steps {
        match d {
            Some(d) => {
                outln!(
                    "{name}: {} files, {} bytes",
                    d.total_files(),
                    d.total_bytes()
                );
                print_deletion(d);
                report::print_paths(d, args.listing());
            }
            None => outln!("{name}: not configured"),
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
    if let Some(cut) = older_than_ms {
        let now = now_millis();
        if !no_writers_running && cut > now.saturating_sub(MIN_WINDOW_WITH_WRITERS_MS) {
            return Err(Error::InvalidArgument(format!(
                "the cut-off {} is within the last hour (now is {}): files of writes not yet \
                 committed would be deleted; use an older cut-off, or --no-writers-running when \
                 every writer is stopped",
                readable_ms(cut),
                readable_ms(now)
            )));
        }
    }
    let dry_run = args.dry(dry_run);
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
        remove_orphan_files(&table, &cfg, &control(args)).await
    })?;
    args.write_plan(&opened, "remove-orphan-files", &[&report.deletion])?;
    if args.emit(&report)? {
        return Ok(());
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    outln!(
        "{verb} {} orphan files ({} bytes); {} candidates: {} referenced (any age), {} vetoed, the others older than {} ({} ms)",
        report.deletion.total_files(),
        report.deletion.total_bytes(),
        report.candidates,
        report.referenced,
        report.vetoed,
        readable_ms(report.older_than_ms),
        report.older_than_ms
    );
    print_deletion(&report.deletion);
    for p in &report.kept_name_referenced_elsewhere {
        outln!("  kept (its name is referenced at another location): {p}");
    }
    for b in &report.branches_without_schema {
        outln!("  branch without schema (its versions still protect files): {b}");
    }
    for s in &report.skipped {
        outln!("  not listed: {s}");
    }
    report::print_paths(&report.deletion, args.listing());
    Ok(())
}

fn run_inspect(args: &TableArgs) -> Result<()> {
    let opened = open(args)?;
    let report = opened.rt.block_on(inspect_branch_named(
        opened.storage.clone(),
        &opened.options,
        &opened.branch,
    ))?;
    if !args.emit(&report)? {
        outln!("table:      {}", report.table);
        outln!("branch:     {}", report.branch);
        outln!("branches:   {}", report.branches.join(", "));
        match (report.earliest_snapshot_id, report.latest_snapshot_id) {
            (Some(a), Some(b)) => outln!("snapshots:  {} ({a}..={b})", report.snapshots.len()),
            _ => outln!("snapshots:  none"),
        }
        outln!("tags:       {}", report.tags.len());
        outln!("consumers:  {}", report.consumers.len());
        outln!(
            "live files: {} ({} bytes)",
            report.live_files.len(),
            report.live_file_bytes
        );
    }
    Ok(())
}

impl Command {
    /// The table arguments of every command but `apply`.
    fn table_args(&self) -> Option<&TableArgs> {
        Some(match self {
            Command::Inspect(table)
            | Command::RemoveOrphanFiles { table, .. }
            | Command::ExpireSnapshots { table, .. }
            | Command::ExpireChangelogs { table, .. }
            | Command::DeleteTag { table, .. }
            | Command::ExpireTags { table, .. }
            | Command::ExpireConsumers { table, .. }
            | Command::DropPartitions { table, .. }
            | Command::ExpirePartitions { table, .. }
            | Command::Maintain { table, .. } => table,
            Command::Apply(_) => return None,
        })
    }
}

/// An epoch-ms time as local date, time and zone (`2024-01-01 12:00:00.000 +02:00`).
fn readable_ms(ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(t) => t
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M:%S%.3f %:z")
            .to_string(),
        None => format!("{ms} ms since the epoch"),
    }
}

/// What to add to a failed command's error for a person to act on, if anything: a storage
/// failure on an object store that was given no credentials (neither in the options nor in the
/// store's environment variables) names where credentials go.
fn hint(args: &TableArgs, e: &Error) -> Option<String> {
    let table = args.table.as_deref()?;
    if !matches!(e, Error::Storage { .. }) || !is_uri(table) {
        return None;
    }
    let scheme = table.split("://").next()?.to_ascii_lowercase();
    let credentials_given = |options: &HashMap<String, String>| {
        options
            .keys()
            .any(|k| is_secret_key(k) || k.to_ascii_lowercase().contains("access"))
    };
    let options = options::collect(&args.options_files, &args.options, &mut std::io::empty())
        .map(|o| o.into_iter().map(|(k, (v, _))| (k, v)).collect())
        .unwrap_or_default();
    if credentials_given(&options) {
        return None;
    }
    let set = |vars: &[&str]| vars.iter().any(|v| std::env::var_os(v).is_some());
    let env_credentials = match scheme.as_str() {
        "s3" | "s3a" | "s3n" | "oss" => set(&[
            "AWS_ACCESS_KEY_ID",
            "AWS_PROFILE",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        ]),
        "gs" | "gcs" => set(&[
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GOOGLE_SERVICE_ACCOUNT",
            "GOOGLE_SERVICE_ACCOUNT_PATH",
            "GOOGLE_SERVICE_ACCOUNT_KEY",
        ]),
        _ => set(&[
            "AZURE_STORAGE_ACCOUNT_KEY",
            "AZURE_STORAGE_SAS_KEY",
            "AZURE_CLIENT_SECRET",
            "AZURE_FEDERATED_TOKEN_FILE",
        ]),
    };
    if env_credentials {
        return None;
    }
    let (keys, env) = match scheme.as_str() {
        "s3" | "s3a" | "s3n" | "oss" => (
            "-o s3.access-key=... -o s3.secret-key=@FILE (and s3.endpoint, s3.region)",
            "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), AWS_PROFILE",
        ),
        "gs" | "gcs" => (
            "-o fs.gs.auth.service.account.json.keyfile=FILE",
            "GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_SERVICE_ACCOUNT_PATH",
        ),
        "az" | "azure" | "adl" | "abfs" | "abfss" | "wasb" | "wasbs" => (
            "-o azure_storage_account_name=... -o azure_storage_account_key=@FILE",
            "AZURE_STORAGE_ACCOUNT_NAME / AZURE_STORAGE_ACCOUNT_KEY",
        ),
        _ => return None,
    };
    Some(format!(
        "no credentials were given for {scheme}:// (the store then asks the environment and the \
         instance metadata endpoint): pass them as {keys}, in an options file (--options-file \
         FILE), or in the environment ({env})"
    ))
}

fn run(command: &Command) -> Result<()> {
    match command {
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
                dry_run: table.dry(retention.dry_run),
                ..Default::default()
            };
            run_capability(
                table,
                "expire-changelogs",
                "expire changelogs",
                |t| async move { expire_changelogs(&t, &cfg, &control(table)).await },
                |r: &ChangelogExpireReport| &r.deletion,
            )
        }),
        Command::DeleteTag {
            table,
            tag,
            tag_option,
            dry_run,
        } => {
            let Some(tag) = tag.as_ref().or(tag_option.as_ref()) else {
                return Err(Error::InvalidArgument(
                    "delete-tag needs the tag names (TAG[,TAG...] or --tag)".into(),
                ));
            };
            let names = tag_names(tag);
            let dry_run = table.dry(*dry_run);
            run_capability(
                table,
                "delete-tag",
                "delete tag",
                |t| async move { delete_tags(&t, &names, dry_run, &control(table)).await },
                |r: &TagReport| &r.deletion,
            )
        }
        Command::ExpireTags {
            table,
            older_than,
            older_than_ms,
            dry_run,
        } => cutoff(older_than.as_deref(), *older_than_ms).and_then(|cut| {
            let dry_run = table.dry(*dry_run);
            run_capability(
                table,
                "expire-tags",
                "expire tags",
                |t| async move { expire_tags(&t, cut, dry_run, &control(table)).await },
                |r: &TagReport| &r.deletion,
            )
        }),
        Command::ExpireConsumers {
            table,
            expiration_time,
            dry_run,
        } => {
            let d = *expiration_time;
            let dry_run = table.dry(*dry_run);
            run_capability(
                table,
                "expire-consumers",
                "expire consumers",
                |t| async move { expire_consumers(&t, d, dry_run, &control(table)).await },
                |r: &ConsumerReport| &r.deletion,
            )
        }
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
        } => {
            let cfg = PartitionExpireConfig {
                expiration_time: *expiration_time,
                strategy: strategy.as_deref().map(str::parse).transpose()?,
                timestamp_formatter: timestamp_formatter.clone(),
                timestamp_pattern: timestamp_pattern.clone(),
                max_expires: *max_num,
                batch_size: *batch_size,
                dry_run: *dry_run,
                now_millis: None,
            };
            run_partition_op(table, "expire partitions", |t| async move {
                expire_partitions(&t, &cfg, &control(table)).await
            })
        }
        Command::Maintain { table, dry_run } => run_maintain(table, *dry_run),
        Command::Apply(a) => plan::run_apply(a),
    }
}

/// Runs `apply` (which has no table arguments: the plan names the table).
fn run_apply_command(command: &Command) -> ExitCode {
    let Command::Apply(a) = command else {
        return ExitCode::from(exit::FAILED);
    };
    progress::start(progress::mode(
        a.progress,
        a.quiet,
        std::io::stderr().is_terminal(),
    ));
    let result = run(command);
    progress::finish();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => exit::report(exit::name_of(&e), exit::code_of(&e), &e.to_string(), a.json),
    }
}

/// `--plan-out` of snapshot expiry (or `maintain`) with a decoupled changelog lifecycle is
/// refused: that expiry writes long-lived changelogs, which a plan of deletions cannot carry.
fn refuse_decoupled_plan(table: &Table, overrides: &RetentionOverrides) -> Result<()> {
    let r = paimon_cleanup::clean::expiry::retention::Retention::resolve_snapshot(
        table.options(),
        overrides,
        now_millis(),
    )?;
    if r.changelog_decoupled {
        return Err(Error::Unsupported(
            "the table's changelog lifecycle is decoupled: snapshot expiry writes long-lived \
             changelogs, which a plan of deletions cannot carry (run it without --plan-out)"
                .into(),
        ));
    }
    Ok(())
}

/// The log filter from `PAIMON_CLEANUP_LOG` (`level` or `target=level,...`, as tracing's
/// `Targets` reads it); `warn` when unset, and `warn` with a note on stderr when unreadable.
fn log_filter() -> tracing_subscriber::filter::Targets {
    let default = || tracing_subscriber::filter::Targets::new().with_default(tracing::Level::WARN);
    match std::env::var("PAIMON_CLEANUP_LOG") {
        Ok(spec) => spec.parse().unwrap_or_else(|e| {
            eprintln!("PAIMON_CLEANUP_LOG={spec:?} is not a log filter ({e}): using warn");
            default()
        }),
        Err(_) => default(),
    }
}

fn main() -> ExitCode {
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        // Every level reaches the filter below, which alone decides.
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(colour)
        .with_writer(progress::log_writer)
        .finish()
        .with(log_filter())
        .init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let json = std::env::args_os().any(|a| a == "--json");
            let quiet = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
            if json && !quiet {
                let text = e.render().to_string();
                let message = text
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ");
                return exit::report("invalid_argument", exit::USAGE, message, true);
            }
            // Help, version and usage errors as clap prints them (exit 0, 0 and 2).
            let _ = e.print();
            return ExitCode::from(if quiet { exit::DONE } else { exit::USAGE });
        }
    };
    let Some(args) = cli.command.table_args() else {
        return run_apply_command(&cli.command);
    };
    if args.plan_out.is_some()
        && matches!(
            cli.command,
            Command::Inspect(_) | Command::DropPartitions { .. } | Command::ExpirePartitions { .. }
        )
    {
        return exit::report(
            "invalid_argument",
            exit::USAGE,
            "--plan-out is for the commands that delete files (drop and expire partitions \
             commit, they delete nothing)",
            args.json,
        );
    }
    progress::start(progress::mode(
        args.progress,
        args.quiet,
        std::io::stderr().is_terminal(),
    ));
    if let (Some(root), Some(pattern)) = (&args.warehouse, &args.pattern) {
        let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        let swept = match &args.report_file {
            Some(file) => report::prepare(file),
            None => Ok(()),
        }
        .and_then(|()| {
            // Each table runs in a process of its own, whose standard input is closed.
            if args.options_files.iter().any(|f| f == "-")
                || args.options.iter().any(|o| o.ends_with("=@-"))
            {
                return Err(Error::InvalidArgument(
                    "a sweep cannot read options from standard input: use --options-file FILE \
                     or -o KEY=@FILE"
                        .into(),
                ));
            }
            sweep::find_tables(root, pattern)
        })
        .and_then(|tables| {
            sweep::run(
                &argv,
                &tables,
                args.parallel_tables,
                args.json,
                args.report_file.as_deref(),
            )
        });
        return match swept {
            Ok(code) => ExitCode::from(code),
            Err(e) => exit::report(
                exit::name_of(&e),
                exit::code_of(&e),
                &e.to_string(),
                args.json,
            ),
        };
    }
    let result = match &args.report_file {
        Some(file) => report::prepare(file),
        None => Ok(()),
    }
    .and_then(|()| match &args.plan_out {
        Some(file) => plan::prepare(file),
        None => Ok(()),
    })
    .and_then(|()| run(&cli.command));
    progress::finish();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut message = e.to_string();
            if let Some(h) = hint(args, &e) {
                message = format!("{message}\nhint: {h}");
            }
            exit::report(exit::name_of(&e), exit::code_of(&e), &message, args.json)
        }
    }
}
