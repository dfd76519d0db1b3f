//! Unreadable structure is never empty: a directory of the table's layout that exists in any
//! form other than a readable directory (a dangling symlink, a FIFO, a regular file, a
//! directory this process cannot open) stops every operation with an error naming it, before
//! anything is deleted. Every operation runs through the CLI, real and dry, and the table's
//! tree (types, sizes, bytes, link targets, modes) is compared before and after.
//!
//! Also: orphan removal refuses a table whose snapshot listing of main is empty while
//! manifests or data remain (locally, and on S3, where a lost `snapshot/` prefix lists as
//! empty), and is a no-op on a table created but never committed.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A Java-written table with two partitions, two snapshots and a branch `test` with its own
/// schema and snapshots.
const FIXTURE: &str =
    "orc/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch";

/// The directories of the layout the tests break, relative to the table root.
const LAYOUT_DIRS: &[&str] = &[
    "snapshot",
    "branch",
    "tag",
    "changelog",
    "consumer",
    "schema",
    "manifest",
    "index",
    "statistics",
    "branch/branch-test/snapshot",
];

/// The uid and gid the "unreadable" variant runs the CLI as when the tests run as root (root
/// ignores permissions).
const NOBODY: u32 = 65534;

/// How a layout directory is broken.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Breakage {
    /// A symlink whose target does not exist (a mount momentarily gone).
    Dangling,
    /// A named pipe.
    Fifo,
    /// A regular file.
    File,
    /// A directory the process cannot open (mode 000, run as a non-root user).
    Unreadable,
}

/// The fixture table copied to a fresh temp dir, or None (with a notice) without fixtures.
fn fixture() -> Option<(tempfile::TempDir, PathBuf)> {
    let src = common::fixtures_dir()?.join(FIXTURE);
    assert!(src.is_dir(), "fixture {FIXTURE} missing");
    Some(common::copy_table(&src))
}

/// Breaks `rel` under `table` as `how`; what was there is moved out of the table (to
/// `aside`), as a mount that went away takes its content with it.
fn break_dir(table: &Path, aside: &Path, rel: &str, how: Breakage) {
    let at = table.join(rel);
    if std::fs::symlink_metadata(&at).is_ok() && how != Breakage::Unreadable {
        std::fs::rename(&at, aside.join(rel.replace('/', "_"))).unwrap();
    }
    match how {
        Breakage::Dangling => {
            std::os::unix::fs::symlink(aside.join("gone").join(rel), &at).unwrap();
        }
        Breakage::Fifo => {
            let st = Command::new("mkfifo").arg(&at).status().unwrap();
            assert!(st.success(), "mkfifo {}", at.display());
        }
        Breakage::File => std::fs::write(&at, b"not a directory").unwrap(),
        Breakage::Unreadable => {
            std::fs::create_dir_all(&at).unwrap();
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
    }
}

/// Every entry under `dir` (not following symlinks): relative path → what it is, with a
/// file's bytes, a link's target and every mode. A directory this process cannot read is
/// recorded as such.
fn exact_tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            out.insert(rel(dir, &d), "unreadable directory".to_string());
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let ft = meta.file_type();
            let mode = meta.mode();
            let what = if ft.is_symlink() {
                format!(
                    "link {mode:o} -> {}",
                    std::fs::read_link(&p).unwrap().display()
                )
            } else if ft.is_dir() {
                stack.push(p.clone());
                format!("dir {mode:o}")
            } else if ft.is_file() {
                let bytes = std::fs::read(&p).unwrap();
                format!("file {mode:o} {} {bytes:?}", bytes.len())
            } else {
                format!("special {mode:o}")
            };
            out.insert(rel(dir, &p), what);
        }
    }
    out
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap().display().to_string()
}

/// Now, in epoch milliseconds (a cut-off that would delete every unreferenced file).
fn now_ms() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string()
}

