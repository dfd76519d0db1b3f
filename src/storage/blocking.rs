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

/// Runs CPU-heavy work `f` (decoding a manifest, a manifest list, an index manifest) on the
/// async runtime's worker threads, with the caller's `tracing` dispatcher, and waits for it.
///
/// Decoding does not run on the blocking pool: that pool has up to [`max_blocking_sections`]
/// threads (16 on a small machine) because reads wait on the disk, and with glibc every thread
/// that allocates decoded entries gets a malloc arena of its own, which keeps its high-water
/// mark after the entries are freed. On the workers (as many as the host asked for, usually the
/// cores) decoding still runs on every core, and its memory comes from those few arenas.
/// Outside a runtime `f` runs on the calling thread.
///
/// A panic inside `f` is [`Error::Panic`], as for [`blocking`].
pub(crate) async fn decode<T, F>(what: &Location, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => joined(what, runtime.spawn(on_worker(f)).await),
        Err(_) => inline(what, f),
    }
}

/// [`decode`] from inside a blocking section ([`blocking`]): hands `f` to the runtime's
/// workers and blocks this thread (a blocking-pool thread, which only waits) until it is done.
pub(crate) fn decode_from_blocking<T, F>(what: &Location, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => joined(
            what,
            futures::executor::block_on(runtime.spawn(on_worker(f))),
        ),
        Err(_) => inline(what, f),
    }
}

/// `f` as a task for the runtime's workers, with the caller's `tracing` dispatcher.
fn on_worker<T, F>(f: F) -> impl std::future::Future<Output = Result<T>> + Send + 'static
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    let f = in_current_dispatch(f);
    async move { f() }
}

/// The result of a decoding task, its panic as [`Error::Panic`].
fn joined<T>(
    what: &Location,
    r: std::result::Result<Result<T>, tokio::task::JoinError>,
) -> Result<T> {
    r.unwrap_or_else(|e| Err(task_failed(&format!("decoding task for {what}"), e)))
}

/// `f` on this thread (no runtime to hand it to), its panic as [`Error::Panic`].
fn inline<T>(what: &Location, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = panic_message(payload.as_ref());
        tracing::error!(task = %what, panic = %message, "decoding panicked");
        Err(Error::Panic(format!("decoding {what} panicked: {message}")))
    })
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
    use std::sync::Arc;

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

    /// Distinct threads among `ids`.
    fn distinct(ids: &[std::thread::ThreadId]) -> Vec<std::thread::ThreadId> {
        let mut out: Vec<std::thread::ThreadId> = Vec::new();
        for id in ids {
            if !out.contains(id) {
                out.push(*id);
            }
        }
        out
    }

    #[test]
    fn decoding_runs_on_the_runtime_workers_not_on_the_blocking_threads() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(max_blocking_sections())
            .build()
            .unwrap();
        let at = Location::parse("/w/t/manifest/manifest-1").unwrap();
        // Sections that each decode twice (directly and from inside a blocking section), many
        // at once: the decoding threads are the workers, however many blocking threads run.
        let (decoders, sections) = rt.block_on(async {
            let runs = (0..32).map(|_| {
                let at = at.clone();
                async move {
                    let direct = decode(&at, || {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        Ok(std::thread::current().id())
                    })
                    .await?;
                    let l = at.clone();
                    let (section, nested) = blocking(&at, move || {
                        let section = std::thread::current().id();
                        let nested = decode_from_blocking(&l, || {
                            std::thread::sleep(std::time::Duration::from_millis(2));
                            Ok(std::thread::current().id())
                        })?;
                        Ok((section, nested))
                    })
                    .await?;
                    Ok::<_, Error>(([direct, nested], section))
                }
            });
            let done = futures::future::try_join_all(runs).await.unwrap();
            let decoders: Vec<_> = done.iter().flat_map(|(d, _)| *d).collect();
            let sections: Vec<_> = done.iter().map(|(_, s)| *s).collect();
            (decoders, sections)
        });
        // The two workers decode; the blocking threads (many: 32 sections wait at once) never do.
        let decoders = distinct(&decoders);
        let sections = distinct(&sections);
        assert!(decoders.len() <= 2, "decoded on {decoders:?}");
        assert!(sections.len() > 2, "sections ran on {sections:?}");
        assert!(decoders.iter().all(|t| !sections.contains(t)));
    }

    #[tokio::test]
    async fn a_panic_while_decoding_is_a_panic_error_and_outside_a_runtime_too() {
        let at = Location::parse("/w/t/manifest/manifest-2").unwrap();
        let err = decode(&at, || -> Result<()> { panic!("bad block") })
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Panic(m) if m.contains("bad block")),
            "{err:?}"
        );
        let l = at.clone();
        let err = blocking(&at, move || {
            decode_from_blocking(&l, || -> Result<()> { panic!("bad list") })
        })
        .await
        .unwrap_err();
        assert!(
            matches!(&err, Error::Panic(m) if m.contains("bad list")),
            "{err:?}"
        );
        let here = std::thread::current().id();
        let t = std::thread::spawn(move || {
            let err = decode_from_blocking(&at, || -> Result<()> { panic!("no runtime") });
            let on = decode_from_blocking(&at, || Ok(std::thread::current().id()));
            (err, on)
        });
        let (err, on) = t.join().unwrap();
        assert!(matches!(&err, Err(Error::Panic(m)) if m.contains("no runtime")));
        assert_ne!(on.unwrap(), here);
    }

    /// Counts the events it is given.
    struct Count(std::sync::atomic::AtomicUsize);

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
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[test]
    fn decoding_on_a_worker_logs_to_the_callers_dispatcher() {
        use tracing::instrument::WithSubscriber;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let count = Arc::new(Count(std::sync::atomic::AtomicUsize::new(0)));
        let dispatch = tracing::Dispatch::from(Arc::clone(&count));
        let at = Location::parse("/w/t/manifest/manifest-3").unwrap();
        let work = async move {
            decode(&at, || {
                tracing::warn!("from a decoder");
                Ok(())
            })
            .await?;
            let l = at.clone();
            blocking(&at, move || {
                decode_from_blocking(&l, || {
                    tracing::warn!("from a decoder of a section");
                    Ok(())
                })
            })
            .await
        };
        rt.block_on(work.with_subscriber(dispatch)).unwrap();
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn panic_payload_texts() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&42_u8), "unknown panic payload");
    }
}
