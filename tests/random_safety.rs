//! Randomized, seed-reproducible safety test (issue 8 item 4).
//!
//! For each seed, `tests/py/random_history.py` writes a small pypaimon table with a random
//! history (appends, overwrites, partition drops, tags, a branch with its own commits,
//! consumers, rollbacks that leave orphans, crashed writes, stray files), every file two days
//! old. pypaimon records a row digest of every version (snapshots, tags, branch versions).
//! Then a random cleanup sequence from the same seed runs against the table: snapshot expiry
//! (random retain / limit, main or branch), changelog expiry, tag deletion and expiry, consumer
//! expiry, orphan removal with an old cut-off, partition drops, `maintain` (snapshot expiry
//! sometimes decoupled: expired snapshots become long-lived changelogs). Before each attempt of
//! a step a dry run must change nothing; it counts the deletions, and the attempt may crash
//! after a random number of them (`RunControl::fail_after_deletes`, up to twice); then the step
//! is rerun to completion, or, one time in five, left unfinished while the sequence goes on
//! (the versions it was removing may then stay half-deleted, by design of the crash-safe order;
//! later steps may refuse to run because of them, which is safe and counted, but only when the
//! refusal blames such a version or no version). After the sequence:
//!
//! * every version that still exists reads exactly the same rows, files, changelog files and
//!   deletion vectors in pypaimon as before (pypaimon errors mean a missing file), and every
//!   new version (a drop's OVERWRITE snapshot) reads;
//! * no file the remaining metadata references (snapshots, tags, long-lived changelogs, all
//!   branches; fastavro only) is missing;
//! * nothing outside the table directory changed (look-alike siblings written by the script);
//! * versions disappear only through the steps that may remove them: main snapshots only by
//!   expiry (and then the remaining ones are a contiguous suffix ending at the latest), tags
//!   only by tag deletion / expiry, branch latest never.
//!
//! Environment:
//! * default (fast mode): seeds 0..=199, two jobs, 100 seeds per pypaimon process (about 1 to
//!   2 minutes on 2 cores).
//! * long mode: `PAIMON_SAFETY_SEEDS=N` runs N seeds from `PAIMON_SAFETY_FIRST_SEED` (default
//!   0); `PAIMON_SAFETY_MINUTES=M` stops starting new batches after M minutes (alone: as many
//!   seeds as fit). 50 seeds per pypaimon process, a line per batch.
//!   e.g. `PAIMON_SAFETY_FIRST_SEED=200 PAIMON_SAFETY_MINUTES=20 PAIMON_SAFETY_JOBS=1 nice
//!   cargo test --test random_safety -- --nocapture`
//! * `PAIMON_SAFETY_SEED=S` runs only seed S and prints its history and every step;
//!   `PAIMON_SAFETY_JOBS=J` parallel batches (default 2); `PAIMON_SAFETY_BATCH=B` seeds per
//!   pypaimon process; `PAIMON_SAFETY_KEEP=1` keeps every warehouse (a failing batch's is
//!   always kept and its path printed).
//!
//! Prints the seed range and "N passed, M failed"; each failure names its seed.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use paimon_cleanup::clean::{
    delete_tags, drop_partitions, expire_changelogs, expire_consumers, expire_snapshots,
    expire_tags, maintain, remove_orphan_files, ChangelogExpireConfig, ExpireConfig,
    MaintainConfig, OrphanConfig, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

const DAY_MS: i64 = 86_400_000;

