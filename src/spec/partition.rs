//! Partition path strings (spec §4.5): value formatting, escaping and `k1=v1/k2=v2/` paths.
//!
//! Java reference: `InternalRowPartitionComputer.generatePartValues` (legacy `toString()` or
//! cast-to-string rules), `PartitionPathUtils.{escapePathName, unescapePathName,
//! generatePartitionPath}`, `DateTimeUtils.{formatDate, formatTimestamp, formatTimestampMillis}`.
//!
//! FLOAT, DOUBLE and BINARY partition keys are refused with [`Error::Unsupported`]: Java's
//! strings for them (`Float.toString`, `[B@hash`) cannot be reproduced reliably, so a computed
//! path could silently miss the real directory.

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::spec::binary_row::{BinaryRow, Datum, Timestamp};
use crate::spec::types::{DataField, DataType};

/// Default of `partition.default-name`: the directory value for NULL / empty / blank values.
pub const DEFAULT_PARTITION_NAME: &str = "__DEFAULT_PARTITION__";

const MILLIS_PER_DAY: i64 = 86_400_000;

/// Whether Java's `PartitionPathUtils` escapes this character (only chars below 128).
fn needs_escaping(c: char) -> bool {
    matches!(
        c,
        '\u{00}'
            ..='\u{1F}'
                | '"'
                | '#'
                | '%'
                | '\''
                | '*'
                | '/'
                | ':'
                | '='
                | '?'
                | '\\'
                | '\u{7F}'
                | '{'
                | '}'
                | '['
                | ']'
                | '^'
    )
}

