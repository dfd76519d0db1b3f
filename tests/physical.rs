//! The physical side of deletion safety (issue 16, points 3, 4 and 7): symlinks swapped in
//! while a run deletes never redirect a deletion outside the table; a symlinked directory fails
//! the whole plan before the first deletion; only regular files are read (a named pipe where
//! metadata is expected is an error, never a hang); a read stuck in I/O does not hold a
//! cancelled run.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use paimon_cleanup::clean::{
    expire_snapshots, remove_orphan_files, ExpireConfig, OrphanConfig, RetentionOverrides,
    RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;
use paimon_cleanup::Error;

fn expire_cfg() -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn open(table: &Path, storage: Storage) -> paimon_cleanup::Result<Table> {
    let _ = table;
    common::rt().block_on(Table::open(Arc::new(storage), &HashMap::new()))
}

fn expire(table: &Path) -> paimon_cleanup::Result<paimon_cleanup::clean::ExpireReport> {
    common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new())?);
        let t = Table::open(storage, &HashMap::new()).await?;
        expire_snapshots(&t, &expire_cfg(), &RunControl::default()).await
    })
}

/// Every regular file under `dir` (following no symlink) with its content.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            let p = e.path();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() {
                let rel = p.strip_prefix(dir).unwrap().to_str().unwrap().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// `append_unaware` without its consumer (which would hold expiry at snapshot 3): expiring
/// with retain-min 1 deletes the data files the overwrite and the partition drop replaced.
fn unaware_table() -> Option<(tempfile::TempDir, PathBuf)> {
    let (tmp, table, _) = common::pypaimon_table("append_unaware")?;
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    Some((tmp, table))
}

/// Moves `dir` to `outside` and leaves a symlink to it in its place.
fn symlink_away(dir: &Path, outside: &Path) {
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::rename(dir, outside).unwrap();
    std::os::unix::fs::symlink(outside, dir).unwrap();
}

/// Point 4: with `manifest/` a symlink to outside, expiry refuses the whole plan before the
/// first deletion — no data file goes, nothing outside changes.
#[test]
fn symlinked_manifest_dir_refuses_before_any_deletion() {
    let Some((_tmp, table)) = unaware_table() else {
        return;
    };
    // Without the symlink this run deletes data files (so the refusal below is not vacuous).
    let (_tmp2, control) = common::copy_table(&table);
    let r = expire(&control).unwrap();
    assert!(r.deletion.total_files() > 0, "{r:?}");

    let outside = tempfile::tempdir().unwrap();
    symlink_away(&table.join("manifest"), &outside.path().join("manifest"));
    let data_before = common::data_files_on_disk(&table);
    let outside_before = contents(outside.path());
    let tree_before = common::tree(&table);
    let err = expire(&table).expect_err("a symlinked manifest/ must be refused");
    eprintln!("{err}");
    assert!(matches!(err, Error::PathRefused { .. }), "{err}");
    assert!(err.to_string().contains("symlink"), "{err}");
    assert_eq!(common::data_files_on_disk(&table), data_before);
    assert_eq!(common::tree(&table), tree_before);
    assert_eq!(contents(outside.path()), outside_before);
}

/// Point 4, a bucket directory: a partition directory whose files expiry deletes is a symlink
/// to outside; nothing is deleted anywhere.
#[test]
fn symlinked_partition_dir_refuses_before_any_deletion() {
    let Some((_tmp, table)) = unaware_table() else {
        return;
    };
    let (_tmp2, control) = common::copy_table(&table);
    let r = expire(&control).unwrap();
    // The first directory (in path order) holding a deleted data file.
    let victim = r
        .deletion
        .paths
        .iter()
        .find(|p| p.path.contains("bucket-"))
        .map(|p| {
            let parts: Vec<&str> = p.path.split('/').collect();
            parts[..parts.len() - 2].join("/")
        })
        .expect("expiry deletes data files");
    let outside = tempfile::tempdir().unwrap();
    symlink_away(&table.join(&victim), &outside.path().join("p"));
    let tree_before = common::tree(&table);
    let outside_before = contents(outside.path());
    let err = expire(&table).expect_err("a symlinked partition directory must be refused");
    assert!(matches!(err, Error::PathRefused { .. }), "{err}");
    assert_eq!(common::tree(&table), tree_before);
    assert_eq!(contents(outside.path()), outside_before);
}

