//! Avro records → Paimon manifest types, resolved by field NAME against the writer schema.
//!
//! For each record type a plan is computed once per file: the writer's fields in order, each
//! mapped to a known Paimon field or to "skip". Record names are never looked at (Java writes
//! `record__FILE`, pypaimon `DataFileMeta`). Union-wrapped records of Paimon ≤ 0.8
//! (`["null", record]`) are entered through their union branch.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;

use super::avro::{append_program, SkipOp};
use super::avro::{
    BlockBuffer, Container, Cursor, DecodeError, DecodeResult, Node, NodeId, Schema,
    MAX_EMPTY_ITEMS,
};
use super::entry::FileLocator;
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

fn req<T>(v: Option<T>, name: &str) -> DecodeResult<T> {
    v.ok_or_else(|| null_field(name))
}

/// Reads values of one decompressed block.
struct BlockReader<'s, 'b> {
    schema: &'s Schema,
    block: &'b [u8],
    cursor: Cursor<'b>,
}

impl<'s, 'b> BlockReader<'s, 'b> {
    /// A reader of `block` allowed `empty_items` zero-byte array items (the file's budget).
    fn new(schema: &'s Schema, block: &'b [u8], empty_items: u64) -> Self {
        BlockReader {
            schema,
            block,
            cursor: Cursor::with_empty_items(block, empty_items),
        }
    }

    /// Resolves a union by reading its branch index; other nodes are returned unchanged.
    #[inline]
    fn branch(&mut self, node: NodeId) -> DecodeResult<NodeId> {
        match self.schema.node(node) {
            Node::Union(branches) => {
                let idx = self.cursor.read_long()?;
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
            self.schema.node(node).type_name()
        ))
    }

    /// Skips one value of `node`: by its compiled program (the same reads and errors as the
    /// generic walk, faster), else by the generic walk.
    fn skip(&mut self, node: NodeId) -> DecodeResult<()> {
        match self.schema.skip_program(node) {
            Some(p) => self.cursor.skip_program(p),
            None => self.cursor.skip_value(self.schema, node, 0),
        }
    }

    #[inline]
    fn opt_long(&mut self, node: NodeId, name: &str) -> DecodeResult<Option<i64>> {
        let n = self.branch(node)?;
        match self.schema.node(n) {
            Node::Null => Ok(None),
            Node::Int | Node::Long => Ok(Some(self.cursor.read_long()?)),
            _ => Err(self.mismatch(name, "int or long", n)),
        }
    }

    #[inline]
    fn opt_int(&mut self, node: NodeId, name: &str) -> DecodeResult<Option<i32>> {
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
    ) -> DecodeResult<Option<std::ops::Range<usize>>> {
        let n = self.branch(node)?;
        match self.schema.node(n) {
            Node::Null => Ok(None),
            Node::Bytes | Node::String => Ok(Some(self.cursor.read_bytes_range()?)),
            Node::Fixed(size) => {
                let start = self.cursor.position();
                self.cursor.skip(*size)?;
                Ok(Some(start..start + size))
            }
            _ => Err(self.mismatch(name, "bytes", n)),
        }
    }

    fn opt_bytes(&mut self, node: NodeId, name: &str) -> DecodeResult<Option<Bytes>> {
        Ok(self
            .opt_bytes_range(node, name)?
            .map(|r| Bytes::copy_from_slice(&self.block[r])))
    }

    fn opt_vec(&mut self, node: NodeId, name: &str) -> DecodeResult<Option<Vec<u8>>> {
        Ok(self
            .opt_bytes_range(node, name)?
            .map(|r| self.block[r].to_vec()))
    }

