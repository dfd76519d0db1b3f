//! Writing manifest lists, manifests and index manifests as Avro object container files
//! (spec §3.1, §3.8).
//!
//! Records are written in a [`WriterSchema`]: preferably one copied verbatim from an existing
//! file of the same kind in the same table (so every reader that table already works with reads
//! ours), otherwise the current Java 2.x schema. Values are encoded by field NAME: fields the
//! schema has but the record lacks get their default (or null); a non-null field the copied
//! schema cannot hold makes the writer fall back to the built-in schema, which — like Java when it
//! rewrites a newer writer's file — drops fields Java does not know.
//!
//! The codec follows `manifest.compression` (`zstd` by default, also `null`, `deflate`,
//! `snappy`). Blocks hold about 64 KiB of records each, like Java's Avro writer.

use std::sync::Arc;

use bytes::Bytes;

use super::avro::Schema;
use super::value::{read_container, write_bytes, write_long, AvroValue, EncodeError, Encoder};
use super::{
    detect_format, DataFileMeta, IndexManifestEntry, ManifestEntry, ManifestFileMeta,
    ManifestFormat, SimpleStats,
};
use crate::error::{Error, Result};
use crate::spec::binary_row::EMPTY_ROW;
use crate::spec::options::TableOptions;

/// Uncompressed bytes collected before a block is flushed.
const BLOCK_BYTES: usize = 64 * 1024;

/// Default `file.compression.zstd-level`.
pub const DEFAULT_ZSTD_LEVEL: i32 = 1;

/// What kind of metadata file a schema or record set is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetadataFileKind {
    /// `manifest-list-…` (records: `ManifestFileMeta`).
    ManifestList,
    /// `manifest-…` (records: `ManifestEntry`).
    Manifest,
    /// `index-manifest-…` (records: `IndexManifestEntry`).
    IndexManifest,
}

impl MetadataFileKind {
    /// Human-readable name used in errors.
    pub fn name(self) -> &'static str {
        match self {
            MetadataFileKind::ManifestList => "manifest list",
            MetadataFileKind::Manifest => "manifest",
            MetadataFileKind::IndexManifest => "index manifest",
        }
    }

    /// Fields a record of this kind must have (checked on copied schemas).
    fn required_fields(self) -> &'static [&'static str] {
        match self {
            MetadataFileKind::ManifestList => &[
                "_FILE_NAME",
                "_FILE_SIZE",
                "_NUM_ADDED_FILES",
                "_NUM_DELETED_FILES",
                "_PARTITION_STATS",
                "_SCHEMA_ID",
            ],
            MetadataFileKind::Manifest => &["_KIND", "_PARTITION", "_BUCKET", "_FILE"],
            MetadataFileKind::IndexManifest => &[
                "_PARTITION",
                "_BUCKET",
                "_INDEX_TYPE",
                "_FILE_NAME",
                "_FILE_SIZE",
                "_ROW_COUNT",
            ],
        }
    }

    fn builtin_json(self) -> &'static str {
        match self {
            MetadataFileKind::ManifestList => BUILTIN_MANIFEST_LIST,
            MetadataFileKind::Manifest => BUILTIN_MANIFEST,
            MetadataFileKind::IndexManifest => BUILTIN_INDEX_MANIFEST,
        }
    }
}

/// Compression codec of written metadata files (`manifest.compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestCompression {
    /// No compression (`null`).
    Null,
    /// Raw deflate (`deflate`).
    Deflate,
    /// Snappy with a CRC-32 per block (`snappy`).
    Snappy,
    /// Zstandard (`zstd`, Avro name `zstandard`) at a level.
    Zstd {
        /// Compression level (`file.compression.zstd-level`, default 1).
        level: i32,
    },
}

impl Default for ManifestCompression {
    fn default() -> Self {
        ManifestCompression::Zstd {
            level: DEFAULT_ZSTD_LEVEL,
        }
    }
}

