//! BinaryRow decoding and encoding (spec §4).
//!
//! A serialized BinaryRow (the Avro `bytes` fields `_PARTITION`, `_MIN_KEY`, `_MAX_KEY`,
//! `_MIN_VALUES`, `_MAX_VALUES`) is `[arity: i32 big-endian][row bytes]`. The row bytes are the
//! Java memory image: a null bit set of [`null_bits_size`] bytes (the first 8 bits are the row
//! kind header), then one 8-byte little-endian slot per field, then a variable part where every
//! value is padded to a multiple of 8 bytes.
//!
//! [`BinaryRow`] is a zero-copy view that validates every offset it follows; no input can make
//! it panic. [`BinaryRowWriter`] builds rows byte-identical to Java's `BinaryRowWriter`.

use std::borrow::Cow;
use std::fmt;

use crate::error::{Error, Result};
use crate::spec::types::DataType;

/// Number of header bits in front of the field null bits (the row kind byte).
pub const HEADER_SIZE_IN_BITS: usize = 8;

/// Highest precision of a DECIMAL stored inline as an unscaled `i64` ("compact").
pub const MAX_COMPACT_DECIMAL_PRECISION: u32 = 18;

/// Highest precision of a TIMESTAMP stored inline as epoch millis ("compact").
pub const MAX_COMPACT_TIMESTAMP_PRECISION: u32 = 3;

/// The serialized empty row (arity 0): `00000000` followed by 8 zero bytes.
pub const EMPTY_ROW: [u8; 12] = [0; 12];

/// Path placeholder used in errors about a BinaryRow that is not tied to a file.
const ROW_PATH: &str = "<BinaryRow>";

fn row_err(message: impl ToString) -> Error {
    Error::malformed("BinaryRow", ROW_PATH, message)
}

/// Size in bytes of the null bit set (header included) of a row with `arity` fields:
/// `((arity + 63 + 8) / 64) * 8`.
pub fn null_bits_size(arity: usize) -> usize {
    (arity.saturating_add(63 + HEADER_SIZE_IN_BITS) / 64).saturating_mul(8)
}

/// Whether a DECIMAL of this precision is stored inline (`precision <= 18`).
pub fn is_compact_decimal(precision: u32) -> bool {
    precision <= MAX_COMPACT_DECIMAL_PRECISION
}

/// Whether a TIMESTAMP of this precision is stored inline (`precision <= 3`).
pub fn is_compact_timestamp(precision: u32) -> bool {
    precision <= MAX_COMPACT_TIMESTAMP_PRECISION
}

/// A DECIMAL value: unscaled integer plus the type's precision and scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The unscaled value (`value = unscaled * 10^-scale`).
    pub unscaled: i128,
    /// Declared precision of the type.
    pub precision: u32,
    /// Declared scale of the type.
    pub scale: u32,
}

impl fmt::Display for Decimal {
    /// Java `BigDecimal.toPlainString()`: no exponent, every scale digit kept (`12.30`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.unscaled.unsigned_abs().to_string();
        let sign = if self.unscaled < 0 { "-" } else { "" };
        let scale = self.scale as usize;
        if scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        if digits.len() > scale {
            let (int_part, frac) = digits.split_at(digits.len() - scale);
            write!(f, "{sign}{int_part}.{frac}")
        } else {
            let zeros = "0".repeat(scale - digits.len());
            write!(f, "{sign}0.{zeros}{digits}")
        }
    }
}

/// A TIMESTAMP value as Paimon stores it: epoch milliseconds plus nanoseconds within the
/// millisecond (`0..=999_999`). For TIMESTAMP WITHOUT TIME ZONE the millis are the wall-clock
/// value encoded as if it were UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    /// Milliseconds since 1970-01-01T00:00:00.
    pub millis: i64,
    /// Nanoseconds within the millisecond, `0..=999_999`.
    pub nanos_of_milli: i32,
}

/// One decoded field value (internal representation, as Java's `InternalRow` getters return).
#[derive(Debug, Clone, PartialEq)]
pub enum Datum<'a> {
    /// BOOLEAN
    Boolean(bool),
    /// TINYINT
    TinyInt(i8),
    /// SMALLINT
    SmallInt(i16),
    /// INT
    Int(i32),
    /// BIGINT
    BigInt(i64),
    /// FLOAT
    Float(f32),
    /// DOUBLE
    Double(f64),
    /// DECIMAL
    Decimal(Decimal),
    /// CHAR / VARCHAR / STRING (invalid UTF-8 is replaced by U+FFFD, as Java does)
    String(Cow<'a, str>),
    /// BINARY / VARBINARY / BYTES
    Binary(Cow<'a, [u8]>),
    /// DATE: days since 1970-01-01
    Date(i32),
    /// TIME: milliseconds of the day
    Time(i32),
    /// TIMESTAMP (without time zone)
    Timestamp(Timestamp),
    /// TIMESTAMP WITH LOCAL TIME ZONE (an instant)
    TimestampLtz(Timestamp),
}

/// A zero-copy, validated view of a serialized BinaryRow.
#[derive(Debug, Clone, Copy)]
pub struct BinaryRow<'a> {
    /// Row bytes (after the 4-byte arity prefix).
    row: &'a [u8],
    arity: usize,
    null_bits: usize,
}

