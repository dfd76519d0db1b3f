//! The snapshot- and changelog-expiry part of a report.

use crate::clean::{ChangelogExpireReport, ExpireReport};

use super::base::*;
use super::kind::PaimonCleanupReportKind;

impl PaimonCleanupReport {
    /// The report of a snapshot expiry.
    pub(crate) fn from_expire_snapshots(mut report: ExpireReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::ExpireSnapshots);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.snapshots_expired;
        out.first_expired = report.first_expired;
        out.last_expired = report.last_expired;
        out.earliest_after = report.earliest_after;
        out.changelogs_written = report.changelogs_written;
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    /// The report of a changelog expiry.
    pub(crate) fn from_expire_changelogs(mut report: ChangelogExpireReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::ExpireChangelogs);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.changelogs_expired;
        out.first_expired = report.first_expired;
        out.last_expired = report.last_expired;
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }
}

/// Returns how many items the run removed (in a dry run: would remove): snapshots for
/// `EXPIRE_SNAPSHOTS`, changelogs for `EXPIRE_CHANGELOGS`, tags for `DELETE_TAG` / `EXPIRE_TAGS`,
/// consumers for `EXPIRE_CONSUMERS`, partitions for `DROP_PARTITIONS` / `EXPIRE_PARTITIONS`;
/// 0 for `REMOVE_ORPHAN_FILES` (see the file counts), `MAINTAIN` (see its steps) and NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_expired_count(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.expired) }
}

/// Returns true when the report has an expired id range, i.e. when
/// `paimon_cleanup_report_first_expired_id` / `_last_expired_id` are meaningful: at least one
/// snapshot (`EXPIRE_SNAPSHOTS`) or changelog (`EXPIRE_CHANGELOGS`) expired. False otherwise and
/// for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_has_expired_range(
    report: *const PaimonCleanupReport,
) -> bool {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, false, |r| {
            r.first_expired.is_some() && r.last_expired.is_some()
        })
    }
}

/// Returns the id of the first (oldest) version expired, or 0 when
/// `paimon_cleanup_report_has_expired_range` is false.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_first_expired_id(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.first_expired.unwrap_or(0)) }
}

/// Returns the id of the last (newest) version expired, or 0 when
/// `paimon_cleanup_report_has_expired_range` is false.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_last_expired_id(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.last_expired.unwrap_or(0)) }
}

/// Returns true when `paimon_cleanup_report_earliest_after_id` is meaningful: an
/// `EXPIRE_SNAPSHOTS` report of a table that had snapshots. False otherwise and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_has_earliest_after(
    report: *const PaimonCleanupReport,
) -> bool {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, false, |r| r.earliest_after.is_some()) }
}

/// Returns the id of the earliest version left after the run (in a dry run: that would be left),
/// or 0 when `paimon_cleanup_report_has_earliest_after` is false.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_earliest_after_id(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.earliest_after.unwrap_or(0)) }
}

/// Returns how many long-lived changelog files a snapshot expiry wrote (tables whose changelog
/// lifecycle is decoupled from snapshots, `changelog.num-retained.*`); 0 otherwise and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_changelogs_written(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.changelogs_written) }
}
