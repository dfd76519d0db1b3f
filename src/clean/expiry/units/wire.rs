//! The byte-level pieces every step of expiry's units shares: what a unit, a partial result, the
//! plan state and the decision hold, how a unit reaches its table, and the checks that results
//! belong to one plan and stage.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::super::unit_bytes::{decode, Kind};

use crate::clean::expiry::plan::DeletionPlan;
use crate::clean::expiry::protected::{ProtectMode, Protector};
use crate::clean::expiry::range::ExpiryBound;
use crate::clean::report::FileClass;
use crate::clean::shared::deleter::Planned as PlannedFile;
use crate::error::{Error, Result};
use crate::hash::location_key;
use crate::spec::snapshot::Snapshot;
use crate::storage::{Location, StopReads, Storage};
use crate::table::Table;

/// Delta (or changelog) lists per candidate unit.
pub(crate) const LISTS_PER_UNIT: usize = 4;

/// Protectors per protect unit.
pub(crate) const PROTECTORS_PER_UNIT: usize = 8;

/// Files per delete unit.
pub(crate) const FILES_PER_DELETE_UNIT: usize = 1000;

/// Paths a counts-only result carries as its sample (the first ones in the single-process
/// order), when the paths themselves go to the tasks ([`super::Paths::ToTasks`]).
pub const SAMPLE_PATHS: usize = 20;

/// Files and bytes of one class: class code, files, bytes.
pub(crate) type Tally = (u8, u64, u64);

/// A sampled path: its gathering order, class code, path as the report shows it.
pub(crate) type Sampled = (Seq, u8, String);

/// What [`plan`] and [`protect`] return.
#[derive(Debug, Clone, Default)]
pub struct Planned {
    /// The driver-side state, for the next driver step.
    pub state: Vec<u8>,
    /// The units to [`execute`].
    pub units: Vec<Vec<u8>>,
}

/// What [`decide`] returns.
#[derive(Debug, Clone, Default)]
pub struct Decided {
    /// The decision, for [`finish`].
    pub decision: Vec<u8>,
    /// The delete units to [`execute`] (none in a dry run).
    pub units: Vec<Vec<u8>>,
}

/// What [`execute_handing_paths`] returns.
#[derive(Debug, Clone, Default)]
pub struct Executed {
    /// The unit's partial result, to [`merge`].
    pub result: Vec<u8>,
    /// Every path a delete unit of a decision whose paths go to the tasks deleted, as the
    /// report shows it, in the order deleted; empty for every other unit.
    pub paths: Vec<String>,
}

/// How a unit reaches its table: root, branch and options without credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Reach {
    pub(crate) uri: String,
    pub(crate) branch: String,
    pub(crate) options: BTreeMap<String, String>,
}

/// True for option keys that hold credentials (the rule of orphan units): units never carry
/// them, the executing host passes them.
pub(crate) fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "password",
        "token",
        "access-key",
        "access.key",
        "accesskey",
        "account.key",
        "account-key",
        "credential",
        "sas",
        "private",
    ]
    .iter()
    .any(|s| k.contains(s))
}