/// Java `PartitionPathUtils.escapePathName`: each character of the escape set becomes `%XY`
/// (two upper-case hex digits); everything else, including spaces and non-ASCII, is kept.
/// (Java throws on an empty string; this returns it unchanged, [`partition_path`] rejects it.)
pub fn escape_path_name(s: &str) -> String {
    if !s.chars().any(needs_escaping) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escaping(c) {
            let _ = write!(out, "%{:02X}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// Java `Integer.parseInt(s, 16)` for a two-character string: an optional sign then hex digits.
fn java_parse_hex2(a: char, b: char) -> Option<i32> {
    let hex = |c: char| c.to_digit(16).map(|d| d as i32);
    match a {
        '+' => hex(b),
        '-' => hex(b).map(|d| -d),
        _ => Some(hex(a)? * 16 + hex(b)?),
    }
}

/// Java `PartitionPathUtils.unescapePathName`: `%XY` with a valid hex pair becomes that
/// character; anything else is kept literally.
pub fn unescape_path_name(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '%' && i + 2 < chars.len() {
            if let Some(code) = java_parse_hex2(chars[i + 1], chars[i + 2]) {
                if code >= 0 {
                    if let Some(ch) = char::from_u32(code as u32) {
                        out.push(ch);
                        i += 3;
                        continue;
                    }
                }
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Java `Character.isWhitespace` (plus U+180E, which old JDKs count).
fn is_java_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | '\u{001C}'..='\u{0020}'
            | '\u{1680}'
            | '\u{180E}'
            | '\u{2000}'..='\u{2006}'
            | '\u{2008}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{205F}'
            | '\u{3000}'
    )
}

/// Java `StringUtils.isNullOrWhitespaceOnly` for a present string: empty or only whitespace.
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_java_whitespace)
}

/// Refuses partition key types whose directory names cannot be reproduced (FLOAT, DOUBLE,
/// BINARY and nested types) with an "unsupported partition type" [`Error::Unsupported`].
pub fn check_partition_field(field: &DataField) -> Result<()> {
    let what = match &field.data_type {
        DataType::Float => "FLOAT",
        DataType::Double => "DOUBLE",
        DataType::Binary => "BINARY/VARBINARY/BYTES",
        DataType::Other(name) => name.as_str(),
        _ => return Ok(()),
    };
    Err(Error::Unsupported(format!(
        "unsupported partition type {what} of partition key '{}': its directory name cannot be computed reliably",
        field.name
    )))
}

// ------------------------------------------------------------------------------------------
// Date/time helpers reproducing Java's formatting.
// ------------------------------------------------------------------------------------------

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Java `(char) ('0' + i)` for a possibly out-of-range digit.
fn java_digit_char(d: i32) -> char {
    char::from_u32(('0' as i32).wrapping_add(d) as u32 & 0xFFFF).unwrap_or('\u{FFFD}')
}

fn int2(buf: &mut String, i: i32) {
    buf.push(java_digit_char((i / 10) % 10));
    buf.push(java_digit_char(i % 10));
}

fn int4(buf: &mut String, i: i32) {
    buf.push(java_digit_char((i / 1000) % 10));
    buf.push(java_digit_char((i / 100) % 10));
    buf.push(java_digit_char((i / 10) % 10));
    buf.push(java_digit_char(i % 10));
}

/// Java `DateTimeUtils.formatDate` (cast DATE → STRING): `yyyy-MM-dd`.
pub fn format_date(epoch_days: i32) -> String {
    // Julian-day arithmetic with Java int semantics.
    let julian = epoch_days.wrapping_add(2_440_588);
    let j = julian.wrapping_add(32_044);
    let g = j / 146_097;
    let dg = j % 146_097;
    let c = (dg / 36_524 + 1) * 3 / 4;
    let dc = dg - c * 36_524;
    let b = dc / 1461;
    let db = dc % 1461;
    let a = (db / 365 + 1) * 3 / 4;
    let da = db - a * 365;
    let y = g
        .wrapping_mul(400)
        .wrapping_add(c * 100)
        .wrapping_add(b * 4)
        .wrapping_add(a);
    let m = (da * 5 + 308) / 153 - 2;
    let d = da - (m + 4) * 153 / 5 + 122;
    let year = y.wrapping_sub(4800).wrapping_add((m + 2) / 12);
    let month = (m + 2) % 12 + 1;
    let day = d + 1;
    let mut buf = String::with_capacity(10);
    int4(&mut buf, year);
    buf.push('-');
    int2(&mut buf, month);
    buf.push('-');
    int2(&mut buf, day);
    buf
}

/// Java `DateTimeUtils.formatTimestampMillis` (cast TIME(p) → STRING): `HH:mm:ss[.f]`.
pub fn format_time(millis_of_day: i32, precision: u32) -> String {
    let mut time = millis_of_day as i64;
    if time < 0 {
        time = time.rem_euclid(MILLIS_PER_DAY);
    }
    let time = time as i32;
    let h = time / 3_600_000;
    let time2 = time % 3_600_000;
    let m = time2 / 60_000;
    let time3 = time2 % 60_000;
    let s = time3 / 1000;
    let mut ms = time3 % 1000;
    let mut buf = String::with_capacity(12);
    int2(&mut buf, h);
    buf.push(':');
    int2(&mut buf, m);
    buf.push(':');
    int2(&mut buf, s);
    let mut precision = precision;
    if precision > 0 {
        buf.push('.');
        while precision > 0 {
            buf.push(java_digit_char(ms / 100));
            ms = (ms % 100) * 10;
            if ms == 0 {
                break;
            }
            precision -= 1;
        }
    }
    buf
}

/// Splits a timestamp into (epoch day, nano of day) like Paimon `Timestamp.toLocalDateTime`.
fn split_timestamp(ts: Timestamp) -> (i64, i64) {
    let day = ts.millis.div_euclid(MILLIS_PER_DAY);
    let time = ts.millis.rem_euclid(MILLIS_PER_DAY);
    (day, time * 1_000_000 + ts.nanos_of_milli as i64)
}

/// Java `LocalDate.toString()` year rendering.
fn push_java_year(buf: &mut String, year: i64) {
    if year.abs() < 1000 {
        if year < 0 {
            let _ = write!(buf, "-{:04}", -year);
        } else {
            let _ = write!(buf, "{year:04}");
        }
    } else {
        if year > 9999 {
            buf.push('+');
        }
        let _ = write!(buf, "{year}");
    }
}

/// Java `LocalDateTime.toString()` of a Paimon timestamp (legacy partition names and
/// `Timestamp.toString()`): `yyyy-MM-ddTHH:mm[:ss[.SSS|.SSSSSS|.SSSSSSSSS]]`.
pub fn format_timestamp_legacy(ts: Timestamp) -> String {
    let (day, nano_of_day) = split_timestamp(ts);
    let (y, mo, d) = civil_from_days(day);
    let hour = nano_of_day / 3_600_000_000_000;
    let minute = (nano_of_day / 60_000_000_000) % 60;
    let second = (nano_of_day / 1_000_000_000) % 60;
    let nano = nano_of_day % 1_000_000_000;
    let mut buf = String::with_capacity(29);
    push_java_year(&mut buf, y);
    let _ = write!(buf, "-{mo:02}-{d:02}T{hour:02}:{minute:02}");
    if second > 0 || nano > 0 {
        let _ = write!(buf, ":{second:02}");
        if nano > 0 {
            if nano % 1_000_000 == 0 {
                let _ = write!(buf, ".{:03}", nano / 1_000_000);
            } else if nano % 1000 == 0 {
                let _ = write!(buf, ".{:06}", nano / 1000);
            } else {
                let _ = write!(buf, ".{nano:09}");
            }
        }
    }
    buf
}

/// Java `DateTimeUtils.formatTimestamp(ts, precision)` (cast TIMESTAMP(p) → STRING):
/// `yyyy-MM-dd HH:mm:ss` plus the 9-digit fraction with trailing zeros stripped down to at
/// least `precision` digits (none when it ends up empty).
pub fn format_timestamp(ts: Timestamp, precision: u32) -> String {
    let (day, nano_of_day) = split_timestamp(ts);
    let (y, mo, d) = civil_from_days(day);
    let hour = (nano_of_day / 3_600_000_000_000) as i32;
    let minute = ((nano_of_day / 60_000_000_000) % 60) as i32;
    let second = ((nano_of_day / 1_000_000_000) % 60) as i32;
    let nano = nano_of_day % 1_000_000_000;
    let mut fraction = format!("{nano:09}");
    while fraction.len() > precision as usize && fraction.ends_with('0') {
        fraction.pop();
    }
    let mut buf = String::with_capacity(30);
    int4(&mut buf, y as i32);
    buf.push('-');
    int2(&mut buf, mo as i32);
    buf.push('-');
    int2(&mut buf, d as i32);
    buf.push(' ');
    int2(&mut buf, hour);
    buf.push(':');
    int2(&mut buf, minute);
    buf.push(':');
    int2(&mut buf, second);
    if !fraction.is_empty() {
        buf.push('.');
        buf.push_str(&fraction);
    }
    buf
}

/// Java `Float.toString` / `Double.toString` from the shortest round-trip digits (JDK 19+
/// behaviour; older JDKs occasionally print one more digit).
fn java_float_string(digits_exp: String, negative: bool, is_zero: bool) -> String {
    if is_zero {
        return if negative { "-0.0" } else { "0.0" }.to_string();
    }
    // `digits_exp` is Rust's `{:e}` output of the absolute value: `d[.ddd]e<exp>`.
    let (mantissa, exp) = digits_exp.split_once('e').unwrap_or((&digits_exp, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if negative { "-" } else { "" };
    if (-3..7).contains(&exp) {
        // plain notation with at least one fractional digit
        let point = exp + 1; // digits before the decimal point
        let (int_part, frac_part) = if point <= 0 {
            (
                "0".to_string(),
                format!("{}{}", "0".repeat((-point) as usize), digits),
            )
        } else if (point as usize) >= digits.len() {
            (
                format!("{}{}", digits, "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            let (a, b) = digits.split_at(point as usize);
            (a.to_string(), b.to_string())
        };
        let frac_part = if frac_part.is_empty() {
            "0".to_string()
        } else {
            frac_part
        };
        format!("{sign}{int_part}.{frac_part}")
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

fn java_f64_string(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    java_float_string(format!("{:e}", v.abs()), v.is_sign_negative(), v == 0.0)
}

fn java_f32_string(v: f32) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    java_float_string(format!("{:e}", v.abs()), v.is_sign_negative(), v == 0.0)
}

/// Java's internal `toString()` of a partition value (what legacy partition names and the
/// `values-time` partition expiry use): strings as is, numbers in decimal, DATE as the
/// epoch-day integer, TIME as millis of day, DECIMAL plain, TIMESTAMP/LTZ as
/// `LocalDateTime.toString()`, FLOAT/DOUBLE as `Float/Double.toString()`. BINARY has no stable
/// string (`[B@hash`) and is refused.
pub fn internal_string(value: &Datum<'_>) -> Result<String> {
    Ok(match value {
        Datum::Boolean(v) => v.to_string(),
        Datum::TinyInt(v) => v.to_string(),
        Datum::SmallInt(v) => v.to_string(),
        Datum::Int(v) | Datum::Date(v) | Datum::Time(v) => v.to_string(),
        Datum::BigInt(v) => v.to_string(),
        Datum::Float(v) => java_f32_string(*v),
        Datum::Double(v) => java_f64_string(*v),
        Datum::Decimal(d) => d.to_string(),
        Datum::String(s) => s.to_string(),
        Datum::Timestamp(ts) | Datum::TimestampLtz(ts) => format_timestamp_legacy(*ts),
        Datum::Binary(_) => {
            return Err(Error::Unsupported(
                "BINARY values have no stable Java toString()".to_string(),
            ))
        }
    })
}

/// Computes partition values, directory names and internal strings for one table's partition
/// keys. Construct once per table and reuse.
#[derive(Debug, Clone)]
pub struct PartitionComputer {
    fields: Vec<DataField>,
    default_name: String,
    legacy_name: bool,
    ltz_offset_seconds: Option<i32>,
}

impl PartitionComputer {
    /// `fields` are the partition keys in order (with their types from the schema),
    /// `default_name` is `partition.default-name`, `legacy_name` is `partition.legacy-name`.
    /// Fails with an "unsupported partition type" error for FLOAT/DOUBLE/BINARY/nested keys.
    pub fn new(fields: Vec<DataField>, default_name: &str, legacy_name: bool) -> Result<Self> {
        for f in &fields {
            check_partition_field(f)?;
        }
        Ok(PartitionComputer {
            fields,
            default_name: default_name.to_string(),
            legacy_name,
            ltz_offset_seconds: None,
        })
    }

    /// Sets the UTC offset of the writer JVM's default time zone, which Java applies to
    /// TIMESTAMP WITH LOCAL TIME ZONE keys when `partition.legacy-name = false`. Without it such
    /// keys are refused, since a wrong zone yields a wrong directory.
    pub fn with_local_time_zone_offset(mut self, offset_seconds: i32) -> Self {
        self.ltz_offset_seconds = Some(offset_seconds);
        self
    }

    /// The partition keys.
    pub fn fields(&self) -> &[DataField] {
        &self.fields
    }

    /// `partition.default-name`: the directory value of NULL, empty and blank values, and the
    /// spec value that names NULL.
    pub fn default_name(&self) -> &str {
        &self.default_name
    }

    /// The text of one non-NULL value as its partition directory shows it (before escaping and
    /// before blank values become the default name): legacy names use Java's `toString()`,
    /// others the cast-to-string rules.
    pub fn value_string(&self, field: &DataField, value: &Datum<'_>) -> Result<String> {
        self.spec().format_value(field, value)
    }

    /// The decoded partition row of a serialized partition (`_PARTITION` bytes), checked to
    /// have one field per partition key.
    pub fn row<'a>(&self, partition: &'a [u8]) -> Result<BinaryRow<'a>> {
        self.spec().row(partition)
    }

    fn spec(&self) -> Spec<'_> {
        Spec {
            fields: &self.fields,
            default_name: &self.default_name,
            legacy_name: self.legacy_name,
            ltz_offset_seconds: self.ltz_offset_seconds,
        }
    }

    /// Partition values as directory strings, in key order: NULL, empty and whitespace-only
    /// values become the default name (so `''` and NULL share a directory).
    pub fn values_of_row(&self, row: &BinaryRow<'_>) -> Result<Vec<(String, String)>> {
        self.spec().values_of_row(row)
    }

    /// [`PartitionComputer::values_of_row`] of a serialized partition (`_PARTITION` bytes).
    pub fn values(&self, partition: &[u8]) -> Result<Vec<(String, String)>> {
        self.spec().values(partition)
    }

    /// The partition path `k1=v1/k2=v2/` of a serialized partition ("" when unpartitioned).
    pub fn path(&self, partition: &[u8]) -> Result<String> {
        self.spec().path(partition)
    }

    /// Java's internal `toString()` of each partition value (`None` for NULL), in key order.
    pub fn internal_strings(&self, partition: &[u8]) -> Result<Vec<(String, Option<String>)>> {
        self.spec().internal_strings(partition)
    }
}

/// Borrowed form of a [`PartitionComputer`] (fields already checked).
struct Spec<'f> {
    fields: &'f [DataField],
    default_name: &'f str,
    legacy_name: bool,
    ltz_offset_seconds: Option<i32>,
}

impl Spec<'_> {
    fn row<'a>(&self, partition: &'a [u8]) -> Result<BinaryRow<'a>> {
        let row = BinaryRow::from_serialized(partition)?;
        if row.arity() != self.fields.len() {
            return Err(Error::malformed(
                "partition",
                "<BinaryRow>",
                format!(
                    "partition row has {} fields but the table has {} partition keys",
                    row.arity(),
                    self.fields.len()
                ),
            ));
        }
        Ok(row)
    }

    fn format_value(&self, field: &DataField, value: &Datum<'_>) -> Result<String> {
        if self.legacy_name {
            return internal_string(value);
        }
        Ok(match (value, &field.data_type) {
            (Datum::Date(d), _) => format_date(*d),
            (Datum::Time(t), DataType::Time { precision }) => format_time(*t, *precision),
            (Datum::Timestamp(ts), DataType::Timestamp { precision }) => {
                format_timestamp(*ts, *precision)
            }
            (Datum::TimestampLtz(ts), DataType::TimestampLtz { precision }) => {
                let Some(offset) = self.ltz_offset_seconds else {
                    return Err(Error::Unsupported(format!(
                        "partition key '{}' is TIMESTAMP WITH LOCAL TIME ZONE with partition.legacy-name = false: \
                         its directory name depends on the writer's JVM time zone",
                        field.name
                    )));
                };
                let shifted = Timestamp {
                    millis: ts.millis.saturating_add(offset as i64 * 1000),
                    nanos_of_milli: ts.nanos_of_milli,
                };
                format_timestamp(shifted, *precision)
            }
            (v, _) => internal_string(v)?,
        })
    }

    fn values_of_row(&self, row: &BinaryRow<'_>) -> Result<Vec<(String, String)>> {
        let mut out = Vec::with_capacity(self.fields.len());
        for (i, field) in self.fields.iter().enumerate() {
            let value = match row.get_datum(i, &field.data_type)? {
                None => None,
                Some(d) => Some(self.format_value(field, &d)?),
            };
            let value = match value {
                Some(v) if !is_blank(&v) => v,
                _ => self.default_name.to_string(),
            };
            out.push((field.name.clone(), value));
        }
        Ok(out)
    }

    fn values(&self, partition: &[u8]) -> Result<Vec<(String, String)>> {
        let row = self.row(partition)?;
        self.values_of_row(&row)
    }

    fn path(&self, partition: &[u8]) -> Result<String> {
        if self.fields.is_empty() {
            return Ok(String::new());
        }
        partition_path_from_values(&self.values(partition)?)
    }

    fn internal_strings(&self, partition: &[u8]) -> Result<Vec<(String, Option<String>)>> {
        let row = self.row(partition)?;
        let mut out = Vec::with_capacity(self.fields.len());
        for (i, field) in self.fields.iter().enumerate() {
            let v = match row.get_datum(i, &field.data_type)? {
                None => None,
                Some(d) => Some(internal_string(&d)?),
            };
            out.push((field.name.clone(), v));
        }
        Ok(out)
    }
}

