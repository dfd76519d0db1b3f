//! The sharded decision: the merge of the plan units' results and the decision split by
//! shard ([`shard::shard_of`] of each file name), so that no process holds every candidate and
//! every reference key.
//!
//! 1. Each plan unit's result is split ([`Partial::split`]) into a summary (counters, failures,
//!    errors, empty directories) and one piece per shard (that shard's candidates and keys).
//!    The engine shuffles the pieces by shard; the summaries go to the driver.
//! 2. **Gate** ([`gate`], driver): with every unit's summary merged (a missing or doubled unit
//!    is refused), lists the versions again until no new one appears and reads the new ones'
//!    references, judges the metadata that could not be read (nothing is deleted when a
//!    version still needs it), and hands every shard the [`Gate`]: the plan, the shard count,
//!    the round, and the keys the driver itself read (the versions' lists and manifest names,
//!    the new versions' references), which each shard takes its share of.
//! 3. **Shard decision** ([`decide_shard`], one task per shard): with every unit's piece of
//!    its shard merged (checked complete, each unit once), keeps what is referenced by
//!    location or by name and what the veto keeps, checks every remaining path (roots, kinds,
//!    no symlinked directory) and returns its [`ShardReport`] and its delete units.
//! 4. **Confirm** ([`gate`] again, driver): lists the versions once more. If one appeared, its
//!    references are read and a new round's gate is handed out: every shard decides again
//!    (its pieces unchanged). Only a gate that found no new version confirms the round.
//! 5. **Conclude** ([`conclude`], driver): with the confirmed round's report of every shard,
//!    each exactly once, the decision for [`super::units::finish`]. The delete units of shard
//!    `s` have ids from `s × (u32::MAX / shards)` on, so that each shard numbers its own.

use serde::{Deserialize, Serialize};

use crate::clean::control::RunControl;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::kinds::KindRules;
use crate::error::{Error, Result};
use crate::memory::MemoryBudget;
use crate::storage::Location;
use crate::table::Table;

use super::codec::{Kind, Reader, Writer};
use super::config::OrphanConfig;
use super::decide::{
    check_complete, delete_works, dry_deleted, plan_deletions, read_new_versions, report_base,
    verdicts, versions_read, Decision, ReportBase,
};
use super::partial::{Part, Partial};
use super::planner::{new_plan_id, numbered, State};
use super::shard::{shard_of, Sharded, MAX_SHARDS};
use super::work_unit::{Reach, Unit};

/// What every shard task of one round gets.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GateHead {
    /// The plan the pieces belong to.
    pub plan: u64,
    /// Plan units: ids `0..units`.
    pub units: u32,
    /// The shard count.
    pub shards: u32,
    /// The id the delete units carry.
    pub decision: u64,
    /// The round.
    pub round: u32,
    /// A dry run.
    pub dry_run: bool,
    /// Roots besides the table root under which deletions are allowed.
    pub delete_roots: Vec<String>,
}

/// The gate: the round's head and the reference keys the driver read (every shard keeps its
/// share).
#[derive(Debug, Clone, Default)]
pub(crate) struct Gate {
    pub head: GateHead,
    /// Location keys, sorted.
    pub locations: Vec<u64>,
    /// Name keys, sorted.
    pub names: Vec<u64>,
}

impl Gate {
    /// Serializes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let head = serde_json::to_vec(&self.head)
            .map_err(|e| Error::Internal(format!("cannot encode a shard gate: {e}")))?;
        let mut w = Writer::new(Kind::Gate);
        w.bytes(&head);
        w.keys(&self.locations);
        w.keys(&self.names);
        Ok(w.finish())
    }

    /// Deserializes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes, Kind::Gate)?;
        let head: GateHead = serde_json::from_slice(r.bytes()?)
            .map_err(|e| Error::InvalidArgument(format!("not an orphan-removal gate ({e})")))?;
        let g = Gate {
            head,
            locations: r.keys()?,
            names: r.keys()?,
        };
        r.end()?;
        Ok(g)
    }
}