impl Reach {
    pub(crate) fn of(table: &Table) -> Reach {
        Reach {
            uri: table.root().as_str().to_string(),
            branch: table.branch_name().to_string(),
            options: table
                .overrides()
                .iter()
                .filter(|(k, _)| !is_secret(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    /// Opens the table's branch with the carried options, overridden by `host`'s.
    pub(crate) async fn open(
        &self,
        host: &HashMap<String, String>,
        stop: Option<StopReads>,
    ) -> Result<Table> {
        let mut options: HashMap<String, String> = self.options.clone().into_iter().collect();
        options.extend(host.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut storage = Storage::open(&self.uri, &options)?;
        if let Some(stop) = stop {
            storage = storage.stop_reads_when(stop);
        }
        Table::open_branch(Arc::new(storage), &options, &self.branch).await
    }

    /// Refuses a driver table that is not the one the bytes were planned on.
    pub(crate) fn check_same(&self, table: &Table) -> Result<()> {
        if self.uri != table.root().as_str() || self.branch != table.branch_name() {
            return Err(Error::InvalidArgument(format!(
                "the bytes were planned on {} (branch {}), not on {} (branch {})",
                self.uri,
                self.branch,
                table.root().as_str(),
                table.branch_name()
            )));
        }
        Ok(())
    }
}

/// A file as units and decisions carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WireFile {
    pub(crate) location: String,
    pub(crate) class: u8,
    pub(crate) bytes: Option<u64>,
}

pub(crate) fn class_of(code: u8) -> Result<FileClass> {
    if (code as usize) < FileClass::ALL.len() {
        Ok(FileClass::from_code(code))
    } else {
        Err(Error::InvalidArgument(format!(
            "unknown file class code {code}"
        )))
    }
}

impl WireFile {
    pub(crate) fn of(p: &PlannedFile) -> WireFile {
        WireFile {
            location: p.location.as_str().to_string(),
            class: p.class.code(),
            bytes: p.bytes,
        }
    }

    pub(crate) fn planned(&self) -> Result<PlannedFile> {
        Ok(PlannedFile {
            location: Location::parse(&self.location)?,
            class: class_of(self.class)?,
            bytes: self.bytes,
        })
    }
}

pub(crate) fn planned_all(files: &[WireFile]) -> Result<Vec<PlannedFile>> {
    files.iter().map(WireFile::planned).collect()
}

/// A candidate as a candidate unit returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WireCandidate {
    pub(crate) location: String,
    pub(crate) class: u8,
    pub(crate) bytes: u64,
    pub(crate) extras: Vec<String>,
    /// Its position in its unit's result, kept when results are split by shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seq: Option<u32>,
}

/// Where a file comes in the single-process run's gathering order: candidate unit, position
/// in that unit's result, slot (0 for the file, 1.. for its extra files).
pub(crate) type Seq = (u32, u32, u32);

/// A protector as a protect unit and the protect state carry it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WireProtector {
    pub(crate) label: String,
    pub(crate) snapshot: String,
    pub(crate) mode: u8,
}

impl WireProtector {
    pub(crate) fn of(p: &Protector) -> Result<WireProtector> {
        Ok(WireProtector {
            label: p.label.clone(),
            snapshot: p.snapshot.to_json()?,
            mode: match p.mode {
                ProtectMode::Full => 0,
                ProtectMode::DeltaAdds => 1,
                ProtectMode::Changelog => 2,
            },
        })
    }

    pub(crate) fn protector(&self) -> Result<Protector> {
        Ok(Protector {
            label: self.label.clone(),
            snapshot: Snapshot::parse(self.snapshot.as_bytes(), &self.label)?,
            mode: match self.mode {
                0 => ProtectMode::Full,
                1 => ProtectMode::DeltaAdds,
                2 => ProtectMode::Changelog,
                m => return Err(Error::InvalidArgument(format!("unknown protect mode {m}"))),
            },
        })
    }
}

pub(crate) fn snapshots_json(s: &[Snapshot]) -> Result<Vec<String>> {
    s.iter().map(Snapshot::to_json).collect()
}

pub(crate) fn snapshots_of(s: &[String]) -> Result<Vec<Snapshot>> {
    s.iter()
        .map(|j| Snapshot::parse(j.as_bytes(), "a snapshot of the plan state"))
        .collect()
}

/// The stages whose units return partial results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Stage {
    Candidates,
    Protect,
    Delete,
}

/// One unit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Unit {
    pub(crate) plan: u64,
    pub(crate) stage: Stage,
    pub(crate) index: u32,
    pub(crate) reach: Reach,
    pub(crate) work: Work,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Work {
    /// Read these delta lists' DELETE entries (or, with `changelog`, these changelog lists'
    /// ADD entries).
    Candidates { changelog: bool, lists: Vec<String> },
    /// Read these protectors; the tail keys are the candidates' keys (data then metadata:
    /// `data_keys` of them are data candidates' keys).
    Protect {
        protectors: Vec<WireProtector>,
        data_keys: u64,
    },
    /// Delete these files (`seqs`: their gathering order, given by a shard's decision). With
    /// `paths_to_task` the result carries counts, failures and a sample, and the deleted paths
    /// go to the executing task only.
    Delete {
        files: Vec<WireFile>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        seqs: Vec<Seq>,
        #[serde(default, skip_serializing_if = "is_false")]
        paths_to_task: bool,
    },
}

/// What one unit returned.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum UnitResult {
    Candidates(Vec<WireCandidate>),
    Protected(Vec<u64>),
    Deleted {
        /// Class, path as the report shows it, size.
        deleted: Vec<(u8, String, u64)>,
        /// Path and error.
        failed: Vec<(String, String)>,
        /// The gathering order of each deleted file (sharded decisions only).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        seqs: Vec<Seq>,
    },
    /// A candidate unit's summary, once its result is split by shard: how many candidates.
    Counted(u64),
    /// A delete unit's result without its paths (they went to the executing task): files and
    /// bytes per class, the first deleted files in the gathering order, every failure.
    Tallied {
        counts: Vec<Tally>,
        sample: Vec<Sampled>,
        failed: Vec<(String, String)>,
    },
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// Counts per class, the first [`SAMPLE_PATHS`] paths in gathering order and every path of
/// `deleted` (class, path as the report shows it, size; `seq_of` gives each path's order).
pub(crate) fn tally(
    deleted: Vec<(FileClass, String, u64)>,
    seq_of: impl Fn(&str) -> Result<Seq>,
) -> Result<(Vec<Tally>, Vec<Sampled>, Vec<String>)> {
    let mut counts: BTreeMap<u8, (u64, u64)> = BTreeMap::new();
    let mut sample: Vec<Sampled> = Vec::new();
    let mut paths = Vec::with_capacity(deleted.len());
    for (class, path, bytes) in deleted {
        let c = counts.entry(class.code()).or_default();
        c.0 += 1;
        c.1 += bytes;
        sample.push((seq_of(&path)?, class.code(), path.clone()));
        if sample.len() > 2 * SAMPLE_PATHS {
            keep_first(&mut sample);
        }
        paths.push(path);
    }
    keep_first(&mut sample);
    Ok((
        counts.into_iter().map(|(c, (f, b))| (c, f, b)).collect(),
        sample,
        paths,
    ))
}

/// Keeps the first [`SAMPLE_PATHS`] of `sample` in gathering order.
pub(crate) fn keep_first(sample: &mut Vec<Sampled>) {
    sample.sort_by_key(|(q, ..)| *q);
    sample.truncate(SAMPLE_PATHS);
}

/// Adds `more` to `into`.
pub(crate) fn add_tallies(into: &mut Vec<Tally>, more: &[Tally]) {
    for (class, files, bytes) in more {
        match into.iter_mut().find(|(c, ..)| c == class) {
            Some(t) => {
                t.1 += files;
                t.2 += bytes;
            }
            None => into.push((*class, *files, *bytes)),
        }
    }
    into.sort_by_key(|(c, ..)| *c);
}

/// What part of its units' results a partial result holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Part {
    /// Everything.
    #[default]
    Whole,
    /// The counts, of results split into `of` shards.
    Summary { of: u32 },
    /// The candidates of shard `id` of `of`.
    Shard { id: u32, of: u32 },
}

