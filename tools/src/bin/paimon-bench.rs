//! `paimon-bench`: benchmarks of the cleanup operations against their floor, on tables made by
//! the generator (`paimon-gen`), at three sizes.
//!
//! ```text
//! cargo run --release --bin paimon-bench -- expire-snapshots --size small
//! cargo run --release --bin paimon-bench -- all --size all --results bench.jsonl
//! ```
//!
//! For each operation and size: generate the master table (not timed; or reuse one with
//! `--table`), make the operation's working copy of it (data files hard-linked, metadata
//! copied: see `paimon_bench::copy`), then, each in a fresh process so that peak memory
//! (`VmHWM`) is clean:
//! 1. `baseline` — start the runtime and open the table (memory baseline);
//! 2. `plan` — the operation's dry run, profiled by the library's tracing events; it names the
//!    files the operation will delete (not part of the comparison);
//! 3. `floor` — list the same directories, read the same metadata, and `std::fs::remove_file`
//!    a copy of exactly the files the operation deletes (drop partition: write the same commit
//!    into a scratch directory);
//! 4. `op` — the operation through the crate's API (`clean::expiry::snapshots` keeping only the
//!    latest snapshot, `clean::remove_orphan_files` with cut-off now, `clean::drop_partitions`
//!    of the largest live partition).
//!
//! Printed: wall and CPU time per phase, the ratio op / floor, files deleted per second, peak
//! memory, and bytes per referenced file = (op peak − baseline peak) / files referenced by the
//! table (data + changelog + index files).

mod paimon_bench;
#[allow(dead_code)]
mod paimon_gen;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Parser;
use serde_json::json;

use paimon_bench::copy::{copy_table, prepare_mirror, prepare_probe, CopyStats, Fingerprint};
use paimon_bench::floor::{floor, settle_disk};
use paimon_bench::measure::{Measure, RESULT_PREFIX};
use paimon_bench::ops::{self, Op, PlanFile};
use paimon_gen::{GenConfig, GenSummary, Generated, Size};

