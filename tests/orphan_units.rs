//! Orphan removal as units (issue 20): units serialized, executed in random order, their
//! results merged in random groupings, give exactly what the single-process run gives — the
//! same report and the same files left — on a pypaimon table with orphans, tags and a branch,
//! locally and on the S3 loopback server. A unit that finds unreadable metadata makes the
//! decision fail with nothing deleted; a delete unit that fails midway leaves the table whole
//! and a rerun converges; a missing or doubled result is refused.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use paimon_cleanup::clean::orphan_units as units;
use paimon_cleanup::clean::{remove_orphan_files, OrphanConfig, OrphanReport, RunControl};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;
use paimon_cleanup::Error;

type Opts = HashMap<String, String>;

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

async fn open(uri: &str, opts: &Opts) -> paimon_cleanup::Result<Table> {
    let storage = Arc::new(Storage::open(uri, opts)?);
    Table::open(storage, opts).await
}

/// The whole sequence through bytes: plan, execute every unit (random order), merge (random
/// grouping), decide, execute the delete units (random order), merge, finish. Units are
/// executed with `host` options (the credentials a unit does not carry).
fn run_units(
    uri: &str,
    opts: &Opts,
    host: &Opts,
    cfg: &OrphanConfig,
    seed: u64,
) -> paimon_cleanup::Result<OrphanReport> {
    let mut rng = Rng(seed | 1);
    let ctl = RunControl::default();
    let rt = common::rt();
    let table = rt.block_on(open(uri, opts))?;
    let planned = rt.block_on(units::plan(&table, cfg, &ctl))?;
    for u in &planned.units {
        for secret in host
            .iter()
            .filter(|(k, _)| k.contains("key"))
            .map(|(_, v)| v)
        {
            let text = String::from_utf8_lossy(u);
            assert!(
                !text.contains(&format!("\"{secret}\"")),
                "a unit carries a credential"
            );
        }
    }
    let mut todo = planned.units.clone();
    rng.shuffle(&mut todo);
    let mut parts = Vec::new();
    for u in &todo {
        parts.push(rt.block_on(units::execute(u, host, &ctl))?);
    }
    let merged = merge_randomly(&mut rng, parts);
    let decided = rt.block_on(units::decide(&table, cfg, &ctl, &planned.state, &merged))?;
    let mut deletes = decided.units.clone();
    rng.shuffle(&mut deletes);
    let mut parts = Vec::new();
    for u in &deletes {
        parts.push(rt.block_on(units::execute(u, host, &ctl))?);
    }
    let merged = merge_randomly(&mut rng, parts);
    rt.block_on(units::finish(&table, &ctl, &decided.decision, &merged))
}

fn single(uri: &str, opts: &Opts, cfg: &OrphanConfig) -> paimon_cleanup::Result<OrphanReport> {
    common::rt().block_on(async {
        let t = open(uri, opts).await?;
        remove_orphan_files(&t, cfg, &RunControl::default()).await
    })
}

