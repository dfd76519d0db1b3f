//! Tag deletion and expiry, long-lived changelog expiry, consumer expiry and `maintain`, on
//! pypaimon-written tables, checked by pypaimon and by the files left on disk.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use paimon_cleanup::clean::{
    delete_tag, expire_changelogs, expire_consumers, expire_snapshots, expire_tags, maintain,
    ChangelogExpireConfig, ExpireConfig, FileClass, MaintainConfig, RetentionOverrides, RunControl,
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

fn expire_all(rt: &tokio::runtime::Runtime, t: &Table) {
    let cfg = ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        ..Default::default()
    };
    rt.block_on(expire_snapshots(t, &cfg, &RunControl::default()))
        .unwrap();
}

fn needed(views: &serde_json::Map<String, serde_json::Value>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for v in views.values() {
        assert!(v.get("error").is_none(), "unreadable version: {v}");
        for key in ["live_files", "changelog_files"] {
            if let Some(a) = v[key].as_array() {
                out.extend(a.iter().map(|s| s.as_str().unwrap().to_string()));
            }
        }
    }
    out
}

fn set_mtime(path: &Path, age: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

#[test]
fn delete_tag_keeps_what_a_branch_needs_and_frees_the_rest_once_the_branch_is_gone() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    let (rt, t) = open(&table, &[]);
    expire_all(&rt, &t);
    let data_before = common::data_files_on_disk(&table);

    // The branch b1 was made from tag t1: deleting t1 must not free anything b1 reads.
    let r = rt
        .block_on(delete_tag(&t, "t1", false, &RunControl::default()))
        .unwrap();
    assert_eq!(r.tags_deleted, vec!["t1".to_string()]);
    assert_eq!(r.deletion.count(FileClass::Data).files, 0);
    assert_eq!(common::data_files_on_disk(&table), data_before);
    let views = common::all_versions(&table);
    assert_eq!(common::data_files_on_disk(&table), needed(&views));

    // A second deletion of the same tag is a no-op that says so.
    let again = rt
        .block_on(delete_tag(&t, "t1", false, &RunControl::default()))
        .unwrap();
    assert_eq!(again.tags_not_found, vec!["t1".to_string()]);
    assert_eq!(again.deletion.total_files(), 0);
}

#[test]
fn deleting_a_tag_whose_snapshot_expired_frees_its_exclusive_files() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    // Drop the branch; what only its own commits wrote becomes orphan (orphan cleanup's job).
    let branch_views: serde_json::Map<String, serde_json::Value> = common::all_versions(&table)
        .into_iter()
        .filter(|(k, _)| k.starts_with("branch:b1"))
        .collect();
    let branch_files = needed(&branch_views);
    std::fs::remove_dir_all(table.join("branch/branch-b1")).unwrap();
    let (rt, t) = open(&table, &[]);
    expire_all(&rt, &t);
    let before = common::all_versions(&table);
    assert!(before.contains_key("tag:t1"));
    let r = rt
        .block_on(delete_tag(&t, "t1", false, &RunControl::default()))
        .unwrap();
    assert!(r.deletion.count(FileClass::Data).files > 0, "{r:?}");
    assert!(r.deletion.count(FileClass::ManifestList).files > 0, "{r:?}");
    let after = common::all_versions(&table);
    for (k, v) in &after {
        assert_eq!(v["row_digest"], before[k]["row_digest"], "{k}");
    }
    assert!(!after.contains_key("tag:t1"));
    let on_disk = common::data_files_on_disk(&table);
    let need = needed(&after);
    assert!(need.is_subset(&on_disk), "a needed file is gone");
    let left: BTreeSet<String> = on_disk.difference(&need).cloned().collect();
    assert!(
        left.is_subset(&branch_files),
        "files left that neither a version nor the dropped branch explains: {left:?}"
    );
}

#[test]
fn expire_tags_by_retention_and_by_age() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    // Give t1 a creation time two days ago and a one-hour retention (Java's JSON forms).
    let tag_file = table.join("tag/tag-t1");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&tag_file).unwrap()).unwrap();
    let created = chrono::Local::now().naive_local() - chrono::Duration::days(2);
    use chrono::{Datelike, Timelike};
    json["tagCreateTime"] = serde_json::json!([
        created.year(),
        created.month(),
        created.day(),
        created.hour(),
        created.minute()
    ]);
    json["tagTimeRetained"] = serde_json::json!(3600.0);
    std::fs::write(&tag_file, serde_json::to_vec(&json).unwrap()).unwrap();
    let (rt, t) = open(&table, &[]);
    let dry = rt
        .block_on(expire_tags(&t, None, true, &RunControl::default()))
        .unwrap();
    assert_eq!(dry.tags_deleted, vec!["t1".to_string()]);
    assert!(tag_file.exists(), "dry run deleted the tag");
    let r = rt
        .block_on(expire_tags(&t, None, false, &RunControl::default()))
        .unwrap();
    assert_eq!(r.tags_deleted, vec!["t1".to_string()]);
    assert!(!tag_file.exists());

    // A tag without retention expires only by age (file time when it has no creation time).
    let b1_tag = table.join("branch/branch-b1/tag/tag-t1");
    assert!(b1_tag.exists());
    let (rt2, b1) = (common::rt(), rt.block_on(t.branch("b1")).unwrap());
    let young = rt2
        .block_on(expire_tags(
            &b1,
            Some(paimon_cleanup::clean::shared::clock::now_millis() - 3_600_000),
            false,
            &RunControl::default(),
        ))
        .unwrap();
    assert!(young.tags_deleted.is_empty(), "{young:?}");
    set_mtime(&b1_tag, Duration::from_secs(2 * 86400));
    let old = rt2
        .block_on(expire_tags(
            &b1,
            Some(paimon_cleanup::clean::shared::clock::now_millis() - 3_600_000),
            false,
            &RunControl::default(),
        ))
        .unwrap();
    assert_eq!(old.tags_deleted, vec!["t1".to_string()]);
    // The branch still reads as before (its snapshot holds the files).
    let views = common::all_versions(&table);
    assert_eq!(common::data_files_on_disk(&table), needed(&views));
}

