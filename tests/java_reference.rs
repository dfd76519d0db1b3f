//! Paimon Java as the contract: differential tests against Java's own maintenance operations.
//!
//! One JVM (the harness in tests/java-reference, built by scripts/setup-java-reference.sh)
//! writes a random table history per seed through Paimon's Java write API. For each seed and
//! operation (snapshot expiry, changelog expiry, tag deletion, orphan removal, tag expiry,
//! consumer expiry, partition expiry) two identical copies are made: Java runs its operation on
//! one, the `paimon-cleanup` CLI on the other with the same settings. Then (a) Java reads every
//! version still on our copy: the rows must equal what Java read before (zero tolerance), and
//! on Iceberg-compatible tables pyiceberg reads the Iceberg metadata with the same rows; (b) the
//! deleted sets are compared, and every difference must have a reason from the table in
//! docs/java-differences.md; (c) Java commits again and expires on our copy without error.
//!
//! `PAIMON_JAVA_SEEDS` (default 30: every operation on at least 20 seeds, partition expiry
//! only runs on partitioned tables), `PAIMON_JAVA_FIRST_SEED` (default 1) and
//! `PAIMON_JAVA_SIZE` (write steps per history, default 30) size the run; `PAIMON_JAVA_OPS`
//! picks operations; `PAIMON_REQUIRE_JAVA=1` turns a missing harness into a failure instead of
//! a skip. The other knobs are in docs/java-differences.md.

mod common;

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// The harness class path: `PAIMON_JAVA_CLASSPATH`, else what the set-up script wrote.
fn classpath() -> Option<String> {
    if let Ok(cp) = std::env::var("PAIMON_JAVA_CLASSPATH") {
        return Some(cp);
    }
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java-reference/target/classpath.txt");
    std::fs::read_to_string(file)
        .ok()
        .map(|s| s.trim().to_owned())
}

/// The JVM running the harness, spoken to in JSON lines.
struct Jvm {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Jvm {
    fn start(classpath: &str, log: &Path) -> Jvm {
        let mut child = Command::new("java")
            .args([
                "-Xmx1g",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                classpath,
                "org.paimoncleanup.ref.Harness",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("start java");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Jvm {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends one request; returns the reply, or the harness's error text.
    fn call(&mut self, req: Value) -> Result<Value, String> {
        writeln!(self.stdin, "{req}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the Java harness exited (request {req})");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["ok"] == json!(true) {
            Ok(v)
        } else {
            Err(format!(
                "{}\n{}",
                v["error"].as_str().unwrap_or(""),
                v["trace"].as_str().unwrap_or("")
            ))
        }
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A small deterministic generator (splitmix64) for the settings of a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

fn copy_tree(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success(), "cp -a {} {}", from.display(), to.display());
}

/// Every file under `root`, relative, with `/` separators.
fn files_under(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.insert(rel(root, &p.to_string_lossy()));
            }
        }
    }
    out
}

/// `path` (absolute, maybe a `file:` URI) relative to `root`.
fn rel(root: &Path, path: &str) -> String {
    let p = path
        .strip_prefix("file://")
        .or_else(|| path.strip_prefix("file:"))
        .unwrap_or(path);
    let root = root.to_string_lossy();
    p.strip_prefix(root.as_ref())
        .map(|r| r.trim_start_matches('/').to_owned())
        .unwrap_or_else(|| p.to_owned())
}

/// Sets the modification time of everything under `root` to `secs_ago` seconds back.
fn age_tree(root: &Path, secs_ago: u64) {
    let when = SystemTime::now() - Duration::from_secs(secs_ago);
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            let f = std::fs::File::options()
                .read(true)
                .open(&p)
                .expect("open for mtime");
            f.set_modified(when).unwrap();
        }
    }
}

/// `(id, timeMillis)` of the `<prefix>-<id>` JSON files in `dir`.
fn versions(dir: &Path, prefix: &str) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(id) = name
            .strip_prefix(prefix)
            .and_then(|s| s.strip_prefix('-'))
            .and_then(|s| s.parse::<i64>().ok())
        else {
            continue;
        };
        let text = std::fs::read_to_string(e.path()).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        out.push((id, v["timeMillis"].as_i64().unwrap()));
    }
    out.sort();
    out
}

