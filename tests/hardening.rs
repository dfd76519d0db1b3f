//! Crafted or unlucky tables that once cost a live file or published a broken version (issue
//! 16 points 1, 5, 6, 9, 10; issue 17 point 4): protection by location whatever the
//! identifier, symlinked or uninterpretable structure, shared external roots, id overflow,
//! bad tag names, Java's orphan rule for `snapshot-*` / `changelog-*` names.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{expire_snapshots, ExpireConfig, RetentionOverrides, RunControl};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn open(table: &Path) -> (Arc<Storage>, Table) {
    common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let t = Table::open(storage.clone(), &HashMap::new()).await.unwrap();
        (storage, t)
    })
}

/// The manifests in the delta list of `snapshot` (decoded with our reader).
fn delta_manifests(table: &Path, snapshot: i64) -> Vec<std::path::PathBuf> {
    let (storage, t) = open(table);
    common::rt().block_on(async {
        let s = t.snapshots().read(&storage, snapshot).await.unwrap();
        let list = t
            .reader()
            .manifest_list(t.paths(), &s.delta_manifest_list)
            .await
            .unwrap();
        list.iter()
            .map(|m| table.join("manifest").join(&m.file_name))
            .collect()
    })
}

fn craft(manifest: &Path, args: &[&str]) {
    let py = common::python().expect("python");
    let mut all = vec![manifest.to_str().unwrap()];
    all.extend_from_slice(args);
    common::run_py(&py, "craft_manifest.py", &all).unwrap();
}

fn expire_all_but_one(table: &Path) -> paimon_cleanup::Result<paimon_cleanup::clean::ExpireReport> {
    let cfg = ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            retain_max: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        ..Default::default()
    };
    let (_, t) = open(table);
    common::rt().block_on(expire_snapshots(&t, &cfg, &RunControl::default()))
}

// ---------------------------------------------------------------------------------------
// 16.1: protection by location, whatever the identifier

