//! Unit tests of the manifest decoders on hand-built files (every codec, Java ≤0.8 union-wrapped
//! schemas, pypaimon schemas, unknown fields, malformed input).

use apache_avro::types::Value;
use apache_avro::{Codec, DeflateSettings, Schema as AvroSchema, Writer, ZstandardSettings};

use super::*;
use crate::spec::binary_row::EMPTY_ROW;

/// Java 1.3 manifest schema (copied from a fixture header).
const JAVA_MANIFEST: &str = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":{"type":"record","name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type":{"type":"record","name":"record__FILE__KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_VALUE_STATS","type":{"type":"record","name":"record__FILE__VALUE_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},{"name":"_FILE_SOURCE","type":["null","int"],"default":null},{"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},{"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null}]}}]}"#;

/// Java ≤0.8 manifest schema: top-level and nested records wrapped in ["null", record].
const JAVA_08_MANIFEST: &str = r#"["null",{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":["null",{"type":"record","name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type":["null",{"type":"record","name":"record__FILE__KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}],"default":null},{"name":"_VALUE_STATS","type":["null",{"type":"record","name":"record__FILE__VALUE_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}],"default":null},{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},{"name":"_FILE_SOURCE","type":["null","int"],"default":null}]}],"default":null}]}]"#;

/// pypaimon manifest schema: other record names, no namespace, an extra 2.1 field.
const PYPAIMON_MANIFEST: &str = r#"{"type": "record", "name": "ManifestEntry", "fields": [{"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"}, {"name": "_BUCKET", "type": "int"}, {"name": "_TOTAL_BUCKETS", "type": "int"}, {"name": "_FILE", "type": {"type": "record", "name": "DataFileMeta", "fields": [{"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"}, {"name": "_ROW_COUNT", "type": "long"}, {"name": "_MIN_KEY", "type": "bytes"}, {"name": "_MAX_KEY", "type": "bytes"}, {"name": "_KEY_STATS", "type": {"type": "record", "name": "record_KEY_STATS", "fields": [{"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"}, {"default": null, "name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}]}]}}, {"name": "_VALUE_STATS", "type": {"type": "record", "name": "record_VALUE_STATS", "fields": [{"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"}, {"default": null, "name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}]}]}}, {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"}, {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"}, {"name": "_SCHEMA_ID", "type": "long"}, {"name": "_LEVEL", "type": "int"}, {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}}, {"default": null, "name": "_CREATION_TIME", "type": ["null", {"logicalType": "timestamp-millis", "type": "long"}]}, {"default": null, "name": "_DELETE_ROW_COUNT", "type": ["null", "long"]}, {"default": null, "name": "_EMBEDDED_FILE_INDEX", "type": ["null", "bytes"]}, {"default": null, "name": "_FILE_SOURCE", "type": ["null", "int"]}, {"default": null, "name": "_VALUE_STATS_COLS", "type": ["null", {"type": "array", "items": "string"}]}, {"default": null, "name": "_EXTERNAL_PATH", "type": ["null", "string"]}, {"default": null, "name": "_FIRST_ROW_ID", "type": ["null", "long"]}, {"default": null, "name": "_WRITE_COLS", "type": ["null", {"type": "array", "items": "string"}]}, {"default": null, "name": "_WRITE_COLS_SEQUENCES", "type": ["null", {"type": "array", "items": "long"}]}]}}]}"#;

/// Java 1.4 manifest list schema.
const JAVA_LIST: &str = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":{"type":"record","name":"record__PARTITION_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_SCHEMA_ID","type":"long"},{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}]}"#;

/// Java ≤0.8 manifest list schema (union-wrapped).
const JAVA_08_LIST: &str = r#"["null",{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":["null",{"type":"record","name":"record__PARTITION_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}],"default":null},{"name":"_SCHEMA_ID","type":"long"}]}]"#;

/// pypaimon manifest list schema with two fields Java does not have.
const PYPAIMON_LIST: &str = r#"{"type": "record", "name": "ManifestFileMeta", "fields": [{"name": "_VERSION", "type": "int"}, {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"}, {"name": "_NUM_ADDED_FILES", "type": "long"}, {"name": "_NUM_DELETED_FILES", "type": "long"}, {"name": "_PARTITION_STATS", "type": {"type": "record", "name": "record_PARTITION_STATS", "fields": [{"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"}, {"default": null, "name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}]}]}}, {"name": "_SCHEMA_ID", "type": "long"}, {"default": null, "name": "_MIN_BUCKET", "type": ["null", "int"]}, {"default": null, "name": "_MAX_BUCKET", "type": ["null", "int"]}, {"default": null, "name": "_MIN_LEVEL", "type": ["null", "int"]}, {"default": null, "name": "_MAX_LEVEL", "type": ["null", "int"]}, {"default": null, "name": "_MIN_ROW_ID", "type": ["null", "long"]}, {"default": null, "name": "_MAX_ROW_ID", "type": ["null", "long"]}, {"default": null, "name": "_TOTAL_BUCKETS", "type": ["null", "int"]}, {"default": null, "name": "_EXTRA_FILES", "type": ["null", {"type": "array", "items": "string"}]}]}"#;

/// Java 1.4 index manifest schema (DV range items are ["null", record]).
const JAVA_INDEX: &str = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":[{"name":"f0","type":"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX","fields":[{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},{"name":"_INDEX_FIELD_ID","type":"int"},{"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","items":"int"}],"default":null},{"name":"_INDEX_META","type":["null","bytes"],"default":null}]}],"default":null}]}"#;

/// pypaimon index manifest schema (DV range items are plain records).
const PYPAIMON_INDEX: &str = r#"{"type": "record", "name": "IndexManifestEntry", "fields": [{"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"}, {"name": "_BUCKET", "type": "int"}, {"name": "_INDEX_TYPE", "type": "string"}, {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"}, {"name": "_ROW_COUNT", "type": "long"}, {"default": null, "name": "_DELETIONS_VECTORS_RANGES", "type": ["null", {"type": "array", "items": {"type": "record", "name": "DeletionVectorMeta", "fields": [{"name": "f0", "type": "string"}, {"name": "f1", "type": "int"}, {"name": "f2", "type": "int"}, {"default": null, "name": "_CARDINALITY", "type": ["null", "long"]}]}}]}, {"default": null, "name": "_EXTERNAL_PATH", "type": ["null", "string"]}, {"default": null, "name": "_GLOBAL_INDEX", "type": ["null", {"type": "record", "name": "GlobalIndexMeta", "fields": [{"name": "_ROW_RANGE_START", "type": "long"}, {"name": "_ROW_RANGE_END", "type": "long"}, {"name": "_INDEX_FIELD_ID", "type": "int"}, {"default": null, "name": "_EXTRA_FIELD_IDS", "type": ["null", {"type": "array", "items": "int"}]}, {"default": null, "name": "_INDEX_META", "type": ["null", "bytes"]}, {"default": null, "name": "_SOURCE_META", "type": ["null", "bytes"]}]}]}]}"#;

