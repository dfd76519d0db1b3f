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
    let mut unlisted = Vec::new();
    let mut copies = Vec::new();
    for src in &tables {
        let rel = src
            .strip_prefix(&fixtures)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let (tmp, table) = common::copy_table(src);
        let report = inspect_copy(&table);

        // Snapshots: exactly the snapshot files, count as INDEX.md says.
        let on_disk = snapshot_files(&table);
        assert_eq!(report.snapshots, on_disk, "{rel}: snapshots");
        assert_eq!(
            report.latest_snapshot_id,
            on_disk.last().copied(),
            "{rel}: latest"
        );
        // Branches: main first, then every branch directory.
        let mut expected_branches: Vec<String> = std::fs::read_dir(table.join("branch"))
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.path().is_dir())
                    .filter_map(|e| {
                        e.file_name()
                            .to_str()?
                            .strip_prefix("branch-")
                            .map(String::from)
                    })
                    .collect()
            })
            .unwrap_or_default();
        expected_branches.sort();
        expected_branches.insert(0, "main".to_string());
        assert_eq!(report.branches, expected_branches, "{rel}: branches");
        let manifest_format = match index.get(&rel) {
            Some(row) => {
                assert_eq!(
                    report.snapshots.len(),
                    row.snapshots,
                    "{rel}: snapshot count vs INDEX.md"
                );
                let mut listed = vec!["main".to_string()];
                listed.extend(row.branches.iter().cloned());
                assert_eq!(report.branches, listed, "{rel}: branches vs INDEX.md");
                row.manifest_format.clone()
            }
            None => {
                unlisted.push(rel.clone());
                "?".to_string()
            }
        };

        // Tags: one per tag file, each pointing at the id inside the file.
        let tag_files = std::fs::read_dir(table.join("tag"))
            .map(|rd| rd.flatten().filter(|e| e.path().is_file()).count())
            .unwrap_or(0);
        assert_eq!(report.tags.len(), tag_files, "{rel}: tags");

        // Live files: relative paths exist; external paths are the recorded absolute ones.
        assert_eq!(
            report.live_files.is_empty(),
            on_disk.is_empty(),
            "{rel}: live files"
        );
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

        copies.push((rel, table, report, manifest_format, tmp));
    }

    // pypaimon's own view of every copy, in one interpreter.
    if let Some(py) = &python {
        let dirs: Vec<&str> = copies.iter().map(|c| c.1.to_str().unwrap()).collect();
        let mut args = vec!["--files-only"];
        args.extend(dirs.iter().copied());
        let out = common::run_py_any_status(py, "live_files.py", &args);
        let views: serde_json::Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("live_files.py output is not JSON ({e}): {out}"));
        for (rel, table, report, manifest_format, _) in &copies {
            let v = &views[table.to_str().unwrap()];
            match v["live_files"].as_array() {
                Some(files) => {
                    let mut theirs: Vec<String> = files
                        .iter()
                        .map(|s| s.as_str().unwrap().to_string())
                        .collect();
                    theirs.sort();
                    // pypaimon prints external files as plain local paths.
                    let ours: Vec<String> = report
                        .live_files
                        .iter()
                        .map(|f| match f.split_once(':') {
                            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => {
                                rest.to_string()
                            }
                            _ => f.clone(),
                        })
                        .collect();
                    assert_eq!(ours, theirs, "{rel}: live files vs pypaimon");
                    compared_with_pypaimon += 1;
                }
                None => {
                    pypaimon_failures.insert(
                        rel.clone(),
                        (manifest_format.clone(), v["error"].to_string()),
                    );
                }
            }
        }
    }
    eprintln!("not in INDEX.md (checked against the files only): {unlisted:?}");
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
