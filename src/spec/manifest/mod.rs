//! Manifest lists, manifests and index manifests (spec §3), decoded by field name from the
//! file's own writer schema. Avro is the normal container; ORC and Parquet appear in tables
//! written with the legacy `manifest.format` option.
//!
//! The decoders are pure functions over the file bytes; the format is detected by magic bytes
//! (Avro `Obj\x01`, ORC `ORC`, Parquet `PAR1`). Every failure is an [`Error::Malformed`] naming
//! the file (or [`Error::Unsupported`] for a valid file this library refuses), never a panic.
//!
//! Byte fields (`_MIN_KEY`, stats rows) are [`Bytes`] slices of the decompressed Avro block, so
//! decoding them costs no allocation; they keep that block alive while referenced.
//!
//! Writing (Avro only) is in [`writer`]: records are encoded by field name in a writer schema
//! copied from the table's own files, or in the built-in Java 2.x schema; [`meta`] computes the
//! `ManifestFileMeta` (exact partition stats) of a written manifest.

use bytes::Bytes;

use crate::error::{Error, Result};

mod avro;
#[cfg(any(feature = "orc", feature = "parquet"))]
mod columnar;
mod decode;
pub mod meta;
mod value;
pub mod writer;

pub use meta::manifest_file_meta;
pub use value::AvroValue;
pub use writer::{
    encode_index_manifest, encode_manifest, encode_manifest_list, encode_records, read_raw_records,
    ManifestCompression, MetadataFileKind, RawRecords, WriterSchema,
};

/// Kind of a manifest entry (`_KIND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FileKind {
    /// 0: the file is added.
    #[default]
    Add,
    /// 1: the file is deleted.
    Delete,
}

impl FileKind {
    /// The `_KIND` byte value (0 ADD, 1 DELETE).
    pub fn to_byte(self) -> i8 {
        match self {
            FileKind::Add => 0,
            FileKind::Delete => 1,
        }
    }

    /// Parses a `_KIND` value.
    pub fn from_value(v: i64) -> Option<Self> {
        match v {
            0 => Some(FileKind::Add),
            1 => Some(FileKind::Delete),
            _ => None,
        }
    }
}

/// `SimpleStats` (spec §3.5): min/max values as serialized BinaryRows plus per-field null counts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleStats {
    /// `_MIN_VALUES` (serialized BinaryRow; empty when the field was absent).
    pub min_values: Bytes,
    /// `_MAX_VALUES` (serialized BinaryRow; empty when the field was absent).
    pub max_values: Bytes,
    /// `_NULL_COUNTS`.
    pub null_counts: Option<Vec<Option<i64>>>,
}

/// One entry of a manifest list (`ManifestFileMeta`, spec §3.3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ManifestFileMeta {
    /// `_FILE_NAME`: name of the manifest file in `manifest/`.
    pub file_name: String,
    /// `_FILE_SIZE`.
    pub file_size: i64,
    /// `_NUM_ADDED_FILES`.
    pub num_added_files: i64,
    /// `_NUM_DELETED_FILES`.
    pub num_deleted_files: i64,
    /// `_SCHEMA_ID`.
    pub schema_id: i64,
    /// `_PARTITION_STATS`: min/max partition over the manifest's entries.
    pub partition_stats: SimpleStats,
    /// `_MIN_BUCKET` (since 1.1).
    pub min_bucket: Option<i32>,
    /// `_MAX_BUCKET` (since 1.1).
    pub max_bucket: Option<i32>,
    /// `_MIN_LEVEL` (since 1.1).
    pub min_level: Option<i32>,
    /// `_MAX_LEVEL` (since 1.1).
    pub max_level: Option<i32>,
    /// `_MIN_ROW_ID` (since 1.4).
    pub min_row_id: Option<i64>,
    /// `_MAX_ROW_ID` (since 1.4).
    pub max_row_id: Option<i64>,
}

