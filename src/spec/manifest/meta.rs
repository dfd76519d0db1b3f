//! The `ManifestFileMeta` of a newly written manifest (spec §3.3): partition stats, counts,
//! schema id, bucket/level and row-id ranges over its entries.
//!
//! `_PARTITION_STATS` must be exact: readers skip a whole manifest whose partition range does
//! not match their partition filter, so a wrong range would hide the manifest's entries.

use std::cmp::Ordering;

use super::{FileKind, ManifestEntry, ManifestFileMeta, SimpleStats};
use crate::error::{Error, Result};
use crate::spec::binary_row::{BinaryRow, BinaryRowWriter, Datum};
use crate::spec::types::DataField;

/// Java's order of two values of the same partition field: numbers numerically, strings and
/// binaries byte-wise unsigned (Java `BinaryString.compareTo`), dates/times/timestamps in time
/// order. `None` for values of different kinds.
pub fn compare_datum(a: &Datum<'_>, b: &Datum<'_>) -> Option<Ordering> {
    use Datum as D;
    Some(match (a, b) {
        (D::Boolean(x), D::Boolean(y)) => x.cmp(y),
        (D::TinyInt(x), D::TinyInt(y)) => x.cmp(y),
        (D::SmallInt(x), D::SmallInt(y)) => x.cmp(y),
        (D::Int(x), D::Int(y)) | (D::Date(x), D::Date(y)) | (D::Time(x), D::Time(y)) => x.cmp(y),
        (D::BigInt(x), D::BigInt(y)) => x.cmp(y),
        (D::Float(x), D::Float(y)) => x.total_cmp(y),
        (D::Double(x), D::Double(y)) => x.total_cmp(y),
        (D::Decimal(x), D::Decimal(y)) if x.scale == y.scale => x.unscaled.cmp(&y.unscaled),
        (D::String(x), D::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (D::Binary(x), D::Binary(y)) => x.as_ref().cmp(y.as_ref()),
        (D::Timestamp(x), D::Timestamp(y)) | (D::TimestampLtz(x), D::TimestampLtz(y)) => x.cmp(y),
        _ => return None,
    })
}

/// Min/max rows and null counts over serialized partitions of `fields` (spec §3.5): a field's
/// min and max ignore nulls and are null when every value is null.
pub fn partition_stats<'a>(
    partitions: impl IntoIterator<Item = &'a [u8]>,
    fields: &[DataField],
) -> Result<SimpleStats> {
    let arity = fields.len();
    let mut mins: Vec<Option<Datum<'a>>> = vec![None; arity];
    let mut maxs: Vec<Option<Datum<'a>>> = vec![None; arity];
    let mut nulls = vec![0i64; arity];
    for p in partitions {
        let row = BinaryRow::from_serialized(p)?;
        if row.arity() != arity {
            return Err(Error::malformed(
                "partition",
                "<BinaryRow>",
                format!(
                    "partition row has {} fields but the table has {arity} partition keys",
                    row.arity()
                ),
            ));
        }
        for (i, f) in fields.iter().enumerate() {
            match row.get_datum(i, &f.data_type)? {
                None => nulls[i] += 1,
                Some(v) => {
                    let smaller = match &mins[i] {
                        None => true,
                        Some(m) => compare_datum(&v, m) == Some(Ordering::Less),
                    };
                    if smaller {
                        mins[i] = Some(v.clone());
                    }
                    let larger = match &maxs[i] {
                        None => true,
                        Some(m) => compare_datum(&v, m) == Some(Ordering::Greater),
                    };
                    if larger {
                        maxs[i] = Some(v);
                    }
                }
            }
        }
    }
    let row_of = |vals: &[Option<Datum<'a>>]| -> Result<Vec<u8>> {
        let mut w = BinaryRowWriter::new(arity);
        for (i, f) in fields.iter().enumerate() {
            w.write_datum(i, &f.data_type, vals[i].as_ref())?;
        }
        Ok(w.finish())
    };
    Ok(SimpleStats {
        min_values: row_of(&mins)?.into(),
        max_values: row_of(&maxs)?.into(),
        null_counts: Some(nulls.into_iter().map(Some).collect()),
    })
}

