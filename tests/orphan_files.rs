//! Orphan file removal on pypaimon-written and Java-written tables.
//!
//! What may be deleted is restated independently here (`expected_orphans`): the directory rules
//! of spec §5.6 applied to the files on disk, with "referenced" taken from
//! `tests/py/referenced_files.py` (fastavro only, no code of this crate). pypaimon checks that
//! every version reads the same rows before and after.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use paimon_cleanup::clean::{
    remove_orphan_files, CancelToken, OrphanConfig, OrphanReport, RunControl,
};
use paimon_cleanup::storage::{Location, Storage};
use paimon_cleanup::table::Table;
use paimon_cleanup::Error;

const DAY: Duration = Duration::from_secs(86_400);

fn two_days_ago() -> SystemTime {
    SystemTime::now() - 2 * DAY
}

fn run(table: &Path, cfg: &OrphanConfig) -> paimon_cleanup::Result<OrphanReport> {
    run_with(table, cfg, &HashMap::new(), &RunControl::default())
}

fn run_with(
    table: &Path,
    cfg: &OrphanConfig,
    overrides: &HashMap<String, String>,
    ctl: &RunControl,
) -> paimon_cleanup::Result<OrphanReport> {
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), overrides)?);
    common::rt().block_on(async {
        let t = Table::open(storage, overrides).await?;
        remove_orphan_files(&t, cfg, ctl).await
    })
}

fn dry() -> OrphanConfig {
    OrphanConfig {
        dry_run: true,
        ..Default::default()
    }
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn deleted(r: &OrphanReport) -> BTreeSet<String> {
    r.deletion.paths.iter().map(|p| p.path.clone()).collect()
}

/// What fastavro says the table's versions reference (names).
struct Referenced {
    manifest_dir: BTreeSet<String>,
    index: BTreeSet<String>,
    statistics: BTreeSet<String>,
    data: BTreeSet<String>,
}

impl Referenced {
    fn of(v: &serde_json::Value) -> Self {
        let set = |k: &str| -> BTreeSet<String> {
            v[k].as_array()
                .unwrap_or_else(|| panic!("referenced_files.py: no {k}: {v}"))
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        };
        Referenced {
            manifest_dir: set("manifest_dir"),
            index: set("index"),
            statistics: set("statistics"),
            data: set("data"),
        }
    }
}

/// True for a temp-file name in `snapshot/` or `changelog/` (not `<prefix><id>` or a hint).
fn is_temp(dir: &str, name: &str) -> bool {
    let prefix = format!("{dir}-");
    let versioned = name
        .strip_prefix(&prefix)
        .is_some_and(|id| id.parse::<i64>().is_ok());
    !(versioned || name == "EARLIEST" || name == "LATEST")
}

/// True if `comps` (relative to a data root) is a file in a bucket directory, or in a
/// last-level partition directory without bucket directories.
fn in_data_dir(root: &Path, comps: &[&str], levels: usize) -> bool {
    let n = comps.len();
    let partitions_ok = |k: usize| comps[..k].iter().all(|c| c.contains('='));
    if n == levels + 2 && partitions_ok(levels) && comps[levels].starts_with("bucket-") {
        return true;
    }
    if levels > 0 && n == levels + 1 && partitions_ok(levels) {
        let dir = comps[..levels]
            .iter()
            .fold(root.to_path_buf(), |p, c| p.join(c));
        let has_buckets = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .any(|e| e.path().is_dir() && e.file_name().to_string_lossy().starts_with("bucket-"));
        return !has_buckets;
    }
    false
}

/// Every regular file under `dir` with its path components relative to `dir`.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                let comps = p
                    .strip_prefix(dir)
                    .unwrap()
                    .components()
                    .map(|c| c.as_os_str().to_str().unwrap().to_string())
                    .collect();
                out.push((p, comps));
            }
        }
    }
    out
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

