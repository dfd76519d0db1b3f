//! Snapshot expiry on a copy of EVERY Java-written fixture table: after expiring everything
//! but the latest snapshot, the latest snapshot, every tag and every branch still read the same
//! (pypaimon where it can read the table, our own reader everywhere), the data files left are
//! exactly those the remaining versions reference, and a second run changes nothing.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{expire_snapshots, ExpireConfig, RetentionOverrides, RunControl};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::{list_branches, Table};

fn cfg() -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            limit: Some(10_000),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Every data file any remaining version (all snapshots and tags of every branch) references,
/// relative to the table root, by our own reader.
fn referenced_data_files(rt: &tokio::runtime::Runtime, table: &Path) -> BTreeSet<String> {
    rt.block_on(async {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let main = Table::open(storage.clone(), &HashMap::new()).await.unwrap();
        let mut out = BTreeSet::new();
        for b in list_branches(&storage).await.unwrap() {
            let t = match main.branch(&b).await {
                Ok(t) => t,
                Err(_) => main.with_branch_root_of(&b),
            };
            let mut versions = t.all_snapshots().await.unwrap();
            versions.extend(t.tags().await.unwrap().into_values().map(|t| t.snapshot));
            for v in versions {
                for e in t.live_data_files(&v).await.unwrap() {
                    for loc in t
                        .paths()
                        .data_file_with_extras(&e.partition, e.bucket, &e.file)
                        .unwrap()
                    {
                        out.insert(t.paths().display(&loc));
                    }
                }
            }
        }
        out
    })
}

fn pypaimon_views(dirs: &[PathBuf]) -> serde_json::Value {
    let py = common::python().expect("python");
    let mut args = vec!["--all-versions"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    let out = common::run_py_any_status(&py, "live_files.py", &args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("live_files.py: {e}: {out}"))
}

#[test]
fn expire_every_fixture_table_keeps_every_remaining_version_intact() {
    let Some(fixtures) = common::fixtures_dir() else {
        return;
    };
    let rt = common::rt();
    let mut copies = Vec::new();
    for src in common::fixture_tables(&fixtures) {
        let rel = src
            .strip_prefix(&fixtures)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let (tmp, table) = common::copy_table(&src);
        copies.push((rel, tmp, table));
    }
    let dirs: Vec<PathBuf> = copies.iter().map(|c| c.2.clone()).collect();
    let before = common::python().map(|_| pypaimon_views(&dirs));

    let mut total_expired = 0;
    let mut total_data_deleted = 0;
    for (rel, _tmp, table) in &copies {
        // Files no version referenced even before (strays in the fixture) are not expiry's.
        let strays_before: BTreeSet<String> = common::data_files_on_disk(table)
            .difference(&referenced_data_files(&rt, table))
            .cloned()
            .collect();
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let report = rt
            .block_on(async {
                let t = Table::open(storage, &HashMap::new()).await?;
                expire_snapshots(&t, &cfg(), &RunControl::default()).await
            })
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        total_expired += report.snapshots_expired;
        total_data_deleted += report
            .deletion
            .count(paimon_cleanup::clean::FileClass::Data)
            .files;

        // What is left is exactly what remaining versions reference (our reader; it also fails
        // if any manifest a remaining version needs is gone).
        let referenced = referenced_data_files(&rt, table);
        let is_data = |f: &String| !f.rsplit('/').next().unwrap().starts_with("index-");
        let on_disk: BTreeSet<String> = common::data_files_on_disk(table)
            .difference(&strays_before)
            .filter(|f| is_data(f))
            .cloned()
            .collect();
        // External files (recorded with a scheme) are not under the copy.
        let local_referenced: BTreeSet<String> = referenced
            .iter()
            .filter(|f| !f.contains(':') && is_data(f))
            .cloned()
            .collect();
        assert_eq!(
            on_disk, local_referenced,
            "{rel}: data files left vs referenced"
        );

        // A second run changes nothing.
        let tree = common::tree(table);
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        let again = rt
            .block_on(async {
                let t = Table::open(storage, &HashMap::new()).await?;
                expire_snapshots(&t, &cfg(), &RunControl::default()).await
            })
            .unwrap();
        assert_eq!(again.deletion.total_files(), 0, "{rel}: second run");
        assert_eq!(common::tree(table), tree, "{rel}: second run changed files");
    }
    assert!(total_expired > 50, "expired only {total_expired} snapshots");
    assert!(
        total_data_deleted > 10,
        "deleted only {total_data_deleted} data files"
    );

    // pypaimon: every version that remains reads the same rows as before.
    if let Some(before) = before {
        let after = pypaimon_views(&dirs);
        let mut compared = 0;
        for (rel, _, table) in &copies {
            let key = table.to_str().unwrap();
            let (Some(b), Some(a)) = (before[key].as_object(), after[key].as_object()) else {
                continue; // pypaimon cannot read this table at all (ORC manifests)
            };
            for (version, v) in a {
                let Some(old) = b.get(version) else { continue };
                if old.get("error").is_some() {
                    continue;
                }
                assert!(
                    v.get("error").is_none(),
                    "{rel}: {version} unreadable after expiry: {v}"
                );
                assert_eq!(v["row_digest"], old["row_digest"], "{rel}: {version}");
                compared += 1;
            }
        }
        eprintln!("pypaimon compared {compared} remaining versions");
        assert!(compared > 20, "pypaimon compared only {compared} versions");
    }
    eprintln!("expired {total_expired} snapshots, deleted {total_data_deleted} data files");
}