/// Benchmark cleanup operations against their floor.
///
/// Each run works on copies of a master table: the operation on one, the floor on another
/// (the files the operation deletes). Data files are hard-linked into the copies (no new inode,
/// no new block), every other file (snapshots, hints, manifests, lists, index files, tags,
/// branches, schemas, consumers) is copied, so the master is never changed (the library writes
/// new files by temp file + rename, never into an existing one; `--check-master` proves it per
/// run). The operations never read data files, so their size (`--data-file-bytes`) changes
/// only the disk space. Before generating, the free inodes and bytes of `--dir` are checked:
/// the master (~1.2 inodes and ~370 bytes of metadata per data file, plus the data blocks) and
/// the copies' metadata (~0.08 inodes and ~370 bytes per data file each) must leave 2 M inodes
/// and 8 GiB free.
#[derive(Parser)]
#[command(name = "paimon-bench")]
struct Cli {
    /// expire-snapshots, remove-orphan-files, drop-partition, all, `generate` (only make
    /// the master table at `--table`, with orphans, and exit), `copy` (only make a working
    /// copy of the master at `--table` in `--work-table`, and exit), `s3-proxy` (only run the
    /// latency proxy in front of `--upstream`: prints `PORT <n>`, and at EOF on standard
    /// input `S3-PROXY <json>`, the requests by kind), `s3-upload` (only put the local
    /// table at `--table` under `--s3-uri` on the server at `--upstream`, no latency) or
    /// `growth` (only the growth check over the runs recorded in `--results`).
    op: String,
    /// small, medium, large, xlarge (10 M data files), all (small, medium, large), one
    /// metadata-heavy size (manifests never merged: meta-1k, meta-2k, meta-4k, 96 data files
    /// a snapshot) or meta (those three).
    #[arg(long, default_value = "small")]
    size: String,
    /// Working directory (default: $PAIMON_BENCH_DIR or the system temp dir).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Reuse this master table (generate it there first if missing): generated once with
    /// orphans (8 % of the data files) for every operation, kept afterwards, never changed.
    /// Its generation summary lives next to it (`<table>.paimon-bench.json`). Without it each
    /// run generates its own master inside `--dir` (orphans only for remove-orphan-files).
    /// Must be on the file system of `--dir` (hard links).
    #[arg(long)]
    table: Option<PathBuf>,
    /// Bytes of each generated data file (zeros; 0 = empty, the default: an inode and no
    /// block). Operations never read data files.
    #[arg(long, default_value_t = 0)]
    data_file_bytes: u32,
    /// After each run, check that the master is unchanged: every file's path, size, inode and
    /// mtime, and every metadata file's content (fingerprint before and after, untimed).
    #[arg(long)]
    check_master: bool,
    /// Do not run the floor (nor make its copy): memory and the operation's times only, for
    /// runs too long to make twice; the ratios are then `NaN`.
    #[arg(long)]
    skip_floor: bool,
    /// Inodes left free for everyone else on the file system of `--dir`: a run (or the
    /// generation) that would leave fewer is refused before it starts.
    #[arg(long, default_value_t = 2_000_000)]
    reserve_inodes: u64,
    /// Keep the run directories (the generated master and the copies).
    #[arg(long)]
    keep: bool,
    /// Runtime worker threads (default: number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// I/O concurrency of the operation and the floor (the library's default is 32).
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Which floor: `plain` (one thread lists, reads the bytes of the metadata
    /// without decoding, unlinks) or `decode` (the same reads decoded with the crate's decoders
    /// at `--concurrency`, unlinks on `--unlink-threads`).
    #[arg(long, default_value = "plain")]
    floor: String,
    /// Threads removing files in the `decode` floor.
    #[arg(long, default_value_t = 4)]
    unlink_threads: usize,
    /// Also profile: replay expiry step by step, and delete a second copy of the planned files
    /// through the crate's `Deleter` (costs extra, unmeasured, preparation time).
    #[arg(long)]
    profile: bool,
    /// Runs per operation and size (fresh table each time); a summary gives the median.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Append one JSON line per run to this file.
    #[arg(long)]
    results: Option<PathBuf>,
    /// Override the preset's compaction interval (every n-th snapshot a COMPACT; 0 = none).
    /// Without compactions the latest snapshot reads every file ever added (drop-partition at
    /// `--size medium --compact-every 0`: ~100,000 manifest entries).
    #[arg(long)]
    compact_every: Option<u32>,
    /// The operation's memory bound in bytes (`RunControl::max_memory`); the run fails while
    /// planning if it needs more.
    #[arg(long)]
    max_memory: Option<u64>,
    /// `local`, or `s3`: the table on a loopback S3 server behind a latency-injecting proxy,
    /// against the same requests replayed one after the other (`paimon_bench::s3`).
    #[arg(long, default_value = "local")]
    store: String,
    /// Latency the proxy adds to every request with `--store s3` and `s3-proxy`, ms.
    #[arg(long, default_value_t = 20)]
    latency_ms: u64,
    /// `s3-proxy`, `s3-upload`: the S3 server, `127.0.0.1:PORT`.
    #[arg(long)]
    upstream: Option<String>,
    /// `s3-upload`: where the table goes, `s3://BUCKET/PREFIX`.
    #[arg(long)]
    s3_uri: Option<String>,
    #[arg(long, hide = true)]
    phase: Option<String>,
    #[arg(long, hide = true)]
    work_table: Option<PathBuf>,
    #[arg(long, hide = true)]
    plan: Option<PathBuf>,
    #[arg(long, hide = true)]
    mirror: Option<PathBuf>,
}

type Res<T> = Result<T, Box<dyn Error>>;

fn threads(cli: &Cli) -> usize {
    cli.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    })
}

fn read_plan(path: &Path) -> Res<PlanFile> {
    Ok(serde_json::from_slice(&std::fs::read(path)?)?)
}

