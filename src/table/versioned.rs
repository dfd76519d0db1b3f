//! Versioned metadata directories (`snapshot/`, `changelog/`) with their `EARLIEST` / `LATEST`
//! hints (spec §1.2, pitfall P16): hints are trusted only when the files agree with them.

use std::collections::BTreeMap;

use futures::StreamExt;

use crate::error::{Error, Result};
use crate::spec::consumer::parse_hint;
use crate::spec::snapshot::{Snapshot, VersionRefs};
use crate::storage::{Location, Storage};

/// Parses version `id` of a directory of `kind` from `bytes` read at `at` (the id inside must
/// match the name).
fn parse_version(kind: &'static str, bytes: &[u8], at: &str, id: i64) -> Result<Snapshot> {
    Snapshot::parse_expecting_id(bytes, at, id).map_err(|e| as_kind(kind, e))
}

/// Renames a malformed document's kind to the directory's `kind`.
fn as_kind(kind: &'static str, e: Error) -> Error {
    match e {
        Error::Malformed { path, message, .. } => Error::Malformed {
            kind,
            path,
            message,
        },
        other => other,
    }
}

/// One directory of `<prefix><id>` JSON files plus hints.
#[derive(Debug, Clone)]
pub struct VersionedDir {
    dir: Location,
    prefix: &'static str,
    kind: &'static str,
}

impl VersionedDir {
    /// `snapshot/` of a branch root.
    pub fn snapshots(branch_root: &Location) -> Self {
        VersionedDir {
            dir: branch_root.join("snapshot"),
            prefix: "snapshot-",
            kind: "snapshot",
        }
    }

