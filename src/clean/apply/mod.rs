//! Plan, review, apply: a dry run's exact deletion plan written as a versioned document
//! ([`Plan`], [`make_plan`]), reviewed by a person, then applied as reviewed
//! ([`apply_plan`]).
//!
//! **What this deletes.** Only the files the plan lists, each at most once, and only after
//! every check below passed for the whole plan; nothing the plan does not name (apart from
//! moving the `EARLIEST` hint of `snapshot/` or `changelog/` past the version files it deleted,
//! as expiry does). The deletions go in the crash-safe order of the operations: tag and
//! consumer files, then data and changelog data files, then manifests, index files and
//! statistics, then manifest lists and index manifests, then snapshot files and changelog
//! files (ascending), then the hints. A rerun after a crash converges: a planned file already
//! gone counts as gone.
//!
//! **What keeps a file.** Before anything is deleted:
//!
//! * the plan is refused whole ([`Error::Conflict`], nothing deleted) when it is older than
//!   the caller's bound ([`ApplyConfig::max_plan_age_ms`]) or dated in the future; when the
//!   table was replaced (its first schema file, `schema/schema-<n>` of the lowest id, is gone
//!   or differs from the one the plan recorded); or when the retention the plan relied on no
//!   longer holds: a version file it deletes (snapshot, changelog, tag, consumer) changed
//!   since, the branch's latest snapshot is older than at planning (a rollback), a planned
//!   snapshot is now the latest one or would leave an older snapshot behind, or a consumer the
//!   plan keeps now reads from a planned snapshot;
//! * every path must lie below the table root (or a configured external data root), where a
//!   file of its kind lives, and resolve beneath its root with no symlink
//!   ([`Deleter::check_plan`](crate::clean::shared::deleter::Deleter::check_plan) with the
//!   table's [`KindRules`](crate::clean::shared::kinds::KindRules)):
//!   a violation refuses the whole plan ([`Error::PathRefused`]);
//! * a planned file that any version present now references (every snapshot, tag and
//!   long-lived changelog of every branch, apart from the versions the plan itself deletes) is
//!   kept and reported in [`ApplyReport::skipped`]: a version committed since the plan, a tag
//!   or branch created since, or a writer's commit that adopted the file. A version is read
//!   as readers read it: the first snapshot of each run of consecutive ids by its live files,
//!   the later ones by the files their deltas add; each tag by its live files; each long-lived
//!   changelog by what its changelog list and delta add; and every version by its manifest
//!   lists, manifests, index manifest and index files, and statistics. Metadata a present
//!   version needs that cannot be read refuses the plan;
//! * a planned file whose size differs from the plan's is kept and reported (it is not the
//!   file that was reviewed).

mod plan;
mod refs;
mod run;

pub use plan::{make_plan, BranchState, Plan, PlanFile, PlanIdentity, PLAN_FORMAT, PLAN_VERSION};
pub use run::{
    apply_plan, ApplyConfig, ApplyReport, SkippedFile, DEFAULT_MAX_PLAN_AGE_MS,
    MAX_PLAN_AGE_BOUND_MS,
};
