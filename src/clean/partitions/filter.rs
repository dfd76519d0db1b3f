//! Which partitions a drop applies to: caller specs (maps key → value text, possibly naming only
//! some keys) validated against the table's partition keys, or an exact set of partitions.
//!
//! A spec names partition *values*, read as Java's `convertSpecToInternalRow` reads them, and
//! is matched against the decoded partition row, never against the directory name:
//!
//! * the table's `partition.default-name` (`__DEFAULT_PARTITION__`) means NULL, and only NULL;
//! * any other text is a value of the key's type: for a string key the text itself, so `""`
//!   is the empty string only and `" "` one space only, although Paimon writes NULL, `''` and
//!   blank strings to the same directory `k=__DEFAULT_PARTITION__`;
//! * integers as Java's `Integer.valueOf` reads them (`007` is 7; surrounding spaces are
//!   allowed), booleans as `true/t/yes/y/1` and `false/f/no/n/0` in any case, DATE as
//!   `yyyy-M-d` or the epoch-day number (the legacy directory form), TIME as `H:m[:s[.fff]]` or
//!   the millisecond-of-day number, TIMESTAMP as `yyyy-M-d H:m:s[.f]` or `yyyy-M-dTH:m[:s[.f]]`
//!   (both directory forms), TIMESTAMP WITH LOCAL TIME ZONE the same, in this process's local
//!   time zone (Java: the JVM's), DECIMAL as a plain decimal number.
//!
//! Stricter than Java (an error instead of a guess): a DECIMAL with more fractional digits than
//! the key's scale (Java rounds) or more digits than its precision (Java turns it into NULL and
//! matches the NULL partition), an all-digit TIMESTAMP (Java reads epoch units), a local time
//! in a daylight-saving gap. A value that cannot be of the key's type is an error.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{Offset, TimeZone, Timelike};

use crate::error::{Error, Result};
use crate::spec::binary_row::{Datum, Timestamp};
use crate::spec::partition::{format_timestamp, PartitionComputer};
use crate::spec::time_text::{parse_date_days, parse_time_millis, parse_timestamp};
use crate::spec::types::{DataField, DataType};

/// The value a spec names for one key, in the partition row's representation.
#[derive(Debug, Clone, PartialEq)]
enum KeyValue {
    Null,
    String(String),
    Boolean(bool),
    Integer(i64),
    /// Unscaled at the key's scale.
    Decimal(i128),
    Date(i32),
    Time(i32),
    Timestamp(Timestamp),
}

impl KeyValue {
    /// Whether a decoded partition value (`None`: NULL) is this value.
    fn matches(&self, value: Option<&Datum<'_>>) -> bool {
        match (self, value) {
            (KeyValue::Null, None) => true,
            (KeyValue::String(s), Some(Datum::String(x))) => x.as_ref() == s.as_str(),
            (KeyValue::Boolean(b), Some(Datum::Boolean(x))) => b == x,
            (KeyValue::Integer(i), Some(Datum::TinyInt(x))) => *i == i64::from(*x),
            (KeyValue::Integer(i), Some(Datum::SmallInt(x))) => *i == i64::from(*x),
            (KeyValue::Integer(i), Some(Datum::Int(x))) => *i == i64::from(*x),
            (KeyValue::Integer(i), Some(Datum::BigInt(x))) => i == x,
            (KeyValue::Decimal(u), Some(Datum::Decimal(d))) => *u == d.unscaled,
            (KeyValue::Date(a), Some(Datum::Date(b))) => a == b,
            (KeyValue::Time(a), Some(Datum::Time(b))) => a == b,
            (KeyValue::Timestamp(a), Some(Datum::Timestamp(b) | Datum::TimestampLtz(b))) => a == b,
            _ => false,
        }
    }
}

/// Decides whether a serialized partition is dropped. Results are cached per partition.
#[derive(Debug)]
pub(crate) struct PartitionFilter {
    computer: PartitionComputer,
    kind: FilterKind,
    cache: HashMap<Vec<u8>, bool>,
}