impl ManifestCompression {
    /// Parses a `manifest.compression` value (case-insensitive). `none`/`null`/`uncompressed`,
    /// `deflate`, `snappy` and `zstd`/`zstandard` are supported; anything else (bzip2, xz, lz4,
    /// ...) is [`Error::Unsupported`], since a file Java cannot read must never be written.
    pub fn parse(name: &str, zstd_level: i32) -> Result<Self> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "null" | "none" | "uncompressed" => ManifestCompression::Null,
            "deflate" => ManifestCompression::Deflate,
            "snappy" => ManifestCompression::Snappy,
            "zstd" | "zstandard" => ManifestCompression::Zstd { level: zstd_level },
            other => {
                return Err(Error::Unsupported(format!(
                    "manifest.compression '{other}' (supported for writing: null, deflate, snappy, zstd)"
                )))
            }
        })
    }

    /// From the table options `manifest.compression` (default `zstd`) and
    /// `file.compression.zstd-level` (default 1).
    pub fn from_options(options: &TableOptions) -> Result<Self> {
        let level = match options.get_i64("file.compression.zstd-level")? {
            Some(l) => i32::try_from(l).map_err(|_| {
                Error::InvalidArgument(format!("file.compression.zstd-level {l} is out of range"))
            })?,
            None => DEFAULT_ZSTD_LEVEL,
        };
        Self::parse(options.get_or("manifest.compression", "zstd"), level)
    }

    /// The Avro `avro.codec` name.
    pub fn avro_name(self) -> &'static str {
        match self {
            ManifestCompression::Null => "null",
            ManifestCompression::Deflate => "deflate",
            ManifestCompression::Snappy => "snappy",
            ManifestCompression::Zstd { .. } => "zstandard",
        }
    }

    fn compress(self, data: Vec<u8>) -> Result<Vec<u8>> {
        let codec = match self {
            ManifestCompression::Null => return Ok(data),
            ManifestCompression::Zstd { level } => {
                return zstd::bulk::compress(&data, level)
                    .map_err(|e| Error::Internal(format!("zstd compression failed: {e}")))
            }
            ManifestCompression::Deflate => {
                apache_avro::Codec::Deflate(apache_avro::DeflateSettings::default())
            }
            ManifestCompression::Snappy => apache_avro::Codec::Snappy,
        };
        let mut buf = data;
        codec.compress(&mut buf).map_err(|e| {
            Error::Internal(format!("{} compression failed: {e}", self.avro_name()))
        })?;
        Ok(buf)
    }
}

/// An Avro writer schema for one kind of metadata file, kept as verbatim JSON.
#[derive(Debug, Clone)]
pub struct WriterSchema {
    kind: MetadataFileKind,
    json: Arc<str>,
    parsed: Arc<Schema>,
    builtin: bool,
}

impl WriterSchema {
    /// The current Java 2.x schema of `kind` (spec §3.3–3.6): record `record` in namespace
    /// `org.apache.paimon.avro.generated`, nullable fields as `["null", T]` with default null.
    pub fn builtin(kind: MetadataFileKind) -> Self {
        let json = kind.builtin_json();
        let parsed = Schema::parse(json.as_bytes())
            .unwrap_or_else(|e| unreachable!("built-in {} schema: {e:?}", kind.name()));
        WriterSchema {
            kind,
            json: Arc::from(json),
            parsed: Arc::new(parsed),
            builtin: true,
        }
    }

    /// Parses a schema JSON for `kind`; it must be a record (or a union holding one, as Paimon
    /// ≤ 0.8 wrote) with the fields every reader needs.
    pub fn from_json(kind: MetadataFileKind, json: &str) -> Result<Self> {
        let bad = |m: String| Error::InvalidArgument(format!("{} writer schema: {m}", kind.name()));
        let parsed = Schema::parse(json.as_bytes()).map_err(|e| bad(format!("{e:?}")))?;
        let record = parsed
            .record_of(parsed.root)
            .ok_or_else(|| bad("the root is not a record".into()))?;
        let fields = parsed.fields(record);
        for f in kind.required_fields() {
            if !fields.iter().any(|x| x.name == *f) {
                return Err(bad(format!("it has no field {f}")));
            }
        }
        Ok(WriterSchema {
            kind,
            json: Arc::from(json),
            parsed: Arc::new(parsed),
            builtin: false,
        })
    }

    /// The writer schema of an existing Avro file of `kind`, verbatim. ORC and Parquet files
    /// are [`Error::Unsupported`]: this library writes Avro only.
    pub fn from_file(kind: MetadataFileKind, bytes: &[u8], path: &str) -> Result<Self> {
        match detect_format(bytes) {
            Some(ManifestFormat::Avro) => {}
            Some(other) => {
                return Err(Error::Unsupported(format!(
                    "{} file {path} is {other:?}; writing metadata is only supported for Avro manifests",
                    kind.name()
                )))
            }
            None => {
                return Err(Error::malformed(
                    "manifest",
                    path,
                    "not an Avro, ORC or Parquet file",
                ))
            }
        }
        let json = super::value::schema_json_of(bytes)
            .map_err(|e| super::to_error(file_type(kind), path, e))?;
        Self::from_json(kind, &json)
    }

    /// The kind of file this schema is for.
    pub fn kind(&self) -> MetadataFileKind {
        self.kind
    }

    /// The schema JSON as written into the header.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// True for the built-in schema.
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }
}

fn file_type(kind: MetadataFileKind) -> super::FileType {
    match kind {
        MetadataFileKind::ManifestList => super::FileType::ManifestList,
        MetadataFileKind::Manifest => super::FileType::Manifest,
        MetadataFileKind::IndexManifest => super::FileType::IndexManifest,
    }
}