/// Field values by dotted path (`_FILE._FILE_NAME`); `None` = default.
type Overrides<'a> = dyn Fn(&str) -> Option<Value> + 'a;

const ALL_CODECS: [&str; 4] = ["null", "deflate", "snappy", "zstandard"];

fn codec(name: &str) -> Codec {
    match name {
        "null" => Codec::Null,
        "deflate" => Codec::Deflate(DeflateSettings::default()),
        "snappy" => Codec::Snappy,
        "zstandard" => Codec::Zstandard(ZstandardSettings::default()),
        other => panic!("{other}"),
    }
}

/// Builds a value for `schema`, taking overrides by dotted field path ("_FILE._FILE_NAME") and
/// filling everything else with zero/empty defaults (records inside nullable unions are
/// filled in, other nullable fields are null).
fn fill(schema: &AvroSchema, path: &str, overrides: &Overrides<'_>) -> Value {
    if let Some(v) = overrides(path) {
        return wrap(schema, v);
    }
    match schema {
        AvroSchema::Record(r) => Value::Record(
            r.fields
                .iter()
                .map(|f| {
                    let p = if path.is_empty() {
                        f.name.clone()
                    } else {
                        format!("{path}.{}", f.name)
                    };
                    (f.name.clone(), fill(&f.schema, &p, overrides))
                })
                .collect(),
        ),
        AvroSchema::Union(u) => {
            match u
                .variants()
                .iter()
                .position(|v| matches!(v, AvroSchema::Record(_)))
            {
                Some(i) => {
                    Value::Union(i as u32, Box::new(fill(&u.variants()[i], path, overrides)))
                }
                None => Value::Union(0, Box::new(Value::Null)),
            }
        }
        AvroSchema::Int => Value::Int(0),
        AvroSchema::Long => Value::Long(0),
        AvroSchema::TimestampMillis => Value::TimestampMillis(0),
        AvroSchema::Bytes => Value::Bytes(EMPTY_ROW.to_vec()),
        AvroSchema::String => Value::String(String::new()),
        AvroSchema::Array(_) => Value::Array(vec![]),
        AvroSchema::Map(_) => Value::Map(Default::default()),
        AvroSchema::Float => Value::Float(0.0),
        AvroSchema::Double => Value::Double(0.0),
        AvroSchema::Boolean => Value::Boolean(false),
        AvroSchema::Fixed(f) => Value::Fixed(f.size, vec![0; f.size]),
        AvroSchema::Enum(e) => Value::Enum(0, e.symbols[0].clone()),
        other => panic!("no default for {other:?}"),
    }
}

/// Wraps an override value into the union branch that matches it.
fn wrap(schema: &AvroSchema, v: Value) -> Value {
    match schema {
        AvroSchema::Union(u) => {
            if matches!(v, Value::Null) {
                return Value::Union(0, Box::new(Value::Null));
            }
            let i = u
                .variants()
                .iter()
                .position(|s| !matches!(s, AvroSchema::Null))
                .unwrap();
            let v = match (&u.variants()[i], v) {
                (AvroSchema::TimestampMillis, Value::Long(l)) => Value::TimestampMillis(l),
                (AvroSchema::Array(a), Value::Array(items)) => {
                    Value::Array(items.into_iter().map(|x| wrap(&a.items, x)).collect())
                }
                (_, v) => v,
            };
            Value::Union(i as u32, Box::new(v))
        }
        _ => v,
    }
}

