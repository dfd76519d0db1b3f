//! Avro records → Paimon manifest types, resolved by field NAME against the writer schema.
//!
//! For each record type a plan is computed once per file: the writer's fields in order, each
//! mapped to a known Paimon field or to "skip". Record names are never looked at (Java writes
//! `record__FILE`, pypaimon `DataFileMeta`). Union-wrapped records of Paimon ≤ 0.8
//! (`["null", record]`) are entered through their union branch.

use bytes::Bytes;

use super::avro::{Container, Cursor, DResult, DecodeError, Node, NodeId, Schema, MAX_EMPTY_ITEMS};
use super::{
    DataFileMeta, DeletionVectorMeta, FileKind, GlobalIndexMeta, IndexManifestEntry, ManifestEntry,
    ManifestFileMeta, SimpleStats,
};

fn missing(name: &str) -> DecodeError {
    DecodeError::malformed(format!("writer schema has no field {name}"))
}

fn null_field(name: &str) -> DecodeError {
    DecodeError::malformed(format!("required field {name} is null"))
}

fn req<T>(v: Option<T>, name: &str) -> DResult<T> {
    v.ok_or_else(|| null_field(name))
}

/// Reads values of one decompressed block.
struct Rd<'s, 'b> {
    s: &'s Schema,
    block: &'b Bytes,
    c: Cursor<'b>,
}

impl<'s, 'b> Rd<'s, 'b> {
    /// A reader of `block` allowed `empty_items` zero-byte array items (the file's budget).
    fn new(s: &'s Schema, block: &'b Bytes, empty_items: u64) -> Self {
        Rd {
            s,
            block,
            c: Cursor::with_empty_items(block.as_ref(), empty_items),
        }
    }

    /// Resolves a union by reading its branch index; other nodes are returned unchanged.
    fn branch(&mut self, node: NodeId) -> DResult<NodeId> {
        match self.s.node(node) {
            Node::Union(branches) => {
                let idx = self.c.read_long()?;
                usize::try_from(idx)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .copied()
                    .ok_or_else(|| {
                        DecodeError::malformed(format!("union branch {idx} out of range"))
                    })
            }
            _ => Ok(node),
        }
    }

    fn mismatch(&self, name: &str, expected: &str, node: NodeId) -> DecodeError {
        DecodeError::malformed(format!(
            "field {name}: expected {expected}, writer type is {}",
            self.s.node(node).type_name()
        ))
    }

    fn skip(&mut self, node: NodeId) -> DResult<()> {
        self.c.skip_value(self.s, node, 0)
    }

    fn opt_long(&mut self, node: NodeId, name: &str) -> DResult<Option<i64>> {
        let n = self.branch(node)?;
        match self.s.node(n) {
            Node::Null => Ok(None),
            Node::Int | Node::Long => Ok(Some(self.c.read_long()?)),
            _ => Err(self.mismatch(name, "int or long", n)),
        }
    }

    fn opt_int(&mut self, node: NodeId, name: &str) -> DResult<Option<i32>> {
        match self.opt_long(node, name)? {
            None => Ok(None),
            Some(v) => i32::try_from(v).map(Some).map_err(|_| {
                DecodeError::malformed(format!("field {name}: value {v} does not fit an int"))
            }),
        }
    }

    fn opt_bytes_range(
        &mut self,
        node: NodeId,
        name: &str,
    ) -> DResult<Option<std::ops::Range<usize>>> {
        let n = self.branch(node)?;
        match self.s.node(n) {
            Node::Null => Ok(None),
            Node::Bytes | Node::String => Ok(Some(self.c.read_bytes_range()?)),
            Node::Fixed(size) => {
                let start = self.c.position();
                self.c.skip(*size)?;
                Ok(Some(start..start + size))
            }
            _ => Err(self.mismatch(name, "bytes", n)),
        }
    }

    fn opt_bytes(&mut self, node: NodeId, name: &str) -> DResult<Option<Bytes>> {
        Ok(self
            .opt_bytes_range(node, name)?
            .map(|r| self.block.slice(r)))
    }

    fn opt_vec(&mut self, node: NodeId, name: &str) -> DResult<Option<Vec<u8>>> {
        Ok(self
            .opt_bytes_range(node, name)?
            .map(|r| self.block[r].to_vec()))
    }