/// Child mode: one phase, result on stdout.
fn child(cli: &Cli, op: Op, phase: &str) -> Res<()> {
    let table = cli.work_table.clone().ok_or("--work-table is required")?;
    let plan_path = cli.plan.clone().ok_or("--plan is required")?;
    let n = threads(cli);
    let m = match phase {
        "baseline" => ops::baseline(&table, n)?,
        "plan" => ops::plan(op, &table, &plan_path, n)?,
        "floor" => {
            let plan = read_plan(&plan_path)?;
            let mirror = cli.mirror.clone().ok_or("--mirror is required")?;
            floor(
                op,
                &table,
                &plan,
                &mirror,
                n,
                cli.concurrency,
                cli.unlink_threads,
                cli.floor != "decode",
            )?
        }
        "op" => {
            // Not the paths: this process's peak is the operation's figure.
            let plan = ops::PlanHead::read(&plan_path)?;
            ops::run(op, &table, &plan, n, cli.concurrency, cli.max_memory)?
        }
        "profile" => {
            let plan = ops::PlanHead::read(&plan_path)?;
            ops::profile_expire(&table, &plan, n)?
        }
        "probe-delete" => {
            let plan = read_plan(&plan_path)?;
            let mirror = cli.mirror.clone().ok_or("--mirror is required")?;
            ops::probe_delete(&mirror, &plan, n, cli.concurrency)?
        }
        other => return Err(format!("unknown phase {other}").into()),
    };
    println!("{RESULT_PREFIX}{}", serde_json::to_string(&m)?);
    Ok(())
}

/// Runs one phase in a fresh process.
fn spawn(cli: &Cli, op: Op, phase: &str, work: &Path) -> Res<Measure> {
    spawn_with(cli, op, phase, work, &work.join("floor-copy"))
}

/// Runs one phase in a fresh process with another copy directory.
fn spawn_with(cli: &Cli, op: Op, phase: &str, work: &Path, mirror: &Path) -> Res<Measure> {
    let exe = std::env::current_exe()?;
    let out = Command::new(exe)
        .arg(op.name())
        .args(["--phase", phase])
        .arg("--work-table")
        .arg(work.join("table"))
        .arg("--plan")
        .arg(work.join("plan.json"))
        .arg("--mirror")
        .arg(mirror)
        .args(["--threads", &threads(cli).to_string()])
        .args(["--concurrency", &cli.concurrency.to_string()])
        .args(["--unlink-threads", &cli.unlink_threads.to_string()])
        .args(["--floor", &cli.floor])
        .args(
            cli.max_memory
                .map(|m| vec!["--max-memory".to_string(), m.to_string()])
                .unwrap_or_default(),
        )
        .stderr(Stdio::inherit())
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(RESULT_PREFIX))
        .ok_or_else(|| format!("phase {phase} failed ({}): {stdout}", out.status))?;
    Ok(serde_json::from_str(line)?)
}

fn secs(ms: f64) -> String {
    format!("{:.2}", ms / 1000.0)
}

fn mib(kb: u64) -> String {
    format!("{:.0}", kb as f64 / 1024.0)
}

fn print_steps(title: &str, m: &Measure) {
    println!("  {title}:");
    for s in &m.steps {
        let rss = if s.rss_kb > 0 {
            format!("{:>6} MiB", mib(s.rss_kb))
        } else {
            " ".repeat(10)
        };
        println!(
            "    {:>9.1} .. {:>9.1} ms  {:>9}  {rss}  {}",
            s.start_ms, s.end_ms, s.count, s.name
        );
    }
}

/// A marker that makes a directory ours to delete.
const MARKER: &str = ".paimon-bench";

fn fresh_dir(work: &Path) -> Res<()> {
    if work.exists() {
        if !work.join(MARKER).exists() {
            return Err(
                format!("{} exists and was not made by paimon-bench", work.display()).into(),
            );
        }
        std::fs::remove_dir_all(work)?;
    }
    std::fs::create_dir_all(work)?;
    std::fs::write(work.join(MARKER), b"")?;
    Ok(())
}

/// Free inodes and bytes of the file system holding `dir` (`statvfs`).
fn free_space(dir: &Path) -> Res<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: statvfs only writes into the zeroed struct we pass.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a valid statvfs struct.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(format!(
            "statvfs {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        )
        .into());
    }
    Ok((st.f_favail as u64, st.f_bavail as u64 * st.f_frsize as u64))
}

/// Bytes `paimon-bench` leaves free on the file system of `--dir` for everyone else (the
/// inodes it leaves are `--reserve-inodes`).
const RESERVE_BYTES: u64 = 8 << 30;

