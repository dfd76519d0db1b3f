//! The blocking pool: local I/O and decoding run here, a bounded number at once, with the
//! caller's `tracing` dispatcher, and a panic in such a task comes back as [`Error::Panic`].

use std::any::Any;

use crate::error::{Error, Result};

use super::Location;

/// Wraps `f` so that it runs with the calling thread's current `tracing` dispatcher (a C host's
/// per-operation log callback) wherever it is called: for work handed to other threads
/// (`tokio::task::spawn_blocking`), whose events would otherwise go to that thread's default.
pub(crate) fn in_current_dispatch<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let dispatch = tracing::dispatcher::get_default(tracing::Dispatch::clone);
    move || tracing::dispatcher::with_default(&dispatch, f)
}

/// Runs blocking local I/O on tokio's blocking pool, with the caller's `tracing` dispatcher (a
/// C host's per-operation log callback), so its events reach the same place as the caller's.
///
/// At most [`max_blocking_sections`] such sections run at once in the process; further callers
/// wait for a slot. Without the bound, the concurrent readers of one run (each with its own
/// `io_concurrency` window) and the delete batches in flight make tokio start a thread for
/// almost every section (about 200 for a small expiry), and creating and tearing down those
/// threads cost more CPU than the work they did.
///
/// A panic inside `f` is [`Error::Panic`] (the C ABI's `PANIC` status), never a success and
/// never a plain internal error.
pub(crate) async fn blocking<T, F>(what: &Location, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    let slot = BLOCKING_SLOTS.acquire().await;
    let out = match tokio::task::spawn_blocking(in_current_dispatch(f)).await {
        Ok(r) => r,
        Err(e) => Err(task_failed(&format!("I/O task for {what}"), e)),
    };
    drop(slot);
    out
}

/// The error for a spawned or blocking task that did not finish: [`Error::Panic`] with the
/// panic's message if it panicked, else [`Error::Internal`] (the runtime cancelled it).
pub(crate) fn task_failed(task: &str, e: tokio::task::JoinError) -> Error {
    if e.is_panic() {
        let message = panic_message(e.into_panic().as_ref());
        tracing::error!(task, panic = %message, "task panicked");
        Error::Panic(format!("{task} panicked: {message}"))
    } else {
        Error::Internal(format!("{task} failed: {e}"))
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

    #[tokio::test]
    async fn a_cancelled_task_is_internal_not_panic() {
        let handle = tokio::spawn(async {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        });
        handle.abort();
        let e = handle.await.unwrap_err();
        assert!(matches!(task_failed("t", e), Error::Internal(_)));
    }

    #[test]
    fn panic_payload_texts() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&42_u8), "unknown panic payload");
    }
}
