//! ORC and Parquet manifests (legacy `manifest.format`), read through arrow record batches and
//! mapped to the manifest types by column NAME (the same names as the Avro fields; nested
//! records are struct columns such as `_FILE`).
//!
//! Integer columns are accepted at any width (ORC stores `_KIND` as TINYINT), strings as any
//! arrow string/binary type, lists as 32- or 64-bit-offset lists. Third-party decoders run under
//! `catch_unwind`, so corrupt input gives an error, not a panic.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, LargeBinaryArray,
    LargeListArray, LargeStringArray, ListArray, PrimitiveArray, RecordBatch, StringArray,
    StringViewArray, StructArray,
};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use bytes::Bytes;

use super::avro::{DecodeError, DecodeResult};
use super::decode::check_version;
use super::{
    DataFileMeta, DeletionVectorMeta, FileKind, GlobalIndexMeta, IndexManifestEntry, ManifestEntry,
    ManifestFileMeta, SimpleStats,
};

fn malformed(msg: impl Into<String>) -> DecodeError {
    DecodeError::malformed(msg)
}

/// Runs third-party decoding code, turning a panic into an error.
fn guard<T>(what: &str, f: impl FnOnce() -> DecodeResult<T>) -> DecodeResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(malformed(format!(
            "{what} decoder panicked on corrupt input"
        )))
    })
}

/// Reads every record batch of an ORC file.
#[cfg(feature = "orc")]
pub(crate) fn read_orc(bytes: &[u8]) -> DecodeResult<Vec<RecordBatch>> {
    let data = Bytes::copy_from_slice(bytes);
    guard("ORC", || {
        let reader = orc_rust::ArrowReaderBuilder::try_new(data)
            .map_err(|e| malformed(format!("ORC: {e}")))?
            .build();
        reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| malformed(format!("ORC: {e}")))
    })
}

/// Reads every record batch of a Parquet file.
#[cfg(feature = "parquet")]
pub(crate) fn read_parquet(bytes: &[u8]) -> DecodeResult<Vec<RecordBatch>> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let data = Bytes::copy_from_slice(bytes);
    guard("Parquet", || {
        let reader = ParquetRecordBatchReaderBuilder::try_new(data)
            .map_err(|e| malformed(format!("Parquet: {e}")))?
            .build()
            .map_err(|e| malformed(format!("Parquet: {e}")))?;
        reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| malformed(format!("Parquet: {e}")))
    })
}

// ---------------------------------------------------------------------------------------------
// Typed column accessors
// ---------------------------------------------------------------------------------------------

/// Something with named columns: a record batch or a struct column.
trait Columns {
    fn column_named(&self, name: &str) -> Option<&ArrayRef>;
}

impl Columns for RecordBatch {
    fn column_named(&self, name: &str) -> Option<&ArrayRef> {
        self.column_by_name(name)
    }
}

impl Columns for StructArray {
    fn column_named(&self, name: &str) -> Option<&ArrayRef> {
        self.column_by_name(name)
    }
}

fn type_error(name: &str, expected: &str, a: &ArrayRef) -> DecodeError {
    malformed(format!(
        "column {name}: expected {expected}, found {}",
        a.data_type()
    ))
}

fn get_prim<T: arrow_array::ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    i: usize,
) -> Option<T::Native> {
    (i < a.len() && a.is_valid(i)).then(|| a.value(i))
}