/// Refuses a run the file system cannot hold with `--reserve-inodes` and [`RESERVE_BYTES`]
/// left over. Per data file of the table (measured at large: 1.03 M data files, 1.13 M
/// inodes, 384 MB): the master, when it is generated, ~1.1 inodes (+0.08 with orphans) and
/// ~370 bytes of metadata and directories, plus each data, changelog and orphan file's blocks
/// (`--data-file-bytes` rounded up to 4 KiB); the operation's copy ~0.08 inodes (metadata
/// only: data files are links) and ~370 bytes (metadata and the directory entries of the
/// links); the floor's copy of the planned files as much for expiry (nearly every file),
/// a tenth for orphan removal, nothing for drop partition; doubled with `--profile`.
fn check_room(
    cli: &Cli,
    base: &Path,
    op: Option<Op>,
    cfg: &GenConfig,
    generating: bool,
) -> Res<()> {
    let data = u64::from(cfg.snapshots) * u64::from(cfg.files_per_commit) * 81 / 100;
    let (mut inodes, mut bytes) = (0u64, 0u64);
    if generating {
        let orphans = u64::from(cfg.orphans);
        let blocks = u64::from(cfg.data_file_bytes).div_ceil(4096) * 4096;
        inodes += data * 11 / 10 + orphans;
        bytes += data * 370 + (data * 106 / 100 + orphans) * blocks;
    }
    // `None`: the master only (`generate`).
    if let Some(op) = op {
        let mirror = match op {
            Op::Expire => data,
            Op::Orphans => data / 10,
            Op::Drop => 0,
        };
        let mirrors = match (cli.skip_floor, cli.profile && op != Op::Drop) {
            (true, false) => 0,
            (false, true) => 2,
            _ => 1,
        };
        inodes += (data + mirror * mirrors) * 8 / 100;
        bytes += (data + mirror * mirrors) * 370;
    }
    let (free_inodes, free_bytes) = free_space(base)?;
    let reserve_inodes = cli.reserve_inodes;
    if inodes + reserve_inodes > free_inodes || bytes + RESERVE_BYTES > free_bytes {
        return Err(format!(
            "{} at this size needs about {inodes} inodes and {} MB ({}the copies of the \
             operation and the floor, data files hard-linked); {} has {free_inodes} inodes \
             and {} MB free, and {reserve_inodes} inodes (--reserve-inodes) and {} MB stay free for others: not run",
            op.map_or("generate", Op::name),
            bytes >> 20,
            if generating {
                format!("the master table of ~{data} data files, ")
            } else {
                String::new()
            },
            base.display(),
            free_bytes >> 20,
            RESERVE_BYTES >> 20
        )
        .into());
    }
    Ok(())
}

/// The generation summary kept next to a reusable master table.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sidecar {
    /// Preset name.
    size: String,
    /// What was generated.
    summary: GenSummary,
    /// Main's live data files of the latest snapshot (for the checks after each run).
    live_latest: Vec<String>,
}

fn sidecar_path(master: &Path) -> PathBuf {
    let name = master
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "table".into());
    master.with_file_name(format!("{name}.paimon-bench.json"))
}

/// The preset's configuration at `out`, with the command line's overrides.
fn gen_config(cli: &Cli, out: PathBuf, size: Size, orphans: bool) -> GenConfig {
    let mut cfg = GenConfig::sized(out, size);
    if let Some(n) = cli.compact_every {
        cfg.compact_every = n;
    }
    cfg.data_file_bytes = cli.data_file_bytes;
    if orphans {
        // 8 % of the APPEND files, ~10 % of the data files, are orphans.
        cfg.orphans = cfg.snapshots * cfg.files_per_commit * 8 / 100;
    }
    cfg
}

fn log_generated(label: &str, g: &GenSummary) {
    eprintln!(
        "[{label}] generated in {} s: {} snapshots, {} data + {} changelog + {} index files, {} orphans, {} manifests",
        secs(g.elapsed_ms as f64),
        g.snapshots,
        g.data_files,
        g.changelog_files,
        g.index_files,
        g.orphan_files,
        g.manifests
    );
}

/// The shared master at `--table`: read back, or generated (with orphans) and recorded.
fn shared_master(
    cli: &Cli,
    base: &Path,
    op: Option<Op>,
    size: Size,
    master: &Path,
) -> Res<Generated> {
    let sidecar = sidecar_path(master);
    if master.exists() {
        let s: Sidecar = serde_json::from_slice(&std::fs::read(&sidecar).map_err(|e| {
            format!(
                "{}: {e} (a master table is reused only with the summary paimon-bench wrote)",
                sidecar.display()
            )
        })?)?;
        if s.size != size.name() {
            return Err(format!(
                "{} was generated at size {}, not {}",
                master.display(),
                s.size,
                size.name()
            )
            .into());
        }
        return Ok(Generated {
            summary: s.summary,
            live_latest: s.live_latest,
        });
    }
    let cfg = gen_config(cli, master.to_path_buf(), size, true);
    check_room(cli, base, op, &cfg, true)?;
    eprintln!("[master {}] generating {}", size.name(), master.display());
    let generated = paimon_gen::generate(&cfg)?;
    log_generated(&format!("master {}", size.name()), &generated.summary);
    let s = Sidecar {
        size: size.name().to_string(),
        summary: generated.summary.clone(),
        live_latest: generated.live_latest.clone(),
    };
    std::fs::write(&sidecar, serde_json::to_vec(&s)?)?;
    Ok(generated)
}