/// Every operation of the CLI on `table`, each real and dry (inspect has no dry run), with
/// settings that would delete as much as they can.
fn operations(table: &str) -> Vec<Vec<String>> {
    let now = now_ms();
    let base: Vec<Vec<&str>> = vec![
        vec![
            "remove-orphan-files",
            table,
            "--older-than-ms",
            &now,
            "--no-writers-running",
        ],
        vec![
            "expire-snapshots",
            table,
            "--retain-min",
            "1",
            "--retain-max",
            "1",
            "--older-than-ms",
            &now,
        ],
        vec![
            "expire-changelogs",
            table,
            "--retain-min",
            "1",
            "--retain-max",
            "1",
            "--older-than-ms",
            &now,
        ],
        vec!["delete-tag", table, "t1"],
        vec!["expire-tags", table, "--older-than-ms", &now],
        vec!["expire-consumers", table, "--expiration-time", "1 ms"],
        vec!["drop-partitions", table, "--partition", "pt=1"],
        vec!["expire-partitions", table, "--expiration-time", "1 ms"],
        vec!["maintain", table],
    ];
    let mut out = vec![vec!["inspect".to_string(), table.to_string()]];
    for op in base {
        let op: Vec<String> = op.into_iter().map(String::from).collect();
        let mut dry = op.clone();
        dry.push("--dry-run".to_string());
        out.push(op);
        out.push(dry);
    }
    out
}

/// Runs the CLI with `args`, as `uid` if given.
fn cli(args: &[String], uid: Option<u32>) -> Output {
    let mut cmd = Command::new(common::cli_bin());
    cmd.args(args);
    if let Some(id) = uid {
        cmd.uid(id).gid(id);
    }
    cmd.output().unwrap()
}

/// Makes `path` and everything under it owned by `uid` (not following symlinks).
fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if std::fs::symlink_metadata(path).unwrap().is_dir() {
        for e in std::fs::read_dir(path).unwrap().flatten() {
            chown_tree(&e.path(), uid);
        }
    }
}

/// True when this process runs as root.
fn is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        == 0
}

/// Each layout directory broken each way: every operation, real and dry, exits non-zero
/// with a message naming the directory, and the table is exactly as it was.
#[test]
fn every_operation_stops_on_a_layout_directory_that_is_not_a_readable_directory() {
    let mut checked = 0;
    for how in [
        Breakage::Dangling,
        Breakage::Fifo,
        Breakage::File,
        Breakage::Unreadable,
    ] {
        for dir in LAYOUT_DIRS {
            let Some((tmp, table)) = fixture() else {
                return;
            };
            let aside = tempfile::tempdir().unwrap();
            break_dir(&table, aside.path(), dir, how);
            // Root ignores permissions: run the CLI as another user, owning the table.
            let uid = if how == Breakage::Unreadable && is_root() {
                std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))
                    .unwrap();
                chown_tree(&table, NOBODY);
                Some(NOBODY)
            } else {
                None
            };
            let before = exact_tree(&table);
            let named = table.join(dir);
            let named = named.to_str().unwrap();
            for args in operations(table.to_str().unwrap()) {
                let out = cli(&args, uid);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    !out.status.success(),
                    "{how:?} {dir}: {args:?} succeeded:\n{}",
                    String::from_utf8_lossy(&out.stdout)
                );
                assert!(
                    stderr.contains(named),
                    "{how:?} {dir}: {args:?}: the error does not name {named}:\n{stderr}"
                );
                assert_eq!(
                    exact_tree(&table),
                    before,
                    "{how:?} {dir}: {args:?} changed the table"
                );
                checked += 1;
            }
            if how == Breakage::Unreadable {
                // Let the temp dir go.
                std::fs::set_permissions(table.join(dir), std::fs::Permissions::from_mode(0o755))
                    .unwrap();
            }
        }
    }
    assert_eq!(checked, 4 * LAYOUT_DIRS.len() * 19);
}