/// A DELETE entry in an expired delta whose external path is the location of a file the
/// kept snapshot reads (under another identifier: another name, same or another level) must
/// not free that file.
fn delete_entry_naming_a_live_location(level: Option<i32>) {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let first = common::pypaimon_view(&table, &["--snapshot", "1"]);
    let victim_rel = first["live_files"][0].as_str().unwrap().to_string();
    let victim = table.join(&victim_rel);
    assert!(victim.exists());
    let level_arg = level.map(|l| l.to_string());
    let mut args = vec![
        "--append".to_string(),
        "--kind".into(),
        "delete".into(),
        "--file-name".into(),
        "ghost-0.parquet".into(),
        "--external-path".into(),
        format!("file:{}", victim.display()),
    ];
    if let Some(l) = &level_arg {
        args.push("--level".into());
        args.push(l.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    craft(&delta_manifests(&table, 2)[0], &args);
    let before = common::pypaimon_view(&table, &[]);
    assert!(
        before["live_files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str() == Some(victim_rel.as_str())),
        "pypaimon reads the victim in the latest snapshot: {before}"
    );
    let report = expire_all_but_one(&table).unwrap();
    assert!(report.snapshots_expired >= 2, "{report:?}");
    assert!(victim.exists(), "a live file was deleted: {victim_rel}");
    let after = common::pypaimon_view(&table, &[]);
    assert_eq!(after["row_digest"], before["row_digest"], "{after}");
    assert_eq!(after["live_files"], before["live_files"]);
}

#[test]
fn delete_entry_with_another_identifier_at_a_live_location_frees_nothing() {
    delete_entry_naming_a_live_location(None);
}

#[test]
fn delete_entry_at_another_level_at_a_live_location_frees_nothing() {
    delete_entry_naming_a_live_location(Some(3));
}

// ---------------------------------------------------------------------------------------
// 16.9: arithmetic on ids is checked

/// Renumber the snapshots of `table` (ids 1..=n) to end at `i64::MAX`, hints included.
fn renumber_to_max(table: &Path) -> Vec<i64> {
    let dir = table.join("snapshot");
    let ids = common::snapshot_ids(table);
    let n = ids.len() as i64;
    let mut new_ids = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let new_id = i64::MAX - (n - 1) + i as i64;
        let path = dir.join(format!("snapshot-{id}"));
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        v["id"] = new_id.into();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(
            dir.join(format!("snapshot-{new_id}")),
            serde_json::to_vec(&v).unwrap(),
        )
        .unwrap();
        new_ids.push(new_id);
    }
    std::fs::write(dir.join("EARLIEST"), new_ids[0].to_string()).unwrap();
    std::fs::write(dir.join("LATEST"), i64::MAX.to_string()).unwrap();
    new_ids
}

#[test]
fn drop_partitions_on_snapshot_i64_max_is_an_error_and_writes_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    renumber_to_max(&table);
    let before = common::tree(&table);
    let (_, t) = open(&table);
    let spec: std::collections::BTreeMap<String, String> =
        [("p".to_string(), "0".to_string())].into();
    let err = common::rt()
        .block_on(paimon_cleanup::clean::partitions::drop_partitions(
            &t,
            &[spec],
            None,
            None,
            &RunControl::default(),
        ))
        .expect_err("a commit after snapshot i64::MAX must fail");
    assert!(err.to_string().contains("overflow"), "{err}");
    assert_eq!(common::tree(&table), before, "something was written");
    assert_eq!(
        std::fs::read_to_string(table.join("snapshot/LATEST")).unwrap(),
        i64::MAX.to_string()
    );
}

#[test]
fn expire_snapshots_up_to_i64_max_keeps_the_last_snapshot() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let ids = renumber_to_max(&table);
    let report = expire_all_but_one(&table).unwrap();
    assert_eq!(report.snapshots_expired, ids.len() as u64 - 1, "{report:?}");
    assert_eq!(report.earliest_after, Some(i64::MAX));
    assert!(table
        .join(format!("snapshot/snapshot-{}", i64::MAX))
        .exists());
    // Everything the last snapshot reads is still there.
    let (_, t) = open(&table);
    let live = common::rt().block_on(async {
        let s = t.snapshots().read(t.storage(), i64::MAX).await.unwrap();
        t.live_data_files(&s).await.unwrap()
    });
    assert!(!live.is_empty());
    for e in live {
        let loc = t
            .paths()
            .data_file(&e.partition, e.bucket, &e.file)
            .unwrap();
        let path = loc.as_str().strip_prefix("file://").unwrap();
        assert!(Path::new(path).exists(), "{path} was deleted");
    }
}

// ---------------------------------------------------------------------------------------
// 16.10: bad tag names are errors; a missing tag is reported

#[test]
fn path_like_or_empty_tag_names_are_invalid_and_delete_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    assert!(table.join("tag/tag-t1").exists());
    let before = common::tree(&table);
    let (_, t) = open(&table);
    for bad in ["", " ", "..", "../tag-t1", "a/b", "a\\b", "x..y", "t\u{0}1"] {
        // A good name beside the bad one: nothing is deleted at all.
        let names = vec!["t1".to_string(), bad.to_string()];
        let err = common::rt()
            .block_on(paimon_cleanup::clean::delete_tags(
                &t,
                &names,
                false,
                &RunControl::default(),
            ))
            .expect_err(bad);
        assert!(
            matches!(err, paimon_cleanup::Error::InvalidArgument(_)),
            "{bad:?}: {err}"
        );
        assert_eq!(
            common::tree(&table),
            before,
            "{bad:?}: something was deleted"
        );
    }
    // Through the CLI: exit status non-zero, nothing deleted.
    let exe = common::cli_bin();
    for bad in ["", "../tag-t1"] {
        let out = std::process::Command::new(exe)
            .args(["delete-tag", table.to_str().unwrap(), bad])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not a tag name"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            common::tree(&table),
            before,
            "{bad:?}: something was deleted"
        );
    }
}

