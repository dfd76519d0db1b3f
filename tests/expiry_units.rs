//! Snapshot expiry as units: units serialized, executed in random order, their results merged
//! in random groupings, give exactly what the single-process expiry gives — the same report
//! (every deleted path, in order) and the same files left — on generated tables (tags, a
//! branch, consumers, changelogs, index files, over several seeds), on every Java fixture table
//! and on every pypaimon table, in dry runs and real runs. Unreadable metadata fails the
//! run with nothing deleted; a delete unit that fails (or whose result is lost) leaves every
//! remaining version whole, and a rerun converges to the single-process end state; foreign,
//! missing and doubled results are refused.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
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

/// A byte string of the units API.
type Bytes = Vec<u8>;

/// A small deterministic generator (xorshift), seeded per case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// Merges `parts` in a random order and a random tree shape, through bytes.
fn merge_randomly(rng: &mut Rng, mut parts: Vec<Vec<u8>>) -> Vec<u8> {
    if parts.is_empty() {
        return Vec::new();
    }
    rng.shuffle(&mut parts);
    while parts.len() > 1 {
        let i = rng.below(parts.len());
        let a = parts.swap_remove(i);
        let j = rng.below(parts.len());
        let b = parts.swap_remove(j);
        let merged = if rng.next() % 2 == 0 {
            units::merge(&a, &b)
        } else {
            units::merge(&b, &a)
        };
        parts.push(merged.unwrap());
    }
    parts.pop().unwrap()
}

async fn open(table: &Path, branch: &str) -> paimon_cleanup::Result<Table> {
    let opts = Opts::new();
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &opts)?);
    Table::open_branch(storage, &opts, branch).await
}

/// Executes `todo` in a random order and merges the results randomly.
fn execute_all(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    todo: &[Vec<u8>],
) -> paimon_cleanup::Result<Vec<u8>> {
    let mut todo = todo.to_vec();
    rng.shuffle(&mut todo);
    let ctl = RunControl::default();
    let mut parts = Vec::new();
    for u in &todo {
        parts.push(rt.block_on(units::execute(u, &Opts::new(), &ctl))?);
    }
    Ok(merge_randomly(rng, parts))
}

/// Where [`run_units`] stops.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Run to the end.
    Never,
    /// Execute only the first half of the delete units, then stop (a job whose delete stage
    /// failed): finish is never called.
    HalfOfTheDeletes,
}

/// The whole sequence through bytes: plan, candidate units, protect, protect units, decide,
/// delete units, finish.
fn run_units(
    table: &Path,
    branch: &str,
    cfg: &ExpireConfig,
    seed: u64,
    stop: Stop,
) -> paimon_cleanup::Result<Option<ExpireReport>> {
    let mut rng = Rng(seed | 1);
    let ctl = RunControl::default();
    let rt = common::rt();
    let t = rt.block_on(open(table, branch))?;
    let planned = rt.block_on(units::plan(&t, cfg, &ctl))?;
    let candidates = execute_all(&rt, &mut rng, &planned.units)?;
    let protect = rt.block_on(units::protect(&t, &ctl, &planned.state, &candidates))?;
    let protected = execute_all(&rt, &mut rng, &protect.units)?;
    let decided = rt.block_on(units::decide(
        &t,
        &ctl,
        &protect.state,
        &candidates,
        &protected,
    ))?;
    if stop == Stop::HalfOfTheDeletes {
        let half = decided.units.len() / 2;
        execute_all(&rt, &mut rng, &decided.units[..half])?;
        return Ok(None);
    }
    let deleted = execute_all(&rt, &mut rng, &decided.units)?;
    rt.block_on(units::finish(&t, &ctl, &decided.decision, &deleted))
        .map(Some)
}

/// The sharded sequence through bytes: plan, candidate units, each result split into a
/// summary and `shards` pieces, the summaries merged for the gate, each shard's pieces merged
/// for its decision (shards decided in a random order), the reports concluded, the delete
/// units of every shard, finish.
fn run_sharded(
    table: &Path,
    branch: &str,
    cfg: &ExpireConfig,
    seed: u64,
    shards: u32,
) -> paimon_cleanup::Result<ExpireReport> {
    let mut rng = Rng(seed | 1);
    let ctl = RunControl::default();
    let rt = common::rt();
    let t = rt.block_on(open(table, branch))?;
    let planned = rt.block_on(units::plan(&t, cfg, &ctl))?;
    let (summary, pieces) = execute_split(&rt, &mut rng, &planned.units, shards)?;
    let gated = rt.block_on(units::gate(&t, &ctl, &planned.state, &summary, shards))?;
    let (reports, delete_units) = decide_shards(&rt, &mut rng, &gated.gate, pieces)?;
    let decision = units::conclude(&gated.decision, &reports)?;
    let deleted = execute_all(&rt, &mut rng, &delete_units)?;
    rt.block_on(units::finish(&t, &ctl, &decision, &deleted))
}

