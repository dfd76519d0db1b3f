//! The tag and consumer part of a report: the names removed and the names missing.

use std::os::raw::c_char;
use std::ptr;

use crate::clean::{ConsumerReport, TagReport};

use super::base::*;
use super::kind::PaimonCleanupReportKind;
use super::text::c_texts;

impl PaimonCleanupReport {
    /// The report of a tag deletion (`kind` DeleteTag) or tag expiry (`kind` ExpireTags).
    pub(crate) fn from_tags(kind: PaimonCleanupReportKind, mut report: TagReport) -> Self {
        let mut out = Self::empty(kind);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.tags_deleted.len() as u64;
        out.names = c_texts(report.tags_deleted.clone());
        out.missing = c_texts(report.tags_not_found.clone());
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    /// The report of a consumer expiry.
    pub(crate) fn from_consumers(mut report: ConsumerReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::ExpireConsumers);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.expired.len() as u64;
        out.names = c_texts(report.expired.clone());
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }
}

/// Returns the number of names in the report: the tags deleted (`DELETE_TAG`, `EXPIRE_TAGS`), the
/// consumer ids expired (`EXPIRE_CONSUMERS`), or the partitions dropped (`DROP_PARTITIONS`,
/// `EXPIRE_PARTITIONS`) written `key=value/key2=value2` in partition key order for display, NULL
/// as `NULL` and empty, blank or otherwise ambiguous strings quoted (`p=''`, `p=' '`,
/// `p='NULL'`), one per distinct partition value (use `paimon_cleanup_report_partition_key` /
/// `_value` for exact values). In a dry run: what would be removed. 0 for other kinds and for
/// NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_name_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.names.len()) }
}

/// Returns name `index` (below `paimon_cleanup_report_name_count`), or NULL when out of range or
/// `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_name(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.names.get(index).map_or(ptr::null(), |n| n.as_ptr())
        })
    }
}

/// Returns the number of requested items that did not exist, so nothing was done for them (the
/// tag of a `DELETE_TAG` that is not there). 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_missing_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.missing.len()) }
}

/// Returns missing item `index` (below `paimon_cleanup_report_missing_count`), or NULL when out of
/// range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_missing(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.missing.get(index).map_or(ptr::null(), |n| n.as_ptr())
        })
    }
}