/// Results of some units of one stage of one plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Partial {
    pub(crate) plan: u64,
    pub(crate) stage: Stage,
    #[serde(default, skip_serializing_if = "is_whole")]
    pub(crate) part: Part,
    pub(crate) results: BTreeMap<u32, UnitResult>,
}

pub(crate) fn is_whole(p: &Part) -> bool {
    *p == Part::Whole
}

/// The driver's state between the steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) plan: u64,
    pub(crate) started_ms: i64,
    pub(crate) reach: Reach,
    pub(crate) dry_run: bool,
    pub(crate) outcome: Outcome,
    /// The bound that held ([`ExpireReport::kept_by`]).
    #[serde(default)]
    pub(crate) kept_by: Option<ExpiryBound>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    Nothing,
    HintOnly {
        earliest: i64,
    },
    AllKept {
        end: i64,
    },
    Expire {
        begin: i64,
        end: i64,
        clean_dirs: bool,
        decoupled: bool,
        skip_tags: Vec<String>,
        expired: Vec<String>,
        kept: Vec<String>,
        sizes: Vec<(i64, u64)>,
        data_units: u32,
        changelog_units: u32,
        /// Set by [`protect`].
        protect: Option<ProtectStage>,
    },
}

/// What [`protect`] fixed: the protectors and the metadata candidates' keys its units were
/// given, and how many units.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ProtectStage {
    pub(crate) protectors: Vec<WireProtector>,
    pub(crate) meta_keys: Vec<u64>,
    pub(crate) units: u32,
}

/// The driver's decision: what [`finish`] deletes after the delete units.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Decision {
    pub(crate) plan: u64,
    pub(crate) started_ms: i64,
    pub(crate) reach: Reach,
    pub(crate) dry_run: bool,
    pub(crate) outcome: Outcome,
    /// The bound that held ([`ExpireReport::kept_by`]).
    #[serde(default)]
    pub(crate) kept_by: Option<ExpiryBound>,
    pub(crate) delete_units: u32,
    /// In a dry run, the data and changelog files the delete units would have deleted.
    pub(crate) dry_files: Vec<WireFile>,
    pub(crate) dirs: Vec<String>,
    pub(crate) manifests: Vec<WireFile>,
    pub(crate) index_files: Vec<WireFile>,
    pub(crate) statistics: Vec<WireFile>,
    pub(crate) lists: Vec<WireFile>,
    pub(crate) snapshot_files: Vec<WireFile>,
    /// Set when the data and changelog files were decided by shard ([`sharded`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sharded: Option<ShardedDecision>,
}

/// An identifier for a plan: time and process, so that bytes of two plans do not mix.
pub(crate) fn plan_id(table: &Table) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    location_key(&format!(
        "{}#{}#{nanos}",
        table.root().as_str(),
        std::process::id()
    ))
}