enum IntCol<'a> {
    I8(&'a PrimitiveArray<Int8Type>),
    I16(&'a PrimitiveArray<Int16Type>),
    I32(&'a PrimitiveArray<Int32Type>),
    I64(&'a PrimitiveArray<Int64Type>),
    U8(&'a PrimitiveArray<UInt8Type>),
    U16(&'a PrimitiveArray<UInt16Type>),
    U32(&'a PrimitiveArray<UInt32Type>),
    /// Timestamps, converted to epoch millis.
    Ts(&'a ArrayRef, TimeUnit),
}

impl<'a> IntCol<'a> {
    fn new(a: &'a ArrayRef, name: &str) -> DecodeResult<Self> {
        Ok(match a.data_type() {
            ArrowType::Int8 => IntCol::I8(a.as_primitive()),
            ArrowType::Int16 => IntCol::I16(a.as_primitive()),
            ArrowType::Int32 => IntCol::I32(a.as_primitive()),
            ArrowType::Int64 => IntCol::I64(a.as_primitive()),
            ArrowType::UInt8 => IntCol::U8(a.as_primitive()),
            ArrowType::UInt16 => IntCol::U16(a.as_primitive()),
            ArrowType::UInt32 => IntCol::U32(a.as_primitive()),
            ArrowType::Timestamp(unit, _) => IntCol::Ts(a, *unit),
            _ => return Err(type_error(name, "an integer", a)),
        })
    }

    fn get(&self, i: usize) -> Option<i64> {
        match self {
            IntCol::I8(a) => get_prim(a, i).map(i64::from),
            IntCol::I16(a) => get_prim(a, i).map(i64::from),
            IntCol::I32(a) => get_prim(a, i).map(i64::from),
            IntCol::I64(a) => get_prim(a, i),
            IntCol::U8(a) => get_prim(a, i).map(i64::from),
            IntCol::U16(a) => get_prim(a, i).map(i64::from),
            IntCol::U32(a) => get_prim(a, i).map(i64::from),
            IntCol::Ts(a, unit) => match unit {
                TimeUnit::Second => get_prim(a.as_primitive::<TimestampSecondType>(), i)
                    .map(|v| v.saturating_mul(1000)),
                TimeUnit::Millisecond => get_prim(a.as_primitive::<TimestampMillisecondType>(), i),
                TimeUnit::Microsecond => get_prim(a.as_primitive::<TimestampMicrosecondType>(), i)
                    .map(|v| v.div_euclid(1000)),
                TimeUnit::Nanosecond => get_prim(a.as_primitive::<TimestampNanosecondType>(), i)
                    .map(|v| v.div_euclid(1_000_000)),
            },
        }
    }

    fn get_i32(&self, i: usize, name: &str) -> DecodeResult<Option<i32>> {
        match self.get(i) {
            None => Ok(None),
            Some(v) => i32::try_from(v)
                .map(Some)
                .map_err(|_| malformed(format!("column {name}: value {v} does not fit an int"))),
        }
    }
}

enum BinCol<'a> {
    Bin(&'a BinaryArray),
    LargeBin(&'a LargeBinaryArray),
    Str(&'a StringArray),
    LargeStr(&'a LargeStringArray),
    BinView(&'a BinaryViewArray),
    StrView(&'a StringViewArray),
    Fixed(&'a FixedSizeBinaryArray),
}

impl<'a> BinCol<'a> {
    fn new(a: &'a ArrayRef, name: &str) -> DecodeResult<Self> {
        Ok(match a.data_type() {
            ArrowType::Binary => BinCol::Bin(a.as_binary()),
            ArrowType::LargeBinary => BinCol::LargeBin(a.as_binary()),
            ArrowType::Utf8 => BinCol::Str(a.as_string()),
            ArrowType::LargeUtf8 => BinCol::LargeStr(a.as_string()),
            ArrowType::BinaryView => BinCol::BinView(a.as_binary_view()),
            ArrowType::Utf8View => BinCol::StrView(a.as_string_view()),
            ArrowType::FixedSizeBinary(_) => BinCol::Fixed(a.as_fixed_size_binary()),
            _ => return Err(type_error(name, "a string or binary", a)),
        })
    }

    fn get(&self, i: usize) -> Option<&'a [u8]> {
        fn ok(a: &dyn Array, i: usize) -> bool {
            i < a.len() && a.is_valid(i)
        }
        match self {
            BinCol::Bin(a) => ok(*a, i).then(|| a.value(i)),
            BinCol::LargeBin(a) => ok(*a, i).then(|| a.value(i)),
            BinCol::Str(a) => ok(*a, i).then(|| a.value(i).as_bytes()),
            BinCol::LargeStr(a) => ok(*a, i).then(|| a.value(i).as_bytes()),
            BinCol::BinView(a) => ok(*a, i).then(|| a.value(i)),
            BinCol::StrView(a) => ok(*a, i).then(|| a.value(i).as_bytes()),
            BinCol::Fixed(a) => ok(*a, i).then(|| a.value(i)),
        }
    }

    fn get_str(&self, i: usize, name: &str) -> DecodeResult<Option<&'a str>> {
        match self.get(i) {
            None => Ok(None),
            Some(b) => std::str::from_utf8(b)
                .map(Some)
                .map_err(|_| malformed(format!("column {name}: string is not valid UTF-8"))),
        }
    }
}

enum ListCol<'a> {
    List(&'a ListArray),
    Large(&'a LargeListArray),
}

impl<'a> ListCol<'a> {
    fn new(a: &'a ArrayRef, name: &str) -> DecodeResult<Self> {
        Ok(match a.data_type() {
            ArrowType::List(_) => ListCol::List(a.as_list()),
            ArrowType::LargeList(_) => ListCol::Large(a.as_list()),
            _ => return Err(type_error(name, "a list", a)),
        })
    }

    fn values(&self) -> &'a ArrayRef {
        match self {
            ListCol::List(a) => a.values(),
            ListCol::Large(a) => a.values(),
        }
    }

    fn range(&self, i: usize) -> Option<Range<usize>> {
        match self {
            ListCol::List(a) => (i < a.len() && a.is_valid(i)).then(|| {
                let offsets = a.value_offsets();
                offsets[i] as usize..offsets[i + 1] as usize
            }),
            ListCol::Large(a) => (i < a.len() && a.is_valid(i)).then(|| {
                let offsets = a.value_offsets();
                offsets[i] as usize..offsets[i + 1] as usize
            }),
        }
    }
}

fn req_col<'a>(src: &'a dyn Columns, name: &str) -> DecodeResult<&'a ArrayRef> {
    src.column_named(name)
        .ok_or_else(|| malformed(format!("file has no column {name}")))
}

fn struct_of<'a>(a: &'a ArrayRef, name: &str) -> DecodeResult<&'a StructArray> {
    a.as_struct_opt()
        .ok_or_else(|| type_error(name, "a struct", a))
}

fn opt_int<'a>(src: &'a dyn Columns, name: &str) -> DecodeResult<Option<IntCol<'a>>> {
    src.column_named(name)
        .map(|a| IntCol::new(a, name))
        .transpose()
}

fn opt_bin<'a>(src: &'a dyn Columns, name: &str) -> DecodeResult<Option<BinCol<'a>>> {
    src.column_named(name)
        .map(|a| BinCol::new(a, name))
        .transpose()
}

fn req<T>(v: Option<T>, name: &str) -> DecodeResult<T> {
    v.ok_or_else(|| malformed(format!("required column {name} is null")))
}

fn struct_valid(s: &StructArray, i: usize) -> bool {
    i < s.len() && s.is_valid(i)
}

/// A list column whose elements are strings/binaries or integers.
struct ListOf<'a, C> {
    list: ListCol<'a>,
    items: C,
}

fn opt_string_list<'a>(
    src: &'a dyn Columns,
    name: &str,
) -> DecodeResult<Option<ListOf<'a, BinCol<'a>>>> {
    let Some(a) = src.column_named(name) else {
        return Ok(None);
    };
    let list = ListCol::new(a, name)?;
    let items = BinCol::new(list.values(), name)?;
    Ok(Some(ListOf { list, items }))
}

fn opt_int_list<'a>(
    src: &'a dyn Columns,
    name: &str,
) -> DecodeResult<Option<ListOf<'a, IntCol<'a>>>> {
    let Some(a) = src.column_named(name) else {
        return Ok(None);
    };
    let list = ListCol::new(a, name)?;
    let items = IntCol::new(list.values(), name)?;
    Ok(Some(ListOf { list, items }))
}

