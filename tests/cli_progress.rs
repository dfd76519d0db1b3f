//! The CLI's progress display: live bars per phase on a terminal (run under a pseudo-terminal
//! with util-linux `script`), nothing on a non-terminal stderr or with `--quiet`, and one JSON
//! line per phase per second with `--progress json`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A copy of a Java-written table with 8 snapshots (expiring down to 1 touches data files,
/// manifests, manifest lists, index files and snapshot files).
fn table() -> Option<(tempfile::TempDir, PathBuf)> {
    let root = common::fixtures_dir()?;
    Some(common::copy_table(&root.join("parquet/pk_09.db/pk_09")))
}

fn has_script() -> bool {
    let found = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        common::skip("util-linux `script` not found", "install util-linux");
    }
    found
}

/// Runs the CLI with `args` under a pseudo-terminal (stdout and stderr both on it) and returns
/// what the terminal received.
fn under_pty(args: &[&str]) -> String {
    let mut line = common::cli_bin().to_string();
    for a in args {
        line.push_str(&format!(" '{a}'"));
    }
    let o = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .env_remove("PAIMON_CLEANUP_LOG")
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}");
    text
}

fn piped(args: &[&str]) -> Output {
    let o = Command::new(common::cli_bin())
        .args(args)
        .env_remove("PAIMON_CLEANUP_LOG")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn expire_args(t: &Path) -> Vec<String> {
    ["expire-snapshots", t.to_str().unwrap(), "--retain-min", "1"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn a_terminal_shows_each_phase_live_and_its_final_state() {
    let Some((_g, t)) = table() else { return };
    if !has_script() {
        return;
    }
    let args = expire_args(&t);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let shown = under_pty(&args);
    for phase in ["data files", "manifest lists", "snapshot files"] {
        assert!(
            shown.contains(&format!("{phase} [")),
            "no live bar for {phase}: {shown}"
        );
        assert!(
            shown.contains(&format!("{phase} done: ")),
            "no final state for {phase}: {shown}"
        );
    }
    assert!(shown.contains("/s, ETA "), "no rate and ETA: {shown}");
    assert!(shown.contains("snapshot files done: 7/7"), "{shown}");
    // The display ends before the report, which follows it unchanged.
    let report = shown.find("expired 7 snapshots").expect("the report");
    assert!(shown.rfind(" done: ").unwrap() < report, "{shown}");
    assert_eq!(common::snapshot_ids(&t), vec![8]);
}

#[test]
fn quiet_and_a_pipe_show_no_progress() {
    let Some((_g, t)) = table() else { return };
    let mut args = expire_args(&t);
    args.push("--dry-run".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = piped(&args);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("would expire 7 snapshots"));
    if !has_script() {
        return;
    }
    let quiet: Vec<&str> = args.iter().copied().chain(["--quiet"]).collect();
    let shown = under_pty(&quiet);
    assert!(shown.contains("would expire 7 snapshots"), "{shown}");
    assert!(
        !shown.contains("data files") && !shown.contains("ETA"),
        "{shown}"
    );
    // `--quiet` and `--progress` contradict each other: a usage error.
    let both: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--quiet", "--progress", "json"])
        .collect();
    let o = Command::new(common::cli_bin())
        .args(&both)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn progress_json_writes_parseable_lines_without_a_terminal() {
    let Some((_g, t)) = table() else { return };
    let mut args = expire_args(&t);
    args.extend(["--progress".into(), "json".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = piped(&args);
    let text = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!lines.is_empty(), "no progress lines");
    let mut last = std::collections::BTreeMap::new();
    for v in &lines {
        let p = &v["progress"];
        for key in ["done", "total", "bytes", "elapsed_ms"] {
            assert!(p[key].is_u64(), "{key}: {v}");
        }
        assert!(p["rate"].is_number(), "{v}");
        last.insert(p["phase"].as_str().unwrap().to_string(), p.clone());
    }
    let snapshots = &last["snapshot files"];
    assert_eq!(snapshots["done"], 7, "{snapshots}");
    assert_eq!(snapshots["total"], 7, "{snapshots}");
    assert!(last["data files"]["bytes"].as_u64().unwrap() > 0);
    // The bytes of every phase add up to the report's bytes per kind.
    let sum: u64 = last.values().map(|p| p["bytes"].as_u64().unwrap()).sum();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let reported: u64 = stdout
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains(" files "))
        .filter_map(|l| l.trim().strip_suffix(" bytes"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(sum, reported, "{stdout}");
    assert_eq!(common::snapshot_ids(&t), vec![8]);
}

/// `text` without its ANSI escape sequences (colours, cursor moves, line clears).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in '@'..='~'.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}

/// Log records written while bars are drawn come out on lines of their own: the bars are
/// cleared before each record and drawn again after it, so no stretch of the terminal's
/// output between two line starts holds both a bar and a log record.
#[test]
fn log_lines_never_mix_with_the_bars() {
    let Some((_g, t)) = table() else { return };
    if !has_script() {
        return;
    }
    let mut line = format!(
        "PAIMON_CLEANUP_LOG=paimon_cleanup=debug {}",
        common::cli_bin()
    );
    for a in expire_args(&t) {
        line.push_str(&format!(" '{a}'"));
    }
    line.push_str(" --progress bar");
    let o = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{shown}");
    let is_bar = |s: &str| s.contains("ETA ") || s.contains(" done: ");
    let is_log = |s: &str| s.contains("DEBUG ") || s.contains(" WARN ") || s.contains(" INFO ");
    // What starts at column 0 of the terminal: split at every line feed and carriage return.
    let pieces: Vec<String> = shown
        .split(['\n', '\r'])
        .map(strip_ansi)
        .filter(|p| !p.trim().is_empty())
        .collect();
    let first_bar = pieces.iter().position(|p| is_bar(p)).expect("bars drawn");
    let last_bar = pieces.iter().rposition(|p| is_bar(p)).expect("bars drawn");
    let logged_while_drawn = pieces[first_bar..last_bar]
        .iter()
        .filter(|p| is_log(p))
        .count();
    assert!(
        logged_while_drawn > 0,
        "no log record while the bars were drawn: {shown}"
    );
    for p in &pieces {
        assert!(
            !(is_bar(p) && is_log(p)),
            "a bar and a log record on one line: {p:?}"
        );
    }
    assert!(shown.contains("expired 7 snapshots"), "{shown}");
    assert_eq!(common::snapshot_ids(&t), vec![8]);
}