/// An orphan-removal table: `append_fixed_bucket` plus `n` old orphan files in one bucket
/// directory; returns the table and that directory.
fn orphan_table(n: usize) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let (tmp, table, _) = common::pypaimon_table("append_fixed_bucket")?;
    let bucket = table.join("p=0/bucket-0");
    assert!(bucket.is_dir());
    let old = SystemTime::now() - Duration::from_secs(3 * 24 * 3600);
    for i in 0..n {
        let p = bucket.join(format!("data-orphan-{i:05}.parquet"));
        std::fs::write(&p, b"orphan").unwrap();
        common::set_mtime(&p, old);
    }
    Some((tmp, table, bucket))
}

fn outside_twins(outside: &Path, n: usize) {
    std::fs::create_dir_all(outside).unwrap();
    for i in 0..n {
        std::fs::write(
            outside.join(format!("data-orphan-{i:05}.parquet")),
            b"precious",
        )
        .unwrap();
    }
}

/// Point 3, deterministic: right after the bucket directory's handle is opened for deletes (the
/// moment a path-based unlink used to resolve the path again), the directory is swapped for a
/// symlink to an outside directory holding files of the same names. Every deletion still lands
/// in the table's own (moved) directory; the outside files are all intact.
#[test]
fn directory_swapped_for_a_symlink_mid_run_redirects_nothing() {
    const N: usize = 300;
    let Some((_tmp, table, bucket)) = orphan_table(N) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    outside_twins(outside.path(), N);
    let moved = table.join("p=0/bucket-0.moved");
    let swaps = Arc::new(AtomicUsize::new(0));
    let hook = {
        let (bucket, moved, outside, swaps) = (
            bucket.clone(),
            moved.clone(),
            outside.path().to_path_buf(),
            swaps.clone(),
        );
        Arc::new(move |dir: &Path| {
            if dir == bucket && swaps.fetch_add(1, Ordering::SeqCst) == 0 {
                std::fs::rename(&bucket, &moved).unwrap();
                std::os::unix::fs::symlink(&outside, &bucket).unwrap();
            }
        })
    };
    let storage = Storage::open(table.to_str().unwrap(), &HashMap::new())
        .unwrap()
        .before_unlink_in_dir(hook);
    let t = open(&table, storage).unwrap();
    // One delete group, so one directory handle serves every deletion.
    let cfg = OrphanConfig {
        delete_concurrency: Some(1),
        ..Default::default()
    };
    let report = common::rt()
        .block_on(remove_orphan_files(&t, &cfg, &RunControl::default()))
        .unwrap();
    assert!(swaps.load(Ordering::SeqCst) >= 1, "the hook never ran");
    let outside_now = contents(outside.path());
    assert_eq!(outside_now.len(), N, "files outside the table were deleted");
    assert!(outside_now.values().all(|v| v == b"precious"));
    // The deletions happened in the directory the handle named (now moved aside).
    assert_eq!(report.deletion.total_files() as usize, N, "{report:?}");
    let left: Vec<_> = std::fs::read_dir(&moved)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_str().unwrap().starts_with("data-orphan-"))
        .collect();
    assert!(
        left.is_empty(),
        "{} orphans left in the moved directory",
        left.len()
    );
}