    fn opt_str(&mut self, node: NodeId, name: &str) -> DResult<Option<&'b str>> {
        let n = self.branch(node)?;
        match self.s.node(n) {
            Node::Null => Ok(None),
            Node::String | Node::Bytes => self
                .c
                .read_str()
                .map(Some)
                .map_err(|e| e.context(format!("field {name}"))),
            _ => Err(self.mismatch(name, "string", n)),
        }
    }

    fn opt_string(&mut self, node: NodeId, name: &str) -> DResult<Option<String>> {
        Ok(self.opt_str(node, name)?.map(str::to_string))
    }

    /// Reads an optional array, calling `item` for each element (whose `None` results are
    /// dropped: null elements).
    fn opt_array<T>(
        &mut self,
        node: NodeId,
        name: &str,
        mut item: impl FnMut(&mut Self, NodeId) -> DResult<Option<T>>,
    ) -> DResult<Option<Vec<T>>> {
        let n = self.branch(node)?;
        let item_node = match self.s.node(n) {
            Node::Null => return Ok(None),
            Node::Array(i) => *i,
            _ => return Err(self.mismatch(name, "array", n)),
        };
        let mut out = Vec::new();
        loop {
            let count = self.c.read_block_count()?;
            if count == 0 {
                return Ok(Some(out));
            }
            // Elements of a zero-byte type (an `array<null>`) count against the file's budget.
            let count = self.c.check_count(count, self.s.can_be_empty(item_node))?;
            out.reserve(count);
            for _ in 0..count {
                if let Some(v) = item(self, item_node)? {
                    out.push(v);
                }
            }
        }
    }

    fn opt_string_array(&mut self, node: NodeId, name: &str) -> DResult<Option<Vec<String>>> {
        self.opt_array(node, name, |rd, item| rd.opt_string(item, name))
    }

    /// Enters a record-valued field: `Ok(true)` when the record follows, `Ok(false)` for null.
    fn enter_record(&mut self, node: NodeId, record: NodeId, name: &str) -> DResult<bool> {
        let n = self.branch(node)?;
        if n == record {
            return Ok(true);
        }
        match self.s.node(n) {
            Node::Null => Ok(false),
            _ => Err(self.mismatch(name, "the planned record", n)),
        }
    }
}

/// Writer fields of a record mapped to known fields (`None` = skip).
struct Plan<F> {
    record: NodeId,
    fields: Vec<(Option<F>, NodeId)>,
}

impl<F: Copy + PartialEq> Plan<F> {
    fn new(s: &Schema, record: NodeId, map: fn(&str) -> Option<F>) -> Self {
        Plan {
            record,
            fields: s
                .fields(record)
                .iter()
                .map(|f| (map(&f.name), f.node))
                .collect(),
        }
    }

    fn node_of(&self, f: F) -> Option<NodeId> {
        self.fields
            .iter()
            .find(|(k, _)| *k == Some(f))
            .map(|(_, n)| *n)
    }

    fn require(&self, required: &[(F, &str)]) -> DResult<()> {
        for (f, name) in required {
            if self.node_of(*f).is_none() {
                return Err(missing(name));
            }
        }
        Ok(())
    }
}

/// The record planned for a field holding a record (possibly union-wrapped).
fn sub_record(s: &Schema, node: NodeId, name: &str) -> DResult<NodeId> {
    s.record_of(node).ok_or_else(|| {
        DecodeError::malformed(format!("field {name} is not a record in the writer schema"))
    })
}

/// The element node of an (optionally union-wrapped) array field.
fn array_item(s: &Schema, node: NodeId) -> Option<NodeId> {
    match s.node(node) {
        Node::Array(i) => Some(*i),
        Node::Union(b) => b.iter().find_map(|x| match s.node(*x) {
            Node::Array(i) => Some(*i),
            _ => None,
        }),
        _ => None,
    }
}

