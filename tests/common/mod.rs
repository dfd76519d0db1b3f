//! Shared helpers for integration tests: fixture lookup, table copies, the pypaimon oracle.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Java-written fixture directory, or None (with a visible notice) when absent.
/// With PAIMON_REQUIRE_FIXTURES=1 a missing directory panics.
pub fn fixtures_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var("PAIMON_FIXTURES").ok().map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/java-written-tables")),
    ];
    for c in candidates.into_iter().flatten() {
        if c.join("INDEX.md").exists() {
            return Some(c);
        }
    }
    if std::env::var("PAIMON_REQUIRE_FIXTURES").as_deref() == Ok("1") {
        panic!("PAIMON_REQUIRE_FIXTURES=1 but the Java fixture tables were not found");
    }
    eprintln!("SKIP: Java fixture tables not found (set PAIMON_FIXTURES)");
    None
}

/// Every table directory under the fixtures (a dir with `schema/`, not inside `branch/`).
pub fn fixture_tables(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("schema").is_dir() {
            out.push(dir);
            continue;
        }
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                if e.path().is_dir() && e.file_name() != "branch" {
                    stack.push(e.path());
                }
            }
        }
    }
    out.sort();
    out
}

/// Recursively copy a directory (files keep their bytes; mtimes are fresh).
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// Copy a table into a fresh temp dir; returns (guard, table path).
pub fn copy_table(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(src.file_name().unwrap());
    copy_dir(src, &dst);
    (tmp, dst)
}

/// The Python interpreter with pypaimon, or None (with a notice).
pub fn python() -> Option<PathBuf> {
    let p = std::env::var("PAIMON_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"));
    if p.exists() {
        return Some(p);
    }
    if std::env::var("PAIMON_REQUIRE_FIXTURES").as_deref() == Ok("1") {
        panic!(
            "PAIMON_REQUIRE_FIXTURES=1 but no pypaimon venv at {}",
            p.display()
        );
    }
    eprintln!("SKIP: no pypaimon interpreter (run scripts/setup-python.sh)");
    None
}

/// Run a script under tests/py with the pypaimon interpreter; returns stdout or stderr on failure.
pub fn run_py(python: &Path, script: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/py")
                .join(script),
        )
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Run a script under tests/py and return its stdout whatever its exit status (for scripts
/// that report per-item failures inside their JSON).
pub fn run_py_any_status(python: &Path, script: &str, args: &[&str]) -> String {
    let out = Command::new(python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/py")
                .join(script),
        )
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {script}: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A current-thread tokio runtime for tests.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A warehouse of pypaimon-written tables (tests/py/make_tables.py), built once per test binary.
/// Returns (warehouse dir, parsed tables.json) or None when pypaimon is unavailable.
pub fn pypaimon_warehouse() -> Option<&'static (PathBuf, serde_json::Value)> {
    static WAREHOUSE: std::sync::OnceLock<Option<(PathBuf, serde_json::Value)>> =
        std::sync::OnceLock::new();
    WAREHOUSE
        .get_or_init(|| {
            let py = python()?;
            let dir = tempfile::Builder::new()
                .prefix("pypaimon-wh-")
                .tempdir()
                .unwrap()
                .keep();
            run_py(&py, "make_tables.py", &[dir.to_str().unwrap(), "--quiet"])
                .unwrap_or_else(|e| panic!("make_tables.py failed: {e}"));
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join("tables.json")).unwrap()).unwrap();
            Some((dir, json))
        })
        .as_ref()
}

/// The pypaimon-written table named `name`, copied to a fresh temp dir, with its tables.json entry.
pub fn pypaimon_table(name: &str) -> Option<(tempfile::TempDir, PathBuf, serde_json::Value)> {
    let (_, json) = pypaimon_warehouse()?;
    let entry = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no pypaimon table {name}"))
        .clone();
    let (tmp, path) = copy_table(Path::new(entry["path"].as_str().unwrap()));
    Some((tmp, path, entry))
}

