//! Batched, guarded, idempotent deletion with a report; honours dry run, cancellation and the
//! crash-injection point of [`RunControl`].

use std::collections::HashSet;

use crate::clean::control::RunControl;
use crate::clean::report::{DeletionReport, FailedDelete, FileClass};
use crate::error::{Error, Result};
use crate::storage::{Location, Storage};

/// Files per delete batch (also the cancellation and progress granularity).
const BATCH: usize = 1000;

/// A file planned for deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Where it is.
    pub location: Location,
    /// What it is.
    pub class: FileClass,
    /// Its size when metadata knows it.
    pub bytes: Option<u64>,
}

/// Deletes planned files and accumulates a [`DeletionReport`].
pub struct Deleter<'a> {
    storage: &'a Storage,
    control: &'a RunControl,
    dry_run: bool,
    seen: HashSet<Location>,
    deleted_so_far: u64,
    /// The report so far.
    pub report: DeletionReport,
}

impl<'a> Deleter<'a> {
    /// A deleter over `storage`; with `dry_run` nothing is ever changed.
    pub fn new(storage: &'a Storage, control: &'a RunControl, dry_run: bool) -> Self {
        Deleter {
            storage,
            control,
            dry_run,
            seen: HashSet::new(),
            deleted_so_far: 0,
            report: DeletionReport {
                dry_run,
                ..Default::default()
            },
        }
    }

    /// True in a dry run.
    pub fn dry_run(&self) -> bool {
        self.dry_run
    }

    /// Delete `files` (each location at most once per run), in batches, in the given order.
    /// Every location is checked by the storage guard first; a refused one is an error for the
    /// whole run (it means metadata points outside the table), raised before anything in its
    /// batch is deleted.
    pub async fn delete(&mut self, phase: &str, files: Vec<Planned>) -> Result<()> {
        // Each location at most once: not seen in an earlier call, nor earlier in this one.
        let keep: Vec<bool> = {
            let mut here: HashSet<&Location> = HashSet::new();
            files
                .iter()
                .map(|p| !self.seen.contains(&p.location) && here.insert(&p.location))
                .collect()
        };
        let files: Vec<Planned> = files
            .into_iter()
            .zip(keep)
            .filter_map(|(p, k)| k.then_some(p))
            .collect();
        let total = files.len() as u64;
        let mut done = 0u64;
        let mut rest = files.into_iter();
        loop {
            let chunk: Vec<Planned> = rest.by_ref().take(BATCH).collect();
            if chunk.is_empty() {
                break;
            }
            self.control.cancel.check()?;
            for p in &chunk {
                self.storage.check_deletable(&p.location)?;
            }
            let sizes = self.sizes(&chunk).await;
            if self.dry_run {
                for (p, size) in chunk.iter().zip(sizes) {
                    self.report.record(p.class, self.display(&p.location), size);
                }
            } else {
                let mut allowed = chunk.len();
                if let Some(limit) = self.control.fail_after_deletes {
                    allowed = allowed.min(limit.saturating_sub(self.deleted_so_far) as usize);
                }
                let locs: Vec<Location> = chunk[..allowed]
                    .iter()
                    .map(|p| p.location.clone())
                    .collect();
                let results = self
                    .storage
                    .delete_files(locs, self.control.io_concurrency)
                    .await;
                for ((p, size), (_, res)) in chunk.iter().zip(sizes).zip(results) {
                    match res {
                        Ok(()) => {
                            self.deleted_so_far += 1;
                            self.report.record(p.class, self.display(&p.location), size);
                        }
                        Err(e @ Error::PathRefused { .. }) => return Err(e),
                        Err(e) => {
                            tracing::warn!(path = %p.location, error = %e, "delete failed");
                            self.report.failed.push(FailedDelete {
                                path: self.display(&p.location),
                                error: e.to_string(),
                            });
                        }
                    }
                }
                if allowed < chunk.len() {
                    return Err(Error::Internal(format!(
                        "injected failure after {} deletions",
                        self.deleted_so_far
                    )));
                }
            }
            done += chunk.len() as u64;
            self.seen.extend(chunk.into_iter().map(|p| p.location));
            self.control
                .progress(phase, done, total, self.report.total_bytes());
        }
        Ok(())
    }

    /// Try to remove a directory if it is empty (never in a dry run). Returns true if removed.
    pub async fn remove_dir_if_empty(&mut self, dir: &Location) -> bool {
        if self.dry_run || self.storage.check_deletable(dir).is_err() {
            return false;
        }
        match self.storage.delete_dir_if_empty(dir).await {
            Ok(true) => {
                self.report.dirs_removed += 1;
                true
            }
            _ => false,
        }
    }

    /// Sizes for the report: from metadata where the plan has them; a `HEAD` only for the
    /// rest (extra files, index manifests, version files), concurrently.
    async fn sizes(&self, chunk: &[Planned]) -> Vec<u64> {
        use futures::stream::{self, StreamExt};
        if chunk.iter().all(|p| p.bytes.is_some()) {
            return chunk.iter().map(|p| p.bytes.unwrap_or(0)).collect();
        }
        stream::iter(chunk.iter())
            .map(|p| async move {
                match p.bytes {
                    Some(b) => b,
                    None => match self.storage.head(&p.location).await {
                        Ok(Some(st)) => st.size,
                        _ => 0,
                    },
                }
            })
            .buffered(self.control.io_concurrency.max(1))
            .collect()
            .await
    }

    fn display(&self, loc: &Location) -> String {
        loc.relative_to(self.storage.root())
            .map(String::from)
            .unwrap_or_else(|| loc.as_str().to_string())
    }
}
