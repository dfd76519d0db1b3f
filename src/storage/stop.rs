//! Read-stopping: a layer around every read that fails it with [`Error::Cancelled`] once the
//! caller's stop test says so, before it starts and while it waits for its I/O.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};

/// A test run before every read ([`super::Storage::stop_reads_when`]): true stops the read.
pub type StopReads = Arc<dyn Fn() -> bool + Send + Sync>;

/// How often a read racing the stop test looks at it.
const STOP_POLL: Duration = Duration::from_millis(20);

/// The read-stopping layer of one storage: no test means reads run as they are.
#[derive(Clone, Default)]
pub(crate) struct ReadStop {
    test: Option<StopReads>,
}

impl ReadStop {
    /// A layer stopping reads once `test` returns true.
    pub(crate) fn when(test: StopReads) -> ReadStop {
        ReadStop { test: Some(test) }
    }

    /// Runs the read `read`: `Err(Cancelled)` if the test already says stop, else the read
    /// raced against the test (polled every 20 ms), abandoned with `Err(Cancelled)` as soon as
    /// the test says stop.
    pub(crate) async fn run<T>(&self, read: impl Future<Output = Result<T>>) -> Result<T> {
        let Some(stop) = &self.test else {
            return read.await;
        };
        if stop() {
            return Err(Error::Cancelled);
        }
        let stopped = async {
            loop {
                tokio::time::sleep(STOP_POLL).await;
                if stop() {
                    return;
                }
            }
        };
        tokio::select! {
            r = read => r,
            () = stopped => {
                tracing::debug!("read abandoned: cancelled");
                Err(Error::Cancelled)
            }
        }
    }
}