/// pypaimon's view of one version (`live_files.py` JSON).
pub fn pypaimon_view(table: &Path, args: &[&str]) -> serde_json::Value {
    let py = python().expect("python");
    let mut all = vec![table.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_py(&py, "live_files.py", &all).unwrap_or_else(|e| panic!("live_files.py: {e}"));
    serde_json::from_str(&out).unwrap()
}

/// Top-level directories of a table that hold metadata, not data.
pub const METADATA_DIRS: &[&str] = &[
    "schema",
    "snapshot",
    "manifest",
    "index",
    "tag",
    "consumer",
    "branch",
    "changelog",
    "statistics",
    "service",
    "metadata",
];

/// Every file under the table's data directories (partition / bucket dirs), relative paths.
pub fn data_files_on_disk(table: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![table.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(table).unwrap().to_str().unwrap().to_string();
            if dir == table && METADATA_DIRS.contains(&rel.as_str()) {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(rel);
            }
        }
    }
    out
}

/// Every file of the table (relative path → size), for comparing end states.
pub fn tree(table: &Path) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![table.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(table).unwrap().to_str().unwrap().to_string();
                out.insert(rel, e.metadata().unwrap().len());
            }
        }
    }
    out
}

/// pypaimon's view of every version (snapshots, tags, branches) of a table, with row digests.
pub fn all_versions(table: &Path) -> serde_json::Map<String, serde_json::Value> {
    let py = python().expect("python");
    let out = run_py_any_status(
        &py,
        "live_files.py",
        &[table.to_str().unwrap(), "--all-versions"],
    );
    serde_json::from_str::<serde_json::Value>(&out)
        .unwrap_or_else(|e| panic!("live_files.py --all-versions: {e}: {out}"))
        .as_object()
        .unwrap()
        .clone()
}

/// Sets the modification time of every file under `dir` (recursively) to `t`.
pub fn set_tree_mtime(dir: &Path, t: std::time::SystemTime) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                set_mtime(&p, t);
            }
        }
    }
}

/// Sets the modification time of one file.
pub fn set_mtime(path: &Path, t: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(t))
        .unwrap_or_else(|e| panic!("set mtime of {}: {e}", path.display()));
}

/// pypaimon's view of every version of several tables in one interpreter (`live_files.py
/// --all-versions DIR...`), keyed by table directory.
pub fn all_versions_many(
    tables: &[&Path],
) -> std::collections::BTreeMap<PathBuf, serde_json::Map<String, serde_json::Value>> {
    let py = python().expect("python");
    let mut args: Vec<&str> = tables.iter().map(|t| t.to_str().unwrap()).collect();
    args.push("--all-versions");
    let out = run_py_any_status(&py, "live_files.py", &args);
    let v: serde_json::Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("live_files.py --all-versions: {e}: {out}"));
    tables
        .iter()
        .map(|t| {
            let one = if tables.len() == 1 {
                &v
            } else {
                &v[t.to_str().unwrap()]
            };
            let map = one
                .as_object()
                .unwrap_or_else(|| panic!("no versions for {}: {out}", t.display()))
                .clone();
            (t.to_path_buf(), map)
        })
        .collect()
}

/// Names every version of each table references, read with fastavro only
/// (`tests/py/referenced_files.py`), keyed by table directory.
pub fn referenced_files(tables: &[&Path]) -> std::collections::BTreeMap<PathBuf, serde_json::Value> {
    let py = python().expect("python");
    let args: Vec<&str> = tables.iter().map(|t| t.to_str().unwrap()).collect();
    let out = run_py(&py, "referenced_files.py", &args)
        .unwrap_or_else(|e| panic!("referenced_files.py: {e}"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    tables
        .iter()
        .map(|t| (t.to_path_buf(), v[t.to_str().unwrap()].clone()))
        .collect()
}

/// Builds one opt-in pypaimon table (`make_tables.py --only NAME`, e.g. `external_paths`) in a
/// fresh warehouse (such tables hold absolute paths and cannot be copied). Returns (warehouse
/// guard, table dir, tables.json entry) or None without pypaimon.
pub fn pypaimon_fresh_table(
    name: &str,
) -> Option<(tempfile::TempDir, PathBuf, serde_json::Value)> {
    let py = python()?;
    let wh = tempfile::Builder::new()
        .prefix("pypaimon-wh-")
        .tempdir()
        .unwrap();
    run_py(
        &py,
        "make_tables.py",
        &[wh.path().to_str().unwrap(), "--only", name, "--quiet"],
    )
    .unwrap_or_else(|e| panic!("make_tables.py --only {name}: {e}"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(wh.path().join("tables.json")).unwrap()).unwrap();
    let entry = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no pypaimon table {name}"))
        .clone();
    let path = PathBuf::from(entry["path"].as_str().unwrap());
    Some((wh, path, entry))
}
