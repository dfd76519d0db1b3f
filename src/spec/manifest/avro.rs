//! Avro object container files (spec §3.1) and a schema-driven binary decoder.
//!
//! The writer schema in the file header is parsed into a small arena of [`Node`]s; record
//! decoders in `decode.rs` map writer fields to Paimon fields by NAME and skip unknown ones.
//! Every read is bounds-checked: truncated or corrupt input yields a [`DecodeError`], never a
//! panic, and element counts are validated against the bytes left before anything is allocated.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use std::cell::RefCell;

use apache_avro::{Codec, DeflateSettings};
use bytes::Bytes;
use serde_json::Value;

/// Why decoding failed. `Unsupported` is for well-formed files this library refuses.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DecodeError {
    /// The bytes are not what they claim to be.
    Malformed(String),
    /// A valid file in a format version or variant this library does not handle.
    Unsupported(String),
}

impl DecodeError {
    pub(crate) fn malformed(msg: impl Into<String>) -> Self {
        DecodeError::Malformed(msg.into())
    }

    /// Prefixes the message with some context ("record #3: ...").
    pub(crate) fn context(self, ctx: impl std::fmt::Display) -> Self {
        match self {
            DecodeError::Malformed(m) => DecodeError::Malformed(format!("{ctx}: {m}")),
            DecodeError::Unsupported(m) => DecodeError::Unsupported(format!("{ctx}: {m}")),
        }
    }
}

pub(crate) type DecodeResult<T> = std::result::Result<T, DecodeError>;

fn eof() -> DecodeError {
    DecodeError::malformed("unexpected end of data (truncated file?)")
}

/// Index of a node in [`Schema::nodes`].
pub(crate) type NodeId = usize;

/// One Avro schema node (logical types are reduced to their physical type).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Record(Vec<Field>),
    Enum,
    Array(NodeId),
    Map(NodeId),
    Union(Vec<NodeId>),
    Fixed(usize),
}

impl Node {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Boolean => "boolean",
            Node::Int => "int",
            Node::Long => "long",
            Node::Float => "float",
            Node::Double => "double",
            Node::Bytes => "bytes",
            Node::String => "string",
            Node::Record(_) => "record",
            Node::Enum => "enum",
            Node::Array(_) => "array",
            Node::Map(_) => "map",
            Node::Union(_) => "union",
            Node::Fixed(_) => "fixed",
        }
    }
}

/// A record field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub name: String,
    pub node: NodeId,
    /// The field's `default` in the schema JSON (used when writing records in this schema).
    pub default: Option<Value>,
}

/// A parsed writer schema.
#[derive(Debug, Clone)]
pub(crate) struct Schema {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    /// Whether a node's encoding can take zero bytes (null, empty records, fixed(0)).
    can_be_empty: Vec<bool>,
    /// Each node's compiled skip program, where it has one ([`super::skip`]).
    skips: Vec<Option<Box<[SkipOp]>>>,
}

const MAX_SCHEMA_DEPTH: usize = 64;
const MAX_SKIP_DEPTH: usize = 64;

struct SchemaParser {
    nodes: Vec<Node>,
    names: HashMap<String, NodeId>,
}

fn primitive(name: &str) -> Option<Node> {
    Some(match name {
        "null" => Node::Null,
        "boolean" => Node::Boolean,
        "int" => Node::Int,
        "long" => Node::Long,
        "float" => Node::Float,
        "double" => Node::Double,
        "bytes" => Node::Bytes,
        "string" => Node::String,
        _ => return None,
    })
}

impl SchemaParser {
    fn push(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    fn full_name(name: &str, ns: Option<&str>) -> String {
        match ns {
            Some(ns) if !name.contains('.') && !ns.is_empty() => format!("{ns}.{name}"),
            _ => name.to_string(),
        }
    }

    fn lookup(&self, name: &str, ns: Option<&str>) -> Option<NodeId> {
        if !name.contains('.') {
            if let Some(ns) = ns {
                if let Some(id) = self.names.get(&format!("{ns}.{name}")) {
                    return Some(*id);
                }
            }
        }
        self.names.get(name).copied()
    }

    fn register(
        &mut self,
        m: &serde_json::Map<String, Value>,
        ns: Option<&str>,
        id: NodeId,
    ) -> DecodeResult<Option<String>> {
        let name = m
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| DecodeError::malformed("named schema without a name"))?;
        let own_ns = m.get("namespace").and_then(Value::as_str).or(ns);
        let full = Self::full_name(name, own_ns);
        let new_ns = full.rfind('.').map(|p| full[..p].to_string());
        self.names.insert(full, id);
        Ok(new_ns)
    }