fn run_one(cli: &Cli, base: &Path, op: Op, size: Size) -> Res<serde_json::Value> {
    let work = base.join(format!("{}-{}", op.name(), size.name()));
    let (master, generated) = match &cli.table {
        Some(m) => {
            let generated = shared_master(cli, base, Some(op), size, m)?;
            let probe = gen_config(cli, m.clone(), size, true);
            check_room(cli, base, Some(op), &probe, false)?;
            fresh_dir(&work)?;
            (m.clone(), generated)
        }
        None => {
            let m = work.join("master");
            let cfg = gen_config(cli, m.clone(), size, op == Op::Orphans);
            check_room(cli, base, Some(op), &cfg, true)?;
            fresh_dir(&work)?;
            eprintln!("[{} {}] generating {}", op.name(), size.name(), m.display());
            let generated = paimon_gen::generate(&cfg)?;
            log_generated(
                &format!("{} {}", op.name(), size.name()),
                &generated.summary,
            );
            (m, generated)
        }
    };
    let g: &GenSummary = &generated.summary;
    let fingerprint = if cli.check_master {
        eprintln!("[{} {}] fingerprinting the master", op.name(), size.name());
        Some(Fingerprint::of(&master)?)
    } else {
        None
    };
    let table = work.join("table");
    let copied: CopyStats = copy_table(&master, &table)?;
    eprintln!(
        "[{} {}] working copy in {} s: {} data files linked, {} files ({} MB) copied",
        op.name(),
        size.name(),
        secs(copied.elapsed_ms as f64),
        copied.linked,
        copied.copied,
        copied.copied_bytes >> 20
    );
    let baseline = spawn(cli, op, "baseline", &work)?;
    eprintln!("[{} {}] dry run", op.name(), size.name());
    let plan_m = spawn(cli, op, "plan", &work)?;
    let plan = read_plan(&work.join("plan.json"))?;
    if !cli.skip_floor {
        prepare_mirror(&table, &work.join("floor-copy"), &plan.paths)?;
    }
    let mut extra_phases = Vec::new();
    if cli.profile {
        if op == Op::Expire {
            eprintln!(
                "[{} {}] profile (expiry replayed step by step)",
                op.name(),
                size.name()
            );
            extra_phases.push(spawn(cli, op, "profile", &work)?);
        }
        if op != Op::Drop {
            let probe = work.join("probe-copy");
            prepare_probe(&table, &probe, &plan.paths)?;
            eprintln!("[{} {}] probe: Deleter on a copy", op.name(), size.name());
            settle_disk()?;
            extra_phases.push(spawn_with(cli, op, "probe-delete", &work, &probe)?);
        }
    }
    settle_disk()?;
    eprintln!("[{} {}] floor", op.name(), size.name());
    let floor_m = if cli.skip_floor {
        Measure {
            phase: "floor (skipped)".into(),
            wall_ms: f64::NAN,
            cpu_ms: f64::NAN,
            ..Default::default()
        }
    } else {
        spawn(cli, op, "floor", &work)?
    };
    settle_disk()?;
    eprintln!("[{} {}] operation", op.name(), size.name());
    let op_m = spawn(cli, op, "op", &work)?;

    // Checks: the run did what the dry run planned, and the latest version is intact.
    let mut problems = Vec::new();
    if op_m.files != plan_m.files {
        problems.push(format!(
            "the run handled {} files, the dry run planned {}",
            op_m.files, plan_m.files
        ));
    }
    if op_m.extra["failed"].as_u64().unwrap_or(0) > 0 {
        problems.push(format!("{} deletions failed", op_m.extra["failed"]));
    }
    if op != Op::Drop {
        if let Err(e) = paimon_gen::verify(&table, &generated.live_latest) {
            problems.push(e);
        }
        let missing = generated
            .live_latest
            .iter()
            .filter(|p| !table.join(p).exists())
            .count();
        if missing > 0 {
            problems.push(format!(
                "{missing} live files of the latest snapshot are gone"
            ));
        }
    }

    let master_unchanged = match fingerprint {
        Some(before) => {
            let after = Fingerprint::of(&master)?;
            if after != before {
                problems.push(format!(
                    "the master changed: {before:?} before the run, {after:?} after"
                ));
            }
            Some(after == before)
        }
        None => None,
    };

    // NaN when the floor was skipped (`f64::max` would turn a NaN floor into 0.001).
    let ratio = op_m.wall_ms
        / if floor_m.wall_ms.is_nan() {
            f64::NAN
        } else {
            floor_m.wall_ms.max(0.001)
        };
    let per_sec = op_m.files as f64 / (op_m.wall_ms / 1000.0).max(1e-9);
    let referenced = g.referenced_files.max(1);
    let above = (op_m.vmhwm_kb.saturating_sub(baseline.vmhwm_kb) * 1024) as f64;
    let bytes_per_ref = above / referenced as f64;
    let bytes_per_data = above / g.data_files.max(1) as f64;
    let cpu_ratio = op_m.cpu_ms
        / if floor_m.cpu_ms.is_nan() {
            f64::NAN
        } else {
            floor_m.cpu_ms.max(0.001)
        };
    println!(
        "\n== {} / {}: {} snapshots, {} data + {} changelog + {} index files referenced, {} orphans; generated in {} s",
        op.name(),
        size.name(),
        g.snapshots,
        g.data_files,
        g.changelog_files,
        g.index_files,
        g.orphan_files,
        secs(g.elapsed_ms as f64)
    );
    println!("  phase      wall s   cpu s  peak MiB      files   files/s");
    for m in [&baseline, &plan_m, &floor_m, &op_m] {
        println!(
            "  {:<8} {:>8} {:>7} {:>9} {:>10} {:>9.0}",
            m.phase,
            secs(m.wall_ms),
            secs(m.cpu_ms),
            mib(m.vmhwm_kb),
            m.files,
            m.files as f64 / (m.wall_ms / 1000.0).max(1e-9)
        );
    }
    println!(
        "  op / floor = {ratio:.2} wall, {cpu_ratio:.2} CPU; {per_sec:.0} files/s; peak above baseline {bytes_per_data:.0} B per data file ({} data files), {bytes_per_ref:.0} B per referenced file ({referenced} referenced)",
        g.data_files
    );
    if let Some(inner) = op_m.extra["elapsed_ms"].as_f64() {
        println!(
            "  the operation's own elapsed_ms: {inner:.0} ms; opening the table before and dropping its state after: {:.0} ms",
            op_m.wall_ms - inner
        );
    }
    let mut drop_figures = serde_json::Value::Null;
    if op == Op::Drop {
        // The manifest entries the latest snapshot reads (the floor decodes exactly those; a
        // skipped floor counted none, so the count is unknown then, not 0).
        let entries = floor_m
            .steps
            .iter()
            .find(|s| s.name.starts_with("decode lists"))
            .map(|s| s.count);
        let written = &op_m.extra["metadata_written"];
        let by_kind = written["by_kind"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k} {} ({} B)", v["files"], v["bytes"]))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let entries_text = entries.map_or_else(
            || "the latest snapshot's manifest entries not counted (floor skipped)".to_owned(),
            |n| format!("latest snapshot reads {n} manifest entries"),
        );
        println!(
            "  drop-partition: {entries_text}; {} files marked deleted in {} ms (op phase {} s); metadata written: {} files, {} bytes ({by_kind})",
            op_m.files,
            op_m.extra["elapsed_ms"],
            secs(op_m.wall_ms),
            written["files"],
            written["bytes"]
        );
        drop_figures = json!({"manifest_entries": entries, "metadata_written": written});
    }
    print_steps("floor steps", &floor_m);
    print_steps("op steps (progress callbacks)", &op_m);
    print_steps("dry-run profile (library tracing events)", &plan_m);
    for m in &extra_phases {
        print_steps(
            &format!(
                "{} ({} s wall, {} MiB)",
                m.phase,
                secs(m.wall_ms),
                mib(m.vmhwm_kb)
            ),
            m,
        );
    }
    println!(
        "  working copy: {} data files linked, {} metadata files copied ({} MB) in {} s{}",
        copied.linked,
        copied.copied,
        copied.copied_bytes >> 20,
        secs(copied.elapsed_ms as f64),
        match master_unchanged {
            Some(true) => format!("; master {} unchanged (fingerprint)", master.display()),
            Some(false) => format!("; MASTER {} CHANGED", master.display()),
            None => String::new(),
        }
    );
    if problems.is_empty() {
        println!("  checks: ok");
    } else {
        println!("  CHECKS FAILED: {}", problems.join("; "));
    }
    println!(
        "  | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.0} | {} | {} | {:.0} |",
        size.name(),
        g.snapshots,
        g.data_files,
        op_m.files,
        secs(floor_m.wall_ms),
        secs(floor_m.cpu_ms),
        secs(op_m.wall_ms),
        secs(op_m.cpu_ms),
        ratio,
        per_sec,
        mib(floor_m.vmhwm_kb),
        mib(op_m.vmhwm_kb),
        bytes_per_data
    );
    if !cli.keep {
        std::fs::remove_dir_all(&work)?;
    }
    if !problems.is_empty() {
        return Err(problems.join("; ").into());
    }
    Ok(json!({
        "op": op.name(), "size": size.name(), "generated": g,
        "baseline": baseline, "plan": plan_m, "floor": floor_m, "run": op_m,
        "profile": extra_phases,
        "ratio": ratio, "cpu_ratio": cpu_ratio, "files_per_sec": per_sec,
        "bytes_per_referenced_file": bytes_per_ref, "bytes_per_data_file": bytes_per_data,
        "floor_kind": if op == Op::Drop { "drop" } else { cli.floor.as_str() },
        "compact_every": cli.compact_every, "drop": drop_figures,
        "master": master.display().to_string(), "copy": copied,
        "master_unchanged": master_unchanged,
    }))
}