/// Partition values as directory strings (see [`PartitionComputer::values`]).
pub fn partition_values(
    partition: &[u8],
    fields: &[DataField],
    default_name: &str,
    legacy_name: bool,
) -> Result<Vec<(String, String)>> {
    spec(fields, default_name, legacy_name)?.values(partition)
}

/// The partition path `k1=v1/k2=v2/` (keys and values escaped, trailing slash) of serialized
/// partition bytes; "" for an unpartitioned table.
pub fn partition_path(
    partition: &[u8],
    fields: &[DataField],
    default_name: &str,
    legacy_name: bool,
) -> Result<String> {
    if fields.is_empty() {
        return Ok(String::new());
    }
    spec(fields, default_name, legacy_name)?.path(partition)
}

/// Java's internal `toString()` of each partition value (`None` for NULL): DATE as epoch days,
/// TIME as millis of day, TIMESTAMP as `LocalDateTime.toString()` (used by partition expiry).
pub fn partition_internal_strings(
    partition: &[u8],
    fields: &[DataField],
) -> Result<Vec<(String, Option<String>)>> {
    spec(fields, DEFAULT_PARTITION_NAME, true)?.internal_strings(partition)
}

fn spec<'f>(fields: &'f [DataField], default_name: &'f str, legacy_name: bool) -> Result<Spec<'f>> {
    for f in fields {
        check_partition_field(f)?;
    }
    Ok(Spec {
        fields,
        default_name,
        legacy_name,
        ltz_offset_seconds: None,
    })
}

