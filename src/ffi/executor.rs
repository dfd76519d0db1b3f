//! The executor handle: a tokio multi-thread runtime sized by the caller, plus the I/O
//! concurrency the cleanup operations may use.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};

use super::handle::{free_handle, in_range, new_handle};
use super::status::{
    boundary, boundary_infallible, FfiError, PaimonCleanupError, PaimonCleanupStatus,
};
use super::util::handle_ref;

/// Largest worker-thread count `paimon_cleanup_executor_new` accepts.
const MAX_WORKER_THREADS: u32 = 1024;
/// Largest I/O concurrency `paimon_cleanup_executor_set_io_concurrency` accepts.
const MAX_IO_CONCURRENCY: u32 = 4096;
/// Automatic I/O concurrency for tables on a local (or mounted) file system.
const DEFAULT_IO_CONCURRENCY_LOCAL: u32 = 8;
/// Automatic I/O concurrency for tables on an object store.
const DEFAULT_IO_CONCURRENCY_OBJECT_STORE: u32 = 64;

/// An executor: owns a tokio multi-thread runtime whose worker threads run the library's
/// asynchronous work (manifest decoding, listing, deleting), and the I/O concurrency setting.
///
/// Created by `paimon_cleanup_executor_new`, owned by the caller, released with
/// `paimon_cleanup_executor_free`. Thread-safe (`Send + Sync`): one executor may serve any number
/// of calls from any number of host threads at once; a process usually needs one.
pub struct PaimonCleanupExecutor {
    runtime: Option<tokio::runtime::Runtime>,
    worker_threads: u32,
    io_concurrency: AtomicU32,
}

impl PaimonCleanupExecutor {
    fn new(worker_threads: u32) -> Result<Self, FfiError> {
        let worker_threads = in_range(
            "paimon_cleanup_executor_new",
            "worker_threads",
            worker_threads,
            0..=MAX_WORKER_THREADS,
        )?;
        let resolved = if worker_threads == 0 {
            std::thread::available_parallelism()
                .map(|n| u32::try_from(n.get()).unwrap_or(MAX_WORKER_THREADS))
                .unwrap_or(1)
                .clamp(1, MAX_WORKER_THREADS)
        } else {
            worker_threads
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(resolved as usize)
            .thread_name("paimon-cleanup-worker")
            .max_blocking_threads(crate::storage::max_blocking_sections())
            .enable_all()
            .build()
            .map_err(|e| {
                FfiError::new(
                    PaimonCleanupStatus::Internal,
                    format!("paimon_cleanup_executor_new: cannot start the runtime: {e}"),
                )
            })?;
        Ok(PaimonCleanupExecutor {
            runtime: Some(runtime),
            worker_threads: resolved,
            io_concurrency: AtomicU32::new(0),
        })
    }

    /// Number of worker threads of the runtime.
    pub fn worker_threads(&self) -> u32 {
        self.worker_threads
    }

    /// The I/O concurrency set by the caller; 0 means automatic.
    pub fn io_concurrency(&self) -> u32 {
        self.io_concurrency.load(Ordering::Relaxed)
    }

    /// The number of storage requests to keep in flight for a table at `uri`: the caller's
    /// setting, or the automatic default (8 for local paths and `file://`, 64 for object stores).
    pub fn effective_io_concurrency(&self, uri: &str) -> u32 {
        match self.io_concurrency() {
            0 if is_local(uri) => DEFAULT_IO_CONCURRENCY_LOCAL,
            0 => DEFAULT_IO_CONCURRENCY_OBJECT_STORE,
            n => n,
        }
    }

    /// Runs `future` to completion on this executor, blocking the calling host thread.
    pub(crate) fn block_on<F: Future>(
        &self,
        function: &str,
        future: F,
    ) -> Result<F::Output, FfiError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(FfiError::invalid_argument(format!(
                "{function}: called from a thread that is running an async runtime; \
                 call it from a plain host thread"
            )));
        }
        let runtime = self.runtime.as_ref().ok_or_else(|| {
            FfiError::new(
                PaimonCleanupStatus::Internal,
                format!("{function}: the executor has been shut down"),
            )
        })?;
        Ok(runtime.block_on(future))
    }
}

