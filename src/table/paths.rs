//! Path factory (spec §1.11, §1.13): where every file a snapshot references lives.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::hash::FastMap;
use crate::spec::manifest::{DataFileMeta, FileLocator, IndexManifestEntry};
use crate::spec::options::TableOptions;
use crate::spec::partition::PartitionComputer;
use crate::spec::types::DataField;
use crate::storage::Location;

/// Resolves names found in metadata to locations. Partition paths are cached by their bytes.
#[derive(Debug)]
pub struct PathFactory {
    root: Location,
    data_root: Location,
    partition_fields: Vec<DataField>,
    /// The computer, or why the partition keys cannot be turned into paths (reported on use,
    /// so a table with e.g. a FLOAT key can still be opened and listed).
    computer: std::result::Result<PartitionComputer, String>,
    index_in_data_dir: bool,
    partition_cache: Mutex<HashMap<Vec<u8>, String>>,
}

impl PathFactory {
    /// Build the factory for a table root with its options and partition fields.
    pub fn new(
        root: &Location,
        options: &TableOptions,
        partition_fields: Vec<DataField>,
    ) -> Result<Self> {
        let data_root = match options.data_file_path_directory() {
            Some(dir) => root.join(dir.trim_matches('/')),
            None => root.clone(),
        };
        Ok(PathFactory {
            root: root.clone(),
            data_root,
            computer: PartitionComputer::new(
                partition_fields.clone(),
                options.partition_default_name(),
                options.partition_legacy_name()?,
            )
            .map_err(|e| e.to_string()),
            partition_fields,
            index_in_data_dir: options.index_file_in_data_file_dir()?,
            partition_cache: Mutex::new(HashMap::new()),
        })
    }

    /// The table root.
    pub fn root(&self) -> &Location {
        &self.root
    }

    /// The data root (`<root>` or `<root>/<data-file.path-directory>`).
    pub fn data_root(&self) -> &Location {
        &self.data_root
    }

    /// The partition fields, in key order.
    pub fn partition_fields(&self) -> &[DataField] {
        &self.partition_fields
    }

    /// `<root>/manifest/<name>`: manifest lists, manifests and index manifests.
    pub fn manifest(&self, name: &str) -> Result<Location> {
        child(&self.root.join("manifest"), name)
    }

    /// `<root>/statistics/<name>`.
    pub fn statistics(&self, name: &str) -> Result<Location> {
        child(&self.root.join("statistics"), name)
    }

    /// `<root>/index/<name>`.
    pub fn index_dir_file(&self, name: &str) -> Result<Location> {
        child(&self.root.join("index"), name)
    }

    /// The partition path `k1=v1/k2=v2/` of serialized partition bytes ("" when unpartitioned).
    pub fn partition_path(&self, partition: &[u8]) -> Result<String> {
        if let Ok(cache) = self.partition_cache.lock() {
            if let Some(p) = cache.get(partition) {
                return Ok(p.clone());
            }
        }
        let computer = self
            .computer
            .as_ref()
            .map_err(|why| Error::Unsupported(why.clone()))?;
        let path = computer.path(partition)?;
        if let Ok(mut cache) = self.partition_cache.lock() {
            cache.insert(partition.to_vec(), path.clone());
        }
        Ok(path)
    }

    /// Name of a bucket directory: `bucket-N`, or `bucket-postpone` for bucket -2.
    pub fn bucket_dir_name(bucket: i32) -> String {
        if bucket == -2 {
            "bucket-postpone".to_string()
        } else {
            format!("bucket-{bucket}")
        }
    }

    /// Path of a bucket directory relative to the table root.
    pub fn relative_bucket_path(&self, partition: &[u8], bucket: i32) -> Result<String> {
        let data_prefix = self
            .data_root
            .relative_to(&self.root)
            .filter(|s| !s.is_empty())
            .map(|s| format!("{s}/"))
            .unwrap_or_default();
        Ok(format!(
            "{data_prefix}{}{}",
            self.partition_path(partition)?,
            Self::bucket_dir_name(bucket)
        ))
    }

