//! Protection is one set of locations across every kind of file: a candidate of one kind
//! (an index file of a removed version, a data file a DELETE entry frees) at a location a
//! protector reads as another kind (a data file, an index file) is kept; a candidate at a
//! location no file of its kind can have (a schema, a version file) is refused before anything
//! is deleted. Hostile metadata is written with the crate's own manifest writer on copies of
//! real pypaimon tables.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{
    delete_tags, expire_snapshots, ExpireConfig, ExpireReport, RetentionOverrides, RunControl,
};
use paimon_cleanup::spec::manifest::writer::{encode_index_manifest, encode_manifest};
use paimon_cleanup::spec::manifest::{FileKind, IndexManifestEntry, ManifestEntry};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn open_with(table: &Path, options: &HashMap<String, String>) -> Table {
    common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        Table::open(storage, options).await.unwrap()
    })
}

fn open(table: &Path) -> Table {
    open_with(table, &HashMap::new())
}

fn keep_one(dry_run: bool) -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            retain_max: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        dry_run,
        ..Default::default()
    }
}

fn expire(
    table: &Path,
    options: &HashMap<String, String>,
    dry_run: bool,
) -> paimon_cleanup::Result<ExpireReport> {
    let t = open_with(table, options);
    common::rt().block_on(expire_snapshots(
        &t,
        &keep_one(dry_run),
        &RunControl::default(),
    ))
}

fn paths(r: &paimon_cleanup::clean::DeletionReport) -> Vec<String> {
    let mut v: Vec<String> = r.paths.iter().map(|p| p.path.clone()).collect();
    v.sort();
    v
}

/// Dry run, then the real run: both succeed, the dry run changes nothing and lists exactly
/// what the real run deletes.
fn expire_checked(table: &Path, options: &HashMap<String, String>) -> ExpireReport {
    let tree = common::tree(table);
    let dry = expire(table, options, true).unwrap();
    assert_eq!(common::tree(table), tree, "the dry run changed files");
    let real = expire(table, options, false).unwrap();
    assert_eq!(
        paths(&dry.deletion),
        paths(&real.deletion),
        "the dry run says what the real run does"
    );
    real
}

/// Dry run and real run are both refused with a path error, and nothing changes.
fn expire_refused(table: &Path, options: &HashMap<String, String>) -> String {
    let tree = common::tree(table);
    for dry_run in [true, false] {
        let e = expire(table, options, dry_run).expect_err("the plan must be refused");
        assert!(
            matches!(e, paimon_cleanup::Error::PathRefused { .. }),
            "dry run {dry_run}: {e}"
        );
        assert_eq!(common::tree(table), tree, "a refused plan deleted files");
    }
    expire(table, options, true).unwrap_err().to_string()
}

fn snapshot_json(table: &Path, id: i64) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(table.join(format!("snapshot/snapshot-{id}"))).unwrap())
        .unwrap()
}

/// Points snapshot `id` (or the tag file `tag`) at a fresh index manifest holding one ADD
/// entry with `external` as its external path.
fn hostile_index_manifest(table: &Path, version_file: &Path, name: &str, external: &str) {
    let entry = IndexManifestEntry {
        kind: FileKind::Add,
        partition: Vec::new(),
        bucket: 0,
        index_type: "HASH".into(),
        file_name: "index-hostile-0".into(),
        file_size: 1,
        row_count: 1,
        external_path: Some(external.to_string()),
        ..Default::default()
    };
    let bytes = encode_index_manifest(&[entry], None, Default::default()).unwrap();
    std::fs::write(table.join("manifest").join(name), &bytes).unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(version_file).unwrap()).unwrap();
    v["indexManifest"] = serde_json::Value::String(name.to_string());
    std::fs::write(version_file, serde_json::to_vec(&v).unwrap()).unwrap();
}

fn file_uri(p: &Path) -> String {
    format!("file:{}", p.display())
}

/// A data file the latest snapshot reads, as pypaimon sees it (relative path, absolute path).
fn live_file(table: &Path) -> (String, PathBuf) {
    let view = common::pypaimon_view(table, &[]);
    let rel = view["live_files"][0].as_str().unwrap().to_string();
    let abs = table.join(&rel);
    assert!(abs.exists());
    (rel, abs)
}

/// An index entry of an expired snapshot whose external path is a data file the latest
/// snapshot reads: the file stays and the table reads as before.
#[test]
fn an_expired_index_entry_naming_a_live_data_file_frees_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let (rel, victim) = live_file(&table);
    hostile_index_manifest(
        &table,
        &table.join("snapshot/snapshot-1"),
        "index-manifest-hostile-0",
        &file_uri(&victim),
    );
    let before = common::pypaimon_view(&table, &[]);
    let report = expire_checked(&table, &HashMap::new());
    assert_eq!(report.snapshots_expired, 2, "{report:?}");
    assert!(
        victim.exists(),
        "a live data file was deleted as an index file: {rel}"
    );
    let after = common::pypaimon_view(&table, &[]);
    assert_eq!(after["row_digest"], before["row_digest"], "{after}");
    assert_eq!(after["live_files"], before["live_files"]);
    // The hostile index manifest itself went with its snapshot.
    assert!(!table.join("manifest/index-manifest-hostile-0").exists());
}