    fn parse(&mut self, v: &Value, ns: Option<&str>, depth: usize) -> DecodeResult<NodeId> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(DecodeError::malformed("writer schema nested too deeply"));
        }
        match v {
            Value::String(s) => {
                if let Some(p) = primitive(s) {
                    return Ok(self.push(p));
                }
                self.lookup(s, ns).ok_or_else(|| {
                    DecodeError::malformed(format!("writer schema refers to unknown type '{s}'"))
                })
            }
            Value::Array(branches) => {
                let mut ids = Vec::with_capacity(branches.len());
                for b in branches {
                    ids.push(self.parse(b, ns, depth + 1)?);
                }
                Ok(self.push(Node::Union(ids)))
            }
            Value::Object(m) => {
                let t = m
                    .get("type")
                    .ok_or_else(|| DecodeError::malformed("schema object without 'type'"))?;
                let ts = match t {
                    Value::String(ts) => ts.as_str(),
                    other => return self.parse(other, ns, depth + 1),
                };
                match ts {
                    "record" | "error" => {
                        let id = self.push(Node::Null);
                        let inner_ns = self.register(m, ns, id)?;
                        let fields_json =
                            m.get("fields").and_then(Value::as_array).ok_or_else(|| {
                                DecodeError::malformed("record schema without 'fields'")
                            })?;
                        let mut fields = Vec::with_capacity(fields_json.len());
                        for f in fields_json {
                            let name = f.get("name").and_then(Value::as_str).ok_or_else(|| {
                                DecodeError::malformed("record field without a name")
                            })?;
                            let ft = f.get("type").ok_or_else(|| {
                                DecodeError::malformed(format!(
                                    "record field {name} without a type"
                                ))
                            })?;
                            let node = self.parse(ft, inner_ns.as_deref(), depth + 1)?;
                            fields.push(Field {
                                name: name.to_string(),
                                node,
                                default: f.get("default").cloned(),
                            });
                        }
                        self.nodes[id] = Node::Record(fields);
                        Ok(id)
                    }
                    "enum" => {
                        let id = self.push(Node::Enum);
                        self.register(m, ns, id)?;
                        Ok(id)
                    }
                    "fixed" => {
                        let size = m
                            .get("size")
                            .and_then(Value::as_u64)
                            .ok_or_else(|| DecodeError::malformed("fixed schema without a size"))?;
                        let id = self.push(Node::Fixed(size as usize));
                        self.register(m, ns, id)?;
                        Ok(id)
                    }
                    "array" => {
                        let items = m.get("items").ok_or_else(|| {
                            DecodeError::malformed("array schema without 'items'")
                        })?;
                        let item = self.parse(items, ns, depth + 1)?;
                        Ok(self.push(Node::Array(item)))
                    }
                    "map" => {
                        let values = m
                            .get("values")
                            .ok_or_else(|| DecodeError::malformed("map schema without 'values'"))?;
                        let value = self.parse(values, ns, depth + 1)?;
                        Ok(self.push(Node::Map(value)))
                    }
                    other => {
                        if let Some(p) = primitive(other) {
                            return Ok(self.push(p));
                        }
                        self.lookup(other, ns).ok_or_else(|| {
                            DecodeError::malformed(format!(
                                "writer schema refers to unknown type '{other}'"
                            ))
                        })
                    }
                }
            }
            other => Err(DecodeError::malformed(format!(
                "unexpected schema JSON: {other}"
            ))),
        }
    }
}

thread_local! {
    /// Writer schemas this thread has parsed, by their JSON text: every manifest of a table
    /// usually carries the same one, and parsing it costs more than decoding a small manifest.
    /// Per thread, so it is freed with the thread and needs no lock; a
    /// short list rather than a hash map (a table has two or three schemas), which also keeps
    /// every block it holds reachable from its start for leak checkers.
    static PARSED_SCHEMAS: RefCell<Vec<(Vec<u8>, Arc<Schema>)>> = const { RefCell::new(Vec::new()) };
}

/// At most this many distinct schemas are kept per thread (the cache is emptied when full).
const MAX_CACHED_SCHEMAS: usize = 16;

impl Schema {
    /// [`Schema::parse`], memoized per thread by the exact JSON text (only schemas that parse
    /// are kept).
    pub(crate) fn parse_cached(json: &[u8]) -> DecodeResult<Arc<Schema>> {
        let known = PARSED_SCHEMAS.with(|c| {
            c.borrow()
                .iter()
                .find(|(text, _)| text.as_slice() == json)
                .map(|(_, s)| s.clone())
        });
        if let Some(s) = known {
            return Ok(s);
        }
        let parsed = Arc::new(Schema::parse(json)?);
        PARSED_SCHEMAS.with(|c| {
            let mut cache = c.borrow_mut();
            if cache.len() >= MAX_CACHED_SCHEMAS {
                cache.clear();
            }
            cache.push((json.to_vec(), parsed.clone()));
        });
        Ok(parsed)
    }