#[test]
fn a_missing_tag_is_reported_in_text_and_json() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let before = common::tree(&table);
    let exe = common::cli_bin();
    let out = std::process::Command::new(exe)
        .args(["delete-tag", table.to_str().unwrap(), "nope", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tags_not_found"], serde_json::json!(["nope"]), "{v}");
    let out = std::process::Command::new(exe)
        .args(["delete-tag", table.to_str().unwrap(), "nope"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tags not found") && text.contains("nope"),
        "{text}"
    );
    assert_eq!(common::tree(&table), before);
}

// ---------------------------------------------------------------------------------------
// 16.6: shared external roots

fn remove_orphans(
    table: &Path,
    cfg: &paimon_cleanup::clean::OrphanConfig,
) -> paimon_cleanup::clean::OrphanReport {
    let (_, t) = open(table);
    common::rt()
        .block_on(paimon_cleanup::clean::remove_orphan_files(
            &t,
            cfg,
            &RunControl::default(),
        ))
        .unwrap()
}

fn two_days_ago() -> std::time::SystemTime {
    std::time::SystemTime::now() - Duration::from_secs(2 * 86_400)
}

#[test]
fn orphan_removal_leaves_a_shared_external_root_alone_unless_declared_owned() {
    let Some(py) = common::python() else {
        return;
    };
    let wh = tempfile::Builder::new()
        .prefix("pypaimon-wh-")
        .tempdir()
        .unwrap();
    common::run_py(
        &py,
        "make_tables.py",
        &[
            wh.path().to_str().unwrap(),
            "--only",
            "external_shared_a",
            "external_shared_b",
            "--quiet",
        ],
    )
    .unwrap();
    let a = wh.path().join("db.db/external_shared_a");
    let b = wh.path().join("db.db/external_shared_b");
    let root = wh.path().join("external/shared");
    let b_files: Vec<String> = common::pypaimon_view(&b, &[])["live_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert!(
        !b_files.is_empty()
            && b_files
                .iter()
                .all(|f| f.starts_with(root.to_str().unwrap())),
        "{b_files:?}"
    );
    // A's orphan in the shared root (an uncommitted write of A, say).
    let stray = root.join(format!(
        "p=0/bucket-0/data-{}-0.parquet",
        uuid::Uuid::new_v4()
    ));
    std::fs::write(&stray, b"stray").unwrap();
    for d in [&a, &b, &root] {
        common::set_tree_mtime(d, two_days_ago());
    }
    let b_before = common::all_versions(&b);
    let root_before = common::tree(&root);

    // Default: the shared root is neither listed nor cleaned, and the report says why.
    let r = remove_orphans(&a, &Default::default());
    assert!(r.external_roots.is_empty(), "{r:?}");
    assert!(
        r.skipped
            .iter()
            .any(|s| s.contains("external data root not cleaned") && s.contains("shared")),
        "{:?}",
        r.skipped
    );
    assert_eq!(
        common::tree(&root),
        root_before,
        "something in the shared root went"
    );
    let b_after = common::all_versions(&b);
    assert_eq!(b_before, b_after);

    // Declared owned: the root is cleaned as this table's own — A's orphan goes (and, as the
    // documentation warns, so would B's live files: shown by a dry run).
    let owned = |dry_run| paimon_cleanup::clean::OrphanConfig {
        external_roots_owned: true,
        dry_run,
        ..Default::default()
    };
    let r = remove_orphans(&a, &owned(true));
    let would: Vec<String> = r.deletion.paths.iter().map(|p| p.path).collect();
    assert!(
        would.iter().any(|p| p.ends_with(stray.to_str().unwrap())),
        "{would:?}"
    );
    assert!(
        b_files
            .iter()
            .all(|f| would.iter().any(|p| p.ends_with(f.as_str()))),
        "the hazard: B's live files are orphans to A: {would:?}"
    );
    assert_eq!(r.external_roots.len(), 1, "{r:?}");
    // The CLI: skipped by default, listed with --external-roots-owned.
    let exe = common::cli_bin();
    for (flag, listed) in [(None, 0), (Some("--external-roots-owned"), 1)] {
        let mut cmd = std::process::Command::new(exe);
        cmd.args([
            "remove-orphan-files",
            a.to_str().unwrap(),
            "--dry-run",
            "--json",
        ]);
        cmd.args(flag);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["external_roots"].as_array().unwrap().len(), listed, "{v}");
    }
    assert_eq!(common::tree(&root), root_before);
    // Once B is gone (dropped with its files), the owned root is A's alone.
    for f in &b_files {
        std::fs::remove_file(f).unwrap();
    }
    let r = remove_orphans(&a, &owned(false));
    assert!(!stray.exists(), "A's orphan in its own root stays: {r:?}");
    let a_view = common::pypaimon_view(&a, &[]);
    assert!(a_view.get("error").is_none(), "{a_view}");
}

// ---------------------------------------------------------------------------------------
// 16.5: symlinked or uninterpretable structure is read or fatal, never skipped

/// Moves `branch/branch-b1` next to the table and leaves a symlink in its place (pypaimon
/// follows it and sees the branch).
fn symlink_branch_dir(table: &Path) {
    let link = table.join("branch/branch-b1");
    let real = table.parent().unwrap().join("b1-real");
    std::fs::rename(&link, &real).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
}

/// Files the branch b1 reads (pypaimon's view of its latest snapshot), relative to the table.
fn branch_files(table: &Path) -> Vec<String> {
    let v = common::pypaimon_view(table, &["--branch", "b1"]);
    assert!(v.get("error").is_none(), "{v}");
    let files: Vec<String> = v["live_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert!(!files.is_empty());
    files
}

#[test]
fn a_symlinked_branch_directory_protects_its_files_in_orphan_removal() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    common::set_tree_mtime(&table, two_days_ago());
    symlink_branch_dir(&table);
    let files = branch_files(&table);
    let before = common::all_versions(&table);
    assert!(
        before.keys().any(|k| k.starts_with("branch:b1")),
        "{before:?}"
    );
    let r = remove_orphans(&table, &Default::default());
    for f in &files {
        assert!(
            table.join(f).exists(),
            "{f} (read by branch b1) was deleted: {r:?}"
        );
    }
    assert_eq!(common::all_versions(&table), before);
}

#[test]
fn a_symlinked_branch_directory_protects_its_files_in_expiry() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    symlink_branch_dir(&table);
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    let files = branch_files(&table);
    let before = common::all_versions(&table);
    // Expire every snapshot the branch was made from, then the tag: only the branch still
    // reads those files.
    expire_all_but_one(&table).unwrap();
    let (_, t) = open(&table);
    let r = common::rt()
        .block_on(paimon_cleanup::clean::delete_tag(
            &t,
            "t1",
            false,
            &RunControl::default(),
        ))
        .unwrap();
    assert_eq!(r.tags_deleted, vec!["t1".to_string()]);
    for f in &files {
        assert!(
            table.join(f).exists(),
            "{f} (read by branch b1) was deleted"
        );
    }
    let after = common::all_versions(&table);
    for (k, v) in &after {
        if k.starts_with("branch:b1") {
            assert_eq!(v["row_digest"], before[k]["row_digest"], "{k}");
        }
    }
}

