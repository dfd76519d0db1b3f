//! `paimon-bench <op> --store s3 --latency-ms 20`: an operation on a loopback S3 server (moto,
//! `tests/py/s3_server.py`, real S3's page size of 1,000) behind a proxy adding a fixed latency
//! to every request ([`super::s3_proxy`]), against a floor of the same requests issued plainly.
//!
//! 1. Generate the table locally (`paimon-gen` preset; not timed) and upload it to
//!    `s3://paimon/bench/<op>-<size>` straight to the server (no latency).
//! 2. **op**: open the table and run the operation through the proxy, every request recorded
//!    byte for byte; counted by kind (LIST, GET, HEAD, PUT, DELETE, POST batch-delete) with the
//!    most in flight at once.
//! 3. Restore the files the operation deleted (straight to the server).
//! 4. **floor**: the recorded requests replayed through the proxy one after the other on one
//!    connection, each answer read whole before the next request.
//!
//! Printed: wall time of both, ratio op / floor, requests per 1,000 deleted files by kind,
//! keys per batch delete. Checks: no failed deletion, every live file of the latest snapshot
//! still on the server, the floor got the same answers' classes (no 5xx).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use paimon_cleanup::clean::{
    expire_snapshots, remove_orphan_files, ExpireConfig, OrphanConfig, RetentionOverrides,
    RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;
use serde_json::json;

use super::measure::cpu_ms;
use super::ops::{runtime, Op};
use super::s3_proxy::{replay, Kind, LatencyProxy, Stats};
use crate::paimon_gen::{self, GenConfig, Size};

/// The bucket the server creates.
const BUCKET: &str = "paimon";

/// Puts in flight while uploading and restoring (straight to the server).
const UPLOAD_CONCURRENCY: usize = 16;

/// What one S3 run needs from the command line.
pub struct S3Args {
    /// Working directory (the generated table goes below it and is removed afterwards).
    pub base: PathBuf,
    /// Runtime worker threads.
    pub threads: usize,
    /// The operation's I/O concurrency.
    pub concurrency: usize,
    /// Latency added to every request.
    pub latency: Duration,
    /// Keep the generated table.
    pub keep: bool,
    /// Append one JSON line per run to this file.
    pub results: Option<PathBuf>,
}

