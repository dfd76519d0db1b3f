//! Hints that disagree with the listing: an `EARLIEST` above versions that still exist (as a
//! run that moved the hint and then failed to delete them leaves it), a `LATEST` below the
//! listed maximum, ids with gaps. Every version the listing shows is either expired whole (its
//! files handled like any expired snapshot's, its file deleted last) or protects its files:
//! never is a version file left whose files were deleted.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{
    expire_changelogs, expire_snapshots, ChangelogExpireConfig, ExpireConfig, ExpireReport,
    RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn open_with(table: &Path, branch: &str, options: &HashMap<String, String>) -> Table {
    common::rt().block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        Table::open_branch(storage, options, branch).await.unwrap()
    })
}

fn open(table: &Path, branch: &str) -> Table {
    open_with(table, branch, &HashMap::new())
}

fn keep(n: i64, dry_run: bool) -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(n),
            retain_max: Some(n),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        dry_run,
        ..Default::default()
    }
}

fn paths(r: &paimon_cleanup::clean::DeletionReport) -> Vec<String> {
    let mut v: Vec<String> = r.paths.iter().map(|p| p.path.clone()).collect();
    v.sort();
    v
}

/// Dry run then real run of snapshot expiry keeping `n` on `branch`: the dry run changes
/// nothing and lists what the real run deletes.
fn expire(table: &Path, branch: &str, n: i64) -> ExpireReport {
    let t = open(table, branch);
    let tree = common::tree(table);
    let run = |dry| {
        common::rt()
            .block_on(expire_snapshots(&t, &keep(n, dry), &RunControl::default()))
            .unwrap()
    };
    let dry = run(true);
    assert_eq!(common::tree(table), tree, "the dry run changed files");
    let real = run(false);
    assert_eq!(paths(&dry.deletion), paths(&real.deletion));
    real
}

/// pypaimon's view of every version that is left: none fails, and each reads as before.
fn assert_readable_as_before(
    before: &serde_json::Map<String, serde_json::Value>,
    after: &serde_json::Map<String, serde_json::Value>,
) {
    for (k, v) in after {
        assert!(v.get("error").is_none(), "{k} no longer reads: {v}");
        assert_eq!(
            v.get("row_digest"),
            before[k].get("row_digest"),
            "{k} reads other rows"
        );
    }
}

/// append_unaware without what would protect the oldest snapshots' files besides themselves
/// (tag t1, branch b1, consumer c1): its later snapshots overwrite and drop partitions, so
/// the deltas of 4 and 5 delete files snapshots 1 to 3 read.
fn unprotected_history() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let (tmp, table, _) = common::pypaimon_table("append_unaware")?;
    std::fs::remove_file(table.join("tag/tag-t1")).unwrap();
    std::fs::remove_dir_all(table.join("branch")).unwrap();
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    assert_eq!(common::snapshot_ids(&table), vec![1, 2, 3, 4, 5, 6]);
    Some((tmp, table))
}

fn write(table: &Path, rel: &str, text: &str) {
    std::fs::write(table.join(rel), text).unwrap();
}

/// `snapshot/EARLIEST` = 3 while snapshots 1 and 2 exist: they expire whole with the others.
#[test]
fn snapshots_below_the_earliest_hint_expire_whole() {
    let Some((_tmp, table)) = unprotected_history() else {
        return;
    };
    write(&table, "snapshot/EARLIEST", "3");
    let before = common::all_versions(&table);
    let report = expire(&table, "main", 1);
    assert_eq!(report.first_expired, Some(1), "{report:?}");
    assert_eq!(report.snapshots_expired, 5);
    assert_eq!(common::snapshot_ids(&table), vec![6]);
    assert_eq!(
        std::fs::read_to_string(table.join("snapshot/EARLIEST")).unwrap(),
        "6"
    );
    let after = common::all_versions(&table);
    assert_eq!(after.keys().collect::<Vec<_>>(), vec!["snapshot:6"]);
    assert_readable_as_before(&before, &after);
    // A rerun has nothing left to do.
    let again = expire(&table, "main", 1);
    assert_eq!(again.deletion.total_files(), 0, "{again:?}");
}

