//! Generic Avro values: decode every record of a container file by its writer schema, and encode
//! values into any schema by field NAME (spec §3.2, §3.8).
//!
//! Encoding resolves record fields by name: a field the value lacks takes the schema's
//! `default`, or null when the field is a union with a null branch; a value field the schema
//! lacks is dropped if it is null, otherwise the record is refused as [`EncodeError::Lossy`]
//! (unless the caller allows dropping). Unions take the null branch for null and otherwise the
//! first branch of the value's kind. Record names are never compared.

use super::avro::{
    Container, Cursor, DecodeError, DecodeResult, Node, NodeId, Schema, MAX_EMPTY_ITEMS,
};

/// One Avro datum of any type.
#[derive(Debug, Clone, PartialEq)]
pub enum AvroValue {
    /// `null`.
    Null,
    /// `boolean`.
    Boolean(bool),
    /// `int`.
    Int(i32),
    /// `long` (also `timestamp-millis`).
    Long(i64),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `bytes`.
    Bytes(Vec<u8>),
    /// `string`.
    String(String),
    /// `array`.
    Array(Vec<AvroValue>),
    /// `map`, in encoded order.
    Map(Vec<(String, AvroValue)>),
    /// `record`: fields by name, in the order of the schema it was read with.
    Record(Vec<(String, AvroValue)>),
    /// `enum`, by symbol index.
    Enum(i32),
    /// `fixed`.
    Fixed(Vec<u8>),
}

impl AvroValue {
    /// The value of record field `name` (`None` for a missing field or a non-record).
    pub fn field(&self, name: &str) -> Option<&AvroValue> {
        match self {
            AvroValue::Record(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// True for [`AvroValue::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, AvroValue::Null)
    }

    fn kind(&self) -> &'static str {
        match self {
            AvroValue::Null => "null",
            AvroValue::Boolean(_) => "boolean",
            AvroValue::Int(_) => "int",
            AvroValue::Long(_) => "long",
            AvroValue::Float(_) => "float",
            AvroValue::Double(_) => "double",
            AvroValue::Bytes(_) => "bytes",
            AvroValue::String(_) => "string",
            AvroValue::Array(_) => "array",
            AvroValue::Map(_) => "map",
            AvroValue::Record(_) => "record",
            AvroValue::Enum(_) => "enum",
            AvroValue::Fixed(_) => "fixed",
        }
    }
}

/// Why a value could not be encoded into a schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EncodeError {
    /// A non-null value has no field of that name in the schema.
    Lossy(String),
    /// The value does not fit the schema (type mismatch, missing required field, ...).
    Mismatch(String),
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::Lossy(m) => write!(f, "would drop a non-null field: {m}"),
            EncodeError::Mismatch(m) => write!(f, "{m}"),
        }
    }
}

type EResult<T> = std::result::Result<T, EncodeError>;

const MAX_DEPTH: usize = 64;

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

fn read_value(
    c: &mut Cursor<'_>,
    s: &Schema,
    node: NodeId,
    depth: usize,
) -> DecodeResult<AvroValue> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::malformed("value nested too deeply"));
    }
    Ok(match s.node(node) {
        Node::Null => AvroValue::Null,
        Node::Boolean => AvroValue::Boolean(c.take(1)?[0] != 0),
        Node::Int => {
            let v = c.read_long()?;
            AvroValue::Int(
                i32::try_from(v)
                    .map_err(|_| DecodeError::malformed(format!("int value {v} out of range")))?,
            )
        }
        Node::Long => AvroValue::Long(c.read_long()?),
        Node::Float => {
            let b = c.take(4)?;
            AvroValue::Float(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        Node::Double => {
            let b = c.take(8)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            AvroValue::Double(f64::from_le_bytes(a))
        }
        Node::Bytes => AvroValue::Bytes(c.read_bytes()?.to_vec()),
        Node::String => AvroValue::String(c.read_str()?.to_string()),
        Node::Fixed(n) => AvroValue::Fixed(c.take(*n)?.to_vec()),
        Node::Enum => {
            let v = c.read_long()?;
            AvroValue::Enum(
                i32::try_from(v)
                    .map_err(|_| DecodeError::malformed(format!("enum index {v} out of range")))?,
            )
        }
        Node::Record(fields) => {
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let v = read_value(c, s, f.node, depth + 1)
                    .map_err(|e| e.context(format!("field {}", f.name)))?;
                out.push((f.name.clone(), v));
            }
            AvroValue::Record(out)
        }
        Node::Union(branches) => {
            let idx = c.read_long()?;
            let b = usize::try_from(idx)
                .ok()
                .and_then(|i| branches.get(i))
                .copied()
                .ok_or_else(|| {
                    DecodeError::malformed(format!("union branch {idx} out of range"))
                })?;
            read_value(c, s, b, depth + 1)?
        }
        Node::Array(item) => {
            let mut out = Vec::new();
            loop {
                let n = c.read_block_count()?;
                if n == 0 {
                    break AvroValue::Array(out);
                }
                let n = c.check_count(n, s.can_be_empty(*item))?;
                for _ in 0..n {
                    out.push(read_value(c, s, *item, depth + 1)?);
                }
            }
        }
        Node::Map(item) => {
            let mut out = Vec::new();
            loop {
                let n = c.read_block_count()?;
                if n == 0 {
                    break AvroValue::Map(out);
                }
                let n = c.check_count(n, false)?;
                for _ in 0..n {
                    let k = c.read_str()?.to_string();
                    out.push((k, read_value(c, s, *item, depth + 1)?));
                }
            }
        }
    })
}

