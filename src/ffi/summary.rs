//! `paimon_cleanup_table_summary`: a one-call overview of a table.

use std::sync::Arc;

use crate::storage::Storage;
use crate::table::{self, TableSummary};

use super::context::PaimonCleanupContext;
use super::executor::PaimonCleanupExecutor;
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};
use super::util::{handle_ref, out_arg};

/// Overview of one branch of a table (the context's), filled by `paimon_cleanup_table_summary`.
///
/// A plain struct the caller allocates (on the stack is fine); it holds no pointers and needs no
/// freeing.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PaimonCleanupTableSummary {
    /// True when main has at least one snapshot; the two snapshot ids are meaningful only then.
    pub has_snapshots: bool,
    /// Id of the earliest snapshot on main (0 when `has_snapshots` is false).
    pub earliest_snapshot_id: i64,
    /// Id of the latest snapshot on main (0 when `has_snapshots` is false).
    pub latest_snapshot_id: i64,
    /// Number of snapshot files on main.
    pub snapshot_count: u64,
    /// Number of tags on main.
    pub tag_count: u64,
    /// Number of branches other than main.
    pub branch_count: u64,
    /// Number of live data files in main's latest snapshot.
    pub live_file_count: u64,
    /// Total size in bytes of those live data files.
    pub live_file_bytes: u64,
}

impl From<TableSummary> for PaimonCleanupTableSummary {
    fn from(summary: TableSummary) -> Self {
        let has_snapshots =
            summary.latest_snapshot_id.is_some() || summary.earliest_snapshot_id.is_some();
        PaimonCleanupTableSummary {
            has_snapshots,
            earliest_snapshot_id: summary.earliest_snapshot_id.unwrap_or(0),
            latest_snapshot_id: summary.latest_snapshot_id.unwrap_or(0),
            snapshot_count: summary.snapshot_count,
            tag_count: summary.tag_count,
            branch_count: summary.branch_count,
            live_file_count: summary.live_file_count,
            live_file_bytes: summary.live_file_bytes,
        }
    }
}

/// Reads the table of `context` and fills `*out` with an overview of the context's branch
/// (main unless the context's `branch` option names another): snapshot range and count, tag and
/// branch counts, and the live data files of the latest snapshot.
///
/// Read-only: nothing in the table is changed. Blocks the calling thread until done; the work
/// runs on `executor`.
/// Ownership: all arguments stay owned by the caller. `*out` is written only on success.
/// Thread-safety: any number of host threads may call it at once, with the same or different
/// contexts and executors.
/// Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `NOT_FOUND` if the table does
/// not exist; `MALFORMED` if a metadata file cannot be decoded; `STORAGE` for I/O failures;
/// `UNSUPPORTED` for table features the library cannot read; `INVALID_ARGUMENT` for a bad
/// option or URI, or when called from a thread that runs an async runtime. `*err` (when `err` is
/// not NULL) is set to NULL on success and to a new error object on failure.
///
/// # Safety
/// `context` and `executor` must be NULL or live handles; `out` and `err` must be NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_table_summary(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    out: *mut PaimonCleanupTableSummary,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_table_summary";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles (caller's guarantee).
        let context = unsafe { handle_ref(context, F, "context") }?;
        // SAFETY: as above.
        let executor = unsafe { handle_ref(executor, F, "executor") }?;
        let out = out_arg(out, F, "out")?;
        let summary = executor.block_on(F, async {
            let table_ref = context.table_ref();
            let storage = Arc::new(Storage::open(&table_ref.uri, context.options())?);
            table::summarize_branch(storage, context.options(), &table_ref.branch).await
        })??;
        // SAFETY: `out` is non-NULL and writable.
        unsafe { out.write(summary.into()) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}