/// The files spec §5.6 allows deleting, restated: old, unreferenced, and in `manifest/`,
/// `index/`, `statistics/`, a data directory of the table or of an external root, or a temp
/// file in `snapshot/` / `changelog/` of a branch. Paths as the report gives them.
fn expected_orphans(
    table: &Path,
    ext_roots: &[PathBuf],
    levels: usize,
    r: &Referenced,
    cutoff: SystemTime,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let old = |p: &Path| mtime(p) < cutoff;
    for (p, comps) in files_under(table) {
        if !old(&p) {
            continue;
        }
        let c: Vec<&str> = comps.iter().map(String::as_str).collect();
        let name = c[c.len() - 1];
        let orphan = match c.as_slice() {
            ["manifest", n] => !r.manifest_dir.contains(*n),
            ["index", n] => !r.index.contains(*n),
            ["statistics", n] => !r.statistics.contains(*n),
            [d @ ("snapshot" | "changelog"), n] => is_temp(d, n),
            ["branch", b, d @ ("snapshot" | "changelog"), n] if b.starts_with("branch-") => {
                is_temp(d, n)
            }
            _ => {
                in_data_dir(table, &c, levels)
                    && !name.ends_with(".managed.blob")
                    && !r.data.contains(name)
                    && !r.index.contains(name)
            }
        };
        if orphan {
            out.insert(comps.join("/"));
        }
    }
    for root in ext_roots {
        for (p, comps) in files_under(root) {
            let c: Vec<&str> = comps.iter().map(String::as_str).collect();
            let name = c[c.len() - 1];
            if old(&p)
                && in_data_dir(root, &c, levels)
                && !name.ends_with(".managed.blob")
                && !r.data.contains(name)
                && !r.index.contains(name)
            {
                out.insert(format!("file://{}", p.display()));
            }
        }
    }
    out
}

/// Every version pypaimon read before reads the same rows and files after.
fn assert_same_versions(
    name: &str,
    before: &serde_json::Map<String, serde_json::Value>,
    after: &serde_json::Map<String, serde_json::Value>,
) {
    assert!(!before.is_empty(), "{name}: no versions");
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "{name}: versions"
    );
    for (k, v) in before {
        assert!(
            v.get("error").is_none(),
            "{name}: {k} unreadable before: {v}"
        );
        let a = &after[k];
        assert!(
            a.get("error").is_none(),
            "{name}: {k} unreadable after: {a}"
        );
        for field in [
            "row_digest",
            "row_count",
            "live_files",
            "deletion_vector_files",
            "changelog_files",
        ] {
            assert_eq!(v[field], a[field], "{name}: {k}: {field} changed");
        }
    }
}

fn snapshot_json(table: &Path, rel: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(table.join(rel)).unwrap()).unwrap()
}

fn lists_of(snapshot: &serde_json::Value) -> Vec<String> {
    ["baseManifestList", "deltaManifestList"]
        .iter()
        .map(|k| format!("manifest/{}", snapshot[*k].as_str().unwrap()))
        .collect()
}