/// What one shard decided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ShardReport {
    /// The decision id of the gate.
    pub decision: u64,
    /// The gate's round.
    pub round: u32,
    /// The shard.
    pub shard: u32,
    /// The shard count.
    pub shards: u32,
    /// Candidates of this shard (the young files a version references included).
    pub candidates: u64,
    /// Of those, referenced.
    pub referenced: u64,
    /// Kept by the veto.
    pub vetoed: u64,
    /// Kept because only the name is referenced, at another location (display paths).
    pub kept_name_referenced_elsewhere: Vec<String>,
    /// Data directories that lose a file, with their data root.
    pub prune: Vec<(String, String)>,
    /// The first delete unit id of this shard.
    pub first_unit: u32,
    /// Delete units.
    pub units: u32,
    /// In a dry run: what would be deleted, as `(phase, path, class index, bytes)`.
    pub dry_deleted: Vec<(u8, String, u8, u64)>,
}

impl ShardReport {
    /// Serializes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        super::codec::to_json_bytes(Kind::ShardReport, self)
    }

    /// Deserializes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        super::codec::from_json_bytes(Kind::ShardReport, bytes)
    }
}

/// Fails unless `summary` is the summary of results split into `shards` (or the empty result,
/// for a plan without units) holding every plan unit once.
fn check_summary(state: &State, summary: &Partial, shards: u32) -> Result<()> {
    check_complete(summary, state.plan, state.units, "plan unit")?;
    let empty = summary.plan == 0 && state.units == 0;
    if !empty && summary.part != (Part::Summary { of: shards }) {
        return Err(Error::InvalidArgument(format!(
            "the gate needs the summaries of results split into {shards} shards, not {}",
            summary.part.describe()
        )));
    }
    Ok(())
}

/// The gate of the sharded decision (driver): lists the versions again until no new one
/// appears, reading the new ones' references; judges the metadata that could not be read; and
/// returns the updated state, the gate for the shard tasks and whether the shards must decide
/// (again): always on the first call, and on a later call when a new version appeared. A call
/// that found none confirms the round.
pub(crate) async fn gate(
    main: &Table,
    ctl: &RunControl,
    mut state: State,
    summary: &Partial,
    shards: u32,
) -> Result<(State, Gate, bool)> {
    if !(1..=MAX_SHARDS).contains(&shards) {
        return Err(Error::InvalidArgument(format!(
            "a shard count must be 1 to {MAX_SHARDS}, not {shards}"
        )));
    }
    check_summary(&state, summary, shards)?;
    let prev = state.sharded.take();
    if let Some(p) = &prev {
        if p.shards != shards {
            return Err(Error::InvalidArgument(format!(
                "the plan was gated for {} shards, not {shards}",
                p.shards
            )));
        }
    }
    let rounds_before = state.tracker.rounds;
    let mut found = std::mem::take(&mut state.found);
    read_new_versions(main, ctl, &mut state.tracker, &mut found).await?;
    found.compact_keys();
    found.failures.sort();
    found.failures.dedup();
    let new_versions = state.tracker.rounds != rounds_before;
    // What could not be read, from the units and from the driver's own reads.
    let mut judged = Partial {
        entries_seen: summary.entries_seen + found.entries_seen,
        unresolved: summary.unresolved + found.unresolved,
        failures: summary.failures.clone(),
        ..Default::default()
    };
    judged.failures.extend(found.failures.iter().cloned());
    judged.failures.sort();
    judged.failures.dedup();
    let storage = main.storage().clone();
    let versions_read = versions_read(&storage, main, &state.tracker, &judged).await?;
    ctl.cancel.check()?;
    let changed = prev.is_none() || new_versions;
    let sharded = match prev {
        None => Sharded {
            shards,
            decision: new_plan_id(),
            round: 0,
            confirmed: false,
            versions_read,
        },
        Some(mut p) => {
            if changed {
                p.round += 1;
                p.confirmed = false;
            } else {
                p.confirmed = true;
            }
            p.versions_read = versions_read;
            p
        }
    };
    let gate = Gate {
        head: GateHead {
            plan: state.plan,
            units: state.units,
            shards,
            decision: sharded.decision,
            round: sharded.round,
            dry_run: state.dry_run,
            delete_roots: state.delete_roots.clone(),
        },
        locations: found.locations.clone(),
        names: found.names.clone(),
    };
    tracing::debug!(
        round = sharded.round,
        changed,
        keys = gate.locations.len() + gate.names.len(),
        "orphan removal: shard gate"
    );
    state.found = found;
    state.sharded = Some(sharded);
    Ok((state, gate, changed))
}