/// The report without its wall time.
fn comparable(r: &OrphanReport) -> OrphanReport {
    OrphanReport {
        elapsed_ms: 0,
        ..r.clone()
    }
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Plants orphans of every kind in `t` (a copy of pypaimon's append_unaware table, with a tag
/// and a branch) and returns them.
fn plant(t: &Path) -> BTreeSet<String> {
    let mut planted = BTreeSet::new();
    for rel in [
        format!("dt=2024-01-01/hr=0/bucket-0/data-{}-0.parquet", uuid()),
        format!("dt=2024-01-01/hr=1/bucket-0/changelog-{}-0.parquet", uuid()),
        format!("manifest/manifest-{}-0", uuid()),
        format!("manifest/manifest-list-{}-0", uuid()),
        format!("manifest/index-manifest-{}-0", uuid()),
        format!("index/index-{}-0", uuid()),
        format!("statistics/stat-{}-0", uuid()),
        format!("snapshot/.snapshot-9.{}.tmp", uuid()),
        format!("branch/branch-b1/snapshot/.LATEST.{}.tmp", uuid()),
    ] {
        write(&t.join(&rel), b"orphan");
        planted.insert(rel);
    }
    // A live file's name in another bucket: kept, reported.
    planted
}

fn old_table(name: &str) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let (tmp, t, _) = common::pypaimon_table(name)?;
    // A tag on snapshot 2 (its files stay referenced).
    std::fs::copy(t.join("snapshot/snapshot-2"), t.join("tag/tag-units")).unwrap();
    assert!(
        t.join("branch/branch-b1").is_dir(),
        "the table has branch b1"
    );
    plant(&t);
    common::set_tree_mtime(&t, SystemTime::now() - Duration::from_secs(2 * 86_400));
    Some((tmp, t))
}

fn copy(t: &Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("t");
    common::copy_dir(t, &dst);
    common::set_tree_mtime(&dst, SystemTime::now() - Duration::from_secs(2 * 86_400));
    (tmp, dst)
}

fn deleted(r: &OrphanReport) -> BTreeSet<String> {
    r.deletion.paths.iter().map(|p| p.path.clone()).collect()
}

#[test]
fn units_in_any_order_equal_the_single_process_run() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let no = Opts::new();
    // Dry runs first: same report, nothing changed.
    let tree = common::tree(&t);
    // One cut-off for every run (the default, now - 1 day, moves between runs).
    let day_ago = paimon_cleanup::clean::shared::clock::now_millis() - 86_400_000;
    let dry = OrphanConfig {
        dry_run: true,
        older_than_ms: Some(day_ago),
        ..Default::default()
    };
    let one = single(t.to_str().unwrap(), &no, &dry).unwrap();
    for seed in [3, 17, 2024] {
        let units = run_units(t.to_str().unwrap(), &no, &no, &dry, seed).unwrap();
        assert_eq!(comparable(&units), comparable(&one), "dry run, seed {seed}");
    }
    assert_eq!(common::tree(&t), tree, "a dry run changed files");
    assert!(one.deletion.total_files() >= 9, "{:?}", one.deletion.paths);
    assert!(one.versions_read > 0 && one.referenced > 0, "{one:?}");

    // Real runs on identical copies: same report, same files left.
    for seed in [5, 99] {
        let (_a, a) = copy(&t);
        let (_b, b) = copy(&t);
        let cfg = OrphanConfig {
            older_than_ms: Some(day_ago),
            ..Default::default()
        };
        let one = single(a.to_str().unwrap(), &no, &cfg).unwrap();
        let units = run_units(b.to_str().unwrap(), &no, &no, &cfg, seed).unwrap();
        assert_eq!(comparable(&units), comparable(&one), "seed {seed}");
        assert_eq!(deleted(&one), deleted(&dry_of(&t)), "seed {seed}");
        assert_eq!(common::tree(&a), common::tree(&b), "seed {seed}");
        // The versions still read the same rows.
        let v = common::all_versions_many(&[t.as_path(), b.as_path()]);
        assert_eq!(v[&t], v[&b], "seed {seed}: versions changed");
    }
}

