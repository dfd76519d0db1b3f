//! The library's own pool of I/O threads (`paimon-cleanup-io`), which runs the blocking
//! sections of [`super::blocking`]: a fixed number of threads at most, started when work comes
//! and none is free, each leaving after [`IDLE_EXIT`] without work.
//!
//! Why not tokio's blocking pool: it starts a new thread whenever a task is handed over before
//! the thread that ran the previous one is waiting again, which the hand-over from one section
//! to the next almost always is. A run at a 309 k-file table ended with about 100 threads for 16
//! sections in flight, each with its own stack, malloc arena and zstd context. Here a thread is
//! started only while queued jobs outnumber the threads waiting for one, and never more than
//! the caller's limit (the bound on blocking sections in flight): a thread finishing a job takes the next queued one before it waits.
//!
//! Idle threads exit after [`IDLE_EXIT`], so that a host that keeps the library loaded for days
//! between runs holds no thread (nor its stack, arena and zstd context) between them; the next
//! job starts one again. During a run a thread is never idle that long.
//!
//! Jobs run without a tokio runtime context, so they must not use tokio's runtime (none does:
//! they are `std::fs` calls, decoding and pure reductions); they may block on anything that
//! does not wait for another job of this pool (none does).
//!
//! After `fork()` the child has none of the parent's threads: the first job the child hands
//! over sees the changed process id and starts over with an empty pool (the parent's queued
//! jobs, whose callers do not exist in the child, are dropped unrun).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

/// A job: runs once on a pool thread. It must not unwind (`blocking` catches its closure's
/// panic); the worker catches any unwind anyway so that it survives.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// A thread that waited this long for a job exits.
pub(crate) const IDLE_EXIT: Duration = Duration::from_secs(10);

/// Name of the pool's threads (what `top -H` and profilers show).
const THREAD_NAME: &str = "paimon-cleanup-io";

/// The queue and the thread counts, under one lock.
struct State {
    /// Jobs handed over and not yet taken by a thread.
    queue: VecDeque<Job>,
    /// Threads started and not yet exited.
    threads: usize,
    /// Threads waiting for a job (on [`Pool::work`]).
    waiting: usize,
    /// The process these threads belong to (a forked child has none of them).
    pid: u32,
    /// Calls of [`stop_idle_threads`] in progress: while any is, a thread that finds no job
    /// queued exits (a count, so that concurrent calls do not end each other's request).
    stop: usize,
    /// The threads' handles, dropped (detached) or joined once they exited.
    handles: Vec<(ThreadId, JoinHandle<()>)>,
    /// Threads that left their loop and whose handle is still in `handles`.
    exited: Vec<ThreadId>,
}

struct Pool {
    state: Mutex<State>,
    /// Signalled once per job handed over when a thread waits.
    work: Condvar,
    /// Signalled when a thread exits.
    gone: Condvar,
}

static POOL: Pool = Pool {
    state: Mutex::new(State {
        queue: VecDeque::new(),
        threads: 0,
        waiting: 0,
        pid: 0,
        stop: 0,
        handles: Vec::new(),
        exited: Vec::new(),
    }),
    work: Condvar::new(),
    gone: Condvar::new(),
};