/// Runs every operation of `ops` (drop-partition is skipped: it deletes nothing) at every size
/// of `sizes`, then prints one markdown row per run.
pub fn main(a: &S3Args, ops: &[Op], sizes: &[Size]) -> Result<(), String> {
    let mut rows = Vec::new();
    for &op in ops.iter().filter(|o| **o != Op::Drop) {
        for &size in sizes {
            let r = run(a, op, size)?;
            if let Some(path) = &a.results {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                writeln!(f, "{r}").map_err(|e| e.to_string())?;
            }
            rows.push(r["row"].as_str().unwrap_or_default().to_string());
        }
    }
    println!("\n| operation | size | files deleted | requests | requests / 1,000 deleted | op s | floor s (same requests, one at a time) | op / floor |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    Ok(())
}

/// The loopback S3 server (moto); ends when dropped (EOF on its stdin, then killed).
struct MotoServer {
    port: u16,
    child: Child,
    stdin: Option<ChildStdin>,
}

impl MotoServer {
    fn start() -> Result<MotoServer, String> {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let python = std::env::var_os("PAIMON_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join(".venv/bin/python"));
        let mut child = Command::new(&python)
            .arg(root.join("tests/py/s3_server.py"))
            .args(["--bucket", BUCKET])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start {} tests/py/s3_server.py (set PAIMON_PYTHON or run scripts/setup-python.sh): {e}",
                    python.display()
                )
            })?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            std::io::BufReader::new(out)
                .read_line(&mut line)
                .map_err(|e| e.to_string())?;
        }
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("s3_server.py printed {line:?} instead of its port"))?;
        Ok(MotoServer { port, child, stdin })
    }

    fn addr(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Storage options for a loopback server at `endpoint`.
fn options(endpoint: &str) -> HashMap<String, String> {
    [
        ("s3.endpoint", endpoint),
        ("s3.region", "us-east-1"),
        ("s3.access-key", "test"),
        ("s3.secret-key", "test"),
        ("s3.path-style-access", "true"),
        ("s3.allow-http", "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Every regular file below `dir`, relative, `/`-separated.
fn local_files(dir: &Path) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let e = e.map_err(|e| e.to_string())?;
            let t = e.file_type().map_err(|e| e.to_string())?;
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() {
                let rel = e.path();
                let rel = rel
                    .strip_prefix(dir)
                    .map_err(|e| e.to_string())?
                    .to_str()
                    .ok_or("non-UTF-8 name")?
                    .to_string();
                out.push(rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Puts `rels` (relative to `local`) under the storage's root, [`UPLOAD_CONCURRENCY`] in flight.
async fn upload(storage: &Storage, local: &Path, rels: &[String]) -> Result<(), String> {
    let results: Vec<Result<(), String>> = futures::stream::iter(rels)
        .map(|rel| async move {
            let data = std::fs::read(local.join(rel)).map_err(|e| format!("{rel}: {e}"))?;
            storage
                .put(&storage.root().join(rel), bytes::Bytes::from(data))
                .await
                .map_err(|e| format!("put {rel}: {e}"))
        })
        .buffer_unordered(UPLOAD_CONCURRENCY)
        .collect()
        .await;
    results.into_iter().collect()
}

fn expire_config() -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            older_than_ms: Some(super::now_millis()),
            limit: Some(i64::MAX),
            ..Default::default()
        },
        clean_empty_dirs: Some(false),
        refuse_if_tags_pin_expired: false,
        ..Default::default()
    }
}

fn orphan_config() -> OrphanConfig {
    OrphanConfig {
        older_than_ms: Some(super::now_millis()),
        no_writers_running: true,
        ..Default::default()
    }
}

/// The operation through the proxy: (deleted paths, failed deletions, report summary).
async fn run_op(
    op: Op,
    uri: &str,
    endpoint: &str,
    concurrency: usize,
) -> Result<(Vec<String>, usize, serde_json::Value), String> {
    let storage = Storage::open(uri, &options(endpoint)).map_err(|e| e.to_string())?;
    let t = Table::open(Arc::new(storage), &HashMap::new())
        .await
        .map_err(|e| e.to_string())?;
    let ctl = RunControl {
        io_concurrency: concurrency,
        ..Default::default()
    };
    Ok(match op {
        Op::Expire => {
            let r = expire_snapshots(&t, &expire_config(), &ctl)
                .await
                .map_err(|e| e.to_string())?;
            (
                r.deletion.paths.iter().map(|p| p.path.clone()).collect(),
                r.deletion.failed.len(),
                json!({"snapshots_expired": r.snapshots_expired, "deleted": r.deletion.deleted}),
            )
        }
        Op::Orphans => {
            let r = remove_orphan_files(&t, &orphan_config(), &ctl)
                .await
                .map_err(|e| e.to_string())?;
            (
                r.deletion.paths.iter().map(|p| p.path.clone()).collect(),
                r.deletion.failed.len(),
                json!({"files_listed": r.files_listed, "candidates": r.candidates,
                       "manifests_read": r.manifests_read, "deleted": r.deletion.deleted}),
            )
        }
        Op::Drop => return Err("drop-partition is not measured on S3".into()),
    })
}

fn kinds_json(s: &Stats) -> serde_json::Value {
    Kind::ALL
        .iter()
        .filter(|k| s.count(**k) > 0)
        .map(|k| {
            (
                k.name().to_string(),
                json!({"requests": s.count(*k), "max_in_flight": s.max_in_flight(*k)}),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// `paimon-bench s3-proxy`: the latency proxy alone in front of `upstream`, so that another
/// client (Paimon Java in `scripts/bench-java-s3.sh`) goes through the same proxy as ours.
/// Prints `PORT <n>`, serves until its standard input reaches EOF, then prints one line
/// `S3-PROXY <json>`: requests by kind with the most in flight, answers by status, keys per
/// batch delete.
pub fn proxy_only(upstream: &str, latency: Duration) -> Result<(), String> {
    use std::io::{Read, Write};
    let addr: std::net::SocketAddr = upstream
        .parse()
        .map_err(|e| format!("--upstream {upstream}: {e}"))?;
    let proxy = LatencyProxy::start(addr, latency).map_err(|e| e.to_string())?;
    let mut out = std::io::stdout();
    writeln!(out, "PORT {}", proxy.addr().port()).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    std::io::stdin()
        .read_to_end(&mut sink)
        .map_err(|e| e.to_string())?;
    let s = proxy.stats();
    let report = json!({
        "requests": s.total(), "max_in_flight": s.max_in_flight, "by_kind": kinds_json(&s),
        "statuses": s.statuses.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "batch_deletes": s.batch_keys.len(), "batch_keys": s.batch_keys.iter().sum::<u64>(),
    });
    writeln!(out, "S3-PROXY {report}").map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}

/// `paimon-bench s3-upload`: puts every file of the local table `table` under `uri` on the
/// server at `upstream` (straight, no latency), [`UPLOAD_CONCURRENCY`] in flight.
pub fn upload_only(upstream: &str, table: &Path, uri: &str, threads: usize) -> Result<(), String> {
    let files = local_files(table)?;
    let storage =
        Storage::open(uri, &options(&format!("http://{upstream}"))).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    runtime(threads)?.block_on(upload(&storage, table, &files))?;
    eprintln!(
        "uploaded {} objects to {uri} in {:.1} s",
        files.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// One S3 run; prints the figures and returns them as JSON.
pub fn run(a: &S3Args, op: Op, size: Size) -> Result<serde_json::Value, String> {
    let work = a.base.join(format!("s3-{}-{}", op.name(), size.name()));
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    let table = work.join("table");
    let mut cfg = GenConfig::sized(table.clone(), size);
    if op == Op::Orphans {
        cfg.orphans = cfg.snapshots * cfg.files_per_commit * 8 / 100;
    }
    let tag = format!("[s3 {} {}]", op.name(), size.name());
    eprintln!("{tag} generating {}", table.display());
    let generated = paimon_gen::generate(&cfg)?;
    let files = local_files(&table)?;

    let server = MotoServer::start()?;
    let proxy = LatencyProxy::start(server.addr(), a.latency).map_err(|e| e.to_string())?;
    let direct = format!("http://127.0.0.1:{}", server.port);
    let uri = format!("s3://{BUCKET}/bench/{}-{}", op.name(), size.name());
    let rt = runtime(a.threads)?;
    let uploader = Storage::open(&uri, &options(&direct)).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    rt.block_on(upload(&uploader, &table, &files))?;
    eprintln!(
        "{tag} uploaded {} objects in {:.1} s",
        files.len(),
        t0.elapsed().as_secs_f64()
    );

    // The operation, recorded.
    eprintln!(
        "{tag} operation through the proxy ({} ms a request)",
        a.latency.as_millis()
    );
    proxy.reset();
    proxy.record(true);
    let cpu0 = cpu_ms();
    let t0 = Instant::now();
    let (deleted, failed, report) =
        rt.block_on(run_op(op, &uri, &proxy.endpoint(), a.concurrency))?;
    let op_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let op_cpu = cpu_ms() - cpu0;
    proxy.record(false);
    let op_stats = proxy.stats();
    let recorded = proxy.take_recorded();

    // Checks: nothing failed, the latest snapshot's live files are all there.
    let mut problems = Vec::new();
    if failed > 0 {
        problems.push(format!("{failed} deletions failed"));
    }
    let present: std::collections::HashSet<String> = rt
        .block_on(uploader.list_tree(uploader.root()))
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter_map(|f| f.location.relative_to(uploader.root()).map(str::to_string))
        .collect();
    let missing = generated
        .live_latest
        .iter()
        .filter(|p| !present.contains(*p))
        .count();
    if missing > 0 {
        problems.push(format!(
            "{missing} live files of the latest snapshot are gone"
        ));
    }

    // Restore what the operation deleted, then the floor: the same requests, one at a time.
    let t0 = Instant::now();
    rt.block_on(upload(&uploader, &table, &deleted))?;
    eprintln!(
        "{tag} restored {} deleted objects in {:.1} s; floor: {} requests one after the other",
        deleted.len(),
        t0.elapsed().as_secs_f64(),
        recorded.len()
    );
    proxy.reset();
    let cpu0 = cpu_ms();
    let t0 = Instant::now();
    let replayed = replay(proxy.addr(), &recorded).map_err(|e| e.to_string())?;
    let floor_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let floor_cpu = cpu_ms() - cpu0;
    let floor_stats = proxy.stats();
    if replayed.statuses.keys().any(|s| *s >= 500) {
        problems.push(format!(
            "the floor got server errors: {:?}",
            replayed.statuses
        ));
    }
    if floor_stats.total() != op_stats.total() {
        problems.push(format!(
            "the floor sent {} requests, the operation {}",
            floor_stats.total(),
            op_stats.total()
        ));
    }

    // Figures.
    let n = deleted.len().max(1) as f64;
    let g = &generated.summary;
    println!(
        "\n== {} / {} on S3 (moto, loopback) with {} ms a request, concurrency {}, {} threads: {} objects ({} data files), {} deleted",
        op.name(),
        size.name(),
        a.latency.as_millis(),
        a.concurrency,
        a.threads,
        files.len(),
        g.data_files,
        deleted.len()
    );
    println!("  kind                 requests  per 1,000 deleted  max in flight");
    for k in Kind::ALL {
        let c = op_stats.count(k);
        if c == 0 {
            continue;
        }
        println!(
            "  {:<20} {:>8} {:>18.1} {:>14}",
            k.name(),
            c,
            c as f64 * 1000.0 / n,
            op_stats.max_in_flight(k)
        );
    }
    println!(
        "  {:<20} {:>8} {:>18.1} {:>14}",
        "all",
        op_stats.total(),
        op_stats.total() as f64 * 1000.0 / n,
        op_stats.max_in_flight
    );
    let keys = &op_stats.batch_keys;
    if !keys.is_empty() {
        println!(
            "  batch deletes: {} requests, {} keys, largest {}",
            keys.len(),
            keys.iter().sum::<u64>(),
            keys.iter().max().copied().unwrap_or(0)
        );
    }
    let ratio = op_ms / floor_ms.max(0.001);
    println!(
        "  op {:.2} s wall ({:.2} s CPU, this process incl. the proxy); floor {:.2} s wall ({} requests one after the other, {:.1} ms each); op / floor = {ratio:.3}",
        op_ms / 1000.0,
        op_cpu / 1000.0,
        floor_ms / 1000.0,
        replayed.requests,
        floor_ms / replayed.requests.max(1) as f64
    );
    let row = format!(
        "| {} | {} | {} | {} | {:.0} | {:.2} | {:.2} | {ratio:.3} |",
        op.name(),
        size.name(),
        deleted.len(),
        op_stats.total(),
        op_stats.total() as f64 * 1000.0 / n,
        op_ms / 1000.0,
        floor_ms / 1000.0
    );
    println!("  {row}");
    if problems.is_empty() {
        println!("  checks: ok");
    } else {
        println!("  CHECKS FAILED: {}", problems.join("; "));
    }
    drop(proxy);
    drop(server);
    if !a.keep {
        std::fs::remove_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    Ok(json!({
        "store": "s3", "operation": op.name(), "size": size.name(),
        "latency_ms": a.latency.as_millis() as u64, "concurrency": a.concurrency,
        "threads": a.threads, "objects": files.len(), "generated": g, "deleted": deleted.len(),
        "report": report,
        "op": {"wall_ms": op_ms, "cpu_ms": op_cpu, "requests": op_stats.total(),
               "max_in_flight": op_stats.max_in_flight, "by_kind": kinds_json(&op_stats),
               "batch_keys": op_stats.batch_keys},
        "floor": {"wall_ms": floor_ms, "cpu_ms": floor_cpu, "requests": replayed.requests,
                  "statuses": replayed.statuses.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
                  "by_kind": kinds_json(&floor_stats)},
        "ratio": ratio, "row": row,
    }))
}