fn dry_of(t: &Path) -> OrphanReport {
    single(
        t.to_str().unwrap(),
        &Opts::new(),
        &OrphanConfig {
            dry_run: true,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn missing_doubled_or_foreign_results_are_refused() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let rt = common::rt();
    let ctl = RunControl::default();
    let no = Opts::new();
    let cfg = OrphanConfig::default();
    let table = rt.block_on(open(t.to_str().unwrap(), &no)).unwrap();
    let planned = rt.block_on(units::plan(&table, &cfg, &ctl)).unwrap();
    assert!(planned.units.len() >= 3, "{}", planned.units.len());
    let parts: Vec<Vec<u8>> = planned
        .units
        .iter()
        .map(|u| rt.block_on(units::execute(u, &no, &ctl)).unwrap())
        .collect();
    let tree = common::tree(&t);
    // One result missing (each in turn): refused, nothing deleted.
    for skip in 0..parts.len() {
        let mut merged = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            if i != skip {
                merged = units::merge(&merged, p).unwrap();
            }
        }
        let e = rt
            .block_on(units::decide(&table, &cfg, &ctl, &planned.state, &merged))
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        assert!(e.to_string().contains("missing"), "{e}");
    }
    // One result twice: refused by merge.
    assert!(units::merge(&parts[0], &parts[0]).is_err());
    // Another plan's results: refused.
    let other = rt.block_on(units::plan(&table, &cfg, &ctl)).unwrap();
    let p = rt
        .block_on(units::execute(&other.units[0], &no, &ctl))
        .unwrap();
    assert!(units::merge(&parts[0], &p).is_err());
    // Not a unit at all.
    assert!(rt.block_on(units::execute(b"hello", &no, &ctl)).is_err());
    assert!(units::merge(b"PCOU\x09\x02", &[]).is_err());
    assert_eq!(common::tree(&t), tree);
}

#[test]
fn unreadable_metadata_in_a_unit_fails_the_decision() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    // A manifest the latest snapshot needs (named by its delta list): read by a read unit.
    let snap: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.join("snapshot/snapshot-4")).unwrap()).unwrap();
    let list = snap["deltaManifestList"].as_str().unwrap();
    let list_path = t.join("manifest").join(list);
    let metas = paimon_cleanup::spec::manifest::decode_manifest_list(
        &std::fs::read(&list_path).unwrap(),
        list_path.to_str().unwrap(),
    )
    .unwrap();
    let manifest = metas[0].file_name.clone();
    for (file, how) in [
        (manifest.as_str(), "truncate"),
        (manifest.as_str(), "remove"),
    ] {
        let path = t.join("manifest").join(file);
        let saved = std::fs::read(&path).unwrap();
        if how == "truncate" {
            std::fs::write(&path, &saved[..saved.len() / 2]).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        let tree = common::tree(&t);
        let e = run_units(
            t.to_str().unwrap(),
            &Opts::new(),
            &Opts::new(),
            &OrphanConfig::default(),
            7,
        )
        .unwrap_err();
        assert!(e.to_string().contains(file), "{how}: {e}");
        assert_eq!(common::tree(&t), tree, "{how}: files changed");
        std::fs::write(&path, saved).unwrap();
        common::set_mtime(&path, SystemTime::now() - Duration::from_secs(2 * 86_400));
    }
}

#[test]
fn a_delete_unit_failing_midway_leaves_the_table_whole_and_a_rerun_converges() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let no = Opts::new();
    let (_a, a) = copy(&t);
    let clean = single(a.to_str().unwrap(), &no, &OrphanConfig::default()).unwrap();
    assert!(clean.deletion.total_files() >= 9);

    let rt = common::rt();
    let ctl = RunControl::default();
    let cfg = OrphanConfig::default();
    let table = rt.block_on(open(t.to_str().unwrap(), &no)).unwrap();
    let planned = rt.block_on(units::plan(&table, &cfg, &ctl)).unwrap();
    let mut merged = Vec::new();
    for u in &planned.units {
        let p = rt.block_on(units::execute(u, &no, &ctl)).unwrap();
        merged = units::merge(&merged, &p).unwrap();
    }
    let decided = rt
        .block_on(units::decide(&table, &cfg, &ctl, &planned.state, &merged))
        .unwrap();
    assert!(!decided.units.is_empty());
    // The first delete unit (the data files) fails after 1 deletion (an injected crash).
    let failing = RunControl {
        fail_after_deletes: Some(1),
        ..Default::default()
    };
    let e = rt
        .block_on(units::execute(&decided.units[0], &no, &failing))
        .unwrap_err();
    assert!(e.to_string().contains("injected"), "{e}");
    // Every version still reads the same rows.
    let v = common::all_versions_many(&[a.as_path(), t.as_path()]);
    assert_eq!(
        v[&a], v[&t],
        "a partial delete unit changed what versions read"
    );
    // A rerun (single process) converges to the clean run's end state.
    single(t.to_str().unwrap(), &no, &cfg).unwrap();
    assert_eq!(common::tree(&t), common::tree(&a));
    // And nothing is left to do.
    let again = run_units(t.to_str().unwrap(), &no, &no, &cfg, 11).unwrap();
    assert_eq!(
        again.deletion.total_files(),
        0,
        "{:?}",
        again.deletion.paths
    );
}