/// Executes the candidate units in a random order, splits each result into `shards` and
/// returns the summaries merged and every shard's pieces merged (in random orders and shapes).
fn execute_split(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    todo: &[Vec<u8>],
    shards: u32,
) -> paimon_cleanup::Result<(Vec<u8>, Vec<Vec<u8>>)> {
    let mut todo = todo.to_vec();
    rng.shuffle(&mut todo);
    let ctl = RunControl::default();
    let mut summaries = Vec::new();
    let mut pieces: Vec<Vec<Vec<u8>>> = vec![Vec::new(); shards as usize];
    for u in &todo {
        let result = rt.block_on(units::execute(u, &Opts::new(), &ctl))?;
        let split = units::split(&result, shards)?;
        assert_eq!(split.pieces.len(), shards as usize);
        summaries.push(split.summary);
        for (s, p) in split.pieces.into_iter().enumerate() {
            pieces[s].push(p);
        }
    }
    let summary = merge_randomly(rng, summaries);
    let pieces = pieces.into_iter().map(|p| merge_randomly(rng, p)).collect();
    Ok((summary, pieces))
}

/// Decides every shard in a random order: the reports (shuffled) and every delete unit.
fn decide_shards(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    gate: &[u8],
    pieces: Vec<Vec<u8>>,
) -> paimon_cleanup::Result<(Vec<Bytes>, Vec<Bytes>)> {
    let ctl = RunControl::default();
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    rng.shuffle(&mut order);
    let mut reports = Vec::new();
    let mut delete_units = Vec::new();
    for s in order {
        let d = rt.block_on(units::decide_shard(
            gate,
            s as u32,
            &pieces[s],
            &Opts::new(),
            &ctl,
        ))?;
        reports.push(d.report);
        delete_units.extend(d.units);
    }
    Ok((reports, delete_units))
}

fn single(table: &Path, branch: &str, cfg: &ExpireConfig) -> paimon_cleanup::Result<ExpireReport> {
    common::rt().block_on(async {
        let t = open(table, branch).await?;
        expire_snapshots(&t, cfg, &RunControl::default()).await
    })
}

/// The report without its wall time.
fn comparable(r: &ExpireReport) -> ExpireReport {
    ExpireReport {
        elapsed_ms: 0,
        ..r.clone()
    }
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

/// On two copies of `src`: the single-process run and the unit run give the same report and
/// leave the same files (dry run first, then the real run). Returns the number of files the
/// real run deleted.
fn same_as_single(
    src: &Path,
    branch: &str,
    cfg_of: impl Fn(bool) -> ExpireConfig,
    seed: u64,
) -> u64 {
    same_as_single_by(src, branch, cfg_of, |b, c| {
        run_units(b, branch, c, seed, Stop::Never).map(|r| r.expect("run to the end"))
    })
}

/// [`same_as_single`] for the sharded run with `shards`.
fn sharded_same_as_single(
    src: &Path,
    branch: &str,
    cfg_of: impl Fn(bool) -> ExpireConfig,
    seed: u64,
    shards: u32,
) -> u64 {
    same_as_single_by(src, branch, cfg_of, |b, c| {
        run_sharded(b, branch, c, seed, shards)
    })
}

/// [`same_as_single`] for the run `many`.
fn same_as_single_by(
    src: &Path,
    branch: &str,
    cfg_of: impl Fn(bool) -> ExpireConfig,
    many: impl Fn(&Path, &ExpireConfig) -> paimon_cleanup::Result<ExpireReport>,
) -> u64 {
    let (_a, a) = common::copy_table(src);
    let (_b, b) = common::copy_table(src);
    let mut deleted = 0;
    for dry_run in [true, false] {
        let c = cfg_of(dry_run);
        let one = single(&a, branch, &c);
        let many = many(&b, &c);
        match (one, many) {
            (Ok(one), Ok(many)) => {
                assert_eq!(
                    comparable(&one),
                    comparable(&many),
                    "{} (branch {branch}, dry run {dry_run}): the unit run reports otherwise",
                    src.display()
                );
                if !dry_run {
                    deleted = one.deletion.total_files();
                }
            }
            (Err(e1), Err(e2)) => {
                assert_eq!(
                    std::mem::discriminant(&e1),
                    std::mem::discriminant(&e2),
                    "{}: {e1} vs {e2}",
                    src.display()
                );
            }
            (one, many) => panic!(
                "{} (branch {branch}): single-process {:?}, units {:?}",
                src.display(),
                one.map(|r| r.deletion.total_files()),
                many.map(|r| r.deletion.total_files())
            ),
        }
        assert_eq!(
            common::tree(&a),
            common::tree(&b),
            "{} (branch {branch}, dry run {dry_run}): the files left differ",
            src.display()
        );
    }
    deleted
}

/// A generated table with tags, a branch, consumers, changelogs, index files and compactions.
fn generated(dir: &Path, seed: u64) -> PathBuf {
    common::expiry_history(dir, seed, "6")
}

#[test]
fn unit_runs_equal_single_process_runs_on_generated_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    for seed in 1..=8u64 {
        let table = generated(dir.path(), seed);
        let keep = 1 + (seed as i64 % 5);
        total += same_as_single(&table, "main", |dry| cfg(keep, dry), seed);
        // The branch expires its own line; main's snapshots and tags protect its files.
        same_as_single(&table, "b1", |dry| cfg(1, dry), seed + 100);
    }
    assert!(total > 100, "the generated tables freed only {total} files");
}