/// The records of an existing Avro metadata file, decoded generically (every field kept), with
/// the file's writer schema.
#[derive(Debug, Clone)]
pub struct RawRecords {
    /// The file's writer schema.
    pub schema: WriterSchema,
    /// The records, in file order.
    pub records: Vec<AvroValue>,
}

/// Decodes every record of an Avro metadata file of `kind` generically, keeping every field
/// (also those this library does not know) so the records can be written again unchanged.
pub fn read_raw_records(kind: MetadataFileKind, bytes: &[u8], path: &str) -> Result<RawRecords> {
    let schema = WriterSchema::from_file(kind, bytes, path)?;
    let (_, records) =
        read_container(bytes).map_err(|e| super::to_error(file_type(kind), path, e))?;
    Ok(RawRecords { schema, records })
}

/// Writes `records` as an Avro container in `schema`, or — when `schema` cannot hold them
/// without losing a non-null field, or does not fit them — in the built-in schema of its kind.
pub fn encode_records(
    kind: MetadataFileKind,
    records: &[AvroValue],
    schema: Option<&WriterSchema>,
    compression: ManifestCompression,
) -> Result<Bytes> {
    if let Some(s) = schema.filter(|s| !s.builtin) {
        if s.kind != kind {
            return Err(Error::Internal(format!(
                "a {} schema was given to write a {}",
                s.kind.name(),
                kind.name()
            )));
        }
        match write_container(s, false, records, compression)? {
            Ok(bytes) => return Ok(bytes),
            Err(e) => tracing::info!(
                kind = kind.name(),
                reason = %e,
                "copied writer schema does not fit; writing the built-in schema"
            ),
        }
    }
    let builtin = WriterSchema::builtin(kind);
    write_container(&builtin, true, records, compression)?.map_err(|e| {
        Error::Internal(format!(
            "{} records do not fit the built-in schema: {e}",
            kind.name()
        ))
    })
}

/// An Avro object container of a format other than Paimon's own metadata files (the Iceberg
/// manifests and manifest lists Paimon writes beside a table), read generically so that its
/// records can be changed and written again in the same schema and codec.
#[derive(Debug, Clone)]
pub struct ForeignContainer {
    /// The writer schema JSON, verbatim (field ids and other attributes kept).
    pub schema_json: String,
    /// The file's codec.
    pub compression: ManifestCompression,
    /// The records, in file order, every field kept.
    pub records: Vec<AvroValue>,
}

/// Reads an Avro object container generically (see [`ForeignContainer`]). `path` names it in
/// errors. A codec this library cannot write is [`Error::Unsupported`].
pub fn read_foreign_container(bytes: &[u8], path: &str) -> Result<ForeignContainer> {
    let bad = |e: super::avro::DecodeError| {
        let m = match e {
            super::avro::DecodeError::Malformed(m) | super::avro::DecodeError::Unsupported(m) => m,
        };
        Error::malformed("Avro file", path, m)
    };
    let codec = super::value::codec_name_of(bytes).map_err(bad)?;
    let compression = ManifestCompression::parse(&codec, DEFAULT_ZSTD_LEVEL)?;
    let (schema_json, records) = read_container(bytes).map_err(bad)?;
    Ok(ForeignContainer {
        schema_json,
        compression,
        records,
    })
}

/// Writes `records` as an Avro object container in the schema `schema_json` (written into the
/// header verbatim) with `compression`. A record that does not fit the schema is
/// [`Error::Internal`]: nothing is dropped.
pub fn encode_foreign_container(
    schema_json: &str,
    records: &[AvroValue],
    compression: ManifestCompression,
) -> Result<Bytes> {
    let parsed = Schema::parse(schema_json.as_bytes())
        .map_err(|e| Error::Internal(format!("Avro schema does not parse: {e:?}")))?;
    let schema = WriterSchema {
        kind: MetadataFileKind::Manifest,
        json: Arc::from(schema_json),
        parsed: Arc::new(parsed),
        builtin: false,
    };
    write_container(&schema, false, records, compression)?
        .map_err(|e| Error::Internal(format!("records do not fit their own schema: {e}")))
}

/// Writes a manifest (`manifest-…`) holding `entries`.
pub fn encode_manifest(
    entries: &[ManifestEntry],
    schema: Option<&WriterSchema>,
    compression: ManifestCompression,
) -> Result<Bytes> {
    let records: Vec<AvroValue> = entries.iter().map(manifest_entry_value).collect();
    encode_records(MetadataFileKind::Manifest, &records, schema, compression)
}

