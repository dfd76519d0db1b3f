//! `paimon-cleanup`: a command-line front end over the library's Rust API.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::inspect::inspect;
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
    /// Table root: a path, file://, s3://, gs://, az:// or memory:// URI.
    table: String,
    /// Table option or storage option override, `key=value` (repeatable).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Worker threads of the runtime (default: number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Show branches, snapshots, tags, consumers and the live files of the latest snapshot.
    Inspect(TableArgs),
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
    b.enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start runtime: {e}")))
}

fn run_inspect(args: &TableArgs) -> Result<()> {
    let options = parse_options(&args.options)?;
    let rt = runtime(args.threads)?;
    let storage = Arc::new(Storage::open(&table_uri(&args.table)?, &options)?);
    let report = rt.block_on(inspect(storage, &options))?;
    if args.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| Error::Internal(e.to_string()))?;
        println!("{text}");
    } else {
        println!("table:      {}", report.table);
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