impl ListOf<'_, BinCol<'_>> {
    fn strings(&self, i: usize, name: &str) -> DecodeResult<Option<Vec<String>>> {
        let Some(r) = self.list.range(i) else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(r.len());
        for j in r {
            if let Some(s) = self.items.get_str(j, name)? {
                out.push(s.to_string());
            }
        }
        Ok(Some(out))
    }
}

impl ListOf<'_, IntCol<'_>> {
    fn longs(&self, i: usize) -> Option<Vec<Option<i64>>> {
        self.list
            .range(i)
            .map(|r| r.map(|j| self.items.get(j)).collect())
    }
}

/// Columns of a SimpleStats struct.
struct StatsCols<'a> {
    s: &'a StructArray,
    min: Option<BinCol<'a>>,
    max: Option<BinCol<'a>>,
    nulls: Option<ListOf<'a, IntCol<'a>>>,
}

impl<'a> StatsCols<'a> {
    fn new(src: &'a dyn Columns, name: &str) -> DecodeResult<Option<Self>> {
        let Some(a) = src.column_named(name) else {
            return Ok(None);
        };
        let s = struct_of(a, name)?;
        Ok(Some(StatsCols {
            s,
            min: opt_bin(s, "_MIN_VALUES")?,
            max: opt_bin(s, "_MAX_VALUES")?,
            nulls: opt_int_list(s, "_NULL_COUNTS")?,
        }))
    }