/// Writes a manifest list (`manifest-list-…`) holding `metas`.
pub fn encode_manifest_list(
    metas: &[ManifestFileMeta],
    schema: Option<&WriterSchema>,
    compression: ManifestCompression,
) -> Result<Bytes> {
    let records: Vec<AvroValue> = metas.iter().map(manifest_file_meta_value).collect();
    encode_records(
        MetadataFileKind::ManifestList,
        &records,
        schema,
        compression,
    )
}

/// Writes an index manifest (`index-manifest-…`) holding `entries`.
pub fn encode_index_manifest(
    entries: &[IndexManifestEntry],
    schema: Option<&WriterSchema>,
    compression: ManifestCompression,
) -> Result<Bytes> {
    let records: Vec<AvroValue> = entries.iter().map(index_entry_value).collect();
    encode_records(
        MetadataFileKind::IndexManifest,
        &records,
        schema,
        compression,
    )
}

/// The container bytes, or why the schema does not fit the records (outer error: I/O-free
/// failures such as compression).
fn write_container(
    schema: &WriterSchema,
    allow_drop: bool,
    records: &[AvroValue],
    compression: ManifestCompression,
) -> Result<std::result::Result<Bytes, EncodeError>> {
    let enc = Encoder {
        schema: &schema.parsed,
        allow_drop,
    };
    let (mut out, sync) = container_header(&schema.json, compression);
    let mut block = Vec::new();
    let mut count = 0i64;
    for (i, r) in records.iter().enumerate() {
        if let Err(e) = enc.encode_root(r, &mut block) {
            return Ok(Err(match e {
                EncodeError::Lossy(m) => EncodeError::Lossy(format!("record #{i}: {m}")),
                EncodeError::Mismatch(m) => EncodeError::Mismatch(format!("record #{i}: {m}")),
            }));
        }
        count += 1;
        if block.len() >= BLOCK_BYTES {
            flush_block(&mut out, &mut block, &mut count, compression, &sync)?;
        }
    }
    if count > 0 {
        flush_block(&mut out, &mut block, &mut count, compression, &sync)?;
    }
    Ok(Ok(Bytes::from(out)))
}

/// The container header (magic, schema, codec, sync marker) and its sync marker.
fn container_header(schema_json: &str, compression: ManifestCompression) -> (Vec<u8>, [u8; 16]) {
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(super::avro::AVRO_MAGIC);
    write_long(&mut out, 2);
    write_bytes(&mut out, b"avro.schema");
    write_bytes(&mut out, schema_json.as_bytes());
    write_bytes(&mut out, b"avro.codec");
    write_bytes(&mut out, compression.avro_name().as_bytes());
    write_long(&mut out, 0);
    let sync = *uuid::Uuid::new_v4().as_bytes();
    out.extend_from_slice(&sync);
    (out, sync)
}

/// Writes an Avro container of `kind` in its built-in schema from `count` records the caller
/// encodes itself: `encode(i, out)` appends record `i` in the Avro binary encoding of that
/// schema. Blocks and compression are those of [`encode_records`], so a caller that encodes
/// exactly what the generic path would gets the same file; it skips building a value tree per
/// record, which matters when millions of records are written (synthetic tables at scale).
/// The caller is responsible for the encoding matching the schema.
pub fn encode_builtin_container(
    kind: MetadataFileKind,
    count: usize,
    compression: ManifestCompression,
    mut encode: impl FnMut(usize, &mut Vec<u8>) -> Result<()>,
) -> Result<Bytes> {
    let (mut out, sync) = container_header(kind.builtin_json(), compression);
    let mut block = Vec::new();
    let mut n = 0i64;
    for i in 0..count {
        encode(i, &mut block)?;
        n += 1;
        if block.len() >= BLOCK_BYTES {
            flush_block(&mut out, &mut block, &mut n, compression, &sync)?;
        }
    }
    if n > 0 {
        flush_block(&mut out, &mut block, &mut n, compression, &sync)?;
    }
    Ok(Bytes::from(out))
}