/// Every record of an Avro container, decoded generically, plus the writer schema JSON.
pub(crate) fn read_container(bytes: &[u8]) -> DecodeResult<(String, Vec<AvroValue>)> {
    let schema_json = schema_json_of(bytes)?;
    let Container {
        schema,
        codec,
        mut blocks,
    } = Container::parse(bytes)?;
    let mut out = Vec::new();
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
        let mut c = Cursor::with_empty_items(&data, empty_items);
        for i in 0..count {
            out.push(
                read_value(&mut c, &schema, schema.root, 0)
                    .map_err(|e| e.context(format!("block #{block_no} record #{i}")))?,
            );
        }
        if c.remaining() != 0 {
            return Err(DecodeError::malformed(format!(
                "block #{block_no} has {} bytes after its {count} records",
                c.remaining()
            )));
        }
        empty_items = c.empty_items_left();
        block_no += 1;
    }
    Ok((schema_json, out))
}

/// The `avro.codec` header value of a container (`null` when absent, as Avro defines).
pub(crate) fn codec_name_of(bytes: &[u8]) -> DecodeResult<String> {
    header_value(bytes, "avro.codec").map(|v| v.unwrap_or_else(|| "null".to_string()))
}

/// The header value of `key` in a container, as UTF-8 text, or None when the header lacks it.
fn header_value(bytes: &[u8], key: &str) -> DecodeResult<Option<String>> {
    let mut c = Cursor::new(bytes);
    if c.take(4)
        .map_err(|_| DecodeError::malformed("file shorter than the Avro magic"))?
        != super::avro::AVRO_MAGIC
    {
        return Err(DecodeError::malformed("not an Avro object container file"));
    }
    loop {
        let n = c.read_block_count().map_err(|e| e.context("header"))?;
        if n == 0 {
            return Ok(None);
        }
        let n = c.check_count(n, false).map_err(|e| e.context("header"))?;
        for _ in 0..n {
            let k = c.read_str().map_err(|e| e.context("header key"))?;
            let value = c.read_bytes().map_err(|e| e.context("header value"))?;
            if k == key {
                return std::str::from_utf8(value)
                    .map(|v| Some(v.to_string()))
                    .map_err(|_| DecodeError::malformed(format!("{key} header is not UTF-8")));
            }
        }
    }
}

