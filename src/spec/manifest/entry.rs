//! The records of manifest lists, manifests and index manifests (spec §3.4-§3.6), as decoded.

use bytes::Bytes;

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

/// What locates the file of one manifest entry ([`super::for_each_file_locator`]), borrowed from the
/// decoded content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLocator<'a> {
    /// `_KIND`.
    pub kind: FileKind,
    /// `_PARTITION` (serialized BinaryRow).
    pub partition: &'a [u8],
    /// `_BUCKET`.
    pub bucket: i32,
    /// `_FILE._LEVEL`.
    pub level: i32,
    /// `_FILE._FILE_NAME` (never empty).
    pub file_name: &'a str,
    /// `_FILE._FILE_SIZE`.
    pub file_size: i64,
    /// `_FILE._EXTRA_FILES` (null items dropped; empty when absent).
    pub extra_files: Vec<&'a str>,
    /// `_FILE._EMBEDDED_FILE_INDEX`.
    pub embedded_index: Option<&'a [u8]>,
    /// `_FILE._EXTERNAL_PATH`.
    pub external_path: Option<&'a str>,
}

impl<'a> FileLocator<'a> {
    /// The locator of a decoded entry.
    pub fn of(e: &'a ManifestEntry) -> Self {
        FileLocator {
            kind: e.kind,
            partition: &e.partition,
            bucket: e.bucket,
            level: e.file.level,
            file_name: &e.file.file_name,
            file_size: e.file.file_size,
            extra_files: e.file.extra_files.iter().map(String::as_str).collect(),
            embedded_index: e.file.embedded_index.as_deref(),
            external_path: e.file.external_path.as_deref(),
        }
    }
}