#[test]
fn consumers_expire_by_modification_time() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let c = table.join("consumer/consumer-c1");
    let (rt, t) = open(&table, &[]);
    let r = rt
        .block_on(expire_consumers(
            &t,
            Some(Duration::from_secs(3600)),
            false,
            &RunControl::default(),
        ))
        .unwrap();
    assert!(r.expired.is_empty());
    assert!(c.exists());
    set_mtime(&c, Duration::from_secs(7200));
    let r = rt
        .block_on(expire_consumers(
            &t,
            Some(Duration::from_secs(3600)),
            false,
            &RunControl::default(),
        ))
        .unwrap();
    assert_eq!(r.expired, vec!["c1".to_string()]);
    assert!(!c.exists());
    // No expiration time anywhere is an error.
    assert!(rt
        .block_on(expire_consumers(&t, None, false, &RunControl::default()))
        .is_err());
}

#[test]
fn decoupled_changelogs_outlive_snapshots_then_expire() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let opts = [
        ("changelog.num-retained.max", "100"),
        ("snapshot.num-retained.max", "1"),
        ("snapshot.num-retained.min", "1"),
        ("snapshot.time-retained", "0s"),
        ("changelog.time-retained", "0s"),
    ];
    let (rt, t) = open(&table, &opts);
    let before = common::all_versions(&table);
    let changelog_files_before: BTreeSet<String> = before
        .values()
        .flat_map(|v| v["changelog_files"].as_array().cloned().unwrap_or_default())
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let r = rt
        .block_on(expire_snapshots(
            &t,
            &ExpireConfig::default(),
            &RunControl::default(),
        ))
        .unwrap();
    assert!(r.snapshots_expired > 0);
    assert_eq!(r.changelogs_written, r.snapshots_expired);
    assert_eq!(
        r.deletion.count(FileClass::ChangelogData).files,
        0,
        "decoupled: changelog data kept"
    );
    for f in &changelog_files_before {
        assert!(
            table.join(f).exists(),
            "changelog file {f} deleted while its changelog lives"
        );
    }
    let after = common::all_versions(&table);
    for (k, v) in &after {
        assert_eq!(v["row_digest"], before[k]["row_digest"], "{k}");
    }

    // Now every changelog older than the earliest snapshot goes, with its exclusive files.
    let cfg = ChangelogExpireConfig {
        delete_all: true,
        ..Default::default()
    };
    let cl = rt
        .block_on(expire_changelogs(&t, &cfg, &RunControl::default()))
        .unwrap();
    assert_eq!(cl.changelogs_expired, r.snapshots_expired);
    assert!(
        cl.deletion.count(FileClass::ChangelogData).files > 0,
        "{cl:?}"
    );
    assert!(!table.join("changelog/changelog-1").exists());
    let views = common::all_versions(&table);
    for (k, v) in &views {
        assert_eq!(v["row_digest"], before[k]["row_digest"], "{k}");
    }
    assert_eq!(common::data_files_on_disk(&table), needed(&views));

    // maintain on the same table: nothing left to do, nothing deleted.
    let m = rt
        .block_on(maintain(
            &t,
            &MaintainConfig::default(),
            &RunControl::default(),
        ))
        .unwrap();
    assert_eq!(m.snapshots.unwrap().deletion.total_files(), 0);
}

#[test]
fn maintain_runs_partition_expiry_from_the_table_options() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let (rt, t) = open(
        &table,
        &[
            ("partition.expiration-time", "1d"),
            ("partition.timestamp-formatter", "yyyy-MM-dd"),
        ],
    );
    let before = common::all_versions(&table);
    let m = rt
        .block_on(maintain(
            &t,
            &MaintainConfig::default(),
            &RunControl::default(),
        ))
        .unwrap();
    let p = m.partitions.expect("partition expiry ran");
    assert!(!p.partitions.is_empty(), "{p:?}");
    for spec in &p.partitions {
        assert!(
            spec["dt"].starts_with("2024-"),
            "only dated partitions expire: {spec:?}"
        );
    }
    // Older versions still read as before; the latest no longer has the expired partitions.
    let after = common::all_versions(&table);
    for (k, v) in &after {
        if let Some(old) = before.get(k) {
            if k != "snapshot:7" {
                assert_eq!(v["row_digest"], old["row_digest"], "{k}");
            }
        }
    }
}
