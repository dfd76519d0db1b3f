//! The generator's compact in-memory model of files and manifest entries, and its conversion
//! to the crate's manifest types for writing.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use paimon_cleanup::spec::binary_row::{BinaryRowWriter, EMPTY_ROW};
use paimon_cleanup::spec::manifest::{
    DataFileMeta, DeletionVectorMeta, FileKind, IndexManifestEntry, ManifestEntry, SimpleStats,
};
use paimon_cleanup::spec::types::DataField;

use super::rng::uuid;

/// Name kinds for [`uuid`]: every kind of generated name draws from its own stream.
pub mod kinds {
    /// Data and changelog files of one commit.
    pub const COMMIT: u64 = 1;
    /// Manifests, manifest lists, index manifests and index files of the run.
    pub const METADATA: u64 = 2;
    /// Orphan files.
    pub const ORPHAN: u64 = 3;
    /// Commit users.
    pub const USER: u64 = 4;
}

/// Highest LSM level (Java default `num-levels` = 6 → levels 0..=5).
pub const MAX_LEVEL: u8 = 5;

/// One data or changelog file (what a `DataFileMeta` says about it), 48 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// Partition index.
    pub part: u32,
    /// Commit that wrote the file (names it: `data-<uuid(commit)>-<n>.parquet`).
    pub commit: u32,
    /// Counter of the file within its commit.
    pub n: u32,
    /// `_ROW_COUNT`.
    pub rows: u32,
    /// Smallest primary key.
    pub key_min: i32,
    /// Largest primary key.
    pub key_max: i32,
    /// `_MIN_SEQUENCE_NUMBER`.
    pub seq_min: i64,
    /// `_MAX_SEQUENCE_NUMBER`.
    pub seq_max: i64,
    /// `_CREATION_TIME` (epoch ms).
    pub ctime: i64,
    /// Bucket.
    pub bucket: u16,
    /// `_LEVEL`.
    pub level: u8,
    /// `_FILE_SOURCE`: 0 append, 1 compact.
    pub source: u8,
    /// A changelog file (`changelog-…`) rather than a data file.
    pub changelog: bool,
}

impl FileMeta {
    /// The file name.
    pub fn name(&self, seed: u64) -> String {
        let prefix = if self.changelog { "changelog" } else { "data" };
        format!(
            "{prefix}-{}-{}.parquet",
            uuid(seed, kinds::COMMIT, self.commit as u64),
            self.n
        )
    }

    /// Merge identity (spec §3.7) packed in 128 bits: partition, bucket, level, name.
    pub fn key(&self) -> u128 {
        (self.part as u128) << 96
            | (self.bucket as u128) << 80
            | (self.level as u128) << 72
            | (self.changelog as u128) << 64
            | (self.commit as u128) << 32
            | self.n as u128
    }
}

/// One manifest entry: ADD or DELETE of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CEntry {
    /// ADD (true) or DELETE.
    pub add: bool,
    /// The file.
    pub file: FileMeta,
}

/// Everything workers need to turn model values into files: paths, partition rows, names.
#[derive(Debug)]
pub struct Ctx {
    /// Table root directory.
    pub root: PathBuf,
    /// Seed of every generated name.
    pub seed: u64,
    /// `bucket` option.
    pub buckets: u32,
    /// Serialized partition BinaryRow per partition index.
    pub part_rows: Vec<Vec<u8>>,
    /// Relative partition directory per partition index, with trailing `/`.
    pub part_paths: Vec<String>,
    /// Partition fields, for manifest partition stats.
    pub partition_fields: Vec<DataField>,
    /// Bytes of every data and changelog file (zeros; `_FILE_SIZE` says the same).
    pub data_file_bytes: u32,
    /// Data and changelog files are referenced but never created.
    pub metadata_only: bool,
}

impl Ctx {
    /// Directory of a bucket.
    pub fn bucket_dir(&self, part: u32, bucket: u16) -> PathBuf {
        self.root
            .join(&self.part_paths[part as usize])
            .join(format!("bucket-{bucket}"))
    }