/// The results of `merged`, checked: of plan `plan` and stage `stage`, with exactly units
/// `from..from + count`.
pub(crate) fn results_of(
    merged: &[u8],
    plan: u64,
    stage: Stage,
    from: u32,
    count: u32,
) -> Result<BTreeMap<u32, UnitResult>> {
    results_of_part(merged, plan, stage, Part::Whole, &[(from, count)])
}

/// [`results_of`] for part `part` of the results, with exactly the units of `ranges`
/// (`(first, count)` each).
pub(crate) fn results_of_part(
    merged: &[u8],
    plan: u64,
    stage: Stage,
    part: Part,
    ranges: &[(u32, u32)],
) -> Result<BTreeMap<u32, UnitResult>> {
    let count: u64 = ranges.iter().map(|(_, n)| u64::from(*n)).sum();
    if count == 0 && merged.is_empty() {
        return Ok(BTreeMap::new());
    }
    let (p, _): (Partial, _) = decode(Kind::Partial, merged)?;
    if p.plan != plan || p.stage != stage {
        return Err(Error::InvalidArgument(format!(
            "the merged results are not of this plan's {stage:?} units"
        )));
    }
    if p.part != part {
        return Err(Error::InvalidArgument(format!(
            "the merged results of the {stage:?} units are {:?}, not {part:?}; refusing to go \
             on (nothing deleted by this step)",
            p.part
        )));
    }
    let mut ranges = ranges.to_vec();
    ranges.sort_unstable();
    let expected: Vec<u32> = ranges
        .iter()
        .flat_map(|(from, n)| *from..from.saturating_add(*n))
        .collect();
    let got: Vec<u32> = p.results.keys().copied().collect();
    if got != expected {
        let missing: Vec<String> = expected
            .iter()
            .filter(|i| !p.results.contains_key(i))
            .map(|i| i.to_string())
            .collect();
        return Err(Error::InvalidArgument(format!(
            "the merged results of the {stage:?} units are incomplete or foreign: missing \
             [{}], {} given for {count}; refusing to go on (nothing deleted by this step)",
            missing.join(", "),
            got.len()
        )));
    }
    Ok(p.results)
}

pub(crate) fn decode_state(table: &Table, state: &[u8]) -> Result<State> {
    let (s, _): (State, _) = decode(Kind::State, state)?;
    s.reach.check_same(table)?;
    Ok(s)
}

impl Decision {
    /// The decision of `st` before anything is decided: nothing to delete.
    pub(crate) fn empty(st: &State) -> Decision {
        Decision {
            plan: st.plan,
            started_ms: st.started_ms,
            reach: st.reach.clone(),
            dry_run: st.dry_run,
            outcome: st.outcome.clone(),
            kept_by: st.kept_by.clone(),
            delete_units: 0,
            dry_files: Vec::new(),
            dirs: Vec::new(),
            manifests: Vec::new(),
            index_files: Vec::new(),
            statistics: Vec::new(),
            lists: Vec::new(),
            snapshot_files: Vec::new(),
            sharded: None,
        }
    }

    /// Takes the metadata of `plan` and the snapshot files, which [`finish`] deletes.
    pub(crate) fn set_metadata(&mut self, plan: &DeletionPlan, snapshot_files: &[PlannedFile]) {
        self.manifests = plan.manifests.iter().map(WireFile::of).collect();
        self.index_files = plan.index_files.iter().map(WireFile::of).collect();
        self.statistics = plan.statistics.iter().map(WireFile::of).collect();
        self.lists = plan.lists.iter().map(WireFile::of).collect();
        self.snapshot_files = snapshot_files.iter().map(WireFile::of).collect();
    }
}

/// The sharded decision's progress, in the driver's decision.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ShardedDecision {
    /// The id the gate, the shard reports and the delete units carry.
    pub id: u64,
    /// The shard count.
    pub shards: u32,
    /// Every shard's report was taken ([`super::conclude`]).
    pub concluded: bool,
    /// The delete units: `(first id, count)` per shard that has any.
    pub unit_ranges: Vec<(u32, u32)>,
    /// In a dry run, the gathering order of each of the decision's `dry_files`.
    pub dry_seqs: Vec<Seq>,
    /// The freed paths go to the shard and delete-unit tasks; shard reports and delete-unit
    /// results carry counts, failures and a sample ([`super::Paths::ToTasks`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub paths_to_tasks: bool,
    /// With `paths_to_tasks`, in a dry run: what the shards would delete, per class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dry_counts: Vec<Tally>,
    /// With `paths_to_tasks`, in a dry run: the first paths the shards would delete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dry_sample: Vec<Sampled>,
}
