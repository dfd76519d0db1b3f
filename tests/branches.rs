//! Every command on any branch (`--branch NAME`, `-o branch=NAME`, `<table>$branch_NAME`),
//! through the CLI, on a pypaimon table with a branch and a Java-written one: a branch's
//! expiry, tags, changelogs and partitions change only that branch; main reads identically
//! and keeps every file its versions read.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(common::cli_bin()).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(args: &[&str]) -> String {
    let (success, stdout, stderr) = cli(args);
    assert!(
        success,
        "paimon-cleanup {args:?} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// Files of `dir` (relative path → size and modification time), recursively.
fn listing(dir: &Path) -> BTreeMap<String, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    if !dir.exists() {
        return out;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let m = e.metadata().unwrap();
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, (m.len(), m.modified().unwrap()));
            }
        }
    }
    out
}

/// main's own metadata: snapshot/, tag/, consumer/, changelog/, schema/.
fn main_metadata(table: &Path) -> BTreeMap<String, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    for sub in ["snapshot", "tag", "consumer", "changelog", "schema"] {
        for (k, v) in listing(&table.join(sub)) {
            out.insert(format!("{sub}/{k}"), v);
        }
    }
    out
}

/// pypaimon's views of main's versions (keys without a branch prefix).
fn main_views(table: &Path) -> BTreeMap<String, serde_json::Value> {
    common::all_versions(table)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("branch"))
        .collect()
}

fn assert_main_untouched(
    table: &Path,
    meta: &BTreeMap<String, (u64, std::time::SystemTime)>,
    views: &BTreeMap<String, serde_json::Value>,
    step: &str,
) {
    assert_eq!(
        &main_metadata(table),
        meta,
        "{step}: main's metadata changed"
    );
    let now = main_views(table);
    assert_eq!(now.len(), views.len(), "{step}: main's versions changed");
    for (k, v) in views {
        let after = &now[k];
        assert!(
            after.get("error").is_none(),
            "{step}: {k} unreadable: {after}"
        );
        assert_eq!(
            after["row_digest"], v["row_digest"],
            "{step}: {k} reads differently"
        );
        for f in v["live_files"].as_array().unwrap() {
            let f = f.as_str().unwrap();
            assert!(
                table.join(f).exists(),
                "{step}: {f}, read by main's {k}, was deleted"
            );
        }
    }
}

fn ids(dir: &Path, prefix: &str) -> Vec<i64> {
    let mut v: Vec<i64> = listing(dir)
        .keys()
        .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
        .collect();
    v.sort();
    v
}