#[test]
fn unit_runs_equal_single_process_runs_with_tags_and_consumers_assumed_removed() {
    let dir = tempfile::tempdir().unwrap();
    let table = generated(dir.path(), 5);
    let rt = common::rt();
    let tags: Vec<String> = rt
        .block_on(async { open(&table, "main").await.unwrap().tags().await.unwrap() })
        .into_keys()
        .collect();
    assert!(!tags.is_empty());
    let deleted = same_as_single(
        &table,
        "main",
        |dry| {
            let mut c = cfg(2, dry);
            c.assume_removed.tags = tags.clone();
            c.assume_removed.consumers = vec!["consumer-0".into()];
            c
        },
        77,
    );
    assert!(deleted > 0);
}

#[test]
fn unit_runs_equal_single_process_runs_on_java_fixture_tables() {
    let Some(root) = common::fixtures_dir() else {
        common::skip("Java fixtures", "PAIMON_FIXTURES");
        return;
    };
    let tables = common::fixture_tables(&root);
    assert!(!tables.is_empty());
    for (i, t) in tables.iter().enumerate() {
        same_as_single(t, "main", |dry| cfg(1, dry), i as u64 + 1);
    }
}

#[test]
fn unit_runs_equal_single_process_runs_on_pypaimon_tables() {
    let Some((_, json)) = common::pypaimon_warehouse() else {
        common::skip("pypaimon", "scripts/setup-python.sh");
        return;
    };
    let names: Vec<String> = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.is_empty());
    for (i, name) in names.iter().enumerate() {
        let (_tmp, table, _) = common::pypaimon_table(name).unwrap();
        same_as_single(&table, "main", |dry| cfg(1, dry), i as u64 + 7);
    }
}

/// The first manifest (by name) that the latest snapshot's base list names.
fn a_live_manifest(table: &Path) -> PathBuf {
    let rt = common::rt();
    rt.block_on(async {
        let t = open(table, "main").await.unwrap();
        let latest = t.all_snapshots().await.unwrap().pop().unwrap();
        let live = t
            .reader()
            .manifest_list(t.paths(), &latest.base_manifest_list)
            .await
            .unwrap();
        table.join("manifest").join(&live[0].file_name)
    })
}

#[test]
fn unreadable_metadata_fails_with_nothing_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let table = generated(dir.path(), 3);
    let manifest = a_live_manifest(&table);
    std::fs::write(&manifest, b"not avro").unwrap();
    let before = common::tree(&table);
    let single_err = single(&table, "main", &cfg(1, false)).unwrap_err();
    assert_eq!(common::tree(&table), before);
    let err = run_units(&table, "main", &cfg(1, false), 9, Stop::Never).unwrap_err();
    assert_eq!(
        std::mem::discriminant(&err),
        std::mem::discriminant(&single_err),
        "units: {err}; single-process: {single_err}"
    );
    assert_eq!(common::tree(&table), before, "a unit run deleted files");
}

