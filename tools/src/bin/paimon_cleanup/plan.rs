//! Plan, review, apply: `--plan-out FILE` writes a dry run's exact plan, `apply FILE` deletes
//! what it lists once the library re-checked it (`paimon_cleanup::clean::apply`).

use std::path::{Path, PathBuf};

use clap::Args;

use paimon_cleanup::clean::apply::{apply_plan, make_plan, ApplyConfig, ApplyReport, Plan};
use paimon_cleanup::clean::{DeletionReport, RunControl};
use paimon_cleanup::storage::config::is_secret_key;
use paimon_cleanup::storage::Storage;
use paimon_cleanup::{Error, Result};

use crate::{progress, report, values};

/// The arguments of `apply`.
#[derive(Args, Clone)]
pub struct ApplyArgs {
    /// The plan, as `--plan-out FILE` wrote it.
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    /// Refuse a plan older than this (Paimon duration, 1 ms to 30 d; default 24 h).
    #[arg(long, value_name = "DURATION", value_parser = values::plan_age, default_value = "24 h")]
    pub max_plan_age: i64,
    /// Check everything and report what would be deleted; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Storage option, `key=value` (repeatable; `key=@FILE` reads the value from FILE): the
    /// credentials of the table's store. Table options come from the plan's table.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Options file: `key=value` lines (`-` reads standard input).
    #[arg(long = "options-file", value_name = "FILE")]
    pub options_files: Vec<String>,
    /// Worker threads of the runtime, 1 to 1024 (default: number of cores).
    #[arg(long, value_name = "N", value_parser = values::threads)]
    pub threads: Option<usize>,
    /// Print the result as one JSON object (an error as {"error":{...}}).
    #[arg(long)]
    pub json: bool,
    /// Progress on standard error (as for the other commands).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub progress: progress::Choice,
    /// No progress display.
    #[arg(short = 'q', long, conflicts_with = "progress")]
    pub quiet: bool,
    /// List the paths deleted (`--list` every one, `--list N` the first N).
    #[arg(long, value_name = "N", num_args = 0..=1, value_parser = values::count_usize)]
    pub list: Option<Option<usize>>,
    /// Also write the full JSON report to FILE.
    #[arg(long = "report", value_name = "FILE")]
    pub report_file: Option<PathBuf>,
}

/// The command's arguments as recorded in a plan: secret option values redacted.
pub fn recorded_arguments() -> Vec<String> {
    let mut out = Vec::new();
    let mut after_option = false;
    for a in std::env::args().skip(1) {
        let (prefix, pair) = if after_option {
            ("", a.as_str())
        } else if let Some(p) = a.strip_prefix("--option=") {
            ("--option=", p)
        } else if let Some(p) = a.strip_prefix("-o").filter(|p| !p.is_empty()) {
            ("-o", p)
        } else {
            ("", "")
        };
        after_option = a == "-o" || a == "--option";
        match pair.split_once('=') {
            Some((k, _)) if is_secret_key(k.trim()) => out.push(format!("{prefix}{k}=<redacted>")),
            _ => out.push(a),
        }
    }
    out
}

/// Creates (or truncates) the plan file before the run: a file that cannot be written stops
/// the command before it reads anything.
pub fn prepare(file: &Path) -> Result<()> {
    std::fs::File::create(file).map(drop).map_err(|e| {
        Error::InvalidArgument(format!(
            "--plan-out {}: cannot create the file: {e}",
            file.display()
        ))
    })
}

/// Makes the plan of the dry-run reports `deletions` of `command` on `storage`'s table
/// (branch `branch`) and writes it to `file`; prints one line saying so unless `json`.
#[allow(clippy::too_many_arguments)]
pub fn write(
    rt: &tokio::runtime::Runtime,
    storage: std::sync::Arc<Storage>,
    options: &std::collections::HashMap<String, String>,
    branch: &str,
    file: &Path,
    command: &str,
    deletions: &[&DeletionReport],
    json: bool,
) -> Result<()> {
    let plan = rt.block_on(async {
        let table = paimon_cleanup::table::Table::open_branch(storage, options, branch).await?;
        make_plan(
            &table,
            command,
            recorded_arguments(),
            deletions,
            &RunControl::default(),
        )
        .await
    })?;
    let mut text =
        serde_json::to_string_pretty(&plan).map_err(|e| Error::Internal(e.to_string()))?;
    text.push('\n');
    std::fs::write(file, text).map_err(|e| Error::Storage {
        path: file.display().to_string(),
        message: format!("the plan could not be written: {e}"),
    })?;
    if !json {
        let bytes: u64 = plan.files.iter().filter_map(|f| f.bytes).sum();
        outln!(
            "plan written to {}: {} files, {bytes} bytes; review it, then run: paimon-cleanup \
             apply {}",
            file.display(),
            plan.files.len(),
            file.display()
        );
    }
    Ok(())
}

/// Reads a plan file.
fn read(file: &Path) -> Result<Plan> {
    let text = std::fs::read(file).map_err(|e| {
        Error::InvalidArgument(format!("cannot read the plan {}: {e}", file.display()))
    })?;
    serde_json::from_slice(&text)
        .map_err(|e| Error::InvalidArgument(format!("{} is not a plan: {e}", file.display())))
}

/// `paimon-cleanup apply PLAN`.
pub fn run_apply(args: &ApplyArgs) -> Result<()> {
    if let Some(file) = &args.report_file {
        report::prepare(file)?;
    }
    let plan = read(&args.plan)?;
    let collected =
        crate::options::collect(&args.options_files, &args.options, &mut std::io::stdin())?;
    let options: std::collections::HashMap<String, String> =
        collected.into_iter().map(|(k, (v, _))| (k, v)).collect();
    let rt = crate::runtime(args.threads)?;
    let storage = std::sync::Arc::new(Storage::open(&plan.table, &options)?);
    let cfg = ApplyConfig {
        max_plan_age_ms: args.max_plan_age,
        dry_run: args.dry_run,
    };
    let ctl = RunControl {
        progress: progress::callback(),
        ..RunControl::default()
    };
    let report = rt.block_on(apply_plan(storage, &options, &plan, &cfg, &ctl))?;
    if let Some(file) = &args.report_file {
        report::write(file, &report)?;
    }
    if args.json {
        return crate::print_json(&report);
    }
    print_text(&report, report::Listing::of(args.list));
    Ok(())
}

/// The text report of an apply.
fn print_text(r: &ApplyReport, listing: report::Listing) {
    let d = &r.deletion;
    outln!(
        "apply ({} plan of {}, {} s old): {} {} files, {} bytes; {} kept, {} already gone, {} \
         planned; {} versions read",
        r.command,
        r.table,
        r.plan_age_ms / 1000,
        if d.dry_run { "would delete" } else { "deleted" },
        d.total_files(),
        d.total_bytes(),
        r.skipped.len(),
        r.already_gone,
        r.planned,
        r.versions_read
    );
    crate::print_deletion(d);
    for s in &r.skipped {
        outln!("  kept {} ({}): {}", s.path, s.kind, s.reason);
    }
    report::print_paths(d, listing);
}