    fn get(&self, i: usize) -> Option<SimpleStats> {
        if !struct_valid(self.s, i) {
            return None;
        }
        let bytes = |c: &Option<BinCol<'_>>| {
            c.as_ref()
                .and_then(|c| c.get(i))
                .map(Bytes::copy_from_slice)
                .unwrap_or_default()
        };
        Some(SimpleStats {
            min_values: bytes(&self.min),
            max_values: bytes(&self.max),
            null_counts: self.nulls.as_ref().and_then(|n| n.longs(i)),
        })
    }
}

fn version_check(v: &Option<IntCol<'_>>, i: usize, expected: i32, what: &str) -> DecodeResult<()> {
    let v = match v {
        Some(c) => c.get_i32(i, "_VERSION")?,
        None => None,
    };
    check_version(v, expected, what)
}

fn kind_at(c: &IntCol<'_>, i: usize) -> DecodeResult<FileKind> {
    let v = req(c.get(i), "_KIND")?;
    FileKind::from_value(v)
        .ok_or_else(|| malformed(format!("_KIND {v} is neither 0 (ADD) nor 1 (DELETE)")))
}

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

/// Manifest-list rows of one batch.
pub(crate) fn batch_manifest_list(b: &RecordBatch) -> DecodeResult<Vec<ManifestFileMeta>> {
    guard("columnar manifest list", || {
        let version = opt_int(b, "_VERSION")?;
        let name = BinCol::new(req_col(b, "_FILE_NAME")?, "_FILE_NAME")?;
        let size = IntCol::new(req_col(b, "_FILE_SIZE")?, "_FILE_SIZE")?;
        let added = IntCol::new(req_col(b, "_NUM_ADDED_FILES")?, "_NUM_ADDED_FILES")?;
        let deleted = IntCol::new(req_col(b, "_NUM_DELETED_FILES")?, "_NUM_DELETED_FILES")?;
        let schema_id = IntCol::new(req_col(b, "_SCHEMA_ID")?, "_SCHEMA_ID")?;
        let stats = StatsCols::new(b, "_PARTITION_STATS")?
            .ok_or_else(|| malformed("file has no column _PARTITION_STATS"))?;
        let min_bucket = opt_int(b, "_MIN_BUCKET")?;
        let max_bucket = opt_int(b, "_MAX_BUCKET")?;
        let min_level = opt_int(b, "_MIN_LEVEL")?;
        let max_level = opt_int(b, "_MAX_LEVEL")?;
        let min_row = opt_int(b, "_MIN_ROW_ID")?;
        let max_row = opt_int(b, "_MAX_ROW_ID")?;
        let o32 = |c: &Option<IntCol<'_>>, i: usize, n: &str| -> DecodeResult<Option<i32>> {
            c.as_ref()
                .map(|c| c.get_i32(i, n))
                .transpose()
                .map(Option::flatten)
        };
        let o64 = |c: &Option<IntCol<'_>>, i: usize| c.as_ref().and_then(|c| c.get(i));
        let mut out = Vec::with_capacity(b.num_rows());
        for i in 0..b.num_rows() {
            let row = || -> DecodeResult<ManifestFileMeta> {
                version_check(&version, i, 2, "manifest list")?;
                Ok(ManifestFileMeta {
                    file_name: req(name.get_str(i, "_FILE_NAME")?, "_FILE_NAME")?.to_string(),
                    file_size: req(size.get(i), "_FILE_SIZE")?,
                    num_added_files: req(added.get(i), "_NUM_ADDED_FILES")?,
                    num_deleted_files: req(deleted.get(i), "_NUM_DELETED_FILES")?,
                    schema_id: req(schema_id.get(i), "_SCHEMA_ID")?,
                    partition_stats: req(stats.get(i), "_PARTITION_STATS")?,
                    min_bucket: o32(&min_bucket, i, "_MIN_BUCKET")?,
                    max_bucket: o32(&max_bucket, i, "_MAX_BUCKET")?,
                    min_level: o32(&min_level, i, "_MIN_LEVEL")?,
                    max_level: o32(&max_level, i, "_MAX_LEVEL")?,
                    min_row_id: o64(&min_row, i),
                    max_row_id: o64(&max_row, i),
                })
            };
            out.push(row().map_err(|e| e.context(format!("row #{i}")))?);
        }
        Ok(out)
    })
}