impl Pool {
    /// The state; a poisoned lock is taken over (jobs never run under it, so its content is
    /// consistent whatever panicked).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Hands `job` to a pool thread, starting one if the queued jobs outnumber the waiting threads
/// and fewer than `max_threads` run. Returns the job if it cannot run: no thread exists and
/// none can be started (the OS refused; the error is logged).
pub(crate) fn submit(job: Job, max_threads: usize) -> Result<(), Job> {
    let mut st = POOL.lock();
    let pid = std::process::id();
    if st.pid != pid {
        // First use, or the first job in a forked child: the parent's threads are not here.
        st.queue.clear();
        st.threads = 0;
        st.waiting = 0;
        st.stop = 0;
        st.exited.clear();
        // Handles of the parent's threads name nothing here: neither join nor detach them.
        std::mem::forget(std::mem::take(&mut st.handles));
        st.pid = pid;
    }
    reap(&mut st);
    st.queue.push_back(job);
    if st.queue.len() <= st.waiting || st.threads >= max_threads {
        drop(st);
        POOL.work.notify_one();
        return Ok(());
    }
    st.threads += 1;
    drop(st);
    let started = std::thread::Builder::new()
        .name(THREAD_NAME.to_owned())
        .spawn(work);
    let mut st = POOL.lock();
    match started {
        Ok(handle) => st.handles.push((handle.thread().id(), handle)),
        Err(e) => {
            st.threads -= 1;
            tracing::error!(error = %e, threads = st.threads, "cannot start an I/O thread");
            if st.threads == 0 {
                // Nobody would ever take it; its caller gets an error instead of waiting
                // forever. (Another job queued meanwhile started its own thread or also comes
                // back.)
                if let Some(job) = st.queue.pop_back() {
                    return Err(job);
                }
            }
        }
    }
    Ok(())
}

/// Joins the threads that exited (none is left running detached, to be caught alive at process
/// exit). An exited thread released the lock when it left its loop, so joining it here waits
/// only for its teardown.
fn reap(st: &mut State) {
    if st.exited.is_empty() {
        return;
    }
    let exited = std::mem::take(&mut st.exited);
    let (done, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut st.handles)
        .into_iter()
        .partition(|(id, _)| exited.contains(id));
    st.handles = kept;
    for (_, handle) in done {
        // A thread's job never unwinds out of it (see `work`).
        let _ = handle.join();
    }
}

/// Ends the pool's threads as soon as no job is queued for them and joins them, so that none
/// is left behind when the host releases the library's resources
/// (`paimon_cleanup_executor_free`): a host that exits right after, or a leak checker, sees no
/// thread of this library that outlived its last executor. A thread running a job (for another
/// executor) ends after it if nothing is queued then; the next job starts threads again. Waits
/// at most 5 s.
pub(crate) fn stop_idle_threads() {
    let mut st = POOL.lock();
    if st.pid != std::process::id() {
        return;
    }
    // Every thread, not only those waiting now: one that just ran the last job of a run is
    // about to wait (its caller may already be freeing the executor) and must end too.
    st.stop += 1;
    POOL.work.notify_all();
    let deadline = Instant::now() + Duration::from_secs(5);
    while st.threads > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        st = POOL
            .gone
            .wait_timeout(st, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    st.stop -= 1;
    let exited = std::mem::take(&mut st.exited);
    let mut done = Vec::with_capacity(exited.len());
    let mut kept = Vec::with_capacity(st.handles.len());
    for (id, handle) in std::mem::take(&mut st.handles) {
        if exited.contains(&id) {
            done.push(handle);
        } else {
            kept.push((id, handle));
        }
    }
    st.handles = kept;
    drop(st);
    for handle in done {
        // A thread's job never unwinds out of it (see `work`).
        let _ = handle.join();
    }
}

/// A pool thread: takes queued jobs until none came for [`IDLE_EXIT`].
fn work() {
    let mut st = POOL.lock();
    loop {
        if let Some(job) = st.queue.pop_front() {
            drop(st);
            // `blocking` catches its closure's panic; this only keeps the thread alive should
            // anything else unwind.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            st = POOL.lock();
            continue;
        }
        if st.stop > 0 {
            exit(&mut st);
            return;
        }
        st.waiting += 1;
        let (guard, wait) = POOL
            .work
            .wait_timeout(st, IDLE_EXIT)
            .unwrap_or_else(PoisonError::into_inner);
        st = guard;
        st.waiting -= 1;
        if st.queue.is_empty() && (wait.timed_out() || st.stop > 0) {
            exit(&mut st);
            return;
        }
    }
}

/// The bookkeeping of a pool thread that leaves its loop (the caller returns right after).
fn exit(st: &mut State) {
    st.threads -= 1;
    st.exited.push(std::thread::current().id());
    POOL.gone.notify_all();
}

/// Threads the pool runs now (started and not exited).
#[cfg(test)]
pub(crate) fn threads() -> usize {
    POOL.lock().threads
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Arc, Barrier};

    /// The limit `blocking` uses.
    fn max_threads() -> usize {
        16
    }

    #[test]
    fn jobs_run_on_named_threads_and_a_panic_leaves_the_thread_alive() {
        let (tx, rx) = mpsc::channel();
        let t = tx.clone();
        submit(Box::new(move || panic!("job bug")), max_threads())
            .map_err(|_| ())
            .unwrap();
        submit(
            Box::new(move || {
                let name = std::thread::current().name().map(str::to_owned);
                t.send(name).unwrap();
            }),
            max_threads(),
        )
        .map_err(|_| ())
        .unwrap();
        let name = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(name.as_deref(), Some(THREAD_NAME));
        drop(tx);
    }

    #[test]
    fn stopping_idle_threads_ends_them_before_their_idle_timeout() {
        /// Sends on its channel when the thread holding it exits.
        struct OnExit(mpsc::Sender<()>);
        impl Drop for OnExit {
            fn drop(&mut self) {
                let _ = self.0.send(());
            }
        }
        thread_local! {
            static ON_EXIT: std::cell::RefCell<Option<OnExit>> = const { std::cell::RefCell::new(None) };
        }
        let (exit_tx, exit_rx) = mpsc::channel();
        let (ran_tx, ran_rx) = mpsc::channel();
        submit(
            Box::new(move || {
                ON_EXIT.with(|slot| *slot.borrow_mut() = Some(OnExit(exit_tx)));
                ran_tx.send(()).unwrap();
            }),
            max_threads(),
        )
        .map_err(|_| ())
        .unwrap();
        ran_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        // Let the thread reach its wait (the job's `send` comes just before).
        std::thread::sleep(Duration::from_millis(100));
        let asked = Instant::now();
        stop_idle_threads();
        // Well before IDLE_EXIT: the thread went because it was asked to.
        exit_rx
            .recv_timeout(IDLE_EXIT - Duration::from_secs(2))
            .unwrap();
        assert!(asked.elapsed() < IDLE_EXIT, "{:?}", asked.elapsed());
    }

    #[test]
    fn never_more_threads_than_the_maximum_and_all_jobs_run() {
        // More jobs than threads, each holding its thread until all threads are busy: the
        // surplus waits in the queue and runs on the same threads.
        let n = max_threads();
        let done = Arc::new(AtomicUsize::new(0));
        let busy = Arc::new(Barrier::new(n + 1));
        let (tx, rx) = mpsc::channel();
        for i in 0..3 * n {
            let done = done.clone();
            let busy = busy.clone();
            let tx = tx.clone();
            submit(
                Box::new(move || {
                    if i < n {
                        busy.wait();
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                    tx.send(()).unwrap();
                }),
                n,
            )
            .map_err(|_| ())
            .unwrap();
        }
        busy.wait();
        assert!(threads() <= n, "{} threads for at most {n}", threads());
        for _ in 0..3 * n {
            rx.recv_timeout(Duration::from_secs(60)).unwrap();
        }
        assert_eq!(done.load(Ordering::SeqCst), 3 * n);
        assert!(threads() <= n, "{} threads for at most {n}", threads());
    }
}