/// The same through tag deletion: the index entry of a tag whose snapshot has expired names
/// a data file the latest snapshot reads.
#[test]
fn a_deleted_tags_index_entry_naming_a_live_data_file_frees_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let (rel, victim) = live_file(&table);
    std::fs::create_dir_all(table.join("tag")).unwrap();
    let tag = table.join("tag/tag-t1");
    std::fs::copy(table.join("snapshot/snapshot-1"), &tag).unwrap();
    hostile_index_manifest(&table, &tag, "index-manifest-hostile-0", &file_uri(&victim));
    // The tag's snapshot expires (the tag keeps its files): only the tag names it now.
    let report = expire_checked(&table, &HashMap::new());
    assert_eq!(report.snapshots_expired, 2, "{report:?}");
    assert!(victim.exists());
    let before = common::pypaimon_view(&table, &[]);
    let tree = common::tree(&table);
    let t = open(&table);
    let run = |dry_run| {
        common::rt()
            .block_on(delete_tags(
                &t,
                &["t1".to_string()],
                dry_run,
                &RunControl::default(),
            ))
            .unwrap()
    };
    let dry = run(true);
    assert_eq!(common::tree(&table), tree, "the dry run changed files");
    let real = run(false);
    assert_eq!(paths(&dry.deletion), paths(&real.deletion));
    assert!(!tag.exists());
    assert!(
        real.deletion
            .count(paimon_cleanup::clean::FileClass::ManifestList)
            .files
            > 0,
        "the tag's own metadata goes: {real:?}"
    );
    assert!(
        victim.exists(),
        "a live data file was deleted as an index file: {rel}"
    );
    let after = common::pypaimon_view(&table, &[]);
    assert_eq!(after["row_digest"], before["row_digest"], "{after}");
}

/// A DELETE entry of an expired delta whose external path is an index file the latest
/// snapshot names (in a bucket directory): a data entry naming metadata a kept version reads is
/// invalid, so the plan is refused whole (dry run and real run) and the index file stays.
#[test]
fn an_expired_delete_entry_naming_a_live_index_file_is_refused() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let (_, data) = live_file(&table);
    // An index file the latest snapshot names, beside its data files.
    let index = data.parent().unwrap().join("index-live-0");
    std::fs::write(&index, b"index bytes").unwrap();
    let latest = *common::snapshot_ids(&table).last().unwrap();
    hostile_index_manifest(
        &table,
        &table.join(format!("snapshot/snapshot-{latest}")),
        "index-manifest-live-0",
        &file_uri(&index),
    );
    // Snapshot 2's delta deletes it, as a data file under another name.
    let t = open(&table);
    let s2 = snapshot_json(&table, 2);
    let list = common::rt()
        .block_on(
            t.reader()
                .manifest_list(t.paths(), s2["deltaManifestList"].as_str().unwrap()),
        )
        .unwrap();
    let manifest = table.join("manifest").join(&list[0].file_name);
    let mut entries: Vec<ManifestEntry> = common::rt()
        .block_on(t.reader().manifest(t.paths(), &list[0].file_name))
        .unwrap();
    let mut hostile = entries[0].clone();
    hostile.kind = FileKind::Delete;
    hostile.file.file_name = "ghost-0.parquet".into();
    hostile.file.external_path = Some(file_uri(&index));
    entries.push(hostile);
    std::fs::write(
        &manifest,
        encode_manifest(&entries, None, Default::default()).unwrap(),
    )
    .unwrap();
    let msg = expire_refused(&table, &HashMap::new());
    assert!(msg.contains("as an index file"), "{msg}");
    assert!(
        index.exists(),
        "an index file the latest snapshot names was deleted as a data file"
    );
    assert!(table.join("manifest/index-manifest-live-0").exists());
    assert!(data.exists());
}

/// An index entry naming `schema/schema-0` or a kept snapshot file is refused, also where
/// the global-index external root is the table root (index files may then lie anywhere under
/// it, but never in the table's metadata directories).
#[test]
fn an_index_entry_naming_a_schema_or_a_version_file_is_refused() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let latest = *common::snapshot_ids(&table).last().unwrap();
    for target in [
        "schema/schema-0".to_string(),
        format!("snapshot/snapshot-{latest}"),
        "snapshot/LATEST".to_string(),
    ] {
        let (_copy_guard, copy) = common::copy_table(&table);
        hostile_index_manifest(
            &copy,
            &copy.join("snapshot/snapshot-1"),
            "index-manifest-hostile-0",
            &file_uri(&copy.join(&target)),
        );
        let root_as_index_root: HashMap<String, String> =
            [("global-index.external-path".to_string(), file_uri(&copy))].into();
        for options in [HashMap::new(), root_as_index_root] {
            let msg = expire_refused(&copy, &options);
            assert!(msg.contains("as an index file"), "{target}: {msg}");
            assert!(copy.join(&target).exists());
        }
    }
}