fn write_file(schema_json: &str, codec_name: &str, records: &[&Overrides<'_>]) -> Vec<u8> {
    let schema = AvroSchema::parse_str(schema_json).unwrap();
    let mut w = Writer::with_codec(&schema, Vec::new(), codec(codec_name));
    for overrides in records {
        w.append(fill(&schema, "", overrides)).unwrap();
    }
    w.into_inner().unwrap()
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn entry_a(p: &str) -> Option<Value> {
    Some(match p {
        "_VERSION" => Value::Int(2),
        "_KIND" => Value::Int(0),
        "_PARTITION" => Value::Bytes(vec![
            0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0,
        ]),
        "_BUCKET" => Value::Int(1),
        "_TOTAL_BUCKETS" => Value::Int(2),
        "_FILE._FILE_NAME" => s("data-a-0.parquet"),
        "_FILE._FILE_SIZE" => Value::Long(1234),
        "_FILE._ROW_COUNT" => Value::Long(7),
        "_FILE._MIN_SEQUENCE_NUMBER" => Value::Long(3),
        "_FILE._MAX_SEQUENCE_NUMBER" => Value::Long(9),
        "_FILE._SCHEMA_ID" => Value::Long(1),
        "_FILE._LEVEL" => Value::Int(5),
        "_FILE._EXTRA_FILES" => Value::Array(vec![s("data-a-0.parquet.index")]),
        "_FILE._CREATION_TIME" => Value::Long(1_700_000_000_000),
        "_FILE._DELETE_ROW_COUNT" => Value::Long(2),
        "_FILE._FILE_SOURCE" => Value::Int(1),
        "_FILE._EXTERNAL_PATH" => s("FILE:/tmp/external/f1=10/bucket-1/data-a-0.parquet"),
        "_FILE._VALUE_STATS._NULL_COUNTS" => Value::Array(vec![Value::Long(0), Value::Null]),
        "_FILE._KEY_STATS._MIN_VALUES" => Value::Bytes(vec![
            0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
        ]),
        _ => return None,
    })
}

fn entry_b(p: &str) -> Option<Value> {
    Some(match p {
        "_VERSION" => Value::Int(2),
        "_KIND" => Value::Int(1),
        "_BUCKET" => Value::Int(0),
        "_TOTAL_BUCKETS" => Value::Int(-1),
        "_FILE._FILE_NAME" => s("data-b-1.orc"),
        "_FILE._EMBEDDED_FILE_INDEX" => Value::Bytes(vec![9, 9]),
        "_FILE._VALUE_STATS_COLS" => Value::Array(vec![s("a"), s("b")]),
        "_FILE._FIRST_ROW_ID" => Value::Long(100),
        "_FILE._WRITE_COLS" => Value::Array(vec![s("c")]),
        _ => return None,
    })
}

#[test]
fn java_manifest_every_codec() {
    for c in ALL_CODECS {
        let bytes = write_file(JAVA_MANIFEST, c, &[&entry_a, &entry_b]);
        let entries = decode_manifest(&bytes, "manifest/manifest-x-0").unwrap();
        assert_eq!(entries.len(), 2, "codec {c}");
        let a = &entries[0];
        assert_eq!(a.kind, FileKind::Add);
        assert_eq!(a.bucket, 1);
        assert_eq!(a.total_buckets, 2);
        assert_eq!(a.partition.len(), 20);
        assert_eq!(a.file.file_name, "data-a-0.parquet");
        assert_eq!(a.file.file_size, 1234);
        assert_eq!(a.file.row_count, 7);
        assert_eq!(a.file.min_sequence_number, 3);
        assert_eq!(a.file.max_sequence_number, 9);
        assert_eq!(a.file.schema_id, 1);
        assert_eq!(a.file.level, 5);
        assert_eq!(
            a.file.extra_files,
            vec!["data-a-0.parquet.index".to_string()]
        );
        assert_eq!(a.file.creation_time, Some(1_700_000_000_000));
        assert_eq!(a.file.delete_row_count, Some(2));
        assert_eq!(a.file.file_source, Some(1));
        assert_eq!(
            a.file.external_path.as_deref(),
            Some("FILE:/tmp/external/f1=10/bucket-1/data-a-0.parquet")
        );
        assert_eq!(a.file.min_key.as_ref(), &EMPTY_ROW[..]);
        assert_eq!(a.file.key_stats.min_values.len(), 20);
        assert_eq!(a.file.value_stats.null_counts, Some(vec![Some(0), None]));
        assert_eq!(a.file.embedded_index, None);
        assert_eq!(a.file.write_cols_sequences, None);

        let b = &entries[1];
        assert_eq!(b.kind, FileKind::Delete);
        assert_eq!(b.total_buckets, -1);
        assert_eq!(b.partition, EMPTY_ROW.to_vec());
        assert_eq!(b.file.embedded_index, Some(vec![9, 9]));
        assert_eq!(
            b.file.value_stats_cols,
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(b.file.first_row_id, Some(100));
        assert_eq!(b.file.write_cols, Some(vec!["c".to_string()]));
        assert_eq!(b.file.creation_time, None);
        assert_eq!(b.file.external_path, None);
    }
}

/// The entry-by-entry decode gives every entry with the same identity fields as the full
/// decode, keys, statistics and column lists left empty; it fails where the full decode fails
/// (every truncation), and an error of the callback stops it and comes back as is.
#[test]
fn entry_by_entry_decode_keeps_what_locates_files() {
    let drop_skipped = |mut e: ManifestEntry| {
        e.file.min_key = Default::default();
        e.file.max_key = Default::default();
        e.file.key_stats = Default::default();
        e.file.value_stats = Default::default();
        e.file.value_stats_cols = None;
        e.file.write_cols = None;
        e.file.write_cols_sequences = None;
        e
    };
    for c in ALL_CODECS {
        let bytes = write_file(JAVA_MANIFEST, c, &[&entry_a, &entry_b]);
        let full = decode_manifest(&bytes, "m").unwrap();
        let mut seen = Vec::new();
        for_each_manifest_file(&bytes, "m", |e| {
            seen.push(e);
            Ok(())
        })
        .unwrap();
        let expected: Vec<ManifestEntry> = full.into_iter().map(drop_skipped).collect();
        assert_eq!(seen, expected, "codec {c}");
        assert_eq!(seen[1].file.embedded_index, Some(vec![9, 9]));

        for cut in 0..bytes.len() {
            let full = decode_manifest(&bytes[..cut], "manifest/manifest-cut-0");
            let each = for_each_manifest_file(&bytes[..cut], "manifest/manifest-cut-0", |_| Ok(()));
            assert_eq!(full.is_ok(), each.is_ok(), "{c} cut {cut}");
            if let Err(err) = each {
                assert!(message(&err).contains("manifest/manifest-cut-0"), "{err}");
            }
        }

        let mut calls = 0;
        let err = for_each_manifest_file(&bytes, "m", |_| {
            calls += 1;
            Err(Error::Internal("stop here".into()))
        })
        .unwrap_err();
        assert_eq!(calls, 1, "codec {c}");
        assert!(
            matches!(&err, Error::Internal(m) if m == "stop here"),
            "{err}"
        );
    }
}

/// The locator decode gives, for every entry, what locates its file exactly as the full decode
/// has it; it fails where the full decode fails (every truncation, every schema), and an error
/// of the callback stops it and comes back as is.
#[test]
fn locator_decode_matches_the_full_decode() {
    for schema in [JAVA_MANIFEST, JAVA_08_MANIFEST, PYPAIMON_MANIFEST] {
        for c in ALL_CODECS {
            let bytes = write_file(schema, c, &[&entry_a, &entry_b]);
            let full = decode_manifest(&bytes, "m").unwrap();
            let mut seen: Vec<String> = Vec::new();
            for_each_file_locator(&bytes, "m", |l| {
                seen.push(format!("{l:?}"));
                Ok(())
            })
            .unwrap();
            let expected: Vec<String> = full
                .iter()
                .map(|e| format!("{:?}", FileLocator::of(e)))
                .collect();
            assert_eq!(seen, expected, "codec {c}");
            assert_eq!(seen.len(), 2);

            for cut in 0..bytes.len() {
                let full = decode_manifest(&bytes[..cut], "manifest/manifest-cut-0");
                let each =
                    for_each_file_locator(&bytes[..cut], "manifest/manifest-cut-0", |_| Ok(()));
                assert_eq!(full.is_ok(), each.is_ok(), "{c} cut {cut}");
                if let Err(err) = each {
                    assert!(message(&err).contains("manifest/manifest-cut-0"), "{err}");
                }
            }

            let mut calls = 0;
            let err = for_each_file_locator(&bytes, "m", |_| {
                calls += 1;
                Err(Error::Internal("stop here".into()))
            })
            .unwrap_err();
            assert_eq!(calls, 1, "codec {c}");
            assert!(
                matches!(&err, Error::Internal(m) if m == "stop here"),
                "{err}"
            );
        }
    }
}

/// Corrupted bytes (every byte of an uncompressed manifest set to a few values): the locator
/// decode fails exactly where the locating decode fails, and where both succeed it gives the
/// same locators (its compiled skips of only-checked fields check what that decode checks).
#[test]
fn locator_decode_matches_the_locating_decode_on_corrupted_bytes() {
    for schema in [JAVA_MANIFEST, JAVA_08_MANIFEST, PYPAIMON_MANIFEST] {
        let bytes = write_file(schema, "null", &[&entry_a, &entry_b]);
        for at in 0..bytes.len() {
            for v in [0x00u8, 0x01, 0x02, 0x03, 0x7f, 0x80, 0xff] {
                let mut bad = bytes.clone();
                bad[at] = v;
                let mut locating: Vec<String> = Vec::new();
                let a = for_each_manifest_file(&bad, "m", |e| {
                    locating.push(format!("{:?}", FileLocator::of(&e)));
                    Ok(())
                });
                let mut located: Vec<String> = Vec::new();
                let b = for_each_file_locator(&bad, "m", |l| {
                    located.push(format!("{l:?}"));
                    Ok(())
                });
                assert_eq!(a.is_ok(), b.is_ok(), "byte {at} = {v:#x}: {a:?} / {b:?}");
                assert_eq!(locating, located, "byte {at} = {v:#x}");
            }
        }
    }
}

#[test]
fn java_08_union_wrapped_manifest() {
    for c in ["snappy", "null"] {
        let bytes = write_file(JAVA_08_MANIFEST, c, &[&entry_a, &entry_b]);
        let entries = decode_manifest(&bytes, "m").unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].file.file_name, "data-a-0.parquet");
        assert_eq!(
            entries[0].file.value_stats.null_counts,
            Some(vec![Some(0), None])
        );
        assert_eq!(entries[0].file.level, 5);
        // fields added after 0.8 are absent from the writer schema
        assert_eq!(entries[0].file.external_path, None);
        assert_eq!(entries[1].file.value_stats_cols, None);
        assert_eq!(entries[1].file.first_row_id, None);
        assert_eq!(entries[1].kind, FileKind::Delete);
    }
}

#[test]
fn pypaimon_manifest_names_do_not_matter() {
    let with_seq = |p: &str| match p {
        "_FILE._WRITE_COLS_SEQUENCES" => Some(Value::Array(vec![Value::Long(4), Value::Long(5)])),
        _ => entry_a(p),
    };
    let bytes = write_file(PYPAIMON_MANIFEST, "zstandard", &[&with_seq]);
    let entries = decode_manifest(&bytes, "m").unwrap();
    assert_eq!(entries[0].file.file_name, "data-a-0.parquet");
    assert_eq!(entries[0].file.write_cols_sequences, Some(vec![4, 5]));
}

#[test]
fn unknown_fields_are_skipped() {
    // Insert unknown fields of assorted types at the top level and inside _FILE.
    let extra_top = r#"{"name":"_FUTURE","type":{"type":"map","values":{"type":"array","items":["null","double"]}}},"#;
    let extra_file = r#"{"name":"_FUTURE_FILE","type":["null",{"type":"record","name":"fut","fields":[{"name":"x","type":"float"},{"name":"y","type":{"type":"fixed","name":"fx","size":3}},{"name":"z","type":{"type":"enum","name":"en","symbols":["A","B"]}},{"name":"b","type":"boolean"}]}]},"#;
    let schema = JAVA_MANIFEST
        .replacen(
            r#"{"name":"_KIND""#,
            &format!(r#"{extra_top}{{"name":"_KIND""#),
            1,
        )
        .replacen(
            r#"{"name":"_FILE_SIZE""#,
            &format!(r#"{extra_file}{{"name":"_FILE_SIZE""#),
            1,
        );
    let overrides = |p: &str| match p {
        "_FUTURE" => Some(Value::Map(
            [(
                "k".to_string(),
                Value::Array(vec![
                    Value::Union(1, Box::new(Value::Double(1.5))),
                    Value::Union(0, Box::new(Value::Null)),
                ]),
            )]
            .into_iter()
            .collect(),
        )),
        "_FILE._FUTURE_FILE" => Some(Value::Record(vec![
            ("x".into(), Value::Float(1.0)),
            ("y".into(), Value::Fixed(3, vec![1, 2, 3])),
            ("z".into(), Value::Enum(1, "B".into())),
            ("b".into(), Value::Boolean(true)),
        ])),
        _ => entry_a(p),
    };
    let bytes = write_file(&schema, "deflate", &[&overrides, &overrides, &entry_b]);
    let entries = decode_manifest(&bytes, "m").unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[1].file.file_name, "data-a-0.parquet");
    assert_eq!(entries[1].file.file_size, 1234);
    assert_eq!(entries[2].file.file_name, "data-b-1.orc");
}

fn list_a(p: &str) -> Option<Value> {
    Some(match p {
        "_VERSION" => Value::Int(2),
        "_FILE_NAME" => s("manifest-abc-0"),
        "_FILE_SIZE" => Value::Long(2502),
        "_NUM_ADDED_FILES" => Value::Long(6),
        "_NUM_DELETED_FILES" => Value::Long(1),
        "_SCHEMA_ID" => Value::Long(3),
        "_MIN_BUCKET" => Value::Int(0),
        "_MAX_BUCKET" => Value::Int(3),
        "_MAX_ROW_ID" => Value::Long(99),
        "_TOTAL_BUCKETS" => Value::Int(4),
        "_EXTRA_FILES" => Value::Array(vec![s("x")]),
        "_PARTITION_STATS._NULL_COUNTS" => Value::Array(vec![Value::Long(0), Value::Long(0)]),
        _ => return None,
    })
}

#[test]
fn manifest_lists_of_every_flavour() {
    for (schema, modern) in [
        (JAVA_LIST, true),
        (JAVA_08_LIST, false),
        (PYPAIMON_LIST, true),
    ] {
        for c in ALL_CODECS {
            let bytes = write_file(schema, c, &[&list_a, &list_a]);
            let metas = decode_manifest_list(&bytes, "manifest/manifest-list-x-1").unwrap();
            assert_eq!(metas.len(), 2);
            let m = &metas[1];
            assert_eq!(m.file_name, "manifest-abc-0");
            assert_eq!(m.file_size, 2502);
            assert_eq!(m.num_added_files, 6);
            assert_eq!(m.num_deleted_files, 1);
            assert_eq!(m.schema_id, 3);
            assert_eq!(m.partition_stats.min_values.as_ref(), &EMPTY_ROW[..]);
            assert_eq!(m.partition_stats.null_counts, Some(vec![Some(0), Some(0)]));
            if modern {
                assert_eq!(m.min_bucket, Some(0));
                assert_eq!(m.max_bucket, Some(3));
                assert_eq!(m.min_level, None);
                assert_eq!(m.max_row_id, Some(99));
            } else {
                assert_eq!(m.max_bucket, None);
            }
        }
    }
}

fn index_dv(p: &str) -> Option<Value> {
    let range = |f: &str, off: i32, card: Option<i64>| {
        Value::Record(vec![
            ("f0".into(), s(f)),
            ("f1".into(), Value::Int(off)),
            ("f2".into(), Value::Int(28)),
            (
                "_CARDINALITY".into(),
                match card {
                    Some(c) => Value::Union(1, Box::new(Value::Long(c))),
                    None => Value::Union(0, Box::new(Value::Null)),
                },
            ),
        ])
    };
    Some(match p {
        "_VERSION" => Value::Int(1),
        "_KIND" => Value::Int(0),
        "_BUCKET" => Value::Int(0),
        "_INDEX_TYPE" => s("DELETION_VECTORS"),
        "_FILE_NAME" => s("index-79ab-1"),
        "_FILE_SIZE" => Value::Long(37),
        "_ROW_COUNT" => Value::Long(2),
        "_GLOBAL_INDEX" => Value::Null,
        "_DELETIONS_VECTORS_RANGES" => Value::Array(vec![
            range("data-1.parquet", 1, Some(4)),
            range("data-2.parquet", 29, None),
        ]),
        _ => return None,
    })
}

fn index_global(p: &str) -> Option<Value> {
    Some(match p {
        "_VERSION" => Value::Int(1),
        "_KIND" => Value::Int(0),
        "_INDEX_TYPE" => s("bitmap"),
        "_FILE_NAME" => s("bitmap-global-index-x.index"),
        "_EXTERNAL_PATH" => s("oss://b/idx/bitmap-global-index-x.index"),
        "_GLOBAL_INDEX._ROW_RANGE_START" => Value::Long(0),
        "_GLOBAL_INDEX._ROW_RANGE_END" => Value::Long(99),
        "_GLOBAL_INDEX._INDEX_FIELD_ID" => Value::Int(3),
        "_GLOBAL_INDEX._EXTRA_FIELD_IDS" => Value::Array(vec![Value::Int(4)]),
        "_GLOBAL_INDEX._INDEX_META" => Value::Bytes(vec![1]),
        _ => return None,
    })
}

#[test]
fn index_manifests() {
    for schema in [JAVA_INDEX, PYPAIMON_INDEX] {
        let bytes = write_file(schema, "zstandard", &[&index_dv, &index_global]);
        let e = decode_index_manifest(&bytes, "manifest/index-manifest-x-0").unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].index_type, "DELETION_VECTORS");
        assert_eq!(e[0].file_name, "index-79ab-1");
        assert_eq!(e[0].dv_data_files, vec!["data-1.parquet", "data-2.parquet"]);
        let r = e[0].dv_ranges.as_ref().unwrap();
        assert_eq!(
            (r[0].offset, r[0].length, r[0].cardinality),
            (1, 28, Some(4))
        );
        assert_eq!(r[1].cardinality, None);
        assert!(!e[0].is_global);
        assert!(e[1].is_global);
        assert_eq!(e[1].dv_ranges, None);
        let g = e[1].global_index.as_ref().unwrap();
        assert_eq!(
            (g.row_range_start, g.row_range_end, g.index_field_id),
            (0, 99, 3)
        );
        assert_eq!(g.extra_field_ids, Some(vec![4]));
        assert_eq!(g.index_meta, Some(vec![1]));
        assert_eq!(
            e[1].external_path.as_deref(),
            Some("oss://b/idx/bitmap-global-index-x.index")
        );
    }
}