    /// Parses a writer schema (the `avro.schema` header value).
    pub(crate) fn parse(json: &[u8]) -> DecodeResult<Schema> {
        let v: Value = serde_json::from_slice(json)
            .map_err(|e| DecodeError::malformed(format!("writer schema is not valid JSON: {e}")))?;
        let mut p = SchemaParser {
            nodes: Vec::new(),
            names: HashMap::new(),
        };
        let root = p.parse(&v, None, 0)?;
        let nodes = p.nodes;
        // Fixed point: a node can be empty if null/fixed(0)/record of empty-capable fields.
        let mut can_be_empty: Vec<bool> = nodes
            .iter()
            .map(|n| matches!(n, Node::Null | Node::Fixed(0)))
            .collect();
        for _ in 0..nodes.len().min(MAX_SCHEMA_DEPTH) + 1 {
            let mut changed = false;
            for (i, n) in nodes.iter().enumerate() {
                if let Node::Record(fields) = n {
                    let empty = fields.iter().all(|f| can_be_empty[f.node]);
                    if empty && !can_be_empty[i] {
                        can_be_empty[i] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut schema = Schema {
            nodes,
            root,
            can_be_empty,
            skips: Vec::new(),
        };
        schema.skips = compile_all(&schema);
        Ok(schema)
    }

    /// The compiled skip program of node `id`, if it has one ([`super::skip`]).
    pub(crate) fn skip_program(&self, id: NodeId) -> Option<&[SkipOp]> {
        self.skips.get(id).and_then(|p| p.as_deref())
    }

    pub(crate) fn node(&self, id: NodeId) -> &Node {
        // Ids are produced by the parser and always in range.
        &self.nodes[id]
    }

    /// The record behind `id`: the node itself or the first record branch of a union.
    pub(crate) fn record_of(&self, id: NodeId) -> Option<NodeId> {
        match self.node(id) {
            Node::Record(_) => Some(id),
            Node::Union(branches) => branches
                .iter()
                .copied()
                .find(|b| matches!(self.node(*b), Node::Record(_))),
            _ => None,
        }
    }

    /// Fields of a record node (empty for anything else).
    pub(crate) fn fields(&self, id: NodeId) -> &[Field] {
        match self.node(id) {
            Node::Record(f) => f,
            _ => &[],
        }
    }

    /// Whether a value of node `id` can be encoded in zero bytes (null, fixed(0), records of
    /// such fields).
    pub(crate) fn can_be_empty(&self, id: NodeId) -> bool {
        self.can_be_empty[id]
    }
}

/// How many array items of a zero-byte type (`null`, `fixed(0)`, empty records) one file may
/// hold. Their count is not bounded by the bytes left, so without a limit per file a few bytes
/// of block headers could make a reader loop (or allocate) for ever. Paimon's schemas have no
/// such arrays at all.
pub(crate) const MAX_EMPTY_ITEMS: u64 = 1 << 20;

/// A bounds-checked reader over Avro binary data.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Zero-byte array items still allowed (see [`MAX_EMPTY_ITEMS`]).
    empty_items_left: u64,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self::with_empty_items(buf, MAX_EMPTY_ITEMS)
    }

    /// A cursor allowed `empty_items_left` zero-byte array items: the budget left by the
    /// previous block's cursor, so the limit holds for a whole file.
    pub(crate) fn with_empty_items(buf: &'a [u8], empty_items_left: u64) -> Self {
        Cursor {
            buf,
            pos: 0,
            empty_items_left,
        }
    }

    /// Zero-byte array items this cursor still allows.
    pub(crate) fn empty_items_left(&self) -> u64 {
        self.empty_items_left
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// A zigzag variable-length integer (one byte, the common case, without a loop).
    #[inline]
    pub(crate) fn read_long(&mut self) -> DecodeResult<i64> {
        if let Some(&b) = self.buf.get(self.pos) {
            if b & 0x80 == 0 {
                self.pos += 1;
                let v = b as i64;
                return Ok((v >> 1) ^ -(v & 1));
            }
        }
        self.read_long_slow()
    }

    fn read_long_slow(&mut self) -> DecodeResult<i64> {
        let mut value: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = *self.buf.get(self.pos).ok_or_else(eof)?;
            self.pos += 1;
            value |= ((b & 0x7F) as u64) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return Err(DecodeError::malformed(
                    "variable-length integer longer than 10 bytes",
                ));
            }
        }
        Ok(((value >> 1) as i64) ^ -((value & 1) as i64))
    }

    /// A non-negative length that fits in the remaining bytes.
    #[inline]
    pub(crate) fn read_len(&mut self) -> DecodeResult<usize> {
        let v = self.read_long()?;
        if v < 0 {
            return Err(DecodeError::malformed(format!("negative length {v}")));
        }
        if v as u64 > self.remaining() as u64 {
            return Err(eof());
        }
        Ok(v as usize)
    }

    #[inline]
    pub(crate) fn skip(&mut self, n: usize) -> DecodeResult<()> {
        if n > self.remaining() {
            return Err(eof());
        }
        self.pos += n;
        Ok(())
    }

    pub(crate) fn take(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(eof());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Length-prefixed bytes, returned as a range into the underlying buffer.
    pub(crate) fn read_bytes_range(&mut self) -> DecodeResult<Range<usize>> {
        let n = self.read_len()?;
        let start = self.pos;
        self.pos += n;
        Ok(start..start + n)
    }

    pub(crate) fn read_bytes(&mut self) -> DecodeResult<&'a [u8]> {
        let n = self.read_len()?;
        self.take(n)
    }

    pub(crate) fn read_str(&mut self) -> DecodeResult<&'a str> {
        let b = self.read_bytes()?;
        std::str::from_utf8(b).map_err(|_| DecodeError::malformed("string is not valid UTF-8"))
    }

    /// Reads an array/map block header; returns the item count (0 = end). A negative count is
    /// followed by the block's byte size, which is read and ignored.
    pub(crate) fn read_block_count(&mut self) -> DecodeResult<u64> {
        let count = self.read_long()?;
        if count < 0 {
            let _size = self.read_long()?;
            return Ok(count.unsigned_abs());
        }
        Ok(count as u64)
    }

