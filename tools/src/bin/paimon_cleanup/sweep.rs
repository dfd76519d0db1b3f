//! Sweeps: one command over the tables of a filesystem-catalog warehouse
//! (`--warehouse ROOT --table 'db.*'`, `'*.*'`, `db.t`).
//!
//! The tables are the directories `ROOT/<db>.db/<table>/` holding a `schema/` directory whose
//! database and table names match the pattern (`*` matches any run of characters). Each table
//! runs as a child process of this program (the same command on that one table, without
//! progress display), up to `--parallel-tables` at once, so that one table's failure, however
//! it ends, cannot stop or disturb the others. Each table's report is printed whole as it ends;
//! a summary table (table, outcome, files and bytes deleted, time) closes the run. Exit: 0 when
//! every table succeeded, 1 when every table failed, 4 when some failed.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use paimon_cleanup::{Error, Result};

/// A table of the warehouse: `db.table` and its directory.
pub use paimon_cleanup::table::warehouse::WarehouseTable as Found;

/// The tables of the local warehouse `root` that `pattern` (`db.table`, each part may hold `*`)
/// names, sorted by name (the library's `table::warehouse::find_tables`).
pub fn find_tables(root: &str, pattern: &str) -> Result<Vec<Found>> {
    paimon_cleanup::table::warehouse::find_tables(root, pattern)
}

/// The outcome of one table.
#[derive(Debug, serde::Serialize)]
pub struct Outcome {
    /// `db.table`.
    pub table: String,
    /// The table's directory.
    pub path: String,
    /// The child's exit code (0 done, 1 failed, 2 usage, 3 refused).
    pub exit_code: i32,
    /// Files deleted (or, in a dry run, deletable).
    pub files: u64,
    /// Bytes deleted (or deletable).
    pub bytes: u64,
    /// Wall time in milliseconds.
    pub millis: u128,
    /// The table's JSON report, when it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<serde_json::Value>,
    /// The error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Flags of the sweep itself, removed from the arguments handed to each table's run.
const SWEEP_FLAGS: [&str; 5] = [
    "--warehouse",
    "--table",
    "--parallel-tables",
    "--report",
    "--progress",
];

/// The arguments of one table's run: the sweep's, without its own flags (and `--json`, `--quiet`,
/// whose output the sweep decides), with the table after the subcommand.
fn child_args(args: &[OsString], table: &Path, report: &Path) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if SWEEP_FLAGS.contains(&a.as_ref()) {
            i += 2;
            continue;
        }
        let with_value = SWEEP_FLAGS.iter().any(|f| a.starts_with(&format!("{f}=")));
        if !with_value && a != "--json" && a != "--quiet" && a != "-q" {
            out.push(args[i].clone());
        }
        if out.len() == 1 && i == 0 {
            // The subcommand comes first; the table follows it.
            out.push(table.as_os_str().to_owned());
        }
        i += 1;
    }
    out.extend(["--quiet".into(), "--json".into(), "--report".into()]);
    out.push(report.as_os_str().to_owned());
    out
}

/// Files and bytes of every `deletion` of a report (maintain's steps each have one).
fn deleted(v: &serde_json::Value) -> (u64, u64) {
    let mut files = 0;
    let mut bytes = 0;
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::Object(kinds)) =
                m.get("deleted").filter(|_| m.contains_key("dry_run"))
            {
                for c in kinds.values() {
                    files += c["files"].as_u64().unwrap_or(0);
                    bytes += c["bytes"].as_u64().unwrap_or(0);
                }
            }
            for (k, x) in m {
                if k != "deleted" {
                    let (f, b) = deleted(x);
                    files += f;
                    bytes += b;
                }
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                let (f, b) = deleted(x);
                files += f;
                bytes += b;
            }
        }
        _ => {}
    }
    (files, bytes)
}

