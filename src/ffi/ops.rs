//! The common shape of a maintenance entry point: check the handles, build the run control, open
//! the table on the executor, run the operation, hand out a report.

use std::future::Future;
use std::ptr;
use std::sync::Arc;

use tracing::instrument::WithSubscriber;

use crate::clean::RunControl;
use crate::storage::{StopReads, Storage};
use crate::table::Table;

use super::context::PaimonCleanupContext;
use super::control::{run_control, run_log, PaimonCleanupRunOptions};
use super::executor::PaimonCleanupExecutor;
use super::handle::hand_out;
use super::report::PaimonCleanupReport;
use super::status::FfiError;
use super::util::{handle_ref, out_arg};

/// The handles every maintenance entry point takes, checked.
pub(crate) struct Call<'a> {
    pub(crate) function: &'static str,
    pub(crate) context: &'a PaimonCleanupContext,
    pub(crate) executor: &'a PaimonCleanupExecutor,
    pub(crate) run: Option<&'a PaimonCleanupRunOptions>,
    out: *mut *mut PaimonCleanupReport,
    /// Reads fail with `Cancelled` once the run's token is cancelled (see
    /// [`Call::reads_stop_on_cancel`]).
    reads_stop_on_cancel: bool,
}

impl<'a> Call<'a> {
    /// Checks the common arguments: `context`, `executor` and `out` must not be NULL;
    /// `run` may be.
    ///
    /// # Safety
    /// Each pointer must be NULL or valid (handles live for `'a`, `out` writable).
    pub(crate) unsafe fn new(
        function: &'static str,
        context: *const PaimonCleanupContext,
        executor: *const PaimonCleanupExecutor,
        run: *const PaimonCleanupRunOptions,
        out: *mut *mut PaimonCleanupReport,
    ) -> Result<Self, FfiError> {
        // SAFETY: NULL or live (caller's guarantee).
        let context = unsafe { handle_ref(context, function, "context") }?;
        // SAFETY: as above.
        let executor = unsafe { handle_ref(executor, function, "executor") }?;
        let out = out_arg(out, function, "out")?;
        // SAFETY: NULL or live (caller's guarantee).
        let run = unsafe { run.as_ref() };
        Ok(Call {
            function,
            context,
            executor,
            run,
            out,
            reads_stop_on_cancel: false,
        })
    }

    /// As [`Call::new`], for an entry point that hands out no report (its results go through
    /// out-parameters of its own): [`Call::deliver`] must not be called.
    ///
    /// # Safety
    /// Each pointer must be NULL or valid (handles live for `'a`).
    pub(crate) unsafe fn without_report(
        function: &'static str,
        context: *const PaimonCleanupContext,
        executor: *const PaimonCleanupExecutor,
        run: *const PaimonCleanupRunOptions,
    ) -> Result<Self, FfiError> {
        // A non-NULL place for `new`'s check; `out` is then reset to NULL, never written.
        let mut nowhere: *mut PaimonCleanupReport = ptr::null_mut();
        // SAFETY: forwarded caller guarantees; `nowhere` is writable.
        let mut call = unsafe { Self::new(function, context, executor, run, &mut nowhere) }?;
        call.out = ptr::null_mut();
        Ok(call)
    }

    /// Makes the run's storage refuse every read once the run's token is cancelled
    /// ([`Storage::stop_reads_when`]), so a cancelled run stops at its next read rather than at
    /// its next cancellation check (which, while a table of a million files is listed or read,
    /// can be seconds away). Only for operations for which a failed read aborts the run or
    /// makes it delete less, and that commit nothing (a commit's read-back must not be skipped).
    pub(crate) fn reads_stop_on_cancel(mut self) -> Self {
        self.reads_stop_on_cancel = true;
        self
    }

    /// Opens the context's table (on the context's branch) on the executor and runs `op` on it with the run control of
    /// this call. A token cancelled before the call makes it fail with `CANCELLED` before the
    /// table is read. With a log callback in the run options, the whole run (its future, and the
    /// blocking I/O tasks the storage layer starts for it) reports its `tracing` events to that
    /// callback only, and the callback is closed before this returns.
    pub(crate) fn run<T, F, Fut>(&self, op: F) -> Result<T, FfiError>
    where
        F: FnOnce(Table, RunControl) -> Fut,
        Fut: Future<Output = crate::Result<T>>,
    {
        let context = self.context;
        let stop = self.reads_stop_on_cancel;
        let uri = context.table_uri();
        run_on(self.function, self.executor, self.run, uri, |control| {
            let stop_reads = stop.then(|| {
                let token = control.cancel.clone();
                let stop: StopReads = Arc::new(move || token.is_cancelled());
                stop
            });
            async move {
                let table_ref = context.table_ref();
                let mut storage = Storage::open(&table_ref.uri, context.options())?;
                if let Some(stop) = stop_reads {
                    storage = storage.stop_reads_when(stop);
                }
                let storage = Arc::new(storage);
                let table =
                    Table::open_branch(storage, context.options(), &table_ref.branch).await?;
                op(table, control).await
            }
        })
    }

    /// Hands `report` to the caller through `out`.
    pub(crate) fn deliver(&self, report: PaimonCleanupReport) {
        if !self.out.is_null() {
            // SAFETY: `out` was checked non-NULL and is writable (caller's guarantee to `new`).
            unsafe { hand_out(self.out, report) };
        }
    }
}

/// Runs the future `op` makes from the run control on `executor`: the control of `run` with the
/// executor's I/O concurrency for `table_uri`; a token cancelled before the call makes it fail
/// with `CANCELLED` before `op` is called. With a log callback in the run options, the whole
/// run (its future, and the blocking I/O tasks the storage layer starts for it) reports its
/// `tracing` events to that callback only. The log and progress callbacks are closed before
/// this returns: a call in flight on another thread is waited for, none comes afterwards.
pub(crate) fn run_on<T, F, Fut>(
    function: &'static str,
    executor: &PaimonCleanupExecutor,
    run: Option<&PaimonCleanupRunOptions>,
    table_uri: &str,
    op: F,
) -> Result<T, FfiError>
where
    F: FnOnce(RunControl) -> Fut,
    Fut: Future<Output = crate::Result<T>>,
{
    let io = executor.effective_io_concurrency(table_uri);
    let (control, progress_close) = run_control(run, io);
    control.cancel.check()?;
    let work = op(control);
    let log = run_log(run);
    let result = match &log {
        Some(log) => executor.block_on(function, work.with_subscriber(log.dispatch())),
        None => executor.block_on(function, work),
    };
    // Neither callback is called once this returns.
    drop(log);
    drop(progress_close);
    result?.map_err(FfiError::from)
}