    /// Location of a data or changelog file.
    pub fn file_path(&self, f: &FileMeta) -> PathBuf {
        self.bucket_dir(f.part, f.bucket).join(f.name(self.seed))
    }

    /// Relative path of a data or changelog file ("/"-separated, as pypaimon prints it).
    pub fn relative_path(&self, f: &FileMeta) -> String {
        format!(
            "{}bucket-{}/{}",
            self.part_paths[f.part as usize],
            f.bucket,
            f.name(self.seed)
        )
    }

    /// `manifest/<name>`.
    pub fn manifest_path(&self, name: &str) -> PathBuf {
        self.root.join("manifest").join(name)
    }

    /// Name of manifest number `id`.
    pub fn manifest_name(&self, id: u32) -> String {
        format!("manifest-{}-{id}", uuid(self.seed, kinds::METADATA, 0))
    }

    /// Name of manifest list number `id`.
    pub fn list_name(&self, id: u32) -> String {
        format!("manifest-list-{}-{id}", uuid(self.seed, kinds::METADATA, 1))
    }

    /// Name of index manifest number `id`.
    pub fn index_manifest_name(&self, id: u32) -> String {
        format!(
            "index-manifest-{}-{id}",
            uuid(self.seed, kinds::METADATA, 2)
        )
    }

    /// Name of index file number `id` (in `index/`).
    pub fn index_file_name(&self, id: u32) -> String {
        format!("index-{}-{id}", uuid(self.seed, kinds::METADATA, 3))
    }

    /// Converts a model entry to the crate's manifest entry.
    pub fn manifest_entry(&self, e: &CEntry) -> ManifestEntry {
        let f = &e.file;
        let min_key = key_row(f.key_min);
        let max_key = key_row(f.key_max);
        let empty = Bytes::from_static(&EMPTY_ROW);
        ManifestEntry {
            kind: if e.add {
                FileKind::Add
            } else {
                FileKind::Delete
            },
            partition: self.part_rows[f.part as usize].clone(),
            bucket: f.bucket as i32,
            total_buckets: self.buckets as i32,
            file: DataFileMeta {
                file_name: f.name(self.seed),
                file_size: i64::from(self.data_file_bytes),
                row_count: f.rows as i64,
                schema_id: 0,
                level: f.level as i32,
                extra_files: Vec::new(),
                creation_time: Some(f.ctime),
                delete_row_count: Some(0),
                embedded_index: None,
                file_source: Some(f.source as i32),
                external_path: None,
                first_row_id: None,
                key_stats: SimpleStats {
                    min_values: min_key.clone(),
                    max_values: max_key.clone(),
                    null_counts: Some(vec![Some(0)]),
                },
                min_key,
                max_key,
                value_stats: SimpleStats {
                    min_values: empty.clone(),
                    max_values: empty,
                    null_counts: Some(Vec::new()),
                },
                min_sequence_number: f.seq_min,
                max_sequence_number: f.seq_max,
                value_stats_cols: Some(Vec::new()),
                write_cols: None,
                write_cols_sequences: None,
            },
        }
    }
}

