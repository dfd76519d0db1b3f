//! Reading manifest lists, manifests and index manifests with bounded concurrency, and merging
//! manifest entries into a live file set (spec §3.7).

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::error::{Error, Result};
use crate::spec::manifest::{
    self, FileKind, FileLocator, IndexManifestEntry, ManifestEntry, ManifestFileMeta,
};
use crate::storage::{Location, Storage};
use crate::table::paths::PathFactory;

/// Reads metadata files of one table. Cheap to clone.
#[derive(Debug, Clone)]
pub struct MetadataReader {
    storage: Arc<Storage>,
    concurrency: usize,
}

impl MetadataReader {
    /// A reader issuing at most `concurrency` reads at once.
    pub fn new(storage: Arc<Storage>, concurrency: usize) -> Self {
        MetadataReader {
            storage,
            concurrency: concurrency.max(1),
        }
    }

    /// The read concurrency.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Read and decode a manifest list. A missing file is `Error::NotFound`.
    pub async fn manifest_list(
        &self,
        paths: &PathFactory,
        name: &str,
    ) -> Result<Vec<ManifestFileMeta>> {
        self.read_decoded(paths.manifest(name)?, manifest::decode_manifest_list)
            .await
    }

    /// Read and decode a manifest list and reduce it with `reduce` in the task that decodes
    /// it (on the runtime's workers): the decoded entries, with their partition statistics,
    /// never wait for the caller. When the workers are busy decoding, a caller reading many
    /// lists concurrently polls them late, and decoded lists piled up meanwhile.
    pub async fn manifest_list_reduced<T: Send + 'static>(
        &self,
        paths: &PathFactory,
        name: &str,
        reduce: impl FnOnce(Vec<ManifestFileMeta>) -> T + Send + 'static,
    ) -> Result<T> {
        let loc = paths.manifest(name)?;
        let at = loc.clone();
        self.storage
            .get_then(&loc, move |bytes| {
                manifest::decode_manifest_list(&bytes, at.as_str()).map(reduce)
            })
            .await
    }

    /// Read and decode one manifest.
    pub async fn manifest(&self, paths: &PathFactory, name: &str) -> Result<Vec<ManifestEntry>> {
        self.read_decoded(paths.manifest(name)?, manifest::decode_manifest)
            .await
    }

    /// Read one manifest and reduce it with `reduce` in the same task that decodes it (on the
    /// runtime's workers, `storage::decode`), so that the reduction runs on every core and the
    /// entries never reach the caller: `reduce` takes them one at a time from
    /// [`ManifestFiles::for_each_locator`] (or [`ManifestFiles::for_each`]).
    pub async fn manifest_reduced<T: Send + 'static>(
        &self,
        paths: &Arc<PathFactory>,
        name: &str,
        reduce: impl FnOnce(&PathFactory, ManifestFiles<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let loc = paths.manifest(name)?;
        let paths = paths.clone();
        let at = loc.clone();
        self.storage
            .get_then(&loc, move |bytes| {
                reduce(&paths, ManifestFiles::new(&bytes, &at))
            })
            .await
    }

    /// [`MetadataReader::manifest_reduced`] over the content of manifest `name`, fetched
    /// already: decoded and reduced on the runtime's workers (`storage::decode`).
    pub async fn manifest_bytes_reduced<T: Send + 'static>(
        &self,
        paths: &Arc<PathFactory>,
        name: &str,
        bytes: bytes::Bytes,
        reduce: impl FnOnce(&PathFactory, ManifestFiles<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let loc = paths.manifest(name)?;
        let paths = paths.clone();
        let at = loc.clone();
        crate::storage::decode(&loc, move || {
            reduce(&paths, ManifestFiles::new(&bytes, &at))
        })
        .await
    }

    /// The live entries of manifests `names` merged in order ([`merge_entries`]), each
    /// manifest merged as it arrives (read concurrently, in order) and dropped: what is held
    /// is the live set and the manifests in flight, not every entry of every manifest.
    pub async fn merged_manifests(
        &self,
        paths: &PathFactory,
        names: &[String],
    ) -> Result<Vec<ManifestEntry>> {
        let mut merger = EntryMerger::default();
        let mut read = stream::iter(names.iter())
            .map(|n| self.manifest(paths, n))
            .buffered(self.concurrency);
        while let Some(entries) = read.next().await {
            for e in entries? {
                merger.push(e)?;
            }
        }
        Ok(merger.finish())
    }

    /// Read many manifests concurrently; results keep the order of `names`.
    pub async fn manifests(
        &self,
        paths: &PathFactory,
        names: &[String],
    ) -> Result<Vec<Vec<ManifestEntry>>> {
        stream::iter(names.iter())
            .map(|n| self.manifest(paths, n))
            .buffered(self.concurrency)
            .try_collect()
            .await
    }

    /// [`MetadataReader::index_manifest`] with the file's size in bytes.
    pub async fn index_manifest_sized(
        &self,
        paths: &PathFactory,
        name: &str,
    ) -> Result<(Vec<IndexManifestEntry>, u64)> {
        let loc = paths.manifest(name)?;
        let at = loc.clone();
        self.storage
            .get_then(&loc, move |bytes| {
                let entries = manifest::decode_index_manifest(&bytes, at.as_str())?;
                Ok((entries, bytes.len() as u64))
            })
            .await
    }

    /// Read and decode an index manifest.
    pub async fn index_manifest(
        &self,
        paths: &PathFactory,
        name: &str,
    ) -> Result<Vec<IndexManifestEntry>> {
        Ok(self.index_manifest_sized(paths, name).await?.0)
    }

    /// Read a file and decode it on the runtime's workers (`storage::decode`), so that
    /// many reads in flight (one task polling a `buffer_unordered` stream) decode on
    /// every core instead of the polling thread only.
    async fn read_decoded<T: Send + 'static>(
        &self,
        loc: Location,
        decode: fn(&[u8], &str) -> Result<T>,
    ) -> Result<T> {
        let at = loc.clone();
        self.storage
            .get_then(&loc, move |bytes| decode(&bytes, at.as_str()))
            .await
    }
}