/// Manifest-entry rows of one batch.
pub(crate) fn batch_manifest(b: &RecordBatch) -> DecodeResult<Vec<ManifestEntry>> {
    guard("columnar manifest", || {
        let version = opt_int(b, "_VERSION")?;
        let kind = IntCol::new(req_col(b, "_KIND")?, "_KIND")?;
        let partition = BinCol::new(req_col(b, "_PARTITION")?, "_PARTITION")?;
        let bucket = IntCol::new(req_col(b, "_BUCKET")?, "_BUCKET")?;
        let total_buckets = IntCol::new(req_col(b, "_TOTAL_BUCKETS")?, "_TOTAL_BUCKETS")?;
        let file = struct_of(req_col(b, "_FILE")?, "_FILE")?;
        let f = FileCols::new(file)?;
        let mut out = Vec::with_capacity(b.num_rows());
        for i in 0..b.num_rows() {
            let row = || -> DecodeResult<ManifestEntry> {
                version_check(&version, i, 2, "manifest entry")?;
                if !struct_valid(file, i) {
                    return Err(malformed("required column _FILE is null"));
                }
                Ok(ManifestEntry {
                    kind: kind_at(&kind, i)?,
                    partition: req(partition.get(i), "_PARTITION")?.to_vec(),
                    bucket: req(bucket.get_i32(i, "_BUCKET")?, "_BUCKET")?,
                    total_buckets: req(
                        total_buckets.get_i32(i, "_TOTAL_BUCKETS")?,
                        "_TOTAL_BUCKETS",
                    )?,
                    file: f.get(i)?,
                })
            };
            out.push(row().map_err(|e| e.context(format!("row #{i}")))?);
        }
        Ok(out)
    })
}

