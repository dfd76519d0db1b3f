//! The table generator (`paimon-gen`) writes tables that pypaimon reads: every snapshot, tag
//! and branch version plans without error (`live_files.py --all-versions --files-only`), and
//! each version's live data files and changelog files are exactly what this crate reads from
//! the same metadata (`Table::live_data_files`, `table::inspect`). Every live file exists.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use paimon_cleanup::spec::manifest::FileKind;
use paimon_cleanup::spec::snapshot::Snapshot;
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::inspect::inspect;
use paimon_cleanup::table::Table;

/// Runs `paimon-gen TABLE ARGS... --verify` and returns its JSON summary.
fn generate(table: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(common::gen_bin())
        .arg(table)
        .args(args)
        .arg("--verify")
        .output()
        .expect("run paimon-gen");
    assert!(
        out.status.success(),
        "paimon-gen {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("paimon-gen prints a JSON summary")
}

/// One version as this crate reads it: live data files and changelog files (relative paths).
#[derive(Debug, Default, PartialEq, Eq)]
struct View {
    live: BTreeSet<String>,
    changelog: BTreeSet<String>,
}

async fn view_of(t: &Table, s: &Snapshot) -> View {
    let paths = t.paths();
    let rel = |e: &paimon_cleanup::spec::manifest::ManifestEntry| {
        paths.display(&paths.data_file(&e.partition, e.bucket, &e.file).unwrap())
    };
    let live = t
        .live_data_files(s)
        .await
        .unwrap()
        .iter()
        .map(rel)
        .collect();
    let mut changelog = BTreeSet::new();
    if let Some(list) = &s.changelog_manifest_list {
        for m in t.reader().manifest_list(paths, list).await.unwrap() {
            for e in t.reader().manifest(paths, &m.file_name).await.unwrap() {
                assert_eq!(e.kind, FileKind::Add, "changelog manifests only add");
                changelog.insert(rel(&e));
            }
        }
    }
    View { live, changelog }
}

/// Every version of every branch, keyed like `live_files.py --all-versions`.
fn our_views(table: &Path) -> BTreeMap<String, View> {
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    common::rt().block_on(async {
        let main = Table::open(storage, &HashMap::new()).await.unwrap();
        let mut out = BTreeMap::new();
        for branch in paimon_cleanup::table::list_branches(main.storage())
            .await
            .unwrap()
        {
            let t = main.branch(&branch).await.unwrap();
            let prefix = if branch == "main" {
                String::new()
            } else {
                format!("branch:{branch}:")
            };
            let snapshots = t.all_snapshots().await.unwrap();
            for s in &snapshots {
                out.insert(format!("{prefix}snapshot:{}", s.id), view_of(&t, s).await);
            }
            if let Some(last) = snapshots.last().filter(|_| branch != "main") {
                out.insert(format!("branch:{branch}"), view_of(&t, last).await);
            }
            for (name, tag) in t.tags().await.unwrap() {
                out.insert(
                    format!("{prefix}tag:{name}"),
                    view_of(&t, &tag.snapshot).await,
                );
            }
        }
        out
    })
}

fn strings(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// A checked table: its temp dir (kept alive), path, generator summary, and every data and
/// changelog file some version references.
struct Checked {
    _tmp: tempfile::TempDir,
    table: std::path::PathBuf,
    summary: serde_json::Value,
    referenced: BTreeSet<String>,
}

/// Generates a table with `args`, reads every version with pypaimon and with this crate, and
/// checks they agree. None when pypaimon is unavailable.
fn check(args: &[&str]) -> Option<Checked> {
    let py = common::python()?;
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("t");
    let summary = generate(&table, args);

    let out = common::run_py_any_status(
        &py,
        "live_files.py",
        &[table.to_str().unwrap(), "--all-versions", "--files-only"],
    );
    let theirs: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("live_files.py output is not JSON ({e}): {out}"));
    let ours = our_views(&table);

    let their_keys: BTreeSet<&String> = theirs.keys().collect();
    let our_keys: BTreeSet<&String> = ours.keys().collect();
    assert_eq!(their_keys, our_keys, "{args:?}: the same versions");
    let mut changelog_seen = 0;
    let mut referenced = BTreeSet::new();
    for (key, v) in &theirs {
        assert!(
            v.get("error").is_none() && v.get("changelog_error").is_none(),
            "{args:?}: pypaimon cannot plan {key}: {v}"
        );
        let mine = &ours[key];
        assert_eq!(
            strings(&v["live_files"]),
            mine.live,
            "{args:?}: live files of {key}"
        );
        assert_eq!(
            strings(&v["changelog_files"]),
            mine.changelog,
            "{args:?}: changelog files of {key}"
        );
        changelog_seen += mine.changelog.len();
        referenced.extend(mine.live.iter().chain(&mine.changelog).cloned());
        for f in mine.live.iter().chain(&mine.changelog) {
            assert!(table.join(f).is_file(), "{args:?}: {key} needs {f}");
        }
        for dv in strings(&v["deletion_vector_files"]) {
            assert!(table.join(&dv).is_file(), "{args:?}: {key} needs {dv}");
        }
    }
    let latest = summary["snapshots"].as_u64().unwrap();
    let inspected = common::rt()
        .block_on(inspect(
            Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap()),
            &HashMap::new(),
        ))
        .unwrap();
    assert_eq!(
        inspected
            .live_files
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        strings(&theirs[&format!("snapshot:{latest}")]["live_files"]),
        "{args:?}: inspect agrees with pypaimon on the latest snapshot"
    );
    if summary["changelog_files"].as_u64().unwrap() > 0 {
        assert!(changelog_seen > 0, "{args:?}: changelog files were planned");
    }
    Some(Checked {
        _tmp: tmp,
        table,
        summary,
        referenced,
    })
}