impl Ctx {
    /// Appends `e` as one record of the built-in manifest schema in Avro's binary encoding:
    /// the bytes the crate's generic writer produces for [`Ctx::manifest_entry`], without
    /// building a value tree per entry (field order and union branches as in that schema).
    pub fn encode_manifest_entry(&self, e: &CEntry, out: &mut Vec<u8>) {
        let f = &e.file;
        let min_key = key_row(f.key_min);
        let max_key = key_row(f.key_max);
        avro_long(out, 2); // _VERSION
        avro_long(out, i64::from(!e.add)); // _KIND: 0 ADD, 1 DELETE
        avro_bytes(out, &self.part_rows[f.part as usize]);
        avro_long(out, i64::from(f.bucket));
        avro_long(out, i64::from(self.buckets));
        // _FILE
        avro_bytes(out, f.name(self.seed).as_bytes());
        avro_long(out, i64::from(self.data_file_bytes));
        avro_long(out, i64::from(f.rows));
        avro_bytes(out, &min_key);
        avro_bytes(out, &max_key);
        // _KEY_STATS: min, max, null counts [0]
        avro_bytes(out, &min_key);
        avro_bytes(out, &max_key);
        avro_long(out, 1); // union branch: array
        avro_long(out, 1); // one item
        avro_long(out, 1); // union branch: long
        avro_long(out, 0);
        avro_long(out, 0); // end of array
                           // _VALUE_STATS: empty rows, null counts []
        avro_bytes(out, &EMPTY_ROW);
        avro_bytes(out, &EMPTY_ROW);
        avro_long(out, 1); // union branch: array
        avro_long(out, 0); // empty array
        avro_long(out, f.seq_min);
        avro_long(out, f.seq_max);
        avro_long(out, 0); // _SCHEMA_ID
        avro_long(out, i64::from(f.level));
        avro_long(out, 0); // _EXTRA_FILES: empty array
        avro_long(out, 1); // _CREATION_TIME
        avro_long(out, f.ctime);
        avro_long(out, 1); // _DELETE_ROW_COUNT
        avro_long(out, 0);
        avro_long(out, 0); // _EMBEDDED_FILE_INDEX: null
        avro_long(out, 1); // _FILE_SOURCE
        avro_long(out, i64::from(f.source));
        avro_long(out, 1); // _VALUE_STATS_COLS: empty array
        avro_long(out, 0);
        avro_long(out, 0); // _EXTERNAL_PATH: null
        avro_long(out, 0); // _FIRST_ROW_ID: null
        avro_long(out, 0); // _WRITE_COLS: null
        avro_long(out, 0); // _WRITE_COLS_SEQUENCES: null
    }
}

/// Appends an Avro `int`/`long` (zig-zag varint).
fn avro_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Appends Avro `bytes`/`string`: the length, then the bytes.
fn avro_bytes(out: &mut Vec<u8>, b: &[u8]) {
    avro_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// The serialized one-field key row `(id INT)`.
pub fn key_row(id: i32) -> Bytes {
    let mut w = BinaryRowWriter::new(1);
    // Position 0 of a one-field row always exists.
    let _ = w.write_int(0, id);
    Bytes::from(w.finish())
}

/// Index file types written into index manifests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IndexType {
    /// Dynamic-bucket hash index.
    Hash,
    /// Deletion vectors.
    DeletionVectors,
}

impl IndexType {
    /// The `_INDEX_TYPE` string.
    pub fn name(self) -> &'static str {
        match self {
            IndexType::Hash => "HASH",
            IndexType::DeletionVectors => "DELETION_VECTORS",
        }
    }
}

/// One live index file: its number and, for deletion vectors, the data file it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexFile {
    /// Index file number (name via [`Ctx::index_file_name`]).
    pub id: u32,
    /// Covered data file (deletion vectors only).
    pub covers: Option<FileMeta>,
}

impl Ctx {
    /// The ADD entry of a live index file.
    pub fn index_entry(
        &self,
        part: u32,
        bucket: u16,
        t: IndexType,
        f: &IndexFile,
    ) -> IndexManifestEntry {
        let dv_ranges = f.covers.map(|c| {
            vec![DeletionVectorMeta {
                data_file_name: c.name(self.seed),
                offset: 1,
                length: 22,
                cardinality: Some(1),
            }]
        });
        IndexManifestEntry {
            kind: FileKind::Add,
            partition: self.part_rows[part as usize].clone(),
            bucket: bucket as i32,
            index_type: t.name().to_string(),
            file_name: self.index_file_name(f.id),
            file_size: 0,
            row_count: if t == IndexType::Hash { 1 } else { 0 },
            external_path: None,
            dv_data_files: dv_ranges
                .iter()
                .flatten()
                .map(|d| d.data_file_name.clone())
                .collect(),
            is_global: false,
            dv_ranges,
            global_index: None,
        }
    }
}

/// Creates a file of `bytes.len()` bytes (truncating an existing one); empty when `bytes` is.
pub fn touch(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.is_empty() {
        std::fs::File::create(path).map(|_| ())
    } else {
        std::fs::write(path, bytes)
    }
}
