//! What produced a report: its kind and whether it was a dry run.

use super::base::{read, PaimonCleanupReport};
use super::kind::PaimonCleanupReportKind;

/// Returns which operation produced the report, or `PAIMON_CLEANUP_REPORT_KIND_NONE` for NULL.
///
/// Thread-safety: any thread, until the report is freed (the same holds for every
/// `paimon_cleanup_report_*` accessor).
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_kind(
    report: *const PaimonCleanupReport,
) -> PaimonCleanupReportKind {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, PaimonCleanupReportKind::None, |r| r.kind) }
}

/// Returns true when the report comes from a dry run: nothing was changed, and the counts and
/// paths describe what a real run would delete. False for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_dry_run(report: *const PaimonCleanupReport) -> bool {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, false, |r| r.dry_run) }
}