/// The entries of one manifest's content, for a reduction that takes them one at a time.
pub struct ManifestFiles<'a> {
    bytes: &'a [u8],
    at: &'a Location,
}

impl<'a> ManifestFiles<'a> {
    /// The manifest content `bytes`, read from `at` (named in errors).
    pub fn new(bytes: &'a [u8], at: &'a Location) -> Self {
        ManifestFiles { bytes, at }
    }

    /// Decode the entries one at a time, with the fields that locate and identify a file
    /// ([`manifest::for_each_manifest_file`]: keys and statistics are left empty), and pass
    /// each to `f`. Stops at the first error, of the content or of `f`.
    pub fn for_each(self, f: impl FnMut(ManifestEntry) -> Result<()>) -> Result<()> {
        manifest::for_each_manifest_file(self.bytes, self.at.as_str(), f)
    }

    /// [`ManifestFiles::for_each`] with each entry's [`FileLocator`], borrowed from the
    /// decoded content ([`manifest::for_each_file_locator`]: the same fields are read and
    /// checked, so it fails where `for_each` does, without building an entry per entry).
    pub fn for_each_locator(self, f: impl FnMut(&FileLocator<'_>) -> Result<()>) -> Result<()> {
        manifest::for_each_file_locator(self.bytes, self.at.as_str(), f)
    }
}

/// Identity of a file entry for merging (spec §3.7): partition, bucket, level, name, extra
/// files, embedded index and external path.
type EntryIdentifier = (
    Vec<u8>,
    i32,
    i32,
    String,
    Vec<String>,
    Option<Vec<u8>>,
    Option<String>,
);

fn identifier(e: &ManifestEntry) -> EntryIdentifier {
    (
        e.partition.clone(),
        e.bucket,
        e.file.level,
        e.file.file_name.clone(),
        e.file.extra_files.clone(),
        e.file.embedded_index.clone(),
        e.file.external_path.clone(),
    )
}

/// Merge entries in order: ADD inserts, DELETE removes a present ADD (or is kept when its ADD
/// has not been seen). Returns the live ADD entries in first-seen order. An ADD of a file that
/// is already present (added or pending delete) is corruption and an error, as in Java.
pub fn merge_entries(
    entries: impl IntoIterator<Item = ManifestEntry>,
) -> Result<Vec<ManifestEntry>> {
    let mut merger = EntryMerger::default();
    for e in entries {
        merger.push(e)?;
    }
    Ok(merger.finish())
}

/// [`merge_entries`] one entry at a time: an entry a DELETE removes is freed at once, so the
/// merger holds the present entries only.
#[derive(Debug, Default)]
pub struct EntryMerger {
    /// Present entries (ADDs, and DELETEs whose ADD was not seen) by first-seen order.
    present: std::collections::BTreeMap<u64, ManifestEntry>,
    index: HashMap<EntryIdentifier, u64>,
    next: u64,
}

impl EntryMerger {
    /// Merge the next entry.
    pub fn push(&mut self, e: ManifestEntry) -> Result<()> {
        let id = identifier(&e);
        match e.kind {
            FileKind::Add => {
                if self.index.contains_key(&id) {
                    return Err(Error::Conflict(format!(
                        "file {} is added to a snapshot that already holds it (corrupt manifests)",
                        e.file.file_name
                    )));
                }
                self.index.insert(id, self.next);
                self.present.insert(self.next, e);
                self.next += 1;
            }
            FileKind::Delete => {
                if let Some(i) = self.index.remove(&id) {
                    self.present.remove(&i);
                } else {
                    self.index.insert(id, self.next);
                    self.present.insert(self.next, e);
                    self.next += 1;
                }
            }
        }
        Ok(())
    }

    /// The live ADD entries in first-seen order.
    pub fn finish(self) -> Vec<ManifestEntry> {
        self.present
            .into_values()
            .filter(|e| e.kind == FileKind::Add)
            .collect()
    }
}
