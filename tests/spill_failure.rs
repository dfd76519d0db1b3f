//! Expiry keeps the records of its candidate files in a temporary file once they pass ~1 MiB
//! (`clean/shared/spill.rs`, issue 19). When that file cannot be created the run must stop
//! with a clear error before deleting anything; with a working temp dir the same run deletes
//! what it should and leaves nothing behind in the temp dir.
//!
//! The temp dir is redirected with `TMPDIR` for a CLI child process only (never in this test
//! process, whose other threads read the environment).

mod common;

use std::path::Path;
use std::process::{Command, Output};

/// A generated table with ~26k data files removed by compactions: enough candidates to spill.
fn generate(table: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_paimon-gen"))
        .arg(table)
        .args([
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
        ])
        .output()
        .expect("run paimon-gen");
    assert!(
        out.status.success(),
        "paimon-gen failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("paimon-gen prints a JSON summary")
}

/// Expire every snapshot but the latest, with `TMPDIR` set to `tmpdir`.
fn expire_all_but_latest(table: &Path, tmpdir: &Path, dry_run: bool) -> Output {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_paimon-cleanup"));
    cmd.arg("expire-snapshots")
        .arg(table)
        .args(["--retain-min", "1", "--max-deletes", "100000000"])
        .args(["--older-than-ms", &now_ms, "--threads", "2", "--json"])
        .env("TMPDIR", tmpdir);
    if dry_run {
        cmd.arg("--dry-run");
    }
    cmd.output().expect("run paimon-cleanup")
}

#[test]
fn expiry_whose_candidates_cannot_spill_fails_cleanly_and_deletes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let table = work.path().join("t");
    let summary = generate(&table);
    let before = common::tree(&table);

    // A regular file where the temp dir should be: creating the spill file fails.
    let not_a_dir = work.path().join("not-a-dir");
    std::fs::write(&not_a_dir, b"x").unwrap();
    for dry_run in [true, false] {
        let out = expire_all_but_latest(&table, &not_a_dir, dry_run);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "dry_run {dry_run}: expiry succeeded without a temp dir: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            stderr.contains("temporary file of the candidate files")
                && stderr.contains(not_a_dir.to_str().unwrap()),
            "dry_run {dry_run}: unclear error: {stderr}"
        );
        assert_eq!(
            common::tree(&table),
            before,
            "dry_run {dry_run}: a failed run changed the table"
        );
    }

    // The same run with a working temp dir spills, deletes, and leaves the temp dir empty.
    let tmp = work.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = expire_all_but_latest(&table, &tmp, false);
    assert!(
        out.status.success(),
        "expiry failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let deleted_data = report["deletion"]["deleted"]["data"]["files"]
        .as_u64()
        .unwrap();
    assert!(
        deleted_data > 25_000,
        "too few candidates to have spilled: {report}"
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the spill file outlived the run"
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
