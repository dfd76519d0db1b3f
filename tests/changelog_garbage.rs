//! No garbage left where Paimon Java deletes it, nothing needed lost: decoupled changelog
//! lifecycles (data compacted away, statistics, index manifests of deletion-vector tables),
//! changelog files a tag kept, and Java's tag success files. "Needed" comes from
//! `tests/py/needed_files.py` (fastavro only); pypaimon reads every version before and after.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{
    delete_tag, expire_changelogs, expire_snapshots, remove_orphan_files, ChangelogExpireConfig,
    ExpireConfig, OrphanConfig, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn open(table: &Path, overrides: &[(&str, &str)]) -> (tokio::runtime::Runtime, Table) {
    let rt = common::rt();
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    let o: HashMap<String, String> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let t = rt.block_on(Table::open(storage, &o)).unwrap();
    (rt, t)
}

/// `needed_files.py`: (needed, on disk) per kind, and the needed files that are missing.
struct Needed {
    needed: BTreeMap<String, BTreeSet<String>>,
    on_disk: BTreeMap<String, BTreeSet<String>>,
    missing: Vec<String>,
}

fn needed(table: &Path) -> Needed {
    let py = common::python().expect("python");
    let out = common::run_py(&py, "needed_files.py", &[table.to_str().unwrap()])
        .unwrap_or_else(|e| panic!("needed_files.py: {e}"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sets = |key: &str| -> BTreeMap<String, BTreeSet<String>> {
        v[key]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, a)| {
                let names = a
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect();
                (k.clone(), names)
            })
            .collect()
    };
    Needed {
        needed: sets("needed"),
        on_disk: sets("on_disk"),
        missing: v["missing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect(),
    }
}

impl Needed {
    /// Files on disk that no version needs, per kind (`kind/name`).
    fn garbage(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (kind, disk) in &self.on_disk {
            let need = self.needed.get(kind).cloned().unwrap_or_default();
            out.extend(disk.difference(&need).map(|n| format!("{kind}/{n}")));
        }
        out
    }
}

/// Nothing needed is missing, and nothing beyond `allowed` (garbage that was there before
/// any run) is left that no version needs.
fn assert_clean(table: &Path, allowed: &BTreeSet<String>, step: &str) {
    let n = needed(table);
    assert!(
        n.missing.is_empty(),
        "{step}: needed files missing: {:?}",
        n.missing
    );
    let left: Vec<String> = n.garbage().difference(allowed).cloned().collect();
    assert!(
        left.is_empty(),
        "{step}: files no version needs were left: {left:?}"
    );
}

/// Every version pypaimon can read reads the same rows as before (versions gone are skipped).
fn assert_same_rows(before: &serde_json::Map<String, serde_json::Value>, table: &Path, step: &str) {
    let after = common::all_versions(table);
    for (k, v) in &after {
        assert!(v.get("error").is_none(), "{step}: {k} unreadable: {v}");
        if let Some(b) = before.get(k) {
            assert_eq!(v["row_digest"], b["row_digest"], "{step}: {k}");
        }
    }
}

fn decoupled_opts() -> Vec<(&'static str, &'static str)> {
    vec![
        ("changelog.num-retained.max", "100"),
        ("changelog.num-retained.min", "1"),
        ("snapshot.num-retained.max", "1"),
        ("snapshot.num-retained.min", "1"),
        ("snapshot.time-retained", "0s"),
        ("changelog.time-retained", "0s"),
    ]
}

fn fixture(rel: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let root = common::fixtures_dir()?;
    common::python()?;
    Some(common::copy_table(&root.join(rel)))
}

fn run_expire_snapshots(rt: &tokio::runtime::Runtime, t: &Table) {
    let r = rt
        .block_on(expire_snapshots(
            t,
            &ExpireConfig::default(),
            &RunControl::default(),
        ))
        .unwrap();
    assert!(r.snapshots_expired > 0, "{r:?}");
}

fn run_expire_changelogs(rt: &tokio::runtime::Runtime, t: &Table, delete_all: bool, keep: i64) {
    let cfg = ChangelogExpireConfig {
        delete_all,
        retention: RetentionOverrides {
            retain_max: (!delete_all).then_some(keep),
            retain_min: (!delete_all).then_some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = rt
        .block_on(expire_changelogs(t, &cfg, &RunControl::default()))
        .unwrap();
    assert!(r.changelogs_expired > 0, "{r:?}");
}

/// Producer `none`, decoupled: files compacted away stay while a changelog reads them, and go
/// when the changelogs that read them expire, whether changelogs expire by retention (some
/// kept) or all at once (`--delete-all`).
#[test]
fn decoupled_mor_fixture_leaves_no_compacted_away_files() {
    for (delete_all, keep) in [(true, 0), (false, 3)] {
        let Some((_tmp, table)) =
            fixture("parquet/pk_table_scan_and_read_mor.db/pk_table_scan_and_read_mor")
        else {
            return;
        };
        let allowed = needed(&table).garbage();
        let before = common::all_versions(&table);
        let (rt, t) = open(&table, &decoupled_opts());
        run_expire_snapshots(&rt, &t);
        assert!(table.join("changelog/changelog-1").exists());
        assert_clean(&table, &allowed, "after snapshot expiry");
        assert_same_rows(&before, &table, "after snapshot expiry");
        run_expire_changelogs(&rt, &t, delete_all, keep);
        assert_clean(&table, &allowed, "after changelog expiry");
        assert_same_rows(&before, &table, "after changelog expiry");
        if !delete_all {
            // The rest, later.
            run_expire_changelogs(&rt, &t, true, 0);
            assert_clean(&table, &allowed, "after the last changelog expiry");
        }
        // Orphan removal agrees: nothing left to find, and it runs.
        let cfg = OrphanConfig {
            older_than_ms: Some(paimon_cleanup::clean::shared::clock::now_millis()),
            no_writers_running: true,
            ..Default::default()
        };
        let o = rt
            .block_on(remove_orphan_files(&t, &cfg, &RunControl::default()))
            .unwrap();
        assert!(allowed.is_empty(), "the fixture holds garbage: {allowed:?}");
        assert_eq!(
            o.deletion.total_files(),
            0,
            "orphan removal still found {o:?}"
        );
        assert_same_rows(&before, &table, "after orphan removal");
    }
}

/// Producer `input` (changelog files): decoupled snapshot expiry deletes what compaction and
/// updates removed at once (Java does, the changelogs read only their changelog files); the
/// changelog files go with their changelogs.
#[test]
fn decoupled_input_producer_leaves_no_garbage() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let allowed = needed(&table).garbage();
    let before = common::all_versions(&table);
    let (rt, t) = open(&table, &decoupled_opts());
    run_expire_snapshots(&rt, &t);
    assert_clean(&table, &allowed, "after snapshot expiry");
    assert_same_rows(&before, &table, "after snapshot expiry");
    run_expire_changelogs(&rt, &t, true, 0);
    assert_clean(&table, &allowed, "after changelog expiry");
    assert_same_rows(&before, &table, "after changelog expiry");
}

/// A tag on a snapshot that expired kept that snapshot's changelog files, list and manifests;
/// deleting the tag deletes them (and Java's success file of the tag).
#[test]
fn deleting_a_tag_frees_the_changelog_files_it_kept() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    // Tag snapshot 1 (a copy of its snapshot file is a valid tag) with Java's success file.
    std::fs::create_dir_all(table.join("tag/tag-success-file")).unwrap();
    std::fs::copy(table.join("snapshot/snapshot-1"), table.join("tag/tag-t1")).unwrap();
    std::fs::write(
        table.join("tag/tag-success-file/t1_SUCCESS"),
        r#"{"creationTime":1,"modificationTime":1}"#,
    )
    .unwrap();
    let allowed = needed(&table).garbage();
    let before = common::all_versions(&table);
    let (rt, t) = open(
        &table,
        &[
            ("snapshot.num-retained.min", "1"),
            ("snapshot.num-retained.max", "1"),
            ("snapshot.time-retained", "0s"),
        ],
    );
    run_expire_snapshots(&rt, &t);
    assert_clean(&table, &allowed, "after snapshot expiry");
    let tagged = needed(&table);
    assert!(
        tagged.needed["data"]
            .iter()
            .any(|n| n.starts_with("changelog-")),
        "the tag keeps changelog files"
    );
    let r = rt
        .block_on(delete_tag(&t, "t1", false, &RunControl::default()))
        .unwrap();
    assert_eq!(r.tags_deleted, vec!["t1".to_string()]);
    assert!(!table.join("tag/tag-t1").exists());
    assert!(!table.join("tag/tag-success-file/t1_SUCCESS").exists());
    assert_clean(&table, &allowed, "after tag deletion");
    // pypaimon takes the (now empty) success-file directory for a tag: out of its way.
    std::fs::remove_dir(table.join("tag/tag-success-file")).unwrap();
    assert_same_rows(&before, &table, "after tag deletion");
}

/// Statistics of snapshots that become changelogs go with the snapshots (decoupled mode).
#[test]
fn decoupled_expiry_deletes_statistics_of_expired_snapshots() {
    let Some((_tmp, table)) =
        fixture("parquet/pk_table_scan_and_read_mor.db/pk_table_scan_and_read_mor")
    else {
        return;
    };
    // Snapshots 1 and 2 name a statistics file each (as ANALYZE leaves them).
    std::fs::create_dir_all(table.join("statistics")).unwrap();
    for id in [1, 2] {
        let p = table.join(format!("snapshot/snapshot-{id}"));
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        v["statistics"] = serde_json::json!(format!("stat-{id}"));
        std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        std::fs::write(table.join(format!("statistics/stat-{id}")), b"{}").unwrap();
    }
    let allowed = needed(&table).garbage();
    let (rt, t) = open(&table, &decoupled_opts());
    run_expire_snapshots(&rt, &t);
    assert!(!table.join("statistics/stat-1").exists());
    assert!(!table.join("statistics/stat-2").exists());
    let c1: serde_json::Value =
        serde_json::from_slice(&std::fs::read(table.join("changelog/changelog-1")).unwrap())
            .unwrap();
    assert!(c1.get("statistics").is_none(), "{c1}");
    assert_clean(&table, &allowed, "after snapshot expiry");
}

/// Issue 16.8: a deletion-vector table with decoupled changelogs. Snapshot expiry deletes the
/// expired snapshots' index manifests; the changelogs it writes do not name them, so orphan
/// removal runs; and a changelog that does name a deleted index manifest (as Java writes
/// them) does not make orphan removal refuse.
#[test]
fn dv_table_decoupled_changelogs_then_orphan_removal() {
    let Some((_tmp, table)) =
        fixture("parquet/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv")
    else {
        return;
    };
    let allowed = needed(&table).garbage();
    let before = common::all_versions(&table);
    let (rt, t) = open(&table, &decoupled_opts());
    run_expire_snapshots(&rt, &t);
    let mut named_index = false;
    for e in std::fs::read_dir(table.join("changelog"))
        .unwrap()
        .flatten()
    {
        let name = e.file_name().into_string().unwrap();
        if !name.starts_with("changelog-") {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap())
            .unwrap_or_else(|err| panic!("changelog {name} unreadable: {err}"));
        named_index |= v.get("indexManifest").is_some();
    }
    assert!(!named_index, "a written changelog names an index manifest");
    assert_clean(&table, &allowed, "after snapshot expiry");
    assert_same_rows(&before, &table, "after snapshot expiry");
    let cfg = OrphanConfig {
        older_than_ms: Some(paimon_cleanup::clean::shared::clock::now_millis()),
        no_writers_running: true,
        ..Default::default()
    };
    rt.block_on(remove_orphan_files(&t, &cfg, &RunControl::default()))
        .unwrap();
    assert_clean(&table, &allowed, "after orphan removal");

    // As Java writes them: the changelog names its snapshot's (deleted) index manifest.
    let c1 = table.join("changelog/changelog-1");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&c1).unwrap()).unwrap();
    v["indexManifest"] = serde_json::json!("index-manifest-deleted-by-java-0");
    std::fs::write(&c1, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    rt.block_on(remove_orphan_files(&t, &cfg, &RunControl::default()))
        .unwrap();
    // The changelogs still expire cleanly.
    run_expire_changelogs(&rt, &t, true, 0);
    assert!(!c1.exists());
    assert_same_rows(&before, &table, "after changelog expiry");
}
