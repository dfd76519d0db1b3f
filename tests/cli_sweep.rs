//! Sweeps: `--warehouse ROOT --table PATTERN` runs a command on every matching table of a
//! filesystem-catalog warehouse, reports a broken table and goes on, closes with a summary
//! table and exits 4 when some tables failed (1 when all did).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn cli(args: &[&str]) -> Output {
    Command::new(common::cli_bin())
        .args(args)
        .env_remove("PAIMON_CLEANUP_LOG")
        .output()
        .unwrap()
}

/// A warehouse of 11 pypaimon tables: the 7 of make_tables.py in `db`, 3 copies of them in
/// `db2`, and `db2.broken`, whose `snapshot/` is a regular file (the CLI refuses such a table).
fn warehouse() -> Option<(tempfile::TempDir, PathBuf, Vec<String>)> {
    let (src, _) = common::pypaimon_warehouse()?;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("wh");
    common::copy_dir(&src.join("db.db"), &root.join("db.db"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("db.db"))
        .unwrap()
        .map(|e| format!("db.{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    for t in ["pk_fixed", "append_unaware", "pk_changelog"] {
        common::copy_dir(&src.join("db.db").join(t), &root.join("db2.db").join(t));
        names.push(format!("db2.{t}"));
    }
    let broken = root.join("db2.db/broken");
    common::copy_dir(&src.join("db.db/pk_fixed"), &broken);
    std::fs::remove_dir_all(broken.join("snapshot")).unwrap();
    std::fs::write(broken.join("snapshot"), "not a directory").unwrap();
    names.push("db2.broken".into());
    // Not a table (no schema/) and not a database (no .db): never touched.
    std::fs::create_dir_all(root.join("db.db/not_a_table/snapshot")).unwrap();
    std::fs::create_dir_all(root.join("scratch/t/schema")).unwrap();
    names.sort();
    Some((tmp, root, names))
}

fn table_dir(root: &Path, name: &str) -> PathBuf {
    let (db, t) = name.split_once('.').unwrap();
    root.join(format!("{db}.db")).join(t)
}

#[test]
fn a_sweep_cleans_every_table_reports_the_broken_one_and_exits_4() {
    let Some((_g, root, names)) = warehouse() else {
        return;
    };
    assert!(names.len() >= 11, "{names:?}");
    let before: Vec<Vec<i64>> = names
        .iter()
        .map(|n| match n.as_str() {
            "db2.broken" => Vec::new(),
            _ => common::snapshot_ids(&table_dir(&root, n)),
        })
        .collect();
    assert!(before.iter().filter(|ids| ids.len() > 1).count() >= 5);
    let broken_tree = common::tree(&table_dir(&root, "db2.broken"));
    let report = root.parent().unwrap().join("sweep.json");
    let o = cli(&[
        "expire-snapshots",
        "--warehouse",
        root.to_str().unwrap(),
        "--table",
        "*.*",
        "--parallel-tables",
        "3",
        "--retain-min",
        "1",
        "--time-retained",
        "0s",
        "--report",
        report.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // The summary closes the output: a header, one row per table (sorted), a count.
    let lines: Vec<&str> = out.lines().collect();
    let header = lines
        .iter()
        .rposition(|l| l.starts_with("table ") && l.contains("outcome"))
        .unwrap_or_else(|| panic!("no summary: {out}"));
    let rows = &lines[header + 1..header + 1 + names.len()];
    for (row, name) in rows.iter().zip(&names) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[0], name, "{out}");
        let want = if name == "db2.broken" {
            "failed"
        } else {
            "done"
        };
        assert_eq!(cols[1], want, "{row}");
    }
    assert_eq!(
        lines[header + 1 + names.len()],
        format!("{} tables: {} done, 1 failed", names.len(), names.len() - 1)
    );
    assert!(out.contains("== db2.broken"), "{out}");
    assert!(
        out.contains("is a regular file"),
        "the failure is not reported: {out}"
    );

    assert!(root.join("db.db/not_a_table/snapshot").is_dir());

    // The audit file: each table's outcome, files and bytes, and its full report.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(doc["failed"], 1);
    assert_eq!(doc["succeeded"], names.len() - 1);
    let tables = doc["tables"].as_array().unwrap();
    assert_eq!(tables.len(), names.len());
    let mut deleted_any = 0;
    for t in tables {
        if t["table"] == "db2.broken" {
            assert_eq!(t["exit_code"], 1, "{t}");
            assert!(t["error"].as_str().unwrap().contains("snapshot"), "{t}");
            continue;
        }
        assert_eq!(t["exit_code"], 0, "{t}");
        let expired = t["report"]["snapshots_expired"].as_u64().unwrap();
        // The table kept the snapshots from the report's earliest on, as the run says.
        let name = t["table"].as_str().unwrap();
        let i = names.iter().position(|n| n == name).unwrap();
        let earliest = t["report"]["earliest_after"].as_i64().unwrap();
        let kept: Vec<i64> = before[i]
            .iter()
            .copied()
            .filter(|id| *id >= earliest)
            .collect();
        assert_eq!(common::snapshot_ids(&table_dir(&root, name)), kept, "{t}");
        assert_eq!(before[i].len() - kept.len(), expired as usize, "{t}");
        if expired > 0 {
            assert!(t["files"].as_u64().unwrap() > 0, "{t}");
            assert!(t["bytes"].as_u64().unwrap() > 0, "{t}");
            deleted_any += 1;
        }
    }
    assert!(deleted_any >= 5, "{doc}");
    assert_eq!(
        common::tree(&table_dir(&root, "db2.broken")),
        broken_tree,
        "the broken table changed"
    );
}

#[test]
fn patterns_pick_tables_and_all_failing_exits_1() {
    let Some((_g, root, names)) = warehouse() else {
        return;
    };
    let r = root.to_str().unwrap();
    let o = cli(&["inspect", "--warehouse", r, "--table", "db2.*", "--json"]);
    assert_eq!(o.status.code(), Some(4));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let got: Vec<&str> = doc["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["table"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = names
        .iter()
        .filter(|n| n.starts_with("db2."))
        .map(String::as_str)
        .collect();
    assert_eq!(got, want);

    let o = cli(&["inspect", "--warehouse", r, "--table", "db.pk_fixed"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 tables: 1 done, 0 failed"));

    let o = cli(&[
        "expire-snapshots",
        "--warehouse",
        r,
        "--table",
        "*.broken",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = cli(&["inspect", "--warehouse", r, "--table", "nodb.*"]);
    assert_eq!(o.status.code(), Some(1), "no table matches");
    let o = cli(&["inspect", "--warehouse", r, "--table", "nodot"]);
    assert_eq!(o.status.code(), Some(2));
    // A table path and a warehouse contradict each other.
    let o = cli(&["inspect", "x", "--warehouse", r, "--table", "db.*"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A database or table directory whose name is not UTF-8 is never passed over unseen: a
/// pattern that would take it is an error naming it (library and sweep alike), before any
/// table is touched; a pattern that names other tables only still works.
#[test]
fn names_that_are_not_utf8_are_reported_not_skipped() {
    use paimon_cleanup::table::warehouse::find_tables;
    use paimon_cleanup::Error;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let Some((src, _)) = common::pypaimon_warehouse() else {
        return;
    };
    // (database directory, table directory, the name as errors show it, patterns that take
    // it, patterns that do not with the tables they find).
    type Case<'a> = (
        &'a [u8],
        &'a [u8],
        &'a str,
        &'a [&'a str],
        &'a [(&'a str, Option<&'a str>)],
    );
    let cases: [Case; 2] = [
        (
            b"db.db",
            b"caf\xe9",
            "caf\\xE9",
            &["*.*", "db.*", "db.caf*"],
            &[("db.pk_fixed", Some("db.pk_fixed")), ("db.t*", None)],
        ),
        (
            b"d\xffb.db",
            b"t",
            "d\\xFFb",
            &["*.*", "d*.t"],
            &[
                ("db.pk_fixed", Some("db.pk_fixed")),
                ("db.*", Some("db.pk_fixed")),
            ],
        ),
    ];
    for (db, table, shown, covered_by, not_covered_by) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("wh");
        common::copy_dir(
            &src.join("db.db/pk_fixed"),
            &root.join("db.db").join("pk_fixed"),
        );
        let odd = root
            .join(OsStr::from_bytes(db))
            .join(OsStr::from_bytes(table));
        common::copy_dir(&src.join("db.db/pk_fixed"), &odd);
        let r = root.to_str().unwrap();
        let before = common::tree(&root.join("db.db/pk_fixed"));
        for pattern in covered_by {
            match find_tables(r, pattern) {
                Err(Error::Unsupported(m)) => {
                    assert!(m.contains("not UTF-8"), "{pattern}: {m}");
                    assert!(m.contains(shown), "{pattern}: {m} does not name {shown}");
                }
                other => panic!("{pattern}: {other:?}"),
            }
            let o = cli(&[
                "expire-snapshots",
                "--warehouse",
                r,
                "--table",
                pattern,
                "--retain-min",
                "1",
                "--time-retained",
                "0s",
            ]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_ne!(o.status.code(), Some(0), "{pattern}: {err}");
            assert!(err.contains("not UTF-8"), "{pattern}: {err}");
            assert_eq!(
                common::tree(&root.join("db.db/pk_fixed")),
                before,
                "{pattern}: a table was touched"
            );
        }
        for (pattern, finds) in not_covered_by {
            let found = find_tables(r, pattern);
            match finds {
                Some(name) => {
                    let found = found.unwrap_or_else(|e| panic!("{pattern}: {e}"));
                    let names: Vec<&str> = found.iter().map(|t| t.name.as_str()).collect();
                    assert_eq!(names, vec![*name], "{pattern}");
                }
                None => assert!(
                    matches!(found, Err(Error::NotFound { .. })),
                    "{pattern}: {found:?}"
                ),
            }
        }
    }
}
