//! Snapshot expiry as sharded units with the freed paths handed to the tasks
//! (`units::Paths::ToTasks`): the shard reports and delete-unit results the driver receives
//! carry counts per class, every failure and a sample, and the paths go to the task that freed
//! them. On generated tables, in dry runs and real runs, for several shard counts: the union of
//! the tasks' path lists is exactly the single-process run's data-stage set, the final report
//! has the single-process counts, failures and metadata paths, and the same files are left;
//! the driver's bytes do not grow with the files freed; a failed deletion arrives in full; a
//! missing or doubled result fails with nothing deleted.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::expiry_units as units;
use paimon_cleanup::clean::{
    expire_snapshots, ExpireConfig, ExpireReport, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;
use paimon_cleanup::Error;

type Opts = HashMap<String, String>;

async fn open(table: &Path) -> paimon_cleanup::Result<Table> {
    let opts = Opts::new();
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &opts)?);
    Table::open_branch(storage, &opts, "main").await
}

/// Expire everything that may go but the latest `keep` snapshots.
fn cfg(keep: i64, dry_run: bool) -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(keep),
            time_retained: Some(Duration::ZERO),
            limit: Some(100_000),
            ..Default::default()
        },
        clean_empty_dirs: Some(true),
        dry_run,
        ..Default::default()
    }
}

fn single(table: &Path, cfg: &ExpireConfig) -> paimon_cleanup::Result<ExpireReport> {
    common::rt().block_on(async {
        let t = open(table).await?;
        expire_snapshots(&t, cfg, &RunControl::default()).await
    })
}

/// What a counts-only sharded run gave: the final report, the paths the tasks kept (shard
/// tasks in a dry run, delete-unit tasks in a real run), and the bytes that reached the
/// driver: each shard report and each delete unit's result.
#[derive(Debug)]
struct Run {
    report: ExpireReport,
    task_paths: Vec<String>,
    to_driver: Vec<usize>,
}

/// Where [`run`] departs from the straight sequence.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// One delete unit's result is left out of the merge.
    MissingUnitResult,
    /// One shard's report is given twice to conclude (and one left out).
    DoubledShardReport,
}

/// The sharded sequence through bytes with `paths` chosen at the gate.
fn run(
    table: &Path,
    cfg: &ExpireConfig,
    shards: u32,
    paths: units::Paths,
    fault: Fault,
) -> paimon_cleanup::Result<Run> {
    let ctl = RunControl::default();
    let rt = common::rt();
    let t = rt.block_on(open(table))?;
    let planned = rt.block_on(units::plan(&t, cfg, &ctl))?;
    let mut summary = Vec::new();
    let mut pieces = vec![Vec::new(); shards as usize];
    for u in &planned.units {
        let result = rt.block_on(units::execute(u, &Opts::new(), &ctl))?;
        let split = units::split(&result, shards)?;
        summary = units::merge(&summary, &split.summary)?;
        for (s, p) in split.pieces.iter().enumerate() {
            pieces[s] = units::merge(&pieces[s], p)?;
        }
    }
    let gated = rt.block_on(units::gate_with(
        &t,
        &ctl,
        &planned.state,
        &summary,
        shards,
        paths,
    ))?;
    let mut reports = Vec::new();
    let mut delete_units = Vec::new();
    let mut task_paths = Vec::new();
    let mut to_driver = Vec::new();
    // Shards in reverse order: the order must not matter.
    for s in (0..shards).rev() {
        let d = rt.block_on(units::decide_shard(
            &gated.gate,
            s,
            &pieces[s as usize],
            &Opts::new(),
            &ctl,
        ))?;
        to_driver.push(d.report.len());
        task_paths.extend(d.paths);
        reports.push(d.report);
        delete_units.extend(d.units);
    }
    if fault == Fault::DoubledShardReport {
        let again = reports[0].clone();
        reports[1] = again;
    }
    let decision = units::conclude(&gated.decision, &reports)?;
    let mut merged = Vec::new();
    for (i, u) in delete_units.iter().enumerate() {
        let e = rt.block_on(units::execute_handing_paths(u, &Opts::new(), &ctl))?;
        to_driver.push(e.result.len());
        task_paths.extend(e.paths);
        if fault == Fault::MissingUnitResult && i == 0 {
            continue;
        }
        merged = units::merge(&merged, &e.result)?;
    }
    let report = rt.block_on(units::finish(&t, &ctl, &decision, &merged))?;
    Ok(Run {
        report,
        task_paths,
        to_driver,
    })
}

fn paths_of(r: &ExpireReport) -> Vec<String> {
    r.deletion.paths.iter().map(|p| p.path.clone()).collect()
}