/// Real orphans of every kind on a table with tags, a branch, partitions and escaping:
/// a rollback, a prepared-but-uncommitted write, stray files, a leftover temp snapshot, a
/// deleted tag and a dropped branch. Exactly the unreferenced old files go; young files,
/// protected files and everything outside the candidate directories stay; a dry run reports
/// the same set and changes nothing; every version reads the same rows.
#[test]
fn real_orphans_go_and_nothing_else() {
    let Some((_tmp, t, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let py = common::python().unwrap();

    // A prepared-but-uncommitted write: into an existing partition and a new one.
    let rows = r#"[{"id": 900, "v": "u", "dt": "uncommitted", "hr": 7},
                  {"id": 901, "v": "u", "dt": "2024-01-01", "hr": 1}]"#;
    let out = common::run_py(&py, "uncommitted_write.py", &[t.to_str().unwrap(), rows]).unwrap();
    let uncommitted: Vec<String> = serde_json::from_str(&out).unwrap();
    assert_eq!(uncommitted.len(), 2, "{out}");

    // Rollback from 6 to 4; tag keep5 still holds snapshot 5.
    let s5 = snapshot_json(&t, "snapshot/snapshot-5");
    let s6 = snapshot_json(&t, "snapshot/snapshot-6");
    std::fs::copy(t.join("snapshot/snapshot-5"), t.join("tag/tag-keep5")).unwrap();
    std::fs::remove_file(t.join("snapshot/snapshot-5")).unwrap();
    std::fs::remove_file(t.join("snapshot/snapshot-6")).unwrap();
    write(&t.join("snapshot/LATEST"), b"4");
    // A deleted tag: gone1 kept snapshot 1 after it expired; then the tag was deleted.
    let s1 = snapshot_json(&t, "snapshot/snapshot-1");
    std::fs::copy(t.join("snapshot/snapshot-1"), t.join("tag/tag-gone1")).unwrap();
    std::fs::remove_file(t.join("snapshot/snapshot-1")).unwrap();
    std::fs::remove_file(t.join("tag/tag-gone1")).unwrap();
    // A dropped branch: b1's own commit (its snapshot 3) is now unreferenced.
    let b1s3 = snapshot_json(&t, "branch/branch-b1/snapshot/snapshot-3");
    std::fs::remove_dir_all(t.join("branch/branch-b1")).unwrap();

    // Stray files.
    // Written only by snapshot 3, which stays.
    let live_dir = "dt=a%2Fb/hr=1/bucket-0";
    let live_name = std::fs::read_dir(t.join(live_dir))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_str().unwrap().to_string())
        .find(|n| n.starts_with("data-") && !uncommitted.iter().any(|u| u.ends_with(n)))
        .unwrap();
    let stray_data = format!("dt=2024-01-01/hr=0/bucket-0/data-{}-0.parquet", uuid());
    let copied_data = format!("dt=x%3Dy/hr=0/bucket-0/data-{}-0.parquet", uuid());
    let same_name_elsewhere = format!("dt=x%3Dy/hr=0/bucket-0/{live_name}");
    let stray_manifest = format!("manifest/manifest-{}-0", uuid());
    let success_marker = "dt=2024-01-03/hr=0/_SUCCESS".to_string();
    write(&t.join(&stray_data), b"not parquet");
    std::fs::copy(t.join(live_dir).join(&live_name), t.join(&copied_data)).unwrap();
    std::fs::copy(
        t.join(live_dir).join(&live_name),
        t.join(&same_name_elsewhere),
    )
    .unwrap();
    std::fs::copy(
        t.join("manifest")
            .join(s6["deltaManifestList"].as_str().unwrap()),
        t.join(&stray_manifest),
    )
    .unwrap();
    write(&t.join(&success_marker), b"{}");
    // Leftover temp files in snapshot/ and changelog/.
    let temps = [
        format!("snapshot/.snapshot-7.{}.tmp", uuid()),
        format!("snapshot/.LATEST.{}.tmp", uuid()),
        format!("changelog/.changelog-2.{}.tmp", uuid()),
    ];
    for f in &temps {
        write(&t.join(f), b"{}");
    }
    // Old and unreferenced, but outside what orphan cleanup may touch.
    let untouchable = [
        format!("schema/.schema-1.{}.tmp", uuid()),
        format!("consumer/.consumer-c2.{}.tmp", uuid()),
        "service/service-1".to_string(),
        "metadata/v1.metadata.json".to_string(),
        "README.txt".to_string(),
        "misc/data-x.parquet".to_string(),
        "notapartition/hr=0/bucket-0/data-y.parquet".to_string(),
        "dt=2024-01-01/stray-at-level-1.parquet".to_string(),
        "dt=2024-01-01/hr=0/bucket-0/pack.managed.blob".to_string(),
        "dt=2024-01-01/hr=0/bucket-0/sub/data-z.parquet".to_string(),
    ];
    for f in &untouchable {
        write(&t.join(f), b"x");
    }
    common::set_tree_mtime(&t, two_days_ago());
    // Young orphans: inside the window, kept.
    let young = [
        format!("dt=2024-01-01/hr=1/bucket-0/data-{}-0.parquet", uuid()),
        format!("manifest/manifest-{}-0", uuid()),
        format!("snapshot/.snapshot-8.{}.tmp", uuid()),
    ];
    for f in &young {
        write(&t.join(f), b"young");
    }

    let before = common::all_versions(&t);
    let referenced = Referenced::of(&common::referenced_files(&[&t])[&t]);
    // A tag success-file directory (P17); pypaimon cannot list tags beside it, so it is only
    // there while this crate runs.
    let success_file = t.join("tag/tag-success-file/keep5_SUCCESS");
    write(&success_file, b"{}");
    common::set_mtime(&success_file, two_days_ago());
    let expected = expected_orphans(&t, &[], 2, &referenced, SystemTime::now() - DAY);

    // Every scenario contributed, and nothing it must keep is expected.
    let mut must: Vec<String> = vec![
        stray_data.clone(),
        copied_data.clone(),
        stray_manifest.clone(),
        success_marker.clone(),
    ];
    must.extend(temps.iter().cloned());
    must.extend(uncommitted.iter().cloned());
    must.extend(lists_of(&s6));
    must.extend(lists_of(&s1));
    must.extend(lists_of(&b1s3));
    for f in &must {
        assert!(
            expected.contains(f),
            "{f} should be an orphan: {expected:#?}"
        );
    }
    assert!(
        expected.iter().any(|f| f.starts_with("dt=branch-only/")),
        "the dropped branch's data: {expected:#?}"
    );
    for f in lists_of(&s5)
        .iter()
        .chain(untouchable.iter())
        .chain(young.iter())
        .chain(std::iter::once(&same_name_elsewhere))
    {
        assert!(!expected.contains(f), "{f} must stay");
    }

    // Dry run: the same set, nothing changed.
    let tree = common::tree(&t);
    let d = run(&t, &dry()).unwrap();
    assert_eq!(common::tree(&t), tree, "dry run changed files");
    assert_eq!(deleted(&d), expected, "dry run set");
    assert_eq!(d.deletion.dirs_removed, 0);

    // Real run.
    let r = run(&t, &OrphanConfig::default()).unwrap();
    assert_eq!(deleted(&r), expected, "deleted set");
    assert!(r.deletion.failed.is_empty(), "{:?}", r.deletion.failed);
    assert_eq!(
        r.kept_name_referenced_elsewhere,
        vec![same_name_elsewhere.clone()]
    );
    let mut left = tree.clone();
    for f in &expected {
        left.remove(f);
    }
    assert_eq!(common::tree(&t), left, "files left");
    for gone in ["dt=branch-only", "dt=uncommitted", "dt=2024-01-03"] {
        assert!(!t.join(gone).exists(), "{gone} should be pruned");
    }
    assert!(r.deletion.dirs_removed >= 6, "{}", r.deletion.dirs_removed);
    assert_eq!(r.candidates, r.referenced + 1 + expected.len() as u64);
    assert!(r.versions_read >= 5, "{r:?}");

    assert!(success_file.exists());
    std::fs::remove_dir_all(t.join("tag/tag-success-file")).unwrap();
    let after = common::all_versions(&t);
    assert_same_versions("append_unaware", &before, &after);
    assert!(after.contains_key("tag:keep5"));

    // A second run finds nothing.
    let again = run(&t, &OrphanConfig::default()).unwrap();
    assert_eq!(
        again.deletion.total_files(),
        0,
        "{:?}",
        again.deletion.paths
    );
    eprintln!(
        "append_unaware: {} files listed, {} candidates, {} referenced, {} deleted ({} bytes), {} dirs removed, {} versions, {} manifests read, {} ms",
        r.files_listed,
        r.candidates,
        r.referenced,
        r.deletion.total_files(),
        r.deletion.total_bytes(),
        r.deletion.dirs_removed,
        r.versions_read,
        r.manifests_read,
        r.elapsed_ms
    );
}