/// The meta of a manifest named `file_name` of `file_size` bytes holding `entries`:
/// added/deleted counts, exact partition stats, the largest file schema id (or
/// `default_schema_id` when empty), bucket and level ranges, and the row-id range of entries
/// with a first row id.
pub fn manifest_file_meta(
    file_name: &str,
    file_size: i64,
    entries: &[ManifestEntry],
    partition_fields: &[DataField],
    default_schema_id: i64,
) -> Result<ManifestFileMeta> {
    let added = entries.iter().filter(|e| e.kind == FileKind::Add).count() as i64;
    let min_max =
        |f: fn(&ManifestEntry) -> i32| (entries.iter().map(f).min(), entries.iter().map(f).max());
    let (min_bucket, max_bucket) = min_max(|e| e.bucket);
    let (min_level, max_level) = min_max(|e| e.file.level);
    let rows: Vec<(i64, i64)> = entries
        .iter()
        .filter_map(|e| {
            e.file.first_row_id.map(|first| {
                (
                    first,
                    first.saturating_add(e.file.row_count).saturating_sub(1),
                )
            })
        })
        .collect();
    Ok(ManifestFileMeta {
        file_name: file_name.to_string(),
        file_size,
        num_added_files: added,
        num_deleted_files: entries.len() as i64 - added,
        schema_id: entries
            .iter()
            .map(|e| e.file.schema_id)
            .max()
            .unwrap_or(default_schema_id),
        partition_stats: partition_stats(
            entries.iter().map(|e| e.partition.as_slice()),
            partition_fields,
        )?,
        min_bucket,
        max_bucket,
        min_level,
        max_level,
        min_row_id: rows.iter().map(|r| r.0).min(),
        max_row_id: rows.iter().map(|r| r.1).max(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::types::DataType;

    fn field(name: &str, t: DataType) -> DataField {
        DataField {
            id: 0,
            name: name.into(),
            data_type: t,
            nullable: true,
        }
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

    #[test]
    fn stats_min_max_and_nulls() {
        let fields = [field("dt", DataType::String), field("hr", DataType::Int)];
        let parts = [
            part(Some("b"), 3),
            part(None, -1),
            part(Some("ü"), 0),
            part(Some("a"), 7),
        ];
        let s = partition_stats(parts.iter().map(|p| p.as_slice()), &fields).unwrap();
        let min = BinaryRow::from_serialized(&s.min_values).unwrap();
        let max = BinaryRow::from_serialized(&s.max_values).unwrap();
        assert_eq!(min.get_string(0).unwrap(), "a");
        assert_eq!(max.get_string(0).unwrap(), "ü");
        assert_eq!(min.get_int(1).unwrap(), -1);
        assert_eq!(max.get_int(1).unwrap(), 7);
        assert_eq!(s.null_counts, Some(vec![Some(1), Some(0)]));
        // All null: null min and max.
        let only_null = [part(None, 1)];
        let s = partition_stats(only_null.iter().map(|p| p.as_slice()), &fields).unwrap();
        assert!(BinaryRow::from_serialized(&s.min_values)
            .unwrap()
            .is_null_at(0)
            .unwrap());
        // Wrong arity is an error.
        let bad = [BinaryRowWriter::new(1).finish()];
        assert!(partition_stats(bad.iter().map(|p| p.as_slice()), &fields).is_err());
    }

    #[test]
    fn meta_counts_and_ranges() {
        let fields = [field("dt", DataType::String), field("hr", DataType::Int)];
        let mut a = ManifestEntry {
            kind: FileKind::Delete,
            partition: part(Some("x"), 1),
            bucket: 2,
            ..Default::default()
        };
        a.file.schema_id = 3;
        a.file.level = 5;
        a.file.first_row_id = Some(10);
        a.file.row_count = 4;
        let b = ManifestEntry {
            kind: FileKind::Delete,
            partition: part(Some("y"), 0),
            bucket: 0,
            ..Default::default()
        };
        let m = manifest_file_meta("m", 100, &[a, b], &fields, 9).unwrap();
        assert_eq!((m.num_added_files, m.num_deleted_files), (0, 2));
        assert_eq!(m.schema_id, 3);
        assert_eq!((m.min_bucket, m.max_bucket), (Some(0), Some(2)));
        assert_eq!((m.min_level, m.max_level), (Some(0), Some(5)));
        assert_eq!((m.min_row_id, m.max_row_id), (Some(10), Some(13)));
        let empty = manifest_file_meta("e", 1, &[], &fields, 9).unwrap();
        assert_eq!(empty.schema_id, 9);
        assert_eq!(empty.min_bucket, None);
    }
}