fn tags(table: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(table.join("tag"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_prefix("tag-")
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A cut-off between two versions' times (so that both sides pick the same versions).
fn cutoff_between(times: &[(i64, i64)], rng: &mut Rng) -> Option<i64> {
    if times.len() < 2 {
        return None;
    }
    // Just after version i: Java turns the cut-off into a duration back from its own clock, so
    // its effective cut-off lands a little later than ours; the whole gap to version i+1 is
    // the margin.
    let i = rng.below(times.len() as u64 - 1) as usize;
    Some(times[i].1 + 1)
}

/// One operation with its settings, as Java's harness and as our CLI's arguments.
struct Op {
    name: &'static str,
    settings: Value,
    cli: Vec<String>,
    /// Files (relative) whose modification time is set two days back on both copies first.
    age: Vec<String>,
    /// For update-time partition expiry: the epoch-ms cut-off, turned into our CLI's
    /// `--expiration-time` at the moment it starts (Java's harness does the same).
    cutoff_ms: Option<i64>,
}

fn expire_snapshots_op(table: &Path, rng: &mut Rng) -> Op {
    let snaps = versions(&table.join("snapshot"), "snapshot");
    let n = snaps.len().max(1) as u64;
    let retain_min = 1 + rng.below(3);
    let retain_max = retain_min + rng.below(n);
    let mut settings = json!({"retain_min": retain_min, "retain_max": retain_max});
    let mut cli = vec![
        "expire-snapshots".to_owned(),
        format!("--retain-min={retain_min}"),
        format!("--retain-max={retain_max}"),
    ];
    if rng.chance(3) {
        let max_deletes = 1 + rng.below(n);
        settings["max_deletes"] = json!(max_deletes);
        cli.push(format!("--max-deletes={max_deletes}"));
    } else {
        cli.push(format!("--max-deletes={}", i32::MAX));
    }
    let cut = if rng.chance(3) {
        cutoff_between(&snaps, rng)
    } else {
        None
    };
    match cut {
        Some(c) => {
            settings["older_than_ms"] = json!(c);
            cli.push(format!("--older-than-ms={c}"));
        }
        None => cli.push("--time-retained=36500 d".to_owned()),
    }
    // The table options carry the same retention as the arguments, so that our choice of a
    // decoupled changelog lifecycle (judged from the options) matches Java's (judged from the
    // ExpireConfig built here).
    cli.extend([
        format!("-o=snapshot.num-retained.min={retain_min}"),
        format!("-o=snapshot.num-retained.max={retain_max}"),
        "-o=snapshot.time-retained=36500 d".to_owned(),
        "-o=changelog.time-retained=36500 d".to_owned(),
        format!("-o=changelog.num-retained.min={retain_min}"),
    ]);
    if rng.chance(3) {
        // A decoupled changelog lifecycle: changelogs outlive the expiring snapshots.
        let cmax = retain_max + 1 + rng.below(5);
        settings["changelog_retain_min"] = json!(retain_min);
        settings["changelog_retain_max"] = json!(cmax);
        cli.push(format!("-o=changelog.num-retained.max={cmax}"));
    } else {
        cli.push(format!("-o=changelog.num-retained.max={retain_max}"));
    }
    Op {
        name: "expire-snapshots",
        settings,
        cli,
        age: Vec::new(),
        cutoff_ms: None,
    }
}

fn expire_changelogs_op(table: &Path, rng: &mut Rng) -> Op {
    let snaps = versions(&table.join("snapshot"), "snapshot");
    let logs = versions(&table.join("changelog"), "changelog");
    let n = (snaps.len() + logs.len()).max(1) as u64;
    let retain_min = 1 + rng.below(3);
    let retain_max = retain_min + rng.below(n);
    let mut settings = json!({
        "changelog_retain_min": retain_min,
        "changelog_retain_max": retain_max,
    });
    let mut cli = vec![
        "expire-changelogs".to_owned(),
        format!("--retain-min={retain_min}"),
        format!("--retain-max={retain_max}"),
    ];
    if rng.chance(3) {
        let max_deletes = 1 + rng.below(n);
        settings["changelog_max_deletes"] = json!(max_deletes);
        cli.push(format!("--max-deletes={max_deletes}"));
    } else {
        settings["changelog_max_deletes"] = json!(i32::MAX);
        cli.push(format!("--max-deletes={}", i32::MAX));
    }
    match if rng.chance(3) {
        cutoff_between(&logs, rng)
    } else {
        None
    } {
        Some(c) => {
            settings["changelog_older_than_ms"] = json!(c);
            cli.push(format!("--older-than-ms={c}"));
        }
        None => cli.push("--time-retained=36500 d".to_owned()),
    }
    Op {
        name: "expire-changelogs",
        settings,
        cli,
        age: Vec::new(),
        cutoff_ms: None,
    }
}

fn delete_tag_op(table: &Path, rng: &mut Rng) -> Option<Op> {
    let all = tags(table);
    if all.is_empty() {
        return None;
    }
    let tag = all[rng.below(all.len() as u64) as usize].clone();
    Some(Op {
        name: "delete-tag",
        settings: json!({ "tag": tag }),
        cli: vec!["delete-tag".to_owned(), tag],
        age: Vec::new(),
        cutoff_ms: None,
    })
}

fn orphans_op() -> Op {
    let cut = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 86_400_000;
    Op {
        name: "remove-orphan-files",
        settings: json!({ "older_than_ms": cut }),
        cli: vec![
            "remove-orphan-files".to_owned(),
            format!("--older-than-ms={cut}"),
        ],
        age: Vec::new(),
        cutoff_ms: None,
    }
}

/// Tag expiry as Java's `expire_tags`: each tag's own time retention, and on some seeds an
/// `older_than` cut-off between two tags' creation times.
fn expire_tags_op(table: &Path, times: &Value, rng: &mut Rng) -> Option<Op> {
    if tags(table).is_empty() {
        return None;
    }
    let mut created: Vec<(i64, i64)> = times["tags"]
        .as_object()
        .map(|m| {
            m.values()
                .filter_map(Value::as_i64)
                .map(|t| (0, t))
                .collect()
        })
        .unwrap_or_default();
    created.sort_by_key(|&(_, t)| t);
    let mut settings = json!({});
    let mut cli = vec!["expire-tags".to_owned()];
    if rng.chance(2) {
        if let Some(c) = cutoff_between(&created, rng) {
            settings["older_than_ms"] = json!(c);
            cli.push(format!("--older-than-ms={c}"));
        }
    }
    Some(Op {
        name: "expire-tags",
        settings,
        cli,
        age: Vec::new(),
        cutoff_ms: None,
    })
}

/// Consumer expiry: some consumers' files aged two days, expiration time one day.
fn expire_consumers_op(table: &Path, rng: &mut Rng) -> Option<Op> {
    let mut consumers: Vec<String> = std::fs::read_dir(table.join("consumer"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("consumer-"))
                .collect()
        })
        .unwrap_or_default();
    if consumers.is_empty() {
        return None;
    }
    consumers.sort();
    let age: Vec<String> = consumers
        .into_iter()
        .filter(|_| !rng.chance(3))
        .map(|n| format!("consumer/{n}"))
        .collect();
    Some(Op {
        name: "expire-consumers",
        settings: json!({ "expiration_ms": 86_400_000 }),
        cli: vec![
            "expire-consumers".to_owned(),
            "--expiration-time=86400000 ms".to_owned(),
        ],
        age,
        cutoff_ms: None,
    })
}

/// Partition expiry by update time (each partition's last file creation time), the cut-off in
/// a gap of at least 1.5 s between two partitions' times (so that the moments at which Java and
/// our CLI start do not matter), or after all, or before all.
fn expire_partitions_op(times: &Value, rng: &mut Rng) -> Option<Op> {
    let mut ts: Vec<i64> = times["partitions"]
        .as_array()?
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    if ts.is_empty() {
        return None;
    }
    ts.sort();
    let gaps: Vec<i64> = ts
        .windows(2)
        .filter(|w| w[1] - w[0] > 1_500)
        .map(|w| w[0] + 1)
        .collect();
    let cut = match rng.below(4) {
        0 => ts[ts.len() - 1] + 1,
        1 => ts[0] - 1_000,
        _ if !gaps.is_empty() => gaps[rng.below(gaps.len() as u64) as usize],
        _ => ts[ts.len() - 1] + 1,
    };
    Some(Op {
        name: "expire-partitions",
        settings: json!({ "cutoff_ms": cut }),
        cli: vec![
            "expire-partitions".to_owned(),
            "--strategy=update-time".to_owned(),
        ],
        age: Vec::new(),
        cutoff_ms: Some(cut),
    })
}

/// Files no snapshot references, planted identically in both copies before orphan removal: a
/// data file and a changelog file in a bucket directory, a manifest, a file at a partition
/// level, a snapshot writer's temp file and an empty bucket directory.
fn plant_orphans(table: &Path) {
    let mut bucket = None;
    let mut stack = vec![table.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir()
                && !matches!(
                    name.as_str(),
                    "snapshot" | "manifest" | "schema" | "tag" | "branch" | "changelog"
                )
            {
                if name.starts_with("bucket-") && bucket.is_none() {
                    bucket = Some(p.clone());
                }
                stack.push(p);
            }
        }
    }
    if let Some(b) = bucket {
        std::fs::write(b.join("data-00000000-orphan-0.parquet"), b"orphan").unwrap();
        std::fs::write(b.join("changelog-00000000-orphan-0.parquet"), b"orphan").unwrap();
        std::fs::write(b.parent().unwrap().join("stray.txt"), b"orphan").unwrap();
    }
    std::fs::write(table.join("manifest/manifest-00000000-orphan-0"), b"orphan").unwrap();
    std::fs::write(table.join("snapshot/.snapshot-99.tmp"), b"orphan").unwrap();
    std::fs::create_dir_all(table.join("bucket-9")).unwrap();
}

/// Our CLI: `PAIMON_CLEANUP_BIN` (a frozen copy for a long run), else the one cargo built.
fn cli_bin() -> String {
    std::env::var("PAIMON_CLEANUP_BIN").unwrap_or_else(|_| common::cli_bin().to_owned())
}

/// Runs our CLI; returns the deleted file paths from its `--json` report.
fn run_ours(table: &Path, op: &Op) -> Result<BTreeSet<String>, String> {
    let mut extra = Vec::new();
    if let Some(cut) = op.cutoff_ms {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        extra.push(format!("--expiration-time={} ms", (now - cut).max(1)));
    }
    let out = Command::new(cli_bin())
        .arg(&op.cli[0])
        .arg(table)
        .args(&op.cli[1..])
        .args(&extra)
        .arg("--json")
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(format!(
            "{} {:?}: {}\n{}",
            op.name,
            op.cli,
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        ));
    }
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "report is not JSON: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    let mut paths = BTreeSet::new();
    collect_paths(&v, table, &mut paths);
    Ok(paths)
}