/// The same with a gap below the hint (snapshot 2 missing): snapshot 1 expires whole.
#[test]
fn a_snapshot_below_the_earliest_hint_and_a_gap_expires_whole() {
    let Some((_tmp, table)) = unprotected_history() else {
        return;
    };
    std::fs::remove_file(table.join("snapshot/snapshot-2")).unwrap();
    write(&table, "snapshot/EARLIEST", "3");
    let before = common::all_versions(&table);
    let report = expire(&table, "main", 2);
    assert_eq!(report.first_expired, Some(1), "{report:?}");
    assert_eq!(common::snapshot_ids(&table), vec![5, 6]);
    let after = common::all_versions(&table);
    assert_readable_as_before(&before, &after);
    assert!(after.contains_key("snapshot:5") && after.contains_key("snapshot:6"));
}

/// `LATEST` = 4 while snapshot 5 is missing and 6 exists: the hint is trusted (5 is absent),
/// so retention counts from 4 and keeps 4; snapshot 6 still protects its files.
#[test]
fn a_latest_hint_below_the_listed_maximum_keeps_every_version_above_it() {
    let Some((_tmp, table)) = unprotected_history() else {
        return;
    };
    std::fs::remove_file(table.join("snapshot/snapshot-5")).unwrap();
    write(&table, "snapshot/LATEST", "4");
    write(&table, "snapshot/EARLIEST", "2");
    let before = common::all_versions(&table);
    let report = expire(&table, "main", 1);
    assert_eq!(
        (report.first_expired, report.last_expired),
        (Some(1), Some(3)),
        "{report:?}"
    );
    assert_eq!(common::snapshot_ids(&table), vec![4, 6]);
    let after = common::all_versions(&table);
    assert_readable_as_before(&before, &after);
    assert!(after.contains_key("snapshot:4") && after.contains_key("snapshot:6"));
}

/// A branch's `EARLIEST` ahead of its listing: the branch's snapshots below it expire whole,
/// and main's snapshots still read.
#[test]
fn a_branch_snapshot_below_its_earliest_hint_expires_whole() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let dir = table.join("branch/branch-b1/snapshot");
    let mut ids: Vec<i64> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix("snapshot-")?
                .parse()
                .ok()
        })
        .collect();
    ids.sort();
    assert!(ids.len() >= 2, "branch b1 snapshots: {ids:?}");
    let last = *ids.last().unwrap();
    std::fs::write(dir.join("EARLIEST"), last.to_string()).unwrap();
    let before = common::all_versions(&table);
    let report = expire(&table, "b1", 1);
    assert_eq!(report.first_expired, ids.first().copied(), "{report:?}");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.starts_with("snapshot-"))
        .collect();
    assert_eq!(left, vec![format!("snapshot-{last}")]);
    let after = common::all_versions(&table);
    assert_readable_as_before(&before, &after);
}

/// A decoupled changelog lifecycle, then `changelog/EARLIEST` ahead of the listed changelogs:
/// changelog expiry expires the ones below it whole.
#[test]
fn changelogs_below_the_earliest_hint_expire_whole() {
    let Some((_tmp, table)) = unprotected_history() else {
        return;
    };
    // A decoupled lifecycle: snapshot expiry keeping 1 snapshot writes changelogs 1 to 5.
    let options: HashMap<String, String> = [
        ("changelog.num-retained.max", "100"),
        ("snapshot.num-retained.max", "1"),
        ("snapshot.num-retained.min", "1"),
        ("snapshot.time-retained", "0s"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let t = open_with(&table, "main", &options);
    common::rt()
        .block_on(expire_snapshots(
            &t,
            &keep(1, false),
            &RunControl::default(),
        ))
        .unwrap();
    let changelog_ids = || -> Vec<i64> {
        let mut ids: Vec<i64> = std::fs::read_dir(table.join("changelog"))
            .unwrap()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_prefix("changelog-")?
                    .parse()
                    .ok()
            })
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(changelog_ids(), vec![1, 2, 3, 4, 5]);
    write(&table, "changelog/EARLIEST", "4");
    let before = common::all_versions(&table);
    let run = |dry_run| {
        let cfg = ChangelogExpireConfig {
            retention: RetentionOverrides {
                retain_min: Some(2),
                retain_max: Some(2),
                time_retained: Some(Duration::ZERO),
                ..Default::default()
            },
            dry_run,
            ..Default::default()
        };
        common::rt()
            .block_on(expire_changelogs(&t, &cfg, &RunControl::default()))
            .unwrap()
    };
    let tree = common::tree(&table);
    let dry = run(true);
    assert_eq!(common::tree(&table), tree);
    let real = run(false);
    assert_eq!(paths(&dry.deletion), paths(&real.deletion));
    assert_eq!(real.first_expired, Some(1), "{real:?}");
    assert_eq!(changelog_ids(), vec![5]);
    let after = common::all_versions(&table);
    assert_readable_as_before(&before, &after);
}