    /// `<data root>/<partition path>bucket-N`.
    pub fn bucket_dir(&self, partition: &[u8], bucket: i32) -> Result<Location> {
        Ok(self
            .root
            .join(&self.relative_bucket_path(partition, bucket)?))
    }

    /// Where a data (or changelog) file lives: `_EXTERNAL_PATH` if set, else in its bucket dir.
    pub fn data_file(
        &self,
        partition: &[u8],
        bucket: i32,
        file: &DataFileMeta,
    ) -> Result<Location> {
        match &file.external_path {
            Some(ext) => Location::parse(ext),
            None => child(&self.bucket_dir(partition, bucket)?, &file.file_name),
        }
    }

    /// The data file plus its extra files (same directory as the data file), data file first.
    /// For many entries in a row use a [`DataFileLocator`].
    pub fn data_file_with_extras(
        &self,
        partition: &[u8],
        bucket: i32,
        file: &DataFileMeta,
    ) -> Result<Vec<Location>> {
        let (main, extras) =
            DataFileLocator::new(self).data_file_with_extras(partition, bucket, file)?;
        Ok(std::iter::once(main).chain(extras).collect())
    }

    /// Where an index file lives (spec §1.13).
    pub fn index_file(&self, entry: &IndexManifestEntry) -> Result<Location> {
        if let Some(ext) = &entry.external_path {
            return Location::parse(ext);
        }
        if self.index_in_data_dir && !entry.is_global {
            return child(
                &self.bucket_dir(&entry.partition, entry.bucket)?,
                &entry.file_name,
            );
        }
        self.index_dir_file(&entry.file_name)
    }

    /// Display form of a location for reports: relative to the table root when under it,
    /// otherwise the full location.
    pub fn display(&self, loc: &Location) -> String {
        match loc.relative_to(&self.root) {
            Some(rel) => rel.to_string(),
            None => loc.as_str().to_string(),
        }
    }
}

/// Resolves many data files' locations in a row (one manifest's entries), building each
/// bucket directory once instead of once per file. Same results as
/// [`PathFactory::data_file`] / [`PathFactory::data_file_with_extras`].
pub struct DataFileLocator<'p> {
    paths: &'p PathFactory,
    /// Bucket directories by partition, then bucket (looked up by borrowed partition bytes).
    bucket_dirs: FastMap<Vec<u8>, FastMap<i32, Location>>,
    /// The partition and bucket of the last lookup and their directory: a manifest's entries
    /// mostly come grouped by partition and bucket.
    last: Option<(Vec<u8>, i32, Location)>,
}

impl<'p> DataFileLocator<'p> {
    /// A locator over `paths`.
    pub fn new(paths: &'p PathFactory) -> Self {
        DataFileLocator {
            paths,
            bucket_dirs: FastMap::default(),
            last: None,
        }
    }

    /// Where a data (or changelog) file lives (see [`PathFactory::data_file`]).
    pub fn data_file(
        &mut self,
        partition: &[u8],
        bucket: i32,
        file: &DataFileMeta,
    ) -> Result<Location> {
        self.file_at(
            partition,
            bucket,
            &file.file_name,
            file.external_path.as_deref(),
        )
    }

    /// [`crate::hash::location_key`] of [`DataFileLocator::data_file`], without building the
    /// location (same errors for a file name that is not a plain segment).
    pub fn data_file_key(
        &mut self,
        partition: &[u8],
        bucket: i32,
        file: &DataFileMeta,
    ) -> Result<u64> {
        self.file_key(
            partition,
            bucket,
            &file.file_name,
            file.external_path.as_deref(),
        )
    }

    /// [`DataFileLocator::data_file_key`] of a decoded entry's [`FileLocator`] (same key, same
    /// errors).
    pub fn locator_key(&mut self, l: &FileLocator<'_>) -> Result<u64> {
        self.file_key(l.partition, l.bucket, l.file_name, l.external_path)
    }

    /// [`DataFileLocator::data_file_with_extras`] of a decoded entry's [`FileLocator`] (same
    /// locations, same errors).
    pub fn locate(&mut self, l: &FileLocator<'_>) -> Result<(Location, Vec<Location>)> {
        self.with_extras_at(
            l.partition,
            l.bucket,
            l.file_name,
            l.external_path,
            &l.extra_files,
        )
    }