    /// Checks a block item count against the bytes left when items take at least one byte, and
    /// against the file's budget of zero-byte items (which it consumes) when they can be empty.
    pub(crate) fn check_count(
        &mut self,
        count: u64,
        item_can_be_empty: bool,
    ) -> DecodeResult<usize> {
        if item_can_be_empty {
            if count > self.empty_items_left {
                return Err(DecodeError::malformed(format!(
                    "block claims {count} items of a type that takes no bytes; \
                     more than {MAX_EMPTY_ITEMS} such items in one file are refused"
                )));
            }
            self.empty_items_left -= count;
        } else if count > self.remaining() as u64 {
            return Err(DecodeError::malformed(format!(
                "block claims {count} items but only {} bytes remain",
                self.remaining()
            )));
        }
        Ok(count as usize)
    }

    /// Skips one value of schema node `id`.
    pub(crate) fn skip_value(
        &mut self,
        schema: &Schema,
        id: NodeId,
        depth: usize,
    ) -> DecodeResult<()> {
        if depth > MAX_SKIP_DEPTH {
            return Err(DecodeError::malformed("value nested too deeply"));
        }
        match schema.node(id) {
            Node::Null => Ok(()),
            Node::Boolean => self.skip(1),
            Node::Int | Node::Long | Node::Enum => self.read_long().map(|_| ()),
            Node::Float => self.skip(4),
            Node::Double => self.skip(8),
            Node::Bytes | Node::String => {
                let n = self.read_len()?;
                self.skip(n)
            }
            Node::Fixed(n) => self.skip(*n),
            Node::Record(fields) => {
                for f in fields {
                    self.skip_value(schema, f.node, depth + 1)?;
                }
                Ok(())
            }
            Node::Union(branches) => {
                let idx = self.read_long()?;
                let b = usize::try_from(idx)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .copied()
                    .ok_or_else(|| {
                        DecodeError::malformed(format!("union branch {idx} out of range"))
                    })?;
                self.skip_value(schema, b, depth + 1)
            }
            Node::Array(item) | Node::Map(item) => {
                let is_map = matches!(schema.node(id), Node::Map(_));
                let empty = !is_map && schema.can_be_empty[*item];
                self.skip_blocks_by(is_map, empty, |c| c.skip_value(schema, *item, depth + 1))
            }
        }
    }

    /// Skips the blocks of an array or a map (`is_map`: each item is a string key, then the
    /// value), each item by `item`; `empty_items`: an item can take no bytes (its count is then
    /// checked against the file's budget). A block whose writer gave its byte size is skipped
    /// whole.
    pub(crate) fn skip_blocks_by(
        &mut self,
        is_map: bool,
        empty_items: bool,
        mut item: impl FnMut(&mut Self) -> DecodeResult<()>,
    ) -> DecodeResult<()> {
        loop {
            let raw = self.read_long()?;
            if raw == 0 {
                return Ok(());
            }
            if raw < 0 {
                let size = self.read_long()?;
                if size >= 0 {
                    self.skip(size as usize)?;
                    continue;
                }
                return Err(DecodeError::malformed(format!(
                    "negative block size {size}"
                )));
            }
            let n = self.check_count(raw as u64, empty_items)?;
            for _ in 0..n {
                if is_map {
                    let k = self.read_len()?;
                    self.skip(k)?;
                }
                item(self)?;
            }
        }
    }
}

/// The compression codec of a container file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockCodec {
    Null,
    Deflate,
    Snappy,
    Zstandard,
}

impl BlockCodec {
    fn from_name(name: &str) -> DecodeResult<Self> {
        Ok(match name {
            "" | "null" => BlockCodec::Null,
            "deflate" => BlockCodec::Deflate,
            "snappy" => BlockCodec::Snappy,
            "zstandard" | "zstd" => BlockCodec::Zstandard,
            other => {
                return Err(DecodeError::malformed(format!(
                    "unsupported Avro codec '{other}' (supported: null, deflate, snappy, zstandard)"
                )))
            }
        })
    }

    /// Decompresses one block into an owned buffer.
    pub(crate) fn decompress(self, data: &[u8]) -> DecodeResult<Bytes> {
        let mut out = Vec::new();
        self.decompress_into(data, &mut out)?;
        Ok(Bytes::from(out))
    }

    /// Decompresses one block into `out`, replacing its content (its allocation is reused
    /// when large enough: see [`BlockBuffer`]).
    pub(crate) fn decompress_into(self, data: &[u8], out: &mut Vec<u8>) -> DecodeResult<()> {
        let codec = match self {
            BlockCodec::Null => {
                out.clear();
                out.extend_from_slice(data);
                return Ok(());
            }
            BlockCodec::Deflate => Codec::Deflate(DeflateSettings::default()),
            BlockCodec::Zstandard => return zstd_decompress(data, out),
            BlockCodec::Snappy => {
                if data.len() < 4 {
                    return Err(DecodeError::malformed("snappy block shorter than its CRC"));
                }
                // The raw snappy stream starts with the uncompressed length as a uvarint; refuse
                // lengths no real snappy stream of this size can produce (at most ~21x).
                let claimed = snappy_uncompressed_len(&data[..data.len() - 4])?;
                if claimed > 24 * data.len() as u64 + 64 {
                    return Err(DecodeError::malformed(format!(
                        "snappy block of {} bytes claims {claimed} uncompressed bytes",
                        data.len()
                    )));
                }
                Codec::Snappy
            }
        };
        let mut buf = data.to_vec();
        codec.decompress(&mut buf).map_err(|e| {
            DecodeError::malformed(format!("{self:?} block does not decompress: {e}"))
        })?;
        *out = buf;
        Ok(())
    }
}