#[test]
fn a_failed_delete_stage_leaves_the_table_whole_and_a_rerun_converges() {
    let dir = tempfile::tempdir().unwrap();
    // Enough freed files for several delete units.
    let src = common::expiry_history(dir.path(), 4, "80");
    let (_a, a) = common::copy_table(&src);
    let (_b, b) = common::copy_table(&src);
    let c = cfg(1, false);
    single(&a, "main", &c).unwrap();
    // Half of the delete units ran, the rest did not: finish never ran.
    let before = common::tree(&b);
    run_units(&b, "main", &c, 3, Stop::HalfOfTheDeletes).unwrap();
    let after = common::tree(&b);
    assert!(
        after.len() < before.len(),
        "no delete unit deleted anything"
    );
    // Every snapshot and every manifest, list and snapshot file is still there: only data
    // files of the expired range went, none that a remaining version reads.
    for (path, _) in before.iter().filter(|(p, _)| {
        p.starts_with("snapshot/") || p.starts_with("manifest/") || p.starts_with("tag/")
    }) {
        assert!(after.contains_key(path), "{path} is gone");
    }
    let rt = common::rt();
    rt.block_on(async {
        let t = open(&b, "main").await.unwrap();
        for s in t.all_snapshots().await.unwrap() {
            if s.id < t.all_snapshots().await.unwrap().last().unwrap().id {
                continue;
            }
            for e in t.live_data_files(&s).await.unwrap() {
                for loc in t
                    .paths()
                    .data_file_with_extras(&e.partition, e.bucket, &e.file)
                    .unwrap()
                {
                    let rel = t.paths().display(&loc);
                    assert!(
                        after.contains_key(&rel),
                        "{rel}, live in the latest snapshot, is gone"
                    );
                }
            }
        }
    });
    // A rerun converges on the single-process end state.
    let report = run_units(&b, "main", &c, 5, Stop::Never).unwrap().unwrap();
    assert!(report.snapshots_expired > 0);
    assert_eq!(common::tree(&a), common::tree(&b));
}

#[test]
fn foreign_missing_and_doubled_results_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let table = generated(dir.path(), 6);
    let rt = common::rt();
    let ctl = RunControl::default();
    let before = common::tree(&table);
    let t = rt.block_on(open(&table, "main")).unwrap();
    let c = cfg(1, false);
    let planned = rt.block_on(units::plan(&t, &c, &ctl)).unwrap();
    assert!(planned.units.len() > 1);
    let mut rng = Rng(11);
    let mut parts: Vec<Vec<u8>> = planned
        .units
        .iter()
        .map(|u| rt.block_on(units::execute(u, &Opts::new(), &ctl)).unwrap())
        .collect();
    // A result included twice.
    assert!(matches!(
        units::merge(&parts[0], &parts[0]),
        Err(Error::InvalidArgument(_))
    ));
    // A missing result.
    let last = parts.pop().unwrap();
    let partial = merge_randomly(&mut rng, parts.clone());
    assert!(matches!(
        rt.block_on(units::protect(&t, &ctl, &planned.state, &partial)),
        Err(Error::InvalidArgument(_))
    ));
    // Another plan's result.
    let other = rt.block_on(units::plan(&t, &c, &ctl)).unwrap();
    let foreign = rt
        .block_on(units::execute(&other.units[0], &Opts::new(), &ctl))
        .unwrap();
    assert!(matches!(
        units::merge(&last, &foreign),
        Err(Error::InvalidArgument(_))
    ));
    // Bytes that are not a unit.
    assert!(matches!(
        rt.block_on(units::execute(b"PCEU\x01\x01", &Opts::new(), &ctl)),
        Err(Error::InvalidArgument(_))
    ));
    // The complete set goes on; a decision with the delete results missing finishes nothing.
    parts.push(last);
    let all = merge_randomly(&mut rng, parts);
    let protect = rt
        .block_on(units::protect(&t, &ctl, &planned.state, &all))
        .unwrap();
    let protected = execute_all(&rt, &mut rng, &protect.units).unwrap();
    let decided = rt
        .block_on(units::decide(&t, &ctl, &protect.state, &all, &protected))
        .unwrap();
    assert!(!decided.units.is_empty());
    assert!(matches!(
        rt.block_on(units::finish(&t, &ctl, &decided.decision, &[])),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(common::tree(&table), before, "nothing may be deleted");
}

/// The shard counts every sharded comparison runs with.
const SHARDS: [u32; 4] = [1, 2, 7, 64];

#[test]
fn sharded_runs_equal_single_process_runs_on_generated_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    for seed in 1..=8u64 {
        let table = generated(dir.path(), seed);
        let keep = 1 + (seed as i64 % 5);
        let shards = SHARDS[seed as usize % SHARDS.len()];
        total += sharded_same_as_single(&table, "main", |dry| cfg(keep, dry), seed, shards);
        let shards = SHARDS[(seed as usize + 1) % SHARDS.len()];
        sharded_same_as_single(&table, "b1", |dry| cfg(1, dry), seed + 100, shards);
    }
    assert!(total > 100, "the generated tables freed only {total} files");
}

