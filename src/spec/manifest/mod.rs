//! Manifest lists, manifests and index manifests (spec §3), decoded by field name from the
//! file's own writer schema. Avro is the normal container; ORC and Parquet appear in tables
//! written with the legacy `manifest.format` option.

/// Kind of a manifest entry (`_KIND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// 0: the file is added.
    Add,
    /// 1: the file is deleted.
    Delete,
}

/// One entry of a manifest list (`ManifestFileMeta`, spec §3.3).
#[derive(Debug, Clone, PartialEq)]
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
}

/// A data or changelog file (`DataFileMeta`, the `_FILE` record, spec §3.4).
#[derive(Debug, Clone, PartialEq)]
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
}

/// One entry of a manifest (`ManifestEntry`, spec §3.4).
#[derive(Debug, Clone, PartialEq)]
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

/// One entry of an index manifest (`IndexManifestEntry`, spec §3.6).
#[derive(Debug, Clone, PartialEq)]
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
}