fn message(e: &Error) -> String {
    e.to_string()
}

#[test]
fn truncated_files_fail_cleanly() {
    for c in ALL_CODECS {
        let bytes = write_file(JAVA_MANIFEST, c, &[&entry_a, &entry_b]);
        // Avro has no footer: a cut exactly at a block boundary (here: right after the
        // header) is a valid shorter file. Every other cut must be an error naming the file.
        let mut ok_cuts = 0;
        for cut in 0..bytes.len() {
            match decode_manifest(&bytes[..cut], "manifest/manifest-trunc-0") {
                Ok(v) => {
                    assert!(v.is_empty(), "{c} cut {cut}");
                    ok_cuts += 1;
                }
                Err(err) => {
                    assert!(
                        matches!(err, Error::Malformed { .. }),
                        "{c} cut {cut}: {err}"
                    );
                    assert!(message(&err).contains("manifest/manifest-trunc-0"), "{err}");
                }
            }
        }
        assert_eq!(ok_cuts, 1, "{c}");
        let lists = write_file(JAVA_LIST, c, &[&list_a]);
        for cut in 0..lists.len() {
            if let Ok(v) = decode_manifest_list(&lists[..cut], "l") {
                assert!(v.is_empty());
            }
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let bytes = write_file(JAVA_MANIFEST, "null", &[&entry_a, &entry_b, &entry_a]);
    let mut state = 42u64;
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        b[i] ^= (state >> 56) as u8 | 1;
        let _ = decode_manifest(&b, "m");
        let _ = decode_index_manifest(&b, "m");
        let _ = decode_manifest_list(&b, "m");
    }
}

/// Hand-writes a container with an arbitrary codec name and raw blocks.
fn raw_container(schema: &str, codec_name: &str, blocks: &[(i64, Vec<u8>)]) -> Vec<u8> {
    fn long(out: &mut Vec<u8>, v: i64) {
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
    fn bytes(out: &mut Vec<u8>, b: &[u8]) {
        long(out, b.len() as i64);
        out.extend_from_slice(b);
    }
    let mut out = b"Obj\x01".to_vec();
    long(&mut out, 2);
    bytes(&mut out, b"avro.schema");
    bytes(&mut out, schema.as_bytes());
    bytes(&mut out, b"avro.codec");
    bytes(&mut out, codec_name.as_bytes());
    long(&mut out, 0);
    let sync = [7u8; 16];
    out.extend_from_slice(&sync);
    for (count, data) in blocks {
        long(&mut out, *count);
        long(&mut out, data.len() as i64);
        out.extend_from_slice(data);
        out.extend_from_slice(&sync);
    }
    out
}

/// Fuzzing regression: a manifest list whose `_NULL_COUNTS` items are `"null"` (zero bytes
/// each). Before the fix every array block could claim as many items as bytes were left, so a
/// 64 KiB block of headers decoded into ~10^9 items (quadratic time and memory); now a file
/// holds at most `MAX_EMPTY_ITEMS` such items, whatever its blocks.
#[test]
fn zero_byte_array_items_are_bounded_per_file() {
    fn long(out: &mut Vec<u8>, v: i64) {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }
    let schema = JAVA_LIST.replace(
        r#"{"type":"array","items":["null","long"]}"#,
        r#"{"type":"array","items":"null"}"#,
    );
    assert_ne!(schema, JAVA_LIST);
    // One record whose _NULL_COUNTS holds `items` nulls in one array block.
    let record = |items: i64| {
        let mut r = Vec::new();
        long(&mut r, 2); // _VERSION
        long(&mut r, 1); // _FILE_NAME
        r.push(b'm');
        for v in [1, 0, 0] {
            long(&mut r, v); // _FILE_SIZE, _NUM_ADDED_FILES, _NUM_DELETED_FILES
        }
        long(&mut r, 0); // _MIN_VALUES
        long(&mut r, 0); // _MAX_VALUES
        long(&mut r, 1); // _NULL_COUNTS: the array branch
        long(&mut r, items);
        long(&mut r, 0);
        long(&mut r, 0); // _SCHEMA_ID
        r.extend([0u8; 6]); // _MIN_BUCKET .. _MAX_ROW_ID: null
        r
    };
    let n = avro::MAX_EMPTY_ITEMS as i64 * 3 / 5;
    // Within the budget: decodes (one item per null).
    let one = raw_container(&schema, "null", &[(1, record(n))]);
    let metas = decode_manifest_list(&one, "l").unwrap();
    assert_eq!(
        metas[0].partition_stats.null_counts.as_ref().unwrap().len(),
        n as usize
    );
    // Over the budget of the file, spread over two blocks: refused, by every reader.
    let two = raw_container(&schema, "null", &[(1, record(n)), (1, record(n))]);
    let err = decode_manifest_list(&two, "l").unwrap_err();
    assert!(message(&err).contains("takes no bytes"), "{err}");
    let err = read_raw_records(MetadataFileKind::ManifestList, &two, "l").unwrap_err();
    assert!(message(&err).contains("takes no bytes"), "{err}");
    // Many small array blocks in one record (the quadratic case): refused, not looped over.
    let mut r = record(1);
    let tail = r.split_off(r.len() - 7); // _SCHEMA_ID and the six nulls
    r.truncate(r.len() - 2); // the block of one item and the end marker
    for _ in 0..2000 {
        long(&mut r, 1000);
    }
    r.push(0);
    r.extend(tail);
    let f = raw_container(&schema, "null", &[(1, r)]);
    let err = decode_manifest_list(&f, "l").unwrap_err();
    assert!(message(&err).contains("takes no bytes"), "{err}");
}

#[test]
fn unknown_codec_is_named() {
    let f = raw_container(JAVA_LIST, "bzip2", &[(1, vec![0; 10])]);
    let err = decode_manifest_list(&f, "manifest/manifest-list-bz-0").unwrap_err();
    let msg = message(&err);
    assert!(matches!(err, Error::Malformed { .. }));
    assert!(msg.contains("bzip2"), "{msg}");
    assert!(msg.contains("manifest/manifest-list-bz-0"), "{msg}");
}

#[test]
fn unknown_magic_is_named() {
    for bad in [&b"PK\x03\x04rest"[..], b"", b"Ob", b"{\"id\": 1}"] {
        let err = decode_manifest(bad, "manifest/manifest-zip-0").unwrap_err();
        let msg = message(&err);
        assert!(matches!(err, Error::Malformed { .. }));
        assert!(msg.contains("unknown magic"), "{msg}");
        assert!(msg.contains("manifest/manifest-zip-0"), "{msg}");
    }
    assert_eq!(detect_format(b"ORC\x11"), Some(ManifestFormat::Orc));
    assert_eq!(detect_format(b"PAR1xx"), Some(ManifestFormat::Parquet));
}

#[test]
fn version_one_is_unsupported() {
    let v1 = |p: &str| match p {
        "_VERSION" => Some(Value::Int(1)),
        _ => entry_a(p),
    };
    let bytes = write_file(JAVA_MANIFEST, "null", &[&v1]);
    let err = decode_manifest(&bytes, "manifest/manifest-old-0").unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    assert!(message(&err).contains("manifest/manifest-old-0"));
    let l1 = |p: &str| match p {
        "_VERSION" => Some(Value::Int(1)),
        _ => list_a(p),
    };
    let bytes = write_file(JAVA_LIST, "null", &[&l1]);
    assert!(matches!(
        decode_manifest_list(&bytes, "l"),
        Err(Error::Unsupported(_))
    ));
    // index manifests are version 1; 2 is unknown
    let i2 = |p: &str| match p {
        "_VERSION" => Some(Value::Int(2)),
        _ => index_dv(p),
    };
    let bytes = write_file(JAVA_INDEX, "null", &[&i2]);
    assert!(matches!(
        decode_index_manifest(&bytes, "i"),
        Err(Error::Unsupported(_))
    ));
}

#[test]
fn schema_problems_are_reported() {
    // a manifest decoded as a manifest list: required fields missing
    let bytes = write_file(JAVA_MANIFEST, "null", &[&entry_a]);
    let err = decode_manifest_list(&bytes, "manifest/manifest-list-wrong").unwrap_err();
    assert!(
        message(&err).contains("writer schema has no field"),
        "{err}"
    );
    // wrong type for a known field
    let schema = JAVA_LIST.replace(
        r#"{"name":"_FILE_SIZE","type":"long"}"#,
        r#"{"name":"_FILE_SIZE","type":"string"}"#,
    );
    let overrides = |p: &str| match p {
        "_FILE_SIZE" => Some(s("big")),
        _ => list_a(p),
    };
    let bytes = write_file(&schema, "null", &[&overrides]);
    let err = decode_manifest_list(&bytes, "l").unwrap_err();
    assert!(message(&err).contains("_FILE_SIZE"), "{err}");
    // not JSON at all / no schema
    assert!(decode_manifest(&raw_container("{oops", "null", &[]), "m").is_err());
    // empty file (no blocks) decodes to nothing
    assert!(
        decode_manifest(&raw_container(JAVA_MANIFEST, "null", &[]), "m")
            .unwrap()
            .is_empty()
    );
    // a block claiming more records than bytes
    let f = raw_container(JAVA_MANIFEST, "null", &[(1_000_000, vec![0; 3])]);
    assert!(decode_manifest(&f, "m").is_err());
    // trailing bytes after the records of a block
    let good = write_file(JAVA_MANIFEST, "null", &[&entry_b]);
    let entries = decode_manifest(&good, "m").unwrap();
    assert_eq!(entries.len(), 1);
}

#[test]
fn null_required_file_is_an_error() {
    let overrides = |p: &str| match p {
        "_FILE" => Some(Value::Null),
        _ => entry_a(p),
    };
    let bytes = write_file(JAVA_08_MANIFEST, "null", &[&overrides]);
    let err = decode_manifest(&bytes, "m").unwrap_err();
    assert!(message(&err).contains("_FILE"), "{err}");
}

#[cfg(feature = "parquet")]
mod parquet_manifests {
    use std::sync::Arc;

    use arrow_array::builder::{BinaryBuilder, Int64Builder, ListBuilder, StringBuilder};
    use arrow_array::{
        Array, ArrayRef, BinaryArray, Int32Array, Int64Array, Int8Array, RecordBatch, StringArray,
        StructArray,
    };
    use arrow_schema::{DataType, Field, Fields};
    use parquet::arrow::ArrowWriter;

    use super::*;

    fn write(batch: &RecordBatch) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        buf
    }

    fn stats(n: usize) -> (Field, ArrayRef) {
        let mut nulls = ListBuilder::new(Int64Builder::new());
        for _ in 0..n {
            nulls.values().append_value(0);
            nulls.values().append_null();
            nulls.append(true);
        }
        let nulls = nulls.finish();
        let fields = Fields::from(vec![
            Field::new("_MIN_VALUES", DataType::Binary, false),
            Field::new("_MAX_VALUES", DataType::Binary, false),
            Field::new("_NULL_COUNTS", nulls.data_type().clone(), true),
        ]);
        let min: BinaryArray = (0..n).map(|_| Some(&EMPTY_ROW[..])).collect();
        let max: BinaryArray = (0..n).map(|_| Some(&EMPTY_ROW[..])).collect();
        let s = StructArray::new(
            fields.clone(),
            vec![Arc::new(min), Arc::new(max), Arc::new(nulls)],
            None,
        );
        (
            Field::new("_STATS", DataType::Struct(fields), false),
            Arc::new(s),
        )
    }

    #[test]
    fn parquet_manifest_list() {
        let (sf, sa) = stats(2);
        let schema = Arc::new(arrow_schema::Schema::new(vec![
            Field::new("_VERSION", DataType::Int32, false),
            Field::new("_FILE_NAME", DataType::Utf8, false),
            Field::new("_FILE_SIZE", DataType::Int64, false),
            Field::new("_NUM_ADDED_FILES", DataType::Int64, false),
            Field::new("_NUM_DELETED_FILES", DataType::Int64, false),
            Field::new("_PARTITION_STATS", sf.data_type().clone(), false),
            Field::new("_SCHEMA_ID", DataType::Int64, false),
            Field::new("_MIN_BUCKET", DataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![2, 2])),
                Arc::new(StringArray::from(vec!["manifest-a-0", "manifest-a-1"])),
                Arc::new(Int64Array::from(vec![10, 20])),
                Arc::new(Int64Array::from(vec![1, 2])),
                Arc::new(Int64Array::from(vec![0, 1])),
                sa,
                Arc::new(Int64Array::from(vec![0, 0])),
                Arc::new(Int32Array::from(vec![Some(1), None])),
            ],
        )
        .unwrap();
        let bytes = write(&batch);
        let metas = decode_manifest_list(&bytes, "manifest/manifest-list-pq-0").unwrap();
        assert_eq!(metas.len(), 2);
        assert_eq!(metas[1].file_name, "manifest-a-1");
        assert_eq!(metas[1].num_deleted_files, 1);
        assert_eq!(metas[0].min_bucket, Some(1));
        assert_eq!(metas[1].min_bucket, None);
        assert_eq!(
            metas[0].partition_stats.null_counts,
            Some(vec![Some(0), None])
        );
        // truncated Parquet → error, not panic
        for cut in [4, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode_manifest_list(&bytes[..cut], "x").is_err());
        }
    }

    #[test]
    fn parquet_manifest() {
        let (sf, sa) = stats(1);
        let mut extra = ListBuilder::new(StringBuilder::new());
        extra.values().append_value("data-0.orc.index");
        extra.append(true);
        let extra = extra.finish();
        let mut min_key = BinaryBuilder::new();
        min_key.append_value(EMPTY_ROW);
        let file_fields = Fields::from(vec![
            Field::new("_FILE_NAME", DataType::Utf8, false),
            Field::new("_FILE_SIZE", DataType::Int64, false),
            Field::new("_ROW_COUNT", DataType::Int64, false),
            Field::new("_MIN_KEY", DataType::Binary, false),
            Field::new("_KEY_STATS", sf.data_type().clone(), false),
            Field::new("_MIN_SEQUENCE_NUMBER", DataType::Int64, false),
            Field::new("_MAX_SEQUENCE_NUMBER", DataType::Int64, false),
            Field::new("_SCHEMA_ID", DataType::Int64, false),
            Field::new("_LEVEL", DataType::Int32, false),
            Field::new("_EXTRA_FILES", extra.data_type().clone(), false),
            Field::new("_EXTERNAL_PATH", DataType::Utf8, true),
        ]);
        let file = StructArray::new(
            file_fields.clone(),
            vec![
                Arc::new(StringArray::from(vec!["data-0.orc"])),
                Arc::new(Int64Array::from(vec![99])),
                Arc::new(Int64Array::from(vec![3])),
                Arc::new(min_key.finish()),
                sa,
                Arc::new(Int64Array::from(vec![1])),
                Arc::new(Int64Array::from(vec![2])),
                Arc::new(Int64Array::from(vec![0])),
                Arc::new(Int32Array::from(vec![0])),
                Arc::new(extra),
                Arc::new(StringArray::from(vec![None::<&str>])),
            ],
            None,
        );
        let schema = Arc::new(arrow_schema::Schema::new(vec![
            Field::new("_VERSION", DataType::Int32, false),
            Field::new("_KIND", DataType::Int8, false),
            Field::new("_PARTITION", DataType::Binary, false),
            Field::new("_BUCKET", DataType::Int32, false),
            Field::new("_TOTAL_BUCKETS", DataType::Int32, false),
            Field::new("_FILE", DataType::Struct(file_fields), false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![2])),
                Arc::new(Int8Array::from(vec![1])),
                Arc::new(BinaryArray::from(vec![&EMPTY_ROW[..]])),
                Arc::new(Int32Array::from(vec![0])),
                Arc::new(Int32Array::from(vec![-1])),
                Arc::new(file),
            ],
        )
        .unwrap();
        let bytes = write(&batch);
        let e = decode_manifest(&bytes, "manifest/manifest-pq-0").unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].kind, FileKind::Delete);
        assert_eq!(e[0].file.file_name, "data-0.orc");
        assert_eq!(e[0].file.extra_files, vec!["data-0.orc.index".to_string()]);
        assert_eq!(e[0].file.min_sequence_number, 1);
        assert_eq!(e[0].file.external_path, None);
        assert_eq!(e[0].file.key_stats.null_counts, Some(vec![Some(0), None]));
        // a Parquet file that is not a manifest: names the missing column
        let err = decode_index_manifest(&bytes, "manifest/index-manifest-pq").unwrap_err();
        assert!(err.to_string().contains("_INDEX_TYPE"), "{err}");
    }
}

