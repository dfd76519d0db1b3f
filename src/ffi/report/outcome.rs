//! What every run reports: files and bytes per class, failed deletions, the path listing,
//! removed directories, wall time.

use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr;

use crate::clean::report::{Count, DeletedPaths, DeletionReport};

use super::base::*;
use super::file_class::PaimonCleanupFileClass;
use super::paths::ReportPaths;
use super::text::c_text;

impl PaimonCleanupReport {
    /// Takes the deletions of `deletion` into this report (once per report). Its path list must already be
    /// detached (`std::mem::take`) into `paths`, so the JSON base is serialized without it.
    pub(super) fn add_deletion(&mut self, deletion: &DeletionReport, paths: DeletedPaths) {
        self.dry_run |= deletion.dry_run;
        self.paths_elsewhere |= deletion.paths_elsewhere;
        for (class, count) in &deletion.deleted {
            let slot = &mut self.counts[PaimonCleanupFileClass::from(*class) as usize];
            slot.files += count.files;
            slot.bytes += count.bytes;
        }
        self.failed
            .extend(deletion.failed.iter().map(|f| ReportFailure {
                path: c_text(f.path.clone()),
                error: c_text(f.error.clone()),
            }));
        self.paths = ReportPaths::new(&paths);
        self.dirs_removed += deletion.dirs_removed;
    }

    pub(super) fn count(&self, class: i32) -> Count {
        PaimonCleanupFileClass::from_code(class)
            .and_then(|c| self.counts.get(c as usize).copied())
            .unwrap_or_default()
    }

    pub(super) fn own_failed(&self) -> &[ReportFailure] {
        &self.failed
    }
}

/// Returns how many files of class `file_class` (a `PaimonCleanupFileClass` value) the run
/// deleted (in a dry run: would delete). 0 for NULL and for an unknown class.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_files(
    report: *const PaimonCleanupReport,
    file_class: i32,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.count(file_class).files) }
}

/// Returns the total size in bytes of the files of class `file_class` the run deleted (in a dry
/// run: would delete). Sizes come from metadata where it records them, else from the store. 0 for
/// NULL and for an unknown class.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_bytes(
    report: *const PaimonCleanupReport,
    file_class: i32,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.count(file_class).bytes) }
}

/// Returns the number of files deleted (in a dry run: deletable) over all classes; 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_total_files(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.counts.iter().map(|c| c.files).sum()) }
}

/// Returns the bytes deleted (in a dry run: deletable) over all classes; 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_total_bytes(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.counts.iter().map(|c| c.bytes).sum()) }
}

/// Returns the number of deletions that failed (the files are still there; a later run retries
/// them). The operation itself still returned OK. For `MAINTAIN` the failures of every step, in
/// step order. 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_failed_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.list_len(PaimonCleanupReport::own_failed)) }
}

/// Returns the path of failed deletion `index` (0-based, below
/// `paimon_cleanup_report_failed_count`), relative to the table root when it lies under it, or
/// NULL when `index` is out of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_failed_path(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { failure_text(report, index, |f| &f.path) }
}

/// Returns the error message of failed deletion `index`, or NULL when `index` is out of range or
/// `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_failed_error(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { failure_text(report, index, |f| &f.error) }
}

/// Returns the number of paths in the report's listing: every file the run deleted, or in a dry
/// run every file it would delete, in deletion order (for `MAINTAIN`: every step's, in step
/// order). Equals `paimon_cleanup_report_total_files` unless
/// `paimon_cleanup_report_paths_elsewhere` is true. 0 for NULL. A partition drop or expiry
/// deletes no data file (it commits a snapshot that marks them deleted; a later snapshot expiry
/// deletes them): its listing holds only the Iceberg-compatible metadata files its metadata
/// refresh replaced (class `OTHER`), on tables that keep such metadata.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_path_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.path_len()) }
}

/// Returns true when the path listing is a sample, not every file: a snapshot expiry run as
/// units whose gate handed the freed data and changelog paths to the tasks
/// (`paimon_cleanup_expiry_units_gate_with_paths` with `paths_to_tasks`). The listing then holds
/// the metadata files the driver deleted and the first paths of each task, the tasks' own
/// `out_paths` hold the rest, and the counts per class and the failures stay complete. For
/// `MAINTAIN`, true when any step's is. False for NULL and for every report of a one-call run.
///
/// A host that shows or archives the listing as "what was deleted" must say it is a sample
/// when this is true (the JSON says `"paths_elsewhere": true` under `"deletion"`).
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_paths_elsewhere(
    report: *const PaimonCleanupReport,
) -> bool {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, false, |r| r.paths_elsewhere) }
}

/// Returns path `index` (0-based, below `paimon_cleanup_report_path_count`) of the listing,
/// relative to the table root when it lies under it (`f1=10/bucket-0/data-….orc`,
/// `manifest/manifest-list-…`), else the full URI (external data paths). NULL when `index` is out
/// of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_path(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.path_get(index).map_or(ptr::null(), |(path, _)| path)
        })
    }
}

/// Returns the file class of path `index` of the listing. `index` must be below
/// `paimon_cleanup_report_path_count`; for an out-of-range index or a NULL report the answer is
/// `PAIMON_CLEANUP_FILE_CLASS_OTHER`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_path_class(
    report: *const PaimonCleanupReport,
    index: usize,
) -> PaimonCleanupFileClass {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, PaimonCleanupFileClass::Other, |r| {
            r.path_get(index)
                .map_or(PaimonCleanupFileClass::Other, |(_, class)| class)
        })
    }
}

/// Returns the number of directories the run removed because they were left empty (bucket and
/// partition directories; only when empty-directory cleaning is on and not in a dry run). 0 for
/// NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_dirs_removed(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.dirs_removed) }
}

/// Returns the wall time of the run in milliseconds; 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_elapsed_ms(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.elapsed_ms) }
}

/// A text of failed deletion `index` of `report` (NULL when out of range or `report` is NULL),
/// borrowed from the report.
///
/// # Safety
/// `report` must be NULL or a live report.
unsafe fn failure_text(
    report: *const PaimonCleanupReport,
    index: usize,
    text: fn(&ReportFailure) -> &CString,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.list_get(PaimonCleanupReport::own_failed, index)
                .map_or(ptr::null(), |f| text(f).as_ptr())
        })
    }
}