#[test]
fn units_on_s3_equal_the_single_process_run() {
    if common::python().is_none() {
        return;
    }
    let Some(srv) = common::s3_server() else {
        return;
    };
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let creds = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let (a, b) = (
        common::s3_table_uri("units-a"),
        common::s3_table_uri("units-b"),
    );
    common::s3_upload(&rt, &t, &a, &creds);
    common::s3_upload(&rt, &t, &b, &creds);
    // Object stores have no mtime control: cut off at "now" with no writer running.
    std::thread::sleep(Duration::from_millis(1100));
    let cfg = OrphanConfig {
        older_than_ms: Some(chrono::Utc::now().timestamp_millis()),
        no_writers_running: true,
        ..Default::default()
    };
    let one = single(&a, &creds, &cfg).unwrap();
    // The driver has the credentials; the units get them from the "host" only.
    let units = run_units(&b, &creds, &creds, &cfg, 42).unwrap();
    assert_eq!(comparable(&units), comparable(&one));
    assert!(one.deletion.total_files() >= 9, "{:?}", one.deletion.paths);
    assert_eq!(
        common::s3_tree(&rt, &a, &creds),
        common::s3_tree(&rt, &b, &creds)
    );
    // Without the credentials on the executing host, a unit cannot reach the store.
    let table = rt.block_on(open(&b, &creds)).unwrap();
    let ctl = RunControl::default();
    let planned = rt.block_on(units::plan(&table, &cfg, &ctl)).unwrap();
    let mut no_creds = creds.clone();
    no_creds.retain(|k, _| !k.contains("key"));
    let failed = planned
        .units
        .iter()
        .map(|u| rt.block_on(units::execute(u, &no_creds, &ctl)))
        .filter(|r| r.is_err())
        .count();
    assert!(failed > 0, "units ran without credentials");
}

/// Copies the files of the local table `t` whose relative path `young` says (false: the old
/// ones first) to `uri` on its (process-wide) memory store.
fn upload(
    rt: &tokio::runtime::Runtime,
    t: &Path,
    uri: &str,
    young: &BTreeSet<String>,
    which: bool,
) {
    let storage = Storage::open(uri, &Opts::new()).unwrap();
    let root = storage.root().clone();
    rt.block_on(async {
        for rel in common::tree(t).keys() {
            if young.contains(rel) == which {
                let bytes = std::fs::read(t.join(rel)).unwrap();
                storage
                    .put(&root.join(rel), bytes::Bytes::from(bytes))
                    .await
                    .unwrap();
            }
        }
    });
}

