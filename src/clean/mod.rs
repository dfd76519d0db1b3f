//! Cleanup capabilities over the table layer, grouped by job: `apply` (reviewed plans applied
//! as reviewed), `expiry` (snapshots, changelogs,
//! tags, consumers and the retention rules they share), `orphans` (orphan-file removal),
//! `partitions` (partition drop and expiry), `maintain` (the combined run), with the run
//! control (`control`), the reports (`report`) and the machinery they share (`shared`).
//!
//! The public Rust API is what this module re-exports: every entry point, its configuration and
//! report, the run control and the units of orphan removal ([`orphan_units`]). The modules
//! themselves are crate-private; the `internal-api` feature (on for the tools in the workspace
//! member `tools/`) makes them public, with no promise of stability.

#[cfg(feature = "internal-api")]
pub mod apply;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod apply;
#[cfg(feature = "internal-api")]
pub mod control;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod control;
#[cfg(feature = "internal-api")]
pub mod expiry;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod expiry;
#[cfg(feature = "internal-api")]
pub mod maintain;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod maintain;
#[cfg(feature = "internal-api")]
pub mod orphans;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod orphans;
#[cfg(feature = "internal-api")]
pub mod partitions;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod partitions;
#[cfg(feature = "internal-api")]
pub mod report;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod report;
#[cfg(feature = "internal-api")]
pub mod shared;
#[cfg(not(feature = "internal-api"))]
pub(crate) mod shared;

pub use apply::{
    apply_plan, make_plan, ApplyConfig, ApplyReport, BranchState, Plan, PlanFile, PlanIdentity,
    SkippedFile, DEFAULT_MAX_PLAN_AGE_MS, MAX_PLAN_AGE_BOUND_MS, PLAN_FORMAT, PLAN_VERSION,
};
pub use control::{CancelToken, CommitHook, CommitStep, ProgressFn, RunControl};
pub use expiry::changelogs::{expire_changelogs, ChangelogExpireConfig, ChangelogExpireReport};
pub use expiry::consumers::{expire_consumers, ConsumerReport};
pub use expiry::range::ExpiryBound;
pub use expiry::retention::{AssumeRemoved, RetentionOverrides};
pub use expiry::snapshots::{expire_snapshots, ExpireConfig, ExpireReport};
pub use expiry::tags::{check_tag_name, delete_tag, delete_tags, expire_tags, TagReport};
pub use expiry::units as expiry_units;
pub use maintain::{maintain, MaintainConfig, MaintainReport};
pub use orphans::units as orphan_units;
pub use orphans::{
    remove_orphan_files, OrphanConfig, OrphanReport, VetoFn, DEFAULT_OLDER_THAN_MS,
    MIN_WINDOW_WITH_WRITERS_MS,
};
pub use partitions::iceberg::IcebergUpdate;
pub use partitions::{
    drop_partitions, expire_partitions, preview_drop_partitions, PartitionExpireConfig,
    PartitionExpireStrategy, PartitionReport,
};
pub use report::{
    Count, DeletedPath, DeletedPaths, DeletedPathsIter, DeletionReport, FailedDelete, FileClass,
};