/// Point 3, stress (bounded in time): a thread swaps a bucket directory for a symlink to an
/// outside directory with files of the same names and back, as fast as it can, while orphan
/// removal deletes 3,000 files there. Runs repeat for about 4 seconds; afterwards every outside
/// file is intact. (Path-based check-then-unlink deleted hundreds of them.)
#[test]
fn racing_symlink_swaps_never_reach_outside() {
    const N: usize = 3000;
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut rounds = 0;
    while rounds == 0 || Instant::now() < deadline {
        rounds += 1;
        let Some((_tmp, table, bucket)) = orphan_table(N) else {
            return;
        };
        let outside = tempfile::tempdir().unwrap();
        outside_twins(outside.path(), N);
        let aside = table.join("p=0/bucket-0.aside");
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (bucket, aside, target, stop) = (
                bucket.clone(),
                aside.clone(),
                outside.path().to_path_buf(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if std::fs::rename(&bucket, &aside).is_ok() {
                        let _ = std::os::unix::fs::symlink(&target, &bucket);
                        std::thread::yield_now();
                        let _ = std::fs::remove_file(&bucket);
                        let _ = std::fs::rename(&aside, &bucket);
                    }
                    std::thread::yield_now();
                }
            })
        };
        let storage = Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap();
        let result = open(&table, storage).and_then(|t| {
            common::rt().block_on(remove_orphan_files(
                &t,
                &OrphanConfig::default(),
                &RunControl::default(),
            ))
        });
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        let outside_now = contents(outside.path());
        assert_eq!(
            outside_now.len(),
            N,
            "round {rounds}: {} files outside the table were deleted ({result:?})",
            N - outside_now.len()
        );
        assert!(outside_now.values().all(|v| v == b"precious"));
    }
    eprintln!("{rounds} rounds");
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Runs `f` on a thread and fails the test if it does not return within 30 s (a hang).
fn within_30s<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("{what}: still running after 30 s (blocked on a FIFO?)"))
}

/// Point 7: a named pipe in place of `LATEST`, of the latest snapshot's manifest list, or
/// listed in `snapshot/` is a clear error — never a hang, never skipped.
#[test]
fn named_pipes_where_metadata_is_expected_are_errors_not_hangs() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let latest: i64 = std::fs::read_to_string(table.join("snapshot/LATEST"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let snap: serde_json::Value = serde_json::from_slice(
        &std::fs::read(table.join(format!("snapshot/snapshot-{latest}"))).unwrap(),
    )
    .unwrap();
    let base_list = snap["baseManifestList"].as_str().unwrap().to_string();

    let cases: Vec<(&str, PathBuf)> = vec![
        ("LATEST", table.join("snapshot/LATEST")),
        ("EARLIEST", table.join("snapshot/EARLIEST")),
        ("manifest list", table.join("manifest").join(&base_list)),
        ("listed snapshot", table.join("snapshot/snapshot-999")),
    ];
    for (what, path) in cases {
        let (_t2, copy) = common::copy_table(&table);
        let target = copy.join(path.strip_prefix(&table).unwrap());
        mkfifo(&target);
        let before = common::tree(&copy);
        let err = within_30s(what, move || {
            let r = expire(&copy);
            (r, copy, _t2)
        });
        let (r, copy, _t2) = err;
        let err = r.expect_err(what);
        eprintln!("{what}: {err}");
        assert!(
            err.to_string().contains("not a regular file"),
            "{what}: {err}"
        );
        assert_eq!(common::tree(&copy), before, "{what}: something was deleted");
        std::fs::remove_file(&target).unwrap();
    }
}

/// Point 7: a read stuck in I/O (a server that accepts and never answers) returns `Cancelled`
/// promptly once the storage's stop test says so, without waiting for the request's timeout.
#[test]
fn a_stuck_read_returns_cancelled_promptly() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accept and hold connections, never answering.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let mut opts = common::s3_options(&format!("http://127.0.0.1:{port}"));
    opts.insert("storage.retry.max-retries".into(), "0".into());
    opts.insert("storage.retry.timeout".into(), "120 s".into());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let storage = Storage::open("s3://paimon/stuck/t", &opts)
        .unwrap()
        .stop_reads_when(Arc::new(move || flag.load(Ordering::SeqCst)));
    let loc = storage.root().join("snapshot/LATEST");
    let rt = common::rt();
    let started = Instant::now();
    let r = rt.block_on(async {
        let read = storage.get(&loc);
        let cancel = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            stop.store(true, Ordering::SeqCst);
            std::future::pending::<()>().await;
        };
        tokio::select! {
            r = read => r,
            () = cancel => unreachable!(),
        }
    });
    let took = started.elapsed();
    assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}