// ---------------------------------------------------------------------------------------------
// A small seeded generator (splitmix64): reproducible without extra dependencies.

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(0x5eed))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in a..=b.
    fn range(&mut self, a: i64, b: i64) -> i64 {
        a + self.below((b - a + 1) as u64) as i64
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------------------------------------
// The cleanup steps.

#[derive(Debug, Clone)]
enum Op {
    Expire {
        retain_min: i64,
        retain_max: Option<i64>,
        limit: i64,
        clean_empty_dirs: bool,
        /// Keep the expired snapshots as long-lived changelogs (`changelog.num-retained.min`
        /// above the snapshots' minimum: decoupled lifecycle).
        decoupled: bool,
    },
    ExpireChangelogs {
        retain_min: i64,
        limit: i64,
        delete_all: bool,
    },
    DeleteTags(Vec<String>),
    /// `older_than`: none (only tags whose retention passed), now (all), or now − 1 day.
    ExpireTags {
        older_than_days_ago: Option<i64>,
    },
    ExpireConsumers {
        expiration: Duration,
    },
    /// Cut-off `days` ago (files are two days old: 1 → candidates, 3 → none).
    Orphans {
        days: i64,
    },
    Drop(Vec<BTreeMap<String, String>>),
    Maintain(BTreeMap<String, String>),
}

#[derive(Debug, Clone)]
struct Step {
    op: Op,
    /// Branch the table is opened on (None = main).
    branch: Option<String>,
    /// Crash points as fractions of the dry run's deletion count (each in [0, 1)).
    crashes: Vec<f64>,
    /// Run the step to completion after the crashes (false only for a final step).
    rerun: bool,
}

impl Op {
    fn removes_main_snapshots(&self) -> bool {
        matches!(self, Op::Expire { .. } | Op::Maintain(_))
    }
    fn removes_tags(&self) -> bool {
        matches!(
            self,
            Op::DeleteTags(_) | Op::ExpireTags { .. } | Op::Maintain(_)
        )
    }
}

/// The random cleanup sequence of one seed, from the table's description.
fn plan_steps(seed: u64, info: &Value) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let changelog = info["changelog"].as_bool().unwrap();
    let branches: Vec<String> = info["branches"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let tags = strs(&info["tags"]);
    let partitions: Vec<BTreeMap<String, String>> = info["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .collect();
    let n = rng.range(2, 6) as usize;
    let mut steps = Vec::new();
    for _ in 0..n {
        let w: [(u8, u64); 8] = [
            (0, 30),
            (1, if changelog { 10 } else { 5 }),
            (2, 12),
            (3, 6),
            (4, 6),
            (5, 20),
            (6, if partitions.is_empty() { 0 } else { 8 }),
            (7, 14),
        ];
        let total: u64 = w.iter().map(|x| x.1).sum();
        let mut r = rng.below(total);
        let kind = w
            .iter()
            .find(|(_, wt)| {
                if r < *wt {
                    true
                } else {
                    r -= wt;
                    false
                }
            })
            .unwrap()
            .0;
        let on_branch = !branches.is_empty() && rng.chance(0.25);
        let mut branch = on_branch.then(|| branches[0].clone());
        let op = match kind {
            0 => {
                let retain_min = rng.range(1, 4);
                Op::Expire {
                    retain_min,
                    retain_max: rng.chance(0.3).then(|| retain_min + rng.range(0, 2)),
                    limit: rng.range(1, 10),
                    clean_empty_dirs: rng.chance(0.5),
                    decoupled: rng.chance(if changelog { 0.5 } else { 0.25 }),
                }
            }
            1 => Op::ExpireChangelogs {
                retain_min: rng.range(1, 3),
                limit: rng.range(1, 10),
                delete_all: rng.chance(0.2),
            },
            2 => {
                let pool: Vec<String> = match &branch {
                    Some(b) => strs(&info["branches"][b]["tags"]),
                    None => tags.clone(),
                };
                let mut names = Vec::new();
                for _ in 0..rng.range(1, 2) {
                    if pool.is_empty() || rng.chance(0.1) {
                        names.push("no-such-tag".to_string());
                    } else {
                        names.push(rng.pick(&pool).clone());
                    }
                }
                names.sort();
                names.dedup();
                Op::DeleteTags(names)
            }
            3 => Op::ExpireTags {
                older_than_days_ago: *rng.pick(&[None, Some(0), Some(1)]),
            },
            4 => {
                branch = None;
                Op::ExpireConsumers {
                    expiration: *rng
                        .pick(&[Duration::from_secs(3600), Duration::from_secs(3 * 86_400)]),
                }
            }
            5 => Op::Orphans {
                days: *rng.pick(&[1, 1, 1, 3]),
            },
            6 => {
                branch = None;
                let mut specs = Vec::new();
                for _ in 0..rng.range(1, 2) {
                    let mut s = rng.pick(&partitions).clone();
                    if s.len() > 1 && rng.chance(0.4) {
                        s.remove("hr");
                    }
                    specs.push(s);
                }
                Op::Drop(specs)
            }
            _ => {
                let mut o = BTreeMap::new();
                let min = rng.range(1, 4);
                o.insert("snapshot.num-retained.min".into(), min.to_string());
                o.insert("snapshot.time-retained".into(), "1 ms".into());
                o.insert("snapshot.expire.limit".into(), rng.range(1, 10).to_string());
                if rng.chance(0.5) {
                    o.insert(
                        "consumer.expiration-time".into(),
                        rng.pick(&["1 h", "3 d"]).to_string(),
                    );
                }
                if rng.chance(if changelog { 0.6 } else { 0.3 }) {
                    o.insert(
                        "changelog.num-retained.min".into(),
                        (min + rng.range(1, 4)).to_string(),
                    );
                    o.insert("changelog.time-retained".into(), "1 ms".into());
                }
                if rng.chance(0.2) {
                    o.insert("tag.time-expire-enabled".into(), "false".into());
                }
                Op::Maintain(o)
            }
        };
        let mut crashes = Vec::new();
        if rng.chance(0.5) {
            crashes.push(rng.below(1000) as f64 / 1000.0);
            if rng.chance(0.25) {
                crashes.push(rng.below(1000) as f64 / 1000.0);
            }
        }
        let rerun = crashes.is_empty() || !rng.chance(0.2);
        steps.push(Step {
            op,
            branch,
            crashes,
            rerun,
        });
    }
    steps
}

// ---------------------------------------------------------------------------------------------
// Running a step.

async fn open(table: &Path, branch: Option<&str>, o: &BTreeMap<String, String>) -> Table {
    let overrides: HashMap<String, String> =
        o.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    match branch {
        None => Table::open(storage, &overrides).await.unwrap(),
        Some(b) => Table::open_branch(storage, &overrides, b).await.unwrap(),
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Outcome of one run of a step: files deleted (or, dry, deletable), new main snapshots, and
/// the versions (live_files.py / `--missing` keys) it removes, which a crash may leave
/// half-deleted (their files partly gone, the version file still there): expiry deletes the
/// version files last, so that a rerun can finish the job (spec: crash-safe order).
struct Outcome {
    deleted: u64,
    new_snapshots: Vec<i64>,
    doomed: Vec<String>,
}

/// `[branch:<b>:]<kind>:<id>` for the ids `first..=last`.
fn version_keys(
    branch: Option<&str>,
    kind: &str,
    first: Option<i64>,
    last: Option<i64>,
) -> Vec<String> {
    let prefix = branch.map_or(String::new(), |b| format!("branch:{b}:"));
    match (first, last) {
        (Some(a), Some(b)) => (a..=b).map(|i| format!("{prefix}{kind}:{i}")).collect(),
        _ => Vec::new(),
    }
}

async fn run_op(
    table: &Path,
    step: &Step,
    dry_run: bool,
    ctl: &RunControl,
) -> paimon_cleanup::Result<Outcome> {
    let mut overrides = BTreeMap::new();
    match &step.op {
        Op::Maintain(o) => overrides = o.clone(),
        Op::Expire {
            retain_min,
            decoupled: true,
            ..
        } => {
            overrides.insert(
                "changelog.num-retained.min".to_string(),
                (retain_min + 20).to_string(),
            );
        }
        _ => {}
    }
    let t = open(table, step.branch.as_deref(), &overrides).await;
    let branch = step.branch.as_deref();
    let mut new_snapshots = Vec::new();
    let mut doomed = Vec::new();
    let deleted = match &step.op {
        Op::Expire {
            retain_min,
            retain_max,
            limit,
            clean_empty_dirs,
            ..
        } => {
            let cfg = ExpireConfig {
                retention: RetentionOverrides {
                    retain_min: Some(*retain_min),
                    retain_max: *retain_max,
                    time_retained: Some(Duration::ZERO),
                    limit: Some(*limit),
                    ..Default::default()
                },
                clean_empty_dirs: Some(*clean_empty_dirs),
                dry_run,
                ..Default::default()
            };
            let r = expire_snapshots(&t, &cfg, ctl).await?;
            doomed = version_keys(branch, "snapshot", r.first_expired, r.last_expired);
            r.deletion.total_files()
        }
        Op::ExpireChangelogs {
            retain_min,
            limit,
            delete_all,
        } => {
            let cfg = ChangelogExpireConfig {
                retention: RetentionOverrides {
                    retain_min: Some(*retain_min),
                    time_retained: Some(Duration::ZERO),
                    limit: Some(*limit),
                    ..Default::default()
                },
                delete_all: *delete_all,
                dry_run,
                ..Default::default()
            };
            let r = expire_changelogs(&t, &cfg, ctl).await?;
            doomed = version_keys(branch, "changelog", r.first_expired, r.last_expired);
            r.deletion.total_files()
        }
        Op::DeleteTags(names) => delete_tags(&t, names, dry_run, ctl)
            .await?
            .deletion
            .total_files(),
        Op::ExpireTags {
            older_than_days_ago,
        } => {
            let cut = older_than_days_ago.map(|d| now_ms() - d * DAY_MS);
            expire_tags(&t, cut, dry_run, ctl)
                .await?
                .deletion
                .total_files()
        }
        Op::ExpireConsumers { expiration } => expire_consumers(&t, Some(*expiration), dry_run, ctl)
            .await?
            .deletion
            .total_files(),
        Op::Orphans { days } => {
            let cfg = OrphanConfig {
                older_than_ms: Some(now_ms() - days * DAY_MS),
                dry_run,
                ..Default::default()
            };
            remove_orphan_files(&t, &cfg, ctl)
                .await?
                .deletion
                .total_files()
        }
        Op::Drop(specs) => {
            if dry_run {
                0
            } else {
                let r = drop_partitions(&t, specs, None, None, ctl).await?;
                new_snapshots = r.snapshot_ids;
                0
            }
        }
        Op::Maintain(_) => {
            let r = maintain(&t, &MaintainConfig { dry_run }, ctl).await?;
            if let Some(x) = &r.snapshots {
                doomed.extend(version_keys(
                    branch,
                    "snapshot",
                    x.first_expired,
                    x.last_expired,
                ));
            }
            if let Some(x) = &r.changelogs {
                doomed.extend(version_keys(
                    branch,
                    "changelog",
                    x.first_expired,
                    x.last_expired,
                ));
            }
            // A dry run of maintain does not see what its own earlier phases would do (tags
            // expired, changelogs written), so a real run's changelog phase may remove more:
            // every changelog up to the last snapshot it expires may be in flight.
            if let Some(last) = r.snapshots.as_ref().and_then(|x| x.last_expired) {
                doomed.extend(version_keys(branch, "changelog", Some(1), Some(last)));
            }
            [
                r.tags.map(|x| x.deletion.total_files()),
                r.consumers.map(|x| x.deletion.total_files()),
                r.snapshots.map(|x| x.deletion.total_files()),
                r.changelogs.map(|x| x.deletion.total_files()),
            ]
            .into_iter()
            .flatten()
            .sum()
        }
    };
    Ok(Outcome {
        deleted,
        new_snapshots,
        doomed,
    })
}

/// Every file under `dir` (relative path → (size, mtime)), skipping `skip` (a direct child).
fn tree_with_mtimes(dir: &Path, skip: Option<&str>) -> BTreeMap<String, (u64, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if d == dir && skip == Some(rel.as_str()) {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                let m = e.metadata().unwrap();
                out.insert(rel, (m.len(), m.modified().unwrap()));
            }
        }
    }
    out
}

fn diff_trees(
    a: &BTreeMap<String, (u64, SystemTime)>,
    b: &BTreeMap<String, (u64, SystemTime)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in a {
        match b.get(k) {
            None => out.push(format!("{k} removed")),
            Some(w) if w != v => out.push(format!("{k} changed")),
            _ => {}
        }
    }
    for k in b.keys() {
        if !a.contains_key(k) {
            out.push(format!("{k} added"));
        }
    }
    out
}

/// What running the sequence of one seed left to check, or the failure it already hit.
struct SeedRun {
    seed: u64,
    table: PathBuf,
    steps: Vec<Step>,
    log: Vec<String>,
    failures: Vec<String>,
    /// Latest main snapshot that must remain (the last drop's, else the generator's).
    latest: Option<i64>,
    main_expired: bool,
    tags_removed: bool,
    /// Versions a crashed step that was not rerun was removing: they may be half-deleted
    /// (files partly gone, version file still there), by design of the crash-safe order.
    half_deleted: BTreeSet<String>,
    /// Counters for the coverage summary.
    stats: BTreeMap<String, u64>,
}

impl SeedRun {
    /// True if version `key` may be half-deleted: it was in flight in a crashed step that was
    /// not rerun, or it is the long-lived changelog a later decoupled expiry made of such a
    /// snapshot (`changelog:N` from `snapshot:N`, same branch).
    fn may_be_half_deleted(&self, key: &str) -> bool {
        if self.half_deleted.contains(key) {
            return true;
        }
        match key.rsplit_once("changelog:") {
            Some((prefix, id)) => self
                .half_deleted
                .contains(&format!("{prefix}snapshot:{id}")),
            None => false,
        }
    }
}

/// The version an error blames ("... needed by snapshot 5 of branch main, which still
/// exists"), as a live_files.py / `--missing` key.
fn blamed_version(message: &str) -> Option<String> {
    let rest = &message[message.find("needed by ")? + "needed by ".len()..];
    let mut words = rest.split_whitespace();
    let (kind, id, of, _branch_word, branch) = (
        words.next()?,
        words.next()?,
        words.next()?,
        words.next()?,
        words.next()?,
    );
    if of != "of" || !matches!(kind, "snapshot" | "changelog" | "tag") {
        return None;
    }
    let branch = branch.trim_end_matches([',', ')', ';']);
    Some(if branch == "main" {
        format!("{kind}:{id}")
    } else {
        format!("branch:{branch}:{kind}:{id}")
    })
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Expire { .. } => "expire_snapshots",
        Op::ExpireChangelogs { .. } => "expire_changelogs",
        Op::DeleteTags(_) => "delete_tags",
        Op::ExpireTags { .. } => "expire_tags",
        Op::ExpireConsumers { .. } => "expire_consumers",
        Op::Orphans { .. } => "remove_orphan_files",
        Op::Drop(_) => "drop_partitions",
        Op::Maintain(_) => "maintain",
    }
}

fn run_sequence(rt: &tokio::runtime::Runtime, info: &Value, steps: Vec<Step>) -> SeedRun {
    let seed = info["seed"].as_u64().unwrap();
    let table = PathBuf::from(info["path"].as_str().unwrap());
    let mut run = SeedRun {
        seed,
        table: table.clone(),
        steps: steps.clone(),
        log: Vec::new(),
        failures: Vec::new(),
        latest: info["latest"].as_i64(),
        main_expired: false,
        tags_removed: false,
        half_deleted: BTreeSet::new(),
        stats: BTreeMap::new(),
    };
    let count = |run: &mut SeedRun, key: String, n: u64| {
        *run.stats.entry(key).or_default() += n;
    };
    for (i, step) in steps.iter().enumerate() {
        if step.branch.is_none() && step.op.removes_main_snapshots() {
            run.main_expired = true;
        }
        if step.branch.is_none() && step.op.removes_tags() {
            run.tags_removed = true;
        }
        let name = op_name(&step.op);
        count(&mut run, format!("steps: {name}"), 1);
        let tag = format!("step {i} {:?} on {:?}", step.op, step.branch);
        // After a crash that was not rerun, a step may refuse (an unreadable half-deleted
        // version); that is safe, and the final checks still cover every other version.
        let refused = |run: &mut SeedRun, what: &str, e: &paimon_cleanup::Error| -> bool {
            let blamed = blamed_version(&e.to_string());
            let excused = !run.half_deleted.is_empty()
                && blamed.as_ref().is_none_or(|k| run.may_be_half_deleted(k));
            if !excused {
                run.failures.push(format!("{tag}: {what} failed: {e}"));
                return false;
            }
            run.log.push(format!(
                "{tag}: {what} refused after an unfinished crash: {e}"
            ));
            *run.stats
                .entry(format!("refusals after an unfinished crash: {name}"))
                .or_default() += 1;
            true
        };
        // Before every attempt a dry run must change nothing; it counts the deletions (the
        // crash point is a fraction of them) and names the versions the attempt removes. A
        // rerun after a crash may remove more than the first plan (a crash after some
        // snapshot files went moves the window on), so each attempt is planned afresh.
        let mut in_flight: BTreeSet<String> = BTreeSet::new();
        let mut crashed = false;
        let mut refused_step = false;
        for attempt in 0..=step.crashes.len() {
            let before = tree_with_mtimes(&table, None);
            let (planned, doomed) =
                match rt.block_on(run_op(&table, step, true, &RunControl::default())) {
                    Ok(o) => (o.deleted, o.doomed),
                    // Right after a crash a dry run may fail where the rerun succeeds: a dry
                    // run of `maintain` does not carry out its snapshot phase, so its changelog
                    // phase still sees the half-deleted snapshots (and refuses, NotFound). The
                    // rerun itself is what must work.
                    Err(e) if crashed => {
                        count(
                            &mut run,
                            format!("dry runs refused after a crash: {name}"),
                            1,
                        );
                        run.log
                            .push(format!("{tag}: dry run after the crash refused: {e}"));
                        break;
                    }
                    Err(e) => {
                        if refused(&mut run, "dry run", &e) {
                            refused_step = true;
                            break;
                        }
                        return run;
                    }
                };
            let changed = diff_trees(&before, &tree_with_mtimes(&table, None));
            if !changed.is_empty() {
                run.failures
                    .push(format!("{tag}: the dry run changed files: {changed:?}"));
                return run;
            }
            run.log
                .push(format!("{tag}: dry run plans {planned} deletions"));
            let Some(frac) = step.crashes.get(attempt) else {
                break;
            };
            if planned == 0 {
                break;
            }
            let k = ((planned as f64) * frac) as u64;
            let ctl = RunControl {
                fail_after_deletes: Some(k),
                ..Default::default()
            };
            match rt.block_on(run_op(&table, step, false, &ctl)) {
                Ok(o) => {
                    crashed = false;
                    run.log.push(format!(
                        "{tag}: crash at {k} not reached ({} deleted)",
                        o.deleted
                    ))
                }
                Err(e) if e.to_string().contains("injected failure") => {
                    crashed = true;
                    in_flight.extend(doomed);
                    count(&mut run, format!("crashes: {name}"), 1);
                    run.log.push(format!("{tag}: crashed after {k} deletions"))
                }
                Err(e) => {
                    if refused(&mut run, &format!("run with a crash at {k}"), &e) {
                        refused_step = true;
                        break;
                    }
                    return run;
                }
            }
        }
        if refused_step {
            continue;
        }
        if crashed && !step.rerun {
            count(&mut run, "crashes not rerun".into(), 1);
            run.log.push(format!(
                "{tag}: not rerun; may be half-deleted: {in_flight:?}"
            ));
            run.half_deleted.extend(in_flight);
            continue;
        }
        match rt.block_on(run_op(&table, step, false, &RunControl::default())) {
            Ok(o) => {
                if let Some(&last) = o.new_snapshots.last() {
                    run.latest = Some(last);
                }
                count(&mut run, format!("files deleted: {name}"), o.deleted);
                run.log.push(format!(
                    "{tag}: run deleted {} files{}",
                    o.deleted,
                    if o.new_snapshots.is_empty() {
                        String::new()
                    } else {
                        format!(", committed {:?}", o.new_snapshots)
                    }
                ));
            }
            Err(e) => {
                if refused(&mut run, "run", &e) {
                    continue;
                }
                return run;
            }
        }
    }
    run
}

// ---------------------------------------------------------------------------------------------
// Checking.

const COMPARED: &[&str] = &[
    "row_digest",
    "row_count",
    "live_files",
    "deletion_vector_files",
    "changelog_files",
];

fn main_snapshot_id(key: &str) -> Option<i64> {
    key.strip_prefix("snapshot:").and_then(|s| s.parse().ok())
}

fn check_versions(
    run: &SeedRun,
    before: &serde_json::Map<String, Value>,
    after: &serde_json::Map<String, Value>,
) -> Vec<String> {
    let mut f = Vec::new();
    for (k, a) in after {
        if run.may_be_half_deleted(k) {
            continue;
        }
        if let Some(e) = a.get("error").or_else(|| a.get("changelog_error")) {
            f.push(format!("{k} unreadable after cleanup: {e}"));
            continue;
        }
        if let Some(b) = before.get(k) {
            for field in COMPARED {
                if a[*field] != b[*field] {
                    f.push(format!(
                        "{k}: {field} changed: before {} after {}",
                        b[*field], a[*field]
                    ));
                }
            }
        }
    }
    for k in before.keys() {
        if after.contains_key(k) {
            continue;
        }
        let allowed = if main_snapshot_id(k).is_some() {
            run.main_expired
        } else if k.starts_with("tag:") {
            run.tags_removed
        } else if let Some(rest) = k.strip_prefix("branch:") {
            // branch:<b>:snapshot:<id> by a branch expiry; branch:<b>:tag:<t> by a tag
            // step on the branch; branch:<b> (its latest) never.
            let parts: Vec<&str> = rest.split(':').collect();
            match parts.as_slice() {
                [b, "snapshot", _] => run.steps.iter().any(|s| {
                    s.branch.as_deref() == Some(*b)
                        && matches!(s.op, Op::Expire { .. } | Op::Maintain(_))
                }),
                [b, "tag", _] => run
                    .steps
                    .iter()
                    .any(|s| s.branch.as_deref() == Some(*b) && s.op.removes_tags()),
                _ => false,
            }
        } else {
            false
        };
        if !allowed {
            f.push(format!("{k} disappeared, and no step may remove it"));
        }
    }
    // The latest main snapshot remains, and the main snapshots left are a contiguous suffix.
    if let Some(latest) = run.latest {
        if !after.contains_key(&format!("snapshot:{latest}")) {
            f.push(format!("latest snapshot {latest} is gone"));
        }
        let mut ids: Vec<i64> = after.keys().filter_map(|k| main_snapshot_id(k)).collect();
        ids.sort();
        if let (Some(first), Some(last)) = (ids.first(), ids.last()) {
            if (last - first + 1) as usize != ids.len() || *last != latest {
                f.push(format!(
                    "main snapshots left are not {first}..={latest}: {ids:?}"
                ));
            }
        }
    }
    f
}

struct BatchResult {
    passed: Vec<u64>,
    failed: Vec<(u64, String)>,
    /// Coverage counters summed over the seeds.
    stats: BTreeMap<String, u64>,
    /// Seconds spent generating, digesting before, cleaning, digesting after, checking files.
    phases: [f64; 5],
}

fn strs_of(v: &Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or("?").to_string())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// Generate, digest, clean, digest again and check the seeds `first..=last` in one warehouse.
fn run_batch(first: u64, last: u64, verbose: bool, keep: bool) -> BatchResult {
    let py = common::python().unwrap();
    let wh = tempfile::Builder::new()
        .prefix("paimon-random-safety-")
        .tempdir()
        .unwrap();
    let seeds = format!("{first}..{last}");
    let mut result = BatchResult {
        passed: Vec::new(),
        failed: Vec::new(),
        stats: BTreeMap::new(),
        phases: [0.0; 5],
    };
    let fail_all = |why: String| BatchResult {
        passed: Vec::new(),
        failed: (first..=last).map(|s| (s, why.clone())).collect(),
        stats: BTreeMap::new(),
        phases: [0.0; 5],
    };
    let mut clock = Instant::now();
    let mut lap = |phases: &mut [f64; 5], i: usize| {
        phases[i] = clock.elapsed().as_secs_f64();
        clock = Instant::now();
    };
    let out = match common::run_py(
        &py,
        "random_history.py",
        &[wh.path().to_str().unwrap(), "--seeds", &seeds],
    ) {
        Ok(o) => o,
        Err(e) => return fail_all(format!("random_history.py --seeds {seeds} failed: {e}")),
    };
    let infos: Vec<Value> = serde_json::from_str(&out).unwrap();
    lap(&mut result.phases, 0);
    let tables: Vec<PathBuf> = infos
        .iter()
        .map(|i| PathBuf::from(i["path"].as_str().unwrap()))
        .collect();
    let table_refs: Vec<&Path> = tables.iter().map(PathBuf::as_path).collect();
    let before = common::all_versions_many(&table_refs);
    let outside_before: Vec<_> = tables
        .iter()
        .map(|t| tree_with_mtimes(t.parent().unwrap(), Some("t")))
        .collect();
    lap(&mut result.phases, 1);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut runs = Vec::new();
    for info in &infos {
        let seed = info["seed"].as_u64().unwrap();
        let steps = plan_steps(seed, info);
        if verbose {
            eprintln!(
                "seed {seed}: {} {:?} bucket {}{}; history: {}",
                info["kind"].as_str().unwrap(),
                info["partition_keys"],
                info["bucket"],
                if info["changelog"].as_bool().unwrap() {
                    " changelog"
                } else {
                    ""
                },
                strs_of(&info["ops"])
            );
        }
        runs.push(run_sequence(&rt, info, steps));
    }
    lap(&mut result.phases, 2);

    let after = common::all_versions_many(&table_refs);
    lap(&mut result.phases, 3);
    let missing: Value = serde_json::from_str(
        &common::run_py(
            &py,
            "random_history.py",
            &std::iter::once("--missing")
                .chain(tables.iter().map(|t| t.to_str().unwrap()))
                .collect::<Vec<_>>(),
        )
        .unwrap_or_else(|e| panic!("random_history.py --missing: {e}")),
    )
    .unwrap();
    lap(&mut result.phases, 4);

    let mut any_failed = false;
    for (i, run) in runs.iter().enumerate() {
        let t = &run.table;
        let mut f = run.failures.clone();
        let b = &before[t];
        let pre_errors: Vec<String> = b
            .iter()
            .filter(|(_, v)| v.get("error").is_some() || v.get("changelog_error").is_some())
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        if !pre_errors.is_empty() {
            f.push(format!(
                "generator: versions unreadable before cleanup: {pre_errors:?}"
            ));
        } else {
            f.extend(check_versions(run, b, &after[t]));
        }
        let m = &missing[t.to_str().unwrap()];
        if let Some(e) = m["error"].as_str() {
            f.push(format!("referenced metadata unreadable: {e}"));
        } else {
            for (k, files) in m["versions"].as_object().unwrap() {
                if !run.may_be_half_deleted(k) {
                    f.push(format!("{k} misses files it needs: {}", strs_of(files)));
                }
            }
        }
        let outside = diff_trees(
            &outside_before[i],
            &tree_with_mtimes(t.parent().unwrap(), Some("t")),
        );
        if !outside.is_empty() {
            f.push(format!("files outside the table changed: {outside:?}"));
        }
        if verbose || !f.is_empty() {
            for l in &run.log {
                eprintln!("  seed {}: {l}", run.seed);
            }
        }
        for (k, n) in &run.stats {
            *result.stats.entry(k.clone()).or_default() += n;
        }
        if f.is_empty() {
            result.passed.push(run.seed);
        } else {
            any_failed = true;
            let msg = format!(
                "{}\n    history: {}\n    steps: {:?}",
                f.join("\n    "),
                strs_of(&infos[i]["ops"]),
                run.steps
            );
            result.failed.push((run.seed, msg));
        }
    }
    if any_failed || keep {
        let kept = wh.keep();
        eprintln!(
            "random_safety: seeds {seeds}: warehouse kept at {}",
            kept.display()
        );
    }
    result
}

fn phase_text(p: &[f64; 5]) -> String {
    format!(
        "generate {:.1} s, pypaimon before {:.1} s, cleanup {:.1} s, pypaimon after {:.1} s, \
         files {:.1} s",
        p[0], p[1], p[2], p[3], p[4]
    )
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
    })
}