/// Columns of the `_FILE` struct.
struct FileCols<'a> {
    name: BinCol<'a>,
    size: IntCol<'a>,
    rows: IntCol<'a>,
    min_key: Option<BinCol<'a>>,
    max_key: Option<BinCol<'a>>,
    key_stats: Option<StatsCols<'a>>,
    value_stats: Option<StatsCols<'a>>,
    min_seq: IntCol<'a>,
    max_seq: IntCol<'a>,
    schema_id: IntCol<'a>,
    level: IntCol<'a>,
    extra_files: Option<ListOf<'a, BinCol<'a>>>,
    creation_time: Option<IntCol<'a>>,
    delete_rows: Option<IntCol<'a>>,
    embedded_index: Option<BinCol<'a>>,
    file_source: Option<IntCol<'a>>,
    value_stats_cols: Option<ListOf<'a, BinCol<'a>>>,
    external_path: Option<BinCol<'a>>,
    first_row_id: Option<IntCol<'a>>,
    write_cols: Option<ListOf<'a, BinCol<'a>>>,
    write_cols_sequences: Option<ListOf<'a, IntCol<'a>>>,
}

impl<'a> FileCols<'a> {
    fn new(s: &'a StructArray) -> DecodeResult<Self> {
        let r = |n: &str| -> DecodeResult<IntCol<'a>> {
            IntCol::new(req_col(s, n).map_err(|e| e.context("_FILE"))?, n)
        };
        Ok(FileCols {
            name: BinCol::new(
                req_col(s, "_FILE_NAME").map_err(|e| e.context("_FILE"))?,
                "_FILE_NAME",
            )?,
            size: r("_FILE_SIZE")?,
            rows: r("_ROW_COUNT")?,
            min_key: opt_bin(s, "_MIN_KEY")?,
            max_key: opt_bin(s, "_MAX_KEY")?,
            key_stats: StatsCols::new(s, "_KEY_STATS")?,
            value_stats: StatsCols::new(s, "_VALUE_STATS")?,
            min_seq: r("_MIN_SEQUENCE_NUMBER")?,
            max_seq: r("_MAX_SEQUENCE_NUMBER")?,
            schema_id: r("_SCHEMA_ID")?,
            level: r("_LEVEL")?,
            extra_files: opt_string_list(s, "_EXTRA_FILES")?,
            creation_time: opt_int(s, "_CREATION_TIME")?,
            delete_rows: opt_int(s, "_DELETE_ROW_COUNT")?,
            embedded_index: opt_bin(s, "_EMBEDDED_FILE_INDEX")?,
            file_source: opt_int(s, "_FILE_SOURCE")?,
            value_stats_cols: opt_string_list(s, "_VALUE_STATS_COLS")?,
            external_path: opt_bin(s, "_EXTERNAL_PATH")?,
            first_row_id: opt_int(s, "_FIRST_ROW_ID")?,
            write_cols: opt_string_list(s, "_WRITE_COLS")?,
            write_cols_sequences: opt_int_list(s, "_WRITE_COLS_SEQUENCES")?,
        })
    }

    fn get(&self, i: usize) -> DecodeResult<DataFileMeta> {
        let bytes = |c: &Option<BinCol<'_>>| {
            c.as_ref()
                .and_then(|c| c.get(i))
                .map(Bytes::copy_from_slice)
                .unwrap_or_default()
        };
        let strings =
            |c: &Option<ListOf<'_, BinCol<'_>>>, n: &str| -> DecodeResult<Option<Vec<String>>> {
                c.as_ref()
                    .map(|c| c.strings(i, n))
                    .transpose()
                    .map(Option::flatten)
            };
        let o64 = |c: &Option<IntCol<'_>>| c.as_ref().and_then(|c| c.get(i));
        let file_name = req(self.name.get_str(i, "_FILE_NAME")?, "_FILE_NAME")?.to_string();
        if file_name.is_empty() {
            return Err(malformed("_FILE_NAME is empty"));
        }
        Ok(DataFileMeta {
            file_name,
            file_size: req(self.size.get(i), "_FILE_SIZE")?,
            row_count: req(self.rows.get(i), "_ROW_COUNT")?,
            schema_id: req(self.schema_id.get(i), "_SCHEMA_ID")?,
            level: req(self.level.get_i32(i, "_LEVEL")?, "_LEVEL")?,
            extra_files: strings(&self.extra_files, "_EXTRA_FILES")?.unwrap_or_default(),
            creation_time: o64(&self.creation_time),
            delete_row_count: o64(&self.delete_rows),
            embedded_index: self
                .embedded_index
                .as_ref()
                .and_then(|c| c.get(i))
                .map(<[u8]>::to_vec),
            file_source: match &self.file_source {
                Some(c) => c.get_i32(i, "_FILE_SOURCE")?,
                None => None,
            },
            external_path: match &self.external_path {
                Some(c) => c.get_str(i, "_EXTERNAL_PATH")?.map(str::to_string),
                None => None,
            },
            first_row_id: o64(&self.first_row_id),
            min_key: bytes(&self.min_key),
            max_key: bytes(&self.max_key),
            key_stats: self
                .key_stats
                .as_ref()
                .and_then(|s| s.get(i))
                .unwrap_or_default(),
            value_stats: self
                .value_stats
                .as_ref()
                .and_then(|s| s.get(i))
                .unwrap_or_default(),
            min_sequence_number: req(self.min_seq.get(i), "_MIN_SEQUENCE_NUMBER")?,
            max_sequence_number: req(self.max_seq.get(i), "_MAX_SEQUENCE_NUMBER")?,
            value_stats_cols: strings(&self.value_stats_cols, "_VALUE_STATS_COLS")?,
            write_cols: strings(&self.write_cols, "_WRITE_COLS")?,
            write_cols_sequences: self
                .write_cols_sequences
                .as_ref()
                .and_then(|c| c.longs(i))
                .map(|v| v.into_iter().flatten().collect()),
        })
    }
}

