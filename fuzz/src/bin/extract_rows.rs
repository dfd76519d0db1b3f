//! Seed extractor for the `binary_row` target: `extract_rows OUT_DIR FILE...` writes every
//! serialized BinaryRow found in the given Avro manifest lists, manifests and index manifests
//! (`_PARTITION`, `_MIN_KEY` / `_MAX_KEY`, key / value / partition stats min and max rows) into
//! OUT_DIR, one file per distinct row, plus a few rows built here that hold every field type.
//! Files that do not decode are skipped (ORC / Parquet manifests: the fuzz build has no
//! columnar readers).

use std::collections::BTreeSet;
use std::path::PathBuf;

use paimon_cleanup::spec::binary_row::{BinaryRowWriter, Datum, Decimal, Timestamp};
use paimon_cleanup::spec::manifest::{
    decode_index_manifest, decode_manifest, decode_manifest_list,
};
use paimon_cleanup::spec::types::DataType;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(out) = args.next().map(PathBuf::from) else {
        eprintln!("usage: extract_rows OUT_DIR FILE...");
        std::process::exit(2);
    };
    std::fs::create_dir_all(&out).expect("create the output directory");
    let mut rows: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut decoded = 0usize;
    for file in args {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let path = file.to_string_lossy();
        if let Ok(metas) = decode_manifest_list(&bytes, &path) {
            decoded += 1;
            for m in metas {
                rows.insert(m.partition_stats.min_values.to_vec());
                rows.insert(m.partition_stats.max_values.to_vec());
            }
        } else if let Ok(entries) = decode_manifest(&bytes, &path) {
            decoded += 1;
            for e in entries {
                let f = e.file;
                rows.insert(e.partition);
                for b in [
                    f.min_key,
                    f.max_key,
                    f.key_stats.min_values,
                    f.key_stats.max_values,
                    f.value_stats.min_values,
                    f.value_stats.max_values,
                ] {
                    rows.insert(b.to_vec());
                }
            }
        } else if let Ok(entries) = decode_index_manifest(&bytes, &path) {
            decoded += 1;
            for e in entries {
                rows.insert(e.partition);
            }
        }
    }
    rows.extend(built_rows());
    rows.remove(&Vec::new());
    for row in &rows {
        let name = format!("row-{:016x}", fnv1a(row));
        std::fs::write(out.join(name), row).expect("write a seed");
    }
    println!(
        "extract_rows: {decoded} files decoded, {} distinct rows written to {}",
        rows.len(),
        out.display()
    );
}

/// Rows holding every field type, inline and out-of-line, compact and not, and NULLs.
fn built_rows() -> Vec<Vec<u8>> {
    let ts = Timestamp {
        millis: 1_700_000_000_123,
        nanos_of_milli: 456_789,
    };
    let values: Vec<(DataType, Datum<'static>)> = vec![
        (DataType::Boolean, Datum::Boolean(true)),
        (DataType::TinyInt, Datum::TinyInt(-7)),
        (DataType::SmallInt, Datum::SmallInt(-300)),
        (DataType::Int, Datum::Int(123_456)),
        (DataType::BigInt, Datum::BigInt(-9_876_543_210)),
        (DataType::Float, Datum::Float(1.5)),
        (DataType::Double, Datum::Double(-2.25e-5)),
        (
            DataType::Decimal {
                precision: 10,
                scale: 2,
            },
            Datum::Decimal(Decimal {
                unscaled: 1230,
                precision: 10,
                scale: 2,
            }),
        ),
        (
            DataType::Decimal {
                precision: 38,
                scale: 4,
            },
            Datum::Decimal(Decimal {
                unscaled: -123_456_789_012_345_678_901_234_567,
                precision: 38,
                scale: 4,
            }),
        ),
        (DataType::String, Datum::String("a".into())),
        (DataType::String, Datum::String("2024-01-01 x/y=z".into())),
        (DataType::Binary, Datum::Binary(vec![0, 1, 2, 255].into())),
        (DataType::Date, Datum::Date(19_723)),
        (DataType::Time { precision: 3 }, Datum::Time(45_296_789)),
        (
            DataType::Timestamp { precision: 3 },
            Datum::Timestamp(Timestamp {
                millis: ts.millis,
                nanos_of_milli: 0,
            }),
        ),
        (DataType::Timestamp { precision: 9 }, Datum::Timestamp(ts)),
        (
            DataType::TimestampLtz { precision: 6 },
            Datum::TimestampLtz(ts),
        ),
    ];
    let mut out = Vec::new();
    // All values in one row; the same row with every other field NULL.
    for nulls in [false, true] {
        let mut w = BinaryRowWriter::new(values.len());
        for (i, (t, v)) in values.iter().enumerate() {
            let v = (!nulls || i % 2 == 0).then_some(v);
            w.write_datum(i, t, v).expect("write a seed value");
        }
        out.push(w.finish());
    }
    // Each value alone (arity 1 rows, the common partition shape).
    for (t, v) in &values {
        let mut w = BinaryRowWriter::new(1);
        w.write_datum(0, t, Some(v)).expect("write a seed value");
        out.push(w.finish());
    }
    out
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