/// Decides one shard (anywhere): `piece` is every plan unit's piece of shard `shard` merged.
/// Returns the shard's report and its delete units (none in a dry run).
pub(crate) async fn decide_shard(
    main: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    memory: &MemoryBudget,
    gate: &Gate,
    shard: u32,
    piece: Partial,
) -> Result<(ShardReport, Vec<Unit>)> {
    let h = &gate.head;
    check_shard_piece(h, shard, &piece)?;
    let decided = decide_keys(cfg, memory, gate, shard, piece)?;
    ctl.cancel.check()?;

    // Every check (root, kind, no symlinked directory) for every deletion, before any.
    let roots: Vec<Location> = h
        .delete_roots
        .iter()
        .map(|r| Location::parse(r))
        .collect::<Result<_>>()?;
    let delete_storage = main.storage().with_delete_roots(&roots);
    let checker =
        Deleter::new(&delete_storage, KindRules::of(main), ctl, true).with_memory(memory.clone());
    checker.check_plan(decided.phases.iter().flatten()).await?;

    let stride = u32::MAX / h.shards;
    let first_unit = shard * stride;
    let mut report = ShardReport {
        decision: h.decision,
        round: h.round,
        shard,
        shards: h.shards,
        candidates: decided.candidates,
        referenced: decided.referenced,
        vetoed: decided.vetoed,
        kept_name_referenced_elsewhere: decided
            .kept
            .iter()
            .map(|l| main.paths().display(l))
            .collect(),
        prune: decided.prune,
        first_unit,
        units: 0,
        dry_deleted: Vec::new(),
    };
    if h.dry_run {
        report.dry_deleted = dry_deleted(delete_storage.root(), decided.phases);
        return Ok((report, Vec::new()));
    }
    let works = delete_works(&h.delete_roots, decided.phases);
    if works.len() as u64 > u64::from(stride) {
        return Err(Error::InvalidArgument(format!(
            "shard {shard} has {} delete units, more than the {stride} a shard of {} may number; \
             use more shards; nothing deleted",
            works.len(),
            h.shards
        )));
    }
    let units = numbered(h.decision, first_unit, &Reach::of(main), works)?;
    report.units = units.len() as u32;
    Ok((report, units))
}

/// Refuses a piece that is not shard `shard` of the gate's decision, or that misses a plan
/// unit: a shard that does not exist, a piece of another part, an incomplete merge.
fn check_shard_piece(h: &GateHead, shard: u32, piece: &Partial) -> Result<()> {
    if shard >= h.shards {
        return Err(Error::InvalidArgument(format!(
            "shard {shard} of {} does not exist",
            h.shards
        )));
    }
    let empty = piece.plan == 0 && h.units == 0;
    if !empty
        && piece.part
            != (Part::Shard {
                id: shard,
                of: h.shards,
            })
    {
        return Err(Error::InvalidArgument(format!(
            "shard {shard} of {} was given {}",
            h.shards,
            piece.part.describe()
        )));
    }
    check_complete(piece, h.plan, h.units, "plan unit")
}

/// What one shard decided: the deletions by phase (each sorted), the files kept because their
/// name is referenced elsewhere, the directories to prune, and the counts of its report.
struct ShardDecision {
    phases: Vec<Vec<Planned>>,
    kept: Vec<Location>,
    prune: Vec<(String, String)>,
    candidates: u64,
    referenced: u64,
    vetoed: u64,
}

/// Decides the shard's candidates against the references of its piece and the gate's keys
/// that fall in the shard, with the piece's keys and candidates charged to `memory` while
/// they are held.
fn decide_keys(
    cfg: &OrphanConfig,
    memory: &MemoryBudget,
    gate: &Gate,
    shard: u32,
    mut piece: Partial,
) -> Result<ShardDecision> {
    let shards = gate.head.shards;
    let mine = |k: &&u64| shard_of(**k, shards) == shard;
    piece.locations.extend(gate.locations.iter().filter(mine));
    piece.names.extend(gate.names.iter().filter(mine));
    piece.compact_keys();
    let held = piece.key_bytes() + piece.candidate_bytes();
    memory.charge(
        "orphan removal's candidates and reference keys of a shard",
        held,
    )?;
    let young = super::decide::young_referenced(&piece);
    let mut base = ReportBase::default();
    let mut referenced = young;
    let candidates = piece.candidates() + young;
    let decided = (|| {
        let (verdicts, per_phase) = verdicts(&piece, &mut referenced)?;
        piece.locations = Vec::new();
        piece.names = Vec::new();
        piece.young = Vec::new();
        let mut prune = Vec::new();
        let dirs = std::mem::take(&mut piece.dirs);
        let (phases, kept) = plan_deletions(cfg, dirs, verdicts, per_phase, &mut base, &mut prune)?;
        Ok::<_, Error>((phases, kept, prune))
    })();
    memory.release(held);
    let (mut phases, kept, mut prune) = decided?;
    for p in &mut phases {
        p.sort_unstable_by(|a, b| {
            (&a.location, a.class, a.bytes).cmp(&(&b.location, b.class, b.bytes))
        });
    }
    prune.sort();
    prune.dedup();
    Ok(ShardDecision {
        phases,
        kept,
        prune,
        candidates,
        referenced,
        vetoed: base.vetoed,
    })
}