/// Runs the command of `args` (this program's arguments after its name) on each table, up to
/// `parallel` at once. `json`: print the per-table reports and the summary as one JSON document.
pub fn run(
    args: &[OsString],
    tables: &[Found],
    parallel: usize,
    json: bool,
    report_file: Option<&Path>,
) -> Result<u8> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Internal(format!("cannot find this program to run a table: {e}")))?;
    let scratch = tempfile::tempdir()
        .map_err(|e| Error::Internal(format!("cannot create a temporary directory: {e}")))?;
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<Outcome>>> =
        Mutex::new((0..tables.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..parallel.clamp(1, tables.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(t) = tables.get(i) else { break };
                let report = scratch.path().join(format!("{i}.json"));
                let started = Instant::now();
                let out = Command::new(&exe)
                    .args(child_args(args, &t.path, &report))
                    .stdin(Stdio::null())
                    .output();
                let millis = started.elapsed().as_millis();
                let outcome = match out {
                    Ok(o) => {
                        let code = o.status.code().unwrap_or(1);
                        let value: Option<serde_json::Value> = (code == 0)
                            .then(|| std::fs::read(&report).ok())
                            .flatten()
                            .and_then(|b| serde_json::from_slice(&b).ok());
                        let (files, bytes) = value.as_ref().map(deleted).unwrap_or((0, 0));
                        let error = (code != 0).then(|| error_of(&o.stdout, &o.stderr));
                        Outcome {
                            table: t.name.clone(),
                            path: t.path.display().to_string(),
                            exit_code: if code == 0 && value.is_none() {
                                1
                            } else {
                                code
                            },
                            files,
                            bytes,
                            millis,
                            error: if code == 0 && value.is_none() {
                                Some("the table's run left no report".into())
                            } else {
                                error
                            },
                            report: value,
                        }
                    }
                    Err(e) => Outcome {
                        table: t.name.clone(),
                        path: t.path.display().to_string(),
                        exit_code: 1,
                        files: 0,
                        bytes: 0,
                        millis,
                        report: None,
                        error: Some(format!("cannot start the table's run: {e}")),
                    },
                };
                if !json {
                    print_table(&outcome);
                }
                if let Ok(mut all) = outcomes.lock() {
                    if let Some(slot) = all.get_mut(i) {
                        *slot = Some(outcome);
                    }
                }
            });
        }
    });
    let outcomes: Vec<Outcome> = outcomes
        .into_inner()
        .map_err(|_| Error::Internal("a sweep worker panicked".into()))?
        .into_iter()
        .flatten()
        .collect();
    let failed = outcomes.iter().filter(|o| o.exit_code != 0).count();
    let code = match failed {
        0 => crate::exit::DONE,
        n if n == outcomes.len() => crate::exit::FAILED,
        _ => crate::exit::PARTIAL,
    };
    let doc = serde_json::json!({
        "tables": outcomes,
        "succeeded": outcomes.len() - failed,
        "failed": failed,
    });
    if let Some(file) = report_file {
        crate::report::write(file, &doc)?;
    }
    if json {
        crate::print_json(&doc)?;
    } else {
        print_summary(&outcomes);
    }
    Ok(code)
}

/// The error a failed table's run printed (its JSON error's message, else its stderr).
fn error_of(stdout: &[u8], stderr: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(stdout)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(stderr).trim().to_string())
}

/// One table's text report, printed whole as the table ends.
fn print_table(o: &Outcome) {
    let mut text = format!("== {} ({})\n", o.table, o.path);
    match (&o.report, &o.error) {
        (_, Some(e)) => text.push_str(&format!("  FAILED (exit {}): {e}\n", o.exit_code)),
        (Some(_), None) => text.push_str(&format!(
            "  done: {} files, {} bytes in {}\n",
            o.files,
            o.bytes,
            duration(o.millis)
        )),
        (None, None) => {}
    }
    outln!("{}", text.trim_end());
}

fn duration(millis: u128) -> String {
    format!("{:.1}s", Duration::from_millis(millis as u64).as_secs_f64())
}

/// The closing summary: one row per table.
fn print_summary(outcomes: &[Outcome]) {
    let width = outcomes
        .iter()
        .map(|o| o.table.len())
        .max()
        .unwrap_or(5)
        .max(5);
    outln!(
        "{:<width$}  {:<12}  {:>10}  {:>14}  {:>8}",
        "table",
        "outcome",
        "files",
        "bytes",
        "time"
    );
    for o in outcomes {
        let outcome = match o.exit_code {
            0 => "done".to_string(),
            3 => "refused (3)".to_string(),
            2 => "usage (2)".to_string(),
            n => format!("failed ({n})"),
        };
        outln!(
            "{:<width$}  {:<12}  {:>10}  {:>14}  {:>8}",
            o.table,
            outcome,
            o.files,
            o.bytes,
            duration(o.millis)
        );
    }
    let failed = outcomes.iter().filter(|o| o.exit_code != 0).count();
    outln!(
        "{} tables: {} done, {failed} failed",
        outcomes.len(),
        outcomes.len() - failed
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_args_drop_the_sweep_flags_and_name_the_table() {
        let args: Vec<OsString> = [
            "maintain",
            "--warehouse",
            "/wh",
            "--table=db.*",
            "--parallel-tables",
            "3",
            "--dry-run",
            "--json",
            "--report",
            "/r.json",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let got = child_args(&args, Path::new("/wh/db.db/t"), Path::new("/tmp/0.json"));
        let want: Vec<OsString> = [
            "maintain",
            "/wh/db.db/t",
            "--dry-run",
            "--quiet",
            "--json",
            "--report",
            "/tmp/0.json",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        assert_eq!(got, want);
    }
}