    /// Where the file `name` of `partition` and `bucket` (or at `external`, when set) lives:
    /// what [`DataFileLocator::data_file`] resolves, from borrowed parts.
    fn file_at(
        &mut self,
        partition: &[u8],
        bucket: i32,
        name: &str,
        external: Option<&str>,
    ) -> Result<Location> {
        if let Some(ext) = external {
            return Location::parse(ext);
        }
        let dir = self.bucket_dir(partition, bucket)?;
        child(dir, name)
    }

    /// [`crate::hash::location_key`] of the file `name` of `partition` and `bucket` (or at
    /// `external`, when set), without building the location (same errors as building it:
    /// a file name that is not a plain segment is refused).
    pub fn file_key(
        &mut self,
        partition: &[u8],
        bucket: i32,
        name: &str,
        external: Option<&str>,
    ) -> Result<u64> {
        if external.is_some() {
            return Ok(crate::hash::location_key(
                self.file_at(partition, bucket, name, external)?.as_str(),
            ));
        }
        let dir = self.bucket_dir(partition, bucket)?;
        check_plain_name(dir, name)?;
        if dir.as_str().ends_with('/') {
            // A store root: the joined location has no extra `/`.
            return Ok(crate::hash::location_key(child(dir, name)?.as_str()));
        }
        Ok(crate::hash::child_key(dir.as_str(), name))
    }

    fn bucket_dir(&mut self, partition: &[u8], bucket: i32) -> Result<&Location> {
        let hit = matches!(&self.last, Some((p, b, _)) if *b == bucket && p == partition);
        if !hit {
            let dir = match self.bucket_dirs.get(partition).and_then(|m| m.get(&bucket)) {
                Some(d) => d.clone(),
                None => {
                    let d = self.paths.bucket_dir(partition, bucket)?;
                    self.bucket_dirs
                        .entry(partition.to_vec())
                        .or_default()
                        .insert(bucket, d.clone());
                    d
                }
            };
            self.last = Some((partition.to_vec(), bucket, dir));
        }
        self.last
            .as_ref()
            .map(|(_, _, dir)| dir)
            .ok_or_else(|| Error::Internal("bucket directory cache is empty".into()))
    }

    /// The data file and its extra files, which live beside it (see
    /// [`PathFactory::data_file_with_extras`]).
    pub fn data_file_with_extras(
        &mut self,
        partition: &[u8],
        bucket: i32,
        file: &DataFileMeta,
    ) -> Result<(Location, Vec<Location>)> {
        self.with_extras_at(
            partition,
            bucket,
            &file.file_name,
            file.external_path.as_deref(),
            &file.extra_files,
        )
    }

    /// [`DataFileLocator::file_at`] and the extra files beside it, from borrowed parts.
    fn with_extras_at<S: AsRef<str>>(
        &mut self,
        partition: &[u8],
        bucket: i32,
        name: &str,
        external: Option<&str>,
        extra_files: &[S],
    ) -> Result<(Location, Vec<Location>)> {
        let main = self.file_at(partition, bucket, name, external)?;
        let mut extras = Vec::new();
        if !extra_files.is_empty() {
            if let Some(dir) = main.parent() {
                extras.reserve(extra_files.len());
                for extra in extra_files {
                    extras.push(child(&dir, extra.as_ref())?);
                }
            }
        }
        Ok((main, extras))
    }
}

/// `dir/name` for a file name taken from metadata: it must be one plain path segment, so a
/// crafted manifest naming `../x` or `a/b` can never point outside its directory.
pub fn child(dir: &Location, name: &str) -> Result<Location> {
    check_plain_name(dir, name)?;
    Ok(dir.join(name))
}

/// The error of [`child`] for a `name` that is not one plain path segment.
fn check_plain_name(dir: &Location, name: &str) -> Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(Error::malformed(
            "metadata",
            dir.as_str(),
            format!("file name '{name}' is not a plain file name"),
        ));
    }
    Ok(())
}