/// On two copies of `src`, dry run then real run: the single-process run and the counts-only
/// run with `shards`. Checks everything the counts-only run promises; returns the bytes that
/// reached its driver in the real run.
fn same_as_single(src: &Path, shards: u32) -> Vec<usize> {
    let (_a, a) = common::copy_table(src);
    let (_b, b) = common::copy_table(src);
    let mut real_bytes = Vec::new();
    for dry_run in [true, false] {
        let c = cfg(1, dry_run);
        let one = single(&a, &c).unwrap();
        let many = run(&b, &c, shards, units::Paths::ToTasks, Fault::None).unwrap();
        let what = format!("{} ({shards} shards, dry run {dry_run})", src.display());
        let all = paths_of(&one);
        // The single-process report: the data stage (what the tasks hold), then the metadata
        // the driver deletes.
        let data_stage = many.task_paths.len();
        assert!(data_stage > 0, "{what}: nothing freed");
        let mut tasks = many.task_paths.clone();
        tasks.sort();
        let mut want = all[..data_stage].to_vec();
        want.sort();
        assert_eq!(
            tasks, want,
            "{what}: the tasks' paths are not the data stage"
        );
        let sample = data_stage.min(units::SAMPLE_PATHS);
        let mut want_listed = all[..sample].to_vec();
        want_listed.extend_from_slice(&all[data_stage..]);
        assert_eq!(
            paths_of(&many.report),
            want_listed,
            "{what}: the report lists other paths than the sample and the metadata"
        );
        assert!(many.report.deletion.paths_elsewhere, "{what}");
        assert!(!one.deletion.paths_elsewhere, "{what}");
        assert_eq!(many.report.deletion.deleted, one.deletion.deleted, "{what}");
        assert_eq!(many.report.deletion.failed, one.deletion.failed, "{what}");
        assert_eq!(
            many.report.deletion.dirs_removed, one.deletion.dirs_removed,
            "{what}"
        );
        assert_eq!(many.report.snapshots_expired, one.snapshots_expired);
        assert_eq!(many.report.earliest_after, one.earliest_after);
        assert_eq!(
            common::tree(&a),
            common::tree(&b),
            "{what}: files left differ"
        );
        if !dry_run {
            real_bytes = many.to_driver;
        }
    }
    real_bytes
}

#[test]
fn the_tasks_hold_exactly_the_single_process_paths_and_the_report_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    for (seed, shards) in [(2u64, 1u32), (3, 3), (6, 7)] {
        let src = common::expiry_history(dir.path(), seed, "6");
        same_as_single(&src, shards);
    }
}

/// Bytes per shard report or delete-unit result that no number of files exceeds: ids, counts
/// per class, directories (8 here) and 20 sampled paths.
const PER_RESULT: usize = 8 * 1024;

#[test]
fn the_drivers_bytes_do_not_grow_with_the_files_freed() {
    let dir = tempfile::tempdir().unwrap();
    let shards = 3;
    let small = same_as_single(&common::expiry_history(dir.path(), 6, "4"), shards);
    let large = same_as_single(&common::expiry_history(dir.path(), 6, "40"), shards);
    let (s, l): (usize, usize) = (small.iter().sum(), large.iter().sum());
    eprintln!(
        "driver bytes: {s} for 4 files a commit, {l} for 40 ({} results)",
        large.len()
    );
    for b in small.iter().chain(&large) {
        assert!(*b <= PER_RESULT, "a result of {b} bytes reached the driver");
    }
    assert!(
        l <= PER_RESULT * (shards as usize + large.len()) && l < 2 * s,
        "10x the files: {l} bytes to the driver against {s}"
    );
    // The same runs with every path in the results: the driver's bytes grow with the files.
    let bytes_in_results = |src: &Path| -> usize {
        let (_b, b) = common::copy_table(src);
        let r = run(
            &b,
            &cfg(1, false),
            shards,
            units::Paths::InResults,
            Fault::None,
        );
        r.unwrap().to_driver.iter().sum()
    };
    let s_all = bytes_in_results(&dir.path().join("gen-6-4"));
    let l_all = bytes_in_results(&dir.path().join("gen-6-40"));
    assert!(
        l_all > 5 * s_all,
        "paths in results: {l_all} against {s_all}"
    );
    assert!(
        l * 5 < l_all,
        "counts only: {l} bytes, paths in results: {l_all}"
    );
}