impl<'a> BinaryRow<'a> {
    /// Parses a serialized row `[arity i32 BE][row bytes]` (what manifests store). Fails when the
    /// arity is negative or the bytes are too short for the null bits and fixed slots.
    pub fn from_serialized(bytes: &'a [u8]) -> Result<Self> {
        let Some(prefix) = bytes.get(..4) else {
            return Err(row_err(format!(
                "serialized row has {} bytes, fewer than the 4-byte arity prefix",
                bytes.len()
            )));
        };
        let arity = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        if arity < 0 {
            return Err(row_err(format!("negative arity {arity}")));
        }
        Self::from_row_bytes(&bytes[4..], arity as usize)
    }

    /// Wraps raw row bytes (without the arity prefix) of a row with `arity` fields.
    pub fn from_row_bytes(row: &'a [u8], arity: usize) -> Result<Self> {
        let null_bits = null_bits_size(arity);
        let fixed = arity
            .checked_mul(8)
            .and_then(|s| s.checked_add(null_bits))
            .ok_or_else(|| row_err(format!("arity {arity} is too large")))?;
        if row.len() < fixed {
            return Err(row_err(format!(
                "row of arity {arity} needs at least {fixed} bytes, has {}",
                row.len()
            )));
        }
        Ok(BinaryRow {
            row,
            arity,
            null_bits,
        })
    }

