//! The common shape of a maintenance entry point: check the handles, build the run control, open
//! the table on the executor, run the operation, hand out a report.

use std::future::Future;
use std::sync::Arc;

use crate::clean::RunControl;
use crate::storage::Storage;
use crate::table::Table;

use super::context::PaimonCleanupContext;
use super::control::{run_control, PaimonCleanupRunOptions};
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
        })
    }

    /// Opens the context's table on the executor and runs `op` on it with the run control of
    /// this call. A token cancelled before the call makes it fail with `CANCELLED` before the
    /// table is read.
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
        self.executor
            .block_on(self.function, async move {
                let storage = Arc::new(Storage::open(context.table_uri(), context.options())?);
                let table = Table::open(storage, context.options()).await?;
                op(table, control).await
            })?
            .map_err(FfiError::from)
    }

    /// Hands `report` to the caller through `out`.
    pub(crate) fn deliver(&self, report: PaimonCleanupReport) {
        // SAFETY: `out` was checked non-NULL and is writable (caller's guarantee to `new`).
        unsafe { self.out.write(Box::into_raw(Box::new(report))) };
    }
}
