//! A fixed pool of writer threads fed through a bounded channel: the simulation produces jobs
//! (create empty files, encode and write a manifest, ...) and blocks when the writers fall
//! behind, so memory stays bounded.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Sender};

use super::model::Ctx;

/// A unit of work for a writer thread.
pub type Job = Box<dyn FnOnce(&Ctx) -> Result<(), String> + Send>;

/// Writer threads sharing one [`Ctx`].
pub struct Pool {
    tx: Option<Sender<Job>>,
    handles: Vec<JoinHandle<()>>,
    error: Arc<Mutex<Option<String>>>,
}

impl Pool {
    /// Starts `threads` writers (at least one).
    pub fn new(ctx: Arc<Ctx>, threads: usize) -> Self {
        let threads = threads.max(1);
        let (tx, rx) = bounded::<Job>(threads * 8);
        let error = Arc::new(Mutex::new(None::<String>));
        let handles = (0..threads)
            .map(|i| {
                let rx = rx.clone();
                let ctx = ctx.clone();
                let error = error.clone();
                std::thread::Builder::new()
                    .name(format!("gen-writer-{i}"))
                    .spawn(move || {
                        for job in rx {
                            if error.lock().map(|e| e.is_some()).unwrap_or(true) {
                                continue; // drain after a failure
                            }
                            if let Err(e) = job(&ctx) {
                                if let Ok(mut slot) = error.lock() {
                                    slot.get_or_insert(e);
                                }
                            }
                        }
                    })
                    .unwrap_or_else(|e| panic!("cannot start a writer thread: {e}"))
            })
            .collect();
        Pool {
            tx: Some(tx),
            handles,
            error,
        }
    }

    /// Queues a job; blocks while the queue is full. Fails once a job has failed.
    pub fn submit(&self, job: Job) -> Result<(), String> {
        if let Some(e) = self.error.lock().ok().and_then(|e| e.clone()) {
            return Err(e);
        }
        match &self.tx {
            Some(tx) => tx
                .send(job)
                .map_err(|_| "writer pool is closed".to_string()),
            None => Err("writer pool is closed".to_string()),
        }
    }

    /// Waits for every queued job; the first failure, if any.
    pub fn finish(mut self) -> Result<(), String> {
        self.tx = None;
        for h in self.handles.drain(..) {
            if h.join().is_err() {
                return Err("a writer thread panicked".into());
            }
        }
        match self.error.lock() {
            Ok(e) => e.clone().map_or(Ok(()), Err),
            Err(_) => Err("writer error slot poisoned".into()),
        }
    }
}
