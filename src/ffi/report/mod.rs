//! The report handle every maintenance operation returns, split by report kind.
//!
//! `base.rs` holds the one opaque [`PaimonCleanupReport`] and the helpers every accessor uses;
//! each other submodule holds the constructor and the `paimon_cleanup_report_*` accessors of one part
//! of it. The submodules are declared in the order of the C header (cbindgen follows it).

// Declaration order is the order of the C header (cbindgen follows it); blank lines keep
// rustfmt from sorting them.
/// File classes: `PaimonCleanupFileClass` and its names.
mod file_class;

/// Report kinds and their names.
mod kind;

/// Rust text as C strings (no C functions).
mod text;

/// The opaque report, its rows and the accessor helpers (no C functions).
mod base;

/// The path listing of a report, mostly in mapped temporary files (no C functions).
mod paths;

/// What produced a report: its kind and whether it was a dry run.
mod identity;

/// Snapshot and changelog expiry: the expired range, the earliest version after it.
mod expire;

/// What every run reports: files and bytes per class, failures, the path listing, removed
/// directories, wall time.
mod outcome;

/// Tag and consumer reports: the names removed and the names missing.
mod names;

/// Partition drops and expiry: partitions, rows / files / bytes marked deleted, commits.
mod partitions;

/// Orphan-file removal: cut-off, candidates, referenced, vetoed, and the warnings.
mod orphans;

/// `paimon_cleanup_maintain`: one sub-report per step.
mod maintain;

/// The report as a whole: its JSON form and `paimon_cleanup_report_free`.
mod whole;

pub use base::PaimonCleanupReport;
pub use expire::*;
pub use file_class::*;
pub use identity::*;
pub use kind::*;
pub use maintain::*;
pub use names::*;
pub use orphans::*;
pub use outcome::*;
pub use partitions::*;
#[cfg(test)]
pub(crate) use paths::IN_MEMORY as PATHS_ON_HEAP;
pub use whole::*;