/// A data or changelog file (`DataFileMeta`, the `_FILE` record, spec §3.4).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DataFileMeta {
    /// `_FILE_NAME`: file name only.
    pub file_name: String,
    /// `_FILE_SIZE` in bytes.
    pub file_size: i64,
    /// `_ROW_COUNT`.
    pub row_count: i64,
    /// `_SCHEMA_ID`.
    pub schema_id: i64,
    /// `_LEVEL` (LSM level).
    pub level: i32,
    /// `_EXTRA_FILES`: sidecar file names in the same directory.
    pub extra_files: Vec<String>,
    /// `_CREATION_TIME`: writer's local wall-clock millis, stored as if UTC.
    pub creation_time: Option<i64>,
    /// `_DELETE_ROW_COUNT`.
    pub delete_row_count: Option<i64>,
    /// `_EMBEDDED_FILE_INDEX`.
    pub embedded_index: Option<Vec<u8>>,
    /// `_FILE_SOURCE`: 0 = APPEND, 1 = COMPACT.
    pub file_source: Option<i32>,
    /// `_EXTERNAL_PATH`: full location (with scheme) when the file lives outside the table.
    pub external_path: Option<String>,
    /// `_FIRST_ROW_ID`.
    pub first_row_id: Option<i64>,
    /// `_MIN_KEY` (serialized BinaryRow; the empty row for append tables).
    pub min_key: Bytes,
    /// `_MAX_KEY` (serialized BinaryRow).
    pub max_key: Bytes,
    /// `_KEY_STATS`.
    pub key_stats: SimpleStats,
    /// `_VALUE_STATS`.
    pub value_stats: SimpleStats,
    /// `_MIN_SEQUENCE_NUMBER`.
    pub min_sequence_number: i64,
    /// `_MAX_SEQUENCE_NUMBER`.
    pub max_sequence_number: i64,
    /// `_VALUE_STATS_COLS` (since 1.0).
    pub value_stats_cols: Option<Vec<String>>,
    /// `_WRITE_COLS` (since 1.3).
    pub write_cols: Option<Vec<String>>,
    /// `_WRITE_COLS_SEQUENCES` (2.1).
    pub write_cols_sequences: Option<Vec<i64>>,
}

/// One entry of a manifest (`ManifestEntry`, spec §3.4).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ManifestEntry {
    /// `_KIND`.
    pub kind: FileKind,
    /// `_PARTITION`: serialized BinaryRow.
    pub partition: Vec<u8>,
    /// `_BUCKET`.
    pub bucket: i32,
    /// `_TOTAL_BUCKETS`.
    pub total_buckets: i32,
    /// `_FILE`.
    pub file: DataFileMeta,
}

/// A deletion-vector range of an index file (`_DELETIONS_VECTORS_RANGES` item).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeletionVectorMeta {
    /// `f0`: the data file name the deletion vector applies to.
    pub data_file_name: String,
    /// `f1`: offset in the index file.
    pub offset: i32,
    /// `f2`: length in bytes.
    pub length: i32,
    /// `_CARDINALITY`: number of deleted rows (since 1.0).
    pub cardinality: Option<i64>,
}

/// A global (row-range) index description (`_GLOBAL_INDEX`, since 1.4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GlobalIndexMeta {
    /// `_ROW_RANGE_START`.
    pub row_range_start: i64,
    /// `_ROW_RANGE_END`.
    pub row_range_end: i64,
    /// `_INDEX_FIELD_ID`.
    pub index_field_id: i32,
    /// `_EXTRA_FIELD_IDS`.
    pub extra_field_ids: Option<Vec<i32>>,
    /// `_INDEX_META`.
    pub index_meta: Option<Vec<u8>>,
    /// `_SOURCE_META` (2.0).
    pub source_meta: Option<Vec<u8>>,
}

