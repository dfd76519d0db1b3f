//! The common shape of a maintenance entry point: check the handles, build the run control, open
//! the table on the executor, run the operation, hand out a report.

use std::future::Future;
use std::sync::Arc;

use tracing::instrument::WithSubscriber;

use crate::clean::RunControl;
use crate::storage::{StopReads, Storage};
use crate::table::Table;

use super::context::PaimonCleanupContext;
use super::control::{run_control, run_log, PaimonCleanupRunOptions};
use super::executor::PaimonCleanupExecutor;
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
        let io = self
            .executor
            .effective_io_concurrency(self.context.table_uri());
        let control = run_control(self.run, io);
        control.cancel.check()?;
        let context = self.context;
        let stop_reads = self.reads_stop_on_cancel.then(|| {
            let token = control.cancel.clone();
            let stop: StopReads = Arc::new(move || token.is_cancelled());
            stop
        });
        let work = async move {
            let table_ref = context.table_ref();
            let mut storage = Storage::open(&table_ref.uri, context.options())?;
            if let Some(stop) = stop_reads {
                storage = storage.stop_reads_when(stop);
            }
            let storage = Arc::new(storage);
            let table = Table::open_branch(storage, context.options(), &table_ref.branch).await?;
            op(table, control).await
        };
        let log = run_log(self.run);
        let result = match &log {
            Some(log) => self
                .executor
                .block_on(self.function, work.with_subscriber(log.dispatch())),
            None => self.executor.block_on(self.function, work),
        };
        drop(log);
        result?.map_err(FfiError::from)
    }

    /// Hands `report` to the caller through `out`.
    pub(crate) fn deliver(&self, report: PaimonCleanupReport) {
        // SAFETY: `out` was checked non-NULL and is writable (caller's guarantee to `new`).
        unsafe { self.out.write(Box::into_raw(Box::new(report))) };
    }
}