/// Throughput check (run with `cargo test --release -- --ignored decode_speed --nocapture`).
#[test]
#[ignore]
fn decode_speed() {
    let overrides = |p: &str| match p {
        "_FILE._VALUE_STATS._MIN_VALUES" => Some(Value::Bytes(vec![7u8; 200])),
        "_FILE._VALUE_STATS._MAX_VALUES" => Some(Value::Bytes(vec![8u8; 200])),
        _ => entry_a(p),
    };
    let records: Vec<&Overrides<'_>> = (0..100_000).map(|_| &overrides as _).collect();
    let bytes = write_file(JAVA_MANIFEST, "zstandard", &records);
    let start = std::time::Instant::now();
    let mut n = 0;
    for _ in 0..10 {
        n += decode_manifest(&bytes, "m").unwrap().len();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "decoded {n} entries from {} KiB files in {secs:.3}s: {:.0} entries/s",
        bytes.len() / 1024,
        n as f64 / secs
    );
}

#[test]
fn columnar_formats_without_or_with_their_feature() {
    let fake_parquet = b"PAR1 not really parquet";
    let fake_orc = b"ORC not really orc";
    let pq = decode_manifest(fake_parquet, "manifest/manifest-pq-0").unwrap_err();
    let orc = decode_manifest_list(fake_orc, "manifest/manifest-list-orc-0").unwrap_err();
    #[cfg(feature = "parquet")]
    assert!(matches!(pq, Error::Malformed { .. }), "{pq}");
    #[cfg(not(feature = "parquet"))]
    assert!(
        matches!(pq, Error::Unsupported(ref m) if m.contains("'parquet' feature")),
        "{pq}"
    );
    #[cfg(feature = "orc")]
    assert!(matches!(orc, Error::Malformed { .. }), "{orc}");
    #[cfg(not(feature = "orc"))]
    assert!(
        matches!(orc, Error::Unsupported(ref m) if m.contains("'orc' feature")),
        "{orc}"
    );
    assert!(pq.to_string().contains("manifest/manifest-pq-0"));
    assert!(orc.to_string().contains("manifest/manifest-list-orc-0"));
}

