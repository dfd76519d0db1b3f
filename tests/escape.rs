//! Crafted or corrupt metadata that points outside the table (`../` names, absolute external
//! paths, another table's files) never causes a deletion there: the run fails with a clear
//! error and deletes nothing at all.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{expire_snapshots, ExpireConfig, RetentionOverrides, RunControl};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

/// The first manifest in the delta list of `snapshot` (decoded with our reader).
fn delta_manifest(table: &Path, snapshot: i64) -> std::path::PathBuf {
    let rt = common::rt();
    rt.block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let t = Table::open(storage.clone(), &HashMap::new()).await.unwrap();
        let s = t.snapshots().read(&storage, snapshot).await.unwrap();
        let list = t
            .reader()
            .manifest_list(t.paths(), &s.delta_manifest_list)
            .await
            .unwrap();
        table.join("manifest").join(&list[0].file_name)
    })
}

fn craft(manifest: &Path, args: &[&str]) {
    let py = common::python().expect("python");
    let mut all = vec![manifest.to_str().unwrap()];
    all.extend_from_slice(args);
    common::run_py(&py, "craft_manifest.py", &all).unwrap();
}

fn expire(table: &Path) -> paimon_cleanup::Result<paimon_cleanup::clean::ExpireReport> {
    let cfg = ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        ..Default::default()
    };
    common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let t = Table::open(storage, &HashMap::new()).await?;
        expire_snapshots(&t, &cfg, &RunControl::default()).await
    })
}

/// A table whose snapshot-2 delta DELETEs a file the crafted way; returns the victim dir.
fn setup(
    args: impl Fn(&Path) -> Vec<String>,
) -> Option<(tempfile::TempDir, std::path::PathBuf, tempfile::TempDir)> {
    let (tmp, table, _) = common::pypaimon_table("append_fixed_bucket")?;
    let victim_dir = tempfile::tempdir().unwrap();
    std::fs::write(victim_dir.path().join("victim.parquet"), b"precious").unwrap();
    let m = delta_manifest(&table, 2);
    let a = args(victim_dir.path());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    craft(&m, &a);
    Some((tmp, table, victim_dir))
}

fn assert_refused(table: &Path, victim: &Path, what: &str) {
    let before = common::tree(table);
    let err = expire(table).expect_err(what);
    eprintln!("{what}: {err}");
    assert!(
        victim.join("victim.parquet").exists(),
        "{what}: victim deleted"
    );
    assert_eq!(common::tree(table), before, "{what}: something was deleted");
}

#[test]
fn absolute_external_path_outside_the_table_is_refused() {
    let Some((_t, table, victim)) = setup(|v| {
        vec![
            "--kind".into(),
            "delete".into(),
            "--external-path".into(),
            format!("file:{}/victim.parquet", v.display()),
        ]
    }) else {
        return;
    };
    assert_refused(&table, victim.path(), "external path outside");
}

#[test]
fn dot_dot_file_name_is_refused() {
    let Some((_t, table, victim)) = setup(|v| {
        vec![
            "--kind".into(),
            "delete".into(),
            "--file-name".into(),
            format!("../../../../../../../../..{}/victim.parquet", v.display()),
        ]
    }) else {
        return;
    };
    assert_refused(&table, victim.path(), "../ file name");
}

#[test]
fn external_path_with_dot_dot_into_another_table_is_refused() {
    let Some((_t, table, victim)) = setup(|v| {
        vec![
            "--kind".into(),
            "delete".into(),
            "--external-path".into(),
            format!(
                "file:{}/../{}/victim.parquet",
                v.display(),
                v.file_name().unwrap().to_str().unwrap()
            ),
        ]
    }) else {
        return;
    };
    assert_refused(&table, victim.path(), "external path with ..");
}

#[test]
fn statistics_name_escaping_the_table_is_refused() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let victim = tempfile::tempdir().unwrap();
    std::fs::write(victim.path().join("victim.parquet"), b"precious").unwrap();
    let snap = table.join("snapshot/snapshot-1");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    json["statistics"] = serde_json::json!(format!(
        "../../../../../../..{}/victim.parquet",
        victim.path().display()
    ));
    std::fs::write(&snap, serde_json::to_vec(&json).unwrap()).unwrap();
    assert_refused(&table, victim.path(), "statistics name");
}

/// The latest snapshot's id, its base manifest list and the first manifest that list names.
fn latest_metadata(table: &Path) -> (i64, String, String) {
    common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let t = Table::open(storage.clone(), &HashMap::new()).await.unwrap();
        let latest = t.snapshots().latest_id(&storage).await.unwrap().unwrap();
        let s = t.snapshots().read(&storage, latest).await.unwrap();
        let list = t
            .reader()
            .manifest_list(t.paths(), &s.base_manifest_list)
            .await
            .unwrap();
        (
            latest,
            s.base_manifest_list.clone(),
            list[0].file_name.clone(),
        )
    })
}

/// Issue 16 point 2: a DELETE entry whose `_EXTERNAL_PATH` names a file inside the table that is
/// not a data file — the schema, the latest snapshot, `LATEST`, a tag, a consumer file, the
/// latest snapshot's manifest list or one of its manifests — refuses the whole plan: nothing is
/// deleted and pypaimon still reads the table.
#[test]
fn delete_entries_naming_table_metadata_are_refused_whole() {
    let Some((_tmp, pristine, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let (latest, base_list, manifest) = latest_metadata(&pristine);
    let targets = [
        "schema/schema-0".to_string(),
        format!("snapshot/snapshot-{latest}"),
        "snapshot/LATEST".to_string(),
        "tag/tag-t1".to_string(),
        "consumer/consumer-c1".to_string(),
        format!("manifest/{base_list}"),
        format!("manifest/{manifest}"),
    ];
    let mut cases = Vec::new();
    for target in targets {
        let (tmp, table) = common::copy_table(&pristine);
        // A tag of the latest snapshot and a consumer that does not hold expiry back.
        std::fs::create_dir_all(table.join("tag")).unwrap();
        std::fs::copy(
            table.join(format!("snapshot/snapshot-{latest}")),
            table.join("tag/tag-t1"),
        )
        .unwrap();
        std::fs::create_dir_all(table.join("consumer")).unwrap();
        std::fs::write(
            table.join("consumer/consumer-c1"),
            format!("{{\"nextSnapshot\":{latest}}}"),
        )
        .unwrap();
        let victim = table.join(&target);
        assert!(victim.is_file(), "{target}");
        let m = delta_manifest(&table, 2);
        craft(
            &m,
            &[
                "--kind",
                "delete",
                "--external-path",
                &format!("file:{}", victim.display()),
            ],
        );
        cases.push((tmp, table, target, victim));
    }
    let dirs: Vec<&Path> = cases.iter().map(|(_, t, _, _)| t.as_path()).collect();
    let views_before = common::all_versions_many(&dirs);
    for (_, table, target, victim) in &cases {
        let before = common::tree(table);
        let err = expire(table).expect_err(target);
        eprintln!("{target}: {err}");
        assert!(
            matches!(err, paimon_cleanup::Error::PathRefused { .. }),
            "{target}: {err}"
        );
        assert!(
            err.to_string().contains("as a data file"),
            "{target}: {err}"
        );
        assert!(victim.is_file(), "{target} deleted");
        assert_eq!(
            common::tree(table),
            before,
            "{target}: something was deleted"
        );
    }
    // pypaimon reads every version of every table exactly as before the runs.
    assert_eq!(common::all_versions_many(&dirs), views_before);
}