/// Largest decompressed block accepted (real manifest blocks are ~64 KiB).
const MAX_BLOCK_BYTES: usize = 256 << 20;

/// First capacity tried for a zstd block: four times its compressed size, at least this (Java
/// and this library write blocks of about 64,000 bytes plus one record).
const MIN_BLOCK_CAPACITY: usize = 128 << 10;

/// Idle zstd decompression contexts, shared by every thread. A context costs about
/// 100 KiB and creating one more than decompressing a typical 64 KiB manifest block, so a few
/// are kept; one per thread (16 and more blocking threads) cost about 1.5 MiB, and their
/// streaming window buffers as much again. Blocks are decompressed in one shot (the whole
/// compressed block is in memory), which needs no window buffer.
static ZSTD_CONTEXTS: Mutex<Vec<zstd::zstd_safe::DCtx<'static>>> = Mutex::new(Vec::new());

/// At most this many idle contexts are kept.
const MAX_IDLE_CONTEXTS: usize = 4;

fn zstd_err(code: usize) -> DecodeError {
    DecodeError::malformed(format!(
        "zstandard block does not decompress: {}",
        zstd::zstd_safe::get_error_name(code)
    ))
}

/// Whether a zstd error code says that the output buffer is too small.
fn zstd_needs_room(code: usize) -> bool {
    zstd::zstd_safe::get_error_name(code) == "Destination buffer is too small"
}

/// Runs `f` with an idle shared context (or a new one), kept afterwards if few are idle.
fn with_zstd_context<T>(
    f: impl FnOnce(&mut zstd::zstd_safe::DCtx<'static>) -> DecodeResult<T>,
) -> DecodeResult<T> {
    let idle = ZSTD_CONTEXTS.lock().ok().and_then(|mut idle| idle.pop());
    let mut dctx = match idle {
        Some(d) => d,
        None => zstd::zstd_safe::DCtx::try_create()
            .ok_or_else(|| DecodeError::malformed("cannot allocate a zstd context"))?,
    };
    let result = f(&mut dctx);
    if let Ok(mut idle) = ZSTD_CONTEXTS.lock() {
        if idle.len() < MAX_IDLE_CONTEXTS {
            idle.push(dctx);
        }
    }
    result
}

/// One-shot zstd decompression of one Avro block (one or more frames, content size usually
/// unknown) into `out`: tried at `out`'s capacity (at least four times the compressed size),
/// doubled while zstd reports the output does not fit, up to [`MAX_BLOCK_BYTES`].
fn zstd_decompress(data: &[u8], out: &mut Vec<u8>) -> DecodeResult<()> {
    if data.is_empty() {
        return Err(DecodeError::malformed(
            "zstandard block is empty (truncated file?)",
        ));
    }
    out.clear();
    let first = data
        .len()
        .saturating_mul(4)
        .clamp(MIN_BLOCK_CAPACITY, MAX_BLOCK_BYTES);
    if out.capacity() < first {
        out.reserve_exact(first);
    }
    with_zstd_context(|dctx| loop {
        match dctx.decompress(&mut *out, data) {
            Ok(_) => return Ok(()),
            Err(code) if zstd_needs_room(code) => {
                let capacity = out.capacity();
                if capacity >= MAX_BLOCK_BYTES {
                    return Err(DecodeError::malformed(format!(
                        "zstandard block decompresses to more than {MAX_BLOCK_BYTES} bytes"
                    )));
                }
                out.clear();
                out.reserve_exact(capacity.saturating_mul(2).min(MAX_BLOCK_BYTES));
            }
            Err(code) => return Err(zstd_err(code)),
        }
    })
}

/// Idle decompressed-block buffers, shared by every thread: decoding a manifest
/// reuses one instead of allocating (and growing) a fresh buffer per block, which on many
/// blocking threads left each thread's allocator arena fragmented by block-sized holes.
static BLOCK_BUFFERS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// At most this many idle buffers are kept (as many as blocking sections run at once on a
/// small machine: fewer, and buffers were freed and allocated again all the time) ...
const MAX_IDLE_BUFFERS: usize = 16;

/// ... each of at most this capacity (a larger one is freed).
const MAX_KEPT_BUFFER: usize = 1 << 20;

/// A buffer for decompressed blocks, taken from the shared idle ones (or new) and given back
/// when dropped.
#[derive(Debug, Default)]
pub(crate) struct BlockBuffer(Vec<u8>);

impl BlockBuffer {
    /// An idle buffer (emptied), or a new empty one.
    pub(crate) fn take() -> BlockBuffer {
        let idle = BLOCK_BUFFERS.lock().ok().and_then(|mut idle| idle.pop());
        BlockBuffer(idle.unwrap_or_default())
    }

    /// The buffer.
    pub(crate) fn vec(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }

    /// Its content.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for BlockBuffer {
    fn drop(&mut self) {
        let mut buf = std::mem::take(&mut self.0);
        if buf.capacity() == 0 || buf.capacity() > MAX_KEPT_BUFFER {
            return;
        }
        buf.clear();
        if let Ok(mut idle) = BLOCK_BUFFERS.lock() {
            if idle.len() < MAX_IDLE_BUFFERS {
                idle.push(buf);
            }
        }
    }
}

fn snappy_uncompressed_len(data: &[u8]) -> DecodeResult<u64> {
    let mut v: u64 = 0;
    for (i, b) in data.iter().take(5).enumerate() {
        v |= ((b & 0x7F) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DecodeError::malformed(
        "snappy block has an invalid length header",
    ))
}

/// Magic bytes of an Avro object container file.
pub(crate) const AVRO_MAGIC: &[u8; 4] = b"Obj\x01";

/// A parsed container: writer schema, codec and the undecoded blocks.
#[derive(Debug)]
pub(crate) struct Container<'a> {
    pub schema: Arc<Schema>,
    pub codec: BlockCodec,
    pub blocks: BlockReader<'a>,
}

/// Iterates over the raw data blocks of a container file.
#[derive(Debug)]
pub(crate) struct BlockReader<'a> {
    sync: [u8; 16],
    body: Cursor<'a>,
}