/// Files younger than the cut-off, some referenced (a partition's data files, half the
/// manifests) and some not (orphans): `referenced` counts every listed file a version
/// references whatever its age, `candidates` adds only the old unreferenced files. The
/// single-process run, the units and both on an object store report the same counts and
/// delete the same files; nothing young and nothing referenced is deleted.
#[test]
fn young_referenced_files_count_alike_in_every_mode() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let no = Opts::new();
    let day_ago = paimon_cleanup::clean::shared::clock::now_millis() - 86_400_000;
    let dry = OrphanConfig {
        dry_run: true,
        older_than_ms: Some(day_ago),
        ..Default::default()
    };
    // Everything old first.
    let all_old = single(t.to_str().unwrap(), &no, &dry).unwrap();
    let old_deleted = deleted(&all_old);

    // Then young: one partition (its data files are referenced, a planted changelog orphan is
    // not), every other manifest-directory file, and two fresh orphans.
    let mut young: BTreeSet<String> = BTreeSet::new();
    let files = common::tree(&t);
    let manifests: Vec<&String> = files
        .keys()
        .filter(|p| p.starts_with("manifest/"))
        .collect();
    for (i, rel) in manifests.iter().enumerate() {
        if i % 2 == 0 {
            young.insert((*rel).clone());
        }
    }
    young.extend(
        files
            .keys()
            .filter(|p| p.starts_with("dt=2024-01-01/hr=1/"))
            .cloned(),
    );
    for rel in [
        format!("dt=2024-01-01/hr=0/bucket-0/data-{}-0.parquet", uuid()),
        format!("manifest/manifest-{}-0", uuid()),
    ] {
        write(&t.join(&rel), b"young orphan");
        young.insert(rel);
    }
    for rel in &young {
        common::set_mtime(&t.join(rel), SystemTime::now());
    }
    let young_referenced: Vec<&String> = young
        .iter()
        .filter(|p| files.contains_key(*p) && !old_deleted.contains(*p))
        .collect();
    assert!(
        young_referenced.iter().any(|p| p.starts_with("dt="))
            && young_referenced.iter().any(|p| p.starts_with("manifest/")),
        "{young_referenced:?}"
    );
    let young_unreferenced = young.len() - young_referenced.len();
    assert!(young_unreferenced >= 3, "{young:?}");

    let one = single(t.to_str().unwrap(), &no, &dry).unwrap();
    // Referenced files count whatever their age; young unreferenced ones are no candidates.
    assert_eq!(one.referenced, all_old.referenced, "{one:?}");
    assert_eq!(one.files_listed, all_old.files_listed + 2);
    let expected: BTreeSet<String> = old_deleted.difference(&young).cloned().collect();
    assert_eq!(deleted(&one), expected);
    assert_eq!(
        one.candidates,
        all_old.candidates + 2 - young_unreferenced as u64
    );
    assert_eq!(
        one.candidates,
        one.referenced
            + one.vetoed
            + one.kept_name_referenced_elsewhere.len() as u64
            + one.deletion.total_files()
    );
    for seed in [7, 31] {
        let units = run_units(t.to_str().unwrap(), &no, &no, &dry, seed).unwrap();
        assert_eq!(comparable(&units), comparable(&one), "dry run, seed {seed}");
    }

    // Real runs on identical copies (keeping the young files young).
    let cfg = OrphanConfig {
        older_than_ms: Some(day_ago),
        ..Default::default()
    };
    let (_a, a) = copy(&t);
    let (_b, b) = copy(&t);
    for dst in [&a, &b] {
        for rel in &young {
            common::set_mtime(&dst.join(rel), SystemTime::now());
        }
    }
    let real = single(a.to_str().unwrap(), &no, &cfg).unwrap();
    let units = run_units(b.to_str().unwrap(), &no, &no, &cfg, 11).unwrap();
    assert_eq!(comparable(&units), comparable(&real));
    assert_eq!(
        (real.files_listed, real.candidates, real.referenced),
        (one.files_listed, one.candidates, one.referenced)
    );
    assert_eq!(deleted(&real), expected);
    assert_eq!(common::tree(&a), common::tree(&b));
    let left = common::tree(&a);
    assert!(
        young.iter().all(|p| left.contains_key(p)),
        "a young file went"
    );
    let gone: BTreeSet<String> = files
        .keys()
        .filter(|p| !left.contains_key(*p))
        .cloned()
        .collect();
    assert_eq!(gone, expected, "only the old orphans go");

    // On an object store (the process-wide memory store): the old files, the cut-off, then
    // the young files.
    let rt = common::rt();
    let uri = format!("memory://young-{}/w/t", uuid::Uuid::new_v4().simple());
    let units_uri = format!("memory://young-{}/w/t", uuid::Uuid::new_v4().simple());
    for u in [&uri, &units_uri] {
        upload(&rt, &t, u, &young, false);
    }
    std::thread::sleep(Duration::from_millis(20));
    let cutoff = paimon_cleanup::clean::shared::clock::now_millis();
    std::thread::sleep(Duration::from_millis(20));
    for u in [&uri, &units_uri] {
        upload(&rt, &t, u, &young, true);
    }
    let store_cfg = OrphanConfig {
        older_than_ms: Some(cutoff),
        no_writers_running: true,
        ..Default::default()
    };
    let remote = single(&uri, &no, &store_cfg).unwrap();
    let remote_units = run_units(&units_uri, &no, &no, &store_cfg, 5).unwrap();
    assert_eq!(comparable(&remote_units), comparable(&remote));
    assert_eq!(
        (remote.files_listed, remote.candidates, remote.referenced),
        (one.files_listed, one.candidates, one.referenced)
    );
    assert_eq!(deleted(&remote), expected);
}

/// What an engine's sharded run holds between its steps.
struct Sharded {
    table: Table,
    state: Vec<u8>,
    summary: Vec<u8>,
    /// Every unit's pieces of each shard, merged.
    pieces: Vec<Vec<u8>>,
}