/// Index-manifest rows of one batch.
pub(crate) fn batch_index_manifest(b: &RecordBatch) -> DecodeResult<Vec<IndexManifestEntry>> {
    guard("columnar index manifest", || {
        let version = opt_int(b, "_VERSION")?;
        let kind = opt_int(b, "_KIND")?;
        let partition = BinCol::new(req_col(b, "_PARTITION")?, "_PARTITION")?;
        let bucket = IntCol::new(req_col(b, "_BUCKET")?, "_BUCKET")?;
        let index_type = BinCol::new(req_col(b, "_INDEX_TYPE")?, "_INDEX_TYPE")?;
        let name = BinCol::new(req_col(b, "_FILE_NAME")?, "_FILE_NAME")?;
        let size = IntCol::new(req_col(b, "_FILE_SIZE")?, "_FILE_SIZE")?;
        let rows = IntCol::new(req_col(b, "_ROW_COUNT")?, "_ROW_COUNT")?;
        let external = opt_bin(b, "_EXTERNAL_PATH")?;
        // _DELETIONS_VECTORS_RANGES: list<struct<f0, f1, f2, _CARDINALITY>>
        let dv = match b.column_named("_DELETIONS_VECTORS_RANGES") {
            Some(a) => {
                let list = ListCol::new(a, "_DELETIONS_VECTORS_RANGES")?;
                let s = struct_of(list.values(), "_DELETIONS_VECTORS_RANGES")?;
                Some((
                    list,
                    s,
                    BinCol::new(req_col(s, "f0")?, "f0")?,
                    IntCol::new(req_col(s, "f1")?, "f1")?,
                    IntCol::new(req_col(s, "f2")?, "f2")?,
                    opt_int(s, "_CARDINALITY")?,
                ))
            }
            None => None,
        };
        let gi = match b.column_named("_GLOBAL_INDEX") {
            Some(a) => {
                let s = struct_of(a, "_GLOBAL_INDEX")?;
                Some((
                    s,
                    IntCol::new(req_col(s, "_ROW_RANGE_START")?, "_ROW_RANGE_START")?,
                    IntCol::new(req_col(s, "_ROW_RANGE_END")?, "_ROW_RANGE_END")?,
                    IntCol::new(req_col(s, "_INDEX_FIELD_ID")?, "_INDEX_FIELD_ID")?,
                    opt_int_list(s, "_EXTRA_FIELD_IDS")?,
                    opt_bin(s, "_INDEX_META")?,
                    opt_bin(s, "_SOURCE_META")?,
                ))
            }
            None => None,
        };
        let mut out = Vec::with_capacity(b.num_rows());
        for i in 0..b.num_rows() {
            let row = || -> DecodeResult<IndexManifestEntry> {
                version_check(&version, i, 1, "index manifest entry")?;
                let mut e = IndexManifestEntry {
                    kind: match &kind {
                        Some(k) => kind_at(k, i)?,
                        None => FileKind::Add,
                    },
                    partition: req(partition.get(i), "_PARTITION")?.to_vec(),
                    bucket: req(bucket.get_i32(i, "_BUCKET")?, "_BUCKET")?,
                    index_type: req(index_type.get_str(i, "_INDEX_TYPE")?, "_INDEX_TYPE")?
                        .to_string(),
                    file_name: req(name.get_str(i, "_FILE_NAME")?, "_FILE_NAME")?.to_string(),
                    file_size: req(size.get(i), "_FILE_SIZE")?,
                    row_count: req(rows.get(i), "_ROW_COUNT")?,
                    external_path: match &external {
                        Some(c) => c.get_str(i, "_EXTERNAL_PATH")?.map(str::to_string),
                        None => None,
                    },
                    ..Default::default()
                };
                if e.file_name.is_empty() {
                    return Err(malformed("_FILE_NAME is empty"));
                }
                if let Some((list, s, f0, f1, f2, card)) = &dv {
                    if let Some(r) = list.range(i) {
                        let mut ranges = Vec::with_capacity(r.len());
                        for j in r {
                            if !struct_valid(s, j) {
                                continue;
                            }
                            ranges.push(DeletionVectorMeta {
                                data_file_name: req(f0.get_str(j, "f0")?, "f0")?.to_string(),
                                offset: req(f1.get_i32(j, "f1")?, "f1")?,
                                length: req(f2.get_i32(j, "f2")?, "f2")?,
                                cardinality: card.as_ref().and_then(|c| c.get(j)),
                            });
                        }
                        e.dv_ranges = Some(ranges);
                    }
                }
                if let Some((s, start, end, field, extra, meta, source)) = &gi {
                    if struct_valid(s, i) {
                        e.global_index = Some(GlobalIndexMeta {
                            row_range_start: req(start.get(i), "_ROW_RANGE_START")?,
                            row_range_end: req(end.get(i), "_ROW_RANGE_END")?,
                            index_field_id: req(field.get_i32(i, "_INDEX_FIELD_ID")?, "_INDEX_FIELD_ID")?,
                            extra_field_ids: match extra.as_ref().and_then(|c| c.longs(i)) {
                                Some(v) => Some(
                                    v.into_iter()
                                        .flatten()
                                        .map(|x| {
                                            i32::try_from(x).map_err(|_| {
                                                malformed(format!("_EXTRA_FIELD_IDS value {x} does not fit an int"))
                                            })
                                        })
                                        .collect::<DecodeResult<Vec<i32>>>()?,
                                ),
                                None => None,
                            },
                            index_meta: meta.as_ref().and_then(|c| c.get(i)).map(<[u8]>::to_vec),
                            source_meta: source.as_ref().and_then(|c| c.get(i)).map(<[u8]>::to_vec),
                        });
                    }
                }
                e.dv_data_files = e
                    .dv_ranges
                    .iter()
                    .flatten()
                    .map(|d| d.data_file_name.clone())
                    .collect();
                e.is_global = e.global_index.is_some();
                Ok(e)
            };
            out.push(row().map_err(|e| e.context(format!("row #{i}")))?);
        }
        Ok(out)
    })
}
