//! The partition part of a report (drop and expiry): partitions, marks, commits.

use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr;

use crate::clean::report::{DeletedPaths, DeletionReport};
use crate::clean::PartitionReport;

use super::base::*;
use super::kind::PaimonCleanupReportKind;
use super::text::c_text;

impl PaimonCleanupReport {
    /// The report of a partition drop (`kind` DropPartitions) or expiry (`kind`
    /// ExpirePartitions).
    pub(crate) fn from_partitions(kind: PaimonCleanupReportKind, report: PartitionReport) -> Self {
        let mut out = Self::empty(kind);
        out.dry_run = report.dry_run;
        out.expired = report.partitions.len() as u64;
        out.names = report.names.iter().cloned().map(c_text).collect();
        out.partitions = report
            .partitions
            .iter()
            .map(|p| ReportPartition {
                fields: p
                    .iter()
                    .map(|(k, v)| (c_text(k.clone()), c_text(v.clone())))
                    .collect(),
            })
            .collect();
        out.files_marked_deleted = report.files_marked_deleted;
        out.rows_marked_deleted = report.rows_marked_deleted;
        out.bytes_marked_deleted = report.bytes_marked_deleted;
        out.committed = report.snapshot_ids.clone();
        // The Iceberg metadata files the drop's metadata refresh deleted: counted and listed
        // like any deletion (class OTHER; their sizes are not read).
        let mut deletion = DeletionReport::default();
        let mut paths = DeletedPaths::default();
        for p in report.iceberg.iter().flat_map(|u| &u.files_deleted) {
            deletion.deleted.entry(p.class).or_default().files += 1;
            paths.push(p.clone());
        }
        out.add_deletion(&deletion, paths);
        out.dry_run = report.dry_run;
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }
}

/// Returns the number of fields (partition keys) of dropped partition `index` (below
/// `paimon_cleanup_report_name_count` of a `DROP_PARTITIONS` / `EXPIRE_PARTITIONS` report); 0 when
/// out of range, for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_partition_field_count(
    report: *const PaimonCleanupReport,
    index: usize,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, 0, |r| {
            r.partitions.get(index).map_or(0, |p| p.fields.len())
        })
    }
}

/// Returns the key of field `field` of dropped partition `index`, or NULL when either is out of
/// range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_partition_key(
    report: *const PaimonCleanupReport,
    index: usize,
    field: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { partition_text(report, index, field, |(k, _)| k) }
}

/// Returns the value of field `field` of dropped partition `index` as the text that, given back in
/// a `PaimonCleanupPartitionSpec`, names exactly this value: the table's default partition name
/// for NULL, a string key's value verbatim (possibly empty or blank: the NULL, `''` and `' '`
/// partitions share a directory but are reported apart), other types as in the partition
/// directory name. NULL when either index is out of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_partition_value(
    report: *const PaimonCleanupReport,
    index: usize,
    field: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { partition_text(report, index, field, |(_, v)| v) }
}

/// Returns how many data files a partition drop or expiry marked deleted in its commit(s) (in a
/// dry run: would mark). The files themselves stay until a snapshot expiry removes the snapshots
/// that still reference them. 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_files_marked_deleted(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.files_marked_deleted) }
}

/// Returns the rows of the files counted by `paimon_cleanup_report_files_marked_deleted`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_rows_marked_deleted(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.rows_marked_deleted) }
}

/// Returns the bytes of the files counted by `paimon_cleanup_report_files_marked_deleted`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_bytes_marked_deleted(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.bytes_marked_deleted) }
}

/// Returns how many snapshots the run committed (partition drop / expiry: one OVERWRITE snapshot
/// per batch; none in a dry run). 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_committed_snapshot_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.committed.len()) }
}

/// Returns the id of committed snapshot `index` (in commit order), or 0 when out of range or
/// `report` is NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_committed_snapshot_id(
    report: *const PaimonCleanupReport,
    index: usize,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.committed.get(index).copied().unwrap_or(0)) }
}

/// A text (key or value, as `text` picks) of field `field` of dropped partition `index` of
/// `report` (NULL when either index is out of range or `report` is NULL), borrowed from the
/// report.
///
/// # Safety
/// `report` must be NULL or a live report.
unsafe fn partition_text(
    report: *const PaimonCleanupReport,
    index: usize,
    field: usize,
    text: fn(&(CString, CString)) -> &CString,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.partitions
                .get(index)
                .and_then(|p| p.fields.get(field))
                .map_or(ptr::null(), |f| text(f).as_ptr())
        })
    }
}