pub(crate) fn check_version(v: Option<i32>, expected: i32, what: &str) -> DResult<()> {
    match v {
        None => Ok(()),
        Some(v) if v == expected => Ok(()),
        Some(1) if expected == 2 => Err(DecodeError::Unsupported(format!(
            "{what} _VERSION 1 is the incompatible pre-1.0 format; Paimon refuses it too (please recreate the table)"
        ))),
        Some(v) => Err(DecodeError::Unsupported(format!(
            "{what} _VERSION {v} is not supported (expected {expected})"
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
// SimpleStats
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum StatsF {
    Min,
    Max,
    Nulls,
}

fn stats_field(n: &str) -> Option<StatsF> {
    Some(match n {
        "_MIN_VALUES" => StatsF::Min,
        "_MAX_VALUES" => StatsF::Max,
        "_NULL_COUNTS" => StatsF::Nulls,
        _ => return None,
    })
}

fn plan_stats(s: &Schema, node: NodeId, name: &str) -> DResult<Plan<StatsF>> {
    Ok(Plan::new(s, sub_record(s, node, name)?, stats_field))
}

fn read_stats(
    rd: &mut Rd<'_, '_>,
    node: NodeId,
    plan: &Plan<StatsF>,
) -> DResult<Option<SimpleStats>> {
    if !rd.enter_record(node, plan.record, "stats")? {
        return Ok(None);
    }
    let mut st = SimpleStats::default();
    for (f, n) in &plan.fields {
        match f {
            None => rd.skip(*n)?,
            Some(StatsF::Min) => {
                st.min_values = rd.opt_bytes(*n, "_MIN_VALUES")?.unwrap_or_default()
            }
            Some(StatsF::Max) => {
                st.max_values = rd.opt_bytes(*n, "_MAX_VALUES")?.unwrap_or_default()
            }
            Some(StatsF::Nulls) => {
                st.null_counts = rd.opt_array(*n, "_NULL_COUNTS", |rd, item| {
                    Ok(Some(rd.opt_long(item, "_NULL_COUNTS item")?))
                })?
            }
        }
    }
    Ok(Some(st))
}

// ---------------------------------------------------------------------------------------------
// Manifest list
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum MetaF {
    Version,
    FileName,
    FileSize,
    Added,
    Deleted,
    PartitionStats,
    SchemaId,
    MinBucket,
    MaxBucket,
    MinLevel,
    MaxLevel,
    MinRowId,
    MaxRowId,
}

fn meta_field(n: &str) -> Option<MetaF> {
    Some(match n {
        "_VERSION" => MetaF::Version,
        "_FILE_NAME" => MetaF::FileName,
        "_FILE_SIZE" => MetaF::FileSize,
        "_NUM_ADDED_FILES" => MetaF::Added,
        "_NUM_DELETED_FILES" => MetaF::Deleted,
        "_PARTITION_STATS" => MetaF::PartitionStats,
        "_SCHEMA_ID" => MetaF::SchemaId,
        "_MIN_BUCKET" => MetaF::MinBucket,
        "_MAX_BUCKET" => MetaF::MaxBucket,
        "_MIN_LEVEL" => MetaF::MinLevel,
        "_MAX_LEVEL" => MetaF::MaxLevel,
        "_MIN_ROW_ID" => MetaF::MinRowId,
        "_MAX_ROW_ID" => MetaF::MaxRowId,
        _ => return None,
    })
}

struct MetaPlan {
    top: Plan<MetaF>,
    stats: Plan<StatsF>,
}

fn plan_meta(s: &Schema, record: NodeId) -> DResult<MetaPlan> {
    let top = Plan::new(s, record, meta_field);
    top.require(&[
        (MetaF::FileName, "_FILE_NAME"),
        (MetaF::FileSize, "_FILE_SIZE"),
        (MetaF::Added, "_NUM_ADDED_FILES"),
        (MetaF::Deleted, "_NUM_DELETED_FILES"),
        (MetaF::PartitionStats, "_PARTITION_STATS"),
        (MetaF::SchemaId, "_SCHEMA_ID"),
    ])?;
    let stats_node = top
        .node_of(MetaF::PartitionStats)
        .ok_or_else(|| missing("_PARTITION_STATS"))?;
    let stats = plan_stats(s, stats_node, "_PARTITION_STATS")?;
    Ok(MetaPlan { top, stats })
}

fn read_meta(rd: &mut Rd<'_, '_>, plan: &MetaPlan) -> DResult<ManifestFileMeta> {
    let mut m = ManifestFileMeta::default();
    for (f, n) in &plan.top.fields {
        let n = *n;
        match f {
            None => rd.skip(n)?,
            Some(MetaF::Version) => check_version(rd.opt_int(n, "_VERSION")?, 2, "manifest list")?,
            Some(MetaF::FileName) => {
                m.file_name = req(rd.opt_string(n, "_FILE_NAME")?, "_FILE_NAME")?
            }
            Some(MetaF::FileSize) => {
                m.file_size = req(rd.opt_long(n, "_FILE_SIZE")?, "_FILE_SIZE")?
            }
            Some(MetaF::Added) => {
                m.num_added_files = req(rd.opt_long(n, "_NUM_ADDED_FILES")?, "_NUM_ADDED_FILES")?
            }
            Some(MetaF::Deleted) => {
                m.num_deleted_files =
                    req(rd.opt_long(n, "_NUM_DELETED_FILES")?, "_NUM_DELETED_FILES")?
            }
            Some(MetaF::PartitionStats) => {
                m.partition_stats = req(read_stats(rd, n, &plan.stats)?, "_PARTITION_STATS")?
            }
            Some(MetaF::SchemaId) => {
                m.schema_id = req(rd.opt_long(n, "_SCHEMA_ID")?, "_SCHEMA_ID")?
            }
            Some(MetaF::MinBucket) => m.min_bucket = rd.opt_int(n, "_MIN_BUCKET")?,
            Some(MetaF::MaxBucket) => m.max_bucket = rd.opt_int(n, "_MAX_BUCKET")?,
            Some(MetaF::MinLevel) => m.min_level = rd.opt_int(n, "_MIN_LEVEL")?,
            Some(MetaF::MaxLevel) => m.max_level = rd.opt_int(n, "_MAX_LEVEL")?,
            Some(MetaF::MinRowId) => m.min_row_id = rd.opt_long(n, "_MIN_ROW_ID")?,
            Some(MetaF::MaxRowId) => m.max_row_id = rd.opt_long(n, "_MAX_ROW_ID")?,
        }
    }
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// Manifest (entries + DataFileMeta)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum EntryF {
    Version,
    Kind,
    Partition,
    Bucket,
    TotalBuckets,
    File,
}

fn entry_field(n: &str) -> Option<EntryF> {
    Some(match n {
        "_VERSION" => EntryF::Version,
        "_KIND" => EntryF::Kind,
        "_PARTITION" => EntryF::Partition,
        "_BUCKET" => EntryF::Bucket,
        "_TOTAL_BUCKETS" => EntryF::TotalBuckets,
        "_FILE" => EntryF::File,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum FileF {
    FileName,
    FileSize,
    RowCount,
    MinKey,
    MaxKey,
    KeyStats,
    ValueStats,
    MinSeq,
    MaxSeq,
    SchemaId,
    Level,
    ExtraFiles,
    CreationTime,
    DeleteRowCount,
    EmbeddedIndex,
    FileSource,
    ValueStatsCols,
    ExternalPath,
    FirstRowId,
    WriteCols,
    WriteColsSequences,
}

fn file_field(n: &str) -> Option<FileF> {
    Some(match n {
        "_FILE_NAME" => FileF::FileName,
        "_FILE_SIZE" => FileF::FileSize,
        "_ROW_COUNT" => FileF::RowCount,
        "_MIN_KEY" => FileF::MinKey,
        "_MAX_KEY" => FileF::MaxKey,
        "_KEY_STATS" => FileF::KeyStats,
        "_VALUE_STATS" => FileF::ValueStats,
        "_MIN_SEQUENCE_NUMBER" => FileF::MinSeq,
        "_MAX_SEQUENCE_NUMBER" => FileF::MaxSeq,
        "_SCHEMA_ID" => FileF::SchemaId,
        "_LEVEL" => FileF::Level,
        "_EXTRA_FILES" => FileF::ExtraFiles,
        "_CREATION_TIME" => FileF::CreationTime,
        "_DELETE_ROW_COUNT" => FileF::DeleteRowCount,
        "_EMBEDDED_FILE_INDEX" => FileF::EmbeddedIndex,
        "_FILE_SOURCE" => FileF::FileSource,
        "_VALUE_STATS_COLS" => FileF::ValueStatsCols,
        "_EXTERNAL_PATH" => FileF::ExternalPath,
        "_FIRST_ROW_ID" => FileF::FirstRowId,
        "_WRITE_COLS" => FileF::WriteCols,
        "_WRITE_COLS_SEQUENCES" => FileF::WriteColsSequences,
        _ => return None,
    })
}

struct EntryPlan {
    top: Plan<EntryF>,
    file: Plan<FileF>,
    key_stats: Option<Plan<StatsF>>,
    value_stats: Option<Plan<StatsF>>,
}

fn plan_entry(s: &Schema, record: NodeId) -> DResult<EntryPlan> {
    let top = Plan::new(s, record, entry_field);
    top.require(&[
        (EntryF::Kind, "_KIND"),
        (EntryF::Partition, "_PARTITION"),
        (EntryF::Bucket, "_BUCKET"),
        (EntryF::TotalBuckets, "_TOTAL_BUCKETS"),
        (EntryF::File, "_FILE"),
    ])?;
    let file_node = top.node_of(EntryF::File).ok_or_else(|| missing("_FILE"))?;
    let file = Plan::new(s, sub_record(s, file_node, "_FILE")?, file_field);
    file.require(&[
        (FileF::FileName, "_FILE._FILE_NAME"),
        (FileF::FileSize, "_FILE._FILE_SIZE"),
        (FileF::RowCount, "_FILE._ROW_COUNT"),
        (FileF::MinSeq, "_FILE._MIN_SEQUENCE_NUMBER"),
        (FileF::MaxSeq, "_FILE._MAX_SEQUENCE_NUMBER"),
        (FileF::SchemaId, "_FILE._SCHEMA_ID"),
        (FileF::Level, "_FILE._LEVEL"),
    ])?;
    let key_stats = match file.node_of(FileF::KeyStats) {
        Some(n) => Some(plan_stats(s, n, "_KEY_STATS")?),
        None => None,
    };
    let value_stats = match file.node_of(FileF::ValueStats) {
        Some(n) => Some(plan_stats(s, n, "_VALUE_STATS")?),
        None => None,
    };
    Ok(EntryPlan {
        top,
        file,
        key_stats,
        value_stats,
    })
}

/// [`plan_entry`] that skips (still validating the bytes) the file fields nothing needs to
/// locate or identify a file: its keys, statistics and column lists. Decoded entries leave
/// them empty.
fn plan_entry_locating(s: &Schema, record: NodeId) -> DResult<EntryPlan> {
    let mut plan = plan_entry(s, record)?;
    for (f, _) in plan.file.fields.iter_mut() {
        if matches!(
            f,
            Some(
                FileF::MinKey
                    | FileF::MaxKey
                    | FileF::KeyStats
                    | FileF::ValueStats
                    | FileF::ValueStatsCols
                    | FileF::WriteCols
                    | FileF::WriteColsSequences
            )
        ) {
            *f = None;
        }
    }
    plan.key_stats = None;
    plan.value_stats = None;
    Ok(plan)
}

fn read_file_meta(rd: &mut Rd<'_, '_>, plan: &EntryPlan) -> DResult<DataFileMeta> {
    let mut d = DataFileMeta::default();
    for (f, n) in &plan.file.fields {
        let n = *n;
        match f {
            None => rd.skip(n)?,
            Some(FileF::FileName) => {
                d.file_name = req(rd.opt_string(n, "_FILE_NAME")?, "_FILE_NAME")?
            }
            Some(FileF::FileSize) => {
                d.file_size = req(rd.opt_long(n, "_FILE_SIZE")?, "_FILE_SIZE")?
            }
            Some(FileF::RowCount) => {
                d.row_count = req(rd.opt_long(n, "_ROW_COUNT")?, "_ROW_COUNT")?
            }
            Some(FileF::MinKey) => d.min_key = rd.opt_bytes(n, "_MIN_KEY")?.unwrap_or_default(),
            Some(FileF::MaxKey) => d.max_key = rd.opt_bytes(n, "_MAX_KEY")?.unwrap_or_default(),
            Some(FileF::KeyStats) => {
                if let Some(p) = &plan.key_stats {
                    d.key_stats = read_stats(rd, n, p)?.unwrap_or_default();
                }
            }
            Some(FileF::ValueStats) => {
                if let Some(p) = &plan.value_stats {
                    d.value_stats = read_stats(rd, n, p)?.unwrap_or_default();
                }
            }
            Some(FileF::MinSeq) => {
                d.min_sequence_number = req(
                    rd.opt_long(n, "_MIN_SEQUENCE_NUMBER")?,
                    "_MIN_SEQUENCE_NUMBER",
                )?
            }
            Some(FileF::MaxSeq) => {
                d.max_sequence_number = req(
                    rd.opt_long(n, "_MAX_SEQUENCE_NUMBER")?,
                    "_MAX_SEQUENCE_NUMBER",
                )?
            }
            Some(FileF::SchemaId) => {
                d.schema_id = req(rd.opt_long(n, "_SCHEMA_ID")?, "_SCHEMA_ID")?
            }
            Some(FileF::Level) => d.level = req(rd.opt_int(n, "_LEVEL")?, "_LEVEL")?,
            Some(FileF::ExtraFiles) => {
                d.extra_files = rd.opt_string_array(n, "_EXTRA_FILES")?.unwrap_or_default()
            }
            Some(FileF::CreationTime) => d.creation_time = rd.opt_long(n, "_CREATION_TIME")?,
            Some(FileF::DeleteRowCount) => {
                d.delete_row_count = rd.opt_long(n, "_DELETE_ROW_COUNT")?
            }
            Some(FileF::EmbeddedIndex) => {
                d.embedded_index = rd.opt_vec(n, "_EMBEDDED_FILE_INDEX")?
            }
            Some(FileF::FileSource) => d.file_source = rd.opt_int(n, "_FILE_SOURCE")?,
            Some(FileF::ValueStatsCols) => {
                d.value_stats_cols = rd.opt_string_array(n, "_VALUE_STATS_COLS")?
            }
            Some(FileF::ExternalPath) => d.external_path = rd.opt_string(n, "_EXTERNAL_PATH")?,
            Some(FileF::FirstRowId) => d.first_row_id = rd.opt_long(n, "_FIRST_ROW_ID")?,
            Some(FileF::WriteCols) => d.write_cols = rd.opt_string_array(n, "_WRITE_COLS")?,
            Some(FileF::WriteColsSequences) => {
                d.write_cols_sequences = rd.opt_array(n, "_WRITE_COLS_SEQUENCES", |rd, item| {
                    rd.opt_long(item, "_WRITE_COLS_SEQUENCES item")
                })?
            }
        }
    }
    if d.file_name.is_empty() {
        return Err(DecodeError::malformed("_FILE_NAME is empty"));
    }
    Ok(d)
}

fn read_kind(v: Option<i64>) -> DResult<FileKind> {
    let v = req(v, "_KIND")?;
    FileKind::from_value(v).ok_or_else(|| {
        DecodeError::malformed(format!("_KIND {v} is neither 0 (ADD) nor 1 (DELETE)"))
    })
}

fn read_entry(rd: &mut Rd<'_, '_>, plan: &EntryPlan) -> DResult<ManifestEntry> {
    let mut e = ManifestEntry::default();
    let mut file = None;
    for (f, n) in &plan.top.fields {
        let n = *n;
        match f {
            None => rd.skip(n)?,
            Some(EntryF::Version) => {
                check_version(rd.opt_int(n, "_VERSION")?, 2, "manifest entry")?
            }
            Some(EntryF::Kind) => e.kind = read_kind(rd.opt_long(n, "_KIND")?)?,
            Some(EntryF::Partition) => {
                e.partition = req(rd.opt_bytes_range(n, "_PARTITION")?, "_PARTITION")
                    .map(|r| rd.block[r].to_vec())?
            }
            Some(EntryF::Bucket) => e.bucket = req(rd.opt_int(n, "_BUCKET")?, "_BUCKET")?,
            Some(EntryF::TotalBuckets) => {
                e.total_buckets = req(rd.opt_int(n, "_TOTAL_BUCKETS")?, "_TOTAL_BUCKETS")?
            }
            Some(EntryF::File) => {
                if !rd.enter_record(n, plan.file.record, "_FILE")? {
                    return Err(null_field("_FILE"));
                }
                file = Some(read_file_meta(rd, plan)?);
            }
        }
    }
    e.file = req(file, "_FILE")?;
    Ok(e)
}

// ---------------------------------------------------------------------------------------------
// Index manifest
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum IdxF {
    Version,
    Kind,
    Partition,
    Bucket,
    IndexType,
    FileName,
    FileSize,
    RowCount,
    DvRanges,
    ExternalPath,
    GlobalIndex,
}

fn index_field(n: &str) -> Option<IdxF> {
    Some(match n {
        "_VERSION" => IdxF::Version,
        "_KIND" => IdxF::Kind,
        "_PARTITION" => IdxF::Partition,
        "_BUCKET" => IdxF::Bucket,
        "_INDEX_TYPE" => IdxF::IndexType,
        "_FILE_NAME" => IdxF::FileName,
        "_FILE_SIZE" => IdxF::FileSize,
        "_ROW_COUNT" => IdxF::RowCount,
        "_DELETIONS_VECTORS_RANGES" => IdxF::DvRanges,
        "_EXTERNAL_PATH" => IdxF::ExternalPath,
        "_GLOBAL_INDEX" => IdxF::GlobalIndex,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum DvF {
    F0,
    F1,
    F2,
    Cardinality,
}

fn dv_field(n: &str) -> Option<DvF> {
    Some(match n {
        "f0" => DvF::F0,
        "f1" => DvF::F1,
        "f2" => DvF::F2,
        "_CARDINALITY" => DvF::Cardinality,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum GiF {
    Start,
    End,
    FieldId,
    ExtraIds,
    IndexMeta,
    SourceMeta,
}

fn gi_field(n: &str) -> Option<GiF> {
    Some(match n {
        "_ROW_RANGE_START" => GiF::Start,
        "_ROW_RANGE_END" => GiF::End,
        "_INDEX_FIELD_ID" => GiF::FieldId,
        "_EXTRA_FIELD_IDS" => GiF::ExtraIds,
        "_INDEX_META" => GiF::IndexMeta,
        "_SOURCE_META" => GiF::SourceMeta,
        _ => return None,
    })
}

struct IndexPlan {
    top: Plan<IdxF>,
    dv: Option<Plan<DvF>>,
    gi: Option<Plan<GiF>>,
}

fn plan_index(s: &Schema, record: NodeId) -> DResult<IndexPlan> {
    let top = Plan::new(s, record, index_field);
    top.require(&[
        (IdxF::Partition, "_PARTITION"),
        (IdxF::Bucket, "_BUCKET"),
        (IdxF::IndexType, "_INDEX_TYPE"),
        (IdxF::FileName, "_FILE_NAME"),
        (IdxF::FileSize, "_FILE_SIZE"),
        (IdxF::RowCount, "_ROW_COUNT"),
    ])?;
    let dv = match top.node_of(IdxF::DvRanges) {
        Some(n) => {
            let item = array_item(s, n).ok_or_else(|| {
                DecodeError::malformed(
                    "field _DELETIONS_VECTORS_RANGES is not an array in the writer schema",
                )
            })?;
            let p = Plan::new(
                s,
                sub_record(s, item, "_DELETIONS_VECTORS_RANGES item")?,
                dv_field,
            );
            p.require(&[
                (DvF::F0, "_DELETIONS_VECTORS_RANGES.f0"),
                (DvF::F1, "f1"),
                (DvF::F2, "f2"),
            ])?;
            Some(p)
        }
        None => None,
    };
    let gi = match top.node_of(IdxF::GlobalIndex) {
        Some(n) => Some(Plan::new(s, sub_record(s, n, "_GLOBAL_INDEX")?, gi_field)),
        None => None,
    };
    Ok(IndexPlan { top, dv, gi })
}

fn read_dv(
    rd: &mut Rd<'_, '_>,
    node: NodeId,
    plan: &Plan<DvF>,
) -> DResult<Option<DeletionVectorMeta>> {
    if !rd.enter_record(node, plan.record, "_DELETIONS_VECTORS_RANGES item")? {
        return Ok(None);
    }
    let mut d = DeletionVectorMeta::default();
    for (f, n) in &plan.fields {
        let n = *n;
        match f {
            None => rd.skip(n)?,
            Some(DvF::F0) => d.data_file_name = req(rd.opt_string(n, "f0")?, "f0")?,
            Some(DvF::F1) => d.offset = req(rd.opt_int(n, "f1")?, "f1")?,
            Some(DvF::F2) => d.length = req(rd.opt_int(n, "f2")?, "f2")?,
            Some(DvF::Cardinality) => d.cardinality = rd.opt_long(n, "_CARDINALITY")?,
        }
    }
    Ok(Some(d))
}

fn read_gi(
    rd: &mut Rd<'_, '_>,
    node: NodeId,
    plan: &Plan<GiF>,
) -> DResult<Option<GlobalIndexMeta>> {
    if !rd.enter_record(node, plan.record, "_GLOBAL_INDEX")? {
        return Ok(None);
    }
    let mut g = GlobalIndexMeta::default();
    for (f, n) in &plan.fields {
        let n = *n;
        match f {
            None => rd.skip(n)?,
            Some(GiF::Start) => {
                g.row_range_start = req(rd.opt_long(n, "_ROW_RANGE_START")?, "_ROW_RANGE_START")?
            }
            Some(GiF::End) => {
                g.row_range_end = req(rd.opt_long(n, "_ROW_RANGE_END")?, "_ROW_RANGE_END")?
            }
            Some(GiF::FieldId) => {
                g.index_field_id = req(rd.opt_int(n, "_INDEX_FIELD_ID")?, "_INDEX_FIELD_ID")?
            }
            Some(GiF::ExtraIds) => {
                g.extra_field_ids = rd.opt_array(n, "_EXTRA_FIELD_IDS", |rd, item| {
                    rd.opt_int(item, "_EXTRA_FIELD_IDS item")
                })?
            }
            Some(GiF::IndexMeta) => g.index_meta = rd.opt_vec(n, "_INDEX_META")?,
            Some(GiF::SourceMeta) => g.source_meta = rd.opt_vec(n, "_SOURCE_META")?,
        }
    }
    Ok(Some(g))
}

fn read_index(rd: &mut Rd<'_, '_>, plan: &IndexPlan) -> DResult<IndexManifestEntry> {
    let mut e = IndexManifestEntry::default();
    for (f, n) in &plan.top.fields {
        let n = *n;
        match f {
            None => rd.skip(n)?,
            Some(IdxF::Version) => {
                check_version(rd.opt_int(n, "_VERSION")?, 1, "index manifest entry")?
            }
            Some(IdxF::Kind) => e.kind = read_kind(rd.opt_long(n, "_KIND")?)?,
            Some(IdxF::Partition) => {
                e.partition = req(rd.opt_bytes_range(n, "_PARTITION")?, "_PARTITION")
                    .map(|r| rd.block[r].to_vec())?
            }
            Some(IdxF::Bucket) => e.bucket = req(rd.opt_int(n, "_BUCKET")?, "_BUCKET")?,
            Some(IdxF::IndexType) => {
                e.index_type = req(rd.opt_string(n, "_INDEX_TYPE")?, "_INDEX_TYPE")?
            }
            Some(IdxF::FileName) => {
                e.file_name = req(rd.opt_string(n, "_FILE_NAME")?, "_FILE_NAME")?
            }
            Some(IdxF::FileSize) => e.file_size = req(rd.opt_long(n, "_FILE_SIZE")?, "_FILE_SIZE")?,
            Some(IdxF::RowCount) => e.row_count = req(rd.opt_long(n, "_ROW_COUNT")?, "_ROW_COUNT")?,
            Some(IdxF::DvRanges) => match &plan.dv {
                Some(p) => {
                    e.dv_ranges = rd.opt_array(n, "_DELETIONS_VECTORS_RANGES", |rd, item| {
                        read_dv(rd, item, p)
                    })?
                }
                None => rd.skip(n)?,
            },
            Some(IdxF::ExternalPath) => e.external_path = rd.opt_string(n, "_EXTERNAL_PATH")?,
            Some(IdxF::GlobalIndex) => match &plan.gi {
                Some(p) => e.global_index = read_gi(rd, n, p)?,
                None => rd.skip(n)?,
            },
        }
    }
    if e.file_name.is_empty() {
        return Err(DecodeError::malformed("_FILE_NAME is empty"));
    }
    e.dv_data_files = e
        .dv_ranges
        .iter()
        .flatten()
        .map(|d| d.data_file_name.clone())
        .collect();
    e.is_global = e.global_index.is_some();
    Ok(e)
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/// Decodes the records of a container file one at a time: `f` gets each record with the number
/// of records left in its block (itself included).
fn each_record<P, T>(
    bytes: &[u8],
    plan: impl FnOnce(&Schema, NodeId) -> DResult<P>,
    read: fn(&mut Rd<'_, '_>, &P) -> DResult<T>,
    mut f: impl FnMut(T, u64) -> DResult<()>,
) -> DResult<()> {
    let Container {
        schema,
        codec,
        mut blocks,
    } = Container::parse(bytes)?;
    let record = schema
        .record_of(schema.root)
        .ok_or_else(|| DecodeError::malformed("writer schema is not a record"))?;
    let plan = plan(&schema, record).map_err(|e| e.context("writer schema"))?;
    let mut block_no = 0usize;
    let mut empty_items = MAX_EMPTY_ITEMS;
    while let Some((count, raw)) = blocks
        .next_raw_block()
        .map_err(|e| e.context(format!("block #{block_no}")))?
    {
        let data = codec
            .decompress(raw)
            .map_err(|e| e.context(format!("block #{block_no}")))?;
        if count > data.len() as u64 {
            return Err(DecodeError::malformed(format!(
                "block #{block_no} claims {count} records in {} bytes",
                data.len()
            )));
        }
        let mut rd = Rd::new(&schema, &data, empty_items);
        for i in 0..count {
            let ctx = || format!("block #{block_no} record #{i}");
            if !rd
                .enter_record(schema.root, record, "record")
                .map_err(|e| e.context(ctx()))?
            {
                return Err(DecodeError::malformed(format!("{}: record is null", ctx())));
            }
            let value = read(&mut rd, &plan).map_err(|e| e.context(ctx()))?;
            f(value, count - i)?;
        }
        if rd.c.remaining() != 0 {
            return Err(DecodeError::malformed(format!(
                "block #{block_no} has {} bytes after its {count} records",
                rd.c.remaining()
            )));
        }
        empty_items = rd.c.empty_items_left();
        block_no += 1;
    }
    Ok(())
}

/// Every record of a container file, decoded.
fn decode_file<P, T>(
    bytes: &[u8],
    plan: fn(&Schema, NodeId) -> DResult<P>,
    read: fn(&mut Rd<'_, '_>, &P) -> DResult<T>,
) -> DResult<Vec<T>> {
    let mut out = Vec::new();
    each_record(bytes, plan, read, |v, left_in_block| {
        out.reserve(left_in_block as usize);
        out.push(v);
        Ok(())
    })?;
    Ok(out)
}

pub(crate) fn avro_manifest_list(bytes: &[u8]) -> DResult<Vec<ManifestFileMeta>> {
    decode_file(bytes, plan_meta, read_meta)
}

pub(crate) fn avro_manifest(bytes: &[u8]) -> DResult<Vec<ManifestEntry>> {
    decode_file(bytes, plan_entry, read_entry)
}

/// The entries of a manifest one at a time, with only the fields that locate and identify a
/// file (see [`plan_entry_locating`]).
pub(crate) fn avro_manifest_locating(
    bytes: &[u8],
    mut f: impl FnMut(ManifestEntry) -> DResult<()>,
) -> DResult<()> {
    each_record(bytes, plan_entry_locating, read_entry, |e, _| f(e))
}

pub(crate) fn avro_index_manifest(bytes: &[u8]) -> DResult<Vec<IndexManifestEntry>> {
    decode_file(bytes, plan_index, read_index)
}