    /// Number of fields.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// The row bytes (after the arity prefix).
    pub fn row_bytes(&self) -> &'a [u8] {
        self.row
    }

    /// The row kind header byte (0 INSERT, 1 UPDATE_BEFORE, 2 UPDATE_AFTER, 3 DELETE).
    pub fn row_kind(&self) -> u8 {
        self.row.first().copied().unwrap_or(0)
    }

    fn check_index(&self, pos: usize) -> Result<()> {
        if pos >= self.arity {
            return Err(row_err(format!(
                "field index {pos} out of range for arity {}",
                self.arity
            )));
        }
        Ok(())
    }

    /// Whether field `pos` is null.
    pub fn is_null_at(&self, pos: usize) -> Result<bool> {
        self.check_index(pos)?;
        let bit = pos + HEADER_SIZE_IN_BITS;
        let byte = self.row.get(bit >> 3).copied().unwrap_or(0);
        Ok(byte & (1u8 << (bit & 7)) != 0)
    }

    fn slot(&self, pos: usize) -> Result<[u8; 8]> {
        self.check_index(pos)?;
        let start = self.null_bits + pos * 8;
        let mut out = [0u8; 8];
        match self.row.get(start..start + 8) {
            Some(s) => {
                out.copy_from_slice(s);
                Ok(out)
            }
            None => Err(row_err(format!("slot {pos} is out of bounds"))),
        }
    }

    fn slot_u64(&self, pos: usize) -> Result<u64> {
        Ok(u64::from_le_bytes(self.slot(pos)?))
    }

    /// BOOLEAN at `pos`.
    pub fn get_boolean(&self, pos: usize) -> Result<bool> {
        Ok(self.slot(pos)?[0] != 0)
    }

    /// TINYINT at `pos`.
    pub fn get_byte(&self, pos: usize) -> Result<i8> {
        Ok(self.slot(pos)?[0] as i8)
    }

    /// SMALLINT at `pos`.
    pub fn get_short(&self, pos: usize) -> Result<i16> {
        let s = self.slot(pos)?;
        Ok(i16::from_le_bytes([s[0], s[1]]))
    }

    /// INT, DATE (epoch days) or TIME (millis of day) at `pos`.
    pub fn get_int(&self, pos: usize) -> Result<i32> {
        let s = self.slot(pos)?;
        Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// BIGINT at `pos`.
    pub fn get_long(&self, pos: usize) -> Result<i64> {
        Ok(i64::from_le_bytes(self.slot(pos)?))
    }

    /// FLOAT at `pos`.
    pub fn get_float(&self, pos: usize) -> Result<f32> {
        let s = self.slot(pos)?;
        Ok(f32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// DOUBLE at `pos`.
    pub fn get_double(&self, pos: usize) -> Result<f64> {
        Ok(f64::from_le_bytes(self.slot(pos)?))
    }

    fn var_range(&self, offset: u64, len: u64, pos: usize) -> Result<&'a [u8]> {
        let end = offset.saturating_add(len);
        if end > self.row.len() as u64 {
            return Err(row_err(format!(
                "field {pos}: variable-length data at offset {offset} length {len} exceeds row of {} bytes",
                self.row.len()
            )));
        }
        Ok(&self.row[offset as usize..end as usize])
    }

    /// Raw bytes of a STRING/BINARY field at `pos` (inline when ≤ 7 bytes, else out-of-line).
    pub fn get_binary(&self, pos: usize) -> Result<&'a [u8]> {
        let v = self.slot_u64(pos)?;
        if v & (1u64 << 63) != 0 {
            let len = ((v >> 56) & 0x7F) as usize;
            if len > 7 {
                return Err(row_err(format!(
                    "field {pos}: inline length {len} is larger than 7"
                )));
            }
            let start = self.null_bits + pos * 8;
            Ok(&self.row[start..start + len])
        } else {
            self.var_range(v >> 32, v & 0xFFFF_FFFF, pos)
        }
    }

    /// STRING at `pos`, decoded as UTF-8 (malformed sequences become U+FFFD, like Java).
    pub fn get_string(&self, pos: usize) -> Result<Cow<'a, str>> {
        Ok(String::from_utf8_lossy(self.get_binary(pos)?))
    }

    /// DECIMAL(precision, scale) at `pos`: compact (`precision <= 18`) values are the unscaled
    /// `i64` in the slot; others are big-endian two's-complement bytes in the variable part.
    pub fn get_decimal(&self, pos: usize, precision: u32, scale: u32) -> Result<Decimal> {
        if is_compact_decimal(precision) {
            return Ok(Decimal {
                unscaled: self.get_long(pos)? as i128,
                precision,
                scale,
            });
        }
        let v = self.slot_u64(pos)?;
        let bytes = self.var_range(v >> 32, v & 0xFFFF_FFFF, pos)?;
        if bytes.len() > 16 {
            return Err(row_err(format!(
                "field {pos}: decimal of {} bytes does not fit 128 bits",
                bytes.len()
            )));
        }
        let mut unscaled: i128 = 0;
        if let Some(first) = bytes.first() {
            if first & 0x80 != 0 {
                unscaled = -1;
            }
        }
        for b in bytes {
            unscaled = (unscaled << 8) | *b as i128;
        }
        Ok(Decimal {
            unscaled,
            precision,
            scale,
        })
    }

    /// TIMESTAMP(precision) or TIMESTAMP_LTZ at `pos`: compact (`precision <= 3`) values are
    /// epoch millis in the slot; others keep the millis in the variable part and the
    /// nanos-of-millisecond in the low 32 bits of the slot.
    pub fn get_timestamp(&self, pos: usize, precision: u32) -> Result<Timestamp> {
        if is_compact_timestamp(precision) {
            return Ok(Timestamp {
                millis: self.get_long(pos)?,
                nanos_of_milli: 0,
            });
        }
        let v = self.slot_u64(pos)?;
        let millis_bytes = self.var_range(v >> 32, 8, pos)?;
        let mut m = [0u8; 8];
        m.copy_from_slice(millis_bytes);
        let nanos = (v & 0xFFFF_FFFF) as u32;
        if nanos > 999_999 {
            return Err(row_err(format!(
                "field {pos}: nanos-of-millisecond {nanos} out of range"
            )));
        }
        Ok(Timestamp {
            millis: i64::from_le_bytes(m),
            nanos_of_milli: nanos as i32,
        })
    }

    /// The value at `pos` interpreted as `data_type`, or `None` when the field is null.
    /// Nested types (`DataType::Other`) are refused with [`Error::Unsupported`].
    pub fn get_datum(&self, pos: usize, data_type: &DataType) -> Result<Option<Datum<'a>>> {
        if self.is_null_at(pos)? {
            return Ok(None);
        }
        let d = match data_type {
            DataType::Boolean => Datum::Boolean(self.get_boolean(pos)?),
            DataType::TinyInt => Datum::TinyInt(self.get_byte(pos)?),
            DataType::SmallInt => Datum::SmallInt(self.get_short(pos)?),
            DataType::Int => Datum::Int(self.get_int(pos)?),
            DataType::BigInt => Datum::BigInt(self.get_long(pos)?),
            DataType::Float => Datum::Float(self.get_float(pos)?),
            DataType::Double => Datum::Double(self.get_double(pos)?),
            DataType::Decimal { precision, scale } => {
                Datum::Decimal(self.get_decimal(pos, *precision, *scale)?)
            }
            DataType::String => Datum::String(self.get_string(pos)?),
            DataType::Binary => Datum::Binary(Cow::Borrowed(self.get_binary(pos)?)),
            DataType::Date => Datum::Date(self.get_int(pos)?),
            DataType::Time { .. } => Datum::Time(self.get_int(pos)?),
            DataType::Timestamp { precision } => {
                Datum::Timestamp(self.get_timestamp(pos, *precision)?)
            }
            DataType::TimestampLtz { precision } => {
                Datum::TimestampLtz(self.get_timestamp(pos, *precision)?)
            }
            DataType::Other(name) => {
                return Err(Error::Unsupported(format!(
                    "reading a {name} value from a BinaryRow"
                )))
            }
        };
        Ok(Some(d))
    }
}