#[test]
fn every_command_on_a_branch_changes_only_that_branch() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let t = table.to_str().unwrap();
    let b1 = table.join("branch/branch-b1");
    // A tag on the branch, and one of the same name on main.
    std::fs::create_dir_all(b1.join("tag")).unwrap();
    std::fs::copy(b1.join("snapshot/snapshot-2"), b1.join("tag/tag-bt")).unwrap();
    std::fs::copy(table.join("snapshot/snapshot-6"), table.join("tag/tag-bt")).unwrap();
    std::fs::copy(b1.join("snapshot/snapshot-2"), b1.join("tag/tag-old")).unwrap();
    let meta = main_metadata(&table);
    let views = main_views(&table);
    let branch_latest_before = common::pypaimon_view(&table, &["--branch", "b1"]);
    // b1 was made from tag t1 (snapshot 2), then committed snapshot 3.
    assert_eq!(ids(&b1.join("snapshot"), "snapshot-"), vec![2, 3]);

    // expire-snapshots (decoupled: the branch's expired snapshots become its changelogs).
    let out = ok(&[
        "expire-snapshots",
        t,
        "--branch",
        "b1",
        "--retain-min",
        "1",
        "--time-retained",
        "0s",
        "-o",
        "changelog.num-retained.max=100",
        "-o",
        "snapshot.num-retained.max=1",
        "--json",
    ]);
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["snapshots_expired"], 1, "{out}");
    assert_eq!(ids(&b1.join("snapshot"), "snapshot-"), vec![3]);
    assert_eq!(ids(&b1.join("changelog"), "changelog-"), vec![2]);
    assert!(!table.join("changelog").exists(), "main got changelogs");
    assert_main_untouched(&table, &meta, &views, "expire-snapshots --branch");

    // expire-changelogs, with the branch named by `-o branch=`.
    ok(&["expire-changelogs", t, "-o", "branch=b1", "--delete-all"]);
    assert!(ids(&b1.join("changelog"), "changelog-").is_empty());
    assert_main_untouched(&table, &meta, &views, "expire-changelogs -o branch=");

    // delete-tag with the branch in the table path, Java's `t$branch_b1`.
    let branch_path = format!("{t}$branch_b1");
    ok(&["delete-tag", &branch_path, "bt"]);
    assert!(!b1.join("tag/tag-bt").exists());
    assert!(
        table.join("tag/tag-bt").exists(),
        "main's tag bt was deleted"
    );
    assert_main_untouched(&table, &meta, &views, "delete-tag t$branch_b1");

    // expire-tags on the branch: its remaining tag goes, main's stay.
    ok(&["expire-tags", t, "--branch", "b1", "--older-than-ms", "0"]);
    assert!(b1.join("tag/tag-old").exists(), "nothing is older than 0");
    // Tag files older than the cut-off (their modification time: no creation time recorded).
    common::set_mtime(
        &b1.join("tag/tag-old"),
        std::time::SystemTime::now() - std::time::Duration::from_secs(3600),
    );
    let cut = (std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string();
    ok(&["expire-tags", t, "--branch", "b1", "--older-than-ms", &cut]);
    assert!(!b1.join("tag/tag-old").exists());
    assert_main_untouched(&table, &meta, &views, "expire-tags --branch");

    // drop-partitions on the branch: a new snapshot of the branch only.
    ok(&[
        "drop-partitions",
        t,
        "--branch",
        "b1",
        "--partition",
        "dt=branch-only",
    ]);
    assert_eq!(ids(&b1.join("snapshot"), "snapshot-"), vec![3, 4]);
    let branch_latest = common::pypaimon_view(&table, &["--branch", "b1"]);
    assert!(branch_latest.get("error").is_none(), "{branch_latest}");
    assert_ne!(
        branch_latest["row_digest"],
        branch_latest_before["row_digest"]
    );
    assert!(
        branch_latest["live_files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| !f.as_str().unwrap().contains("branch-only")),
        "{branch_latest}"
    );
    assert_main_untouched(&table, &meta, &views, "drop-partitions --branch");

    // Then the dropped files go with the branch's next expiry; main still intact.
    ok(&[
        "expire-snapshots",
        t,
        "--branch",
        "b1",
        "--retain-min",
        "1",
        "--time-retained",
        "0s",
    ]);
    assert_eq!(ids(&b1.join("snapshot"), "snapshot-"), vec![4]);
    assert!(
        !common::data_files_on_disk(&table)
            .iter()
            .any(|f| f.contains("dt=branch-only") && !f.ends_with('/')),
        "the dropped branch-only files stayed"
    );
    assert_main_untouched(&table, &meta, &views, "expire-snapshots after drop");

    // inspect and maintain on the branch.
    let out = ok(&["inspect", t, "--branch", "b1", "--json"]);
    let i: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(i["branch"], "b1");
    assert_eq!(i["snapshots"], serde_json::json!([4]));
    ok(&["maintain", t, "--branch", "b1"]);
    // A consumer of the branch, older than main's c1: only the branch's goes.
    std::fs::create_dir_all(b1.join("consumer")).unwrap();
    std::fs::write(b1.join("consumer/consumer-cb"), br#"{"nextSnapshot":4}"#).unwrap();
    common::set_mtime(
        &b1.join("consumer/consumer-cb"),
        std::time::SystemTime::now() - std::time::Duration::from_secs(7200),
    );
    common::set_mtime(
        &table.join("consumer/consumer-c1"),
        std::time::SystemTime::now() - std::time::Duration::from_secs(7200),
    );
    let meta = main_metadata(&table);
    ok(&[
        "expire-consumers",
        t,
        "--branch",
        "b1",
        "--expiration-time",
        "1 h",
    ]);
    assert!(!b1.join("consumer/consumer-cb").exists());
    assert_main_untouched(&table, &meta, &views, "maintain --branch");

    // Orphan removal is table-wide: the same plan whatever the branch.
    let dry = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["remove-orphan-files", t, "--dry-run", "--json"];
        args.extend_from_slice(extra);
        let v: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
        v["deletion"]["paths"].clone()
    };
    assert_eq!(dry(&[]), dry(&["--branch", "b1"]));
}

#[test]
fn bad_or_missing_branches_are_errors_and_change_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let t = table.to_str().unwrap();
    let before = common::tree(&table);
    for args in [
        vec![
            "expire-snapshots",
            t,
            "--branch",
            "../b1",
            "--retain-min",
            "1",
        ],
        vec!["expire-snapshots", t, "--branch", "", "--retain-min", "1"],
        vec![
            "expire-snapshots",
            t,
            "--branch",
            "nosuch",
            "--retain-min",
            "1",
        ],
        vec!["expire-snapshots", t, "--branch", "b1", "-o", "branch=main"],
        vec!["delete-tag", t, "--branch", "a/b", "t1"],
    ] {
        let (success, stdout, stderr) = cli(&args);
        assert!(!success, "{args:?} succeeded:\n{stdout}");
        assert!(stderr.contains("branch"), "{args:?}: {stderr}");
    }
    let (success, _, stderr) = cli(&["expire-snapshots", &format!("{t}$branch_nosuch")]);
    assert!(!success);
    assert!(stderr.contains("nosuch"), "{stderr}");
    assert_eq!(common::tree(&table), before);
}

/// A Java-written table with a branch: expiring the branch removes only its snapshot, and main
/// (whose first snapshot the branch was made from) keeps every file.
#[test]
fn java_fixture_branch_expiry_keeps_main() {
    let Some(root) = common::fixtures_dir() else {
        return;
    };
    if common::python().is_none() {
        return;
    }
    let (_tmp, table) =
        common::copy_table(&root.join(
            "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
        ));
    let t = table.to_str().unwrap();
    let meta = main_metadata(&table);
    let views = main_views(&table);
    let data = common::data_files_on_disk(&table);
    let b = table.join("branch/branch-test");
    ok(&[
        "expire-snapshots",
        &format!("{t}$branch_test"),
        "--retain-min",
        "1",
        "--time-retained",
        "0s",
    ]);
    assert_eq!(ids(&b.join("snapshot"), "snapshot-"), vec![2]);
    assert_main_untouched(&table, &meta, &views, "java fixture");
    assert_eq!(common::data_files_on_disk(&table), data);
    let v = common::pypaimon_view(&table, &["--branch", "test"]);
    assert!(v.get("error").is_none(), "{v}");
}
