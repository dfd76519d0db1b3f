//! Run control shared by long operations: cancellation, progress, and an injected failure
//! point for crash tests.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

/// A cancellation flag the host can trigger from any thread. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A fresh, untriggered token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Request cancellation.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// `Err(Error::Cancelled)` once cancelled.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Progress callback: (phase, done, total, bytes). Called from library threads.
pub type ProgressFn = Arc<dyn Fn(&str, u64, u64, u64) + Send + Sync>;

/// A step of a commit at which a test hook is called ([`RunControl::commit_hook`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommitStep {
    /// An attempt wrote its metadata files and is about to check that `snapshot` is still the
    /// next id, then publish it.
    Prepared {
        /// The snapshot id the attempt will publish.
        snapshot: i64,
    },
    /// The checks before publishing passed; the exclusive create of `snapshot` comes next.
    Publishing {
        /// The snapshot id the attempt publishes.
        snapshot: i64,
    },
}

/// A test hook called synchronously at the steps of a commit; it may block (e.g. to run
/// another process against the table) and the commit waits for it.
pub type CommitHook = Arc<dyn Fn(CommitStep) + Send + Sync>;

/// How a run is driven: cancellation, progress, I/O concurrency and crash injection.
#[derive(Clone)]
pub struct RunControl {
    /// Cancellation token checked between steps and delete batches.
    pub cancel: CancelToken,
    /// Optional progress callback.
    pub progress: Option<ProgressFn>,
    /// Concurrent reads and deletes against storage.
    pub io_concurrency: usize,
    /// Crash injection for tests: fail the run (as if the process died) once this many files
    /// have been deleted. `None` in production.
    pub fail_after_deletes: Option<u64>,
    /// A bound, in bytes, on what the run's large structures (candidate files, protection's
    /// reduced manifests, the deletion plan, the report's paths) may hold at once
    /// ([`crate::memory::MemoryBudget`]). Past it the run fails with
    /// [`Error::MemoryLimit`] while planning, before its first deletion. `None`: unbounded.
    pub max_memory: Option<u64>,
    /// Test hook called between the steps of a commit (drop / expire partitions), so that a
    /// test can interleave concurrent writers and expiry deterministically. `None` in
    /// production.
    pub commit_hook: Option<CommitHook>,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl {
            cancel: CancelToken::new(),
            progress: None,
            io_concurrency: 32,
            fail_after_deletes: None,
            max_memory: None,
            commit_hook: None,
        }
    }
}

impl std::fmt::Debug for RunControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunControl")
            .field("cancelled", &self.cancel.is_cancelled())
            .field("io_concurrency", &self.io_concurrency)
            .field("fail_after_deletes", &self.fail_after_deletes)
            .field("max_memory", &self.max_memory)
            .field("commit_hook", &self.commit_hook.is_some())
            .finish()
    }
}

impl RunControl {
    /// A fresh budget of [`RunControl::max_memory`] bytes for one run.
    pub fn memory_budget(&self) -> crate::memory::MemoryBudget {
        crate::memory::MemoryBudget::new(self.max_memory)
    }

    /// Calls the commit hook, if one is set, at `step`.
    pub fn at_commit_step(&self, step: CommitStep) {
        if let Some(hook) = &self.commit_hook {
            hook(step);
        }
    }

    /// Report progress if a callback is set.
    pub fn progress(&self, phase: &str, done: u64, total: u64, bytes: u64) {
        if let Some(cb) = &self.progress {
            cb(phase, done, total, bytes);
        }
    }
}
