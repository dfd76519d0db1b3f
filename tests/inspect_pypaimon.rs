//! `inspect` on tables that pypaimon writes at test time (append, PK fixed/dynamic bucket,
//! changelog-producer=input, tags, a branch, a consumer, overwrites, dropped partitions, a
//! deletion-vector table; STRING/INT/DATE partitions with NULL, '' and values needing escaping).
//! Every fact is checked against pypaimon's own view of the same table.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::inspect::inspect;

const TABLES: &[&str] = &[
    "append_unaware",
    "append_fixed_bucket",
    "pk_fixed",
    "pk_dynamic",
    "pk_changelog",
    "dv_table",
    "retention_opts",
];

fn strings(v: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn inspect_matches_pypaimon_on_every_written_table() {
    for name in TABLES {
        let Some((_tmp, table, entry)) = common::pypaimon_table(name) else {
            return;
        };
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let report = common::rt()
            .block_on(inspect(storage, &HashMap::new()))
            .unwrap_or_else(|e| panic!("{name}: {e}"));

        let snaps: Vec<i64> = entry["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(report.snapshots, snaps, "{name}: snapshots");
        assert_eq!(
            report.latest_snapshot_id,
            snaps.last().copied(),
            "{name}: latest"
        );
        let tags: BTreeMap<String, i64> = entry["tags"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        assert_eq!(report.tags, tags, "{name}: tags");
        let consumers: BTreeMap<String, i64> = entry["consumers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        assert_eq!(report.consumers, consumers, "{name}: consumers");
        let mut branches = strings(&entry["branches"]);
        branches.retain(|b| b != "main");
        branches.insert(0, "main".into());
        assert_eq!(report.branches, branches, "{name}: branches");

        let theirs = common::pypaimon_view(&table, &["--files-only"]);
        assert_eq!(
            report.live_files,
            strings(&theirs["live_files"]),
            "{name}: live files"
        );
        for f in &report.live_files {
            assert!(table.join(f).is_file(), "{name}: {f} missing");
        }

        // Every branch's snapshots and tags as pypaimon lists them.
        if let Some(bs) = entry["branch_snapshots"].as_object() {
            for (b, ids) in bs.iter().filter(|(b, _)| b.as_str() != "main") {
                let detail = &report.branch_details[b];
                let ids: Vec<i64> = ids
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect();
                assert_eq!(detail.snapshots, ids, "{name}: branch {b} snapshots");
            }
        }
    }
}

#[test]
fn escaped_null_and_empty_partition_values_resolve_to_their_directories() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    let report = common::rt()
        .block_on(inspect(storage, &HashMap::new()))
        .unwrap();
    for dir in [
        "dt=a%2Fb/",
        "dt=x%3Dy/",
        "dt=%2541/",
        "dt=ü日/",
        "dt=has space/",
        "dt=__DEFAULT_PARTITION__/",
    ] {
        assert!(
            report.live_files.iter().any(|f| f.starts_with(dir)),
            "no live file under {dir}: {:?}",
            report.live_files
        );
    }
}
