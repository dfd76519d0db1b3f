//! Which partitions a drop applies to: caller specs (maps key → value string, possibly naming
//! only some keys) validated against the table's partition keys, or an exact set of partitions.
//!
//! Spec values are compared with the partition's directory values (spec §4.5, unescaped):
//! NULL, `''` and blank values all read as `partition.default-name`, so a spec value of `''` or
//! of the default name matches the NULL partition and the `''` partition alike (P13), as in Java.
//! Values are normalized per key type first: integers are parsed (`007` → `7`), booleans
//! lower-cased, and a DATE accepts both its directory form and the other one (`2024-01-01` or
//! epoch days `19723`). A value that cannot be of the key's type is an error.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::{Error, Result};
use crate::spec::partition::{format_date, is_blank, PartitionComputer};
use crate::spec::types::{DataField, DataType};

/// Decides whether a serialized partition is dropped. Results are cached per partition.
#[derive(Debug)]
pub(crate) struct PartitionFilter {
    computer: PartitionComputer,
    kind: FilterKind,
    cache: HashMap<Vec<u8>, bool>,
}

#[derive(Debug)]
enum FilterKind {
    /// OR of specs; each spec an AND of (key index, normalized directory value).
    Specs(Vec<Vec<(usize, String)>>),
    /// Exactly these serialized partitions.
    Exact(HashSet<Vec<u8>>),
}

fn invalid(msg: String) -> Error {
    Error::InvalidArgument(msg)
}

/// Days since 1970-01-01 of a `yyyy-MM-dd` date.
fn epoch_days(s: &str) -> Option<i32> {
    let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from((d - epoch).num_days()).ok()
}

/// The directory form of a spec value for a key of `field`'s type.
fn normalize(
    field: &DataField,
    value: &str,
    default_name: &str,
    legacy_name: bool,
) -> Result<String> {
    if is_blank(value) || value == default_name {
        return Ok(default_name.to_string());
    }
    let bad = || {
        invalid(format!(
            "partition value '{value}' is not a valid {:?} for key '{}'",
            field.data_type, field.name
        ))
    };
    let int_in = |min: i64, max: i64| -> Result<String> {
        let v: i64 = value.trim().parse().map_err(|_| bad())?;
        if v < min || v > max {
            return Err(bad());
        }
        Ok(v.to_string())
    };
    Ok(match &field.data_type {
        DataType::TinyInt => int_in(i8::MIN as i64, i8::MAX as i64)?,
        DataType::SmallInt => int_in(i16::MIN as i64, i16::MAX as i64)?,
        DataType::Int => int_in(i32::MIN as i64, i32::MAX as i64)?,
        DataType::BigInt => int_in(i64::MIN, i64::MAX)?,
        DataType::Boolean => match value.trim().to_ascii_lowercase().as_str() {
            "true" => "true".to_string(),
            "false" => "false".to_string(),
            _ => return Err(bad()),
        },
        DataType::Date => {
            let days = match value.trim().parse::<i32>() {
                Ok(d) => d,
                Err(_) => epoch_days(value.trim()).ok_or_else(bad)?,
            };
            if legacy_name {
                days.to_string()
            } else {
                format_date(days)
            }
        }
        _ => value.to_string(),
    })
}

impl PartitionFilter {
    /// A filter from caller specs. Errors ([`Error::InvalidArgument`]): no specs, an empty
    /// spec, an unpartitioned table, a key that is not a partition key, a value that cannot be
    /// of its key's type.
    pub fn from_specs(
        computer: PartitionComputer,
        specs: &[BTreeMap<String, String>],
        default_name: &str,
        legacy_name: bool,
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
                conds.push((idx, normalize(&fields[idx], v, default_name, legacy_name)?));
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
                let values = self.computer.values(partition)?;
                specs.iter().any(|conds| {
                    conds
                        .iter()
                        .all(|(i, v)| values.get(*i).is_some_and(|(_, x)| x == v))
                })
            }
        };
        self.cache.insert(partition.to_vec(), m);
        Ok(m)
    }

    /// The directory values of a partition as a spec map.
    pub fn spec_of(&self, partition: &[u8]) -> Result<BTreeMap<String, String>> {
        Ok(self.computer.values(partition)?.into_iter().collect())
    }
}

