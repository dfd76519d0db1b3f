//! Run options shared by every long operation: a progress callback and a cancellation token,
//! mapped onto [`RunControl`].

use std::ffi::{c_void, CStr, CString};
use std::os::raw::c_char;
use std::sync::{Arc, Mutex, PoisonError};

use crate::clean::control::{CancelToken, ProgressFn, RunControl};

use super::log::{LogSettings, PaimonCleanupLogFn, RunLog};

use super::callback::CCallback;
use super::handle::{
    free_handle, new_handle, new_settings, set, settings_handle, Settings, SettingsHandle,
};
use super::status::{boundary_infallible, PaimonCleanupError, PaimonCleanupStatus};

/// Progress callback of a long operation.
///
/// Arguments: the `user_data` given to `paimon_cleanup_run_options_set_progress`; `phase`, a
/// short NUL-terminated UTF-8 description of the current step (for example `"data files"`,
/// `"manifests"`), borrowed for the duration of the call only (copy it to keep it); `done` and
/// `total`, the items of that phase processed so far and in all (`total` may be 0 when unknown,
/// and may grow during a phase whose work is still being planned, as orphan removal's reading of
/// references while later versions are planned; `done` never exceeds it); `bytes`, the bytes deleted (or, in a dry run, deletable) so far in the whole run.
///
/// Thread rules: called on the thread that called the operation or on one of the executor's
/// worker threads, never after the operation has returned. Calls belonging to one operation
/// never overlap (the library serializes them), but two operations running at once may call the
/// same callback at the same time, so shared state in `user_data` needs its own locking. The
/// callback must return quickly, must not throw a C++ exception or `longjmp` out, and must not
/// call a blocking operation of this library (it may call `paimon_cleanup_cancel_token_cancel`).
pub type PaimonCleanupProgressFn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        phase: *const c_char,
        done: u64,
        total: u64,
        bytes: u64,
    ),
>;

/// A cancellation token: a flag a host sets from any thread to stop the operations that watch it.
///
/// Created by `paimon_cleanup_cancel_token_new`, owned by the caller, released with
/// `paimon_cleanup_cancel_token_free`. Thread-safe (`Send + Sync`). Attach it to a run-options
/// handle with `paimon_cleanup_run_options_set_cancel_token`; one token may be attached to many
/// run options (cancelling it stops all of their operations). Once cancelled it stays cancelled.
pub struct PaimonCleanupCancelToken {
    token: CancelToken,
}

type ProgressCallback =
    CCallback<unsafe extern "C" fn(user_data: *mut c_void, phase: *const c_char, u64, u64, u64)>;

impl ProgressCallback {
    fn call(&self, phase: &CStr, done: u64, total: u64, bytes: u64) {
        // SAFETY: the host guarantees the callback may be called with its user data from any
        // thread while the operation runs; `phase` outlives the call.
        unsafe { (self.function)(self.user_data, phase.as_ptr(), done, total, bytes) }
    }
}

/// What run options hold: the progress callback, the cancellation token, the log callback and
/// the memory bound.
#[derive(Clone, Default)]
pub(crate) struct RunSettings {
    progress: Option<ProgressCallback>,
    cancel: Option<CancelToken>,
    log: Option<LogSettings>,
    max_memory: Option<u64>,
}

/// Options of one long operation: a progress callback, a cancellation token, a log callback and
/// a memory bound, all optional.
///
/// Created by `paimon_cleanup_run_options_new`, owned by the caller, released with
/// `paimon_cleanup_run_options_free`. Thread-safe (`Send + Sync`): the setters may be called
/// while other threads run operations with the same options; an operation uses the settings as
/// they were when it started. Every operation taking run options also accepts NULL (no progress,
/// no cancellation).
pub struct PaimonCleanupRunOptions(Settings<RunSettings>);

settings_handle!(PaimonCleanupRunOptions, RunSettings, "options");

/// The log dispatcher of one operation run with `options`, if they carry a log callback. The
/// callback is closed (never called again) when the returned value is dropped.
pub(crate) fn run_log(options: Option<&PaimonCleanupRunOptions>) -> Option<RunLog> {
    options
        .and_then(|o| o.settings().get().log)
        .map(RunLog::new)
}

/// Closes the progress callback of one operation when dropped: waits for a call in progress to
/// return and lets no call through afterwards. The operation's caller drops it once the
/// operation returned, so the host's callback is never called after that, even while tasks of
/// a cancelled or failed run are still winding down on the library's threads (the run options'
/// documented promise: the host may then free the callback's user data, or exit).
#[must_use = "dropping it at once closes the progress callback"]
pub(crate) struct ProgressClose(Option<Arc<Mutex<bool>>>);

impl Drop for ProgressClose {
    fn drop(&mut self) {
        if let Some(open) = &self.0 {
            *open.lock().unwrap_or_else(PoisonError::into_inner) = false;
        }
    }
}