/// Every `{"class": .., "path": ..}` object of a report.
fn collect_paths(v: &Value, table: &Path, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let (Some(Value::String(p)), true) = (m.get("path"), m.contains_key("class")) {
                out.insert(rel(table, p));
            }
            for x in m.values() {
                collect_paths(x, table, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_paths(x, table, out)),
        _ => {}
    }
}

/// Java's deleted files (directories are compared apart: our report only counts them).
fn java_deleted(reply: &Value, table: &Path) -> (BTreeSet<String>, usize) {
    let mut files = BTreeSet::new();
    let mut dirs = 0;
    for d in reply["deleted"].as_array().unwrap() {
        if d["kind"] == json!("dir") {
            dirs += 1;
        } else {
            files.insert(rel(table, d["path"].as_str().unwrap()));
        }
    }
    (files, dirs)
}

struct Difference {
    path: String,
    /// "java-only" (Java deletes, we keep) or "ours-only".
    side: &'static str,
}

/// The reason of docs/java-differences.md that explains a difference, if any.
fn classify(d: &Difference, ctx: &Context) -> Option<&'static str> {
    // Java deleted a file we kept, and Java's own copy no longer reads a version of another
    // branch that it read before: Java forgot what that branch reads.
    if d.side == "java-only" && ctx.java_broke.iter().any(|k| !k.starts_with("main:")) {
        return Some("java-breaks-a-version");
    }
    // Long-lived changelogs (already on the table, or made by this expiry): we keep the base
    // and delta manifest lists and the data files of the snapshots they came from; Java deletes
    // them.
    // A time cut-off just after snapshot k: Java 1.4.2 expires k (its own time is older); we
    // keep it while its successor is younger, as Paimon 2.0's rule does (the version current
    // at the cut-off stays). Every file only k read differs with it.
    if d.side == "java-only" && ctx.one_more_by_time {
        return Some("time-cutoff-keeps-current-snapshot");
    }
    let name = d.path.rsplit('/').next().unwrap_or("");
    // Partition expiry commits: both write the Iceberg metadata of the new snapshot and delete
    // its base and the expired Iceberg snapshots' files; Java 1.4.2 also deletes older metadata
    // versions a killed writer left behind (a stale `v<N>.metadata.json`), which we keep.
    if d.side == "java-only" && ctx.commits && d.path.starts_with("metadata/") {
        return Some("iceberg-metadata-at-java-commit");
    }
    // Changelog expiry, and snapshot expiry of a snapshot that does not become a long-lived
    // changelog: Java deletes every file an expired version's changelog manifest list adds,
    // and the list and its manifests, even where a tag of the same snapshot names that list;
    // we keep what a tag's changelog still reads.
    if d.side == "java-only" && ctx.tag_changelog.contains(name) {
        return Some("tag-keeps-its-changelog");
    }
    if d.side == "java-only"
        && ctx.changelogs
        && (name.starts_with("manifest-") || name.starts_with("data-"))
    {
        return Some("changelog-keeps-lists-and-data");
    }
    // Changelog expiry with changelog producer `none`: data files that only expired
    // changelogs still named (compacted away in snapshots that expired before) leave with
    // them on our side; Java leaves them for ever. Java's read of every retained version on
    // our copy (checked before this) shows no version needed them.
    if d.side == "ours-only" && ctx.op == "expire-changelogs" && name.starts_with("data-") {
        return Some("changelog-expiry-deletes-compacted-data");
    }
    None
}