#[test]
fn sharded_runs_equal_single_process_runs_for_every_shard_count() {
    let dir = tempfile::tempdir().unwrap();
    // Several delete units per shard at few shards.
    let table = common::expiry_history(dir.path(), 6, "40");
    for (i, shards) in SHARDS.into_iter().enumerate() {
        let deleted = sharded_same_as_single(&table, "main", |dry| cfg(2, dry), i as u64, shards);
        assert!(deleted > 500, "{shards} shards: only {deleted} files freed");
    }
    let tags: Vec<String> = common::rt()
        .block_on(async { open(&table, "main").await.unwrap().tags().await.unwrap() })
        .into_keys()
        .collect();
    sharded_same_as_single(
        &table,
        "main",
        |dry| {
            let mut c = cfg(2, dry);
            c.assume_removed.tags = tags.clone();
            c
        },
        5,
        7,
    );
}

#[test]
fn sharded_runs_equal_single_process_runs_on_java_fixture_tables() {
    let Some(root) = common::fixtures_dir() else {
        common::skip("Java fixtures", "PAIMON_FIXTURES");
        return;
    };
    let tables = common::fixture_tables(&root);
    assert!(!tables.is_empty());
    for (i, t) in tables.iter().enumerate() {
        let shards = SHARDS[i % SHARDS.len()];
        sharded_same_as_single(t, "main", |dry| cfg(1, dry), i as u64 + 1, shards);
    }
}

#[test]
fn sharded_runs_equal_single_process_runs_on_pypaimon_tables() {
    let Some((_, json)) = common::pypaimon_warehouse() else {
        common::skip("pypaimon", "scripts/setup-python.sh");
        return;
    };
    let names: Vec<String> = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.is_empty());
    for (i, name) in names.iter().enumerate() {
        let (_tmp, table, _) = common::pypaimon_table(name).unwrap();
        let shards = SHARDS[i % SHARDS.len()];
        sharded_same_as_single(&table, "main", |dry| cfg(1, dry), i as u64 + 7, shards);
    }
}

#[test]
fn unreadable_metadata_fails_a_sharded_run_with_nothing_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let table = generated(dir.path(), 3);
    let manifest = a_live_manifest(&table);
    std::fs::write(&manifest, b"not avro").unwrap();
    let before = common::tree(&table);
    let single_err = single(&table, "main", &cfg(1, false)).unwrap_err();
    for shards in [1, 7] {
        let err = run_sharded(&table, "main", &cfg(1, false), 9, shards).unwrap_err();
        assert_eq!(
            std::mem::discriminant(&err),
            std::mem::discriminant(&single_err),
            "{shards} shards: {err}; single-process: {single_err}"
        );
        assert_eq!(common::tree(&table), before, "a sharded run deleted files");
    }
}