/// The `avro.schema` header value of a container, verbatim.
pub(crate) fn schema_json_of(bytes: &[u8]) -> DecodeResult<String> {
    let mut c = Cursor::new(bytes);
    if c.take(4)
        .map_err(|_| DecodeError::malformed("file shorter than the Avro magic"))?
        != super::avro::AVRO_MAGIC
    {
        return Err(DecodeError::malformed("not an Avro object container file"));
    }
    loop {
        let n = c.read_block_count().map_err(|e| e.context("header"))?;
        if n == 0 {
            return Err(DecodeError::malformed("header has no avro.schema"));
        }
        let n = c.check_count(n, false).map_err(|e| e.context("header"))?;
        for _ in 0..n {
            let key = c.read_str().map_err(|e| e.context("header key"))?;
            let value = c.read_bytes().map_err(|e| e.context("header value"))?;
            if key == "avro.schema" {
                return std::str::from_utf8(value)
                    .map(str::to_string)
                    .map_err(|_| DecodeError::malformed("avro.schema header is not UTF-8"));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/// Appends a zig-zag varint.
pub(crate) fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (n & 0x7F) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Appends length-prefixed bytes.
pub(crate) fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Encodes values into one schema. `allow_drop` lets non-null fields the schema lacks be
/// dropped (Java does the same when it rewrites a file written by a newer writer).
pub(crate) struct Encoder<'s> {
    pub schema: &'s Schema,
    pub allow_drop: bool,
}

fn mismatch(path: &str, expected: &str, v: &AvroValue) -> EncodeError {
    EncodeError::Mismatch(format!(
        "{path}: schema type {expected} does not fit a {} value",
        v.kind()
    ))
}

impl Encoder<'_> {
    /// Encodes `v` as a value of the schema's root.
    pub fn encode_root(&self, v: &AvroValue, out: &mut Vec<u8>) -> EResult<()> {
        self.encode(self.schema.root, v, out, "record", 0)
    }

    fn encode(
        &self,
        node: NodeId,
        v: &AvroValue,
        out: &mut Vec<u8>,
        path: &str,
        depth: usize,
    ) -> EResult<()> {
        if depth > MAX_DEPTH {
            return Err(EncodeError::Mismatch(format!("{path}: nested too deeply")));
        }
        let s = self.schema;
        match (s.node(node), v) {
            (Node::Null, AvroValue::Null) => Ok(()),
            (Node::Boolean, AvroValue::Boolean(b)) => {
                out.push(*b as u8);
                Ok(())
            }
            (Node::Int, AvroValue::Int(i)) => {
                write_long(out, *i as i64);
                Ok(())
            }
            (Node::Int, AvroValue::Long(l)) => {
                let i = i32::try_from(*l).map_err(|_| {
                    EncodeError::Mismatch(format!("{path}: {l} does not fit an int"))
                })?;
                write_long(out, i as i64);
                Ok(())
            }
            (Node::Long, AvroValue::Int(i)) => {
                write_long(out, *i as i64);
                Ok(())
            }
            (Node::Long, AvroValue::Long(l)) => {
                write_long(out, *l);
                Ok(())
            }
            (Node::Float, AvroValue::Float(f)) => {
                out.extend_from_slice(&f.to_le_bytes());
                Ok(())
            }
            (Node::Double, AvroValue::Double(d)) => {
                out.extend_from_slice(&d.to_le_bytes());
                Ok(())
            }
            (Node::Double, AvroValue::Float(f)) => {
                out.extend_from_slice(&(*f as f64).to_le_bytes());
                Ok(())
            }
            (Node::Bytes, AvroValue::Bytes(b) | AvroValue::Fixed(b)) => {
                write_bytes(out, b);
                Ok(())
            }
            (Node::Bytes, AvroValue::String(t)) | (Node::String, AvroValue::String(t)) => {
                write_bytes(out, t.as_bytes());
                Ok(())
            }
            (Node::String, AvroValue::Bytes(b)) => {
                if std::str::from_utf8(b).is_err() {
                    return Err(EncodeError::Mismatch(format!(
                        "{path}: bytes are not UTF-8 and cannot be a string"
                    )));
                }
                write_bytes(out, b);
                Ok(())
            }
            (Node::Fixed(n), AvroValue::Fixed(b) | AvroValue::Bytes(b)) if b.len() == *n => {
                out.extend_from_slice(b);
                Ok(())
            }
            (Node::Enum, AvroValue::Enum(i)) => {
                write_long(out, *i as i64);
                Ok(())
            }
            (Node::Array(item), AvroValue::Array(items)) => {
                if !items.is_empty() {
                    write_long(out, items.len() as i64);
                    for (i, x) in items.iter().enumerate() {
                        self.encode(*item, x, out, &format!("{path}[{i}]"), depth + 1)?;
                    }
                }
                write_long(out, 0);
                Ok(())
            }
            (Node::Map(item), AvroValue::Map(kvs)) => {
                if !kvs.is_empty() {
                    write_long(out, kvs.len() as i64);
                    for (k, x) in kvs {
                        write_bytes(out, k.as_bytes());
                        self.encode(*item, x, out, &format!("{path}.{k}"), depth + 1)?;
                    }
                }
                write_long(out, 0);
                Ok(())
            }
            (Node::Record(fields), AvroValue::Record(kvs)) => {
                for f in fields {
                    let fpath = format!("{path}.{}", f.name);
                    match kvs.iter().find(|(n, _)| *n == f.name) {
                        Some((_, x)) => self.encode(f.node, x, out, &fpath, depth + 1)?,
                        None => {
                            let d = match &f.default {
                                Some(json) => default_value(s, f.node, json, &fpath, 0)?,
                                None => AvroValue::Null,
                            };
                            self.encode(f.node, &d, out, &fpath, depth + 1)
                                .map_err(|_| {
                                    EncodeError::Mismatch(format!(
                                        "{fpath}: no value for this field and no usable default"
                                    ))
                                })?;
                        }
                    }
                }
                for (n, x) in kvs {
                    if !x.is_null() && !fields.iter().any(|f| f.name == *n) {
                        if self.allow_drop {
                            tracing::debug!(field = %format!("{path}.{n}"), "field dropped: not in the target schema");
                        } else {
                            return Err(EncodeError::Lossy(format!("{path}.{n}")));
                        }
                    }
                }
                Ok(())
            }
            (Node::Union(branches), v) => {
                let idx = pick_branch(s, branches, v).ok_or_else(|| {
                    EncodeError::Mismatch(format!(
                        "{path}: no union branch takes a {} value",
                        v.kind()
                    ))
                })?;
                write_long(out, idx as i64);
                self.encode(branches[idx], v, out, path, depth + 1)
            }
            (n, v) => Err(mismatch(path, n.type_name(), v)),
        }
    }
}

/// The union branch for a value: null → the null branch; otherwise the first branch of the same
/// kind, then the first compatible one (int ↔ long, float → double, string ↔ bytes).
fn pick_branch(s: &Schema, branches: &[NodeId], v: &AvroValue) -> Option<usize> {
    let exact = |n: &Node| {
        matches!(
            (n, v),
            (Node::Null, AvroValue::Null)
                | (Node::Boolean, AvroValue::Boolean(_))
                | (Node::Int, AvroValue::Int(_))
                | (Node::Long, AvroValue::Long(_))
                | (Node::Float, AvroValue::Float(_))
                | (Node::Double, AvroValue::Double(_))
                | (Node::Bytes, AvroValue::Bytes(_))
                | (Node::String, AvroValue::String(_))
                | (Node::Array(_), AvroValue::Array(_))
                | (Node::Map(_), AvroValue::Map(_))
                | (Node::Record(_), AvroValue::Record(_))
                | (Node::Enum, AvroValue::Enum(_))
                | (Node::Fixed(_), AvroValue::Fixed(_))
        )
    };
    let loose = |n: &Node| {
        matches!(
            (n, v),
            (Node::Long, AvroValue::Int(_))
                | (Node::Int, AvroValue::Long(_))
                | (Node::Double, AvroValue::Float(_))
                | (Node::Bytes, AvroValue::String(_) | AvroValue::Fixed(_))
                | (Node::String, AvroValue::Bytes(_))
                | (Node::Fixed(_), AvroValue::Bytes(_))
        )
    };
    branches
        .iter()
        .position(|b| exact(s.node(*b)))
        .or_else(|| branches.iter().position(|b| loose(s.node(*b))))
}

/// Converts a field's JSON `default` into a value of its schema node (a union's default belongs
/// to its first branch).
fn default_value(
    s: &Schema,
    node: NodeId,
    json: &serde_json::Value,
    path: &str,
    depth: usize,
) -> EResult<AvroValue> {
    use serde_json::Value as J;
    let bad = || EncodeError::Mismatch(format!("{path}: unusable default {json}"));
    if depth > MAX_DEPTH {
        return Err(bad());
    }
    Ok(match (s.node(node), json) {
        (Node::Union(b), _) => match b.first() {
            Some(first) => default_value(s, *first, json, path, depth + 1)?,
            None => return Err(bad()),
        },
        (Node::Null, J::Null) => AvroValue::Null,
        (Node::Boolean, J::Bool(b)) => AvroValue::Boolean(*b),
        (Node::Int, J::Number(n)) => AvroValue::Int(
            n.as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(bad)?,
        ),
        (Node::Long, J::Number(n)) => AvroValue::Long(n.as_i64().ok_or_else(bad)?),
        (Node::Float, J::Number(n)) => AvroValue::Float(n.as_f64().ok_or_else(bad)? as f32),
        (Node::Double, J::Number(n)) => AvroValue::Double(n.as_f64().ok_or_else(bad)?),
        (Node::String, J::String(t)) => AvroValue::String(t.clone()),
        (Node::Bytes | Node::Fixed(_), J::String(t)) => {
            // Avro encodes byte defaults as a string of code points 0..=255.
            let bytes: Option<Vec<u8>> = t.chars().map(|c| u8::try_from(c as u32).ok()).collect();
            let bytes = bytes.ok_or_else(bad)?;
            if matches!(s.node(node), Node::Fixed(_)) {
                AvroValue::Fixed(bytes)
            } else {
                AvroValue::Bytes(bytes)
            }
        }
        (Node::Array(item), J::Array(items)) => AvroValue::Array(
            items
                .iter()
                .map(|x| default_value(s, *item, x, path, depth + 1))
                .collect::<EResult<_>>()?,
        ),
        (Node::Map(item), J::Object(m)) => AvroValue::Map(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), default_value(s, *item, x, path, depth + 1)?)))
                .collect::<EResult<_>>()?,
        ),
        (Node::Record(fields), J::Object(m)) => {
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let x = m.get(&f.name).or(f.default.as_ref()).ok_or_else(bad)?;
                out.push((
                    f.name.clone(),
                    default_value(s, f.node, x, path, depth + 1)?,
                ));
            }
            AvroValue::Record(out)
        }
        _ => return Err(bad()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(json: &str) -> Schema {
        Schema::parse(json.as_bytes()).unwrap()
    }

    fn rec(fields: &[(&str, AvroValue)]) -> AvroValue {
        AvroValue::Record(
            fields
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn encode_by_name_with_defaults_and_unions() {
        let s = schema(
            r#"{"type":"record","name":"r","fields":[
                {"name":"b","type":"long"},
                {"name":"a","type":"int"},
                {"name":"o","type":["null","string"],"default":null},
                {"name":"d","type":"int","default":7},
                {"name":"arr","type":{"type":"array","items":["null","long"]}}
            ]}"#,
        );
        let v = rec(&[
            ("a", AvroValue::Int(1)),
            ("b", AvroValue::Long(-2)),
            ("gone", AvroValue::Null),
            (
                "arr",
                AvroValue::Array(vec![AvroValue::Long(3), AvroValue::Null]),
            ),
        ]);
        let mut out = Vec::new();
        Encoder {
            schema: &s,
            allow_drop: false,
        }
        .encode_root(&v, &mut out)
        .unwrap();
        // b=-2 (3), a=1 (2), o=null (branch 0), d=7 (14), arr: count 2, [branch 1, 3→6], [branch 0], end
        assert_eq!(out, vec![3, 2, 0, 14, 4, 2, 6, 0, 0]);
        let mut c = Cursor::new(&out);
        let back = read_value(&mut c, &s, s.root, 0).unwrap();
        assert_eq!(back.field("d"), Some(&AvroValue::Int(7)));
        assert_eq!(back.field("b"), Some(&AvroValue::Long(-2)));
    }

    #[test]
    fn lossy_and_mismatches_are_refused() {
        let s = schema(r#"{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}"#);
        let strict = Encoder {
            schema: &s,
            allow_drop: false,
        };
        let v = rec(&[("a", AvroValue::Int(1)), ("x", AvroValue::Long(5))]);
        assert!(matches!(
            strict.encode_root(&v, &mut Vec::new()),
            Err(EncodeError::Lossy(_))
        ));
        let loose = Encoder {
            schema: &s,
            allow_drop: true,
        };
        assert!(loose.encode_root(&v, &mut Vec::new()).is_ok());
        // a required field without value or default
        assert!(matches!(
            strict.encode_root(&rec(&[]), &mut Vec::new()),
            Err(EncodeError::Mismatch(_))
        ));
        // wrong type
        assert!(strict
            .encode_root(
                &rec(&[("a", AvroValue::String("x".into()))]),
                &mut Vec::new()
            )
            .is_err());
        // int overflow
        assert!(strict
            .encode_root(&rec(&[("a", AvroValue::Long(1 << 40))]), &mut Vec::new())
            .is_err());
    }
}