#[test]
fn default_table_with_every_feature_reads_in_pypaimon() {
    // 20 snapshots: appends, compactions (real ones and level upgrades), overwrites, a drop,
    // tags, a branch with its own commits, changelog and index files; merges every 3
    // manifests so base lists hold merged manifests of several tiers, and rewrites the base
    // list whole (full compaction) once it holds 12 DELETE entries.
    let Some(Checked { summary: s, .. }) =
        check(&["--merge-min", "3", "--full-compaction-deletes", "12"])
    else {
        return;
    };
    let kinds = &s["commit_kinds"];
    for k in [
        "APPEND",
        "COMPACT",
        "OVERWRITE",
        "OVERWRITE (drop partition)",
    ] {
        assert!(kinds[k].as_u64().unwrap_or(0) > 0, "a {k} commit: {s}");
    }
    assert!(s["merged_manifests"].as_u64().unwrap() > 0, "{s}");
    assert!(s["full_compactions"].as_u64().unwrap() > 0, "{s}");
    assert!(s["index_manifests"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(s["branch_snapshots"], 3);
}

#[test]
fn int_partitions_rolled_merges_no_changelog_no_index() {
    // Rolling at 8 entries makes full manifests that are never merged again.
    let Some(Checked { summary: s, .. }) = check(&[
        "--snapshots",
        "30",
        "--partition-type",
        "int",
        "--buckets",
        "3",
        "--files-per-commit",
        "7",
        "--merge-min",
        "4",
        "--roll-entries",
        "8",
        "--changelog",
        "false",
        "--index",
        "false",
        "--branch",
        "none",
        "--tags",
        "3",
    ]) else {
        return;
    };
    assert_eq!(s["changelog_files"], 0);
    assert_eq!(s["index_files"], 0);
    assert!(s["merged_manifests"].as_u64().unwrap() > 3, "{s}");
}

#[test]
fn orphans_are_not_referenced() {
    let Some(c) = check(&["--orphans", "40", "--seed", "7"]) else {
        return;
    };
    // 40 data files, 1 manifest + 1 index file, 1 temp snapshot file.
    assert_eq!(c.summary["orphan_files"], 43);
    // Every data and changelog file is referenced by some version, except the 40 orphans.
    let on_disk = common::data_files_on_disk(&c.table);
    let unreferenced: Vec<&String> = on_disk.difference(&c.referenced).collect();
    assert_eq!(unreferenced.len(), 40, "{unreferenced:?}");
    let created =
        c.summary["data_files"].as_u64().unwrap() + c.summary["changelog_files"].as_u64().unwrap();
    assert_eq!(on_disk.len() as u64, created + 40);
}

#[test]
fn metadata_only_tables_reference_files_that_do_not_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    let meta = tmp.path().join("meta");
    let args = ["--snapshots", "12", "--orphans", "5", "--seed", "9"];
    let a = generate(&full, &args);
    let mut with_flag = args.to_vec();
    with_flag.push("--metadata-only");
    let b = generate(&meta, &with_flag);
    // The same metadata: every version reads the same live files, relative to the root.
    assert_eq!(our_views(&full), our_views(&meta));
    assert_eq!(a["data_files"], b["data_files"]);
    assert!(b["data_files"].as_u64().unwrap() > 20, "{b}");
    // Only the orphans exist among the data files.
    let on_disk = common::data_files_on_disk(&meta);
    assert_eq!(on_disk.len(), 5, "{on_disk:?}");
    // Orphan removal reads every reference and deletes only the planted orphans (the
    // referenced files were never written; nothing is deleted for them).
    let rt = common::rt();
    let report = rt
        .block_on(async {
            let storage = Arc::new(Storage::open(meta.to_str().unwrap(), &HashMap::new())?);
            let t = Table::open(storage, &HashMap::new()).await?;
            let cfg = paimon_cleanup::clean::OrphanConfig {
                older_than_ms: Some(paimon_cleanup::clean::shared::clock::now_millis()),
                no_writers_running: true,
                ..Default::default()
            };
            paimon_cleanup::clean::remove_orphan_files(&t, &cfg, &Default::default()).await
        })
        .unwrap();
    let deleted: Vec<String> = report
        .deletion
        .paths
        .iter()
        .map(|p| p.path.clone())
        .filter(|p| p.contains("bucket-"))
        .collect();
    assert_eq!(deleted.len(), 5, "{deleted:?}");
    assert!(common::data_files_on_disk(&meta).is_empty());
}
