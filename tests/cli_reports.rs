//! Reports that scale: the text report opens with the totals and lists paths only with
//! `--list` (all) or `--list N` (the first N); `--report FILE` writes the JSON report that
//! `--json` prints; a `--report` file that cannot be created stops the command before it
//! changes anything.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn table() -> Option<(tempfile::TempDir, PathBuf)> {
    let root = common::fixtures_dir()?;
    Some(common::copy_table(&root.join("parquet/pk_09.db/pk_09")))
}

fn cli(t: &Path, extra: &[&str]) -> Output {
    let o = Command::new(common::cli_bin())
        .args(["expire-snapshots", t.to_str().unwrap(), "--retain-min", "1"])
        .args(extra)
        .env_remove("PAIMON_CLEANUP_LOG")
        .output()
        .unwrap();
    o
}

fn ok_stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The paths of a JSON report, in order.
fn json_paths(v: &Value) -> Vec<String> {
    v["deletion"]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_string())
        .collect()
}

fn listed(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("  would delete "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_dry_run_gives_totals_first_and_lists_paths_only_on_request() {
    let Some((_g, t)) = table() else { return };
    let json: Value = serde_json::from_str(&ok_stdout(&cli(&t, &["--dry-run", "--json"]))).unwrap();
    let paths = json_paths(&json);
    assert_eq!(paths.len(), 29, "{json}");

    let text = ok_stdout(&cli(&t, &["--dry-run"]));
    let first = text.lines().next().unwrap();
    assert_eq!(
        first, "would expire 7 snapshots (1..=7): 29 files, 26151 bytes",
        "{text}"
    );
    assert!(
        listed(&text).is_empty(),
        "paths listed without --list: {text}"
    );
    assert!(text.contains("  29 paths not listed (--list"), "{text}");
    // Counts and bytes per kind, as the JSON report has them.
    for (line, kind) in [("  Data ", "data"), ("  SnapshotMeta ", "snapshot_meta")] {
        let l = text.lines().find(|l| l.starts_with(line)).unwrap();
        let c = &json["deletion"]["deleted"][kind];
        assert!(l.contains(&format!(" {} files", c["files"])), "{l} / {c}");
        assert!(l.ends_with(&format!(" {} bytes", c["bytes"])), "{l} / {c}");
    }

    let all = ok_stdout(&cli(&t, &["--dry-run", "--list"]));
    assert_eq!(listed(&all), paths);
    assert!(!all.contains("not listed"), "{all}");

    let some = ok_stdout(&cli(&t, &["--dry-run", "--list", "3"]));
    assert_eq!(listed(&some), paths[..3].to_vec());
    assert!(
        some.contains("  ... 26 more paths (--list prints all)"),
        "{some}"
    );
    assert_eq!(
        common::snapshot_ids(&t).len(),
        8,
        "a dry run changed the table"
    );
}

#[test]
fn report_file_holds_the_json_report() {
    let Some((_g, t)) = table() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dry = dir.path().join("dry.json");
    let json = ok_stdout(&cli(
        &t,
        &["--dry-run", "--json", "--report", dry.to_str().unwrap()],
    ));
    // --json on stdout is unchanged, and the file holds the same document.
    assert_eq!(std::fs::read_to_string(&dry).unwrap(), json);
    let planned: Value = serde_json::from_str(&json).unwrap();

    let real = dir.path().join("real.json");
    let text = ok_stdout(&cli(&t, &["--report", real.to_str().unwrap()]));
    assert!(
        text.starts_with("expired 7 snapshots (1..=7): 29 files, 26151 bytes\n"),
        "{text}"
    );
    assert!(!text.contains(" deleted "), "{text}");
    let done: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(done["deletion"]["dry_run"], false);
    assert_eq!(done["snapshots_expired"], 7);
    let mut a = json_paths(&planned);
    let mut b = json_paths(&done);
    a.sort();
    b.sort();
    assert_eq!(a, b, "the audit file names every deleted path");
    for p in &b {
        assert!(!t.join(p).exists(), "{p} is still there");
    }
    assert_eq!(common::snapshot_ids(&t), vec![8]);
}

#[test]
fn a_report_file_that_cannot_be_written_stops_the_run_before_it_deletes() {
    let Some((_g, t)) = table() else { return };
    let before = common::tree(&t);
    let o = cli(&t, &["--report", "/nonexistent-dir/report.json"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--report /nonexistent-dir/report.json"));
    assert_eq!(common::tree(&t), before, "the table changed");
}