impl<'a> Container<'a> {
    /// Parses the header of an object container file.
    pub(crate) fn parse(bytes: &'a [u8]) -> DecodeResult<Self> {
        let mut c = Cursor::new(bytes);
        if c.take(4)
            .map_err(|_| DecodeError::malformed("file shorter than the Avro magic"))?
            != AVRO_MAGIC
        {
            return Err(DecodeError::malformed("not an Avro object container file"));
        }
        let mut schema_json: Option<&[u8]> = None;
        let mut codec_name: Option<&str> = None;
        loop {
            let n = c.read_block_count().map_err(|e| e.context("header"))?;
            if n == 0 {
                break;
            }
            let n = c.check_count(n, false).map_err(|e| e.context("header"))?;
            for _ in 0..n {
                let key = c.read_str().map_err(|e| e.context("header key"))?;
                let value = c.read_bytes().map_err(|e| e.context("header value"))?;
                match key {
                    "avro.schema" => schema_json = Some(value),
                    "avro.codec" => {
                        codec_name = Some(std::str::from_utf8(value).map_err(|_| {
                            DecodeError::malformed("avro.codec header is not UTF-8")
                        })?)
                    }
                    _ => {}
                }
            }
        }
        let mut sync = [0u8; 16];
        sync.copy_from_slice(c.take(16).map_err(|e| e.context("header sync marker"))?);
        let schema_json =
            schema_json.ok_or_else(|| DecodeError::malformed("header has no avro.schema"))?;
        let schema = Schema::parse_cached(schema_json)?;
        let codec = BlockCodec::from_name(codec_name.unwrap_or("null"))?;
        Ok(Container {
            schema,
            codec,
            blocks: BlockReader { sync, body: c },
        })
    }
}

impl<'a> BlockReader<'a> {
    /// The next raw block `(object count, compressed data)`, or `None` at the end of the file.
    pub(crate) fn next_raw_block(&mut self) -> DecodeResult<Option<(u64, &'a [u8])>> {
        if self.body.remaining() == 0 {
            return Ok(None);
        }
        let count = self.body.read_long()?;
        let size = self.body.read_long()?;
        if count < 0 || size < 0 {
            return Err(DecodeError::malformed(format!(
                "invalid block header (count {count}, size {size})"
            )));
        }
        if size as u64 > self.body.remaining() as u64 {
            return Err(DecodeError::malformed(format!(
                "block of {size} bytes but only {} bytes remain (truncated file?)",
                self.body.remaining()
            )));
        }
        let data = self.body.take(size as usize)?;
        let sync = self.body.take(16).map_err(|_| {
            DecodeError::malformed("block not followed by a sync marker (truncated file?)")
        })?;
        if sync != self.sync {
            return Err(DecodeError::malformed(
                "block sync marker does not match the header",
            ));
        }
        Ok(Some((count as u64, data)))
    }
}

// ---- skip programs, compiled once per parsed schema (run by `super::skip`) ----------------

/// One step of a skip program.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SkipOp {
    /// This many variable-length integers (`int`, `long`, `enum`) in a row.
    Varints(u32),
    /// This many length-prefixed byte strings (`bytes`, `string`) in a row.
    Bytes(u32),
    /// This many bytes (`boolean`, `float`, `double`, `fixed`).
    Fixed(usize),
    /// A union: the branch index, then that branch's program.
    Union(Box<[Box<[SkipOp]>]>),
    /// An array: blocks of items, each item by the program; `empty` if an item can take no
    /// bytes (its count is then charged to the file's budget of such items).
    Array { item: Box<[SkipOp]>, empty: bool },
    /// A map: blocks of (string key, value by the program).
    Map(Box<[SkipOp]>),
}

/// Nesting (unions, arrays, maps and records) a program may have: well below the depth at
/// which [`Cursor::skip_value`] refuses a value, so the two never disagree.
const MAX_NESTING: usize = 24;

/// Steps, nested ones included, a node's program may have.
const MAX_STEPS: usize = 4096;

/// The program of every node of `schema` (by node id), `None` where there is none.
pub(crate) fn compile_all(schema: &Schema) -> Vec<Option<Box<[SkipOp]>>> {
    (0..schema.nodes.len())
        .map(|id| {
            let mut ops = Vec::new();
            let mut steps = 0;
            compile(schema, id, 0, &mut steps, &mut ops).then(|| ops.into_boxed_slice())
        })
        .collect()
}