/// Concludes the sharded decision (driver): with the state of a gate that confirmed its round,
/// the merged summaries and the round's report of every shard (each exactly once), the
/// decision for [`super::units::finish`].
pub(crate) fn conclude(
    state: &State,
    summary: Partial,
    mut reports: Vec<ShardReport>,
) -> Result<Decision> {
    let Some(s) = &state.sharded else {
        return Err(Error::InvalidArgument(
            "the plan state has not been through a shard gate; nothing deleted".into(),
        ));
    };
    if !s.confirmed {
        return Err(Error::InvalidArgument(format!(
            "round {} of the shard decisions is not confirmed: call the gate again after the \
             shards decided, and let the shards decide again while it finds new versions; \
             nothing deleted",
            s.round
        )));
    }
    check_summary(state, &summary, s.shards)?;
    reports.sort_by_key(|r| r.shard);
    for r in &reports {
        if r.decision != s.decision || r.round != s.round || r.shards != s.shards {
            return Err(Error::InvalidArgument(format!(
                "the report of shard {} belongs to another decision or round (round {}, this \
                 one {}); nothing deleted",
                r.shard, r.round, s.round
            )));
        }
    }
    if let Some(w) = reports.windows(2).find(|w| w[0].shard == w[1].shard) {
        return Err(Error::InvalidArgument(format!(
            "shard {} reported twice; nothing deleted",
            w[0].shard
        )));
    }
    if let Some(missing) =
        (0..s.shards).find(|i| reports.get(*i as usize).map(|r| r.shard) != Some(*i))
    {
        return Err(Error::InvalidArgument(format!(
            "{} of {} shard reports are missing (shard {missing} first); nothing deleted",
            s.shards as usize - reports.len().min(s.shards as usize),
            s.shards
        )));
    }
    if reports.len() != s.shards as usize {
        return Err(Error::InvalidArgument(format!(
            "{} shard reports for {} shards; nothing deleted",
            reports.len(),
            s.shards
        )));
    }
    // The counters of the units and of the driver's own reads.
    let found = &state.found;
    let mut refs = summary;
    refs.files_listed += found.files_listed;
    refs.referenced += found.referenced;
    refs.manifests_read += found.manifests_read;
    refs.errors.extend(found.errors.iter().cloned());
    refs.errors.sort();
    refs.empty_dirs.extend(found.empty_dirs.iter().cloned());
    let mut base = report_base(state, &mut refs, s.versions_read);
    let mut prune = std::mem::take(&mut refs.empty_dirs);
    let mut dry = Vec::new();
    let mut ranges = Vec::new();
    for r in reports {
        base.candidates += r.candidates;
        base.referenced += r.referenced;
        base.vetoed += r.vetoed;
        base.kept_name_referenced_elsewhere
            .extend(r.kept_name_referenced_elsewhere);
        prune.extend(r.prune);
        dry.extend(r.dry_deleted);
        if r.units > 0 {
            ranges.push((r.first_unit, r.units));
        }
    }
    base.kept_name_referenced_elsewhere.sort();
    prune.sort();
    prune.dedup();
    Ok(Decision {
        plan: s.decision,
        units: ranges.iter().map(|(_, n)| *n).sum(),
        unit_ranges: ranges,
        dry_run: state.dry_run,
        started_ms: state.started_ms,
        base,
        prune,
        delete_roots: state.delete_roots.clone(),
        dry_deleted: dry,
    })
}