    fn opt_str(&mut self, node: NodeId, name: &str) -> DecodeResult<Option<&'b str>> {
        let n = self.branch(node)?;
        match self.schema.node(n) {
            Node::Null => Ok(None),
            Node::String | Node::Bytes => self
                .cursor
                .read_str()
                .map(Some)
                .map_err(|e| e.context(format!("field {name}"))),
            _ => Err(self.mismatch(name, "string", n)),
        }
    }

    fn opt_string(&mut self, node: NodeId, name: &str) -> DecodeResult<Option<String>> {
        Ok(self.opt_str(node, name)?.map(str::to_string))
    }

    /// Reads an optional array, calling `item` for each element (whose `None` results are
    /// dropped: null elements).
    fn opt_array<T>(
        &mut self,
        node: NodeId,
        name: &str,
        mut item: impl FnMut(&mut Self, NodeId) -> DecodeResult<Option<T>>,
    ) -> DecodeResult<Option<Vec<T>>> {
        let n = self.branch(node)?;
        let item_node = match self.schema.node(n) {
            Node::Null => return Ok(None),
            Node::Array(i) => *i,
            _ => return Err(self.mismatch(name, "array", n)),
        };
        let mut out = Vec::new();
        loop {
            let count = self.cursor.read_block_count()?;
            if count == 0 {
                return Ok(Some(out));
            }
            // Elements of a zero-byte type (an `array<null>`) count against the file's budget.
            let count = self
                .cursor
                .check_count(count, self.schema.can_be_empty(item_node))?;
            out.reserve(count);
            for _ in 0..count {
                if let Some(v) = item(self, item_node)? {
                    out.push(v);
                }
            }
        }
    }

    fn opt_string_array(&mut self, node: NodeId, name: &str) -> DecodeResult<Option<Vec<String>>> {
        self.opt_array(node, name, |reader, item| reader.opt_string(item, name))
    }

    /// Enters a record-valued field: `Ok(true)` when the record follows, `Ok(false)` for null.
    fn enter_record(&mut self, node: NodeId, record: NodeId, name: &str) -> DecodeResult<bool> {
        let n = self.branch(node)?;
        if n == record {
            return Ok(true);
        }
        match self.schema.node(n) {
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

    fn require(&self, required: &[(F, &str)]) -> DecodeResult<()> {
        for (f, name) in required {
            if self.node_of(*f).is_none() {
                return Err(missing(name));
            }
        }
        Ok(())
    }
}

/// The record planned for a field holding a record (possibly union-wrapped).
fn sub_record(s: &Schema, node: NodeId, name: &str) -> DecodeResult<NodeId> {
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

pub(crate) fn check_version(v: Option<i32>, expected: i32, what: &str) -> DecodeResult<()> {
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
enum StatsField {
    Min,
    Max,
    Nulls,
}

fn stats_field(n: &str) -> Option<StatsField> {
    Some(match n {
        "_MIN_VALUES" => StatsField::Min,
        "_MAX_VALUES" => StatsField::Max,
        "_NULL_COUNTS" => StatsField::Nulls,
        _ => return None,
    })
}

fn plan_stats(s: &Schema, node: NodeId, name: &str) -> DecodeResult<Plan<StatsField>> {
    Ok(Plan::new(s, sub_record(s, node, name)?, stats_field))
}

fn read_stats(
    reader: &mut BlockReader<'_, '_>,
    node: NodeId,
    plan: &Plan<StatsField>,
) -> DecodeResult<Option<SimpleStats>> {
    if !reader.enter_record(node, plan.record, "stats")? {
        return Ok(None);
    }
    let mut st = SimpleStats::default();
    for (f, n) in &plan.fields {
        match f {
            None => reader.skip(*n)?,
            Some(StatsField::Min) => {
                st.min_values = reader.opt_bytes(*n, "_MIN_VALUES")?.unwrap_or_default()
            }
            Some(StatsField::Max) => {
                st.max_values = reader.opt_bytes(*n, "_MAX_VALUES")?.unwrap_or_default()
            }
            Some(StatsField::Nulls) => {
                st.null_counts = reader.opt_array(*n, "_NULL_COUNTS", |reader, item| {
                    Ok(Some(reader.opt_long(item, "_NULL_COUNTS item")?))
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
enum MetaField {
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

fn meta_field(n: &str) -> Option<MetaField> {
    Some(match n {
        "_VERSION" => MetaField::Version,
        "_FILE_NAME" => MetaField::FileName,
        "_FILE_SIZE" => MetaField::FileSize,
        "_NUM_ADDED_FILES" => MetaField::Added,
        "_NUM_DELETED_FILES" => MetaField::Deleted,
        "_PARTITION_STATS" => MetaField::PartitionStats,
        "_SCHEMA_ID" => MetaField::SchemaId,
        "_MIN_BUCKET" => MetaField::MinBucket,
        "_MAX_BUCKET" => MetaField::MaxBucket,
        "_MIN_LEVEL" => MetaField::MinLevel,
        "_MAX_LEVEL" => MetaField::MaxLevel,
        "_MIN_ROW_ID" => MetaField::MinRowId,
        "_MAX_ROW_ID" => MetaField::MaxRowId,
        _ => return None,
    })
}

struct MetaPlan {
    top: Plan<MetaField>,
    stats: Plan<StatsField>,
}

fn plan_meta(s: &Schema, record: NodeId) -> DecodeResult<MetaPlan> {
    let top = Plan::new(s, record, meta_field);
    top.require(&[
        (MetaField::FileName, "_FILE_NAME"),
        (MetaField::FileSize, "_FILE_SIZE"),
        (MetaField::Added, "_NUM_ADDED_FILES"),
        (MetaField::Deleted, "_NUM_DELETED_FILES"),
        (MetaField::PartitionStats, "_PARTITION_STATS"),
        (MetaField::SchemaId, "_SCHEMA_ID"),
    ])?;
    let stats_node = top
        .node_of(MetaField::PartitionStats)
        .ok_or_else(|| missing("_PARTITION_STATS"))?;
    let stats = plan_stats(s, stats_node, "_PARTITION_STATS")?;
    Ok(MetaPlan { top, stats })
}

fn read_meta(reader: &mut BlockReader<'_, '_>, plan: &MetaPlan) -> DecodeResult<ManifestFileMeta> {
    let mut m = ManifestFileMeta::default();
    for (f, n) in &plan.top.fields {
        let n = *n;
        match f {
            None => reader.skip(n)?,
            Some(MetaField::Version) => {
                check_version(reader.opt_int(n, "_VERSION")?, 2, "manifest list")?
            }
            Some(MetaField::FileName) => {
                m.file_name = req(reader.opt_string(n, "_FILE_NAME")?, "_FILE_NAME")?
            }
            Some(MetaField::FileSize) => {
                m.file_size = req(reader.opt_long(n, "_FILE_SIZE")?, "_FILE_SIZE")?
            }
            Some(MetaField::Added) => {
                m.num_added_files =
                    req(reader.opt_long(n, "_NUM_ADDED_FILES")?, "_NUM_ADDED_FILES")?
            }
            Some(MetaField::Deleted) => {
                m.num_deleted_files = req(
                    reader.opt_long(n, "_NUM_DELETED_FILES")?,
                    "_NUM_DELETED_FILES",
                )?
            }
            Some(MetaField::PartitionStats) => {
                m.partition_stats = req(read_stats(reader, n, &plan.stats)?, "_PARTITION_STATS")?
            }
            Some(MetaField::SchemaId) => {
                m.schema_id = req(reader.opt_long(n, "_SCHEMA_ID")?, "_SCHEMA_ID")?
            }
            Some(MetaField::MinBucket) => m.min_bucket = reader.opt_int(n, "_MIN_BUCKET")?,
            Some(MetaField::MaxBucket) => m.max_bucket = reader.opt_int(n, "_MAX_BUCKET")?,
            Some(MetaField::MinLevel) => m.min_level = reader.opt_int(n, "_MIN_LEVEL")?,
            Some(MetaField::MaxLevel) => m.max_level = reader.opt_int(n, "_MAX_LEVEL")?,
            Some(MetaField::MinRowId) => m.min_row_id = reader.opt_long(n, "_MIN_ROW_ID")?,
            Some(MetaField::MaxRowId) => m.max_row_id = reader.opt_long(n, "_MAX_ROW_ID")?,
        }
    }
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// Manifest (entries + DataFileMeta)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum EntryField {
    Version,
    Kind,
    Partition,
    Bucket,
    TotalBuckets,
    File,
}

fn entry_field(n: &str) -> Option<EntryField> {
    Some(match n {
        "_VERSION" => EntryField::Version,
        "_KIND" => EntryField::Kind,
        "_PARTITION" => EntryField::Partition,
        "_BUCKET" => EntryField::Bucket,
        "_TOTAL_BUCKETS" => EntryField::TotalBuckets,
        "_FILE" => EntryField::File,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum FileField {
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

fn file_field(n: &str) -> Option<FileField> {
    Some(match n {
        "_FILE_NAME" => FileField::FileName,
        "_FILE_SIZE" => FileField::FileSize,
        "_ROW_COUNT" => FileField::RowCount,
        "_MIN_KEY" => FileField::MinKey,
        "_MAX_KEY" => FileField::MaxKey,
        "_KEY_STATS" => FileField::KeyStats,
        "_VALUE_STATS" => FileField::ValueStats,
        "_MIN_SEQUENCE_NUMBER" => FileField::MinSeq,
        "_MAX_SEQUENCE_NUMBER" => FileField::MaxSeq,
        "_SCHEMA_ID" => FileField::SchemaId,
        "_LEVEL" => FileField::Level,
        "_EXTRA_FILES" => FileField::ExtraFiles,
        "_CREATION_TIME" => FileField::CreationTime,
        "_DELETE_ROW_COUNT" => FileField::DeleteRowCount,
        "_EMBEDDED_FILE_INDEX" => FileField::EmbeddedIndex,
        "_FILE_SOURCE" => FileField::FileSource,
        "_VALUE_STATS_COLS" => FileField::ValueStatsCols,
        "_EXTERNAL_PATH" => FileField::ExternalPath,
        "_FIRST_ROW_ID" => FileField::FirstRowId,
        "_WRITE_COLS" => FileField::WriteCols,
        "_WRITE_COLS_SEQUENCES" => FileField::WriteColsSequences,
        _ => return None,
    })
}

struct EntryPlan {
    top: Plan<EntryField>,
    file: Plan<FileField>,
    key_stats: Option<Plan<StatsField>>,
    value_stats: Option<Plan<StatsField>>,
    /// The `_FILE` fields as [`read_file_locator`] walks them (empty but under
    /// [`plan_entry_locating`]).
    locator: Vec<LocatorStep>,
}

/// One step of [`read_file_locator`] through the `_FILE` record.
enum LocatorStep {
    /// A field read as [`read_file_meta`] reads it (`None`: skipped).
    Field(Option<FileField>, NodeId),
    /// A run of fields only checked, whose check is exactly a skip (see [`skip_checks`]), in
    /// one compiled skip program.
    Skip(Box<[SkipOp]>),
}

/// Whether checking the `_FILE` field `f` of writer node `n` as [`read_file_locator`] does
/// reads and refuses exactly what skipping it does: fields nothing needs, and numbers and
/// bytes whose every writer branch is acceptable (no null where one is required, no type
/// mismatch, no int range to check).
fn skip_checks(s: &Schema, f: Option<FileField>, n: NodeId) -> bool {
    let long = |x: NodeId| matches!(s.node(x), Node::Int | Node::Long);
    let null_or = |ok: &dyn Fn(NodeId) -> bool| match s.node(n) {
        Node::Union(b) => b.iter().all(|x| matches!(s.node(*x), Node::Null) || ok(*x)),
        _ => ok(n),
    };
    match f {
        None
        | Some(
            FileField::MinKey
            | FileField::MaxKey
            | FileField::KeyStats
            | FileField::ValueStats
            | FileField::ValueStatsCols
            | FileField::WriteCols
            | FileField::WriteColsSequences,
        ) => true,
        Some(
            FileField::FileSize
            | FileField::RowCount
            | FileField::MinSeq
            | FileField::MaxSeq
            | FileField::SchemaId,
        ) => long(n),
        Some(FileField::CreationTime | FileField::DeleteRowCount | FileField::FirstRowId) => {
            null_or(&long)
        }
        Some(FileField::EmbeddedIndex) => {
            null_or(&|x| matches!(s.node(x), Node::Bytes | Node::String | Node::Fixed(_)))
        }
        Some(
            FileField::FileName
            | FileField::Level
            | FileField::ExtraFiles
            | FileField::ExternalPath
            | FileField::FileSource,
        ) => false,
    }
}

/// Whether [`read_file_locator`] keeps the value of `_FILE` field `f` (read even where a skip
/// would check it the same way): the file's size and embedded index, which expiry's
/// candidates and protection's identifiers need.
fn locator_keeps(f: Option<FileField>) -> bool {
    matches!(f, Some(FileField::FileSize | FileField::EmbeddedIndex))
}

/// The steps of [`read_file_locator`]: consecutive fields whose check is a skip (and that
/// have a compiled program, and whose value is not kept: [`locator_keeps`]) merged into one
/// program, the others read one by one.
fn plan_locator(s: &Schema, file: &Plan<FileField>) -> Vec<LocatorStep> {
    let mut steps = Vec::new();
    let mut run: Vec<SkipOp> = Vec::new();
    for (f, n) in &file.fields {
        match s
            .skip_program(*n)
            .filter(|_| !locator_keeps(*f) && skip_checks(s, *f, *n))
        {
            Some(p) => append_program(&mut run, p),
            None => {
                if !run.is_empty() {
                    steps.push(LocatorStep::Skip(std::mem::take(&mut run).into()));
                }
                steps.push(LocatorStep::Field(*f, *n));
            }
        }
    }
    if !run.is_empty() {
        steps.push(LocatorStep::Skip(run.into()));
    }
    steps
}

fn plan_entry(s: &Schema, record: NodeId) -> DecodeResult<EntryPlan> {
    let top = Plan::new(s, record, entry_field);
    top.require(&[
        (EntryField::Kind, "_KIND"),
        (EntryField::Partition, "_PARTITION"),
        (EntryField::Bucket, "_BUCKET"),
        (EntryField::TotalBuckets, "_TOTAL_BUCKETS"),
        (EntryField::File, "_FILE"),
    ])?;
    let file_node = top
        .node_of(EntryField::File)
        .ok_or_else(|| missing("_FILE"))?;
    let file = Plan::new(s, sub_record(s, file_node, "_FILE")?, file_field);
    file.require(&[
        (FileField::FileName, "_FILE._FILE_NAME"),
        (FileField::FileSize, "_FILE._FILE_SIZE"),
        (FileField::RowCount, "_FILE._ROW_COUNT"),
        (FileField::MinSeq, "_FILE._MIN_SEQUENCE_NUMBER"),
        (FileField::MaxSeq, "_FILE._MAX_SEQUENCE_NUMBER"),
        (FileField::SchemaId, "_FILE._SCHEMA_ID"),
        (FileField::Level, "_FILE._LEVEL"),
    ])?;
    let key_stats = match file.node_of(FileField::KeyStats) {
        Some(n) => Some(plan_stats(s, n, "_KEY_STATS")?),
        None => None,
    };
    let value_stats = match file.node_of(FileField::ValueStats) {
        Some(n) => Some(plan_stats(s, n, "_VALUE_STATS")?),
        None => None,
    };
    Ok(EntryPlan {
        top,
        file,
        key_stats,
        value_stats,
        locator: Vec::new(),
    })
}

/// [`plan_entry`] that skips (still validating the bytes) the file fields nothing needs to
/// locate or identify a file: its keys, statistics and column lists. Decoded entries leave
/// them empty.
fn plan_entry_locating(s: &Schema, record: NodeId) -> DecodeResult<EntryPlan> {
    let mut plan = plan_entry(s, record)?;
    for (f, _) in plan.file.fields.iter_mut() {
        if matches!(
            f,
            Some(
                FileField::MinKey
                    | FileField::MaxKey
                    | FileField::KeyStats
                    | FileField::ValueStats
                    | FileField::ValueStatsCols
                    | FileField::WriteCols
                    | FileField::WriteColsSequences
            )
        ) {
            *f = None;
        }
    }
    plan.key_stats = None;
    plan.value_stats = None;
    plan.locator = plan_locator(s, &plan.file);
    Ok(plan)
}

fn read_file_meta(
    reader: &mut BlockReader<'_, '_>,
    plan: &EntryPlan,
) -> DecodeResult<DataFileMeta> {
    let mut d = DataFileMeta::default();
    for (f, n) in &plan.file.fields {
        let n = *n;
        match f {
            None => reader.skip(n)?,
            Some(FileField::FileName) => {
                d.file_name = req(reader.opt_string(n, "_FILE_NAME")?, "_FILE_NAME")?
            }
            Some(FileField::FileSize) => {
                d.file_size = req(reader.opt_long(n, "_FILE_SIZE")?, "_FILE_SIZE")?
            }
            Some(FileField::RowCount) => {
                d.row_count = req(reader.opt_long(n, "_ROW_COUNT")?, "_ROW_COUNT")?
            }
            Some(FileField::MinKey) => {
                d.min_key = reader.opt_bytes(n, "_MIN_KEY")?.unwrap_or_default()
            }
            Some(FileField::MaxKey) => {
                d.max_key = reader.opt_bytes(n, "_MAX_KEY")?.unwrap_or_default()
            }
            Some(FileField::KeyStats) => {
                if let Some(p) = &plan.key_stats {
                    d.key_stats = read_stats(reader, n, p)?.unwrap_or_default();
                }
            }
            Some(FileField::ValueStats) => {
                if let Some(p) = &plan.value_stats {
                    d.value_stats = read_stats(reader, n, p)?.unwrap_or_default();
                }
            }
            Some(FileField::MinSeq) => {
                d.min_sequence_number = req(
                    reader.opt_long(n, "_MIN_SEQUENCE_NUMBER")?,
                    "_MIN_SEQUENCE_NUMBER",
                )?
            }
            Some(FileField::MaxSeq) => {
                d.max_sequence_number = req(
                    reader.opt_long(n, "_MAX_SEQUENCE_NUMBER")?,
                    "_MAX_SEQUENCE_NUMBER",
                )?
            }
            Some(FileField::SchemaId) => {
                d.schema_id = req(reader.opt_long(n, "_SCHEMA_ID")?, "_SCHEMA_ID")?
            }
            Some(FileField::Level) => d.level = req(reader.opt_int(n, "_LEVEL")?, "_LEVEL")?,
            Some(FileField::ExtraFiles) => {
                d.extra_files = reader
                    .opt_string_array(n, "_EXTRA_FILES")?
                    .unwrap_or_default()
            }
            Some(FileField::CreationTime) => {
                d.creation_time = reader.opt_long(n, "_CREATION_TIME")?
            }
            Some(FileField::DeleteRowCount) => {
                d.delete_row_count = reader.opt_long(n, "_DELETE_ROW_COUNT")?
            }
            Some(FileField::EmbeddedIndex) => {
                d.embedded_index = reader.opt_vec(n, "_EMBEDDED_FILE_INDEX")?
            }
            Some(FileField::FileSource) => d.file_source = reader.opt_int(n, "_FILE_SOURCE")?,
            Some(FileField::ValueStatsCols) => {
                d.value_stats_cols = reader.opt_string_array(n, "_VALUE_STATS_COLS")?
            }
            Some(FileField::ExternalPath) => {
                d.external_path = reader.opt_string(n, "_EXTERNAL_PATH")?
            }
            Some(FileField::FirstRowId) => d.first_row_id = reader.opt_long(n, "_FIRST_ROW_ID")?,
            Some(FileField::WriteCols) => {
                d.write_cols = reader.opt_string_array(n, "_WRITE_COLS")?
            }
            Some(FileField::WriteColsSequences) => {
                d.write_cols_sequences =
                    reader.opt_array(n, "_WRITE_COLS_SEQUENCES", |reader, item| {
                        reader.opt_long(item, "_WRITE_COLS_SEQUENCES item")
                    })?
            }
        }
    }
    if d.file_name.is_empty() {
        return Err(DecodeError::malformed("_FILE_NAME is empty"));
    }
    Ok(d)
}

/// [`read_file_meta`] under a [`plan_entry_locating`] plan, borrowing from the block instead of
/// allocating: the same fields are read and checked the same way, and only what locates the
/// file is kept. It walks the plan's [`LocatorStep`]s (runs of fields whose check is a skip are
/// skipped by one compiled program), which only [`plan_entry_locating`] fills.
fn read_file_locator<'b>(
    reader: &mut BlockReader<'_, 'b>,
    plan: &EntryPlan,
) -> DecodeResult<FileParts<'b>> {
    let mut name = "";
    let mut size = None;
    let mut extras = Vec::new();
    let mut embedded = None;
    let mut external = None;
    let mut level = None;
    let block: &'b [u8] = reader.block;
    for step in &plan.locator {
        let (f, n) = match step {
            LocatorStep::Skip(p) => {
                reader.cursor.skip_program(p)?;
                continue;
            }
            LocatorStep::Field(f, n) => (*f, *n),
        };
        match f {
            Some(FileField::FileName) => {
                name = req(reader.opt_str(n, "_FILE_NAME")?, "_FILE_NAME")?
            }
            Some(FileField::FileSize) => {
                size = Some(req(reader.opt_long(n, "_FILE_SIZE")?, "_FILE_SIZE")?)
            }
            Some(FileField::RowCount) => {
                req(reader.opt_long(n, "_ROW_COUNT")?, "_ROW_COUNT")?;
            }
            Some(FileField::MinSeq) => {
                req(
                    reader.opt_long(n, "_MIN_SEQUENCE_NUMBER")?,
                    "_MIN_SEQUENCE_NUMBER",
                )?;
            }
            Some(FileField::MaxSeq) => {
                req(
                    reader.opt_long(n, "_MAX_SEQUENCE_NUMBER")?,
                    "_MAX_SEQUENCE_NUMBER",
                )?;
            }
            Some(FileField::SchemaId) => {
                req(reader.opt_long(n, "_SCHEMA_ID")?, "_SCHEMA_ID")?;
            }
            Some(FileField::Level) => level = Some(req(reader.opt_int(n, "_LEVEL")?, "_LEVEL")?),
            Some(FileField::ExtraFiles) => {
                // Null items are dropped, as by the full decode.
                extras = reader
                    .opt_array(n, "_EXTRA_FILES", |reader, item| {
                        reader.opt_str(item, "_EXTRA_FILES")
                    })?
                    .unwrap_or_default()
            }
            Some(FileField::CreationTime) => {
                reader.opt_long(n, "_CREATION_TIME")?;
            }
            Some(FileField::DeleteRowCount) => {
                reader.opt_long(n, "_DELETE_ROW_COUNT")?;
            }
            Some(FileField::EmbeddedIndex) => {
                embedded = match reader.opt_bytes_range(n, "_EMBEDDED_FILE_INDEX")? {
                    Some(r) => Some(block.get(r).ok_or_else(|| {
                        DecodeError::malformed("_EMBEDDED_FILE_INDEX lies outside its block")
                    })?),
                    None => None,
                }
            }
            Some(FileField::FileSource) => {
                reader.opt_int(n, "_FILE_SOURCE")?;
            }
            Some(FileField::ExternalPath) => external = reader.opt_str(n, "_EXTERNAL_PATH")?,
            Some(FileField::FirstRowId) => {
                reader.opt_long(n, "_FIRST_ROW_ID")?;
            }
            // Never planned by `plan_entry_locating`: skipped (and checked) like the rest.
            None
            | Some(
                FileField::MinKey
                | FileField::MaxKey
                | FileField::KeyStats
                | FileField::ValueStats
                | FileField::ValueStatsCols
                | FileField::WriteCols
                | FileField::WriteColsSequences,
            ) => reader.skip(n)?,
        }
    }
    if name.is_empty() {
        return Err(DecodeError::malformed("_FILE_NAME is empty"));
    }
    Ok(FileParts {
        name,
        // `plan_entry` requires `_FILE_SIZE` and `locator_keeps` it out of skip programs, so
        // it was read.
        size: size.unwrap_or_default(),
        extras,
        embedded,
        external,
        // `plan_entry` requires `_LEVEL`: the writer schema has it, so it was read.
        level: level.unwrap_or_default(),
    })
}

/// What [`read_file_locator`] keeps of a `_FILE` record.
struct FileParts<'b> {
    name: &'b str,
    size: i64,
    extras: Vec<&'b str>,
    embedded: Option<&'b [u8]>,
    external: Option<&'b str>,
    level: i32,
}

/// What locates the file of one manifest entry, borrowed from the decoded block: see
/// [`FileLocator`].
fn read_entry_locator<'b>(
    reader: &mut BlockReader<'_, 'b>,
    plan: &EntryPlan,
) -> DecodeResult<FileLocator<'b>> {
    let mut kind = FileKind::Add;
    let mut partition: &'b [u8] = &[];
    let mut bucket = 0;
    let mut file = None;
    for (f, n) in &plan.top.fields {
        let n = *n;
        match f {
            None => reader.skip(n)?,
            Some(EntryField::Version) => {
                check_version(reader.opt_int(n, "_VERSION")?, 2, "manifest entry")?
            }
            Some(EntryField::Kind) => kind = read_kind(reader.opt_long(n, "_KIND")?)?,
            Some(EntryField::Partition) => {
                let r = req(reader.opt_bytes_range(n, "_PARTITION")?, "_PARTITION")?;
                let block: &'b [u8] = reader.block;
                partition = block
                    .get(r)
                    .ok_or_else(|| DecodeError::malformed("_PARTITION lies outside its block"))?;
            }
            Some(EntryField::Bucket) => bucket = req(reader.opt_int(n, "_BUCKET")?, "_BUCKET")?,
            Some(EntryField::TotalBuckets) => {
                req(reader.opt_int(n, "_TOTAL_BUCKETS")?, "_TOTAL_BUCKETS")?;
            }
            Some(EntryField::File) => {
                if !reader.enter_record(n, plan.file.record, "_FILE")? {
                    return Err(null_field("_FILE"));
                }
                file = Some(read_file_locator(reader, plan)?);
            }
        }
    }
    let file = req(file, "_FILE")?;
    Ok(FileLocator {
        kind,
        partition,
        bucket,
        level: file.level,
        file_name: file.name,
        file_size: file.size,
        extra_files: file.extras,
        embedded_index: file.embedded,
        external_path: file.external,
    })
}

fn read_kind(v: Option<i64>) -> DecodeResult<FileKind> {
    let v = req(v, "_KIND")?;
    FileKind::from_value(v).ok_or_else(|| {
        DecodeError::malformed(format!("_KIND {v} is neither 0 (ADD) nor 1 (DELETE)"))
    })
}

fn read_entry(reader: &mut BlockReader<'_, '_>, plan: &EntryPlan) -> DecodeResult<ManifestEntry> {
    let mut e = ManifestEntry::default();
    let mut file = None;
    for (f, n) in &plan.top.fields {
        let n = *n;
        match f {
            None => reader.skip(n)?,
            Some(EntryField::Version) => {
                check_version(reader.opt_int(n, "_VERSION")?, 2, "manifest entry")?
            }
            Some(EntryField::Kind) => e.kind = read_kind(reader.opt_long(n, "_KIND")?)?,
            Some(EntryField::Partition) => {
                e.partition = req(reader.opt_bytes_range(n, "_PARTITION")?, "_PARTITION")
                    .map(|r| reader.block[r].to_vec())?
            }
            Some(EntryField::Bucket) => e.bucket = req(reader.opt_int(n, "_BUCKET")?, "_BUCKET")?,
            Some(EntryField::TotalBuckets) => {
                e.total_buckets = req(reader.opt_int(n, "_TOTAL_BUCKETS")?, "_TOTAL_BUCKETS")?
            }
            Some(EntryField::File) => {
                if !reader.enter_record(n, plan.file.record, "_FILE")? {
                    return Err(null_field("_FILE"));
                }
                file = Some(read_file_meta(reader, plan)?);
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
enum IndexField {
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

fn index_field(n: &str) -> Option<IndexField> {
    Some(match n {
        "_VERSION" => IndexField::Version,
        "_KIND" => IndexField::Kind,
        "_PARTITION" => IndexField::Partition,
        "_BUCKET" => IndexField::Bucket,
        "_INDEX_TYPE" => IndexField::IndexType,
        "_FILE_NAME" => IndexField::FileName,
        "_FILE_SIZE" => IndexField::FileSize,
        "_ROW_COUNT" => IndexField::RowCount,
        "_DELETIONS_VECTORS_RANGES" => IndexField::DvRanges,
        "_EXTERNAL_PATH" => IndexField::ExternalPath,
        "_GLOBAL_INDEX" => IndexField::GlobalIndex,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum DvRangeField {
    F0,
    F1,
    F2,
    Cardinality,
}

fn dv_field(n: &str) -> Option<DvRangeField> {
    Some(match n {
        "f0" => DvRangeField::F0,
        "f1" => DvRangeField::F1,
        "f2" => DvRangeField::F2,
        "_CARDINALITY" => DvRangeField::Cardinality,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum GlobalIndexField {
    Start,
    End,
    FieldId,
    ExtraIds,
    IndexMeta,
    SourceMeta,
}

fn global_index_field(n: &str) -> Option<GlobalIndexField> {
    Some(match n {
        "_ROW_RANGE_START" => GlobalIndexField::Start,
        "_ROW_RANGE_END" => GlobalIndexField::End,
        "_INDEX_FIELD_ID" => GlobalIndexField::FieldId,
        "_EXTRA_FIELD_IDS" => GlobalIndexField::ExtraIds,
        "_INDEX_META" => GlobalIndexField::IndexMeta,
        "_SOURCE_META" => GlobalIndexField::SourceMeta,
        _ => return None,
    })
}

struct IndexPlan {
    top: Plan<IndexField>,
    dv: Option<Plan<DvRangeField>>,
    global_index: Option<Plan<GlobalIndexField>>,
}

fn plan_index(s: &Schema, record: NodeId) -> DecodeResult<IndexPlan> {
    let top = Plan::new(s, record, index_field);
    top.require(&[
        (IndexField::Partition, "_PARTITION"),
        (IndexField::Bucket, "_BUCKET"),
        (IndexField::IndexType, "_INDEX_TYPE"),
        (IndexField::FileName, "_FILE_NAME"),
        (IndexField::FileSize, "_FILE_SIZE"),
        (IndexField::RowCount, "_ROW_COUNT"),
    ])?;
    let dv = match top.node_of(IndexField::DvRanges) {
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
                (DvRangeField::F0, "_DELETIONS_VECTORS_RANGES.f0"),
                (DvRangeField::F1, "f1"),
                (DvRangeField::F2, "f2"),
            ])?;
            Some(p)
        }
        None => None,
    };
    let global_index = match top.node_of(IndexField::GlobalIndex) {
        Some(n) => Some(Plan::new(
            s,
            sub_record(s, n, "_GLOBAL_INDEX")?,
            global_index_field,
        )),
        None => None,
    };
    Ok(IndexPlan {
        top,
        dv,
        global_index,
    })
}

fn read_dv(
    reader: &mut BlockReader<'_, '_>,
    node: NodeId,
    plan: &Plan<DvRangeField>,
) -> DecodeResult<Option<DeletionVectorMeta>> {
    if !reader.enter_record(node, plan.record, "_DELETIONS_VECTORS_RANGES item")? {
        return Ok(None);
    }
    let mut d = DeletionVectorMeta::default();
    for (f, n) in &plan.fields {
        let n = *n;
        match f {
            None => reader.skip(n)?,
            Some(DvRangeField::F0) => d.data_file_name = req(reader.opt_string(n, "f0")?, "f0")?,
            Some(DvRangeField::F1) => d.offset = req(reader.opt_int(n, "f1")?, "f1")?,
            Some(DvRangeField::F2) => d.length = req(reader.opt_int(n, "f2")?, "f2")?,
            Some(DvRangeField::Cardinality) => {
                d.cardinality = reader.opt_long(n, "_CARDINALITY")?
            }
        }
    }
    Ok(Some(d))
}

fn read_global_index(
    reader: &mut BlockReader<'_, '_>,
    node: NodeId,
    plan: &Plan<GlobalIndexField>,
) -> DecodeResult<Option<GlobalIndexMeta>> {
    if !reader.enter_record(node, plan.record, "_GLOBAL_INDEX")? {
        return Ok(None);
    }
    let mut meta = GlobalIndexMeta::default();
    for (f, n) in &plan.fields {
        let n = *n;
        match f {
            None => reader.skip(n)?,
            Some(GlobalIndexField::Start) => {
                meta.row_range_start =
                    req(reader.opt_long(n, "_ROW_RANGE_START")?, "_ROW_RANGE_START")?
            }
            Some(GlobalIndexField::End) => {
                meta.row_range_end = req(reader.opt_long(n, "_ROW_RANGE_END")?, "_ROW_RANGE_END")?
            }
            Some(GlobalIndexField::FieldId) => {
                meta.index_field_id = req(reader.opt_int(n, "_INDEX_FIELD_ID")?, "_INDEX_FIELD_ID")?
            }
            Some(GlobalIndexField::ExtraIds) => {
                meta.extra_field_ids = reader.opt_array(n, "_EXTRA_FIELD_IDS", |reader, item| {
                    reader.opt_int(item, "_EXTRA_FIELD_IDS item")
                })?
            }
            Some(GlobalIndexField::IndexMeta) => {
                meta.index_meta = reader.opt_vec(n, "_INDEX_META")?
            }
            Some(GlobalIndexField::SourceMeta) => {
                meta.source_meta = reader.opt_vec(n, "_SOURCE_META")?
            }
        }
    }
    Ok(Some(meta))
}

fn read_index(
    reader: &mut BlockReader<'_, '_>,
    plan: &IndexPlan,
) -> DecodeResult<IndexManifestEntry> {
    let mut e = IndexManifestEntry::default();
    for (f, n) in &plan.top.fields {
        let n = *n;
        match f {
            None => reader.skip(n)?,
            Some(IndexField::Version) => {
                check_version(reader.opt_int(n, "_VERSION")?, 1, "index manifest entry")?
            }
            Some(IndexField::Kind) => e.kind = read_kind(reader.opt_long(n, "_KIND")?)?,
            Some(IndexField::Partition) => {
                e.partition = req(reader.opt_bytes_range(n, "_PARTITION")?, "_PARTITION")
                    .map(|r| reader.block[r].to_vec())?
            }
            Some(IndexField::Bucket) => e.bucket = req(reader.opt_int(n, "_BUCKET")?, "_BUCKET")?,
            Some(IndexField::IndexType) => {
                e.index_type = req(reader.opt_string(n, "_INDEX_TYPE")?, "_INDEX_TYPE")?
            }
            Some(IndexField::FileName) => {
                e.file_name = req(reader.opt_string(n, "_FILE_NAME")?, "_FILE_NAME")?
            }
            Some(IndexField::FileSize) => {
                e.file_size = req(reader.opt_long(n, "_FILE_SIZE")?, "_FILE_SIZE")?
            }
            Some(IndexField::RowCount) => {
                e.row_count = req(reader.opt_long(n, "_ROW_COUNT")?, "_ROW_COUNT")?
            }
            Some(IndexField::DvRanges) => match &plan.dv {
                Some(p) => {
                    e.dv_ranges =
                        reader.opt_array(n, "_DELETIONS_VECTORS_RANGES", |reader, item| {
                            read_dv(reader, item, p)
                        })?
                }
                None => reader.skip(n)?,
            },
            Some(IndexField::ExternalPath) => {
                e.external_path = reader.opt_string(n, "_EXTERNAL_PATH")?
            }
            Some(IndexField::GlobalIndex) => match &plan.global_index {
                Some(p) => e.global_index = read_global_index(reader, n, p)?,
                None => reader.skip(n)?,
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

/// How to plan the records of a file (a plan is a pure function of the writer schema and its
/// record node), named by `key` for [`Planner::cached`].
#[derive(Clone, Copy)]
struct Planner<P> {
    key: &'static str,
    make: fn(&Schema, NodeId) -> DecodeResult<P>,
}

const META_PLAN: Planner<MetaPlan> = Planner {
    key: "manifest list",
    make: plan_meta,
};
const ENTRY_PLAN: Planner<EntryPlan> = Planner {
    key: "manifest",
    make: plan_entry,
};
const LOCATING_PLAN: Planner<EntryPlan> = Planner {
    key: "manifest, locating fields",
    make: plan_entry_locating,
};
const INDEX_PLAN: Planner<IndexPlan> = Planner {
    key: "index manifest",
    make: plan_index,
};

/// Plans this thread has made, by writer schema (the very [`Schema`] of
/// [`Schema::parse_cached`], held here so that its address names it) and planner key: every
/// manifest of a table usually has the same schema, and planning it again for every file cost
/// about as much as decoding a small manifest. Only plans that succeeded are kept.
type PlanCache = Vec<(Arc<Schema>, &'static str, Rc<dyn Any>)>;

thread_local! {
    static PLANS: RefCell<PlanCache> = const { RefCell::new(Vec::new()) };
}

/// At most this many plans are kept per thread (the cache is emptied when full).
const MAX_CACHED_PLANS: usize = 32;

impl<P: 'static> Planner<P> {
    /// The plan of `record` in `schema`: this thread's earlier one for the same schema, or a
    /// new one (kept). A failure gets the "writer schema" context and is not kept.
    fn cached(self, schema: &Arc<Schema>, record: NodeId) -> DecodeResult<Rc<P>> {
        let known = PLANS.with(|c| {
            c.borrow()
                .iter()
                .find(|(s, key, _)| Arc::ptr_eq(s, schema) && *key == self.key)
                .and_then(|(_, _, p)| Rc::clone(p).downcast::<P>().ok())
        });
        if let Some(p) = known {
            return Ok(p);
        }
        let plan = Rc::new((self.make)(schema, record).map_err(|e| e.context("writer schema"))?);
        PLANS.with(|c| {
            let mut cache = c.borrow_mut();
            if cache.len() >= MAX_CACHED_PLANS {
                cache.clear();
            }
            let any: Rc<dyn Any> = plan.clone();
            cache.push((Arc::clone(schema), self.key, any));
        });
        Ok(plan)
    }
}

/// Decodes the records of a container file one at a time: `f` gets each record with the number
/// of records left in its block (itself included).
fn each_record<P: 'static, T>(
    bytes: &[u8],
    plan: Planner<P>,
    read: fn(&mut BlockReader<'_, '_>, &P) -> DecodeResult<T>,
    mut f: impl FnMut(T, u64) -> DecodeResult<()>,
) -> DecodeResult<()> {
    let mut stopped = None;
    let r = each_record_in(bytes, plan, |reader, plan, left| {
        let value = read(reader, plan)?;
        f(value, left).map_err(|e| {
            // The caller's error comes back as is, without the record's context.
            stopped = Some(e);
            DecodeError::malformed("stopped")
        })
    });
    match stopped {
        Some(e) => Err(e),
        None => r,
    }
}

/// Visits the records of a container file one at a time: `visit` reads one record from the
/// block reader (and may do with it what it likes while it borrows the block), given the
/// number of records left in its block (itself included). Its errors get the record's context.
fn each_record_in<P: 'static>(
    bytes: &[u8],
    plan: Planner<P>,
    mut visit: impl FnMut(&mut BlockReader<'_, '_>, &P, u64) -> DecodeResult<()>,
) -> DecodeResult<()> {
    let Container {
        schema,
        codec,
        mut blocks,
    } = Container::parse(bytes)?;
    let record = schema
        .record_of(schema.root)
        .ok_or_else(|| DecodeError::malformed("writer schema is not a record"))?;
    let plan = plan.cached(&schema, record)?;
    let plan = &*plan;
    let mut block_no = 0usize;
    let mut empty_items = MAX_EMPTY_ITEMS;
    // One buffer for every block of the file, reused from earlier files (nothing decoded
    // borrows from it past its block: byte fields are copied out).
    let mut buffer = BlockBuffer::take();
    while let Some((count, raw)) = blocks
        .next_raw_block()
        .map_err(|e| e.context(format!("block #{block_no}")))?
    {
        codec
            .decompress_into(raw, buffer.vec())
            .map_err(|e| e.context(format!("block #{block_no}")))?;
        let data = buffer.bytes();
        if count > data.len() as u64 {
            return Err(DecodeError::malformed(format!(
                "block #{block_no} claims {count} records in {} bytes",
                data.len()
            )));
        }
        let mut reader = BlockReader::new(&schema, data, empty_items);
        for i in 0..count {
            let ctx = || format!("block #{block_no} record #{i}");
            if !reader
                .enter_record(schema.root, record, "record")
                .map_err(|e| e.context(ctx()))?
            {
                return Err(DecodeError::malformed(format!("{}: record is null", ctx())));
            }
            visit(&mut reader, plan, count - i).map_err(|e| e.context(ctx()))?;
        }
        if reader.cursor.remaining() != 0 {
            return Err(DecodeError::malformed(format!(
                "block #{block_no} has {} bytes after its {count} records",
                reader.cursor.remaining()
            )));
        }
        empty_items = reader.cursor.empty_items_left();
        block_no += 1;
    }
    Ok(())
}

/// Every record of a container file, decoded.
fn decode_file<P: 'static, T>(
    bytes: &[u8],
    plan: Planner<P>,
    read: fn(&mut BlockReader<'_, '_>, &P) -> DecodeResult<T>,
) -> DecodeResult<Vec<T>> {
    let mut out = Vec::new();
    each_record(bytes, plan, read, |v, left_in_block| {
        out.reserve(left_in_block as usize);
        out.push(v);
        Ok(())
    })?;
    Ok(out)
}

pub(crate) fn avro_manifest_list(bytes: &[u8]) -> DecodeResult<Vec<ManifestFileMeta>> {
    decode_file(bytes, META_PLAN, read_meta)
}

pub(crate) fn avro_manifest(bytes: &[u8]) -> DecodeResult<Vec<ManifestEntry>> {
    decode_file(bytes, ENTRY_PLAN, read_entry)
}

/// The entries of a manifest one at a time, with only the fields that locate and identify a
/// file (see [`plan_entry_locating`]).
pub(crate) fn avro_manifest_locating(
    bytes: &[u8],
    mut f: impl FnMut(ManifestEntry) -> DecodeResult<()>,
) -> DecodeResult<()> {
    each_record(bytes, LOCATING_PLAN, read_entry, |e, _| f(e))
}

/// What locates the file of each entry of a manifest, one at a time, borrowed from the
/// decoded block (nothing is allocated per entry but the list of extra files, when there are
/// any). The same fields are read and checked as by [`avro_manifest_locating`], so it fails
/// exactly where that does.
pub(crate) fn avro_manifest_locators(
    bytes: &[u8],
    mut f: impl FnMut(&FileLocator<'_>) -> DecodeResult<()>,
) -> DecodeResult<()> {
    let mut stopped = None;
    let r = each_record_in(bytes, LOCATING_PLAN, |reader, plan, _| {
        let locator = read_entry_locator(reader, plan)?;
        f(&locator).map_err(|e| {
            stopped = Some(e);
            DecodeError::malformed("stopped")
        })
    });
    match stopped {
        Some(e) => Err(e),
        None => r,
    }
}

pub(crate) fn avro_index_manifest(bytes: &[u8]) -> DecodeResult<Vec<IndexManifestEntry>> {
    decode_file(bytes, INDEX_PLAN, read_index)
}