/// Joins already formatted `(key, value)` pairs into `k1=v1/k2=v2/`, escaping both sides.
/// Empty keys or values are an error (Java refuses to escape them); no pairs give "".
pub fn partition_path_from_values(values: &[(String, String)]) -> Result<String> {
    let mut out = String::new();
    for (k, v) in values {
        if k.is_empty() || v.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "partition key and value must not be empty (key '{k}', value '{v}')"
            )));
        }
        out.push_str(&escape_path_name(k));
        out.push('=');
        out.push_str(&escape_path_name(v));
        out.push('/');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::binary_row::{BinaryRowWriter, Decimal};

    fn field(name: &str, data_type: DataType) -> DataField {
        DataField {
            id: 0,
            name: name.to_string(),
            data_type,
            nullable: true,
        }
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn row(fields: &[DataField], values: &[Option<Datum<'_>>]) -> Vec<u8> {
        let mut w = BinaryRowWriter::new(fields.len());
        for (i, (f, v)) in fields.iter().zip(values).enumerate() {
            w.write_datum(i, &f.data_type, v.as_ref()).unwrap();
        }
        w.finish()
    }

    #[test]
    fn escaping() {
        assert_eq!(escape_path_name("a/b"), "a%2Fb");
        assert_eq!(escape_path_name("x=y"), "x%3Dy");
        assert_eq!(escape_path_name("%41"), "%2541");
        assert_eq!(escape_path_name("héllo wörld 日本"), "héllo wörld 日本");
        assert_eq!(escape_path_name("a b"), "a b");
        assert_eq!(
            escape_path_name("\n\u{7f}{}[]^:?*\\\"#'"),
            "%0A%7F%7B%7D%5B%5D%5E%3A%3F%2A%5C%22%23%27"
        );
        assert_eq!(escape_path_name("plain-value_1.2"), "plain-value_1.2");
        assert_eq!(escape_path_name("\u{0}"), "%00");
    }

    #[test]
    fn unescaping() {
        assert_eq!(unescape_path_name("a%2Fb"), "a/b");
        assert_eq!(unescape_path_name("%2541"), "%41");
        assert_eq!(unescape_path_name("%41"), "A");
        assert_eq!(unescape_path_name("%4"), "%4");
        assert_eq!(unescape_path_name("%zz"), "%zz");
        assert_eq!(unescape_path_name("100%"), "100%");
        assert_eq!(unescape_path_name("%-1x"), "%-1x");
        assert_eq!(unescape_path_name("%+1"), "\u{1}");
        assert_eq!(unescape_path_name("日本%3D"), "日本=");
        for s in ["a/b", "x=y", "%41", "a b", "{x}", "日本"] {
            assert_eq!(unescape_path_name(&escape_path_name(s)), s);
        }
    }

    #[test]
    fn blank_detection() {
        assert!(is_blank(""));
        assert!(is_blank(" \t\n"));
        assert!(is_blank("\u{3000}"));
        assert!(!is_blank("\u{a0}")); // NBSP is not Java whitespace
        assert!(!is_blank(" a "));
    }

    #[test]
    fn string_and_int_partitions() {
        let fields = vec![field("dt", DataType::String), field("hr", DataType::Int)];
        let bytes = hex(
            "00000002 0000000000000000 0a00000018000000 0000000000000000 \
             323032342d30312d3031 000000000000",
        );
        assert_eq!(
            partition_path(&bytes, &fields, DEFAULT_PARTITION_NAME, true).unwrap(),
            "dt=2024-01-01/hr=0/"
        );
        assert_eq!(
            partition_values(&bytes, &fields, DEFAULT_PARTITION_NAME, false).unwrap(),
            vec![
                ("dt".to_string(), "2024-01-01".to_string()),
                ("hr".to_string(), "0".to_string())
            ]
        );
        // f1 = 10
        let f1 = vec![field("f1", DataType::Int)];
        let b = hex("00000001 0000000000000000 0a00000000000000");
        assert_eq!(
            partition_path(&b, &f1, DEFAULT_PARTITION_NAME, true).unwrap(),
            "f1=10/"
        );
        // unpartitioned
        assert_eq!(
            partition_path(&[0u8; 12], &[], DEFAULT_PARTITION_NAME, true).unwrap(),
            ""
        );
    }

    #[test]
    fn null_empty_and_blank_use_default_name() {
        let fields = vec![field("p", DataType::String)];
        for v in [None, Some(""), Some("   "), Some("\t")] {
            let b = row(&fields, &[v.map(|s| Datum::String(s.into()))]);
            assert_eq!(
                partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true).unwrap(),
                "p=__DEFAULT_PARTITION__/"
            );
            assert_eq!(
                partition_path(&b, &fields, "none", false).unwrap(),
                "p=none/"
            );
        }
        let b = row(&fields, &[Some(Datum::String("a/b".into()))]);
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true).unwrap(),
            "p=a%2Fb/"
        );
        let b = row(&fields, &[None]);
        assert_eq!(
            partition_internal_strings(&b, &fields).unwrap(),
            vec![("p".to_string(), None)]
        );
        // an empty default name is refused rather than producing "p=/"
        assert!(partition_path(&b, &fields, "", true).is_err());
    }

    #[test]
    fn integer_and_boolean_types() {
        let fields = vec![
            field("a", DataType::TinyInt),
            field("b", DataType::SmallInt),
            field("c", DataType::BigInt),
            field("d", DataType::Boolean),
        ];
        let b = row(
            &fields,
            &[
                Some(Datum::TinyInt(-1)),
                Some(Datum::SmallInt(300)),
                Some(Datum::BigInt(-9_000_000_000)),
                Some(Datum::Boolean(true)),
            ],
        );
        for legacy in [true, false] {
            assert_eq!(
                partition_path(&b, &fields, DEFAULT_PARTITION_NAME, legacy).unwrap(),
                "a=-1/b=300/c=-9000000000/d=true/"
            );
        }
    }

    #[test]
    fn date_legacy_and_not() {
        let fields = vec![field("d", DataType::Date)];
        let b = hex("00000001 0000000000000000 0b4d000000000000");
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true).unwrap(),
            "d=19723/"
        );
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, false).unwrap(),
            "d=2024-01-01/"
        );
        assert_eq!(
            partition_internal_strings(&b, &fields).unwrap(),
            vec![("d".to_string(), Some("19723".to_string()))]
        );
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(-1), "1969-12-31");
        assert_eq!(format_date(11016), "2000-02-29");
        assert_eq!(format_date(-719162), "0001-01-01");
    }

    #[test]
    fn time_formats() {
        let fields = vec![field("t", DataType::Time { precision: 3 })];
        let ms = (13 * 3600 + 5 * 60 + 7) * 1000 + 120;
        let b = row(&fields, &[Some(Datum::Time(ms))]);
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true).unwrap(),
            format!("t={ms}/")
        );
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, false).unwrap(),
            "t=13%3A05%3A07.12/"
        );
        assert_eq!(format_time(0, 0), "00:00:00");
        assert_eq!(format_time(0, 3), "00:00:00.0");
        assert_eq!(format_time(1_234, 1), "00:00:01.2");
        assert_eq!(format_time(1_234, 3), "00:00:01.234");
        assert_eq!(format_time(-1000, 0), "23:59:59");
    }

    #[test]
    fn decimal_formats() {
        let fields = vec![field(
            "m",
            DataType::Decimal {
                precision: 10,
                scale: 2,
            },
        )];
        let b = row(
            &fields,
            &[Some(Datum::Decimal(Decimal {
                unscaled: 1230,
                precision: 10,
                scale: 2,
            }))],
        );
        for legacy in [true, false] {
            assert_eq!(
                partition_path(&b, &fields, DEFAULT_PARTITION_NAME, legacy).unwrap(),
                "m=12.30/"
            );
        }
        let fields = vec![field(
            "m",
            DataType::Decimal {
                precision: 30,
                scale: 0,
            },
        )];
        let b = row(
            &fields,
            &[Some(Datum::Decimal(Decimal {
                unscaled: 123_456_789_012_345_678_901_234i128,
                precision: 30,
                scale: 0,
            }))],
        );
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true).unwrap(),
            "m=123456789012345678901234/"
        );
    }

    #[test]
    fn timestamp_formats() {
        // 2024-01-02 03:04:05.120 + 345 ns... as millis + nanos
        let base = 1_704_164_645_000i64; // 2024-01-02T03:04:05Z
        let ts = |millis: i64, nanos: i32| Timestamp {
            millis,
            nanos_of_milli: nanos,
        };
        assert_eq!(format_timestamp_legacy(ts(base, 0)), "2024-01-02T03:04:05");
        assert_eq!(
            format_timestamp_legacy(ts(base - 5000, 0)),
            "2024-01-02T03:04"
        );
        assert_eq!(
            format_timestamp_legacy(ts(base + 120, 0)),
            "2024-01-02T03:04:05.120"
        );
        assert_eq!(
            format_timestamp_legacy(ts(base + 120, 300_000)),
            "2024-01-02T03:04:05.120300"
        );
        assert_eq!(
            format_timestamp_legacy(ts(base + 120, 300_001)),
            "2024-01-02T03:04:05.120300001"
        );
        assert_eq!(
            format_timestamp_legacy(ts(-1, 0)),
            "1969-12-31T23:59:59.999"
        );
        assert_eq!(
            format_timestamp_legacy(ts(-62_198_755_200_000, 0)),
            "-0001-01-01T00:00"
        );
        assert_eq!(
            format_timestamp_legacy(ts(253_402_300_800_000, 0)),
            "+10000-01-01T00:00"
        );

        assert_eq!(format_timestamp(ts(base, 0), 0), "2024-01-02 03:04:05");
        assert_eq!(format_timestamp(ts(base, 0), 3), "2024-01-02 03:04:05.000");
        assert_eq!(
            format_timestamp(ts(base + 120, 0), 0),
            "2024-01-02 03:04:05.12"
        );
        assert_eq!(
            format_timestamp(ts(base + 120, 0), 6),
            "2024-01-02 03:04:05.120000"
        );
        assert_eq!(
            format_timestamp(ts(base + 120, 300_000), 3),
            "2024-01-02 03:04:05.1203"
        );

        let fields = vec![field("ts", DataType::Timestamp { precision: 3 })];
        let b = row(&fields, &[Some(Datum::Timestamp(ts(base, 0)))]);
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true).unwrap(),
            "ts=2024-01-02T03%3A04%3A05/"
        );
        assert_eq!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, false).unwrap(),
            "ts=2024-01-02 03%3A04%3A05.000/"
        );
        let fields9 = vec![field("ts", DataType::Timestamp { precision: 9 })];
        let b9 = row(&fields9, &[Some(Datum::Timestamp(ts(base + 1, 5)))]);
        assert_eq!(
            partition_values(&b9, &fields9, DEFAULT_PARTITION_NAME, false).unwrap()[0].1,
            "2024-01-02 03:04:05.001000005"
        );

        // LTZ: legacy needs no zone; non-legacy needs an explicit offset
        let ltz = vec![field("ts", DataType::TimestampLtz { precision: 3 })];
        let b = row(&ltz, &[Some(Datum::TimestampLtz(ts(base, 0)))]);
        assert_eq!(
            partition_path(&b, &ltz, DEFAULT_PARTITION_NAME, true).unwrap(),
            "ts=2024-01-02T03%3A04%3A05/"
        );
        assert!(matches!(
            partition_path(&b, &ltz, DEFAULT_PARTITION_NAME, false),
            Err(Error::Unsupported(_))
        ));
        let pc = PartitionComputer::new(ltz, DEFAULT_PARTITION_NAME, false)
            .unwrap()
            .with_local_time_zone_offset(8 * 3600);
        assert_eq!(pc.path(&b).unwrap(), "ts=2024-01-02 11%3A04%3A05.000/");
    }

    #[test]
    fn unsupported_partition_types() {
        for (t, name) in [
            (DataType::Float, "FLOAT"),
            (DataType::Double, "DOUBLE"),
            (DataType::Binary, "BINARY"),
        ] {
            let fields = vec![field("k", t)];
            let b = hex("00000001 0000000000000000 0000000000000000");
            let err = partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true).unwrap_err();
            match err {
                Error::Unsupported(msg) => {
                    assert!(msg.contains("unsupported partition type"), "{msg}");
                    assert!(msg.contains(name), "{msg}");
                    assert!(msg.contains("'k'"), "{msg}");
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn arity_mismatch_and_garbage() {
        let fields = vec![field("a", DataType::Int), field("b", DataType::Int)];
        let b = hex("00000001 0000000000000000 0a00000000000000");
        assert!(matches!(
            partition_path(&b, &fields, DEFAULT_PARTITION_NAME, true),
            Err(Error::Malformed { .. })
        ));
        assert!(partition_path(&[1, 2], &fields, DEFAULT_PARTITION_NAME, true).is_err());
    }

    #[test]
    fn java_float_strings() {
        assert_eq!(java_f64_string(1.0), "1.0");
        assert_eq!(java_f64_string(1e10), "1.0E10");
        assert_eq!(java_f64_string(1234567.0), "1234567.0");
        assert_eq!(java_f64_string(12345678.0), "1.2345678E7");
        assert_eq!(java_f64_string(0.001), "0.001");
        assert_eq!(java_f64_string(0.0001), "1.0E-4");
        assert_eq!(java_f64_string(-0.5), "-0.5");
        assert_eq!(java_f64_string(0.0), "0.0");
        assert_eq!(java_f64_string(100.0), "100.0");
        assert_eq!(java_f32_string(0.1), "0.1");
        assert_eq!(java_f32_string(1.5e-7), "1.5E-7");
        assert_eq!(internal_string(&Datum::Double(f64::NAN)).unwrap(), "NaN");
        assert!(internal_string(&Datum::Binary(vec![1u8].into())).is_err());
    }
}