/// One entry of an index manifest (`IndexManifestEntry`, spec §3.6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IndexManifestEntry {
    /// `_KIND`.
    pub kind: FileKind,
    /// `_PARTITION`: serialized BinaryRow.
    pub partition: Vec<u8>,
    /// `_BUCKET`.
    pub bucket: i32,
    /// `_INDEX_TYPE`: `HASH`, `DELETION_VECTORS`, or a global index type.
    pub index_type: String,
    /// `_FILE_NAME`.
    pub file_name: String,
    /// `_FILE_SIZE`.
    pub file_size: i64,
    /// `_ROW_COUNT`.
    pub row_count: i64,
    /// `_EXTERNAL_PATH`.
    pub external_path: Option<String>,
    /// Data file names covered by deletion-vector ranges (`_DELETIONS_VECTORS_RANGES[*].f0`).
    pub dv_data_files: Vec<String>,
    /// True when the entry carries a `_GLOBAL_INDEX` record (a global, row-range index).
    pub is_global: bool,
    /// `_DELETIONS_VECTORS_RANGES` in full (`None` when null or absent).
    pub dv_ranges: Option<Vec<DeletionVectorMeta>>,
    /// `_GLOBAL_INDEX` in full.
    pub global_index: Option<GlobalIndexMeta>,
}

/// Container format of a metadata file, detected from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestFormat {
    /// Avro object container (`Obj\x01`).
    Avro,
    /// ORC (`ORC`).
    Orc,
    /// Parquet (`PAR1`).
    Parquet,
}

/// Detects the container format by magic bytes.
pub fn detect_format(bytes: &[u8]) -> Option<ManifestFormat> {
    if bytes.starts_with(b"Obj\x01") {
        Some(ManifestFormat::Avro)
    } else if bytes.starts_with(b"ORC") {
        Some(ManifestFormat::Orc)
    } else if bytes.starts_with(b"PAR1") {
        Some(ManifestFormat::Parquet)
    } else {
        None
    }
}

/// What a file is expected to contain; selects the record mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileType {
    ManifestList,
    Manifest,
    IndexManifest,
}

impl FileType {
    pub(crate) fn kind(self) -> &'static str {
        match self {
            FileType::ManifestList => "manifest list",
            FileType::Manifest => "manifest",
            FileType::IndexManifest => "index manifest",
        }
    }
}

/// Converts an internal decode error into the crate error, naming the file.
pub(crate) fn to_error(t: FileType, path: &str, e: avro::DecodeError) -> Error {
    match e {
        avro::DecodeError::Malformed(m) => Error::malformed(t.kind(), path, m),
        avro::DecodeError::Unsupported(m) => {
            Error::Unsupported(format!("{} file {path}: {m}", t.kind()))
        }
    }
}

fn format_of(t: FileType, bytes: &[u8], path: &str) -> Result<ManifestFormat> {
    detect_format(bytes).ok_or_else(|| {
        let head: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
        Error::malformed(
            t.kind(),
            path,
            format!(
                "unknown magic bytes [{}] (expected Avro 'Obj\\x01', ORC 'ORC' or Parquet 'PAR1')",
                head.join(" ")
            ),
        )
    })
}

#[cfg(any(feature = "orc", feature = "parquet"))]
use arrow_array::RecordBatch;

/// Uninhabited stand-in for arrow's `RecordBatch` when no columnar feature is compiled in.
#[cfg(not(any(feature = "orc", feature = "parquet")))]
enum RecordBatch {}

#[cfg(any(feature = "orc", feature = "parquet"))]
use columnar::{batch_index_manifest, batch_manifest, batch_manifest_list};

#[cfg(not(any(feature = "orc", feature = "parquet")))]
fn no_batches<T>(b: &RecordBatch) -> std::result::Result<Vec<T>, avro::DecodeError> {
    match *b {}
}
#[cfg(not(any(feature = "orc", feature = "parquet")))]
use no_batches as batch_manifest_list;
#[cfg(not(any(feature = "orc", feature = "parquet")))]
use no_batches as batch_manifest;
#[cfg(not(any(feature = "orc", feature = "parquet")))]
use no_batches as batch_index_manifest;