/// Median of `v`; `NaN` when it is empty (a skipped floor's figures are `null` in the JSON).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One markdown row over repeated runs: medians, and the ratio's range.
fn summarize(op: Op, size: Size, runs: &[serde_json::Value]) -> String {
    let get = |f: &dyn Fn(&serde_json::Value) -> Option<f64>| -> Vec<f64> {
        runs.iter().filter_map(f).collect()
    };
    let ratios = get(&|r| r["ratio"].as_f64());
    let floor = get(&|r| r["floor"]["wall_ms"].as_f64());
    let op_ms = get(&|r| r["run"]["wall_ms"].as_f64());
    let fps = get(&|r| r["files_per_sec"].as_f64());
    let peak = get(&|r| r["run"]["vmhwm_kb"].as_f64());
    let bpr = get(&|r| r["bytes_per_data_file"].as_f64());
    let floor_cpu = get(&|r| r["floor"]["cpu_ms"].as_f64());
    let op_cpu = get(&|r| r["run"]["cpu_ms"].as_f64());
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(0.0, f64::max);
    format!(
        "| {} | {} | {} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.2} ({min:.2}–{max:.2}) | {:.0} | {:.0} | {:.0} |",
        op.name(),
        size.name(),
        runs.len(),
        median(floor) / 1000.0,
        median(floor_cpu) / 1000.0,
        median(op_ms) / 1000.0,
        median(op_cpu) / 1000.0,
        median(ratios),
        median(fps),
        median(peak) / 1024.0,
        median(bpr)
    )
}