fn flush_block(
    out: &mut Vec<u8>,
    block: &mut Vec<u8>,
    count: &mut i64,
    compression: ManifestCompression,
    sync: &[u8; 16],
) -> Result<()> {
    let data = compression.compress(std::mem::take(block))?;
    write_long(out, *count);
    write_long(out, data.len() as i64);
    out.extend_from_slice(&data);
    out.extend_from_slice(sync);
    *count = 0;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Typed records → generic values (every field the decoders keep)
// ---------------------------------------------------------------------------------------------

fn rec(fields: Vec<(&str, AvroValue)>) -> AvroValue {
    AvroValue::Record(
        fields
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
    )
}

fn opt_long(v: Option<i64>) -> AvroValue {
    v.map_or(AvroValue::Null, AvroValue::Long)
}

fn opt_int(v: Option<i32>) -> AvroValue {
    v.map_or(AvroValue::Null, AvroValue::Int)
}

fn opt_string(v: &Option<String>) -> AvroValue {
    v.as_ref()
        .map_or(AvroValue::Null, |s| AvroValue::String(s.clone()))
}

fn opt_bytes(v: &Option<Vec<u8>>) -> AvroValue {
    v.as_ref()
        .map_or(AvroValue::Null, |b| AvroValue::Bytes(b.clone()))
}

fn strings(v: &[String]) -> AvroValue {
    AvroValue::Array(v.iter().map(|s| AvroValue::String(s.clone())).collect())
}

fn opt_strings(v: &Option<Vec<String>>) -> AvroValue {
    v.as_ref().map_or(AvroValue::Null, |x| strings(x))
}

/// A serialized BinaryRow; an absent (empty) one is written as the empty row, since zero bytes
/// are not a valid row.
fn row_bytes(b: &[u8]) -> AvroValue {
    if b.is_empty() {
        AvroValue::Bytes(EMPTY_ROW.to_vec())
    } else {
        AvroValue::Bytes(b.to_vec())
    }
}

/// `SimpleStats` as a record value.
pub fn simple_stats_value(s: &SimpleStats) -> AvroValue {
    rec(vec![
        ("_MIN_VALUES", row_bytes(&s.min_values)),
        ("_MAX_VALUES", row_bytes(&s.max_values)),
        (
            "_NULL_COUNTS",
            s.null_counts.as_ref().map_or(AvroValue::Null, |v| {
                AvroValue::Array(v.iter().map(|c| opt_long(*c)).collect())
            }),
        ),
    ])
}

/// `DataFileMeta` (`_FILE`) as a record value.
pub fn data_file_meta_value(d: &DataFileMeta) -> AvroValue {
    rec(vec![
        ("_FILE_NAME", AvroValue::String(d.file_name.clone())),
        ("_FILE_SIZE", AvroValue::Long(d.file_size)),
        ("_ROW_COUNT", AvroValue::Long(d.row_count)),
        ("_MIN_KEY", row_bytes(&d.min_key)),
        ("_MAX_KEY", row_bytes(&d.max_key)),
        ("_KEY_STATS", simple_stats_value(&d.key_stats)),
        ("_VALUE_STATS", simple_stats_value(&d.value_stats)),
        (
            "_MIN_SEQUENCE_NUMBER",
            AvroValue::Long(d.min_sequence_number),
        ),
        (
            "_MAX_SEQUENCE_NUMBER",
            AvroValue::Long(d.max_sequence_number),
        ),
        ("_SCHEMA_ID", AvroValue::Long(d.schema_id)),
        ("_LEVEL", AvroValue::Int(d.level)),
        ("_EXTRA_FILES", strings(&d.extra_files)),
        ("_CREATION_TIME", opt_long(d.creation_time)),
        ("_DELETE_ROW_COUNT", opt_long(d.delete_row_count)),
        ("_EMBEDDED_FILE_INDEX", opt_bytes(&d.embedded_index)),
        ("_FILE_SOURCE", opt_int(d.file_source)),
        ("_VALUE_STATS_COLS", opt_strings(&d.value_stats_cols)),
        ("_EXTERNAL_PATH", opt_string(&d.external_path)),
        ("_FIRST_ROW_ID", opt_long(d.first_row_id)),
        ("_WRITE_COLS", opt_strings(&d.write_cols)),
        (
            "_WRITE_COLS_SEQUENCES",
            d.write_cols_sequences
                .as_ref()
                .map_or(AvroValue::Null, |v| {
                    AvroValue::Array(v.iter().map(|x| AvroValue::Long(*x)).collect())
                }),
        ),
    ])
}

/// `ManifestEntry` as a record value (`_VERSION` 2).
pub fn manifest_entry_value(e: &ManifestEntry) -> AvroValue {
    rec(vec![
        ("_VERSION", AvroValue::Int(2)),
        ("_KIND", AvroValue::Int(e.kind.to_byte() as i32)),
        ("_PARTITION", row_bytes(&e.partition)),
        ("_BUCKET", AvroValue::Int(e.bucket)),
        ("_TOTAL_BUCKETS", AvroValue::Int(e.total_buckets)),
        ("_FILE", data_file_meta_value(&e.file)),
    ])
}

/// `ManifestFileMeta` as a record value (`_VERSION` 2).
pub fn manifest_file_meta_value(m: &ManifestFileMeta) -> AvroValue {
    rec(vec![
        ("_VERSION", AvroValue::Int(2)),
        ("_FILE_NAME", AvroValue::String(m.file_name.clone())),
        ("_FILE_SIZE", AvroValue::Long(m.file_size)),
        ("_NUM_ADDED_FILES", AvroValue::Long(m.num_added_files)),
        ("_NUM_DELETED_FILES", AvroValue::Long(m.num_deleted_files)),
        ("_PARTITION_STATS", simple_stats_value(&m.partition_stats)),
        ("_SCHEMA_ID", AvroValue::Long(m.schema_id)),
        ("_MIN_BUCKET", opt_int(m.min_bucket)),
        ("_MAX_BUCKET", opt_int(m.max_bucket)),
        ("_MIN_LEVEL", opt_int(m.min_level)),
        ("_MAX_LEVEL", opt_int(m.max_level)),
        ("_MIN_ROW_ID", opt_long(m.min_row_id)),
        ("_MAX_ROW_ID", opt_long(m.max_row_id)),
    ])
}

/// `IndexManifestEntry` as a record value (`_VERSION` 1).
pub fn index_entry_value(e: &IndexManifestEntry) -> AvroValue {
    let dv = e.dv_ranges.as_ref().map_or(AvroValue::Null, |ranges| {
        AvroValue::Array(
            ranges
                .iter()
                .map(|d| {
                    rec(vec![
                        ("f0", AvroValue::String(d.data_file_name.clone())),
                        ("f1", AvroValue::Int(d.offset)),
                        ("f2", AvroValue::Int(d.length)),
                        ("_CARDINALITY", opt_long(d.cardinality)),
                    ])
                })
                .collect(),
        )
    });
    let gi = e.global_index.as_ref().map_or(AvroValue::Null, |g| {
        rec(vec![
            ("_ROW_RANGE_START", AvroValue::Long(g.row_range_start)),
            ("_ROW_RANGE_END", AvroValue::Long(g.row_range_end)),
            ("_INDEX_FIELD_ID", AvroValue::Int(g.index_field_id)),
            (
                "_EXTRA_FIELD_IDS",
                g.extra_field_ids.as_ref().map_or(AvroValue::Null, |v| {
                    AvroValue::Array(v.iter().map(|x| AvroValue::Int(*x)).collect())
                }),
            ),
            ("_INDEX_META", opt_bytes(&g.index_meta)),
            ("_SOURCE_META", opt_bytes(&g.source_meta)),
        ])
    });
    rec(vec![
        ("_VERSION", AvroValue::Int(1)),
        ("_KIND", AvroValue::Int(e.kind.to_byte() as i32)),
        ("_PARTITION", row_bytes(&e.partition)),
        ("_BUCKET", AvroValue::Int(e.bucket)),
        ("_INDEX_TYPE", AvroValue::String(e.index_type.clone())),
        ("_FILE_NAME", AvroValue::String(e.file_name.clone())),
        ("_FILE_SIZE", AvroValue::Long(e.file_size)),
        ("_ROW_COUNT", AvroValue::Long(e.row_count)),
        ("_DELETIONS_VECTORS_RANGES", dv),
        ("_EXTERNAL_PATH", opt_string(&e.external_path)),
        ("_GLOBAL_INDEX", gi),
    ])
}

// ---------------------------------------------------------------------------------------------
// Built-in schemas: Java 2.x (spec §3.3–3.6)
// ---------------------------------------------------------------------------------------------

const BUILTIN_MANIFEST_LIST: &str = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":{"type":"record","name":"record__PARTITION_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_SCHEMA_ID","type":"long"},{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}]}"#;

const BUILTIN_MANIFEST: &str = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":{"type":"record","name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type":{"type":"record","name":"record__FILE__KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_VALUE_STATS","type":{"type":"record","name":"record__FILE__VALUE_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},{"name":"_FILE_SOURCE","type":["null","int"],"default":null},{"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},{"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null},{"name":"_WRITE_COLS_SEQUENCES","type":["null",{"type":"array","items":"long"}],"default":null}]}}]}"#;