/// Parses a CLI partition spec `k=v[,k2=v2]`. A backslash escapes the next character, so values
/// may hold `,` (`\,`), `=` after the first one needs no escape (`k=x=y` is key `k`, value
/// `x=y`). Errors on an empty spec, an item without `=`, an empty key or a repeated key.
pub fn parse_partition_spec(text: &str) -> Result<BTreeMap<String, String>> {
    let bad = |m: &str| invalid(format!("partition spec '{text}': {m}"));
    let mut items: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.push(
                chars
                    .next()
                    .ok_or_else(|| bad("ends with a lone backslash"))?,
            ),
            ',' => items.push(std::mem::take(&mut current)),
            other => current.push(other),
        }
    }
    items.push(current);
    if text.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    let mut out = BTreeMap::new();
    for item in items {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| bad(&format!("'{item}' is not key=value")))?;
        let k = k.trim();
        if k.is_empty() {
            return Err(bad("empty key"));
        }
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(bad(&format!("key '{k}' given twice")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::binary_row::BinaryRowWriter;

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
            "__DEFAULT_PARTITION__",
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
        PartitionFilter::from_specs(computer(), specs, "__DEFAULT_PARTITION__", true)
    }

    #[test]
    fn full_partial_null_and_escaped() {
        let mut fl = filter(&[spec(&[("dt", "a/b"), ("hr", "007")])]).unwrap();
        assert!(fl.matches(&part(Some("a/b"), 7)).unwrap());
        assert!(!fl.matches(&part(Some("a/b"), 8)).unwrap());
        let mut fl = filter(&[spec(&[("hr", "0")])]).unwrap();
        assert!(fl.matches(&part(Some("x=y"), 0)).unwrap());
        assert!(fl.matches(&part(None, 0)).unwrap());
        for null_spec in ["", "__DEFAULT_PARTITION__"] {
            let mut fl = filter(&[spec(&[("dt", null_spec)])]).unwrap();
            assert!(fl.matches(&part(None, 3)).unwrap());
            assert!(fl.matches(&part(Some(""), 3)).unwrap());
            assert!(!fl.matches(&part(Some("a"), 3)).unwrap());
        }
        let mut fl = filter(&[spec(&[("dt", "%41")]), spec(&[("dt", "ü日")])]).unwrap();
        assert!(fl.matches(&part(Some("%41"), 0)).unwrap());
        assert!(!fl.matches(&part(Some("A"), 0)).unwrap());
        assert!(fl.matches(&part(Some("ü日"), 1)).unwrap());
    }

    #[test]
    fn bad_specs() {
        assert!(filter(&[]).is_err());
        assert!(filter(&[spec(&[])]).is_err());
        assert!(filter(&[spec(&[("nope", "1")])]).is_err());
        assert!(filter(&[spec(&[("hr", "abc")])]).is_err());
        assert!(filter(&[spec(&[("hr", "99999999999")])]).is_err());
        let unpartitioned = PartitionComputer::new(vec![], "d", true).unwrap();
        assert!(
            PartitionFilter::from_specs(unpartitioned, &[spec(&[("a", "1")])], "d", true).is_err()
        );
    }

    #[test]
    fn dates_accept_both_forms() {
        let d = f("d", DataType::Date);
        assert_eq!(normalize(&d, "2024-01-01", "N", true).unwrap(), "19723");
        assert_eq!(normalize(&d, "19723", "N", true).unwrap(), "19723");
        assert_eq!(normalize(&d, "19723", "N", false).unwrap(), "2024-01-01");
        assert!(normalize(&d, "yesterday", "N", true).is_err());
    }

    #[test]
    fn cli_specs() {
        assert_eq!(
            parse_partition_spec("dt=x=y,hr=1").unwrap(),
            spec(&[("dt", "x=y"), ("hr", "1")])
        );
        assert_eq!(
            parse_partition_spec(r"dt=a\,b").unwrap(),
            spec(&[("dt", "a,b")])
        );
        assert_eq!(parse_partition_spec("dt=").unwrap(), spec(&[("dt", "")]));
        for bad in ["", "dt", "=1", "dt=1,dt=2", "dt=1,", r"dt=\"] {
            assert!(parse_partition_spec(bad).is_err(), "{bad}");
        }
    }
}
