//! The one opaque report, the rows it is made of, and the helpers every accessor uses.

use std::ffi::CString;
use std::sync::OnceLock;

use serde::Serialize;

use crate::clean::report::Count;

use super::file_class::{PaimonCleanupFileClass, PAIMON_CLEANUP_FILE_CLASS_COUNT};
use super::kind::PaimonCleanupReportKind;
use super::paths::ReportPaths;
use crate::ffi::status::boundary_infallible;

/// A deletion that failed: the path and the error text.
#[derive(Debug)]
pub(super) struct ReportFailure {
    pub(super) path: CString,
    pub(super) error: CString,
}

/// One partition: its key/value pairs in partition-key order of the directory names.
#[derive(Debug)]
pub(super) struct ReportPartition {
    pub(super) fields: Vec<(CString, CString)>,
}

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
    pub(super) kind: PaimonCleanupReportKind,
    pub(super) dry_run: bool,
    pub(super) expired: u64,
    pub(super) first_expired: Option<i64>,
    pub(super) last_expired: Option<i64>,
    pub(super) earliest_after: Option<i64>,
    pub(super) changelogs_written: u64,
    /// Files and bytes per class, including those of the steps.
    pub(super) counts: Vec<Count>,
    /// This report's own failures (the steps' follow in the accessors).
    pub(super) failed: Vec<ReportFailure>,
    /// This report's own paths (the steps' follow in the accessors), mostly in mapped
    /// temporary files past a small number (see `paths.rs`).
    pub(super) paths: ReportPaths,
    /// True when the path listing is a sample: the run's tasks kept the freed data and
    /// changelog paths (expiry as units with the paths handed to the tasks); own or a step's.
    pub(super) paths_elsewhere: bool,
    /// This report's own warnings (the steps' follow in the accessors).
    pub(super) warnings: Vec<CString>,
    /// Directories removed, including those of the steps.
    pub(super) dirs_removed: u64,
    pub(super) elapsed_ms: u64,
    pub(super) names: Vec<CString>,
    pub(super) missing: Vec<CString>,
    pub(super) partitions: Vec<ReportPartition>,
    pub(super) files_marked_deleted: u64,
    pub(super) rows_marked_deleted: u64,
    pub(super) bytes_marked_deleted: u64,
    pub(super) committed: Vec<i64>,
    pub(super) cutoff_ms: Option<i64>,
    pub(super) candidates: u64,
    pub(super) referenced: u64,
    pub(super) vetoed: u64,
    /// Sub-reports with the JSON key they appear under.
    pub(super) steps: Vec<(&'static str, PaimonCleanupReport)>,
    /// The Rust report as JSON, without its path list (kept once, in `paths`) and its steps.
    pub(super) json_base: serde_json::Value,
    /// The full JSON text, built on first request.
    pub(super) json: OnceLock<CString>,
}

/// The JSON of a Rust report, or a JSON string naming the failure (never expected).
pub(super) fn to_json<T: Serialize>(report: &T) -> serde_json::Value {
    serde_json::to_value(report)
        .unwrap_or_else(|e| serde_json::Value::String(format!("report not serializable: {e}")))
}

impl PaimonCleanupReport {
    pub(super) fn empty(kind: PaimonCleanupReportKind) -> Self {
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
            paths: ReportPaths::default(),
            paths_elsewhere: false,
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
    pub(super) fn list_len<T>(&self, own: fn(&Self) -> &[T]) -> usize {
        own(self).len()
            + self
                .steps
                .iter()
                .map(|(_, s)| s.list_len(own))
                .sum::<usize>()
    }

    /// Number of paths of this report and its steps.
    pub(super) fn path_len(&self) -> usize {
        self.paths.len() + self.steps.iter().map(|(_, s)| s.path_len()).sum::<usize>()
    }

    /// Path `index` (with its class) over this report and, after it, its steps. The pointer is
    /// valid as long as the report.
    pub(super) fn path_get(
        &self,
        mut index: usize,
    ) -> Option<(*const std::os::raw::c_char, PaimonCleanupFileClass)> {
        if index < self.paths.len() {
            return self.paths.get(index);
        }
        index -= self.paths.len();
        for (_, step) in &self.steps {
            let len = step.path_len();
            if index < len {
                return step.path_get(index);
            }
            index -= len;
        }
        None
    }

    /// Element `index` of a list over this report and, after it, its steps.
    pub(super) fn list_get<T>(&self, own: fn(&Self) -> &[T], mut index: usize) -> Option<&T> {
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
pub(super) unsafe fn get<'a>(
    report: *const PaimonCleanupReport,
) -> Option<&'a PaimonCleanupReport> {
    // SAFETY: guaranteed by the caller.
    unsafe { report.as_ref() }
}

/// Runs an accessor: `fallback` for a NULL report or a panic.
///
/// # Safety
/// `report` must be NULL or a live report.
pub(super) unsafe fn read<T>(
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