/// Builds a serialized BinaryRow exactly like Java's `BinaryRowWriter` does: write the fields in
/// index order (the variable part is appended in call order), then [`BinaryRowWriter::finish`].
#[derive(Debug, Clone)]
pub struct BinaryRowWriter {
    arity: usize,
    null_bits: usize,
    /// Row bytes (without the arity prefix).
    buf: Vec<u8>,
}

impl BinaryRowWriter {
    /// A writer for a row with `arity` fields, all zero (non-null) initially.
    pub fn new(arity: usize) -> Self {
        let null_bits = null_bits_size(arity);
        BinaryRowWriter {
            arity,
            null_bits,
            buf: vec![0u8; null_bits + arity * 8],
        }
    }

    fn slot_start(&self, pos: usize) -> Result<usize> {
        if pos >= self.arity {
            return Err(Error::InvalidArgument(format!(
                "BinaryRowWriter: field index {pos} out of range for arity {}",
                self.arity
            )));
        }
        Ok(self.null_bits + pos * 8)
    }

    fn put_slot(&mut self, pos: usize, bytes: [u8; 8]) -> Result<()> {
        let s = self.slot_start(pos)?;
        self.buf[s..s + 8].copy_from_slice(&bytes);
        Ok(())
    }

    /// Sets the row kind header byte.
    pub fn set_row_kind(&mut self, kind: u8) {
        if let Some(b) = self.buf.first_mut() {
            *b = kind;
        }
    }

    fn set_null_bit(&mut self, pos: usize) -> Result<()> {
        self.slot_start(pos)?;
        let bit = pos + HEADER_SIZE_IN_BITS;
        self.buf[bit >> 3] |= 1u8 << (bit & 7);
        Ok(())
    }

    /// Marks field `pos` null and zeroes its slot (Java `setNullAt`). For non-compact DECIMAL
    /// and TIMESTAMP use [`BinaryRowWriter::set_null_typed`], which also reserves variable space.
    pub fn set_null_at(&mut self, pos: usize) -> Result<()> {
        self.set_null_bit(pos)?;
        self.put_slot(pos, [0; 8])
    }

    /// Marks field `pos` null the way Java does for a field of `data_type`: non-compact DECIMAL
    /// reserves 16 zero bytes and non-compact TIMESTAMP 8 zero bytes in the variable part and
    /// keeps the offset in the slot; every other type gets a zero slot.
    pub fn set_null_typed(&mut self, pos: usize, data_type: &DataType) -> Result<()> {
        match data_type {
            DataType::Decimal { precision, .. } if !is_compact_decimal(*precision) => {
                self.set_null_bit(pos)?;
                let offset = self.append_var(&[0u8; 16])?;
                self.put_slot(pos, ((offset as u64) << 32).to_le_bytes())
            }
            DataType::Timestamp { precision } | DataType::TimestampLtz { precision }
                if !is_compact_timestamp(*precision) =>
            {
                self.set_null_bit(pos)?;
                let offset = self.append_var(&[0u8; 8])?;
                self.put_slot(pos, ((offset as u64) << 32).to_le_bytes())
            }
            _ => self.set_null_at(pos),
        }
    }

    /// Appends `data` zero-padded to a multiple of 8 bytes; returns its offset in the row.
    fn append_var(&mut self, data: &[u8]) -> Result<usize> {
        let offset = self.buf.len();
        if offset > u32::MAX as usize || data.len() > u32::MAX as usize {
            return Err(Error::InvalidArgument(
                "BinaryRowWriter: row larger than 4 GiB".to_string(),
            ));
        }
        let padded = data.len().div_ceil(8) * 8;
        self.buf.extend_from_slice(data);
        self.buf.resize(offset + padded, 0);
        Ok(offset)
    }

    /// Writes a BOOLEAN.
    pub fn write_boolean(&mut self, pos: usize, v: bool) -> Result<()> {
        let mut s = [0u8; 8];
        s[0] = v as u8;
        self.put_slot(pos, s)
    }