#[derive(Debug)]
enum FilterKind {
    /// OR of specs; each spec an AND of (key index, value).
    Specs(Vec<Vec<(usize, KeyValue)>>),
    /// Exactly these serialized partitions.
    Exact(HashSet<Vec<u8>>),
}

fn invalid(msg: String) -> Error {
    Error::InvalidArgument(msg)
}

/// A TIMESTAMP(`precision`) wall-clock text, its fraction cut to the precision as Java does.
fn wall_clock(text: &str, precision: u32) -> Option<chrono::NaiveDateTime> {
    let t = parse_timestamp(text.trim())?;
    let unit = 10u32.pow(9u32.saturating_sub(precision.min(9)));
    t.with_nanosecond(t.nanosecond() / unit * unit)
}

fn timestamp_of(epoch_millis: i64, nanosecond: u32) -> Timestamp {
    Timestamp {
        millis: epoch_millis,
        nanos_of_milli: (nanosecond % 1_000_000) as i32,
    }
}

/// A plain decimal text as the unscaled value at `scale`, or `None` when it is not one, needs
/// rounding or has more than `precision` digits.
fn decimal(text: &str, precision: u32, scale: u32) -> Option<i128> {
    let t = text.trim();
    let (negative, t) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (int_part, frac) = t.split_once('.').unwrap_or((t, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() && frac.is_empty() || !all_digits(int_part) || !all_digits(frac) {
        return None;
    }
    let scale = scale as usize;
    let (kept, dropped) = frac.split_at(frac.len().min(scale));
    if dropped.bytes().any(|b| b != b'0') {
        return None;
    }
    let digits = format!("{int_part}{kept}{}", "0".repeat(scale - kept.len()));
    let significant = digits.trim_start_matches('0');
    if significant.len() > precision as usize {
        return None;
    }
    let unscaled: i128 = if significant.is_empty() {
        0
    } else {
        significant.parse().ok()?
    };
    Some(if negative { -unscaled } else { unscaled })
}

/// The value a spec text names for a key of `field`'s type (Java `convertSpecToInternalRow`).
fn spec_value(field: &DataField, value: &str, default_name: &str) -> Result<KeyValue> {
    if value == default_name {
        return Ok(KeyValue::Null);
    }
    let bad = || {
        invalid(format!(
            "partition value '{value}' is not a valid {:?} for key '{}' (NULL is written \
             '{default_name}')",
            field.data_type, field.name
        ))
    };
    let int_in = |min: i64, max: i64| -> Result<KeyValue> {
        let v: i64 = value.trim().parse().map_err(|_| bad())?;
        if v < min || v > max {
            return Err(bad());
        }
        Ok(KeyValue::Integer(v))
    };
    Ok(match &field.data_type {
        DataType::String => KeyValue::String(value.to_string()),
        DataType::TinyInt => int_in(i8::MIN.into(), i8::MAX.into())?,
        DataType::SmallInt => int_in(i16::MIN.into(), i16::MAX.into())?,
        DataType::Int => int_in(i32::MIN.into(), i32::MAX.into())?,
        DataType::BigInt => int_in(i64::MIN, i64::MAX)?,
        DataType::Boolean => match value.trim().to_ascii_lowercase().as_str() {
            "true" | "t" | "yes" | "y" | "1" => KeyValue::Boolean(true),
            "false" | "f" | "no" | "n" | "0" => KeyValue::Boolean(false),
            _ => return Err(bad()),
        },
        DataType::Decimal { precision, scale } => {
            KeyValue::Decimal(decimal(value, *precision, *scale).ok_or_else(bad)?)
        }
        DataType::Date => KeyValue::Date(parse_date_days(value).ok_or_else(bad)?),
        DataType::Time { .. } => KeyValue::Time(parse_time_millis(value).ok_or_else(bad)?),
        DataType::Timestamp { precision } => {
            let t = wall_clock(value, *precision).ok_or_else(bad)?;
            KeyValue::Timestamp(timestamp_of(t.and_utc().timestamp_millis(), t.nanosecond()))
        }
        DataType::TimestampLtz { precision } => {
            let t = wall_clock(value, *precision).ok_or_else(bad)?;
            let instant = chrono::Local
                .from_local_datetime(&t)
                .earliest()
                .ok_or_else(|| {
                    invalid(format!(
                        "partition value '{value}' of key '{}' does not exist in the local time \
                         zone (a daylight-saving gap)",
                        field.name
                    ))
                })?;
            KeyValue::Timestamp(timestamp_of(instant.timestamp_millis(), t.nanosecond()))
        }
        DataType::Float | DataType::Double | DataType::Binary | DataType::Other(_) => {
            return Err(Error::Unsupported(format!(
                "partition key '{}' of type {:?} cannot be matched",
                field.name, field.data_type
            )))
        }
    })
}

impl PartitionFilter {
    /// A filter from caller specs (values read as in the module docs, the computer's default
    /// name meaning NULL). Errors ([`Error::InvalidArgument`]): no specs, an empty spec, an
    /// unpartitioned table, a key that is not a partition key, a value that cannot be of its
    /// key's type.
    pub fn from_specs(
        computer: PartitionComputer,
        specs: &[BTreeMap<String, String>],
    ) -> Result<Self> {
        let fields = computer.fields().to_vec();
        if fields.is_empty() {
            return Err(invalid(
                "the table is not partitioned: there are no partitions to drop".into(),
            ));
        }
        if specs.is_empty() {
            return Err(invalid("no partition given".into()));
        }
        let keys: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        let mut out = Vec::with_capacity(specs.len());
        for spec in specs {
            if spec.is_empty() {
                return Err(invalid(
                    "an empty partition spec would match every partition; name at least one key"
                        .into(),
                ));
            }
            let mut conds = Vec::with_capacity(spec.len());
            for (k, v) in spec {
                let idx = keys.iter().position(|x| x == k).ok_or_else(|| {
                    invalid(format!(
                        "'{k}' is not a partition key (partition keys: {})",
                        keys.join(", ")
                    ))
                })?;
                conds.push((idx, spec_value(&fields[idx], v, computer.default_name())?));
            }
            out.push(conds);
        }
        Ok(PartitionFilter {
            computer,
            kind: FilterKind::Specs(out),
            cache: HashMap::new(),
        })
    }

    /// A filter matching exactly these serialized partitions.
    pub fn exact(computer: PartitionComputer, partitions: HashSet<Vec<u8>>) -> Self {
        PartitionFilter {
            computer,
            kind: FilterKind::Exact(partitions),
            cache: HashMap::new(),
        }
    }

    /// Whether `partition` is dropped.
    pub fn matches(&mut self, partition: &[u8]) -> Result<bool> {
        if let Some(m) = self.cache.get(partition) {
            return Ok(*m);
        }
        let m = match &self.kind {
            FilterKind::Exact(set) => set.contains(partition),
            FilterKind::Specs(specs) => {
                let row = self.computer.row(partition)?;
                let values = self
                    .computer
                    .fields()
                    .iter()
                    .enumerate()
                    .map(|(i, f)| row.get_datum(i, &f.data_type))
                    .collect::<Result<Vec<_>>>()?;
                specs.iter().any(|conds| {
                    conds
                        .iter()
                        .all(|(i, v)| values.get(*i).is_some_and(|x| v.matches(x.as_ref())))
                })
            }
        };
        self.cache.insert(partition.to_vec(), m);
        Ok(m)
    }

    /// The partition computer the filter decodes with.
    pub fn computer(&self) -> &PartitionComputer {
        &self.computer
    }
}

/// Whether a string value must be quoted to be told apart in a report: empty, blank at either
/// end, starting or ending with a quote, `NULL` in any case, or the default name.
fn needs_quotes(s: &str, default_name: &str) -> bool {
    s.is_empty()
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace)
        || s.starts_with('\'')
        || s.ends_with('\'')
        || s.eq_ignore_ascii_case("null")
        || s == default_name
}

/// How a report shows one partition: its values by key as spec texts (the text that, given
/// back as a spec, names exactly this value: the default name for NULL, a string key's value
/// verbatim, other types in their directory form), and a display name `k=v/k2=v2` in which NULL
/// is `NULL` and empty, blank or otherwise ambiguous strings are quoted (`k=''`, `k=' '`).
pub(crate) fn describe(
    computer: &PartitionComputer,
    partition: &[u8],
) -> Result<(BTreeMap<String, String>, String)> {
    let row = computer.row(partition)?;
    let default_name = computer.default_name();
    let mut spec = BTreeMap::new();
    let mut shown = Vec::with_capacity(computer.fields().len());
    for (i, field) in computer.fields().iter().enumerate() {
        let (text, display) = match row.get_datum(i, &field.data_type)? {
            None => (default_name.to_string(), "NULL".to_string()),
            Some(Datum::String(s)) => {
                let display = if needs_quotes(&s, default_name) {
                    format!("'{s}'")
                } else {
                    s.to_string()
                };
                (s.into_owned(), display)
            }
            Some(Datum::TimestampLtz(ts)) => {
                // The local wall clock, which is how a spec names it.
                let precision = match field.data_type {
                    DataType::TimestampLtz { precision } => precision,
                    _ => 9,
                };
                let offset_ms = chrono::DateTime::from_timestamp_millis(ts.millis)
                    .map(|t| {
                        i64::from(
                            chrono::Local
                                .offset_from_utc_datetime(&t.naive_utc())
                                .fix()
                                .local_minus_utc(),
                        ) * 1000
                    })
                    .unwrap_or(0);
                let local = Timestamp {
                    millis: ts.millis.saturating_add(offset_ms),
                    nanos_of_milli: ts.nanos_of_milli,
                };
                let text = format_timestamp(local, precision);
                (text.clone(), text)
            }
            Some(d) => {
                let text = computer.value_string(field, &d)?;
                (text.clone(), text)
            }
        };
        shown.push(format!("{}={display}", field.name));
        spec.insert(field.name.clone(), text);
    }
    Ok((spec, shown.join("/")))
}

/// Parses a CLI partition spec `k=v[,k2=v2]` into key → value text (see [`PartitionFilter`] for
/// how the text is read; the table's `partition.default-name` means NULL).
///
/// As Java's `ParameterUtils.parseCommaSeparatedKeyValues`: items are split on `,`, each on its
/// first `=`, and keys and values are trimmed, so `k=` is the empty string. Beyond Java: a
/// backslash escapes the next character (`\,`, `\=`, `\'`, `\\`, `\ ` for a kept space), and a
/// value in single quotes is taken verbatim, so `k=''` is the empty string and `k=' '` one
/// space (Java would read the quote characters as part of the value). Refused (where Java would
/// guess): an empty spec, an item without `=`, an empty or repeated key, a value with an
/// unbalanced leading or trailing quote, and an unquoted `NULL` (write the default partition
/// name for NULL, or `'NULL'` for the string).
#[cfg(any(test, feature = "internal-api"))]
pub fn parse_partition_spec(text: &str) -> Result<BTreeMap<String, String>> {
    let bad = |m: &str| invalid(format!("partition spec '{text}': {m}"));
    if text.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    // Characters with whether they were escaped, split into items on unescaped commas.
    let mut items: Vec<Vec<(char, bool)>> = vec![Vec::new()];
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let current = items.last_mut().ok_or_else(|| bad("internal"))?;
        match c {
            '\\' => current.push((
                chars
                    .next()
                    .ok_or_else(|| bad("ends with a lone backslash"))?,
                true,
            )),
            ',' => items.push(Vec::new()),
            other => current.push((other, false)),
        }
    }
    let trim = |mut s: &[(char, bool)]| -> Vec<(char, bool)> {
        while let [(c, false), rest @ ..] = s {
            if !c.is_whitespace() {
                break;
            }
            s = rest;
        }
        while let [rest @ .., (c, false)] = s {
            if !c.is_whitespace() {
                break;
            }
            s = rest;
        }
        s.to_vec()
    };
    let text_of = |s: &[(char, bool)]| s.iter().map(|(c, _)| *c).collect::<String>();
    let mut out = BTreeMap::new();
    for item in items {
        let eq = item
            .iter()
            .position(|&(c, escaped)| c == '=' && !escaped)
            .ok_or_else(|| bad(&format!("'{}' is not key=value", text_of(&item))))?;
        let key = text_of(&trim(&item[..eq]));
        if key.is_empty() {
            return Err(bad("empty key"));
        }
        let raw = trim(&item[eq + 1..]);
        let quote = |i: usize| raw.get(i) == Some(&('\'', false));
        let value = if raw.len() >= 2 && quote(0) && quote(raw.len() - 1) {
            text_of(&raw[1..raw.len() - 1])
        } else if quote(0) || (!raw.is_empty() && quote(raw.len() - 1)) {
            return Err(bad(&format!(
                "the value of '{key}' has an unbalanced quote (quote the whole value, or \
                 escape the quote as \\')"
            )));
        } else {
            let v = text_of(&raw);
            if v.eq_ignore_ascii_case("null") && raw.iter().all(|(_, escaped)| !escaped) {
                return Err(bad(&format!(
                    "'{key}={v}' is ambiguous: write the table's default partition name \
                     (partition.default-name, __DEFAULT_PARTITION__ unless set) for NULL, or \
                     '{v}' in quotes for the string"
                )));
            }
            v
        };
        if out.insert(key.clone(), value).is_some() {
            return Err(bad(&format!("key '{key}' given twice")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::binary_row::{BinaryRowWriter, Decimal};

    const DEFAULT: &str = "__DEFAULT_PARTITION__";

    fn f(name: &str, t: DataType) -> DataField {
        DataField {
            id: 0,
            name: name.into(),
            data_type: t,
            nullable: true,
        }
    }

    fn computer() -> PartitionComputer {
        PartitionComputer::new(
            vec![f("dt", DataType::String), f("hr", DataType::Int)],
            DEFAULT,
            true,
        )
        .unwrap()
    }

    fn part(dt: Option<&str>, hr: i32) -> Vec<u8> {
        let mut w = BinaryRowWriter::new(2);
        match dt {
            Some(s) => w.write_string(0, s).unwrap(),
            None => w.set_null_at(0).unwrap(),
        }
        w.write_int(1, hr).unwrap();
        w.finish()
    }

    fn spec(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn filter(specs: &[BTreeMap<String, String>]) -> Result<PartitionFilter> {
        PartitionFilter::from_specs(computer(), specs)
    }

    #[test]
    fn full_partial_and_escaped() {
        let mut fl = filter(&[spec(&[("dt", "a/b"), ("hr", "007")])]).unwrap();
        assert!(fl.matches(&part(Some("a/b"), 7)).unwrap());
        assert!(!fl.matches(&part(Some("a/b"), 8)).unwrap());
        let mut fl = filter(&[spec(&[("hr", " 0 ")])]).unwrap();
        assert!(fl.matches(&part(Some("x=y"), 0)).unwrap());
        assert!(fl.matches(&part(None, 0)).unwrap());
        let mut fl = filter(&[spec(&[("dt", "%41")]), spec(&[("dt", "ü日")])]).unwrap();
        assert!(fl.matches(&part(Some("%41"), 0)).unwrap());
        assert!(!fl.matches(&part(Some("A"), 0)).unwrap());
        assert!(fl.matches(&part(Some("ü日"), 1)).unwrap());
    }

    /// NULL, '' and ' ' share the directory `dt=__DEFAULT_PARTITION__` but each spec names
    /// exactly one of them (Java `convertSpecToInternalRow`).
    #[test]
    fn null_empty_and_blank_are_distinct_values() {
        let rows = [None, Some(""), Some(" "), Some("a"), Some(DEFAULT)];
        for (text, expected) in [
            (DEFAULT, vec![true, false, false, false, true]),
            ("", vec![false, true, false, false, false]),
            (" ", vec![false, false, true, false, false]),
            ("a", vec![false, false, false, true, false]),
        ] {
            let mut fl = filter(&[spec(&[("dt", text)])]).unwrap();
            let got: Vec<bool> = rows
                .iter()
                .map(|r| fl.matches(&part(*r, 3)).unwrap())
                .collect();
            // A string that is literally the default name cannot be named apart from NULL,
            // in Java either: the default name always means NULL.
            let expected: Vec<bool> = expected
                .iter()
                .zip(rows)
                .map(|(e, r)| if r == Some(DEFAULT) { false } else { *e })
                .collect();
            assert_eq!(got, expected, "spec dt='{text}'");
        }
        // an INT key has no empty value: "" is an error, not NULL
        let err = filter(&[spec(&[("hr", "")])]).unwrap_err();
        assert!(err.to_string().contains(DEFAULT), "{err}");
        let mut fl = filter(&[spec(&[("hr", DEFAULT)])]).unwrap();
        assert!(!fl.matches(&part(None, 0)).unwrap());
    }

    #[test]
    fn bad_specs() {
        assert!(filter(&[]).is_err());
        assert!(filter(&[spec(&[])]).is_err());
        assert!(filter(&[spec(&[("nope", "1")])]).is_err());
        assert!(filter(&[spec(&[("hr", "abc")])]).is_err());
        assert!(filter(&[spec(&[("hr", "99999999999")])]).is_err());
        let unpartitioned = PartitionComputer::new(vec![], "d", true).unwrap();
        assert!(PartitionFilter::from_specs(unpartitioned, &[spec(&[("a", "1")])]).is_err());
    }

    fn value(t: DataType, text: &str) -> Result<KeyValue> {
        spec_value(&f("k", t), text, DEFAULT)
    }

    #[test]
    fn typed_values() {
        assert_eq!(
            value(DataType::Date, "2024-01-01").unwrap(),
            KeyValue::Date(19723)
        );
        assert_eq!(
            value(DataType::Date, "19723").unwrap(),
            KeyValue::Date(19723)
        );
        assert!(value(DataType::Date, "yesterday").is_err());
        assert_eq!(
            value(DataType::Boolean, " Yes").unwrap(),
            KeyValue::Boolean(true)
        );
        assert_eq!(
            value(DataType::Boolean, "0").unwrap(),
            KeyValue::Boolean(false)
        );
        assert!(value(DataType::Boolean, "maybe").is_err());
        let dec = DataType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(value(dec.clone(), "12.3").unwrap(), KeyValue::Decimal(1230));
        assert_eq!(
            value(dec.clone(), "-012.300").unwrap(),
            KeyValue::Decimal(-1230)
        );
        assert_eq!(
            value(dec.clone(), "999.99").unwrap(),
            KeyValue::Decimal(99999)
        );
        for bad in ["12.345", "1000", "", ".", "1e3", "--1"] {
            assert!(value(dec.clone(), bad).is_err(), "{bad}");
        }
        assert_eq!(
            value(DataType::Time { precision: 3 }, "13:05:07.12").unwrap(),
            KeyValue::Time(47_107_120)
        );
        let ts = DataType::Timestamp { precision: 3 };
        let expected = KeyValue::Timestamp(Timestamp {
            millis: 1_704_164_645_120,
            nanos_of_milli: 0,
        });
        // the non-legacy directory form, the legacy one, Java's cast form
        for text in [
            "2024-01-02 03:04:05.120",
            "2024-01-02T03:04:05.120",
            "2024-01-02 03:04:05.1209",
        ] {
            assert_eq!(value(ts.clone(), text).unwrap(), expected, "{text}");
        }
        assert!(value(ts, "1704164645120").is_err());
    }

    #[test]
    fn typed_rows_match_by_value() {
        let fields = vec![
            f("d", DataType::Date),
            f(
                "m",
                DataType::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
            f("ts", DataType::Timestamp { precision: 6 }),
        ];
        let c = PartitionComputer::new(fields.clone(), DEFAULT, false).unwrap();
        let mut w = BinaryRowWriter::new(3);
        w.write_datum(0, &fields[0].data_type, Some(&Datum::Date(19723)))
            .unwrap();
        w.write_datum(
            1,
            &fields[1].data_type,
            Some(&Datum::Decimal(Decimal {
                unscaled: 1230,
                precision: 10,
                scale: 2,
            })),
        )
        .unwrap();
        w.write_datum(
            2,
            &fields[2].data_type,
            Some(&Datum::Timestamp(Timestamp {
                millis: 1_704_164_645_120,
                nanos_of_milli: 300_000,
            })),
        )
        .unwrap();
        let row = w.finish();
        let s = spec(&[
            ("d", "2024-1-1"),
            ("m", "12.30"),
            ("ts", "2024-01-02 03:04:05.1203"),
        ]);
        let mut fl = PartitionFilter::from_specs(c.clone(), &[s]).unwrap();
        assert!(fl.matches(&row).unwrap());
        let mut fl = PartitionFilter::from_specs(c.clone(), &[spec(&[("m", "12.31")])]).unwrap();
        assert!(!fl.matches(&row).unwrap());
        let (values, name) = describe(&c, &row).unwrap();
        assert_eq!(
            values,
            spec(&[
                ("d", "2024-01-01"),
                ("m", "12.30"),
                ("ts", "2024-01-02 03:04:05.120300")
            ])
        );
        assert_eq!(name, "d=2024-01-01/m=12.30/ts=2024-01-02 03:04:05.120300");
        // the described values name the partition again
        let mut fl = PartitionFilter::from_specs(c, &[values]).unwrap();
        assert!(fl.matches(&row).unwrap());
    }

    #[test]
    fn reports_tell_null_empty_and_blank_apart() {
        let c = computer();
        let shown: Vec<(BTreeMap<String, String>, String)> = [
            None,
            Some(""),
            Some(" "),
            Some("a"),
            Some("null"),
            Some("'q'"),
        ]
        .iter()
        .map(|v| describe(&c, &part(*v, 1)).unwrap())
        .collect();
        let names: Vec<&str> = shown.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "dt=NULL/hr=1",
                "dt=''/hr=1",
                "dt=' '/hr=1",
                "dt=a/hr=1",
                "dt='null'/hr=1",
                "dt=''q''/hr=1"
            ]
        );
        assert_eq!(shown[0].0, spec(&[("dt", DEFAULT), ("hr", "1")]));
        assert_eq!(shown[1].0, spec(&[("dt", ""), ("hr", "1")]));
        assert_eq!(shown[2].0, spec(&[("dt", " "), ("hr", "1")]));
    }

    #[test]
    fn cli_specs() {
        let ok = |t: &str| parse_partition_spec(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(ok("dt=x=y,hr=1"), spec(&[("dt", "x=y"), ("hr", "1")]));
        assert_eq!(ok(r"dt=a\,b"), spec(&[("dt", "a,b")]));
        // Java trims keys and values; `k=` is the empty string
        assert_eq!(ok(" dt = a , hr= 1 "), spec(&[("dt", "a"), ("hr", "1")]));
        assert_eq!(ok("dt="), spec(&[("dt", "")]));
        assert_eq!(ok("dt= "), spec(&[("dt", "")]));
        // quotes keep the value verbatim
        assert_eq!(ok("dt=''"), spec(&[("dt", "")]));
        assert_eq!(ok("dt=' '"), spec(&[("dt", " ")]));
        assert_eq!(ok(r"dt= ' a\, ' "), spec(&[("dt", " a, ")]));
        assert_eq!(ok(r"dt=\ "), spec(&[("dt", " ")]));
        assert_eq!(ok(r"dt=\'\'"), spec(&[("dt", "''")]));
        assert_eq!(ok("dt='NULL'"), spec(&[("dt", "NULL")]));
        assert_eq!(ok("dt=it's"), spec(&[("dt", "it's")]));
        assert_eq!(ok(r"dt=a\=b"), spec(&[("dt", "a=b")]));
        assert_eq!(ok("dt=__DEFAULT_PARTITION__"), spec(&[("dt", DEFAULT)]));
        for bad in [
            "",
            " ",
            "dt",
            "=1",
            "dt=1,dt=2",
            "dt=1,",
            r"dt=\",
            "dt='a",
            "dt=a'",
            "dt='",
            "dt=NULL",
            "dt=null",
        ] {
            assert!(parse_partition_spec(bad).is_err(), "{bad}");
        }
    }
}
