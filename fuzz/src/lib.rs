//! Bodies of the fuzz targets (one function per target, so the libFuzzer wrappers in
//! `fuzz_targets/` stay one line and the bodies can be replayed from a plain binary or test).
//!
//! Every function must return normally for every input: a panic, an abort (out of memory) or a
//! hang is a bug in the decoder, never in the input. The few `assert!`s check properties that
//! hold for any input (a decoded value re-encodes to the same value).

use paimon_cleanup::spec::binary_row::{BinaryRow, BinaryRowWriter, Datum};
use paimon_cleanup::spec::consumer::{parse_hint, Consumer};
use paimon_cleanup::spec::manifest::{
    decode_index_manifest, decode_manifest, decode_manifest_list, read_raw_records,
    MetadataFileKind, WriterSchema,
};
use paimon_cleanup::spec::partition::{
    internal_string, partition_internal_strings, partition_path, partition_values,
    PartitionComputer, DEFAULT_PARTITION_NAME,
};
use paimon_cleanup::spec::schema::TableSchema;
use paimon_cleanup::spec::snapshot::{Snapshot, Tag};
use paimon_cleanup::spec::types::{DataField, DataType};

/// Target `avro_manifest`: the three manifest decoders (and the generic record reader used to
/// rewrite manifests) on the same bytes. ORC and Parquet inputs are skipped: the fuzz build has
/// no columnar readers, and those are third-party code run under `catch_unwind`.
pub fn avro_manifest(data: &[u8]) {
    if data.starts_with(b"ORC") || data.starts_with(b"PAR1") {
        return;
    }
    let path = "fuzz/manifest";
    if let Ok(metas) = decode_manifest_list(data, path) {
        for m in &metas {
            for row in [&m.partition_stats.min_values, &m.partition_stats.max_values] {
                touch_row(row);
            }
        }
    }
    if let Ok(entries) = decode_manifest(data, path) {
        for e in &entries {
            touch_row(&e.partition);
            touch_row(&e.file.min_key);
            touch_row(&e.file.max_key);
        }
    }
    if let Ok(entries) = decode_index_manifest(data, path) {
        for e in &entries {
            touch_row(&e.partition);
        }
    }
    for kind in [
        MetadataFileKind::ManifestList,
        MetadataFileKind::Manifest,
        MetadataFileKind::IndexManifest,
    ] {
        let _ = WriterSchema::from_file(kind, data, path);
        let _ = read_raw_records(kind, data, path);
    }
}

/// Reads every field of a decoded row as a string (cheap sanity pass over decoder output).
fn touch_row(bytes: &[u8]) {
    if let Ok(row) = BinaryRow::from_serialized(bytes) {
        for pos in 0..row.arity().min(8) {
            let _ = row.is_null_at(pos);
            let _ = row.get_string(pos);
        }
    }
}

/// Target `json_metadata`: snapshot, tag, schema and consumer documents and hint files. A parsed
/// snapshot must serialize and parse back to itself; a parsed schema's partition keys must be
/// usable to compute the partition path of a zero row and an all-null row.
pub fn json_metadata(data: &[u8]) {
    let path = "fuzz/json";
    if let Ok(s) = Snapshot::parse(data, path) {
        let _ = Snapshot::parse_expecting_id(data, path, s.id);
        let _ = s.manifest_lists().count();
        let json = s.to_json().expect("a parsed snapshot serializes");
        let back = Snapshot::parse(json.as_bytes(), path).expect("a serialized snapshot parses");
        assert_eq!(
            format!("{back:?}"),
            format!("{s:?}"),
            "snapshot JSON round trip"
        );
    }
    let _ = Tag::parse(data, path);
    let _ = Consumer::parse(data, path);
    let _ = parse_hint(data);
    if let Ok(schema) = TableSchema::parse(data, path) {
        let fields = schema.partition_fields();
        for legacy in [false, true] {
            let Ok(pc) = PartitionComputer::new(fields.clone(), DEFAULT_PARTITION_NAME, legacy)
            else {
                continue;
            };
            let pc = pc.with_local_time_zone_offset(3600);
            for row in [zero_row(&fields), null_row(&fields)] {
                let _ = pc.values(&row);
                let _ = pc.path(&row);
                let _ = pc.internal_strings(&row);
            }
        }
    }
}

/// A row of `fields.len()` fields whose slots are all zero (what an all-default writer gives).
fn zero_row(fields: &[DataField]) -> Vec<u8> {
    BinaryRowWriter::new(fields.len().min(1024)).finish()
}

/// A row of `fields.len()` NULL fields, laid out the way Java writes NULLs of each type.
fn null_row(fields: &[DataField]) -> Vec<u8> {
    let fields = &fields[..fields.len().min(1024)];
    let mut w = BinaryRowWriter::new(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let _ = w.set_null_typed(i, &f.data_type);
    }
    w.finish()
}

/// Every type the getters know, with precisions on both sides of the compact limits.
fn all_types() -> Vec<DataType> {
    vec![
        DataType::Boolean,
        DataType::TinyInt,
        DataType::SmallInt,
        DataType::Int,
        DataType::BigInt,
        DataType::Float,
        DataType::Double,
        DataType::Decimal {
            precision: 10,
            scale: 2,
        },
        DataType::Decimal {
            precision: 18,
            scale: 0,
        },
        DataType::Decimal {
            precision: 19,
            scale: 19,
        },
        DataType::Decimal {
            precision: 38,
            scale: 4,
        },
        DataType::String,
        DataType::Binary,
        DataType::Date,
        DataType::Time { precision: 0 },
        DataType::Time { precision: 3 },
        DataType::Timestamp { precision: 0 },
        DataType::Timestamp { precision: 3 },
        DataType::Timestamp { precision: 6 },
        DataType::Timestamp { precision: 9 },
        DataType::TimestampLtz { precision: 3 },
        DataType::TimestampLtz { precision: 6 },
        DataType::Other("ARRAY".to_string()),
    ]
}