    /// Writes a TINYINT.
    pub fn write_byte(&mut self, pos: usize, v: i8) -> Result<()> {
        let mut s = [0u8; 8];
        s[0] = v as u8;
        self.put_slot(pos, s)
    }

    /// Writes a SMALLINT.
    pub fn write_short(&mut self, pos: usize, v: i16) -> Result<()> {
        let mut s = [0u8; 8];
        s[..2].copy_from_slice(&v.to_le_bytes());
        self.put_slot(pos, s)
    }

    /// Writes an INT, DATE (epoch days) or TIME (millis of day).
    pub fn write_int(&mut self, pos: usize, v: i32) -> Result<()> {
        let mut s = [0u8; 8];
        s[..4].copy_from_slice(&v.to_le_bytes());
        self.put_slot(pos, s)
    }

    /// Writes a BIGINT.
    pub fn write_long(&mut self, pos: usize, v: i64) -> Result<()> {
        self.put_slot(pos, v.to_le_bytes())
    }

    /// Writes a FLOAT.
    pub fn write_float(&mut self, pos: usize, v: f32) -> Result<()> {
        let mut s = [0u8; 8];
        s[..4].copy_from_slice(&v.to_le_bytes());
        self.put_slot(pos, s)
    }

    /// Writes a DOUBLE.
    pub fn write_double(&mut self, pos: usize, v: f64) -> Result<()> {
        self.put_slot(pos, v.to_le_bytes())
    }

    /// Writes STRING/BINARY bytes: inline when ≤ 7 bytes (last slot byte = `0x80 | len`),
    /// otherwise appended to the variable part with slot = `(offset << 32) | len`.
    pub fn write_binary(&mut self, pos: usize, v: &[u8]) -> Result<()> {
        self.slot_start(pos)?;
        if v.len() <= 7 {
            let mut s = [0u8; 8];
            s[..v.len()].copy_from_slice(v);
            s[7] = 0x80 | v.len() as u8;
            self.put_slot(pos, s)
        } else {
            let offset = self.append_var(v)?;
            self.put_slot(
                pos,
                (((offset as u64) << 32) | v.len() as u64).to_le_bytes(),
            )
        }
    }

    /// Writes a STRING (UTF-8).
    pub fn write_string(&mut self, pos: usize, v: &str) -> Result<()> {
        self.write_binary(pos, v.as_bytes())
    }

    /// Writes a DECIMAL with the column's precision: compact as the unscaled `i64`, otherwise
    /// 16 reserved bytes holding the minimal big-endian two's-complement value.
    pub fn write_decimal(&mut self, pos: usize, v: &Decimal, precision: u32) -> Result<()> {
        if is_compact_decimal(precision) {
            let unscaled = i64::try_from(v.unscaled).map_err(|_| {
                Error::InvalidArgument(format!(
                    "decimal {v} does not fit a compact DECIMAL({precision})"
                ))
            })?;
            return self.write_long(pos, unscaled);
        }
        let be = minimal_be_bytes(v.unscaled);
        let mut reserved = [0u8; 16];
        reserved[..be.len()].copy_from_slice(&be);
        self.slot_start(pos)?;
        let offset = self.append_var(&reserved)?;
        self.put_slot(
            pos,
            (((offset as u64) << 32) | be.len() as u64).to_le_bytes(),
        )
    }

    /// Writes a TIMESTAMP / TIMESTAMP_LTZ with the column's precision.
    pub fn write_timestamp(&mut self, pos: usize, v: Timestamp, precision: u32) -> Result<()> {
        if is_compact_timestamp(precision) {
            return self.write_long(pos, v.millis);
        }
        self.slot_start(pos)?;
        let offset = self.append_var(&v.millis.to_le_bytes())?;
        let nanos = v.nanos_of_milli.clamp(0, 999_999) as u64;
        self.put_slot(pos, (((offset as u64) << 32) | nanos).to_le_bytes())
    }