/// The [`RunControl`] of one operation: the run options' callback, token and memory bound (or
/// none) and the executor's I/O concurrency; with what closes its progress callback.
pub(crate) fn run_control(
    options: Option<&PaimonCleanupRunOptions>,
    io_concurrency: u32,
) -> (RunControl, ProgressClose) {
    let settings = options.map(|o| o.settings().get()).unwrap_or_default();
    let mut close = ProgressClose(None);
    let progress = settings.progress.map(|callback| {
        // Serializes the calls of one operation, and none passes once it is closed.
        let open = Arc::new(Mutex::new(true));
        close.0 = Some(open.clone());
        let progress: ProgressFn = Arc::new(move |phase: &str, done, total, bytes| {
            let open = open.lock().unwrap_or_else(PoisonError::into_inner);
            if !*open {
                return;
            }
            let phase = CString::new(phase.replace('\0', "\u{FFFD}")).unwrap_or_default();
            callback.call(&phase, done, total, bytes);
        });
        progress
    });
    let control = RunControl {
        cancel: settings.cancel.unwrap_or_default(),
        progress,
        io_concurrency: io_concurrency.max(1) as usize,
        fail_after_deletes: None,
        max_memory: settings.max_memory,
        commit_hook: None,
    };
    (control, close)
}

/// Creates an untriggered cancellation token.
///
/// Ownership: on success `*out` receives a new token owned by the caller, released with
/// `paimon_cleanup_cancel_token_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
/// success and to a new error object on failure.
///
/// # Safety
/// `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_cancel_token_new(
    out: *mut *mut PaimonCleanupCancelToken,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe {
        new_handle("paimon_cleanup_cancel_token_new", out, err, || {
            Ok(PaimonCleanupCancelToken {
                token: CancelToken::new(),
            })
        })
    }
}

/// Requests cancellation: every operation whose run options carry this token stops at its next
/// check (before each step and each batch of deletions; orphan-file removal also at its next
/// storage read) and returns `PAIMON_CLEANUP_STATUS_CANCELLED`.
/// An operation started after the token was cancelled returns `CANCELLED` at once, before it
/// reads or changes anything. Files already deleted by a cancelled run stay deleted; the table is
/// left in a consistent state (deletions run in crash-safe order) and a later run finishes the
/// work. Calling it again has no further effect. NULL is accepted and ignored.
///
/// Thread-safety: may be called from any thread at any time, including from a progress callback,
/// while operations watch the token.
///
/// # Safety
/// `token` must be NULL or a live token.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_cancel_token_cancel(
    token: *const PaimonCleanupCancelToken,
) {
    boundary_infallible((), || {
        // SAFETY: NULL or live (caller's guarantee).
        if let Some(token) = unsafe { token.as_ref() } {
            token.token.cancel();
        }
    })
}

/// Returns true once `paimon_cleanup_cancel_token_cancel` has been called on the token; false
/// for a NULL token.
///
/// Thread-safety: may be called from any thread at any time.
///
/// # Safety
/// `token` must be NULL or a live token.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_cancel_token_is_cancelled(
    token: *const PaimonCleanupCancelToken,
) -> bool {
    boundary_infallible(false, || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { token.as_ref() }.is_some_and(|t| t.token.is_cancelled())
    })
}

/// Frees a cancellation token. NULL is accepted and ignored.
///
/// Run options the token was attached to keep their own reference to the flag, so freeing the
/// token does not disturb them or the operations using them; it only means nobody can cancel them
/// through this handle any more.
/// Ownership: takes back ownership of `token`. Free each token exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with another use of the
/// same token handle.
///
/// # Safety
/// `token` must be NULL or a pointer from `paimon_cleanup_cancel_token_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_cancel_token_free(token: *mut PaimonCleanupCancelToken) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(token) }
}

/// Creates run options with no progress callback and no cancellation token.
///
/// Ownership: on success `*out` receives new run options owned by the caller, released with
/// `paimon_cleanup_run_options_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
/// success and to a new error object on failure.
///
/// # Safety
/// `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_run_options_new(
    out: *mut *mut PaimonCleanupRunOptions,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe { new_settings("paimon_cleanup_run_options_new", out, err) }
}

/// Sets (or, with `callback` NULL, removes) the progress callback of operations run with these
/// options. See `PaimonCleanupProgressFn` for when and on which threads it is called.
///
/// `user_data` is passed back unchanged to every call; the library never reads, writes or frees
/// it. It must stay valid, and usable from the library's threads, until every operation started
/// with these options has returned (the callback is never called after that).
/// Ownership: `options` stays owned by the caller.
/// Thread-safety: may be called while other threads run operations with the same options; those
/// keep the callback they started with.
/// Errors: `NULL_POINTER` if `options` is NULL.
///
/// # Safety
/// `options` must be NULL or live; `callback` must be NULL or a function with the signature of
/// `PaimonCleanupProgressFn` that follows its thread rules; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_run_options_set_progress(
    options: *mut PaimonCleanupRunOptions,
    callback: PaimonCleanupProgressFn,
    user_data: *mut c_void,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_run_options_set_progress";
    let value = Ok(CCallback::new(callback, user_data));
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, options, err, value, |s, v| s.progress = v) }
}