/// Plans are cached per thread by writer schema and kind of decode: one schema decoded in full,
/// entry by entry and as locators, alternately, gives each decode its own plan (the locating
/// ones leave the statistics empty, the full one keeps them), and a plan that fails (a manifest
/// read as a manifest list) is not kept: it fails the same way every time, and the schema's
/// other plans still work.
#[test]
fn plans_are_cached_per_schema_and_kind_of_decode() {
    let bytes = write_file(JAVA_MANIFEST, "null", &[&entry_a, &entry_b]);
    let first = decode_manifest(&bytes, "m").unwrap();
    assert!(first
        .iter()
        .any(|e| !e.file.value_stats.min_values.is_empty()));
    for round in 0..3 {
        let err = decode_manifest_list(&bytes, "manifest/manifest-list-wrong").unwrap_err();
        assert!(message(&err).contains("writer schema"), "{round}: {err}");
        let mut each = Vec::new();
        for_each_manifest_file(&bytes, "m", |e| {
            each.push(e);
            Ok(())
        })
        .unwrap();
        assert!(each
            .iter()
            .all(|e| e.file.value_stats.min_values.is_empty()));
        assert_eq!(each.len(), first.len());
        let mut names = Vec::new();
        for_each_file_locator(&bytes, "m", |l| {
            names.push(l.file_name.to_string());
            Ok(())
        })
        .unwrap();
        let full: Vec<String> = first.iter().map(|e| e.file.file_name.clone()).collect();
        assert_eq!(names, full, "{round}");
        assert_eq!(decode_manifest(&bytes, "m").unwrap(), first, "{round}");
    }
}