/// Plans, executes every plan unit (random order), splits each result into `shards` pieces and
/// merges the pieces of each shard and the summaries (random grouping), through bytes.
fn shard_units(
    uri: &str,
    opts: &Opts,
    host: &Opts,
    cfg: &OrphanConfig,
    rng: &mut Rng,
    shards: u32,
) -> paimon_cleanup::Result<Sharded> {
    let ctl = RunControl::default();
    let rt = common::rt();
    let table = rt.block_on(open(uri, opts))?;
    let planned = rt.block_on(units::plan(&table, cfg, &ctl))?;
    let mut todo = planned.units.clone();
    rng.shuffle(&mut todo);
    let mut summaries = Vec::new();
    let mut by_shard: Vec<Vec<Vec<u8>>> = vec![Vec::new(); shards as usize];
    for u in &todo {
        let part = rt.block_on(units::execute(u, host, &ctl))?;
        let split = units::split(&part, shards)?;
        assert_eq!(split.shards.len(), shards as usize);
        summaries.push(split.summary);
        for (s, piece) in split.shards.into_iter().enumerate() {
            by_shard[s].push(piece);
        }
    }
    Ok(Sharded {
        table,
        state: planned.state,
        summary: merge_randomly(rng, summaries),
        pieces: by_shard
            .into_iter()
            .map(|p| merge_randomly(rng, p))
            .collect(),
    })
}

/// Byte strings of one kind (reports, units).
type Buffers = Vec<Vec<u8>>;

/// Every shard decided with `gate`: the reports and the delete units.
fn decide_shards(
    s: &Sharded,
    cfg: &OrphanConfig,
    gate: &[u8],
) -> paimon_cleanup::Result<(Buffers, Buffers)> {
    let rt = common::rt();
    let ctl = RunControl::default();
    let mut reports = Vec::new();
    let mut deletes = Vec::new();
    for (i, piece) in s.pieces.iter().enumerate() {
        let d = rt.block_on(units::decide_shard(
            &s.table, cfg, &ctl, gate, i as u32, piece,
        ))?;
        reports.push(d.report);
        deletes.extend(d.units);
    }
    Ok((reports, deletes))
}

/// The sharded run as an engine runs it: units, split, shuffle by shard, gate, shard
/// decisions, gate again until it confirms, conclude, delete units (random order), finish.
fn run_sharded(
    uri: &str,
    opts: &Opts,
    cfg: &OrphanConfig,
    seed: u64,
    shards: u32,
) -> paimon_cleanup::Result<OrphanReport> {
    let mut rng = Rng(seed | 1);
    let no = Opts::new();
    let s = shard_units(uri, opts, &no, cfg, &mut rng, shards)?;
    let rt = common::rt();
    let ctl = RunControl::default();
    let mut gated = rt.block_on(units::gate(&s.table, &ctl, &s.state, &s.summary, shards))?;
    assert!(gated.decide, "the first gate always lets the shards decide");
    let (reports, mut deletes) = loop {
        let decided = decide_shards(&s, cfg, &gated.gate)?;
        gated = rt.block_on(units::gate(
            &s.table,
            &ctl,
            &gated.state,
            &s.summary,
            shards,
        ))?;
        if !gated.decide {
            break decided;
        }
    };
    rng.shuffle(&mut deletes);
    let refs: Vec<&[u8]> = reports.iter().map(Vec::as_slice).collect();
    let decision = units::conclude(&gated.state, &s.summary, &refs)?;
    let mut parts = Vec::new();
    for u in &deletes {
        parts.push(rt.block_on(units::execute(u, &no, &ctl))?);
    }
    let merged = merge_randomly(&mut rng, parts);
    rt.block_on(units::finish(&s.table, &ctl, &decision, &merged))
}