/// Appends `op` to `out`, as part of the last step when both are integers or byte strings.
fn push(out: &mut Vec<SkipOp>, op: SkipOp) {
    match (out.last_mut(), &op) {
        (Some(SkipOp::Varints(n)), SkipOp::Varints(m)) if n.checked_add(*m).is_some() => *n += m,
        (Some(SkipOp::Bytes(n)), SkipOp::Bytes(m)) if n.checked_add(*m).is_some() => *n += m,
        _ => out.push(op),
    }
}

/// Appends the program `ops` to `out` (so that the two run one after the other).
pub(crate) fn append_program(out: &mut Vec<SkipOp>, ops: &[SkipOp]) {
    let mut ops = ops.iter();
    if let Some(first) = ops.next() {
        push(out, first.clone());
    }
    out.extend(ops.cloned());
}

/// Appends the steps of node `id` to `out`; false if the program would nest or grow too much.
fn compile(
    schema: &Schema,
    id: NodeId,
    depth: usize,
    steps: &mut usize,
    out: &mut Vec<SkipOp>,
) -> bool {
    if depth > MAX_NESTING || *steps > MAX_STEPS {
        return false;
    }
    *steps += 1;
    let sub = |node: NodeId, steps: &mut usize| -> Option<Box<[SkipOp]>> {
        let mut ops = Vec::new();
        compile(schema, node, depth + 1, steps, &mut ops).then(|| ops.into_boxed_slice())
    };
    match schema.node(id) {
        Node::Null => {}
        Node::Boolean => out.push(SkipOp::Fixed(1)),
        Node::Int | Node::Long | Node::Enum => push(out, SkipOp::Varints(1)),
        Node::Float => out.push(SkipOp::Fixed(4)),
        Node::Double => out.push(SkipOp::Fixed(8)),
        Node::Bytes | Node::String => push(out, SkipOp::Bytes(1)),
        Node::Fixed(n) => out.push(SkipOp::Fixed(*n)),
        Node::Record(fields) => {
            for f in fields {
                if !compile(schema, f.node, depth + 1, steps, out) {
                    return false;
                }
            }
        }
        Node::Union(branches) => {
            let mut progs = Vec::with_capacity(branches.len());
            for b in branches {
                let Some(p) = sub(*b, steps) else {
                    return false;
                };
                progs.push(p);
            }
            out.push(SkipOp::Union(progs.into_boxed_slice()));
        }
        Node::Array(item) => {
            let Some(p) = sub(*item, steps) else {
                return false;
            };
            out.push(SkipOp::Array {
                item: p,
                empty: schema.can_be_empty(*item),
            });
        }
        Node::Map(value) => {
            let Some(p) = sub(*value, steps) else {
                return false;
            };
            out.push(SkipOp::Map(p));
        }
    }
    *steps <= MAX_STEPS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zigzag(v: i64) -> Vec<u8> {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            let b = (n & 0x7F) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    #[test]
    fn varints() {
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            300,
            -300,
            i32::MAX as i64,
            i64::MAX,
            i64::MIN,
        ] {
            let b = zigzag(v);
            let mut c = Cursor::new(&b);
            assert_eq!(c.read_long().unwrap(), v);
            assert_eq!(c.remaining(), 0);
        }
        let mut c = Cursor::new(&[0x80, 0x80]);
        assert!(c.read_long().is_err());
        let mut c = Cursor::new(&[0xFF; 11]);
        assert!(c.read_long().is_err());
    }

    #[test]
    fn schema_with_named_references_and_unions() {
        let json = br#"["null", {"type":"record","name":"record","namespace":"org.x","fields":[
            {"name":"a","type":{"type":"record","name":"inner","fields":[{"name":"x","type":"int"}]}},
            {"name":"b","type":["null","inner"]},
            {"name":"c","type":{"type":"long","logicalType":"timestamp-millis"}},
            {"name":"d","type":{"type":"map","values":"string"}},
            {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
            {"name":"f","type":{"type":"fixed","name":"F","size":2}},
            {"name":"g","type":"org.x.inner"}
        ]}]"#;
        let s = Schema::parse(json).unwrap();
        let rec = s.record_of(s.root).unwrap();
        let fields = s.fields(rec);
        assert_eq!(fields.len(), 7);
        assert_eq!(s.node(fields[2].node), &Node::Long);
        let inner = s.record_of(fields[1].node).unwrap();
        assert_eq!(inner, fields[0].node);
        assert_eq!(fields[6].node, inner);
        assert!(Schema::parse(
            br#"{"type":"record","name":"r","fields":[{"name":"a","type":"nope"}]}"#
        )
        .is_err());
        assert!(Schema::parse(b"{").is_err());
    }

    #[test]
    fn skip_values() {
        let json = br#"{"type":"record","name":"r","fields":[
            {"name":"m","type":{"type":"map","values":"long"}},
            {"name":"a","type":{"type":"array","items":["null","string"]}},
            {"name":"u","type":["null","double"]},
            {"name":"f","type":"float"},
            {"name":"b","type":"boolean"}
        ]}"#;
        let s = Schema::parse(json).unwrap();
        let mut data = Vec::new();
        data.extend(zigzag(1));
        data.extend(zigzag(1));
        data.push(b'k');
        data.extend(zigzag(7));
        data.extend(zigzag(0));
        // array with a negative-count block (count -2, byte size 4)
        data.extend(zigzag(-2));
        data.extend(zigzag(4));
        data.extend([0x00, 0x02, 0x02, b'z']);
        data.extend(zigzag(0));
        data.extend(zigzag(1));
        data.extend(1.5f64.to_le_bytes());
        data.extend(2.5f32.to_le_bytes());
        data.push(1);
        let mut c = Cursor::new(&data);
        c.skip_value(&s, s.root, 0).unwrap();
        assert_eq!(c.remaining(), 0);
        for cut in 0..data.len() {
            let mut c = Cursor::new(&data[..cut]);
            assert!(c.skip_value(&s, s.root, 0).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn huge_counts_are_refused() {
        let s = Schema::parse(br#"{"type":"array","items":"null"}"#).unwrap();
        let data = zigzag(1 << 40);
        assert!(Cursor::new(&data).skip_value(&s, s.root, 0).is_err());
        let s = Schema::parse(br#"{"type":"array","items":"long"}"#).unwrap();
        let data = zigzag(1000);
        assert!(Cursor::new(&data).skip_value(&s, s.root, 0).is_err());
    }

    /// Fuzzing regression: array blocks of zero-byte items (`array<null>`) are bounded by a
    /// budget for the whole cursor, not per block, so a few bytes of block headers cannot make
    /// the skipper loop 2^24 times per header.
    #[test]
    fn zero_byte_items_are_bounded_across_blocks() {
        let s = Schema::parse(br#"{"type":"array","items":"null"}"#).unwrap();
        let Node::Array(item) = s.node(s.root) else {
            panic!("not an array")
        };
        assert!(s.can_be_empty(*item) && !s.can_be_empty(s.root));
        // 1000 headers of 2^24 items each: 2^34 iterations before the fix.
        let mut data = Vec::new();
        for _ in 0..1000 {
            data.extend(zigzag(1 << 24));
        }
        data.extend(zigzag(0));
        let err = Cursor::new(&data).skip_value(&s, s.root, 0).unwrap_err();
        assert!(format!("{err:?}").contains("takes no bytes"), "{err:?}");
        // Up to the budget is fine, across blocks and across cursors sharing the budget.
        let half = MAX_EMPTY_ITEMS as i64 / 2;
        let mut data = Vec::new();
        data.extend(zigzag(half));
        data.extend(zigzag(half));
        data.extend(zigzag(0));
        let mut c = Cursor::new(&data);
        c.skip_value(&s, s.root, 0).unwrap();
        assert_eq!(c.empty_items_left(), 0);
        let one = [zigzag(1), zigzag(0)].concat();
        assert!(Cursor::with_empty_items(&one, 0)
            .skip_value(&s, s.root, 0)
            .is_err());
        Cursor::with_empty_items(&one, 1)
            .skip_value(&s, s.root, 0)
            .unwrap();
    }

    #[test]
    fn recursive_schema_does_not_overflow_the_stack() {
        let s =
            Schema::parse(br#"{"type":"record","name":"r","fields":[{"name":"a","type":"r"}]}"#)
                .unwrap();
        assert!(Cursor::new(&[]).skip_value(&s, s.root, 0).is_err());
    }

    #[test]
    fn zstd_blocks_of_any_size_and_several_frames_decompress() {
        // Far past the first capacity tried: the output buffer is grown and the block
        // decompressed again.
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let one = zstd::stream::encode_all(&big[..], 1).unwrap();
        let mut out = vec![7u8; 10];
        BlockCodec::Zstandard
            .decompress_into(&one, &mut out)
            .unwrap();
        assert_eq!(out, big);
        // Two frames in one block, into a buffer that held a larger block before.
        let small = b"manifest entry ".repeat(1000);
        let mut two = zstd::stream::encode_all(&small[..], 3).unwrap();
        two.extend(zstd::stream::encode_all(&small[..], 3).unwrap());
        BlockCodec::Zstandard
            .decompress_into(&two, &mut out)
            .unwrap();
        assert_eq!(out, [small.clone(), small].concat());
        // Truncated, empty or garbage blocks fail.
        assert!(BlockCodec::Zstandard
            .decompress_into(&one[..one.len() - 3], &mut out)
            .is_err());
        assert!(BlockCodec::Zstandard.decompress(&[]).is_err());
        let e = BlockCodec::Zstandard.decompress(b"garbage").unwrap_err();
        assert!(format!("{e:?}").contains("does not decompress"), "{e:?}");
    }

    #[test]
    fn block_buffers_are_reused_and_start_empty() {
        let mut b = BlockBuffer::take();
        assert!(b.bytes().is_empty());
        b.vec().extend_from_slice(b"abc");
        assert_eq!(b.bytes(), b"abc");
        drop(b);
        let mut again = BlockBuffer::take();
        assert!(again.bytes().is_empty());
        BlockCodec::Null
            .decompress_into(b"xy", again.vec())
            .unwrap();
        assert_eq!(again.bytes(), b"xy");
    }

    #[test]
    fn codecs() {
        assert!(BlockCodec::from_name("bzip2").is_err());
        assert_eq!(BlockCodec::from_name("null").unwrap(), BlockCodec::Null);
        assert!(BlockCodec::Snappy.decompress(&[1, 2]).is_err());
        assert!(BlockCodec::Snappy
            .decompress(&[0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0])
            .is_err());
        assert!(BlockCodec::Zstandard.decompress(b"garbage").is_err());
        assert!(BlockCodec::Deflate.decompress(&[0xff, 0xff]).is_err());
    }
}
