//! The report handle every maintenance operation returns, split by report kind.
//!
//! `mod.rs` holds the one opaque [`PaimonCleanupReport`] and the helpers every accessor uses;
//! each submodule holds the constructor and the `paimon_cleanup_report_*` accessors of one part
//! of it. The submodules are declared in the order of the C header (cbindgen follows it).

use std::ffi::CString;
use std::sync::OnceLock;

use serde::Serialize;

use crate::clean::report::Count;

use super::status::boundary_infallible;

// Declaration order is the order of the C header (cbindgen follows it); blank lines keep
// rustfmt from sorting them.
/// File classes: `PaimonCleanupFileClass` and its names.
mod file_class;

/// Report kinds, and the kind and dry-run flag of a report.
mod kind;

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

pub use expire::*;
pub use file_class::*;
pub use kind::*;
pub use maintain::*;
pub use names::*;
pub use orphans::*;
pub use outcome::*;
pub use partitions::*;
pub use whole::*;

use outcome::{ReportFailure, ReportPath};
use partitions::ReportPartition;

/// The outcome of a maintenance operation.
///
/// One opaque report type serves every operation; `paimon_cleanup_report_kind` says which one
/// produced it and the accessors that do not apply to that kind return 0 / false / NULL. Counts
/// per file class, failed deletions, the list of deleted (in a dry run: deletable) paths,
/// warnings and the JSON form are common to all kinds.
///
/// Created by the operation (through its `PaimonCleanupReport **out` parameter), owned by the
/// caller, released with `paimon_cleanup_report_free`. Immutable and thread-safe: any thread may
/// read it until it is freed. Strings and sub-reports returned by its accessors are borrowed from
/// it and stay valid until it is freed.
#[derive(Debug)]
pub struct PaimonCleanupReport {
    kind: PaimonCleanupReportKind,
    dry_run: bool,
    expired: u64,
    first_expired: Option<i64>,
    last_expired: Option<i64>,
    earliest_after: Option<i64>,
    changelogs_written: u64,
    /// Files and bytes per class, including those of the steps.
    counts: Vec<Count>,
    /// This report's own failures (the steps' follow in the accessors).
    failed: Vec<ReportFailure>,
    /// This report's own paths (the steps' follow in the accessors).
    paths: Vec<ReportPath>,
    /// This report's own warnings (the steps' follow in the accessors).
    warnings: Vec<CString>,
    /// Directories removed, including those of the steps.
    dirs_removed: u64,
    elapsed_ms: u64,
    names: Vec<CString>,
    missing: Vec<CString>,
    partitions: Vec<ReportPartition>,
    files_marked_deleted: u64,
    rows_marked_deleted: u64,
    bytes_marked_deleted: u64,
    committed: Vec<i64>,
    cutoff_ms: Option<i64>,
    candidates: u64,
    referenced: u64,
    vetoed: u64,
    /// Sub-reports with the JSON key they appear under.
    steps: Vec<(&'static str, PaimonCleanupReport)>,
    /// The Rust report as JSON, without its path list (kept once, in `paths`) and its steps.
    json_base: serde_json::Value,
    /// The full JSON text, built on first request.
    json: OnceLock<CString>,
}

/// A C string from report text; an interior NUL (never expected) is replaced, not dropped.
fn c_text(text: String) -> CString {
    CString::new(text).unwrap_or_else(|e| {
        let text = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{FFFD}");
        CString::new(text).unwrap_or_default()
    })
}

fn c_texts(texts: Vec<String>) -> Vec<CString> {
    texts.into_iter().map(c_text).collect()
}

/// The JSON of a Rust report, or a JSON string naming the failure (never expected).
fn to_json<T: Serialize>(report: &T) -> serde_json::Value {
    serde_json::to_value(report)
        .unwrap_or_else(|e| serde_json::Value::String(format!("report not serializable: {e}")))
}

impl PaimonCleanupReport {
    fn empty(kind: PaimonCleanupReportKind) -> Self {
        PaimonCleanupReport {
            kind,
            dry_run: false,
            expired: 0,
            first_expired: None,
            last_expired: None,
            earliest_after: None,
            changelogs_written: 0,
            counts: vec![Count::default(); PAIMON_CLEANUP_FILE_CLASS_COUNT as usize],
            failed: Vec::new(),
            paths: Vec::new(),
            warnings: Vec::new(),
            dirs_removed: 0,
            elapsed_ms: 0,
            names: Vec::new(),
            missing: Vec::new(),
            partitions: Vec::new(),
            files_marked_deleted: 0,
            rows_marked_deleted: 0,
            bytes_marked_deleted: 0,
            committed: Vec::new(),
            cutoff_ms: None,
            candidates: 0,
            referenced: 0,
            vetoed: 0,
            steps: Vec::new(),
            json_base: serde_json::Value::Null,
            json: OnceLock::new(),
        }
    }

    /// Length of a list over this report and, after it, its steps.
    fn list_len<T>(&self, own: fn(&Self) -> &[T]) -> usize {
        own(self).len()
            + self
                .steps
                .iter()
                .map(|(_, s)| s.list_len(own))
                .sum::<usize>()
    }

    /// Element `index` of a list over this report and, after it, its steps.
    fn list_get<T>(&self, own: fn(&Self) -> &[T], mut index: usize) -> Option<&T> {
        let mine = own(self);
        if index < mine.len() {
            return mine.get(index);
        }
        index -= mine.len();
        for (_, step) in &self.steps {
            let len = step.list_len(own);
            if index < len {
                return step.list_get(own, index);
            }
            index -= len;
        }
        None
    }
}

/// Reads a report pointer inside an infallible accessor.
///
/// # Safety
/// `report` must be NULL or a live report.
unsafe fn get<'a>(report: *const PaimonCleanupReport) -> Option<&'a PaimonCleanupReport> {
    // SAFETY: guaranteed by the caller.
    unsafe { report.as_ref() }
}

/// Runs an accessor: `fallback` for a NULL report or a panic.
///
/// # Safety
/// `report` must be NULL or a live report.
unsafe fn read<T>(
    report: *const PaimonCleanupReport,
    fallback: T,
    f: impl FnOnce(&PaimonCleanupReport) -> T,
) -> T
where
    T: Copy,
{
    boundary_infallible(fallback, || {
        // SAFETY: guaranteed by the caller.
        unsafe { get(report) }.map_or(fallback, f)
    })
}
