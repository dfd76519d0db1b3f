//! The blocking pool: local I/O and decoding run here, a bounded number at once, with the
//! caller's `tracing` dispatcher, and a panic in such a task comes back as [`Error::Panic`].

use std::any::Any;

use crate::error::{Error, Result};

use super::{pool, Location};

/// Wraps `f` so that it runs with the calling thread's current `tracing` dispatcher (a C host's
/// per-operation log callback) wherever it is called: for work handed to other threads
/// (the I/O pool of [`blocking`]), whose events would otherwise go to that thread's default.
pub(crate) fn in_current_dispatch<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let dispatch = tracing::dispatcher::get_default(tracing::Dispatch::clone);
    move || tracing::dispatcher::with_default(&dispatch, f)
}

/// Runs blocking local I/O (and the decoding that follows a read) on the library's pool of I/O
/// threads ([`super::pool`], `paimon-cleanup-io`), with the caller's `tracing` dispatcher (a C
/// host's per-operation log callback), so its events reach the same place as the caller's.
///
/// At most [`max_blocking_sections`] such sections are handed over at once in the process;
/// further callers wait for a slot. The slot goes with the section: it is released when the
/// section has run (or was skipped), not when the caller stops waiting, so a dropped caller
/// never lets more sections run than the bound.
///
/// The pool runs no more threads than sections may be in flight, and starts one only when no
/// thread is free: tokio's blocking pool, which ran these sections before, started a new
/// thread for almost every hand-over (about 100 at a 309 k-file table), each with its own
/// stack, malloc arena and zstd context.
///
/// If the caller's future is dropped before a thread takes the section, `f` does not run.
/// A panic inside `f` is [`Error::Panic`] (the C ABI's `PANIC` status), never a success and
/// never a plain internal error; the thread that ran it goes on.
///
/// Works from any runtime flavour (current-thread, multi-thread, the C ABI's executor) and
/// from none: the section's result comes back through a oneshot channel. `f` runs without a
/// tokio runtime context.
pub(crate) async fn blocking<T, F>(what: &Location, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    let slot = BLOCKING_SLOTS
        .acquire()
        .await
        .map_err(|e| Error::Internal(format!("I/O slots for {what}: {e}")))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let f = in_current_dispatch(f);
    let job = move || {
        let _slot = slot;
        if tx.is_closed() {
            return;
        }
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        // The caller may have gone meanwhile: then nobody wants the result.
        let _ = tx.send(out);
    };
    if pool::submit(Box::new(job), max_blocking_sections()).is_err() {
        return Err(Error::Internal(format!(
            "I/O task for {what}: cannot start an I/O thread"
        )));
    }
    match rx.await {
        Ok(Ok(r)) => r,
        Ok(Err(payload)) => {
            let message = panic_message(payload.as_ref());
            let task = format!("I/O task for {what}");
            tracing::error!(task, panic = %message, "task panicked");
            Err(Error::Panic(format!("{task} panicked: {message}")))
        }
        Err(_) => Err(Error::Internal(format!(
            "I/O task for {what} ended without a result"
        ))),
    }
}

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_owned())
}

/// Blocking sections (`blocking`) in flight at once, process-wide: four per core, at least
/// 16 (local reads wait on the disk too), at most 256.
pub fn max_blocking_sections() -> usize {
    *BLOCKING_SECTIONS
}

static BLOCKING_SECTIONS: once_cell::sync::Lazy<usize> = once_cell::sync::Lazy::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_mul(4).clamp(16, 256)
});

static BLOCKING_SLOTS: once_cell::sync::Lazy<tokio::sync::Semaphore> =
    once_cell::sync::Lazy::new(|| tokio::sync::Semaphore::new(max_blocking_sections()));

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_in_a_blocking_section_is_a_panic_error() {
        let at = Location::parse("/w/t/snapshot/snapshot-1").unwrap();
        let err = blocking(&at, || -> Result<()> { panic!("decoder bug") })
            .await
            .unwrap_err();
        match &err {
            Error::Panic(m) => {
                assert!(m.contains("decoder bug"), "{m}");
                assert!(m.contains("snapshot-1"), "{m}");
            }
            other => panic!("expected Error::Panic, got {other:?}"),
        }
        // The pool is still usable: the slot of the panicked section was released.
        let ok = blocking(&at, || Ok(7)).await.unwrap();
        assert_eq!(ok, 7);
    }

    #[test]
    fn runs_on_a_current_thread_runtime_a_multi_thread_runtime_and_none() {
        let at = Location::parse("/w/t/manifest/manifest-1").unwrap();
        let on_io_thread =
            || -> Result<String> { Ok(std::thread::current().name().unwrap_or("").to_owned()) };
        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(
            current.block_on(blocking(&at, on_io_thread)).unwrap(),
            "paimon-cleanup-io"
        );
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let many = multi.block_on(async {
            let all = (0..64).map(|i| blocking(&at, move || Ok(i * 2)));
            futures::future::try_join_all(all).await
        });
        assert_eq!(many.unwrap(), (0..64).map(|i| i * 2).collect::<Vec<_>>());
        // No runtime at all: the result comes back through a oneshot channel.
        let plain = futures::executor::block_on(blocking(&at, on_io_thread)).unwrap();
        assert_eq!(plain, "paimon-cleanup-io");
    }

    #[tokio::test]
    async fn a_section_logs_to_the_callers_dispatcher() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;

        /// Counts the events it receives.
        struct Count(Arc<AtomicUsize>);
        impl tracing::Subscriber for Count {
            fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
                true
            }
            fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
                tracing::span::Id::from_u64(1)
            }
            fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
            fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
            fn event(&self, _: &tracing::Event<'_>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
            fn enter(&self, _: &tracing::span::Id) {}
            fn exit(&self, _: &tracing::span::Id) {}
        }
        let seen = Arc::new(AtomicUsize::new(0));
        let dispatch = tracing::Dispatch::new(Count(seen.clone()));
        let at = Location::parse("/w/t/manifest/manifest-1").unwrap();
        let _guard = tracing::dispatcher::set_default(&dispatch);
        blocking(&at, || {
            tracing::warn!("from the I/O thread");
            Ok(())
        })
        .await
        .unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_dropped_caller_does_not_break_the_pool() {
        let at = Location::parse("/w/t/manifest/manifest-1").unwrap();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        // A section whose caller stops waiting while it runs: it finishes on its own.
        let first = at.clone();
        let running = tokio::spawn(async move {
            blocking(&first, move || {
                started_tx.send(()).unwrap();
                let _ = release_rx.recv_timeout(std::time::Duration::from_secs(30));
                Ok(1)
            })
            .await
        });
        tokio::task::spawn_blocking(move || started_rx.recv().unwrap())
            .await
            .unwrap();
        running.abort();
        assert!(running.await.unwrap_err().is_cancelled());
        release_tx.send(()).unwrap();
        // Every slot is usable afterwards: as many sections as the bound, all at once.
        let all = (0..max_blocking_sections()).map(|i| blocking(&at, move || Ok(i)));
        let done = futures::future::try_join_all(all).await.unwrap();
        assert_eq!(done.len(), max_blocking_sections());
    }

    #[test]
    fn panic_payload_texts() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&42_u8), "unknown panic payload");
    }
}
