//! The orphan-removal part of a report, and the warnings of every kind.

use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr;

use crate::clean::OrphanReport;

use super::base::*;
use super::kind::PaimonCleanupReportKind;
use super::text::c_texts;

impl PaimonCleanupReport {
    /// The report of an orphan-file removal.
    pub(crate) fn from_orphans(mut report: OrphanReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::RemoveOrphanFiles);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.cutoff_ms = Some(report.older_than_ms);
        out.candidates = report.candidates;
        out.referenced = report.referenced;
        out.vetoed = report.vetoed;
        out.elapsed_ms = report.elapsed_ms;
        let mut warnings: Vec<String> = report
            .skipped
            .iter()
            .map(|s| format!("not listed, nothing deleted there: {s}"))
            .collect();
        warnings.extend(
            report
                .branches_without_schema
                .iter()
                .map(|b| format!("branch without a schema (its versions were still read): {b}")),
        );
        warnings.extend(
            report
                .kept_name_referenced_elsewhere
                .iter()
                .map(|p| format!("kept {p}: its file name is referenced at another location")),
        );
        out.warnings = c_texts(warnings);
        out.json_base = to_json(&report);
        out
    }

    pub(super) fn own_warnings(&self) -> &[CString] {
        &self.warnings
    }
}

/// Returns the cut-off an orphan-file removal used (milliseconds since the Unix epoch): only files
/// modified before it were candidates. 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_cutoff_ms(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.cutoff_ms.unwrap_or(0)) }
}

/// Returns how many files an orphan-file removal examined: the files in the directories it lists
/// that a snapshot, tag, branch or changelog references (whatever their age), plus the
/// unreferenced ones older than the cut-off. Each was then referenced, vetoed, kept with a
/// warning, or deleted (in a dry run: listed as deletable). 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_candidates(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.candidates) }
}

/// Returns how many listed files an orphan-file removal kept because a snapshot, tag, branch or
/// changelog references their location, whatever their age (it is not read). 0 for other kinds
/// and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_referenced(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.referenced) }
}

/// Returns how many candidates an orphan-file removal kept because the caller's veto callback
/// returned true for them. 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_vetoed(report: *const PaimonCleanupReport) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.vetoed) }
}

/// Returns the number of warnings: things the run deliberately did not touch and why (for an
/// orphan-file removal: directories it could not list, branches without a schema, files kept
/// because their name is referenced at another location). For `MAINTAIN` every step's, in step
/// order. 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_warning_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.list_len(PaimonCleanupReport::own_warnings)) }
}

/// Returns warning `index` (below `paimon_cleanup_report_warning_count`) as readable text, or NULL
/// when out of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_warning(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.list_get(PaimonCleanupReport::own_warnings, index)
                .map_or(ptr::null(), |w| w.as_ptr())
        })
    }
}