#[test]
fn the_sharded_decision_equals_the_single_process_run() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let no = Opts::new();
    let tree = common::tree(&t);
    let day_ago = paimon_cleanup::clean::shared::clock::now_millis() - 86_400_000;
    let dry = OrphanConfig {
        dry_run: true,
        older_than_ms: Some(day_ago),
        ..Default::default()
    };
    let one = single(t.to_str().unwrap(), &no, &dry).unwrap();
    assert!(one.deletion.total_files() >= 9, "{:?}", one.deletion.paths);
    for (seed, shards) in [(3, 1), (17, 3), (2024, 16), (8, 257)] {
        let sharded = run_sharded(t.to_str().unwrap(), &no, &dry, seed, shards).unwrap();
        assert_eq!(
            comparable(&sharded),
            comparable(&one),
            "dry run, {shards} shards"
        );
    }
    assert_eq!(common::tree(&t), tree, "a dry run changed files");

    for (seed, shards) in [(5, 4), (99, 64)] {
        let (_a, a) = copy(&t);
        let (_b, b) = copy(&t);
        let cfg = OrphanConfig {
            older_than_ms: Some(day_ago),
            ..Default::default()
        };
        let one = single(a.to_str().unwrap(), &no, &cfg).unwrap();
        let sharded = run_sharded(b.to_str().unwrap(), &no, &cfg, seed, shards).unwrap();
        assert_eq!(comparable(&sharded), comparable(&one), "{shards} shards");
        assert_eq!(deleted(&sharded), deleted(&dry_of(&t)), "{shards} shards");
        assert_eq!(common::tree(&a), common::tree(&b), "{shards} shards");
        let v = common::all_versions_many(&[t.as_path(), b.as_path()]);
        assert_eq!(v[&t], v[&b], "{shards} shards: versions changed");
    }
}

#[test]
fn a_missing_doubled_or_stale_shard_is_refused() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let no = Opts::new();
    let cfg = OrphanConfig::default();
    let rt = common::rt();
    let ctl = RunControl::default();
    let tree = common::tree(&t);
    let shards = 4;
    let mut rng = Rng(11);
    let s = shard_units(t.to_str().unwrap(), &no, &no, &cfg, &mut rng, shards).unwrap();

    // No summary: every unit is missing.
    let e = rt
        .block_on(units::gate(&s.table, &ctl, &s.state, &[], shards))
        .unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    // A summary merged with itself: refused by the merge (every unit twice).
    assert!(units::merge(&s.summary, &s.summary).is_err());
    // Pieces of two shards do not merge; whole results and pieces do not either.
    assert!(units::merge(&s.pieces[0], &s.pieces[1]).is_err());
    assert!(units::merge(&s.pieces[0], &s.summary).is_err());
    // Another shard count than the split's.
    assert!(rt
        .block_on(units::gate(
            &s.table,
            &ctl,
            &s.state,
            &s.summary,
            shards + 1
        ))
        .is_err());

    let gated = rt
        .block_on(units::gate(&s.table, &ctl, &s.state, &s.summary, shards))
        .unwrap();
    assert!(gated.decide);
    // A shard given another shard's piece, or a piece without every unit: refused.
    let e = rt
        .block_on(units::decide_shard(
            &s.table,
            &cfg,
            &ctl,
            &gated.gate,
            0,
            &s.pieces[1],
        ))
        .unwrap_err();
    assert!(e.to_string().contains("shard 0"), "{e}");
    let split_again = {
        let planned = rt.block_on(units::plan(&s.table, &cfg, &ctl)).unwrap();
        let part = rt
            .block_on(units::execute(&planned.units[0], &no, &ctl))
            .unwrap();
        units::split(&part, shards).unwrap()
    };
    let e = rt
        .block_on(units::decide_shard(
            &s.table,
            &cfg,
            &ctl,
            &gated.gate,
            0,
            &split_again.shards[0],
        ))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // A split result cannot be split again.
    assert!(units::split(&s.pieces[0], 2).is_err());
    assert!(units::split(&s.summary, 2).is_err());

    let (reports, _) = decide_shards(&s, &cfg, &gated.gate).unwrap();
    let refs: Vec<&[u8]> = reports.iter().map(Vec::as_slice).collect();
    // Not confirmed yet: the gate must run again after the shards decided.
    let e = units::conclude(&gated.state, &s.summary, &refs).unwrap_err();
    assert!(e.to_string().contains("not confirmed"), "{e}");
    let confirmed = rt
        .block_on(units::gate(
            &s.table,
            &ctl,
            &gated.state,
            &s.summary,
            shards,
        ))
        .unwrap();
    assert!(!confirmed.decide, "no version appeared");
    // A shard missing (each in turn), or one twice: refused.
    for skip in 0..reports.len() {
        let some: Vec<&[u8]> = refs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, r)| *r)
            .collect();
        let e = units::conclude(&confirmed.state, &s.summary, &some).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        let mut twice = refs.clone();
        twice[skip] = refs[(skip + 1) % refs.len()];
        let e = units::conclude(&confirmed.state, &s.summary, &twice).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
    }
    let mut extra = refs.clone();
    extra.push(refs[0]);
    assert!(units::conclude(&confirmed.state, &s.summary, &extra).is_err());
    assert_eq!(common::tree(&t), tree, "files changed");
    // All of them: a decision.
    units::conclude(&confirmed.state, &s.summary, &refs).unwrap();
}