/// Partition key types (those [`PartitionComputer`] accepts).
fn partition_types() -> Vec<DataType> {
    all_types()
        .into_iter()
        .filter(|t| {
            !matches!(
                t,
                DataType::Float | DataType::Double | DataType::Binary | DataType::Other(_)
            )
        })
        .collect()
}

fn fields_of(types: impl IntoIterator<Item = DataType>) -> Vec<DataField> {
    types
        .into_iter()
        .enumerate()
        .map(|(i, data_type)| DataField {
            id: i as i64,
            name: format!("k{i}"),
            data_type,
            nullable: true,
        })
        .collect()
}

/// The field layouts a row of `arity` fields is interpreted with: a few fixed layouts of real
/// tables (used when the arity matches), every partition type alone, and rotations of the list
/// of partition types (so every type appears at every position).
fn layouts(arity: usize) -> Vec<Vec<DataField>> {
    use DataType::*;
    let fixed: Vec<Vec<DataType>> = vec![
        vec![String],
        vec![Int],
        vec![Date],
        vec![String, Int],
        vec![String, String],
        vec![Int, BigInt, Date, Boolean, TinyInt, SmallInt],
        vec![
            Decimal {
                precision: 10,
                scale: 2,
            },
            Decimal {
                precision: 38,
                scale: 4,
            },
            Timestamp { precision: 3 },
            Timestamp { precision: 9 },
            Time { precision: 3 },
            TimestampLtz { precision: 6 },
        ],
    ];
    let mut out: Vec<Vec<DataField>> = fixed
        .into_iter()
        .filter(|l| l.len() == arity)
        .map(fields_of)
        .collect();
    if arity == 0 || arity > 16 {
        return out;
    }
    let types = partition_types();
    for t in &types {
        out.push(fields_of(std::iter::repeat_n(t.clone(), arity)));
    }
    for k in (0..types.len()).filter(|_| arity > 1) {
        out.push(fields_of(
            (0..arity).map(|i| types[(i + k) % types.len()].clone()),
        ));
    }
    out
}

/// Target `binary_row`: [`BinaryRow::from_serialized`], every getter at every position (and one
/// past the end) for every type, a write/read round trip of every decoded value, and partition
/// values / paths / internal strings under several field layouts.
pub fn binary_row(data: &[u8]) {
    let Ok(row) = BinaryRow::from_serialized(data) else {
        return;
    };
    let _ = row.row_kind();
    let _ = row.row_bytes();
    let arity = row.arity();
    let positions = arity.min(32) + 1;
    let types = all_types();
    for pos in 0..positions {
        let _ = row.is_null_at(pos);
        let _ = row.get_boolean(pos);
        let _ = row.get_byte(pos);
        let _ = row.get_short(pos);
        let _ = row.get_int(pos);
        let _ = row.get_long(pos);
        let _ = row.get_float(pos);
        let _ = row.get_double(pos);
        let _ = row.get_binary(pos);
        let _ = row.get_string(pos);
        for (p, s) in [
            (0, 0),
            (10, 2),
            (18, 18),
            (19, 0),
            (38, 4),
            (38, 38),
            (77, 3),
        ] {
            if let Ok(d) = row.get_decimal(pos, p, s) {
                let _ = d.to_string();
            }
        }
        for p in [0, 3, 4, 6, 9, 12] {
            let _ = row.get_timestamp(pos, p);
        }
        for t in &types {
            if let Ok(Some(d)) = row.get_datum(pos, t) {
                let _ = internal_string(&d);
                round_trip(pos, arity, t, &d);
            }
        }
    }
    for (i, fields) in layouts(arity).into_iter().enumerate() {
        // Legacy names (Java toString), new names without and with a time zone for LTZ keys.
        let _ = partition_path(data, &fields, DEFAULT_PARTITION_NAME, true);
        let _ = partition_internal_strings(data, &fields);
        if i % 2 == 0 {
            let _ = partition_values(data, &fields, DEFAULT_PARTITION_NAME, false);
        } else if let Ok(pc) = PartitionComputer::new(fields, "__DEFAULT__", false) {
            let _ = pc.with_local_time_zone_offset(-5 * 3600).path(data);
        }
    }
}

/// A value read at `pos` and written back at `pos` of a fresh row reads back unchanged.
fn round_trip(pos: usize, arity: usize, t: &DataType, d: &Datum<'_>) {
    let mut w = BinaryRowWriter::new(arity);
    w.write_datum(pos, t, Some(d))
        .expect("a decoded value can be written back");
    let bytes = w.finish();
    let back = BinaryRow::from_serialized(&bytes)
        .expect("a written row parses")
        .get_datum(pos, t)
        .expect("a written value reads back");
    // Debug text compares floats by value and NaN equal to NaN.
    assert_eq!(
        format!("{back:?}"),
        format!("{:?}", Some(d)),
        "round trip of {t:?} at {pos}"
    );
}