/// What a classification may look at.
struct Context {
    /// Versions (branch:kind:id) Java's read found broken on Java's own copy after its run.
    java_broke: Vec<String>,
    /// Long-lived changelogs exist before the operation, or the operation makes them.
    changelogs: bool,
    /// The operation commits a snapshot (partition expiry).
    commits: bool,
    /// The operation's name.
    op: &'static str,
    /// For changelog and snapshot expiry, the names a tag's changelog reads: each tag's
    /// changelog manifest list, its manifests and the changelog files they add (empty for other
    /// operations).
    tag_changelog: BTreeSet<String>,
    /// With a time cut-off, Java expired exactly one snapshot more than we did: the next one,
    /// older than the cut-off.
    one_more_by_time: bool,
}

/// The file names the changelogs of `table`'s tags (main's and every branch's) read: each
/// tag's changelog manifest list, the manifests it names and the files those add, read with
/// the library's own reader (branches share the table's manifest and data directories).
fn tag_changelog_names(table: &Path) -> BTreeSet<String> {
    let mut tag_dirs = vec![table.join("tag")];
    if let Ok(rd) = std::fs::read_dir(table.join("branch")) {
        tag_dirs.extend(rd.flatten().map(|e| e.path().join("tag")));
    }
    let mut lists = BTreeSet::new();
    for dir in tag_dirs {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten() {
            if !e.path().is_file() {
                continue;
            }
            let Ok(v) = serde_json::from_slice::<Value>(&std::fs::read(e.path()).unwrap()) else {
                continue;
            };
            if let Some(l) = v["changelogManifestList"].as_str() {
                lists.insert(l.to_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    if lists.is_empty() {
        return out;
    }
    let rt = common::rt();
    let storage = std::sync::Arc::new(
        paimon_cleanup::storage::Storage::open(
            table.to_str().unwrap(),
            &std::collections::HashMap::new(),
        )
        .unwrap(),
    );
    let t = rt
        .block_on(paimon_cleanup::table::Table::open(
            storage,
            &std::collections::HashMap::new(),
        ))
        .unwrap();
    // A list or manifest that cannot be read names nothing: it classifies no difference.
    for l in lists {
        let Ok(manifests) = rt.block_on(t.reader().manifest_list(t.paths(), &l)) else {
            continue;
        };
        out.insert(l);
        for m in manifests {
            if let Ok(entries) = rt.block_on(t.reader().manifest(t.paths(), &m.file_name)) {
                out.extend(entries.into_iter().map(|e| e.file.file_name));
            }
            out.insert(m.file_name);
        }
    }
    out
}

/// Whether Java's extra expired snapshots are exactly the one after our last, and it is older
/// than the operation's time cut-off.
fn one_more_by_time(
    op: &Op,
    base: &Path,
    jset: &BTreeSet<String>,
    oset: &BTreeSet<String>,
) -> bool {
    let Some(cut) = op.settings.get("older_than_ms").and_then(Value::as_i64) else {
        return false;
    };
    let snaps = |set: &BTreeSet<String>| -> BTreeSet<i64> {
        set.iter()
            .filter_map(|p| p.strip_prefix("snapshot/snapshot-")?.parse().ok())
            .collect()
    };
    let (j, o) = (snaps(jset), snaps(oset));
    let extra: Vec<i64> = j.difference(&o).copied().collect();
    let next = o.iter().max().map_or(1, |m| m + 1);
    extra == [next]
        && o.difference(&j).next().is_none()
        && versions(&base.join("snapshot"), "snapshot")
            .iter()
            .any(|&(id, time)| id == next && time < cut)
}

/// What a run of seeds found.
#[derive(Default)]
struct Outcome {
    failures: Vec<String>,
    classified: BTreeMap<&'static str, usize>,
    runs: usize,
    /// Operations run, per operation name.
    per_op: BTreeMap<&'static str, usize>,
    /// Where the time went: seconds per phase (Java writing, Java reading, Java's operation,
    /// our CLI, copies, Java's commit after us).
    phases: BTreeMap<&'static str, f64>,
}

/// Runs `f`, adding its time to `phase` in `phases`.
fn timed<T>(
    phases: &mut BTreeMap<&'static str, f64>,
    phase: &'static str,
    f: impl FnOnce() -> T,
) -> T {
    let t = Instant::now();
    let r = f();
    *phases.entry(phase).or_default() += t.elapsed().as_secs_f64();
    r
}

/// The harness class path, or None (a skip, or a panic with `PAIMON_REQUIRE_JAVA=1`).
fn harness() -> Option<String> {
    let cp = classpath();
    if cp.is_none() {
        if std::env::var("PAIMON_REQUIRE_JAVA").as_deref() == Ok("1") {
            panic!("PAIMON_REQUIRE_JAVA=1 but the Java harness is not built");
        }
        common::skip(
            "Java reference harness not built",
            "run scripts/setup-java-reference.sh",
        );
    }
    cp
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

/// The pyiceberg interpreter (`PAIMON_ICEBERG_PYTHON`, else the venv scripts/setup-pyiceberg.sh
/// makes), or None: the Iceberg reads are then skipped, and the run says so.
fn iceberg_python() -> Option<String> {
    if let Ok(p) = std::env::var("PAIMON_ICEBERG_PYTHON") {
        return Some(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-iceberg/bin/python");
    p.exists().then(|| p.to_string_lossy().into_owned())
}

/// pyiceberg's read of the latest Iceberg metadata of `table`: `{rows, hash, version}` or
/// `{error}`.
fn iceberg_read(python: &str, table: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java-reference/iceberg_read.py");
    let out = Command::new(python)
        .arg(script)
        .arg(table)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        json!({"error": format!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))})
    })
}

/// pyiceberg's read of our copy `o`: the Iceberg metadata names files by the absolute paths
/// of the table it was written in (`base`), so `o` takes `base`'s place for the read.
fn iceberg_read_in_place(python: &str, base: &Path, o: &Path) -> Value {
    let keep = base.with_extension("keep");
    std::fs::rename(base, &keep).unwrap();
    std::fs::rename(o, base).unwrap();
    let v = iceberg_read(python, base);
    std::fs::rename(base, o).unwrap();
    std::fs::rename(&keep, base).unwrap();
    v
}

/// `PAIMON_JAVA_OPS=a,b`: run only these operations (all by default).
fn only_ops() -> Option<Vec<String>> {
    std::env::var("PAIMON_JAVA_OPS")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
}

/// `PAIMON_JAVA_FULL_READ=1`: Java reads the rows of every version in full, instead of reusing
/// the digest of an identical plan (same data and deletion files, all on disk with their sizes)
/// that it already read in full for the same seed.
fn full_read() -> bool {
    std::env::var("PAIMON_JAVA_FULL_READ").as_deref() == Ok("1")
}

/// `PAIMON_JAVA_RESULTS=<file>`: one JSON line per seed-operation (and one per seed) is
/// appended there as it finishes, so that a long run cut short keeps what it covered
/// (`tests/java-reference/long_run_summary.py` totals such files).
fn results_file() -> Option<PathBuf> {
    std::env::var_os("PAIMON_JAVA_RESULTS").map(PathBuf::from)
}

/// Appends `v` as one line to `path`.
fn append_result(path: &Path, v: &Value) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    writeln!(f, "{v}").unwrap();
}

/// Whether the copies stay on disk after each operation (`PAIMON_JAVA_KEEP`).
fn keep_copies() -> bool {
    std::env::var_os("PAIMON_JAVA_KEEP").is_some()
}

fn env_num(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// Panics with every failure of `outcome` and the tail of the Java log.
fn report(outcome: &Outcome, log: &Path) {
    if outcome.failures.is_empty() {
        return;
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n");
    panic!(
        "{} failures:\n{}\n(Java log, last lines:\n{tail})",
        outcome.failures.len(),
        outcome.failures.join("\n")
    );
}

#[test]
fn java_differential() {
    let Some(cp) = harness() else {
        return;
    };
    let seeds = env_num("PAIMON_JAVA_SEEDS", 30);
    let first = env_num("PAIMON_JAVA_FIRST_SEED", 1);
    let size = env_num("PAIMON_JAVA_SIZE", 30);
    // Which histories end with Java's decoupled changelog expiry: `none-only` (changelog
    // producer none) by default, `all` also for input/lookup/full-compaction tables.
    let decoupled = std::env::var("PAIMON_JAVA_DECOUPLED").unwrap_or_else(|_| "none-only".into());
    // `PAIMON_JAVA_KEEP=<dir>`: work there and keep every copy (to look at a difference).
    let keep = std::env::var_os("PAIMON_JAVA_KEEP").map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let work = keep.clone().unwrap_or_else(|| tmp.path().to_owned());
    std::fs::create_dir_all(&work).unwrap();
    let log = work.join("java.log");
    let started = Instant::now();
    let mut jvm = Jvm::start(&cp, &log);
    let outcome = run_seeds(
        &mut jvm,
        &work,
        first..first + seeds,
        size,
        &decoupled,
        true,
    );
    eprintln!(
        "java_differential: seeds {first}..{}, {} operations {:?} in {:.1}s (phases {:?}); classified differences: {:?}",
        first + seeds,
        outcome.runs,
        outcome.per_op,
        started.elapsed().as_secs_f64(),
        outcome.phases,
        outcome.classified
    );
    report(&outcome, &log);
}

/// A table whose Java expiry left long-lived changelogs of a `lookup` changelog producer, some
/// without a changelog manifest list: Java deletes the base and delta manifest lists of such
/// changelogs (no reader needs them); every operation of ours must still run, and changelog
/// expiry reports none of those absent lists. It also has a tag of a snapshot whose changelog
/// expires: Java deletes that tag's changelog files, we keep them (`tag-keeps-its-changelog`).
#[test]
fn java_decoupled_lookup_changelogs() {
    let Some(cp) = harness() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("java.log");
    let mut jvm = Jvm::start(&cp, &log);
    // The history as written before automatic tags, statistics, Iceberg metadata and tag
    // retention were drawn (`extras` off): the one that shows these differences.
    let outcome = run_seeds(&mut jvm, work.path(), 3..4, 25, "all", false);
    report(&outcome, &log);
    assert!(
        outcome.classified.contains_key("tag-keeps-its-changelog"),
        "seed 3 no longer shows a tag's changelog: {:?}",
        outcome.classified
    );
}

/// Writes one history per seed, then runs every operation on both sides and compares.
fn run_seeds(
    jvm: &mut Jvm,
    work: &Path,
    seeds: std::ops::Range<u64>,
    size: u64,
    decoupled: &str,
    extras: bool,
) -> Outcome {
    jvm.call(json!({"cmd": "ping"})).expect("harness answers");
    let mut out = Outcome::default();
    let failures = &mut out.failures;
    let classified = &mut out.classified;
    let per_op = &mut out.per_op;
    let ph = &mut out.phases;
    for seed in seeds {
        let failures_before = failures.len();
        let seed_started = Instant::now();
        let dir = work.join(format!("seed-{seed}"));
        std::fs::create_dir_all(&dir).unwrap();
        // Tables sit in a warehouse layout (`<db>.db/<table>`): Iceberg-compatible metadata
        // stored at the table location is only allowed there.
        let base = dir.join("base.db").join("t");
        std::fs::create_dir_all(base.parent().unwrap()).unwrap();
        let w = match timed(ph, "java-write", || {
            jvm.call(json!({"cmd": "write", "seed": seed, "dir": base, "size": size, "decoupled": decoupled, "extras": extras}))
        }) {
            Ok(w) => w,
            Err(e) => {
                failures.push(format!("seed {seed}: Java write failed: {e}"));
                if let Some(path) = results_file() {
                    append_result(
                        &path,
                        &json!({"kind": "seed", "seed": seed, "size": size, "decoupled": decoupled, "error": e, "failures": 1}),
                    );
                }
                continue;
            }
        };
        eprintln!("seed {seed}: {} {}", w["shape"], w["stats"]);
        // A history whose steps mostly failed tests nothing: say so.
        let failed = w["stats"]["failed"].as_u64().unwrap_or(0);
        if failed * 4 > size {
            failures.push(format!(
                "seed {seed}: {failed} of {size} write steps failed: {}",
                w["notes"]
            ));
        }
        let before = timed(ph, "java-read", || {
            jvm.call(json!({"cmd": "read", "dir": base, "full": full_read()}))
        })
        .unwrap();
        let before = before["versions"].as_object().unwrap().clone();
        for (k, v) in &before {
            if v.get("error").is_some() {
                failures.push(format!("seed {seed}: Java cannot read its own {k}: {v}"));
            }
        }
        // Iceberg-compatible seeds: what pyiceberg reads before any operation.
        let ice_python = if w["shape"]["iceberg"] == json!(true) {
            let p = iceberg_python();
            if p.is_none() {
                eprintln!("seed {seed}: Iceberg-compatible, pyiceberg not set up (scripts/setup-pyiceberg.sh): not read");
            }
            p
        } else {
            None
        };
        // Every operation copies this untouched copy of the written table, not `base`: an
        // Iceberg-compatible table's metadata names its files by `base`'s absolute paths, so
        // Java's commit on its own copy expires Iceberg metadata files inside `base` itself.
        let pristine = dir.join("pristine.db").join("t");
        std::fs::create_dir_all(pristine.parent().unwrap()).unwrap();
        copy_tree(&base, &pristine);
        let ice_before = ice_python.as_ref().map(|py| iceberg_read(py, &base));
        if let Some(b) = &ice_before {
            eprintln!("seed {seed}: pyiceberg reads {b}");
            if b.get("error").is_some() {
                *classified
                    .entry("pyiceberg-cannot-read-java-output")
                    .or_default() += 1;
            }
        }
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let times = jvm
            .call(json!({"cmd": "times", "dir": base}))
            .unwrap_or_else(|e| panic!("seed {seed}: times: {e}"));
        // The later operations draw from their own generator, so the first four keep the
        // settings they had.
        let mut rng2 = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5151);
        let ops: Vec<Op> = [
            Some(expire_snapshots_op(&base, &mut rng)),
            Some(expire_changelogs_op(&base, &mut rng)),
            delete_tag_op(&base, &mut rng),
            Some(orphans_op()),
            expire_tags_op(&base, &times, &mut rng2),
            expire_consumers_op(&base, &mut rng2),
            expire_partitions_op(&times, &mut rng2),
        ]
        .into_iter()
        .flatten()
        .filter(|op| only_ops().is_none_or(|o| o.iter().any(|n| n == op.name)))
        .collect();
        for op in ops {
            out.runs += 1;
            *per_op.entry(op.name).or_default() += 1;
            let op_started = Instant::now();
            let op_failures_at = failures.len();
            let classified_at = classified.clone();
            let mut rows_lost = 0usize;
            let tag = format!("seed {seed} {} {}", op.name, op.settings);
            let j = dir.join(format!("{}-java.db", op.name)).join("t");
            let o = dir.join(format!("{}-ours.db", op.name)).join("t");
            'op: {
                std::fs::create_dir_all(j.parent().unwrap()).unwrap();
                std::fs::create_dir_all(o.parent().unwrap()).unwrap();
                timed(ph, "copies", || {
                    copy_tree(&pristine, &j);
                    if op.name == "remove-orphan-files" {
                        plant_orphans(&j);
                        age_tree(&j, 3 * 86_400);
                    }
                    let two_days_ago = SystemTime::now() - Duration::from_secs(2 * 86_400);
                    for f in &op.age {
                        std::fs::File::options()
                            .read(true)
                            .open(j.join(f))
                            .and_then(|f| f.set_modified(two_days_ago))
                            .unwrap_or_else(|e| panic!("age {f}: {e}"));
                    }
                    copy_tree(&j, &o);
                });
                let java = match timed(ph, "java-op", || {
                    jvm.call(
                        json!({"cmd": "clean", "dir": j, "op": op.name, "settings": op.settings}),
                    )
                }) {
                    Ok(r) => r,
                    Err(e) => {
                        failures.push(format!("{tag}: Java's operation failed: {e}"));
                        break 'op;
                    }
                };
                let (jset, _jdirs) = java_deleted(&java, &j);
                let pre = files_under(&o);
                let oset = match timed(ph, "our-cli", || run_ours(&o, &op)) {
                    Ok(s) => s,
                    Err(e) => {
                        failures.push(format!("{tag}: our CLI failed: {e}"));
                        break 'op;
                    }
                };
                // Our report lists exactly the files that left the disk.
                let left = files_under(&o);
                let removed: BTreeSet<String> = pre.difference(&left).cloned().collect();
                if removed != oset {
                    failures.push(format!(
                        "{tag}: our report lists {:?} but removed {:?}",
                        oset.difference(&removed).collect::<Vec<_>>(),
                        removed.difference(&oset).collect::<Vec<_>>()
                    ));
                }
                // (a) Java reads every version left on our copy: rows as before.
                let after = timed(ph, "java-read", || {
                    jvm.call(json!({"cmd": "read", "dir": o, "full": full_read()}))
                })
                .unwrap();
                // An operation that commits (partition expiry) adds versions: each must read what
                // the version Java's operation added reads.
                let commits = op.name == "expire-partitions";
                let java_after = if commits {
                    timed(ph, "java-read", || {
                        jvm.call(json!({"cmd": "read", "dir": j, "full": full_read()}))
                    })
                    .ok()
                } else {
                    None
                };
                for (k, v) in after["versions"].as_object().unwrap() {
                    match before.get(k) {
                        Some(b) if b == v => {}
                        Some(b) => {
                            rows_lost += 1;
                            failures.push(format!("{tag}: {k} reads {v} after our run, {b} before"))
                        }
                        None if commits => {
                            let theirs = java_after.as_ref().map(|a| &a["versions"][k]);
                            if theirs != Some(v) {
                                failures.push(format!(
                                    "{tag}: our new {k} reads {v}, Java's new one {theirs:?}"
                                ));
                            }
                        }
                        None => failures.push(format!("{tag}: {k} appeared after our run: {v}")),
                    }
                }
                if let Some(a) = &java_after {
                    for k in a["versions"].as_object().unwrap().keys() {
                        if !before.contains_key(k) && after["versions"].get(k).is_none() {
                            failures
                                .push(format!("{tag}: Java's operation added {k}, ours did not"));
                        }
                    }
                }
                // pyiceberg reads our copy's latest Iceberg metadata: the rows it read before.
                // (When we deleted nothing, the copy is the table pyiceberg already read.) After
                // a commit (partition expiry) our Iceberg metadata names the new snapshot: read
                // in our copy's own place (its new files are named by that place, the older ones
                // and the data by `base`'s), it must hold the rows Paimon's new snapshot reads on
                // an append table (a primary-key table's Iceberg view has only its compacted
                // files: no more rows than before). Java 1.4.2's own metadata is no reference
                // here: its partition expiry's Iceberg snapshot is an APPEND that keeps the
                // dropped rows (and sometimes adds them twice).
                if let (Some(py), Some(b)) = (&ice_python, &ice_before) {
                    if b.get("error").is_none() && commits {
                        let a = timed(ph, "pyiceberg", || iceberg_read(py, &o));
                        let latest = after["versions"]
                            .as_object()
                            .unwrap()
                            .keys()
                            .filter_map(|k| k.strip_prefix("main:snapshot:")?.parse::<i64>().ok())
                            .max();
                        let paimon = latest
                            .map(|id| &after["versions"][format!("main:snapshot:{id}")]["rows"]);
                        let ok = if a.get("error").is_some() {
                            false
                        } else if w["shape"]["pk"] == json!(true) {
                            a["rows"].as_i64() <= b["rows"].as_i64()
                        } else {
                            Some(&a["rows"]) == paimon
                        };
                        if !ok {
                            failures.push(format!(
                                "{tag}: pyiceberg reads {a} after our run; Paimon's latest \
                                 snapshot {latest:?} reads {paimon:?} rows, pyiceberg read {b} before"
                            ));
                        }
                    } else if b.get("error").is_none() && !oset.is_empty() {
                        let a = timed(ph, "pyiceberg", || iceberg_read_in_place(py, &base, &o));
                        if a != *b {
                            failures.push(format!(
                                "{tag}: pyiceberg reads {a} after our run, {b} before"
                            ));
                        }
                    }
                }
                // Java's own copy, to tell where Java broke a version: read only when Java deleted
                // a file we kept (the only difference this classifies).
                let java_broke: Vec<String> = if jset.difference(&oset).next().is_some() {
                    let jafter = timed(ph, "java-read", || {
                        jvm.call(json!({"cmd": "read", "dir": j, "full": full_read()}))
                    })
                    .unwrap();
                    jafter["versions"]
                        .as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
                        .map(|(k, _)| k.clone())
                        .collect()
                } else {
                    Vec::new()
                };
                // (b) the deleted sets.
                let ctx = Context {
                    java_broke,
                    changelogs: !versions(&base.join("changelog"), "changelog").is_empty()
                        || op.settings.get("changelog_retain_max").is_some(),
                    one_more_by_time: one_more_by_time(&op, &base, &jset, &oset),
                    commits,
                    op: op.name,
                    tag_changelog: if op.name == "expire-changelogs"
                        || op.name == "expire-snapshots"
                    {
                        tag_changelog_names(&base)
                    } else {
                        BTreeSet::new()
                    },
                };
                let diffs = jset
                    .difference(&oset)
                    .map(|p| Difference {
                        path: p.clone(),
                        side: "java-only",
                    })
                    .chain(oset.difference(&jset).map(|p| Difference {
                        path: p.clone(),
                        side: "ours-only",
                    }));
                let mut unclassified = 0;
                for d in diffs {
                    match classify(&d, &ctx) {
                        Some(reason) => {
                            // Where Java is wrong, say where: the seed is the README's example.
                            if reason == "java-breaks-a-version" {
                                eprintln!(
                                "NOTE {tag}: Java deleted {} that we keep; Java's copy no longer reads {:?}",
                                d.path, ctx.java_broke
                            );
                            }
                            *classified.entry(reason).or_default() += 1
                        }
                        None => {
                            unclassified += 1;
                            failures.push(format!(
                                "{tag}: unclassified difference {} {} (Java broke: {:?})",
                                d.side, d.path, ctx.java_broke
                            ))
                        }
                    }
                }
                if unclassified > 0 {
                    let meta = |set: &BTreeSet<String>| -> Vec<String> {
                        set.iter()
                            .filter(|p| {
                                p.starts_with("snapshot/")
                                    || p.starts_with("changelog/")
                                    || p.starts_with("tag/")
                                    || p.starts_with("branch/")
                            })
                            .cloned()
                            .collect()
                    };
                    failures.push(format!(
                        "{tag}: version files deleted by Java {:?}, by us {:?}",
                        meta(&jset),
                        meta(&oset)
                    ));
                }
                // (c) Java commits and expires on our copy.
                if let Err(e) = timed(ph, "java-commit", || {
                    jvm.call(json!({"cmd": "commit-and-expire", "dir": o, "seed": seed}))
                }) {
                    // Java failing the same way on its own copy is Java's state, not ours.
                    let theirs =
                        jvm.call(json!({"cmd": "commit-and-expire", "dir": j, "seed": seed}));
                    match theirs {
                    Err(t) if first_line(&t) == first_line(&e).replace("-ours.db/", "-java.db/") => {
                        *classified.entry("java-cannot-commit-on-its-own-copy").or_default() += 1;
                    }
                    _ => failures.push(format!(
                        "{tag}: Java cannot commit and expire after our run (it can on its own copy): {e}"
                    )),
                }
                }
            }
            if let Some(path) = results_file() {
                let by_reason: BTreeMap<&str, usize> = classified
                    .iter()
                    .map(|(k, n)| (*k, n - classified_at.get(k).copied().unwrap_or(0)))
                    .filter(|(_, n)| *n > 0)
                    .collect();
                let op_failures = &failures[op_failures_at..];
                append_result(
                    &path,
                    &json!({
                        "kind": "operation",
                        "seed": seed,
                        "size": size,
                        "decoupled": decoupled,
                        "op": op.name,
                        "settings": op.settings,
                        "classified": by_reason,
                        "unclassified": op_failures.iter().filter(|f| f.contains("unclassified difference")).count(),
                        "rows_lost": rows_lost,
                        "failures": op_failures,
                        "seconds": op_started.elapsed().as_secs_f64(),
                    }),
                );
            }
            if !keep_copies() {
                let _ = std::fs::remove_dir_all(&j);
                let _ = std::fs::remove_dir_all(&o);
            }
        }
        if !keep_copies() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        if let Some(path) = results_file() {
            append_result(
                &path,
                &json!({
                    "kind": "seed",
                    "seed": seed,
                    "size": size,
                    "decoupled": decoupled,
                    "shape": w["shape"],
                    "stats": w["stats"],
                    "failures": failures.len() - failures_before,
                    "seconds": seed_started.elapsed().as_secs_f64(),
                }),
            );
        }
        // Progress, so that a long run cut short still says what it covered.
        for f in &failures[failures_before..] {
            eprintln!("FAILURE {f}");
        }
        eprintln!(
            "seed {seed} done: {} operations {:?}, {} failures, classified {:?}, time {:?}",
            out.runs,
            per_op,
            failures.len(),
            classified,
            ph.iter()
                .map(|(k, v)| (*k, v.round() as u64))
                .collect::<BTreeMap<_, _>>()
        );
    }
    out
}