#[test]
fn random_histories_stay_readable_through_random_cleanup() {
    if common::python().is_none() {
        return;
    }
    let single = env_u64("PAIMON_SAFETY_SEED");
    let count = env_u64("PAIMON_SAFETY_SEEDS");
    let minutes = env_u64("PAIMON_SAFETY_MINUTES");
    let long = count.is_some() || minutes.is_some();
    let first = single.or(env_u64("PAIMON_SAFETY_FIRST_SEED")).unwrap_or(0);
    let count = if single.is_some() {
        1
    } else {
        count.unwrap_or(if minutes.is_some() { 1_000_000 } else { 200 })
    };
    let jobs = env_u64("PAIMON_SAFETY_JOBS").unwrap_or(2).max(1);
    let batch = env_u64("PAIMON_SAFETY_BATCH")
        .unwrap_or_else(|| count.div_ceil(jobs).clamp(1, if long { 50 } else { 100 }))
        .max(1);
    let keep = std::env::var("PAIMON_SAFETY_KEEP").as_deref() == Ok("1");
    let deadline = minutes.map(|m| Instant::now() + Duration::from_secs(m * 60));
    let mode = if single.is_some() {
        "single"
    } else if long {
        "long"
    } else {
        "fast"
    };
    let last = first + count - 1;
    let planned = if count >= 1_000_000 {
        format!("seeds from {first} on")
    } else {
        format!("seeds {first}..={last}")
    };
    eprintln!(
        "random_safety {mode} mode: {planned}, {jobs} jobs, {batch} seeds per batch{}",
        minutes.map_or(String::new(), |m| format!(
            ", stops starting batches after {m} min"
        ))
    );

    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let results = Arc::new(Mutex::new(BatchResult {
        passed: Vec::new(),
        failed: Vec::new(),
        stats: BTreeMap::new(),
        phases: [0.0; 5],
    }));
    let batches: Vec<(u64, u64)> = (first..=last)
        .step_by(batch as usize)
        .map(|a| (a, (a + batch - 1).min(last)))
        .collect();
    let batches = Arc::new(batches);
    let handles: Vec<_> = (0..jobs)
        .map(|_| {
            let (next, results, batches) = (next.clone(), results.clone(), batches.clone());
            std::thread::spawn(move || loop {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(a, b)) = batches.get(i) else {
                    break;
                };
                let t0 = Instant::now();
                let r = run_batch(a, b, single.is_some(), keep);
                for (seed, why) in &r.failed {
                    eprintln!(
                        "random_safety: seed {seed} FAILED (reproduce: PAIMON_SAFETY_SEED={seed} \
                         cargo test --test random_safety):\n    {why}"
                    );
                }
                if long {
                    eprintln!(
                        "random_safety: seeds {a}..={b}: {} passed, {} failed ({:.1} s: {})",
                        r.passed.len(),
                        r.failed.len(),
                        t0.elapsed().as_secs_f64(),
                        phase_text(&r.phases)
                    );
                }
                let mut all = results.lock().unwrap();
                all.passed.extend(r.passed);
                all.failed.extend(r.failed);
                for (x, y) in all.phases.iter_mut().zip(r.phases) {
                    *x += y;
                }
                for (k, n) in r.stats {
                    *all.stats.entry(k).or_default() += n;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let all = results.lock().unwrap();
    let done: BTreeSet<u64> = all
        .passed
        .iter()
        .copied()
        .chain(all.failed.iter().map(|f| f.0))
        .collect();
    let range = match (done.first(), done.last()) {
        (Some(a), Some(b)) if (b - a + 1) as usize == done.len() => format!("{a}..={b}"),
        (Some(a), Some(b)) => format!("{} seeds within {a}..={b}", done.len()),
        _ => "none".to_string(),
    };
    let mut failed: Vec<u64> = all.failed.iter().map(|f| f.0).collect();
    failed.sort();
    eprintln!(
        "random_safety {mode} mode: seeds {range}: {} passed, {} failed in {:.1} s \
         (summed over jobs: {}){}",
        all.passed.len(),
        all.failed.len(),
        started.elapsed().as_secs_f64(),
        phase_text(&all.phases),
        if failed.is_empty() {
            String::new()
        } else {
            format!(" (failed seeds: {failed:?})")
        }
    );
    let stats: Vec<String> = all.stats.iter().map(|(k, n)| format!("{k} {n}")).collect();
    eprintln!("random_safety {mode} mode coverage: {}", stats.join("; "));
    assert!(all.failed.is_empty(), "failed seeds: {failed:?}");
}

/// Regression (found by seeds 35 and 106): after a decoupled snapshot expiry on a table with a
/// changelog producer, the long-lived changelogs keep only their changelog manifest list (the
/// base and delta lists go, as in Java); orphan removal used to require those lists and refuse
/// to run ("manifest list needed by changelog 1 of branch main, which still exists").
/// Seeds the long mode once failed on, each a different bug, now fixed; they run in every mode:
/// * 1488, 1262: a crash inside `maintain`'s changelog expiry left changelogs whose manifest
///   lists were gone; the rerun refused for ever (snapshot expiry read them as protectors).
///   Changelogs past their retention whose metadata is missing now protect nothing.
/// * 3953, 3688: `maintain`'s dry run planned snapshot expiry with a consumer that its
///   consumer-expiry step removes first, so the real run expired more than the dry run named.
/// * 6279, 6200: the same with a tag that tag expiry removes first.
const REGRESSION_SEEDS: [u64; 6] = [1262, 1488, 3688, 3953, 6200, 6279];

#[test]
fn seeds_that_found_bugs_stay_fixed() {
    if common::python().is_none() {
        return;
    }
    let keep = std::env::var("PAIMON_SAFETY_KEEP").as_deref() == Ok("1");
    let mut failed = Vec::new();
    for seed in REGRESSION_SEEDS {
        let r = run_batch(seed, seed, false, keep);
        assert_eq!(
            r.passed.len() + r.failed.len(),
            1,
            "seed {seed} did not run"
        );
        for (s, why) in r.failed {
            eprintln!("random_safety: regression seed {s} FAILED:\n{why}");
            failed.push(s);
        }
    }
    assert!(failed.is_empty(), "regression seeds failed: {failed:?}");
}

#[test]
fn orphan_removal_after_decoupled_changelog_expiry() {
    let Some(py) = common::python() else {
        return;
    };
    let wh = tempfile::tempdir().unwrap();
    let script = r#"
import sys, warnings, logging
warnings.filterwarnings("ignore")
logging.basicConfig(level=logging.WARNING)
import pyarrow as pa
from pypaimon import CatalogFactory, Schema
cat = CatalogFactory.create({"warehouse": sys.argv[1]})
cat.create_database("db", True)
s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
               pa.field("dt", pa.string(), nullable=False)])
cat.create_table("db.t", Schema.from_pyarrow_schema(s, partition_keys=["dt"],
    primary_keys=["id", "dt"], options={"bucket": "1", "changelog-producer": "input"}), False)
t = cat.get_table("db.t")
wb = t.new_stream_write_builder()
w, c = wb.new_write(), wb.new_commit()
for i in range(1, 5):
    w.write_arrow(pa.Table.from_pylist([{"id": i, "v": "x", "dt": "a"}], schema=s))
    c.commit(w.prepare_commit(i), i)
w.close(); c.close()
"#;
    let out = std::process::Command::new(&py)
        .arg("-c")
        .arg(script)
        .arg(wh.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = wh.path().join("db.db/t");
    let before = common::all_versions(&table);
    let rt = common::rt();
    let decoupled = BTreeMap::from([("changelog.num-retained.min".to_string(), "20".to_string())]);
    let t = rt.block_on(open(&table, None, &decoupled));
    let cfg = ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = rt
        .block_on(expire_snapshots(&t, &cfg, &RunControl::default()))
        .unwrap();
    assert_eq!(r.changelogs_written, 3, "{r:?}");
    let cfg = OrphanConfig {
        older_than_ms: Some(now_ms()),
        no_writers_running: true,
        ..Default::default()
    };
    let t = rt.block_on(open(&table, None, &BTreeMap::new()));
    rt.block_on(remove_orphan_files(&t, &cfg, &RunControl::default()))
        .unwrap_or_else(|e| panic!("orphan removal after a decoupled expiry: {e}"));
    let after = common::all_versions(&table);
    for (k, v) in &after {
        assert!(v.get("error").is_none(), "{k}: {v}");
        assert_eq!(v["row_digest"], before[k]["row_digest"], "{k}");
    }
    let missing = common::run_py(
        &py,
        "random_history.py",
        &["--missing", table.to_str().unwrap()],
    )
    .unwrap();
    let missing: Value = serde_json::from_str(&missing).unwrap();
    assert_eq!(
        missing[table.to_str().unwrap()]["versions"],
        serde_json::json!({}),
        "long-lived changelogs miss files"
    );
}

#[test]
fn blamed_version_parses_the_library_messages() {
    assert_eq!(
        blamed_version(
            "not found: file:///x/manifest/manifest-list-a-0 (manifest list needed by snapshot 5 \
             of branch main, which still exists); nothing deleted"
        )
        .as_deref(),
        Some("snapshot:5")
    );
    assert_eq!(
        blamed_version("manifest needed by changelog 1 of branch b1, which still exists")
            .as_deref(),
        Some("branch:b1:changelog:1")
    );
    assert_eq!(
        blamed_version("not found: file:///x/manifest/manifest-list-a-1"),
        None
    );
}
