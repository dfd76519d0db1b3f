//! Tags and consumers: `paimon_cleanup_delete_tag`, `paimon_cleanup_expire_tags`,
//! `paimon_cleanup_expire_consumers`.

use std::future::Future;
use std::os::raw::c_char;
use std::time::Duration;

use crate::clean::expiry::tags::check_tag_name;
use crate::clean::shared::clock::now_millis;
use crate::clean::{delete_tag, expire_consumers, expire_tags, RunControl, TagReport};
use crate::table::Table;

use super::context::PaimonCleanupContext;
use super::control::PaimonCleanupRunOptions;
use super::executor::PaimonCleanupExecutor;
use super::handle::{in_range, MAX_DURATION_MS};
use super::ops::Call;
use super::report::{PaimonCleanupReport, PaimonCleanupReportKind};
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};
use super::util::str_arg;

/// Deletes tag `tag` of the context's branch (its `branch` option, default `main`) and every
/// file only that tag kept (data, changelog, manifest, index and statistics files of its snapshot
/// that no snapshot, other tag, branch or changelog needs). The tag file goes first, so a crash leaves only unreferenced files
/// (which orphan-file removal finds).
///
/// A tag that does not exist is not an error: the call succeeds, deletes nothing and lists the
/// name in the report (`paimon_cleanup_report_missing`), as Paimon does.
/// `tag`: the tag name (the file is `tag/tag-<name>`), non-empty UTF-8. `dry_run`: report what
/// would be deleted, change nothing. `run_options`: may be NULL.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller (`tag` is copied). On success `*out`
/// receives a new report (`PAIMON_CLEANUP_REPORT_KIND_DELETE_TAG`; `paimon_cleanup_report_name`
/// lists the deleted tag), owned by the caller and released with `paimon_cleanup_report_free`;
/// on failure `*out` is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor`, `tag` or `out` is NULL; `INVALID_UTF8`;
/// `INVALID_ARGUMENT` for an empty or blank name or a path-like one (containing `/`, `\\`, `..` or a
/// control character; nothing is deleted); `NOT_FOUND` if the table does
/// not exist; `CANCELLED`; `MALFORMED`, `STORAGE`, `PATH_REFUSED`, `UNSUPPORTED` as their names
/// say. `*err` (when `err` is not NULL) is set to NULL on success and to a new error object on
/// failure.
///
/// # Safety
/// `context`, `executor` and `run_options` must be NULL or live handles; `tag` must be NULL or
/// NUL-terminated; `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_delete_tag(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    tag: *const c_char,
    dry_run: bool,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_delete_tag";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call = unsafe { Call::new(F, context, executor, run_options, out) }?;
        // SAFETY: NULL or NUL-terminated (caller's guarantee).
        let tag = unsafe { str_arg(tag, F, "tag") }?.to_owned();
        if let Err(e) = check_tag_name(&tag) {
            return Err(FfiError::invalid_argument(format!("{F}: {e}")));
        }
        run_tags(
            &call,
            PaimonCleanupReportKind::DeleteTag,
            |table, control| async move { delete_tag(&table, &tag, dry_run, &control).await },
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Expires tags of the context's branch (its `branch` option, default `main`), with the files
/// only they kept (as `paimon_cleanup_delete_tag`), as Paimon Java's `expire_tags` procedure does: every tag whose
/// own retention has passed (`tagCreateTime` + `tagTimeRetained`; time expiry is enabled for the
/// call even when the table sets `tag.time-expire-enabled` to false, which only
/// `paimon_cleanup_maintain` follows), and,
/// when `older_than_ms` > 0, every tag created before `older_than_ms` (milliseconds since the
/// Unix epoch; the tag file's modification time when the tag records no creation time).
///
/// `older_than_ms`: 0 = only tags whose retention passed; must not be negative or in the future.
/// `dry_run`: report what would be deleted, change nothing. `run_options`: may be NULL.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_TAGS`; `paimon_cleanup_report_name` lists the tags),
/// owned by the caller and released with `paimon_cleanup_report_free`; on failure `*out` is left
/// untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `INVALID_ARGUMENT` if
/// `older_than_ms` is negative or in the future; otherwise as `paimon_cleanup_delete_tag`.
/// `*err` (when `err` is not NULL) is set to NULL on success and to a new error object on
/// failure.
///
/// # Safety
/// `context`, `executor` and `run_options` must be NULL or live handles; `out` and `err` must be
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_tags(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    older_than_ms: i64,
    dry_run: bool,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_tags";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call = unsafe { Call::new(F, context, executor, run_options, out) }?;
        let now = now_millis();
        if older_than_ms < 0 || older_than_ms > now {
            return Err(FfiError::invalid_argument(format!(
                "{F}: older_than_ms = {older_than_ms} is out of range (0 = none, else an epoch-ms \
                 time not in the future; now is {now})"
            )));
        }
        let cut = (older_than_ms > 0).then_some(older_than_ms);
        run_tags(
            &call,
            PaimonCleanupReportKind::ExpireTags,
            |table, control| async move { expire_tags(&table, cut, dry_run, &control).await },
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Expires the consumers of the context's branch (its `branch` option, default `main`) that have
/// not advanced (whose consumer file was not modified) for longer than `expiration_ms`, so a dead reader stops protecting
/// snapshots from expiry. Only the consumer files are deleted.
///
/// `expiration_ms`: 0 = the table's `consumer.expiration-time` (INVALID_ARGUMENT when the table
/// has none). `dry_run`: report what would be deleted, change nothing. `run_options`: may be NULL.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CONSUMERS`; `paimon_cleanup_report_name` lists the
/// consumer ids), owned by the caller and released with `paimon_cleanup_report_free`; on failure
/// `*out` is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `INVALID_ARGUMENT` when no
/// expiration is given and the table has none, or when `expiration_ms` is above 2^63-1; `NOT_FOUND`, `CANCELLED`, `MALFORMED`, `STORAGE`,
/// `PATH_REFUSED` as their names say. `*err` (when `err` is not NULL) is set to NULL on success
/// and to a new error object on failure.
///
/// # Safety
/// `context`, `executor` and `run_options` must be NULL or live handles; `out` and `err` must be
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_consumers(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    expiration_ms: u64,
    dry_run: bool,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_consumers";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call = unsafe { Call::new(F, context, executor, run_options, out) }?;
        let expiration_ms = in_range(F, "expiration_ms", expiration_ms, 0..=MAX_DURATION_MS)?;
        let expiration = (expiration_ms > 0).then(|| Duration::from_millis(expiration_ms));
        let report = call.run(|table, control| async move {
            expire_consumers(&table, expiration, dry_run, &control).await
        })?;
        call.deliver(PaimonCleanupReport::from_consumers(report));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Runs the tag operation `op` on the call's table and hands its report out as a report of
/// `kind`.
fn run_tags<F, Fut>(call: &Call<'_>, kind: PaimonCleanupReportKind, op: F) -> Result<(), FfiError>
where
    F: FnOnce(Table, RunControl) -> Fut,
    Fut: Future<Output = crate::Result<TagReport>>,
{
    let report = call.run(op)?;
    call.deliver(PaimonCleanupReport::from_tags(kind, report));
    Ok(())
}