/// A branch's own directory `branch/branch-test` that is a dangling symlink or a regular file
/// (left out of the branches before: its snapshots' files looked unreferenced) stops every
/// operation with an error naming it.
#[test]
fn a_branch_directory_that_is_not_a_directory_stops_every_operation() {
    for how in [Breakage::Dangling, Breakage::File] {
        let Some((_tmp, table)) = fixture() else {
            return;
        };
        let aside = tempfile::tempdir().unwrap();
        break_dir(&table, aside.path(), "branch/branch-test", how);
        let before = exact_tree(&table);
        let branch_dir = table.join("branch");
        for args in operations(table.to_str().unwrap()) {
            let out = cli(&args, None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{how:?}: {args:?} succeeded");
            assert!(
                stderr.contains(branch_dir.to_str().unwrap()) && stderr.contains("branch-test"),
                "{how:?}: {args:?}: the error does not name the branch directory:\n{stderr}"
            );
            assert_eq!(
                exact_tree(&table),
                before,
                "{how:?}: {args:?} changed the table"
            );
        }
    }
}

/// `snapshot/` truly gone while manifests and data remain: orphan removal refuses (it cannot
/// tell what is referenced), real and dry, and deletes nothing.
#[test]
fn orphan_removal_refuses_an_empty_snapshot_listing_while_data_remains() {
    let Some((_tmp, table)) = fixture() else {
        return;
    };
    std::fs::remove_dir_all(table.join("snapshot")).unwrap();
    let before = exact_tree(&table);
    let t = table.to_str().unwrap().to_string();
    for dry in [false, true] {
        let mut args: Vec<String> = [
            "remove-orphan-files",
            &t,
            "--older-than-ms",
            &now_ms(),
            "--no-writers-running",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if dry {
            args.push("--dry-run".into());
        }
        let out = cli(&args, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "dry={dry}: succeeded");
        assert!(
            stderr.contains("lists no snapshot") && stderr.contains(&format!("{t}/snapshot")),
            "dry={dry}: {stderr}"
        );
        assert_eq!(exact_tree(&table), before, "dry={dry}: changed the table");
    }
}

/// A table created but never committed (its schema, a temp file of an interrupted first
/// commit): orphan removal is a no-op that succeeds and deletes nothing.
#[test]
fn orphan_removal_on_a_table_never_committed_is_a_no_op() {
    let Some((_tmp, table)) = fixture() else {
        return;
    };
    for e in std::fs::read_dir(&table).unwrap().flatten() {
        if e.file_name() != "schema" {
            std::fs::remove_dir_all(e.path()).unwrap();
        }
    }
    std::fs::create_dir(table.join("snapshot")).unwrap();
    let temp = table.join("snapshot/.snapshot-1.0b1c2d.tmp");
    std::fs::write(&temp, b"{}").unwrap();
    common::set_mtime(
        &temp,
        std::time::SystemTime::now() - std::time::Duration::from_secs(7 * 86400),
    );
    let before = exact_tree(&table);
    let t = table.to_str().unwrap().to_string();
    let args: Vec<String> = ["remove-orphan-files", &t, "--json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out = cli(&args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["skipped"].to_string().contains("no snapshot on main"),
        "{v}"
    );
    assert_eq!(
        exact_tree(&table),
        before,
        "orphan removal changed the table"
    );
}

/// On S3 an unreadable or lost `snapshot/` is an empty prefix: with every snapshot object
/// gone while manifests and data remain, orphan removal refuses, real and dry, and no object
/// is deleted.
#[test]
fn orphan_removal_on_s3_refuses_a_table_whose_snapshot_objects_are_gone() {
    let Some((_tmp, table)) = fixture() else {
        return;
    };
    let Some(srv) = common::s3_server() else {
        return;
    };
    std::fs::remove_dir_all(table.join("snapshot")).unwrap();
    let opts = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let uri = common::s3_table_uri("no_snapshots");
    common::s3_upload(&rt, &table, &uri, &opts);
    let before = common::s3_tree(&rt, &uri, &opts);
    assert!(
        before.keys().any(|k| k.starts_with("manifest/")),
        "{before:?}"
    );
    assert!(
        before.keys().any(|k| k.starts_with("pt=1/bucket-0/")),
        "{before:?}"
    );
    // S3 stamps whole seconds: the cut-off lies past the uploads.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for dry in [false, true] {
        let mut args: Vec<String> = vec![
            "remove-orphan-files".into(),
            uri.clone(),
            "--older-than-ms".into(),
            now_ms(),
            "--no-writers-running".into(),
        ];
        for (k, v) in &opts {
            args.push("-o".into());
            args.push(format!("{k}={v}"));
        }
        if dry {
            args.push("--dry-run".into());
        }
        let out = cli(&args, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "dry={dry}: succeeded");
        assert!(
            stderr.contains("lists no snapshot") && stderr.contains(&format!("{uri}/snapshot")),
            "dry={dry}: {stderr}"
        );
        assert_eq!(
            common::s3_tree(&rt, &uri, &opts),
            before,
            "dry={dry}: objects deleted"
        );
    }
}