#[test]
fn a_failed_deletion_reaches_the_driver_in_full_and_stops_before_the_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::expiry_history(dir.path(), 3, "6");
    let dry = single(&src, &cfg(1, true)).unwrap();
    // Two freed data files in different directories (likely different shards).
    let data: Vec<String> = paths_of(&dry)
        .into_iter()
        .filter(|p| p.contains("/bucket-") && p.contains("/data-"))
        .collect();
    let first = data.first().expect("a data file is freed").clone();
    let dir_of = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string());
    let second = data
        .iter()
        .find(|p| dir_of(p) != dir_of(&first))
        .expect("data files in two directories")
        .clone();
    let (_a, a) = common::copy_table(&src);
    let (_b, b) = common::copy_table(&src);
    // A non-empty directory where each data file was: its deletion fails on both runs.
    for t in [&a, &b] {
        for victim in [&first, &second] {
            let at = t.join(victim);
            std::fs::remove_file(&at).unwrap();
            std::fs::create_dir(&at).unwrap();
            std::fs::write(at.join("keep"), b"x").unwrap();
        }
    }
    let one = single(&a, &cfg(1, false));
    let many = run(&b, &cfg(1, false), 3, units::Paths::ToTasks, Fault::None);
    let (e1, e2) = (one.unwrap_err(), many.unwrap_err());
    assert!(matches!(e2, Error::Storage { .. }), "{e2}");
    // The same error (the tables' roots aside): both failures counted, the first with its
    // path and the store's own error text. Deletions run concurrently, so which of the two
    // failed first may differ between the runs: either victim's path reads as `V`.
    let same = |e: &Error, root: &Path| {
        e.to_string()
            .replace(root.to_str().unwrap(), "T")
            .replace(first.as_str(), "V")
            .replace(second.as_str(), "V")
    };
    let (t1, t2) = (same(&e1, &a), same(&e2, &b));
    assert!(t2.contains("file://T/V"), "{t2}");
    assert_eq!(t1, t2);
    assert!(t2.contains("2 deletion(s) failed"), "{t2}");
    assert!(t2.contains("Is a directory"), "{t2}");
    assert_eq!(common::tree(&a), common::tree(&b), "files left differ");
    assert!(b.join(&first).join("keep").exists());
    let snapshots = |t: &Path| common::snapshot_ids(t);
    assert_eq!(snapshots(&b), snapshots(&src), "a snapshot went");
}

#[test]
fn a_missing_or_doubled_result_fails_with_nothing_more_deleted_dry_run_too() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::expiry_history(dir.path(), 6, "40");
    for (fault, dry_run) in [
        (Fault::MissingUnitResult, false),
        (Fault::DoubledShardReport, false),
        (Fault::DoubledShardReport, true),
    ] {
        let (_b, b) = common::copy_table(&src);
        let before = common::tree(&b);
        let err = run(&b, &cfg(1, dry_run), 3, units::Paths::ToTasks, fault)
            .expect_err("the run went on");
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        let after = common::tree(&b);
        // No metadata went; a doubled report fails before any delete unit ran.
        for (path, _) in before.iter().filter(|(p, _)| {
            p.starts_with("snapshot/") || p.starts_with("manifest/") || p.starts_with("tag/")
        }) {
            assert!(after.contains_key(path), "{path} is gone");
        }
        if fault == Fault::DoubledShardReport || dry_run {
            assert_eq!(after, before, "something was deleted");
        }
        assert_eq!(common::snapshot_ids(&b), common::snapshot_ids(&src));
    }
}

#[test]
fn a_delete_unit_handing_its_paths_to_the_task_is_refused_by_plain_execute() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::expiry_history(dir.path(), 6, "6");
    let (_b, b) = common::copy_table(&src);
    let ctl = RunControl::default();
    let rt = common::rt();
    let t = rt.block_on(open(&b)).unwrap();
    let planned = rt.block_on(units::plan(&t, &cfg(1, false), &ctl)).unwrap();
    let mut summary = Vec::new();
    let mut piece = Vec::new();
    for u in &planned.units {
        let r = rt.block_on(units::execute(u, &Opts::new(), &ctl)).unwrap();
        let split = units::split(&r, 1).unwrap();
        summary = units::merge(&summary, &split.summary).unwrap();
        piece = units::merge(&piece, &split.pieces[0]).unwrap();
    }
    let gated = rt
        .block_on(units::gate_with(
            &t,
            &ctl,
            &planned.state,
            &summary,
            1,
            units::Paths::ToTasks,
        ))
        .unwrap();
    let d = rt
        .block_on(units::decide_shard(
            &gated.gate,
            0,
            &piece,
            &Opts::new(),
            &ctl,
        ))
        .unwrap();
    assert!(!d.units.is_empty());
    let before = common::tree(&b);
    let err = rt
        .block_on(units::execute(&d.units[0], &Opts::new(), &ctl))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_eq!(common::tree(&b), before, "something was deleted");
}