#[test]
fn a_version_appearing_while_the_shards_decide_starts_a_new_round() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let no = Opts::new();
    let cfg = OrphanConfig::default();
    let rt = common::rt();
    let ctl = RunControl::default();
    let shards = 3;
    let mut rng = Rng(5);
    let s = shard_units(t.to_str().unwrap(), &no, &no, &cfg, &mut rng, shards).unwrap();
    let first = rt
        .block_on(units::gate(&s.table, &ctl, &s.state, &s.summary, shards))
        .unwrap();
    let (stale, _) = decide_shards(&s, &cfg, &first.gate).unwrap();
    // A commit lands meanwhile: a new snapshot (naming the latest one's manifest lists).
    let last = std::fs::read_dir(t.join("snapshot"))
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().into_string().unwrap();
            n.strip_prefix("snapshot-")?.parse::<i64>().ok()
        })
        .max()
        .unwrap();
    let latest = std::fs::read(t.join(format!("snapshot/snapshot-{last}"))).unwrap();
    let mut snap: serde_json::Value = serde_json::from_slice(&latest).unwrap();
    snap["id"] = serde_json::json!(last + 1);
    std::fs::write(
        t.join(format!("snapshot/snapshot-{}", last + 1)),
        serde_json::to_vec(&snap).unwrap(),
    )
    .unwrap();
    let second = rt
        .block_on(units::gate(
            &s.table,
            &ctl,
            &first.state,
            &s.summary,
            shards,
        ))
        .unwrap();
    assert!(second.decide, "a new version starts a new round");
    // The stale round's reports are refused, even once a gate confirms.
    let confirmed = rt
        .block_on(units::gate(
            &s.table,
            &ctl,
            &second.state,
            &s.summary,
            shards,
        ))
        .unwrap();
    assert!(!confirmed.decide);
    let refs: Vec<&[u8]> = stale.iter().map(Vec::as_slice).collect();
    let e = units::conclude(&confirmed.state, &s.summary, &refs).unwrap_err();
    assert!(e.to_string().contains("round"), "{e}");
    // The new round's reports conclude; the confirming gate keeps the round.
    let (fresh, _) = decide_shards(&s, &cfg, &second.gate).unwrap();
    let refs: Vec<&[u8]> = fresh.iter().map(Vec::as_slice).collect();
    units::conclude(&confirmed.state, &s.summary, &refs).unwrap();
}

#[test]
fn unreadable_metadata_fails_the_sharded_gate_with_nothing_deleted() {
    let Some((_tmp, t)) = old_table("append_unaware") else {
        return;
    };
    let snap: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.join("snapshot/snapshot-4")).unwrap()).unwrap();
    let list = snap["deltaManifestList"].as_str().unwrap();
    let list_path = t.join("manifest").join(list);
    let metas = paimon_cleanup::spec::manifest::decode_manifest_list(
        &std::fs::read(&list_path).unwrap(),
        list_path.to_str().unwrap(),
    )
    .unwrap();
    let manifest = metas[0].file_name.clone();
    let path = t.join("manifest").join(&manifest);
    let saved = std::fs::read(&path).unwrap();
    std::fs::write(&path, &saved[..saved.len() / 2]).unwrap();
    let tree = common::tree(&t);
    let e = run_sharded(
        t.to_str().unwrap(),
        &Opts::new(),
        &OrphanConfig::default(),
        7,
        4,
    )
    .unwrap_err();
    assert!(e.to_string().contains(&manifest), "{e}");
    assert_eq!(common::tree(&t), tree, "files changed");
}