/// Attaches `token` to these options (or, with `token` NULL, detaches the current one).
/// Operations run with the options stop with `PAIMON_CLEANUP_STATUS_CANCELLED` once the token is
/// cancelled; see `paimon_cleanup_cancel_token_cancel`.
///
/// The options keep their own reference to the token's flag: the token handle may be freed at any
/// time afterwards (but then can no longer be used to cancel).
/// Ownership: `options` and `token` stay owned by the caller.
/// Thread-safety: may be called while other threads run operations with the same options; those
/// keep the token they started with.
/// Errors: `NULL_POINTER` if `options` is NULL.
///
/// # Safety
/// `options` must be NULL or live; `token` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_run_options_set_cancel_token(
    options: *mut PaimonCleanupRunOptions,
    token: *const PaimonCleanupCancelToken,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_run_options_set_cancel_token";
    // SAFETY: NULL or live (caller's guarantee).
    let value = Ok(unsafe { token.as_ref() }.map(|t| t.token.clone()));
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, options, err, value, |s, v| s.cancel = v) }
}

/// Sets (or, with `callback` NULL, removes) the log callback of operations run with these
/// options: the library's log events of each such operation at `min_level` or more severe are
/// passed to `callback` (see `PaimonCleanupLogFn` for the arguments and the thread rules).
///
/// Logging is off by default: an operation run without a log callback (or without run options)
/// reports its events to no one. Nothing is installed process-wide: each operation routes only
/// its own events to the callback of its own run options, so hosts (or threads) that use
/// different callbacks in one process never see each other's events. Events of the library's
/// dependencies that run on their own background threads are not captured.
///
/// `min_level`: a `PaimonCleanupLogLevel` value, `PAIMON_CLEANUP_LOG_LEVEL_ERROR` (1) to
/// `PAIMON_CLEANUP_LOG_LEVEL_TRACE` (5); `INFO` gives a few lines per run, `DEBUG` a line per
/// storage request. Ignored when `callback` is NULL.
/// `user_data` is passed back unchanged to every call; the library never reads, writes or frees
/// it. It must stay valid, and usable from the library's threads, until every operation started
/// with these options has returned (the callback is never called after that).
/// Ownership: `options` stays owned by the caller.
/// Thread-safety: may be called while other threads run operations with the same options; those
/// keep the callback they started with.
/// Errors: `NULL_POINTER` if `options` is NULL; `INVALID_ARGUMENT` if `callback` is not NULL and
/// `min_level` is not a `PaimonCleanupLogLevel` (the options keep their previous callback).
///
/// # Safety
/// `options` must be NULL or live; `callback` must be NULL or a function with the signature of
/// `PaimonCleanupLogFn` that follows its thread rules; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_run_options_set_log(
    options: *mut PaimonCleanupRunOptions,
    callback: PaimonCleanupLogFn,
    min_level: i32,
    user_data: *mut c_void,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_run_options_set_log";
    let value = LogSettings::new(F, callback, min_level, user_data);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, options, err, value, |s, v| s.log = v) }
}

/// Sets (or, with `max_memory_bytes` 0, removes) the memory bound of operations run with these
/// options: a bound, in bytes, on what an operation's large structures (candidate files, the
/// reduced manifests that protect referenced files, the live entries a partition drop merges,
/// the deletion plan, the report's paths) may hold at once. It is the CLI's `--max-memory`.
///
/// An operation whose plan needs more than the bound fails with
/// `PAIMON_CLEANUP_STATUS_MEMORY_LIMIT` (the message names `max_memory`, the bound and what
/// needed more) while it plans, before its first deletion or commit: a run stopped by its bound
/// has deleted and committed nothing, and the process is never left to grow until the system
/// kills it. A bound the run fits in changes nothing about what it does. The estimate counts
/// what the structures hold, not the allocator's or the runtime's own overhead, so the process's
/// resident size stays somewhat above the bound. No bound by default.
/// Ownership: `options` stays owned by the caller.
/// Thread-safety: may be called while other threads run operations with the same options; those
/// keep the bound they started with.
/// Errors: `NULL_POINTER` if `options` is NULL.
///
/// # Safety
/// `options` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_run_options_set_max_memory(
    options: *mut PaimonCleanupRunOptions,
    max_memory_bytes: u64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_run_options_set_max_memory";
    let value = Ok((max_memory_bytes > 0).then_some(max_memory_bytes));
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, options, err, value, |s, v| s.max_memory = v) }
}

/// Frees run options. NULL is accepted and ignored.
///
/// Every operation using the options must have returned before they are freed.
/// Ownership: takes back ownership of `options` (not of the attached token or of `user_data`).
/// Free each run-options handle exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with any other use of the
/// same options.
///
/// # Safety
/// `options` must be NULL or a pointer from `paimon_cleanup_run_options_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_run_options_free(options: *mut PaimonCleanupRunOptions) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(options) }
}