    /// Writes `value` (or null) as a field of `data_type`.
    pub fn write_datum(
        &mut self,
        pos: usize,
        data_type: &DataType,
        value: Option<&Datum<'_>>,
    ) -> Result<()> {
        let Some(value) = value else {
            return self.set_null_typed(pos, data_type);
        };
        match (data_type, value) {
            (DataType::Boolean, Datum::Boolean(v)) => self.write_boolean(pos, *v),
            (DataType::TinyInt, Datum::TinyInt(v)) => self.write_byte(pos, *v),
            (DataType::SmallInt, Datum::SmallInt(v)) => self.write_short(pos, *v),
            (DataType::Int, Datum::Int(v)) => self.write_int(pos, *v),
            (DataType::BigInt, Datum::BigInt(v)) => self.write_long(pos, *v),
            (DataType::Float, Datum::Float(v)) => self.write_float(pos, *v),
            (DataType::Double, Datum::Double(v)) => self.write_double(pos, *v),
            (DataType::Decimal { precision, .. }, Datum::Decimal(v)) => {
                self.write_decimal(pos, v, *precision)
            }
            (DataType::String, Datum::String(v)) => self.write_string(pos, v),
            (DataType::Binary, Datum::Binary(v)) => self.write_binary(pos, v),
            (DataType::Date, Datum::Date(v)) => self.write_int(pos, *v),
            (DataType::Time { .. }, Datum::Time(v)) => self.write_int(pos, *v),
            (DataType::Timestamp { precision }, Datum::Timestamp(v))
            | (DataType::TimestampLtz { precision }, Datum::TimestampLtz(v)) => {
                self.write_timestamp(pos, *v, *precision)
            }
            (t, v) => Err(Error::InvalidArgument(format!(
                "BinaryRowWriter: value {v:?} does not match type {t:?} at field {pos}"
            ))),
        }
    }

    /// The serialized row: `[arity i32 BE][row bytes]`.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + self.buf.len());
        out.extend_from_slice(&(self.arity as i32).to_be_bytes());
        out.extend_from_slice(&self.buf);
        out
    }
}