#[test]
fn missing_doubled_and_foreign_shard_results_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let table = common::expiry_history(dir.path(), 6, "20");
    let rt = common::rt();
    let ctl = RunControl::default();
    let before = common::tree(&table);
    let t = rt.block_on(open(&table, "main")).unwrap();
    let c = cfg(1, false);
    let refused = |r: paimon_cleanup::Result<Vec<u8>>, what: &str| match r {
        Err(Error::InvalidArgument(_)) => {}
        other => panic!("{what}: {:?}", other.map(|b| b.len())),
    };
    let shards = 3;
    let mut rng = Rng(13);
    let planned = rt.block_on(units::plan(&t, &c, &ctl)).unwrap();
    assert!(planned.units.len() > 1);
    let (summary, pieces) = execute_split(&rt, &mut rng, &planned.units, shards).unwrap();

    // Summaries: a unit's summary missing, summaries of another shard count, unsplit results.
    let results: Vec<Vec<u8>> = planned
        .units
        .iter()
        .map(|u| rt.block_on(units::execute(u, &Opts::new(), &ctl)).unwrap())
        .collect();
    let some: Vec<Vec<u8>> = results[1..]
        .iter()
        .map(|r| units::split(r, shards).unwrap().summary)
        .collect();
    let partial = merge_randomly(&mut rng, some);
    let gate_of = |s: &[u8], n: u32| {
        rt.block_on(units::gate(&t, &ctl, &planned.state, s, n))
            .map(|g| g.gate)
    };
    refused(gate_of(&partial, shards), "a missing summary");
    refused(gate_of(&summary, shards + 1), "another shard count");
    let whole = merge_randomly(&mut rng, results.clone());
    refused(gate_of(&whole, shards), "unsplit results");
    // A summary and a piece, or pieces of two shards, do not merge; nor does a result twice.
    let split0 = units::split(&results[0], shards).unwrap();
    refused(
        units::merge(&split0.summary, &split0.pieces[0]),
        "a summary with a piece",
    );
    refused(
        units::merge(&split0.pieces[0], &split0.pieces[1]),
        "pieces of two shards",
    );
    refused(units::merge(&split0.pieces[0], &pieces[0]), "a piece twice");
    refused(
        units::split(&split0.pieces[0], shards).map(|s| s.summary),
        "a piece split again",
    );

    let gated = rt
        .block_on(units::gate(&t, &ctl, &planned.state, &summary, shards))
        .unwrap();
    let decide = |shard: u32, piece: &[u8]| {
        rt.block_on(units::decide_shard(
            &gated.gate,
            shard,
            piece,
            &Opts::new(),
            &ctl,
        ))
        .map(|d| d.report)
    };
    // A shard given another shard's piece, a piece missing a unit, a shard that is not.
    refused(decide(0, &pieces[1]), "another shard's piece");
    let short = merge_randomly(
        &mut rng,
        results[1..]
            .iter()
            .map(|r| units::split(r, shards).unwrap().pieces[0].clone())
            .collect(),
    );
    refused(decide(0, &short), "a piece without a unit's share");
    refused(decide(shards, &pieces[0]), "a shard out of range");

    let (reports, delete_units) = decide_shards(&rt, &mut rng, &gated.gate, pieces).unwrap();
    assert!(
        delete_units.len() >= 2,
        "{} delete units",
        delete_units.len()
    );
    // Missing, doubled and foreign shard reports.
    refused(
        units::conclude(&gated.decision, &reports[1..]),
        "a missing report",
    );
    let mut doubled = reports.clone();
    doubled[0] = reports[1].clone();
    refused(
        units::conclude(&gated.decision, &doubled),
        "a doubled report",
    );
    let mut extra = reports.clone();
    extra.push(reports[0].clone());
    refused(units::conclude(&gated.decision, &extra), "a report twice");
    let other = rt.block_on(units::plan(&t, &c, &ctl)).unwrap();
    let (o_summary, o_pieces) = execute_split(&rt, &mut rng, &other.units, shards).unwrap();
    let o_gated = rt
        .block_on(units::gate(&t, &ctl, &other.state, &o_summary, shards))
        .unwrap();
    let (o_reports, _) = decide_shards(&rt, &mut rng, &o_gated.gate, o_pieces).unwrap();
    let mut foreign = reports.clone();
    foreign[2] = o_reports[2].clone();
    refused(
        units::conclude(&gated.decision, &foreign),
        "a foreign report",
    );
    // Finish refuses a decision not concluded, and a concluded one missing a delete result.
    assert!(matches!(
        rt.block_on(units::finish(&t, &ctl, &gated.decision, &[])),
        Err(Error::InvalidArgument(_))
    ));
    let decision = units::conclude(&gated.decision, &reports).unwrap();
    refused(
        units::conclude(&decision, &reports),
        "a decision concluded twice",
    );
    assert_eq!(
        common::tree(&table),
        before,
        "the refused steps deleted files"
    );
    let mut rest = delete_units.clone();
    rest.pop();
    let partial = execute_all(&rt, &mut rng, &rest).unwrap();
    let after_units = common::tree(&table);
    assert!(after_units.len() < before.len());
    assert!(matches!(
        rt.block_on(units::finish(&t, &ctl, &decision, &partial)),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(
        common::tree(&table),
        after_units,
        "finish deleted files without every delete unit's result"
    );
    // Nothing of the metadata went: every snapshot, manifest and list is still there.
    for (path, _) in before
        .iter()
        .filter(|(p, _)| p.starts_with("snapshot/") || p.starts_with("manifest/"))
    {
        assert!(after_units.contains_key(path), "{path} is gone");
    }
}