#[test]
fn an_uninterpretable_entry_in_a_metadata_directory_aborts_every_run() {
    use std::os::unix::ffi::OsStrExt;
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    common::set_tree_mtime(&table, two_days_ago());
    let not_utf8 = std::ffi::OsStr::from_bytes(b"tag-\xff\xfe");
    let cases: Vec<(&str, std::path::PathBuf)> = vec![
        ("tag name not UTF-8", table.join("tag").join(not_utf8)),
        ("FIFO as a snapshot", table.join("snapshot/snapshot-99")),
        (
            "dangling symlink as a consumer",
            table.join("consumer/consumer-x"),
        ),
        ("branch name not UTF-8", {
            std::fs::create_dir_all(table.join("branch")).unwrap();
            table
                .join("branch")
                .join(std::ffi::OsStr::from_bytes(b"branch-\xff"))
        }),
    ];
    for (what, path) in cases {
        match what {
            "tag name not UTF-8" => {
                std::fs::copy(table.join("tag/tag-t1"), &path).unwrap();
            }
            "FIFO as a snapshot" => {
                let ok = std::process::Command::new("mkfifo")
                    .arg(&path)
                    .status()
                    .unwrap()
                    .success();
                assert!(ok);
            }
            "dangling symlink as a consumer" => {
                std::os::unix::fs::symlink(table.join("no-such-file"), &path).unwrap();
            }
            _ => std::fs::create_dir(&path).unwrap(),
        }
        let before = tree_lossy(&table);
        if what.starts_with("branch") {
            // Every run opens the table, and opening lists the branches: it stops there.
            let opened = common::rt().block_on(async {
                let storage = Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap();
                Table::open(Arc::new(storage), &HashMap::new()).await
            });
            let err = opened.expect_err("the table opened");
            assert!(err.to_string().contains("not UTF-8"), "{what}: {err}");
            assert_eq!(tree_lossy(&table), before, "{what}: something was deleted");
            std::fs::remove_dir(&path).unwrap();
            continue;
        }
        let (_, t) = open(&table);
        let expire = expire_all_but_one(&table);
        assert!(expire.is_err(), "{what}: expiry went on: {expire:?}");
        let orphans = common::rt().block_on(paimon_cleanup::clean::remove_orphan_files(
            &t,
            &Default::default(),
            &RunControl::default(),
        ));
        // (Orphan removal does not read consumers: they reference no file.)
        if !what.contains("consumer") {
            assert!(
                orphans.is_err(),
                "{what}: orphan removal went on: {orphans:?}"
            );
        }
        if what.starts_with("tag") {
            // (Deleting a tag whose snapshot is still there reads only the tags.)
            let tags = common::rt().block_on(paimon_cleanup::clean::delete_tag(
                &t,
                "t1",
                false,
                &RunControl::default(),
            ));
            assert!(tags.is_err(), "{what}: tag deletion went on: {tags:?}");
        }
        eprintln!("{what}: {}", expire.unwrap_err());
        assert_eq!(tree_lossy(&table), before, "{what}: something was deleted");
        if path.is_dir() {
            std::fs::remove_dir(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
}

/// Every entry below `dir` (names shown lossily, symlinks not followed), for comparing states.
fn tree_lossy(dir: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.insert(p.to_string_lossy().into_owned());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// 17.4: orphan removal keeps every `snapshot-*` / `changelog-*` name, as Java does

#[test]
fn orphan_removal_keeps_snapshot_and_changelog_names_like_java() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    std::fs::create_dir_all(table.join("changelog")).unwrap();
    let kept = [
        "snapshot/snapshot-1.bak",
        "snapshot/snapshot-",
        "changelog/changelog-2.bak",
    ];
    let gone = ["snapshot/.snapshot-9.0b1c.tmp", "changelog/.LATEST.x.tmp"];
    for f in kept.iter().chain(&gone) {
        std::fs::write(table.join(f), b"{}").unwrap();
    }
    common::set_tree_mtime(&table, two_days_ago());
    let r = remove_orphans(&table, &Default::default());
    for f in kept {
        assert!(table.join(f).exists(), "{f} deleted: {r:?}");
    }
    for f in gone {
        assert!(!table.join(f).exists(), "{f} kept: {r:?}");
    }
}

/// A DELETE entry of an expired delta whose extra file is a file the kept snapshot reads.
#[test]
fn delete_entry_whose_extra_file_is_a_live_file_frees_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    // A live file of snapshot 1 in the same bucket directory as snapshot 2's first entry.
    let m = &delta_manifests(&table, 2)[0];
    let (_, t) = open(&table);
    let first = common::rt().block_on(async {
        t.reader()
            .manifest(t.paths(), m.file_name().unwrap().to_str().unwrap())
            .await
            .unwrap()
    });
    let e = &first[0];
    let dir = t
        .paths()
        .data_file(&e.partition, e.bucket, &e.file)
        .unwrap();
    let dir = Path::new(dir.as_str().strip_prefix("file://").unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    let live = common::pypaimon_view(&table, &[]);
    let victim_rel = live["live_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .find(|f| table.join(f).parent() == Some(dir.as_path()) && *f != e.file.file_name)
        .expect("a live file beside it")
        .to_string();
    let victim = table.join(&victim_rel);
    let victim_name = victim.file_name().unwrap().to_str().unwrap().to_string();
    craft(
        m,
        &[
            "--append",
            "--kind",
            "delete",
            "--file-name",
            "ghost-1.parquet",
            "--extra-file",
            &victim_name,
        ],
    );
    let before = common::pypaimon_view(&table, &[]);
    expire_all_but_one(&table).unwrap();
    assert!(
        victim.exists(),
        "a live file was deleted as another entry's extra: {victim_rel}"
    );
    let after = common::pypaimon_view(&table, &[]);
    assert_eq!(after["row_digest"], before["row_digest"], "{after}");
}