/// Java `BigInteger.toByteArray()`: the shortest big-endian two's-complement encoding.
fn minimal_be_bytes(v: i128) -> Vec<u8> {
    let all = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let b = all[start];
        let next_sign = all[start + 1] & 0x80;
        if (b == 0x00 && next_sign == 0) || (b == 0xFF && next_sign != 0) {
            start += 1;
        } else {
            break;
        }
    }
    all[start..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn null_bits_sizes() {
        assert_eq!(null_bits_size(0), 8);
        assert_eq!(null_bits_size(1), 8);
        assert_eq!(null_bits_size(56), 8);
        assert_eq!(null_bits_size(57), 16);
        assert_eq!(null_bits_size(120), 16);
        assert_eq!(null_bits_size(121), 24);
    }

    #[test]
    fn empty_row() {
        let r = BinaryRow::from_serialized(&EMPTY_ROW).unwrap();
        assert_eq!(r.arity(), 0);
        assert!(r.is_null_at(0).is_err());
        assert_eq!(BinaryRowWriter::new(0).finish(), EMPTY_ROW.to_vec());
    }

    #[test]
    fn int_partition_worked_example() {
        let bytes = hex("00000001 0000000000000000 0a00000000000000");
        let r = BinaryRow::from_serialized(&bytes).unwrap();
        assert_eq!(r.arity(), 1);
        assert!(!r.is_null_at(0).unwrap());
        assert_eq!(r.get_int(0).unwrap(), 10);
        let mut w = BinaryRowWriter::new(1);
        w.write_int(0, 10).unwrap();
        assert_eq!(w.finish(), bytes);
    }

    #[test]
    fn key_alice_worked_example() {
        let bytes = hex("00000002 0000000000000000 416c696365000085 0100000000000000");
        let r = BinaryRow::from_serialized(&bytes).unwrap();
        assert_eq!(r.get_string(0).unwrap(), "Alice");
        assert_eq!(r.get_int(1).unwrap(), 1);
        let mut w = BinaryRowWriter::new(2);
        w.write_string(0, "Alice").unwrap();
        w.write_int(1, 1).unwrap();
        assert_eq!(w.finish(), bytes);
    }

    #[test]
    fn long_string_key_worked_example() {
        let s = "x".repeat(104);
        let mut w = BinaryRowWriter::new(2);
        w.write_string(0, &s).unwrap();
        w.write_int(1, 1).unwrap();
        let bytes = w.finish();
        assert_eq!(&bytes[12..20], &hex("6800000018000000")[..]);
        assert_eq!(bytes.len(), 4 + 8 + 16 + 104);
        let r = BinaryRow::from_serialized(&bytes).unwrap();
        assert_eq!(r.get_string(0).unwrap(), s);
        assert_eq!(r.get_int(1).unwrap(), 1);
    }

    #[test]
    fn pypaimon_examples() {
        // dt='2024-01-01' (STRING), hr=0 (INT)
        let bytes = hex(
            "00000002 0000000000000000 0a00000018000000 0000000000000000 \
             323032342d30312d3031 000000000000",
        );
        assert_eq!(bytes.len(), 44);
        let mut w = BinaryRowWriter::new(2);
        w.write_string(0, "2024-01-01").unwrap();
        w.write_int(1, 0).unwrap();
        assert_eq!(w.finish(), bytes);
        let r = BinaryRow::from_serialized(&bytes).unwrap();
        assert_eq!(r.get_string(0).unwrap(), "2024-01-01");
        assert_eq!(r.get_int(1).unwrap(), 0);

        // dt='2024-01-01', hr=1
        let mut w = BinaryRowWriter::new(2);
        w.write_string(0, "2024-01-01").unwrap();
        w.write_int(1, 1).unwrap();
        let b = w.finish();
        assert_eq!(&b[20..28], &hex("0100000000000000")[..]);

        // d=2024-01-01 (DATE) = 19723 epoch days
        let bytes = hex("00000001 0000000000000000 0b4d000000000000");
        let mut w = BinaryRowWriter::new(1);
        w.write_datum(0, &DataType::Date, Some(&Datum::Date(19723)))
            .unwrap();
        assert_eq!(w.finish(), bytes);
        assert_eq!(
            BinaryRow::from_serialized(&bytes)
                .unwrap()
                .get_datum(0, &DataType::Date)
                .unwrap(),
            Some(Datum::Date(19723))
        );

        // p=0 (INT)
        let mut w = BinaryRowWriter::new(1);
        w.write_int(0, 0).unwrap();
        assert_eq!(
            w.finish(),
            hex("00000001 0000000000000000 0000000000000000")
        );

        // dt='a' inline
        let bytes = hex("00000001 0000000000000000 6100000000000081");
        let mut w = BinaryRowWriter::new(1);
        w.write_string(0, "a").unwrap();
        assert_eq!(w.finish(), bytes);
        assert_eq!(
            BinaryRow::from_serialized(&bytes)
                .unwrap()
                .get_string(0)
                .unwrap(),
            "a"
        );

        // pypaimon manifest-list partition stats (min/max of the dt,hr table)
        let min = hex("0000000200000000000000000a000000180000000000000000000000323032342d30312d3031000000000000");
        let max = hex("0000000200000000000000000a000000180000000100000000000000323032342d30312d3033000000000000");
        let rmin = BinaryRow::from_serialized(&min).unwrap();
        let rmax = BinaryRow::from_serialized(&max).unwrap();
        assert_eq!(rmin.get_string(0).unwrap(), "2024-01-01");
        assert_eq!(rmax.get_string(0).unwrap(), "2024-01-03");
        assert_eq!(rmax.get_int(1).unwrap(), 1);
    }

    #[test]
    fn nulls_and_bools() {
        let mut w = BinaryRowWriter::new(3);
        w.set_null_at(0).unwrap();
        w.write_boolean(1, true).unwrap();
        w.write_long(2, -5).unwrap();
        let b = w.finish();
        // null bit of field 0 = bit 8 = byte 1, mask 0x01
        assert_eq!(
            b,
            hex("00000003 0001000000000000 0000000000000000 0100000000000000 fbffffffffffffff")
        );
        let r = BinaryRow::from_serialized(&b).unwrap();
        assert!(r.is_null_at(0).unwrap());
        assert!(!r.is_null_at(1).unwrap());
        assert!(r.get_boolean(1).unwrap());
        assert_eq!(r.get_long(2).unwrap(), -5);
        assert_eq!(r.get_datum(0, &DataType::String).unwrap(), None);
    }

    #[test]
    fn many_fields_null_bits() {
        let mut w = BinaryRowWriter::new(60);
        w.set_null_at(59).unwrap();
        let b = w.finish();
        let r = BinaryRow::from_serialized(&b).unwrap();
        assert_eq!(b.len(), 4 + 16 + 60 * 8);
        assert!(r.is_null_at(59).unwrap());
        assert!(!r.is_null_at(58).unwrap());
    }

    #[test]
    fn small_numbers_and_floats() {
        let mut w = BinaryRowWriter::new(4);
        w.write_byte(0, -3).unwrap();
        w.write_short(1, -300).unwrap();
        w.write_float(2, 1.5).unwrap();
        w.write_double(3, -2.25).unwrap();
        let b = w.finish();
        let r = BinaryRow::from_serialized(&b).unwrap();
        assert_eq!(r.get_byte(0).unwrap(), -3);
        assert_eq!(r.get_short(1).unwrap(), -300);
        assert_eq!(r.get_float(2).unwrap(), 1.5);
        assert_eq!(r.get_double(3).unwrap(), -2.25);
    }

    #[test]
    fn decimals() {
        let compact = Decimal {
            unscaled: 1230,
            precision: 10,
            scale: 2,
        };
        let big = Decimal {
            unscaled: -123_456_789_012_345_678_901_234_567i128,
            precision: 38,
            scale: 4,
        };
        let mut w = BinaryRowWriter::new(3);
        w.write_decimal(0, &compact, 10).unwrap();
        w.write_decimal(1, &big, 38).unwrap();
        w.set_null_typed(
            2,
            &DataType::Decimal {
                precision: 20,
                scale: 0,
            },
        )
        .unwrap();
        let b = w.finish();
        // fixed part 8 + 3*8 = 32; two 16-byte reservations follow
        assert_eq!(b.len(), 4 + 32 + 32);
        let r = BinaryRow::from_serialized(&b).unwrap();
        assert_eq!(r.get_decimal(0, 10, 2).unwrap(), compact);
        assert_eq!(r.get_decimal(1, 38, 4).unwrap(), big);
        assert!(r.is_null_at(2).unwrap());
        // null non-compact decimal keeps its offset (48) with length 0
        assert_eq!(&b[4 + 8 + 16..4 + 8 + 24], &hex("0000000030000000")[..]);
        assert_eq!(compact.to_string(), "12.30");
        assert_eq!(big.to_string(), "-12345678901234567890123.4567");
        let small = Decimal {
            unscaled: -5,
            precision: 5,
            scale: 3,
        };
        assert_eq!(small.to_string(), "-0.005");
        assert_eq!(minimal_be_bytes(127), vec![0x7f]);
        assert_eq!(minimal_be_bytes(128), vec![0x00, 0x80]);
        assert_eq!(minimal_be_bytes(-128), vec![0x80]);
        assert_eq!(minimal_be_bytes(-129), vec![0xff, 0x7f]);
        assert_eq!(minimal_be_bytes(0), vec![0x00]);
    }

    #[test]
    fn timestamps() {
        let ts = Timestamp {
            millis: 1_700_000_000_123,
            nanos_of_milli: 456_789,
        };
        let mut w = BinaryRowWriter::new(2);
        w.write_timestamp(0, ts, 3).unwrap();
        w.write_timestamp(1, ts, 9).unwrap();
        let b = w.finish();
        let r = BinaryRow::from_serialized(&b).unwrap();
        assert_eq!(
            r.get_timestamp(0, 3).unwrap(),
            Timestamp {
                millis: ts.millis,
                nanos_of_milli: 0
            }
        );
        assert_eq!(r.get_timestamp(1, 9).unwrap(), ts);
        // slot 1 = (24 << 32) | 456789
        assert_eq!(
            &b[4 + 16..4 + 24],
            &((24u64 << 32) | 456_789).to_le_bytes()[..]
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(BinaryRow::from_serialized(&[]).is_err());
        assert!(BinaryRow::from_serialized(&[0, 0]).is_err());
        assert!(BinaryRow::from_serialized(&[0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(BinaryRow::from_serialized(&hex("00000001 0000000000000000 0a")).is_err());
        assert!(BinaryRow::from_serialized(&hex("7fffffff 00")).is_err());
        // out-of-line string pointing past the end
        let bad = hex("00000001 0000000000000000 ff000000ff000000");
        let r = BinaryRow::from_serialized(&bad).unwrap();
        assert!(r.get_string(0).is_err());
        assert!(r.get_decimal(0, 30, 2).is_err());
        assert!(r.get_timestamp(0, 6).is_err());
        // inline with an impossible length
        let bad = hex("00000001 0000000000000000 00000000000000ff");
        let r = BinaryRow::from_serialized(&bad).unwrap();
        assert!(r.get_binary(0).is_err());
        assert!(r.get_int(1).is_err());
        // decimal longer than 16 bytes
        let mut v = hex("00000001 0000000000000000 1100000010000000");
        v.extend_from_slice(&[1u8; 24]);
        let r = BinaryRow::from_serialized(&v).unwrap();
        assert!(r.get_decimal(0, 38, 0).is_err());
        // nested type
        let one_int = hex("00000001 0000000000000000 0000000000000000");
        let r = BinaryRow::from_serialized(&one_int).unwrap();
        assert!(matches!(
            r.get_datum(0, &DataType::Other("ARRAY".into())),
            Err(Error::Unsupported(_))
        ));
        // writer index errors
        let mut w = BinaryRowWriter::new(1);
        assert!(w.write_int(1, 0).is_err());
        assert!(w
            .write_datum(0, &DataType::Int, Some(&Datum::BigInt(1)))
            .is_err());
    }

    #[test]
    fn fuzz_like_random_bytes_never_panic() {
        let mut state = 0x1234_5678_u64;
        for len in 0..200usize {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (state >> 33) as u8
                })
                .collect();
            let mut b = bytes.clone();
            if b.len() >= 4 {
                b[0] = 0;
                b[1] = 0;
                b[2] = 0;
                b[3] = (len % 5) as u8;
            }
            if let Ok(r) = BinaryRow::from_serialized(&b) {
                for i in 0..6 {
                    let _ = r.is_null_at(i);
                    let _ = r.get_string(i);
                    let _ = r.get_decimal(i, 38, 2);
                    let _ = r.get_timestamp(i, 9);
                    let _ = r.get_long(i);
                }
            }
        }
    }
}
