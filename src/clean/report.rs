//! Reports shared by every cleanup capability: files and bytes per kind, failures, paths.

use std::collections::BTreeMap;

use serde::Serialize;

mod class;
mod paths;

pub use class::{DeletedPath, FileClass};
pub use paths::{DeletedPaths, Iter as DeletedPathsIter, IN_MEMORY as PATHS_IN_MEMORY};

/// Files and bytes of one class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Number of files.
    pub files: u64,
    /// Total bytes (from metadata where known, else from the store).
    pub bytes: u64,
}

/// A deletion that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedDelete {
    /// Location.
    pub path: String,
    /// Error text.
    pub error: String,
}

/// The outcome of a deletion run, shared by every capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DeletionReport {
    /// True when nothing was changed.
    pub dry_run: bool,
    /// Files and bytes deleted (or deletable) per class: only files this run removed. A
    /// planned file found already gone is not counted: by the delete itself where the store
    /// says so (local disks, GCS, Azure), or by the `HEAD` that sized a file whose size
    /// metadata does not give (metadata files). On S3 and the memory store, whose deletes do not
    /// say, a file sized by metadata (a data file) that was already gone is still counted. A
    /// dry run counts the plan, less what its sizing `HEAD` found absent.
    pub deleted: BTreeMap<FileClass, Count>,
    /// Deletions that failed (the files are still there).
    pub failed: Vec<FailedDelete>,
    /// Directories removed.
    pub dirs_removed: u64,
    /// Every deleted (or deletable) file, in the order deleted; past a small in-memory budget
    /// kept in a temporary file (see [`DeletedPaths`]). With `paths_elsewhere`, only the
    /// files the run's driver deleted itself and a sample of the others.
    pub paths: DeletedPaths,
    /// True for a counts-only report: the run's tasks kept the freed data and changelog paths
    /// themselves (snapshot expiry as units with its paths handed to the tasks), so `paths`
    /// holds a sample of them and `deleted` and `failed` stay complete.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paths_elsewhere: bool,
}

impl DeletionReport {
    /// Count of one class.
    pub fn count(&self, class: FileClass) -> Count {
        self.deleted.get(&class).copied().unwrap_or_default()
    }

    /// Files deleted over all classes.
    pub fn total_files(&self) -> u64 {
        self.deleted.values().map(|c| c.files).sum()
    }

    /// Bytes deleted over all classes.
    pub fn total_bytes(&self) -> u64 {
        self.deleted.values().map(|c| c.bytes).sum()
    }

    pub(crate) fn record(&mut self, class: FileClass, path: String, bytes: u64) {
        self.count_only(class, bytes);
        self.paths.push(DeletedPath { class, path });
    }

    /// Counts one file of `class` and `bytes` without keeping its path.
    pub(crate) fn count_only(&mut self, class: FileClass, bytes: u64) {
        let c = self.deleted.entry(class).or_default();
        c.files += 1;
        c.bytes += bytes;
    }
}
