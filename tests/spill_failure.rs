//! Expiry keeps the records of its candidate files, and orphan removal the keys of its
//! reference names, in a temporary file once they pass ~1 MiB (`clean/shared/spill.rs`, issue
//! 19). When that file cannot be created the run must stop with a clear error before deleting
//! anything; with a working temp dir the same run deletes what it should (and nothing any
//! version references) and leaves nothing behind in the temp dir.
//!
//! The temp dir is redirected with `TMPDIR` for a CLI child process only (never in this test
//! process, whose other threads read the environment).

mod common;

use std::path::Path;
use std::process::{Command, Output};

/// A generated table with ~26k data files removed by compactions: enough candidates to spill.
fn generate(table: &Path) -> serde_json::Value {
    paimon_gen(
        table,
        &[
            "--snapshots",
            "200",
            "--files-per-commit",
            "200",
            "--compact-every",
            "4",
            "--tags",
            "0",
            "--branch",
            "none",
            "--consumers",
            "0",
        ],
    )
}

/// `paimon-gen` on `table` with `args`, its JSON summary.
fn paimon_gen(table: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&common::paimon_gen(table, args))
        .expect("paimon-gen prints a JSON summary")
}

fn now_ms() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string()
}

/// Runs the CLI `command` on `table` with `args`, `TMPDIR` set to `tmpdir`, JSON output.
fn cli(command: &str, table: &Path, args: &[&str], tmpdir: &Path, dry_run: bool) -> Output {
    let mut cmd = Command::new(common::cli_bin());
    cmd.arg(command)
        .arg(table)
        .args(args)
        .args(["--threads", "2", "--json"])
        .env("TMPDIR", tmpdir);
    if dry_run {
        cmd.arg("--dry-run");
    }
    cmd.output().expect("run paimon-cleanup")
}

/// Expire every snapshot but the latest, with `TMPDIR` set to `tmpdir`.
fn expire_all_but_latest(table: &Path, tmpdir: &Path, dry_run: bool) -> Output {
    let now = now_ms();
    let args = ["--retain-min", "1", "--max-deletes", "100000000"];
    let args = [&args[..], &["--older-than-ms", &now]].concat();
    cli("expire-snapshots", table, &args, tmpdir, dry_run)
}

/// Remove orphan files up to now (no writer runs), with `TMPDIR` set to `tmpdir`.
fn remove_orphans(table: &Path, tmpdir: &Path, dry_run: bool) -> Output {
    let now = now_ms();
    let args = ["--older-than-ms", &now, "--no-writers-running"];
    cli("remove-orphan-files", table, &args, tmpdir, dry_run)
}

/// A regular file where the temp dir should be: creating a spill file under it fails.
fn not_a_dir(work: &Path) -> std::path::PathBuf {
    let p = work.join("not-a-dir");
    std::fs::write(&p, b"x").unwrap();
    p
}

/// Runs `run` (dry and real) with `TMPDIR` not a directory: each must fail naming `what` and
/// the temp dir, and leave the table's files exactly as they were.
fn fails_cleanly(table: &Path, work: &Path, what: &str, run: fn(&Path, &Path, bool) -> Output) {
    let before = common::tree(table);
    let bad = not_a_dir(work);
    for dry_run in [true, false] {
        let out = run(table, &bad, dry_run);
        // With --json the error object is on stdout.
        let stderr = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            !out.status.success(),
            "dry_run {dry_run}: the run succeeded without a temp dir: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            stderr.contains(what) && stderr.contains(bad.to_str().unwrap()),
            "dry_run {dry_run}: unclear error: {stderr}"
        );
        assert_eq!(
            common::tree(table),
            before,
            "dry_run {dry_run}: a failed run changed the table"
        );
    }
}

/// Runs `run` (real) with a fresh, working temp dir under `work`: it must succeed and leave
/// the temp dir empty. Returns its JSON report.
fn succeeds_leaving_no_temp_file(
    table: &Path,
    work: &Path,
    run: fn(&Path, &Path, bool) -> Output,
) -> serde_json::Value {
    let tmp = work.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = run(table, &tmp, false);
    assert!(
        out.status.success(),
        "the run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the spill file outlived the run"
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn expiry_whose_candidates_cannot_spill_fails_cleanly_and_deletes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let table = work.path().join("t");
    let summary = generate(&table);
    fails_cleanly(
        &table,
        work.path(),
        "temporary file of the candidate files",
        expire_all_but_latest,
    );

    // The same run with a working temp dir spills, deletes, and leaves the temp dir empty.
    let report = succeeds_leaving_no_temp_file(&table, work.path(), expire_all_but_latest);
    let deleted_data = report["deletion"]["deleted"]["data"]["files"]
        .as_u64()
        .unwrap();
    assert!(
        deleted_data > 25_000,
        "too few candidates to have spilled: {report}"
    );
    // Only the latest snapshot remains, with no tag, branch or consumer: exactly the data files
    // the generator says it reads are left.
    assert_eq!(common::snapshot_ids(&table), vec![200]);
    assert_eq!(
        common::data_files_on_disk(&table).len() as u64,
        summary["live_files_latest"].as_u64().unwrap(),
        "data files left differ from the latest snapshot's live files"
    );
}

#[test]
fn orphan_removal_whose_reference_names_cannot_spill_fails_cleanly_and_deletes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let table = work.path().join("t");
    // The medium preset (~103k data files, tags, a branch, consumers): its reference names
    // pass the in-memory part of the name log. 50 planted orphan data files.
    paimon_gen(&table, &["--size", "medium", "--orphans", "50"]);
    fails_cleanly(
        &table,
        work.path(),
        "temporary file of the reference names",
        remove_orphans,
    );

    // With a working temp dir: the orphans go, nothing any version references does, and the
    // temp dir is left empty.
    let Some(_) = common::python() else {
        common::skip(
            "no pypaimon environment for the reference oracle",
            "set PAIMON_PYTHON",
        );
        return;
    };
    let referenced = &common::referenced_files(&[&table])[&table];
    let referenced: std::collections::BTreeSet<String> =
        ["manifest_dir", "index", "statistics", "data"]
            .iter()
            .flat_map(|k| referenced[*k].as_array().unwrap().iter())
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
    let before = common::tree(&table);
    let report = succeeds_leaving_no_temp_file(&table, work.path(), remove_orphans);
    assert!(
        report["deletion"]["deleted"]["data"]["files"].as_u64() >= Some(50),
        "the planted orphans were not deleted: {}",
        report["deletion"]["deleted"]
    );
    let after = common::tree(&table);
    let gone: Vec<&String> = before.keys().filter(|p| !after.contains_key(*p)).collect();
    assert!(gone.len() >= 50, "only {} files deleted", gone.len());
    for p in gone {
        let name = p.rsplit('/').next().unwrap();
        assert!(
            !referenced.contains(name),
            "{p} is referenced by a version and was deleted"
        );
    }
}
