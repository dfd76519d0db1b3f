//! A partition drop's commit racing a writer and a snapshot expiry that keeps one snapshot.
//!
//! The commit reads the latest snapshot `N-1`, writes its files and creates `snapshot-N`
//! exclusively. Between the read and the create, a pypaimon writer can publish `N` and `N+1`
//! and an expiry (`--retain-min 1 --retain-max 1`) can delete `N-1` and `N`: an exclusive
//! create then succeeds on an id that had been published and expired, and the drop lands below
//! `EARLIEST`, on metadata and data the expiry deleted, missing from the newer snapshots.
//!
//! The deterministic tests pause the commit with [`RunControl::commit_hook`] at each step and
//! run the writer and the expiry there as real processes; the stress test runs an expiry loop,
//! a drop loop (both the CLI) and a pypaimon writer at the same time for a few seconds. After
//! each: snapshot ids contiguous from `EARLIEST` to `LATEST`, every retained version read by
//! pypaimon, no file a retained version references missing, and the drops present in the
//! latest snapshot.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use paimon_cleanup::clean::{drop_partitions, CommitStep, RunControl};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn partitions_py() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/partitions.py")
}

/// `n` pypaimon batch commits (one row each, partitions `race-<i>`), as a process.
fn pypaimon_commits(table: &Path, n: usize) -> Command {
    let mut c = Command::new(common::python().expect("python"));
    c.arg(partitions_py())
        .args(["race", table.to_str().unwrap(), &n.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn run_ok(mut c: Command, what: &str) {
    let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `paimon-cleanup expire-snapshots` keeping only the latest snapshot.
fn expire_keep_one(table: &Path) -> Command {
    let mut c = Command::new(common::cli_bin());
    c.args(["expire-snapshots", table.to_str().unwrap()])
        .args(["--retain-min", "1", "--retain-max", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn read_hint(table: &Path, hint: &str) -> Option<i64> {
    std::fs::read_to_string(table.join("snapshot").join(hint))
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

fn snapshot_json(table: &Path, id: i64) -> Value {
    let p = table.join(format!("snapshot/snapshot-{id}"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

/// The invariants after any mix of commits and expiries; returns the failures.
fn check_table(table: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let ids = common::snapshot_ids(table);
    let (Some(first), Some(last)) = (ids.first().copied(), ids.last().copied()) else {
        return vec!["no snapshot left".into()];
    };
    if ids != (first..=last).collect::<Vec<_>>() {
        failures.push(format!("snapshot ids not contiguous: {ids:?}"));
    }
    if let Some(e) = read_hint(table, "EARLIEST") {
        if e > first {
            failures.push(format!(
                "snapshots {:?} below EARLIEST {e}",
                ids.iter().filter(|i| **i < e).collect::<Vec<_>>()
            ));
        }
    }
    let versions = common::all_versions(table);
    for (k, v) in &versions {
        if v.get("error").is_some() {
            failures.push(format!("pypaimon cannot read {k}: {}", v["error"]));
        }
    }
    let py = common::python().unwrap();
    let missing: Value = serde_json::from_str(
        &common::run_py(
            &py,
            "random_history.py",
            &["--missing", table.to_str().unwrap()],
        )
        .unwrap_or_else(|e| panic!("random_history.py --missing: {e}")),
    )
    .unwrap();
    let m = &missing[table.to_str().unwrap()];
    if let Some(e) = m["error"].as_str() {
        failures.push(format!("referenced metadata unreadable: {e}"));
    } else if let Some(vs) = m["versions"].as_object() {
        for (k, files) in vs {
            if files.as_array().is_some_and(|a| !a.is_empty()) {
                failures.push(format!("{k} misses files it needs: {files}"));
            }
        }
    }
    failures
}

/// The `dt` values of pypaimon's rows at the latest snapshot.
fn latest_dts(table: &Path) -> Vec<String> {
    let py = common::python().unwrap();
    let ops =
        serde_json::json!([{"op": "rows", "table": table.to_str().unwrap(), "snapshot": null}]);
    let out = common::run_py(&py, "partitions.py", &["run", &ops.to_string()])
        .unwrap_or_else(|e| panic!("partitions.py rows: {e}"));
    let v: Value = serde_json::from_str(&out).unwrap();
    let mut dts: Vec<String> = v[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.get(2).and_then(Value::as_str).map(String::from))
        .collect();
    dts.sort();
    dts.dedup();
    dts
}

fn spec(k: &str, v: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(k.to_string(), v.to_string())])
}

const FAST_RETRIES: &[(&str, &str)] = &[
    ("commit.min-retry-wait", "1 ms"),
    ("commit.max-retry-wait", "50 ms"),
    ("commit.max-retries", "200"),
];

/// Drops partition `dt=<dt>` through the Rust API with a hook that, the first time the commit
/// reaches `at`, commits twice with pypaimon and expires every snapshot but the latest.
fn drop_with_race_at(table: &Path, dt: &str, at: fn(CommitStep) -> bool) -> (i64, i64) {
    let fired = Arc::new(AtomicBool::new(false));
    let seen_target = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let hook_table = table.to_path_buf();
    let (f, t) = (fired.clone(), seen_target.clone());
    let ctl = RunControl {
        commit_hook: Some(Arc::new(move |step: CommitStep| {
            if !at(step) || f.swap(true, Ordering::SeqCst) {
                return;
            }
            if let CommitStep::Prepared { snapshot } | CommitStep::Publishing { snapshot } = step {
                t.store(snapshot, Ordering::SeqCst);
            }
            run_ok(pypaimon_commits(&hook_table, 2), "pypaimon writer");
            run_ok(expire_keep_one(&hook_table), "expire-snapshots");
        })),
        ..RunControl::default()
    };
    let overrides: HashMap<String, String> = FAST_RETRIES
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let report = common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let t = Table::open(storage, &overrides).await.unwrap();
        drop_partitions(&t, &[spec("dt", dt)], None, None, &ctl)
            .await
            .unwrap_or_else(|e| panic!("drop dt={dt}: {e}"))
    });
    assert!(fired.load(Ordering::SeqCst), "the hook never ran");
    let ours = *report.snapshot_ids.last().expect("the drop's snapshot id");
    (seen_target.load(Ordering::SeqCst), ours)
}

/// append_unaware without its consumer (whose progress would keep every snapshot from 3 on).
fn table_without_consumer() -> Option<(tempfile::TempDir, PathBuf)> {
    let (t, table, _) = common::pypaimon_table("append_unaware")?;
    std::fs::remove_dir_all(table.join("consumer")).unwrap();
    Some((t, table))
}

fn race_at(at: fn(CommitStep) -> bool) {
    let Some((_t, table)) = table_without_consumer() else {
        return;
    };
    let before = latest_dts(&table);
    let dt = before
        .iter()
        .find(|d| d.as_str() == "2024-01-01")
        .cloned()
        .unwrap_or_else(|| before[0].clone());
    let (target, ours) = drop_with_race_at(&table, &dt, at);
    // The first attempt aimed at the id the writer then took; the drop landed after both
    // of the writer's commits, on top of the latest snapshot.
    assert!(
        ours > target + 1,
        "drop landed at {ours}, first aimed at {target}"
    );
    let failures = check_table(&table);
    assert!(failures.is_empty(), "{failures:#?}");
    let ids = common::snapshot_ids(&table);
    assert_eq!(ids.last(), Some(&ours), "{ids:?}");
    assert_eq!(snapshot_json(&table, ours)["commitKind"], "OVERWRITE");
    let after = latest_dts(&table);
    assert!(!after.contains(&dt), "dt={dt} still in the latest snapshot");
    assert!(after.iter().any(|d| d == "race-0") && after.iter().any(|d| d == "race-1"));
}

#[test]
fn writer_and_expiry_before_the_next_id_check() {
    race_at(|s| matches!(s, CommitStep::Prepared { .. }));
}

#[test]
fn writer_and_expiry_between_the_next_id_check_and_the_create() {
    race_at(|s| matches!(s, CommitStep::Publishing { .. }));
}

fn spawn_loop(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `make` repeatedly until `stop`, counting the runs that failed (a lost race is a
/// failure a real scheduler retries); a crash (signal, panic status 101) is returned at once.
fn repeat(stop: Instant, mut make: impl FnMut(u32) -> Command) -> Result<(u32, u32), String> {
    let (mut ok, mut failed) = (0, 0);
    let mut i = 0;
    while Instant::now() < stop {
        let mut c = make(i);
        i += 1;
        let child = spawn_loop(&mut c);
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        match out.status.code() {
            Some(0) => ok += 1,
            Some(101) | None => {
                return Err(format!(
                    "crashed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
            Some(_) => failed += 1,
        }
    }
    Ok((ok, failed))
}

#[test]
fn expiry_loop_drop_loop_and_writer_keep_the_table_whole() {
    let Some((_t, table)) = table_without_consumer() else {
        return;
    };
    let secs: u64 = std::env::var("PAIMON_RACE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let stop = Instant::now() + Duration::from_secs(secs);
    let t = table.clone();
    let expiry = std::thread::spawn(move || {
        repeat(stop, |_| {
            let mut c = expire_keep_one(&t);
            for (k, v) in FAST_RETRIES {
                c.args(["-o", &format!("{k}={v}")]);
            }
            c
        })
    });
    let t = table.clone();
    let drops = std::thread::spawn(move || {
        repeat(stop, |i| {
            let mut c = Command::new(common::cli_bin());
            c.args(["drop-partitions", t.to_str().unwrap()])
                .args(["--partition", &format!("dt=race-{}", i % 50)]);
            for (k, v) in FAST_RETRIES {
                c.args(["-o", &format!("{k}={v}")]);
            }
            c
        })
    });
    let t = table.clone();
    let writer = std::thread::spawn(move || repeat(stop, |_| pypaimon_commits(&t, 3)));
    let mut failures = Vec::new();
    for (name, h) in [("expiry", expiry), ("drops", drops), ("writer", writer)] {
        match h.join().unwrap() {
            Ok((ok, failed)) => {
                eprintln!("{name}: {ok} runs succeeded, {failed} failed");
                if ok == 0 {
                    failures.push(format!("{name}: no run succeeded"));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    failures.extend(check_table(&table));
    assert!(failures.is_empty(), "{failures:#?}");
}
