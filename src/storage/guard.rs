//! The delete guard: which locations a storage may delete or write.
//!
//! Logical layer only (normalized locations compared component-wise); the physical layer for
//! local disks (no symlink followed beneath an allowed root) is in [`super::beneath`] and runs
//! inside the local backend's deletes.

use crate::error::{Error, Result};

use super::Location;

/// The table root and the extra roots deletions are allowed under.
#[derive(Clone, Debug)]
pub(crate) struct DeleteGuard {
    root: Location,
    extra: Vec<Location>,
}

/// A refusal of `loc`, with the reason.
pub(super) fn refused(loc: &Location, reason: impl Into<String>) -> Error {
    Error::PathRefused {
        path: loc.to_string(),
        reason: reason.into(),
    }
}

impl DeleteGuard {
    /// A guard allowing only locations strictly under `root`.
    pub(crate) fn new(root: Location) -> DeleteGuard {
        DeleteGuard {
            root,
            extra: Vec::new(),
        }
    }

    /// The table root.
    pub(crate) fn root(&self) -> &Location {
        &self.root
    }

    /// The roots added with [`DeleteGuard::allow_under`].
    pub(crate) fn extra_roots(&self) -> &[Location] {
        &self.extra
    }

    /// All allowed roots, table root first.
    pub(crate) fn allowed_roots(&self) -> Vec<Location> {
        std::iter::once(self.root.clone())
            .chain(self.extra.iter().cloned())
            .collect()
    }

    /// Allows deletions under `root` too; the root of a whole local filesystem is ignored
    /// with a warning.
    pub(crate) fn allow_under(&mut self, root: Location) {
        if root.is_local() && root.is_store_root() {
            tracing::warn!(root = %root, "refusing to allow deletions under the filesystem root");
            return;
        }
        if root != self.root && !self.extra.contains(&root) {
            tracing::debug!(root = %root, "added delete root");
            self.extra.push(root);
        }
    }

    /// `Ok(())` if `loc` lies strictly under an allowed root, else [`Error::PathRefused`]
    /// (also for a root itself).
    pub(crate) fn check(&self, loc: &Location) -> Result<()> {
        if std::iter::once(&self.root)
            .chain(self.extra.iter())
            .any(|root| loc.is_under(root))
        {
            return Ok(());
        }
        if *loc == self.root || self.extra.contains(loc) {
            return Err(refused(loc, "it is a root directory itself"));
        }
        Err(refused(
            loc,
            format!(
                "it is not under the table root {} or an allowed external root",
                self.root
            ),
        ))
    }
}