impl Drop for PaimonCleanupExecutor {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Dropping (which joins the threads) is not allowed inside an async context.
                runtime.shutdown_background();
            } else {
                drop(runtime);
            }
        }
    }
}

fn is_local(uri: &str) -> bool {
    match uri.split_once("://") {
        None => true,
        Some((scheme, _)) => scheme.eq_ignore_ascii_case("file"),
    }
}

/// Creates an executor whose runtime has `worker_threads` worker threads.
///
/// `worker_threads`: 0 means one per CPU (the machine's available parallelism); otherwise
/// 1..=1024. Worker threads run CPU work (decoding manifests) and drive storage I/O; see
/// "Choosing thread counts" in the header preamble.
/// The I/O concurrency starts at 0 (automatic); change it with
/// `paimon_cleanup_executor_set_io_concurrency`.
///
/// Ownership: on success `*out` receives a new executor owned by the caller, to be released with
/// `paimon_cleanup_executor_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `out` is NULL; `INVALID_ARGUMENT` if `worker_threads` is out of
/// range; `INTERNAL` if the threads cannot be started. `*err` (when `err` is not NULL) is set to
/// NULL on success and to a new error object on failure.
///
/// # Safety
/// `out` must be NULL or writable; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_executor_new(
    worker_threads: u32,
    out: *mut *mut PaimonCleanupExecutor,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe {
        new_handle("paimon_cleanup_executor_new", out, err, || {
            PaimonCleanupExecutor::new(worker_threads)
        })
    }
}

/// Sets how many storage requests (list, get, head, delete) the operations started on this
/// executor may keep in flight. 0 restores the automatic default: 8 for tables on a local file
/// system, 64 for tables on an object store. Otherwise 1..=4096.
///
/// Takes effect for calls that start after it returns; calls already running keep their value.
/// Used by the maintenance operations; `paimon_cleanup_table_summary` still reads with the table
/// layer's own default.
/// Ownership: `executor` stays owned by the caller.
/// Thread-safety: safe to call while other threads use the executor.
/// Errors: `NULL_POINTER` if `executor` is NULL; `INVALID_ARGUMENT` if out of range.
///
/// # Safety
/// `executor` must be NULL or a live executor; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_executor_set_io_concurrency(
    executor: *mut PaimonCleanupExecutor,
    io_concurrency: u32,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_executor_set_io_concurrency";
    let body = || -> Result<(), FfiError> {
        // SAFETY: `executor` is NULL or live (caller's guarantee).
        let executor = unsafe { handle_ref(executor.cast_const(), F, "executor") }?;
        let value = in_range(F, "io_concurrency", io_concurrency, 0..=MAX_IO_CONCURRENCY)?;
        executor.io_concurrency.store(value, Ordering::Relaxed);
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Returns the number of worker threads of the executor's runtime (the resolved value when it
/// was created with 0), or 0 when `executor` is NULL.
///
/// Thread-safety: may be called from any thread while others use the executor.
///
/// # Safety
/// `executor` must be NULL or a live executor.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_executor_worker_threads(
    executor: *const PaimonCleanupExecutor,
) -> u32 {
    boundary_infallible(0, || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { executor.as_ref() }.map_or(0, PaimonCleanupExecutor::worker_threads)
    })
}

/// Returns the I/O concurrency set on the executor (0 = automatic), or 0 when `executor` is NULL.
///
/// Thread-safety: may be called from any thread while others use the executor.
///
/// # Safety
/// `executor` must be NULL or a live executor.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_executor_io_concurrency(
    executor: *const PaimonCleanupExecutor,
) -> u32 {
    boundary_infallible(0, || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { executor.as_ref() }.map_or(0, PaimonCleanupExecutor::io_concurrency)
    })
}

/// Shuts the executor down and frees it. NULL is accepted and ignored.
///
/// Blocks until the executor's worker threads have exited. Every call that uses the executor must
/// have returned before it is freed, and no thread may use it afterwards.
/// Ownership: takes back ownership of `executor`. Free each executor exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with any other use of the
/// same executor. Do not call it from a callback running on one of the executor's own threads.
///
/// # Safety
/// `executor` must be NULL or a pointer from `paimon_cleanup_executor_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_executor_free(executor: *mut PaimonCleanupExecutor) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(executor) }
}