const BUILTIN_INDEX_MANIFEST: &str = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":[{"name":"f0","type":"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX","fields":[{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},{"name":"_INDEX_FIELD_ID","type":"int"},{"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","items":"int"}],"default":null},{"name":"_INDEX_META","type":["null","bytes"],"default":null},{"name":"_SOURCE_META","type":["null","bytes"],"default":null}]}],"default":null}]}"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::manifest::{
        decode_index_manifest, decode_manifest, decode_manifest_list, DeletionVectorMeta, FileKind,
        GlobalIndexMeta,
    };

    fn stats(n: u8) -> SimpleStats {
        SimpleStats {
            min_values: Bytes::from(vec![
                0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, n, 0, 0, 0, 0, 0, 0, 0,
            ]),
            max_values: Bytes::from(vec![
                0,
                0,
                0,
                1,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                n + 1,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
            ]),
            null_counts: Some(vec![Some(n as i64), None]),
        }
    }

    fn entry(i: i64) -> ManifestEntry {
        ManifestEntry {
            kind: if i % 2 == 0 {
                FileKind::Add
            } else {
                FileKind::Delete
            },
            partition: vec![
                0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, i as u8, 0, 0, 0, 0, 0, 0, 0,
            ],
            bucket: (i % 3) as i32,
            total_buckets: 3,
            file: DataFileMeta {
                file_name: format!("data-{i}.parquet"),
                file_size: 1000 + i,
                row_count: 10 * i,
                schema_id: 1,
                level: (i % 5) as i32,
                extra_files: vec![format!("data-{i}.parquet.index")],
                creation_time: Some(1_700_000_000_000 + i),
                delete_row_count: Some(i),
                embedded_index: (i % 2 == 0).then(|| vec![1, 2, 3]),
                file_source: Some((i % 2) as i32),
                external_path: (i % 3 == 0).then(|| format!("file:/ext/data-{i}.parquet")),
                first_row_id: Some(i * 100),
                min_key: Bytes::from(EMPTY_ROW.to_vec()),
                max_key: Bytes::from(EMPTY_ROW.to_vec()),
                key_stats: stats(1),
                value_stats: stats(2),
                min_sequence_number: i,
                max_sequence_number: i + 5,
                value_stats_cols: Some(vec!["a".into(), "b".into()]),
                write_cols: None,
                write_cols_sequences: Some(vec![i, i + 1]),
            },
        }
    }

    fn meta(i: i64) -> ManifestFileMeta {
        ManifestFileMeta {
            file_name: format!("manifest-{i}"),
            file_size: 2000 + i,
            num_added_files: i,
            num_deleted_files: 1,
            schema_id: 0,
            partition_stats: stats(3),
            min_bucket: Some(0),
            max_bucket: Some(2),
            min_level: None,
            max_level: Some(4),
            min_row_id: Some(7),
            max_row_id: None,
        }
    }

    fn index_entry(i: i32) -> IndexManifestEntry {
        let dv_ranges = Some(vec![DeletionVectorMeta {
            data_file_name: format!("data-{i}.orc"),
            offset: 1,
            length: 24,
            cardinality: Some(3),
        }]);
        IndexManifestEntry {
            kind: FileKind::Add,
            partition: EMPTY_ROW.to_vec(),
            bucket: i,
            index_type: "DELETION_VECTORS".into(),
            file_name: format!("index-{i}"),
            file_size: 37,
            row_count: 1,
            external_path: None,
            dv_data_files: vec![format!("data-{i}.orc")],
            is_global: i == 1,
            dv_ranges,
            global_index: (i == 1).then(|| GlobalIndexMeta {
                row_range_start: 0,
                row_range_end: 99,
                index_field_id: 2,
                extra_field_ids: Some(vec![3]),
                index_meta: Some(vec![9]),
                source_meta: None,
            }),
        }
    }

    const CODECS: [ManifestCompression; 4] = [
        ManifestCompression::Null,
        ManifestCompression::Deflate,
        ManifestCompression::Snappy,
        ManifestCompression::Zstd { level: 3 },
    ];

    #[test]
    fn builtin_round_trips_through_the_decoders() {
        let entries: Vec<ManifestEntry> = (0..2000).map(entry).collect();
        let metas: Vec<ManifestFileMeta> = (0..5).map(meta).collect();
        let index: Vec<IndexManifestEntry> = (0..3).map(index_entry).collect();
        for c in CODECS {
            let b = encode_manifest(&entries, None, c).unwrap();
            assert_eq!(decode_manifest(&b, "m").unwrap(), entries, "{c:?}");
            let b = encode_manifest_list(&metas, None, c).unwrap();
            assert_eq!(decode_manifest_list(&b, "l").unwrap(), metas, "{c:?}");
            let b = encode_index_manifest(&index, None, c).unwrap();
            assert_eq!(decode_index_manifest(&b, "i").unwrap(), index, "{c:?}");
        }
        // Empty files are valid containers with no blocks.
        let b = encode_manifest(&[], None, ManifestCompression::default()).unwrap();
        assert!(decode_manifest(&b, "e").unwrap().is_empty());
    }

    /// pypaimon's manifest-list schema: other record names, no namespace, two extra fields.
    const PYPAIMON_LIST: &str = r#"{"type": "record", "name": "ManifestFileMeta", "fields": [{"name": "_VERSION", "type": "int"}, {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"}, {"name": "_NUM_ADDED_FILES", "type": "long"}, {"name": "_NUM_DELETED_FILES", "type": "long"}, {"name": "_PARTITION_STATS", "type": {"type": "record", "name": "record_PARTITION_STATS", "fields": [{"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"}, {"default": null, "name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}]}]}}, {"name": "_SCHEMA_ID", "type": "long"}, {"default": null, "name": "_MIN_BUCKET", "type": ["null", "int"]}, {"default": null, "name": "_MAX_BUCKET", "type": ["null", "int"]}, {"default": null, "name": "_MIN_LEVEL", "type": ["null", "int"]}, {"default": null, "name": "_MAX_LEVEL", "type": ["null", "int"]}, {"default": null, "name": "_MIN_ROW_ID", "type": ["null", "long"]}, {"default": null, "name": "_MAX_ROW_ID", "type": ["null", "long"]}, {"default": null, "name": "_TOTAL_BUCKETS", "type": ["null", "int"]}, {"default": null, "name": "_EXTRA_FILES", "type": ["null", {"type": "array", "items": "string"}]}]}"#;

    #[test]
    fn copied_schema_is_kept_verbatim() {
        let s = WriterSchema::from_json(MetadataFileKind::ManifestList, PYPAIMON_LIST).unwrap();
        let metas: Vec<ManifestFileMeta> = (0..3).map(meta).collect();
        let b = encode_manifest_list(&metas, Some(&s), ManifestCompression::default()).unwrap();
        assert_eq!(
            super::super::value::schema_json_of(&b).unwrap(),
            PYPAIMON_LIST
        );
        assert_eq!(decode_manifest_list(&b, "l").unwrap(), metas);
        // Generic re-read keeps the extra fields (null here) and re-encodes byte-identically
        // apart from the sync marker.
        let raw = read_raw_records(MetadataFileKind::ManifestList, &b, "l").unwrap();
        assert_eq!(raw.schema.json(), PYPAIMON_LIST);
        assert_eq!(
            raw.records[0].field("_TOTAL_BUCKETS"),
            Some(&AvroValue::Null)
        );
        let again = encode_records(
            MetadataFileKind::ManifestList,
            &raw.records,
            Some(&raw.schema),
            ManifestCompression::default(),
        )
        .unwrap();
        assert_eq!(decode_manifest_list(&again, "l").unwrap(), metas);
    }

    /// Paimon ≤ 0.8: top-level and nested records wrapped in `["null", record]`, fewer fields.
    const OLD_MANIFEST: &str = r#"["null", {"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":["null",{"type":"record","name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type":["null",{"type":"record","name":"record__FILE__KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}],"default":null},{"name":"_VALUE_STATS","type":["null","record__FILE__KEY_STATS"],"default":null},{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null}]}],"default":null}]}]"#;

    #[test]
    fn old_union_wrapped_schema_and_lossless_fallback() {
        let s = WriterSchema::from_json(MetadataFileKind::Manifest, OLD_MANIFEST).unwrap();
        // Entries with only the fields the old schema knows are written in it.
        let mut old: Vec<ManifestEntry> = (0..4).map(entry).collect();
        for e in &mut old {
            e.file.file_source = None;
            e.file.value_stats_cols = None;
            e.file.external_path = None;
            e.file.first_row_id = None;
            e.file.write_cols_sequences = None;
        }
        let b = encode_manifest(&old, Some(&s), ManifestCompression::Snappy).unwrap();
        assert_eq!(
            super::super::value::schema_json_of(&b).unwrap(),
            OLD_MANIFEST
        );
        assert_eq!(decode_manifest(&b, "m").unwrap(), old);
        // An entry with a field the old schema cannot hold goes to the built-in schema.
        let new: Vec<ManifestEntry> = (0..4).map(entry).collect();
        let b = encode_manifest(&new, Some(&s), ManifestCompression::Snappy).unwrap();
        assert!(super::super::value::schema_json_of(&b)
            .unwrap()
            .contains("_WRITE_COLS_SEQUENCES"));
        assert_eq!(decode_manifest(&b, "m").unwrap(), new);
    }

    #[test]
    fn bad_schemas_and_codecs_are_refused() {
        assert!(WriterSchema::from_json(MetadataFileKind::Manifest, PYPAIMON_LIST).is_err());
        assert!(WriterSchema::from_json(MetadataFileKind::Manifest, "{").is_err());
        assert!(WriterSchema::from_json(MetadataFileKind::Manifest, r#""int""#).is_err());
        assert!(WriterSchema::from_file(MetadataFileKind::Manifest, b"ORC....", "x").is_err());
        assert!(WriterSchema::from_file(MetadataFileKind::Manifest, b"PAR1....", "x").is_err());
        for bad in ["bzip2", "xz", "lz4", ""] {
            assert!(ManifestCompression::parse(bad, 1).is_err(), "{bad}");
        }
        assert_eq!(
            ManifestCompression::parse("ZSTD", 9).unwrap(),
            ManifestCompression::Zstd { level: 9 }
        );
    }
}