/// Every pypaimon table (tags, branch, consumer, changelog files, dynamic-bucket index files,
/// deletion vectors, overwrites, external data paths) with every file old: only unreferenced
/// files go (none, except the strays planted in the external root), and every version reads
/// the same rows.
#[test]
fn every_pypaimon_table_with_old_files() {
    let Some((_, tables)) = common::pypaimon_warehouse() else {
        return;
    };
    let mut copies = Vec::new();
    for entry in tables["tables"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap().to_string();
        let (tmp, path, entry) = common::pypaimon_table(&name).unwrap();
        copies.push((name, tmp, path, entry, Vec::<PathBuf>::new()));
    }
    let (ext_wh, ext_path, ext_entry) = common::pypaimon_fresh_table("external_paths").unwrap();
    let ext_roots: Vec<PathBuf> = ext_entry["options"]["data-file.external-paths"]
        .as_str()
        .unwrap()
        .split(',')
        .map(|r| PathBuf::from(r.trim().trim_start_matches("file://")))
        .collect();
    // Strays in an external root: one in a bucket dir (an orphan), one elsewhere (kept).
    let ext_stray = ext_roots[0].join(format!("p=0/bucket-0/data-{}-0.parquet", uuid()));
    write(&ext_stray, b"stray");
    write(&ext_roots[0].join("elsewhere/data-q.parquet"), b"x");
    for r in &ext_roots {
        common::set_tree_mtime(r, two_days_ago());
    }
    copies.push((
        "external_paths".to_string(),
        ext_wh,
        ext_path,
        ext_entry,
        ext_roots.clone(),
    ));
    for c in &copies {
        common::set_tree_mtime(&c.2, two_days_ago());
    }

    let dirs: Vec<&Path> = copies.iter().map(|c| c.2.as_path()).collect();
    let before = common::all_versions_many(&dirs);
    let refs = common::referenced_files(&dirs);
    for (name, _, path, entry, roots) in &copies {
        let levels = entry["partition_keys"].as_array().unwrap().len();
        let expected = expected_orphans(
            path,
            roots,
            levels,
            &Referenced::of(&refs[path]),
            SystemTime::now() - DAY,
        );
        // The external roots of `external_paths` are its own: cleaning them is opted into.
        let cfg = OrphanConfig {
            external_roots_owned: !roots.is_empty(),
            ..Default::default()
        };
        let r = run(path, &cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(deleted(&r), expected, "{name}: deleted set");
        assert!(r.candidates > 0 && r.versions_read > 0, "{name}: {r:?}");
        assert!(
            r.deletion.failed.is_empty(),
            "{name}: {:?}",
            r.deletion.failed
        );
        if name == "external_paths" {
            assert_eq!(
                expected,
                BTreeSet::from([format!("file://{}", ext_stray.display())]),
                "{name}"
            );
            assert_eq!(r.external_roots.len(), 2, "{r:?}");
        } else {
            assert!(expected.is_empty(), "{name}: {expected:?}");
        }
        eprintln!(
            "{name}: {} candidates, {} referenced, {} deleted, {} versions, {} manifests, {} ms",
            r.candidates,
            r.referenced,
            r.deletion.total_files(),
            r.versions_read,
            r.manifests_read,
            r.elapsed_ms
        );
    }
    assert!(ext_roots[0].join("elsewhere/data-q.parquet").exists());
    let after = common::all_versions_many(&dirs);
    for (name, _, path, _, _) in &copies {
        assert_same_versions(name, &before[path], &after[path]);
    }
}

/// Number of partition keys in the latest `schema/schema-N` of a table.
fn partition_levels(table: &Path) -> usize {
    let latest = std::fs::read_dir(table.join("schema"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix("schema-")?
                .parse::<i64>()
                .ok()
        })
        .max()
        .unwrap();
    let schema = snapshot_json(table, &format!("schema/schema-{latest}"));
    schema["partitionKeys"].as_array().unwrap().len()
}

/// Every Java-written fixture table, copied, every file made old: exactly the files no version
/// references are deleted, and pypaimon reads every version of the tables that lost files as
/// before. For these tables that is nothing at all, except eight files in five tables that
/// their authors left unreferenced (two stray test assets dropped into bucket directories by
/// paimon-cpp's authors, a superseded commit's data file, manifest and lists in
/// `parquet/append_with_bitmap`, and two unreferenced data files in primary-key tables).
#[test]
fn java_fixture_tables_lose_nothing() {
    let Some(fixtures) = common::fixtures_dir() else {
        return;
    };
    if common::python().is_none() {
        return;
    }
    let tables = common::fixture_tables(&fixtures);
    assert!(tables.len() >= 90, "{}", tables.len());
    let mut copies = Vec::new();
    for src in &tables {
        let rel = src.strip_prefix(&fixtures).unwrap().display().to_string();
        let (tmp, t) = common::copy_table(src);
        common::set_tree_mtime(&t, two_days_ago());
        copies.push((rel, tmp, t));
    }
    let dirs: Vec<&Path> = copies.iter().map(|c| c.2.as_path()).collect();
    let refs = common::referenced_files(&dirs);
    let mut plans = Vec::new();
    for (rel, _, t) in &copies {
        // An external root that exists on this machine is none of this test's business.
        let mut overrides = HashMap::new();
        let storage = Storage::open(t.to_str().unwrap(), &HashMap::new()).unwrap();
        let roots = common::rt()
            .block_on(Table::open(Arc::new(storage), &HashMap::new()))
            .unwrap()
            .options()
            .data_file_external_paths();
        if roots
            .iter()
            .filter_map(|r| Location::parse(r).ok())
            .any(|l| l.local_path().is_none_or(|p| p.exists()))
        {
            eprintln!("{rel}: external roots {roots:?} exist here; not listing them");
            overrides.insert(
                "data-file.external-paths".to_string(),
                t.join("no-such-external-root").display().to_string(),
            );
        }
        let expected = expected_orphans(
            t,
            &[],
            partition_levels(t),
            &Referenced::of(&refs[t]),
            SystemTime::now() - DAY,
        );
        plans.push((rel, t, overrides, expected));
    }
    let losing: Vec<&Path> = plans
        .iter()
        .filter(|p| !p.3.is_empty())
        .map(|p| p.1.as_path())
        .collect();
    let before = common::all_versions_many(&losing);

    let (mut candidates, mut versions) = (0, 0);
    let mut all_deleted = Vec::new();
    for (rel, t, overrides, expected) in &plans {
        let tree = common::tree(t);
        let r = run_with(
            t,
            &OrphanConfig::default(),
            overrides,
            &RunControl::default(),
        )
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(&deleted(&r), expected, "{rel}: deleted set");
        assert!(r.kept_name_referenced_elsewhere.is_empty(), "{rel}: {r:?}");
        let mut left = tree.clone();
        for f in expected {
            left.remove(f);
        }
        assert_eq!(common::tree(t), left, "{rel}: files left");
        if t.join("snapshot").exists() {
            assert!(r.candidates > 0 && r.versions_read > 0, "{rel}: {r:?}");
        }
        candidates += r.candidates;
        versions += r.versions_read;
        all_deleted.extend(expected.iter().map(|f| format!("{rel}/{f}")));
    }

    // pypaimon: the same view of every version after (where it can read the table at all),
    // and no deleted file was live in any version.
    let after = common::all_versions_many(&losing);
    let mut readable = 0;
    for t in &losing {
        assert_eq!(
            before[*t],
            after[*t],
            "{}: pypaimon's view changed",
            t.display()
        );
        for v in before[*t].values() {
            if let Some(live) = v["live_files"].as_array() {
                readable += 1;
                for f in live {
                    assert!(t.join(f.as_str().unwrap()).exists(), "{f} deleted");
                }
            }
        }
    }
    eprintln!(
        "{} fixture tables: {candidates} candidates, {versions} versions read; deleted {} files in {} tables ({readable} versions readable by pypaimon): {all_deleted:#?}",
        tables.len(),
        all_deleted.len(),
        losing.len()
    );
    let known: BTreeSet<&str> = [
        "append_with_bitmap_multi_stripes.db/append_with_bitmap_multi_stripes/bucket-0/data-multi-row-groups.parquet",
        "orc/append_with_multiple_ts_precision_and_timezone.db/append_with_multiple_ts_precision_and_timezone/bucket-0/cpp_paimon_write_apache_orc_9.orc",
        "orc/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv/f1=10/bucket-1/data-0b9eadf8-7773-4de7-8f02-3765934f62b7-0.orc",
        "parquet/append_with_bitmap.db/append_with_bitmap/bucket-0/data-5816f838-a213-4d34-89c3-2cab0fa8c0cb-0.parquet",
        "parquet/append_with_bitmap.db/append_with_bitmap/manifest/manifest-53092f56-6f7d-4dae-bffb-c1b4075cfca3-0",
        "parquet/append_with_bitmap.db/append_with_bitmap/manifest/manifest-list-9661d22b-a0de-419b-8d2b-cae55816f507-0",
        "parquet/append_with_bitmap.db/append_with_bitmap/manifest/manifest-list-9661d22b-a0de-419b-8d2b-cae55816f507-1",
        "parquet/pk_table_scan_and_read_first_row.db/pk_table_scan_and_read_first_row/f1=10/bucket-1/data-3ed044c5-30ac-496b-b6f1-25757a052504-0.parquet",
    ]
    .into_iter()
    .collect();
    assert_eq!(
        all_deleted
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        known
    );
}

/// Metadata a present snapshot needs that is truncated or missing aborts the run before any
/// deletion; so do a cut-off in the future and one within the last hour without
/// `no_writers_running`.
#[test]
fn unreadable_metadata_and_bad_cutoffs_delete_nothing() {
    let Some((_t1, pk, _)) = common::pypaimon_table("pk_fixed") else {
        return;
    };
    let (_t2, dynamic, _) = common::pypaimon_table("pk_dynamic").unwrap();
    let refs = common::referenced_files(&[&pk, &dynamic]);
    for t in [&pk, &dynamic] {
        write(&t.join(format!("manifest/manifest-{}-0", uuid())), b"stray");
        common::set_tree_mtime(t, two_days_ago());
    }
    let manifest = Referenced::of(&refs[&pk])
        .manifest_dir
        .into_iter()
        .find(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        .unwrap();
    let latest = snapshot_json(&pk, "snapshot/snapshot-4");
    let delta_list = latest["deltaManifestList"].as_str().unwrap().to_string();
    let index_manifest = snapshot_json(&dynamic, "snapshot/snapshot-3")["indexManifest"]
        .as_str()
        .unwrap()
        .to_string();

    let check = |t: &Path, file: &str, how: &str| {
        let path = t.join("manifest").join(file);
        let saved = std::fs::read(&path).unwrap();
        match how {
            "truncate" => std::fs::write(&path, &saved[..saved.len() / 2]).unwrap(),
            _ => std::fs::remove_file(&path).unwrap(),
        }
        let tree = common::tree(t);
        let e = run(t, &OrphanConfig::default()).unwrap_err();
        assert!(e.to_string().contains(file), "{how} {file}: {e}");
        if how == "remove" {
            assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
        }
        assert_eq!(common::tree(t), tree, "{how} {file}: files changed");
        std::fs::write(&path, saved).unwrap();
        common::set_mtime(&path, two_days_ago());
    };
    check(&pk, &manifest, "truncate");
    check(&pk, &manifest, "remove");
    check(&pk, &delta_list, "remove");
    check(&pk, &delta_list, "truncate");
    check(&dynamic, &index_manifest, "remove");

    // Cut-offs.
    let now = paimon_cleanup::clean::shared::clock::now_millis();
    let tree = common::tree(&pk);
    for (older_than_ms, no_writers_running) in [
        (now + 60_000, false),
        (now + 60_000, true),
        (now - 10 * 60_000, false),
        (now, false),
    ] {
        let cfg = OrphanConfig {
            older_than_ms: Some(older_than_ms),
            no_writers_running,
            ..Default::default()
        };
        let e = run(&pk, &cfg).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    }
    assert_eq!(common::tree(&pk), tree);
    // With no writer running, "now" is allowed: every file is a candidate, only the stray goes.
    let r = run(
        &pk,
        &OrphanConfig {
            older_than_ms: Some(paimon_cleanup::clean::shared::clock::now_millis()),
            no_writers_running: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.deletion.total_files(), 1, "{:?}", r.deletion.paths);
    // Everything but schema-0, snapshot-1..4 and LATEST is a candidate.
    assert_eq!(r.candidates, tree.len() as u64 - 6, "{r:?}");
}

/// The caller's veto keeps what it vetoes; a copy of a live file under its own name in another
/// bucket is kept (name referenced elsewhere) and reported; a cancelled run deletes nothing.
#[test]
fn veto_name_conflicts_and_cancel() {
    let Some((_tmp, t, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let live = std::fs::read_dir(t.join("p=0/bucket-0"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_str().unwrap().to_string())
        .find(|n| n.starts_with("data-"))
        .unwrap();
    let keep = [
        "p=0/bucket-1/data-keep-1.parquet",
        "p=1/bucket-2/data-keep-2.parquet",
    ];
    let go = [
        "p=0/bucket-1/data-go-1.parquet",
        "p=1/bucket-0/data-go-2.parquet",
    ];
    for f in keep.iter().chain(go.iter()) {
        write(&t.join(f), b"stray");
    }
    let conflict = format!("p=1/bucket-1/{live}");
    std::fs::copy(t.join("p=0/bucket-0").join(&live), t.join(&conflict)).unwrap();
    common::set_tree_mtime(&t, two_days_ago());

    let tree = common::tree(&t);
    let cancel = CancelToken::new();
    cancel.cancel();
    let ctl = RunControl {
        cancel,
        ..Default::default()
    };
    let e = run_with(&t, &OrphanConfig::default(), &HashMap::new(), &ctl).unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e}");
    assert_eq!(common::tree(&t), tree);

    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let asked2 = asked.clone();
    let cfg = OrphanConfig {
        veto: Some(Arc::new(move |l: &Location| {
            asked2.lock().unwrap().push(l.name().to_string());
            l.name().contains("keep")
        })),
        ..Default::default()
    };
    let r = run(&t, &cfg).unwrap();
    assert_eq!(deleted(&r), go.iter().map(|s| s.to_string()).collect());
    assert_eq!(r.vetoed, 2);
    assert_eq!(r.kept_name_referenced_elsewhere, vec![conflict.clone()]);
    for f in keep.iter().chain(std::iter::once(&conflict.as_str())) {
        assert!(t.join(f).exists(), "{f}");
    }
    // The veto is asked only about files that would otherwise go.
    assert_eq!(asked.lock().unwrap().len(), 4);
}

/// A branch directory without a schema (pypaimon's half-made branch) is reported and its tags
/// and snapshots still protect their files; once it is gone, those files are orphans.
#[test]
fn branch_without_schema_still_protects() {
    let Some((_tmp, t, _)) = common::pypaimon_table("pk_fixed") else {
        return;
    };
    // Roll main back from 4 to 3; a schemaless branch's tag still holds snapshot 4.
    let s4 = snapshot_json(&t, "snapshot/snapshot-4");
    write(
        &t.join("branch/branch-ghost/tag/tag-g"),
        &std::fs::read(t.join("snapshot/snapshot-4")).unwrap(),
    );
    std::fs::remove_file(t.join("snapshot/snapshot-4")).unwrap();
    write(&t.join("snapshot/LATEST"), b"3");
    common::set_tree_mtime(&t, two_days_ago());

    let tree = common::tree(&t);
    let r = run(&t, &OrphanConfig::default()).unwrap();
    assert_eq!(r.deletion.total_files(), 0, "{:?}", r.deletion.paths);
    assert_eq!(r.branches_without_schema, vec!["ghost".to_string()]);
    assert_eq!(common::tree(&t), tree);

    std::fs::remove_dir_all(t.join("branch/branch-ghost")).unwrap();
    let refs = Referenced::of(&common::referenced_files(&[&t])[&t]);
    let expected = expected_orphans(&t, &[], 1, &refs, SystemTime::now() - DAY);
    for f in lists_of(&s4) {
        assert!(expected.contains(&f), "{f}: {expected:?}");
    }
    assert!(expected.iter().any(|f| f.starts_with("d=")), "{expected:?}");
    let r = run(&t, &OrphanConfig::default()).unwrap();
    assert_eq!(deleted(&r), expected);
    assert!(r.branches_without_schema.is_empty());
}

/// The CLI: a dry run as JSON, and the one-hour rule.
#[test]
fn cli_remove_orphan_files() {
    let Some((_tmp, t, _)) = common::pypaimon_table("retention_opts") else {
        return;
    };
    let stray = format!("dt=2024-02-01/bucket-0/data-{}-0.parquet", uuid());
    write(&t.join(&stray), b"stray");
    common::set_tree_mtime(&t, two_days_ago());
    let tree = common::tree(&t);
    let exe = common::cli_bin();
    let out = std::process::Command::new(exe)
        .args([
            "remove-orphan-files",
            t.to_str().unwrap(),
            "--dry-run",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["deletion"]["paths"][0]["path"], stray.as_str(), "{v}");
    assert_eq!(v["deletion"]["dry_run"], true);
    assert_eq!(common::tree(&t), tree);

    let out = std::process::Command::new(exe)
        .args([
            "remove-orphan-files",
            t.to_str().unwrap(),
            "--older-than",
            "10 min",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("last hour"));

    let out = std::process::Command::new(exe)
        .args([
            "remove-orphan-files",
            t.to_str().unwrap(),
            "--older-than",
            "1 d",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!t.join(&stray).exists());
    assert_eq!(common::tree(&t).len(), tree.len() - 1);
}

/// The progress callback's last call carries the run's total bytes, in a dry run and in a real
/// run (the deletion phases are reported once the units' results are in).
#[test]
fn progress_ends_with_the_reports_total_bytes() {
    let Some((_tmp, t, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let strays: Vec<PathBuf> = (0..3)
        .map(|i| {
            t.join(format!(
                "dt=2024-01-01/hr=0/bucket-0/data-{}-{i}.parquet",
                uuid()
            ))
        })
        .collect();
    for (i, p) in strays.iter().enumerate() {
        write(p, &vec![b'x'; 100 + i]);
        common::set_mtime(p, two_days_ago());
    }
    for dry_run in [true, false] {
        let calls = Arc::new(std::sync::Mutex::new(Vec::<(String, u64, u64, u64)>::new()));
        let sink = calls.clone();
        let ctl = RunControl {
            progress: Some(Arc::new(move |phase: &str, done, total, bytes| {
                sink.lock()
                    .unwrap()
                    .push((phase.to_string(), done, total, bytes))
            })),
            ..RunControl::default()
        };
        let cfg = OrphanConfig {
            dry_run,
            ..Default::default()
        };
        let r = run_with(&t, &cfg, &HashMap::new(), &ctl).unwrap();
        assert_eq!(r.deletion.total_files(), 3, "{:?}", r.deletion.paths);
        assert_eq!(r.deletion.total_bytes(), 100 + 101 + 102);
        let calls = calls.lock().unwrap();
        let last = calls.last().expect("progress was reported");
        assert_eq!(
            last.3,
            r.deletion.total_bytes(),
            "dry run {dry_run}: {calls:?}"
        );
        assert!(calls.iter().all(|c| c.2 == 0 || c.1 <= c.2), "{calls:?}");
        assert_eq!(strays.iter().all(|p| p.exists()), dry_run);
    }
}

/// The run's memory bound (`RunControl::max_memory`): the reference keys and candidates orphan
/// removal holds are charged to it; past it the run fails before anything is deleted, and a
/// bound the run fits in deletes exactly what an unbounded run deletes.
#[test]
fn memory_bound_stops_before_any_deletion() {
    let Some((_t1, a, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let (_t2, b, _) = common::pypaimon_table("append_fixed_bucket").unwrap();
    for t in [&a, &b] {
        for f in [
            "p=0/bucket-1/data-stray-1.parquet",
            "p=1/bucket-0/data-stray-2.parquet",
            "manifest/manifest-stray-3",
        ] {
            write(&t.join(f), b"stray");
        }
        common::set_tree_mtime(t, two_days_ago());
    }
    let bounded = |bytes: u64| RunControl {
        max_memory: Some(bytes),
        ..Default::default()
    };
    let tree = common::tree(&a);
    for bytes in [1u64, 64] {
        let e = run_with(
            &a,
            &OrphanConfig::default(),
            &HashMap::new(),
            &bounded(bytes),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::MemoryLimit { .. })
                && text.contains("max_memory")
                && text.contains(&bytes.to_string())
                && text.contains("nothing deleted")
                && text.contains("orphan removal's"),
            "bound {bytes}: {text}"
        );
        assert_eq!(common::tree(&a), tree, "bound {bytes} changed the table");
    }
    let free = run(&a, &OrphanConfig::default()).unwrap();
    let capped = run_with(
        &b,
        &OrphanConfig::default(),
        &HashMap::new(),
        &bounded(256 << 20),
    )
    .unwrap();
    assert_eq!(deleted(&free).len(), 3, "{:?}", free.deletion.paths);
    assert_eq!(deleted(&free), deleted(&capped));
    assert_eq!(
        (free.candidates, free.referenced),
        (capped.candidates, capped.referenced)
    );
    assert_eq!(common::tree(&a), common::tree(&b));
}
