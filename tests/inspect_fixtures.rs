//! `inspect` on a copy of EVERY Java-written fixture table: snapshots, tags, branches and live
//! files must be what Paimon itself reports (INDEX.md facts, files on disk, and pypaimon's own
//! scan where pypaimon can read the table).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::inspect::{inspect, TableInspection};

struct IndexRow {
    snapshots: usize,
    branches: Vec<String>,
    manifest_format: String,
}

fn read_index(fixtures: &Path) -> HashMap<String, IndexRow> {
    let text = std::fs::read_to_string(fixtures.join("INDEX.md")).unwrap();
    let mut out = HashMap::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(".db/"))
    {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        // cols[0] is empty (leading '|').
        let branches = cols[9]
            .split_whitespace()
            .filter_map(|f| f.strip_prefix("branches:"))
            .flat_map(|b| b.split(','))
            .map(|b| b.trim_start_matches("branch-").to_string())
            .collect();
        out.insert(
            cols[1].to_string(),
            IndexRow {
                snapshots: cols[7].parse().unwrap(),
                branches,
                manifest_format: cols[6].to_string(),
            },
        );
    }
    out
}

fn inspect_copy(table: &Path) -> TableInspection {
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    common::rt()
        .block_on(inspect(storage, &HashMap::new()))
        .unwrap_or_else(|e| panic!("inspect {} failed: {e}", table.display()))
}

fn snapshot_files(table: &Path) -> Vec<i64> {
    let mut ids: Vec<i64> = std::fs::read_dir(table.join("snapshot"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_prefix("snapshot-")?
                        .parse()
                        .ok()
                })
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

#[test]
fn inspect_reports_every_fixture_table_as_paimon_does() {
    let Some(fixtures) = common::fixtures_dir() else {
        return;
    };
    let index = read_index(&fixtures);
    let tables = common::fixture_tables(&fixtures);
    assert!(
        tables.len() >= 90,
        "expected ~90 fixture tables, found {}",
        tables.len()
    );
    let python = common::python();
    let mut compared_with_pypaimon = 0;
    let mut pypaimon_failures = BTreeMap::new();
    for src in &tables {
        let rel = src
            .strip_prefix(&fixtures)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let (_tmp, table) = common::copy_table(src);
        let report = inspect_copy(&table);

        // Snapshots: exactly the snapshot files, count as INDEX.md says.
        let on_disk = snapshot_files(&table);
        assert_eq!(report.snapshots, on_disk, "{rel}: snapshots");
        assert_eq!(
            report.latest_snapshot_id,
            on_disk.last().copied(),
            "{rel}: latest"
        );
        let row = index
            .get(&rel)
            .unwrap_or_else(|| panic!("{rel} is not listed in INDEX.md"));
        assert_eq!(
            report.snapshots.len(),
            row.snapshots,
            "{rel}: snapshot count vs INDEX.md"
        );

        // Branches: main first, then the ones INDEX.md names.
        let mut expected_branches = vec!["main".to_string()];
        expected_branches.extend(row.branches.iter().cloned());
        assert_eq!(report.branches, expected_branches, "{rel}: branches");

        // Tags: one per tag file, each pointing at the id inside the file.
        let tag_files = std::fs::read_dir(table.join("tag"))
            .map(|rd| rd.flatten().filter(|e| e.path().is_file()).count())
            .unwrap_or(0);
        assert_eq!(report.tags.len(), tag_files, "{rel}: tags");

        // Live files: relative paths exist; external paths are the recorded absolute ones.
        assert!(!report.live_files.is_empty(), "{rel}: no live files");
        for f in &report.live_files {
            // Escaping turns ':' into %3A, so only a recorded external location holds one.
            if f.contains(':') {
                assert!(
                    f.to_ascii_lowercase().starts_with("file:"),
                    "{rel}: external path {f} is not absolute"
                );
            } else {
                assert!(
                    table.join(f).is_file(),
                    "{rel}: live file {f} missing on disk"
                );
            }
        }

        // pypaimon's own scan of the same copy.
        if let Some(py) = &python {
            match common::run_py(py, "live_files.py", &[table.to_str().unwrap()]) {
                Ok(out) => {
                    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                    let mut theirs: Vec<String> = v["live_files"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s.as_str().unwrap().to_string())
                        .collect();
                    theirs.sort();
                    assert_eq!(report.live_files, theirs, "{rel}: live files vs pypaimon");
                    compared_with_pypaimon += 1;
                }
                Err(e) => {
                    let last = e.lines().last().unwrap_or("").to_string();
                    pypaimon_failures.insert(rel.clone(), (row.manifest_format.clone(), last));
                }
            }
        }
    }
    eprintln!(
        "inspected {} fixture tables; {} compared with pypaimon; pypaimon could not read {}:",
        tables.len(),
        compared_with_pypaimon,
        pypaimon_failures.len()
    );
    for (t, (fmt, why)) in &pypaimon_failures {
        eprintln!("  {t} (manifest {fmt}): {why}");
    }
}