/// Reads every record batch of an ORC or Parquet file (or explains why it cannot).
#[allow(unused_variables)]
fn read_batches(
    t: FileType,
    format: ManifestFormat,
    bytes: &[u8],
    path: &str,
) -> Result<Vec<RecordBatch>> {
    let unsupported = |feature: &str, name: &str| {
        Error::Unsupported(format!(
            "{} file {path} is {name}, but this build lacks the '{feature}' feature",
            t.kind()
        ))
    };
    match format {
        ManifestFormat::Avro => Err(Error::Internal(format!(
            "{path}: Avro passed to the columnar reader"
        ))),
        #[cfg(feature = "orc")]
        ManifestFormat::Orc => columnar::read_orc(bytes).map_err(|e| to_error(t, path, e)),
        #[cfg(not(feature = "orc"))]
        ManifestFormat::Orc => Err(unsupported("orc", "ORC")),
        #[cfg(feature = "parquet")]
        ManifestFormat::Parquet => columnar::read_parquet(bytes).map_err(|e| to_error(t, path, e)),
        #[cfg(not(feature = "parquet"))]
        ManifestFormat::Parquet => Err(unsupported("parquet", "Parquet")),
    }
}

fn decode_columnar<T>(
    t: FileType,
    format: ManifestFormat,
    bytes: &[u8],
    path: &str,
    f: fn(&RecordBatch) -> std::result::Result<Vec<T>, avro::DecodeError>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for batch in read_batches(t, format, bytes, path)? {
        out.extend(f(&batch).map_err(|e| to_error(t, path, e))?);
    }
    Ok(out)
}

/// Decodes a manifest list (`manifest-list-…`) into its [`ManifestFileMeta`] entries.
pub fn decode_manifest_list(bytes: &[u8], path: &str) -> Result<Vec<ManifestFileMeta>> {
    let t = FileType::ManifestList;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => decode::avro_manifest_list(bytes).map_err(|e| to_error(t, path, e)),
        f => decode_columnar(t, f, bytes, path, batch_manifest_list),
    }
}

/// Decodes a manifest (`manifest-…`) into its [`ManifestEntry`] records.
pub fn decode_manifest(bytes: &[u8], path: &str) -> Result<Vec<ManifestEntry>> {
    let t = FileType::Manifest;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => decode::avro_manifest(bytes).map_err(|e| to_error(t, path, e)),
        f => decode_columnar(t, f, bytes, path, batch_manifest),
    }
}

/// Decodes a manifest entry by entry (no vector of entries is built), calling `f` with each,
/// with only the fields that locate and identify a file: kind, partition, bucket, total buckets,
/// and of `_FILE` all but `_MIN_KEY`, `_MAX_KEY`, `_KEY_STATS`, `_VALUE_STATS`,
/// `_VALUE_STATS_COLS`, `_WRITE_COLS` and `_WRITE_COLS_SEQUENCES`, which are checked for
/// well-formedness like the rest but left empty. Stops at the first error, of the file or of
/// `f` (returned as is). ORC and Parquet manifests are decoded in full first.
pub fn for_each_manifest_file(
    bytes: &[u8],
    path: &str,
    mut f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<()> {
    let t = FileType::Manifest;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => {
            let mut stopped: Option<Error> = None;
            let decoded = decode::avro_manifest_locating(bytes, |e| {
                f(e).map_err(|err| {
                    stopped = Some(err);
                    avro::DecodeError::malformed("stopped by the caller")
                })
            });
            match (stopped, decoded) {
                (Some(err), _) => Err(err),
                (None, r) => r.map_err(|e| to_error(t, path, e)),
            }
        }
        format => decode_columnar(t, format, bytes, path, batch_manifest)?
            .into_iter()
            .try_for_each(f),
    }
}

/// Decodes an index manifest (`index-manifest-…`) into its [`IndexManifestEntry`] records.
pub fn decode_index_manifest(bytes: &[u8], path: &str) -> Result<Vec<IndexManifestEntry>> {
    let t = FileType::IndexManifest;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => {
            decode::avro_index_manifest(bytes).map_err(|e| to_error(t, path, e))
        }
        f => decode_columnar(t, f, bytes, path, batch_index_manifest),
    }
}

#[cfg(test)]
mod tests;
