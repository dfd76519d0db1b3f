//! The `paimon_cleanup_maintain` part of a report: one sub-report per step.

use std::ptr;

use crate::clean::MaintainReport;

use super::base::*;
use super::kind::PaimonCleanupReportKind;

impl PaimonCleanupReport {
    /// The report of `maintain`: one step per operation that ran, in the order they ran.
    pub(crate) fn from_maintain(mut report: MaintainReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::Maintain);
        if let Some(r) = report.tags.take() {
            out.add_step(
                "tags",
                Self::from_tags(PaimonCleanupReportKind::ExpireTags, r),
            );
        }
        if let Some(r) = report.partitions.take() {
            out.add_step(
                "partitions",
                Self::from_partitions(PaimonCleanupReportKind::ExpirePartitions, r),
            );
        }
        if let Some(r) = report.consumers.take() {
            out.add_step("consumers", Self::from_consumers(r));
        }
        if let Some(r) = report.snapshots.take() {
            out.add_step("snapshots", Self::from_expire_snapshots(r));
        }
        if let Some(r) = report.changelogs.take() {
            out.add_step("changelogs", Self::from_expire_changelogs(r));
        }
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    pub(super) fn add_step(&mut self, key: &'static str, step: PaimonCleanupReport) {
        self.dry_run |= step.dry_run;
        self.paths_elsewhere |= step.paths_elsewhere;
        for (total, part) in self.counts.iter_mut().zip(&step.counts) {
            total.files += part.files;
            total.bytes += part.bytes;
        }
        self.dirs_removed += step.dirs_removed;
        self.steps.push((key, step));
    }
}

/// Returns the number of sub-reports: for `MAINTAIN`, one per step that ran, in the order they
/// ran (`EXPIRE_TAGS`, `EXPIRE_CONSUMERS`, `EXPIRE_SNAPSHOTS`, `EXPIRE_CHANGELOGS`; a step the
/// table's options do not ask for is absent). 0 for other kinds and for NULL. The parent's file
/// counts, bytes and removed directories are the sums of its steps'; its failures, paths and
/// warnings are its steps', concatenated in step order.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_step_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.steps.len()) }
}

/// Returns sub-report `index` (below `paimon_cleanup_report_step_count`), or NULL when out of
/// range or `report` is NULL. Read it with the same `paimon_cleanup_report_*` accessors.
///
/// Ownership: borrowed from (owned by) `report`: valid until `report` is freed; never pass it to
/// `paimon_cleanup_report_free`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_step(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const PaimonCleanupReport {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.steps
                .get(index)
                .map_or(ptr::null(), |(_, s)| s as *const PaimonCleanupReport)
        })
    }
}
