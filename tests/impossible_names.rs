//! Names that cannot exist on a filesystem (a path component over 255 bytes, NUL, `/` inside
//! a file name, `.` and `..`) refuse the whole plan before anything is deleted, in the dry run
//! as in the real run: deleting the files before such a name and then failing on it would
//! fail every rerun the same way, with the versions that name it left for good.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{expire_snapshots, ExpireConfig, RetentionOverrides, RunControl};
use paimon_cleanup::spec::manifest::writer::encode_manifest;
use paimon_cleanup::spec::manifest::{FileKind, ManifestEntry};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn open(table: &Path) -> Table {
    common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        Table::open(storage, &HashMap::new()).await.unwrap()
    })
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

/// Appends DELETE entries to the first manifest of snapshot 2's delta: one per `(file name,
/// external path)`, in the partition and bucket of its first entry, after a DELETE of that
/// entry's own file (which the expiry would otherwise delete first).
fn add_deletes(table: &Path, hostile: &[(String, Option<String>)]) {
    let t = open(table);
    let s2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(table.join("snapshot/snapshot-2")).unwrap()).unwrap();
    let rt = common::rt();
    let list = rt
        .block_on(
            t.reader()
                .manifest_list(t.paths(), s2["deltaManifestList"].as_str().unwrap()),
        )
        .unwrap();
    let name = &list[0].file_name;
    let mut entries: Vec<ManifestEntry> =
        rt.block_on(t.reader().manifest(t.paths(), name)).unwrap();
    let first = entries[0].clone();
    for (file_name, external) in hostile {
        let mut e = first.clone();
        e.kind = FileKind::Delete;
        e.file.file_name = file_name.clone();
        e.file.external_path = external.clone();
        e.file.extra_files = Vec::new();
        entries.push(e);
    }
    std::fs::write(
        table.join("manifest").join(name),
        encode_manifest(&entries, None, Default::default()).unwrap(),
    )
    .unwrap();
}

/// Dry run and real run both fail, nothing changes; the error text.
fn refused(table: &Path) -> String {
    let tree = common::tree(table);
    let t = open(table);
    let mut msgs = Vec::new();
    for dry_run in [true, false] {
        let e = common::rt()
            .block_on(expire_snapshots(
                &t,
                &keep_one(dry_run),
                &RunControl::default(),
            ))
            .expect_err("the plan must be refused");
        assert_eq!(
            common::tree(table),
            tree,
            "dry run {dry_run}: files changed: {e}"
        );
        msgs.push(e.to_string());
    }
    assert_eq!(msgs[0], msgs[1], "the dry run says what the real run does");
    msgs.remove(0)
}

/// A DELETE entry whose file name is longer than a local filesystem allows, from one byte
/// over `NAME_MAX` to 16 MiB, refuses the plan with a short, clear error.
#[test]
fn an_overlong_file_name_refuses_the_plan_before_any_deletion() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    for len in [256usize, 4_097, 70_000, 16 << 20] {
        let (_guard, copy) = common::copy_table(&table);
        // Real deletable files come first in the plan: a late failure would have deleted them.
        add_deletes(&copy, &[("d".repeat(len), None)]);
        let msg = refused(&copy);
        assert!(
            msg.contains(&format!("a path component of {len} bytes")),
            "{len}: {msg}"
        );
        assert!(msg.len() < 2_000, "{len}: the error repeats the name");
    }
}

/// The same through an external path (a location a manifest gives whole) and as the second
/// file of a directory (the plan checks most data files through the first of their
/// directory).
#[test]
fn an_overlong_name_in_an_external_path_or_behind_a_good_file_refuses_the_plan() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let view = common::pypaimon_view(&table, &["--snapshot", "1"]);
    let live = Path::new(view["live_files"][0].as_str().unwrap());
    let bucket_dir = live.parent().unwrap().to_path_buf();
    for external in [true, false] {
        let (_guard, copy) = common::copy_table(&table);
        let hostile = if external {
            vec![(
                "ghost.parquet".to_string(),
                Some(format!(
                    "file:{}/{}",
                    copy.join(&bucket_dir).display(),
                    "e".repeat(300)
                )),
            )]
        } else {
            vec![
                ("ghost-ok.parquet".to_string(), None),
                ("g".repeat(1_000), None),
            ]
        };
        add_deletes(&copy, &hostile);
        let msg = refused(&copy);
        assert!(msg.contains("bytes is longer than"), "{msg}");
    }
}

/// Names that cannot be a file name at all (NUL, `/`, `.`, `..`, empty) are refused while
/// planning, the same way in the dry run and the real run.
#[test]
fn names_that_are_not_file_names_refuse_the_plan() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    for name in ["a\0b.parquet", "a/b.parquet", ".", "..", "../x.parquet"] {
        let (_guard, copy) = common::copy_table(&table);
        add_deletes(&copy, &[(name.to_string(), None)]);
        let msg = refused(&copy);
        assert!(msg.contains("not a plain file name"), "{name:?}: {msg}");
    }
}