    /// `changelog/` of a branch root (long-lived changelogs).
    pub fn changelogs(branch_root: &Location) -> Self {
        VersionedDir {
            dir: branch_root.join("changelog"),
            prefix: "changelog-",
            kind: "changelog",
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Location {
        &self.dir
    }

    /// The file name prefix (`snapshot-` or `changelog-`).
    pub fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// Location of version `id`.
    pub fn location(&self, id: i64) -> Location {
        self.dir.join(&format!("{}{id}", self.prefix))
    }

    /// Location of a hint file (`EARLIEST` or `LATEST`).
    pub fn hint_location(&self, hint: &str) -> Location {
        self.dir.join(hint)
    }

    /// Parse an id out of a file name: the suffix after the prefix must be a signed 64-bit integer.
    pub fn parse_id(&self, name: &str) -> Option<i64> {
        name.strip_prefix(self.prefix)?.parse().ok()
    }

    /// Every version id present, sorted ascending (temp files and other names ignored).
    pub async fn list_ids(&self, storage: &Storage) -> Result<Vec<i64>> {
        Ok(self.list_sized(storage).await?.into_keys().collect())
    }

    /// Every version id present with its file's size from the listing.
    pub async fn list_sized(&self, storage: &Storage) -> Result<BTreeMap<i64, u64>> {
        let listing = storage.list_metadata_dir(&self.dir).await?;
        Ok(listing
            .files
            .iter()
            .filter_map(|f| Some((self.parse_id(f.location.name())?, f.size)))
            .collect())
    }

    async fn read_hint(&self, storage: &Storage, hint: &str) -> Result<Option<i64>> {
        match storage.get(&self.hint_location(hint)).await {
            Ok(b) => Ok(parse_hint(&b)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Write hint `hint` (`EARLIEST` or `LATEST`) naming version `id`.
    pub async fn write_hint(&self, storage: &Storage, hint: &str, id: i64) -> Result<()> {
        storage
            .put(
                &self.hint_location(hint),
                bytes::Bytes::from(id.to_string()),
            )
            .await
    }

    /// Latest id: the `LATEST` hint if `<prefix><LATEST+1>` does not exist, else the max listed id.
    pub async fn latest_id(&self, storage: &Storage) -> Result<Option<i64>> {
        if let Some(h) = self.read_hint(storage, "LATEST").await? {
            let next_absent = match h.checked_add(1) {
                Some(n) => !storage.exists(&self.location(n)).await?,
                None => true,
            };
            if next_absent && storage.exists(&self.location(h)).await? {
                return Ok(Some(h));
            }
        }
        Ok(self.list_ids(storage).await?.last().copied())
    }

    /// Earliest id: the smallest listed id. The `EARLIEST` hint is not trusted over the
    /// listing: a version below it (left by a run that moved the hint and then failed to
    /// delete it, or written back by hand) is still a version a reader can open by id, so it
    /// must be expired whole or protect its files, never skipped.
    pub async fn earliest_id(&self, storage: &Storage) -> Result<Option<i64>> {
        Ok(self.list_ids(storage).await?.first().copied())
    }

    /// Read version `id`; `Error::NotFound` if absent; the id inside must match the name.
    pub async fn read(&self, storage: &Storage, id: i64) -> Result<Snapshot> {
        let loc = self.location(id);
        let bytes = storage.get(&loc).await?;
        parse_version(self.kind, &bytes, loc.as_str(), id)
    }

    /// [`VersionedDir::try_read`] of every id of `ids`, with at most `concurrency` reads in
    /// flight, several files read in one blocking section ([`Storage::get_many_then`]). One
    /// result per id, in the order of `ids`. The files are parsed here, on the calling thread:
    /// parsed versions are held until the caller is done with them, and when blocking threads
    /// build them, each thread's allocator arena keeps the memory they leave behind.
    pub async fn try_read_many(
        &self,
        storage: &Storage,
        ids: &[i64],
        concurrency: usize,
    ) -> Vec<(i64, Result<Option<Snapshot>>)> {
        let locs: Vec<Location> = ids.iter().map(|id| self.location(*id)).collect();
        let mut out: Vec<Option<Result<Option<Snapshot>>>> = (0..ids.len()).map(|_| None).collect();
        let mut read = storage.get_many_then(&locs, concurrency, |_, bytes| Ok(bytes));
        while let Some((i, r)) = read.next().await {
            let (Some(slot), Some(id), Some(at)) = (out.get_mut(i), ids.get(i), locs.get(i)) else {
                continue;
            };
            *slot = Some(match r {
                Ok(bytes) => parse_version(self.kind, &bytes, at.as_str(), *id).map(Some),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(e),
            });
        }
        drop(read);
        by_id(ids, out)
    }

    /// What each version of `ids` names ([`VersionRefs`]), with the checks of
    /// [`VersionedDir::try_read_many`] (`Ok(None)` for an absent file, the id inside must match
    /// the name). Several files are read and parsed in one blocking section, with at most
    /// `concurrency` sections at once (the parsed values are small); one result per id, in the
    /// order of `ids`.
    pub async fn try_read_refs_many(
        &self,
        storage: &Storage,
        ids: &[i64],
        concurrency: usize,
    ) -> Vec<(i64, Result<Option<VersionRefs>>)> {
        let locs: Vec<Location> = ids.iter().map(|id| self.location(*id)).collect();
        let mut out: Vec<Option<Result<Option<VersionRefs>>>> =
            (0..ids.len()).map(|_| None).collect();
        let kind = self.kind;
        let names: std::sync::Arc<Vec<(i64, String)>> = std::sync::Arc::new(
            ids.iter()
                .zip(&locs)
                .map(|(id, l)| (*id, l.as_str().to_string()))
                .collect(),
        );
        let mut read = storage.get_many_then(&locs, concurrency, move |i, bytes| {
            let (id, at) = names
                .get(i)
                .ok_or_else(|| Error::Internal("a version read without its name".into()))?;
            VersionRefs::parse_expecting_id(&bytes, at, *id).map_err(|e| as_kind(kind, e))
        });
        while let Some((i, r)) = read.next().await {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(match r {
                    Ok(refs) => Ok(Some(refs)),
                    Err(e) if e.is_not_found() => Ok(None),
                    Err(e) => Err(e),
                });
            }
        }
        drop(read);
        by_id(ids, out)
    }

    /// Read version `id` if it exists.
    pub async fn try_read(&self, storage: &Storage, id: i64) -> Result<Option<Snapshot>> {
        match self.read(storage, id).await {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// One result per id of `ids`, in their order: each read's result (`out`, by index), or an
/// internal error for an id no read answered.
fn by_id<T>(ids: &[i64], out: Vec<Option<Result<T>>>) -> Vec<(i64, Result<T>)> {
    ids.iter()
        .zip(out)
        .map(|(id, r)| {
            let r = r.unwrap_or_else(|| {
                Err(Error::Internal(format!("no read result for version {id}")))
            });
            (*id, r)
        })
        .collect()
}
