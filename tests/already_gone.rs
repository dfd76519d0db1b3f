//! A report says exactly what its run deleted: a planned file that was already gone when the
//! run reached it is not "deleted". Snapshot expiry, tag deletion and orphan removal on
//! pypaimon-written tables, some of whose planned files are removed before (or while) the
//! run deletes; each report must list exactly the files that left the disk.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use paimon_cleanup::clean::{
    delete_tag, expire_snapshots, remove_orphan_files, DeletionReport, ExpireConfig, FileClass,
    OrphanConfig, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::{Location, Storage};
use paimon_cleanup::table::Table;

fn open(table: &Path) -> (tokio::runtime::Runtime, Table) {
    let rt = common::rt();
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    let t = rt.block_on(Table::open(storage, &HashMap::new())).unwrap();
    (rt, t)
}

fn expire_all_config(dry_run: bool) -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        dry_run,
        ..Default::default()
    }
}

/// The report's paths (relative to the table) with their classes.
fn reported(r: &DeletionReport) -> BTreeMap<String, FileClass> {
    r.paths.iter().map(|p| (p.path.clone(), p.class)).collect()
}

/// The files that left the disk between two trees.
fn removed(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeSet<String> {
    before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .cloned()
        .collect()
}

/// Removes every other planned file of `class` (at least one), as an earlier interrupted run
/// or another process would have; returns them.
fn remove_some(
    table: &Path,
    planned: &BTreeMap<String, FileClass>,
    class: FileClass,
) -> BTreeSet<String> {
    let of_class: Vec<&String> = planned
        .iter()
        .filter(|(_, c)| **c == class)
        .map(|(p, _)| p)
        .collect();
    assert!(
        !of_class.is_empty(),
        "nothing of {class:?} planned: {planned:?}"
    );
    let gone: BTreeSet<String> = of_class.into_iter().step_by(2).cloned().collect();
    for p in &gone {
        std::fs::remove_file(table.join(p)).unwrap();
    }
    gone
}

/// The report of a real run over files some of which were already gone lists exactly the
/// files that left the disk, with counts and bytes to match.
fn assert_reports_what_left(
    r: &DeletionReport,
    gone: &BTreeSet<String>,
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) {
    let paths: BTreeSet<String> = reported(r).into_keys().collect();
    for p in gone {
        assert!(!paths.contains(p), "{p} was not on disk, yet reported");
    }
    let left = removed(before, after);
    assert_eq!(paths, left, "the report lists what left the disk");
    assert_eq!(r.total_files(), left.len() as u64);
    let bytes: u64 = left.iter().map(|p| before[p]).sum();
    assert_eq!(r.total_bytes(), bytes, "bytes of what left the disk");
    assert!(r.failed.is_empty(), "{:?}", r.failed);
}

#[test]
fn snapshot_expiry_does_not_report_files_already_gone() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    let (rt, t) = open(&table);
    let ctl = RunControl::default();
    let plan = rt
        .block_on(expire_snapshots(&t, &expire_all_config(true), &ctl))
        .unwrap();
    let planned = reported(&plan.deletion);
    // Data files (sized by metadata: the delete says they were absent; the metadata the plan
    // reads must stay).
    let gone = remove_some(&table, &planned, FileClass::Data);
    let before = common::tree(&table);

    let r = rt
        .block_on(expire_snapshots(&t, &expire_all_config(false), &ctl))
        .unwrap();
    let after = common::tree(&table);
    assert!(r.snapshots_expired > 0, "{r:?}");
    assert_reports_what_left(&r.deletion, &gone, &before, &after);
    let expected: BTreeSet<String> = planned
        .keys()
        .filter(|p| !gone.contains(*p))
        .cloned()
        .collect();
    assert_eq!(
        removed(&before, &after),
        expected,
        "everything else still goes"
    );
    for (k, v) in common::all_versions(&table) {
        assert!(v.get("error").is_none(), "{k}: {v}");
    }
}

#[test]
fn tag_deletion_does_not_report_files_already_gone() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    std::fs::remove_dir_all(table.join("branch/branch-b1")).unwrap();
    let (rt, t) = open(&table);
    let ctl = RunControl::default();
    rt.block_on(expire_snapshots(&t, &expire_all_config(false), &ctl))
        .unwrap();
    let plan = rt.block_on(delete_tag(&t, "t1", true, &ctl)).unwrap();
    let planned = reported(&plan.deletion);
    let gone = remove_some(&table, &planned, FileClass::Data);
    let before = common::tree(&table);

    let r = rt.block_on(delete_tag(&t, "t1", false, &ctl)).unwrap();
    let after = common::tree(&table);
    assert_eq!(r.tags_deleted, vec!["t1".to_string()]);
    assert_reports_what_left(&r.deletion, &gone, &before, &after);
    for (k, v) in common::all_versions(&table) {
        assert!(v.get("error").is_none(), "{k}: {v}");
    }
}

/// Orphan files that another process removes after the listing, while the run decides (the
/// veto stands in for it), are not reported as deleted by this run.
#[test]
fn orphan_removal_does_not_report_files_removed_meanwhile() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let strays = [
        "p=0/bucket-1/data-stray-1.parquet",
        "p=0/bucket-1/data-stray-2.parquet",
        "p=1/bucket-0/data-stray-3.parquet",
        "p=1/bucket-0/data-stray-4.parquet",
    ];
    for f in strays {
        std::fs::write(table.join(f), b"stray").unwrap();
    }
    common::set_tree_mtime(&table, SystemTime::now() - Duration::from_secs(2 * 86_400));
    let mut before = common::tree(&table);

    // Asked about each file before anything is deleted: it removes two of them itself.
    let taken: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let taken2 = taken.clone();
    let cfg = OrphanConfig {
        veto: Some(Arc::new(move |l: &Location| {
            let name = l.name().to_string();
            if name.ends_with("-1.parquet") || name.ends_with("-3.parquet") {
                let p = PathBuf::from(l.as_str().strip_prefix("file://").unwrap_or(l.as_str()));
                std::fs::remove_file(&p).unwrap();
                taken2.lock().unwrap().push(p);
            }
            false
        })),
        ..Default::default()
    };
    let (rt, t) = open(&table);
    let r = rt
        .block_on(remove_orphan_files(&t, &cfg, &RunControl::default()))
        .unwrap();
    let after = common::tree(&table);
    assert_eq!(
        taken.lock().unwrap().len(),
        2,
        "the veto removed two strays"
    );
    let gone: BTreeSet<String> = [strays[0], strays[2]].map(String::from).into();
    // What the run itself removed: not what the veto took.
    before.retain(|k, _| !gone.contains(k));
    assert_reports_what_left(&r.deletion, &gone, &before, &after);
    let expected: BTreeSet<String> = [strays[1], strays[3]].map(String::from).into();
    assert_eq!(
        reported(&r.deletion).into_keys().collect::<BTreeSet<_>>(),
        expected
    );
}