/// `copy`: a working copy of the master at `--table` in `--work-table` (data files hard-linked,
/// every other file copied, as each run's copy), for scripts that run other engines on it.
fn copy_only(cli: &Cli) -> Res<()> {
    let master = cli.table.clone().ok_or("copy needs --table")?;
    let to = cli.work_table.clone().ok_or("copy needs --work-table")?;
    if to.exists() {
        return Err(format!("{} exists", to.display()).into());
    }
    let copied = copy_table(&master, &to)?;
    eprintln!(
        "[copy] {} in {} s: {} data files linked, {} files ({} MB) copied",
        to.display(),
        secs(copied.elapsed_ms as f64),
        copied.linked,
        copied.copied,
        copied.copied_bytes >> 20
    );
    Ok(())
}

/// `growth`: the growth check over the runs recorded in `--results` (written by earlier runs
/// with `--results`), for a series whose sizes were run separately.
fn growth_only(cli: &Cli) -> Res<()> {
    let path = cli.results.clone().ok_or("growth needs --results FILE")?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut results = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), n + 1))?;
        results.push(value);
    }
    let (rows, problems) = paimon_bench::growth::check_results(&results);
    paimon_bench::growth::print(&rows, &problems);
    Ok(())
}

fn main() -> Res<()> {
    let cli = Cli::parse();
    if cli.op == "copy" {
        return copy_only(&cli);
    }
    if cli.op == "growth" {
        return growth_only(&cli);
    }
    if cli.op == "s3-proxy" || cli.op == "s3-upload" {
        let upstream = cli
            .upstream
            .as_deref()
            .ok_or("--upstream HOST:PORT is needed")?;
        if cli.op == "s3-proxy" {
            paimon_bench::s3::proxy_only(
                upstream,
                std::time::Duration::from_millis(cli.latency_ms),
            )?;
        } else {
            paimon_bench::s3::upload_only(
                upstream,
                cli.table.as_deref().ok_or("--table DIR is needed")?,
                cli.s3_uri
                    .as_deref()
                    .ok_or("--s3-uri s3://BUCKET/PREFIX is needed")?,
                threads(&cli),
            )?;
        }
        return Ok(());
    }
    let ops: Vec<Op> = match cli.op.as_str() {
        "all" => Op::ALL.to_vec(),
        "generate" => Vec::new(),
        o => vec![Op::parse(o).ok_or_else(|| format!("unknown operation {o}"))?],
    };
    if let Some(phase) = cli.phase.clone() {
        let op = *ops.first().ok_or("a phase needs an operation")?;
        return child(&cli, op, &phase);
    }
    let sizes: Vec<Size> = match cli.size.as_str() {
        "all" => vec![Size::Small, Size::Medium, Size::Large],
        "meta" => vec![Size::Meta1k, Size::Meta2k, Size::Meta4k],
        s => vec![Size::parse(s).ok_or_else(|| format!("unknown size {s}"))?],
    };
    let base = cli
        .dir
        .clone()
        .or_else(|| std::env::var_os("PAIMON_BENCH_DIR").map(PathBuf::from))
        .unwrap_or_else(|| std::env::temp_dir().join("paimon-bench"));
    std::fs::create_dir_all(&base)?;
    let base = base.canonicalize()?;
    if cli.store == "s3" {
        let s3 = paimon_bench::s3::S3Args {
            base,
            threads: threads(&cli),
            concurrency: cli.concurrency,
            latency: std::time::Duration::from_millis(cli.latency_ms),
            keep: cli.keep,
            results: cli.results.clone(),
        };
        return Ok(paimon_bench::s3::main(&s3, &ops, &sizes)?);
    }
    if ops.is_empty() {
        let master = cli.table.clone().ok_or("generate needs --table")?;
        if master.exists() {
            return Err(format!("{} exists", master.display()).into());
        }
        let [size] = sizes[..] else {
            return Err("generate makes one size".into());
        };
        shared_master(&cli, &base, None, size, &master)?;
        return Ok(());
    }
    let mut summary = Vec::new();
    let mut growth = (Vec::new(), Vec::new());
    for op in ops {
        let mut points = Vec::new();
        for &size in &sizes {
            let mut runs = Vec::new();
            for _ in 0..cli.repeat.max(1) {
                let result = run_one(&cli, &base, op, size)?;
                if let Some(path) = &cli.results {
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)?;
                    writeln!(f, "{}", serde_json::to_string(&result)?)?;
                }
                runs.push(result);
            }
            summary.push(summarize(op, size, &runs));
            points.extend(paimon_bench::growth::Point::of(&runs));
        }
        let (rows, problems) = paimon_bench::growth::check(op.name(), &points);
        growth.0.extend(rows);
        growth.1.extend(problems);
    }
    println!("\n| operation | size | runs | floor s wall (CPU) | op s wall (CPU) | op/floor wall, median (min–max) | files/s | op peak MiB | B above baseline / data file |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for line in summary {
        println!("{line}");
    }
    if sizes.len() > 1 {
        println!();
        paimon_bench::growth::print(&growth.0, &growth.1);
    }
    Ok(())
}
