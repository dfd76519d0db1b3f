//! Drop and expire partitions through real OVERWRITE commits, checked by pypaimon:
//! after a drop pypaimon reads exactly the other partitions' rows at the new snapshot and the
//! old rows at the snapshot before; pypaimon commits on top and reads its rows back; a later
//! snapshot expiry deletes the dropped files no remaining version needs. Escaped, NULL, '' and
//! non-ASCII values; INT, DATE and STRING keys; partial specs; races of this library against
//! itself and against a pypaimon writer process (every commit lands once, ids contiguous);
//! lost publishes with an unknown outcome; both expiry strategies; bad input commits nothing;
//! the Avro writer round-trips every Java fixture manifest.

mod common;

use common::snapshot_ids;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{Days, NaiveDate};
use serde_json::{json, Value};

use paimon_cleanup::clean::partitions::filter::parse_partition_spec;
use paimon_cleanup::clean::{
    drop_partitions, expire_partitions, expire_snapshots, preview_drop_partitions, ExpireConfig,
    PartitionExpireConfig, PartitionExpireStrategy, PartitionReport, RetentionOverrides,
    RunControl,
};
use paimon_cleanup::spec::manifest::{
    decode_index_manifest, decode_manifest, decode_manifest_list, detect_format, encode_records,
    read_raw_records, writer::encode_index_manifest, writer::encode_manifest,
    writer::encode_manifest_list, ManifestCompression, ManifestFormat, MetadataFileKind,
};
use paimon_cleanup::spec::snapshot::CommitKind;
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;
use paimon_cleanup::Error;

type Spec = BTreeMap<String, String>;

/// Which rows a drop step removes.
type Gone = Box<dyn Fn(&Value) -> bool>;

fn spec(pairs: &[(&str, &str)]) -> Spec {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn opts(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn open(table: &Path, overrides: &HashMap<String, String>) -> paimon_cleanup::Result<Table> {
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new())?);
    Table::open(storage, overrides).await
}

fn drop_with(
    table: &Path,
    overrides: &HashMap<String, String>,
    specs: &[Spec],
) -> paimon_cleanup::Result<PartitionReport> {
    common::rt().block_on(async {
        let t = open(table, overrides).await?;
        drop_partitions(&t, specs, None, None, &RunControl::default()).await
    })
}

fn drop(table: &Path, specs: &[Spec]) -> PartitionReport {
    drop_with(table, &HashMap::new(), specs)
        .unwrap_or_else(|e| panic!("drop {specs:?} failed: {e}"))
}

/// Previews a drop (commits nothing: the snapshot ids stay the same), drops, and checks that
/// the preview named exactly what the drop committed.
fn preview_then_drop(table: &Path, specs: &[Spec]) -> PartitionReport {
    let before = snapshot_ids(table);
    let preview = common::rt()
        .block_on(async {
            let t = open(table, &HashMap::new()).await?;
            preview_drop_partitions(&t, specs, &RunControl::default()).await
        })
        .unwrap_or_else(|e| panic!("preview {specs:?} failed: {e}"));
    assert_eq!(snapshot_ids(table), before, "a preview committed");
    assert!(
        preview.dry_run && preview.snapshot_ids.is_empty(),
        "{preview:?}"
    );
    let done = drop(table, specs);
    let comparable = |r: &PartitionReport| PartitionReport {
        dry_run: false,
        snapshot_ids: Vec::new(),
        retries: 0,
        elapsed_ms: 0,
        ..r.clone()
    };
    assert_eq!(comparable(&preview), comparable(&done));
    done
}

fn expire(table: &Path, cfg: &PartitionExpireConfig) -> PartitionReport {
    common::rt()
        .block_on(async {
            let t = open(table, &HashMap::new()).await?;
            expire_partitions(&t, cfg, &RunControl::default()).await
        })
        .unwrap_or_else(|e| panic!("expire partitions failed: {e}"))
}

/// Runs `tests/py/partitions.py run` with a list of operations; one result per operation.
fn py_run(ops: Value) -> Vec<Value> {
    let py = common::python().expect("python");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), ops.to_string()).unwrap();
    let out = common::run_py(
        &py,
        "partitions.py",
        &["run", file.path().to_str().unwrap()],
    )
    .unwrap_or_else(|e| panic!("partitions.py run failed: {e}"));
    serde_json::from_str::<Vec<Value>>(&out).unwrap()
}

/// Rows (JSON arrays in schema order) of each requested snapshot (`None` = latest).
fn rows_at(table: &Path, snapshots: &[Option<i64>]) -> Vec<Vec<Value>> {
    let ops: Vec<Value> = snapshots
        .iter()
        .map(|s| json!({"op": "rows", "table": table, "snapshot": s}))
        .collect();
    py_run(Value::Array(ops))
        .into_iter()
        .map(|r| r["rows"].as_array().unwrap().clone())
        .collect()
}

fn without(rows: &[Value], gone: impl Fn(&Value) -> bool) -> Vec<Value> {
    rows.iter().filter(|r| !gone(r)).cloned().collect()
}

fn sorted(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by_key(|r| r.to_string());
    v
}

fn snapshot_json(table: &Path, id: i64) -> Value {
    serde_json::from_slice(&std::fs::read(table.join(format!("snapshot/snapshot-{id}"))).unwrap())
        .unwrap()
}

fn local_day(offset_days: i64, today: NaiveDate) -> NaiveDate {
    if offset_days >= 0 {
        today
            .checked_add_days(Days::new(offset_days as u64))
            .unwrap()
    } else {
        today
            .checked_sub_days(Days::new(offset_days.unsigned_abs()))
            .unwrap()
    }
}

// ---------------------------------------------------------------------------------------------
// The Avro writer against real files
// ---------------------------------------------------------------------------------------------

#[test]
fn writer_round_trips_every_java_fixture_metadata_file() {
    let Some(root) = common::fixtures_dir() else {
        return;
    };
    let mut checked = 0;
    for table in common::fixture_tables(&root) {
        let Ok(dir) = std::fs::read_dir(table.join("manifest")) else {
            continue;
        };
        for f in dir.flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            let bytes = std::fs::read(f.path()).unwrap();
            if detect_format(&bytes) != Some(ManifestFormat::Avro) {
                continue;
            }
            let kind = if name.starts_with("manifest-list-") {
                MetadataFileKind::ManifestList
            } else if name.starts_with("index-manifest-") {
                MetadataFileKind::IndexManifest
            } else if name.starts_with("manifest-") {
                MetadataFileKind::Manifest
            } else {
                continue;
            };
            let raw = read_raw_records(kind, &bytes, &name).unwrap();
            let c = ManifestCompression::default();
            let (typed_again, raw_again) = match kind {
                MetadataFileKind::ManifestList => {
                    let typed = decode_manifest_list(&bytes, &name).unwrap();
                    let a = encode_manifest_list(&typed, Some(&raw.schema), c).unwrap();
                    let b = encode_records(kind, &raw.records, Some(&raw.schema), c).unwrap();
                    assert_eq!(decode_manifest_list(&a, &name).unwrap(), typed, "{name}");
                    assert_eq!(decode_manifest_list(&b, &name).unwrap(), typed, "{name}");
                    (a, b)
                }
                MetadataFileKind::Manifest => {
                    let typed = decode_manifest(&bytes, &name).unwrap();
                    let a = encode_manifest(&typed, Some(&raw.schema), c).unwrap();
                    let b = encode_records(kind, &raw.records, Some(&raw.schema), c).unwrap();
                    assert_eq!(decode_manifest(&a, &name).unwrap(), typed, "{name}");
                    assert_eq!(decode_manifest(&b, &name).unwrap(), typed, "{name}");
                    (a, b)
                }
                MetadataFileKind::IndexManifest => {
                    let typed = decode_index_manifest(&bytes, &name).unwrap();
                    let a = encode_index_manifest(&typed, Some(&raw.schema), c).unwrap();
                    let b = encode_records(kind, &raw.records, Some(&raw.schema), c).unwrap();
                    assert_eq!(decode_index_manifest(&a, &name).unwrap(), typed, "{name}");
                    assert_eq!(decode_index_manifest(&b, &name).unwrap(), typed, "{name}");
                    (a, b)
                }
            };
            // The raw route keeps the file's own schema, byte for byte in the header.
            let again = read_raw_records(kind, &raw_again, &name).unwrap();
            assert_eq!(again.schema.json(), raw.schema.json(), "{name}");
            assert_eq!(again.records, raw.records, "{name}");
            assert!(read_raw_records(kind, &typed_again, &name).is_ok());
            checked += 1;
        }
    }
    eprintln!("re-encoded {checked} Java-written Avro metadata files");
    assert!(checked > 100, "only {checked} files checked");
}

// ---------------------------------------------------------------------------------------------
// Drops on pypaimon-written tables
// ---------------------------------------------------------------------------------------------

/// append_unaware rows are [id, v, dt, hr].
fn dt_of(r: &Value) -> Option<&str> {
    r[2].as_str()
}

#[test]
fn drops_escaped_null_empty_and_non_ascii_partitions_then_pypaimon_writes_and_expiry_frees() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    assert_eq!(snapshot_ids(&table).last(), Some(&6));
    let steps: Vec<(Vec<Spec>, Gone)> = vec![
        (
            vec![spec(&[("dt", "a/b")])],
            Box::new(|r| dt_of(r) == Some("a/b")),
        ),
        // '' is the empty string only: the NULL partition sharing its directory stays.
        (
            vec![spec(&[("dt", "")])],
            Box::new(|r| dt_of(r) == Some("")),
        ),
        (
            vec![spec(&[("dt", "x=y"), ("hr", "0")])],
            Box::new(|r| dt_of(r) == Some("x=y") && r[3] == 0),
        ),
        (
            vec![spec(&[("dt", "%41")]), spec(&[("dt", "ü日")])],
            Box::new(|r| matches!(dt_of(r), Some("%41") | Some("ü日"))),
        ),
        // Nothing matches: Java still commits an (empty) OVERWRITE snapshot (P14).
        (vec![spec(&[("dt", "no-such-day")])], Box::new(|_| false)),
    ];
    let mut reports = Vec::new();
    for (specs, _) in &steps {
        reports.push(drop(&table, specs));
    }
    for (i, r) in reports.iter().enumerate() {
        assert_eq!(r.snapshot_ids, vec![7 + i as i64], "step {i}: {r:?}");
        let s = snapshot_json(&table, 7 + i as i64);
        assert_eq!(s["commitKind"], "OVERWRITE");
        assert_eq!(s["version"], 3);
        assert_eq!(s["commitIdentifier"], i64::MAX);
    }
    assert_eq!(
        reports[1].partitions,
        vec![spec(&[("dt", ""), ("hr", "0")])]
    );
    assert_eq!(reports[1].names, vec!["dt=''/hr=0".to_string()]);
    assert_eq!(reports[4].files_marked_deleted, 0);
    assert!(reports[4].partitions.is_empty());

    // pypaimon: every step removes exactly its rows; the snapshot before still reads them all;
    // then it commits on top (into a dropped partition and a kept one) and reads that back.
    let mut ops: Vec<Value> = (6..=11)
        .map(|s| json!({"op": "rows", "table": table, "snapshot": s}))
        .collect();
    ops.push(json!({"op": "append", "table": table, "rows": [
        {"id": 900, "v": "again", "dt": "a/b", "hr": 0},
        {"id": 901, "v": "kept", "dt": "2024-01-01", "hr": 1}]}));
    ops.push(json!({"op": "rows", "table": table, "snapshot": null}));
    let out = py_run(Value::Array(ops));
    let rows: Vec<Vec<Value>> = out[..6]
        .iter()
        .map(|r| r["rows"].as_array().unwrap().clone())
        .collect();
    for (i, (_, gone)) in steps.iter().enumerate() {
        let expected = without(&rows[i], gone);
        assert_eq!(rows[i + 1], expected, "snapshot {} rows", 7 + i);
        let removed = (rows[i].len() - expected.len()) as u64;
        assert_eq!(reports[i].rows_marked_deleted, removed, "step {i}");
        assert_eq!(
            snapshot_json(&table, 7 + i as i64)["deltaRecordCount"],
            -(removed as i64)
        );
        assert_eq!(
            snapshot_json(&table, 7 + i as i64)["totalRecordCount"],
            expected.len() as i64
        );
    }
    assert_eq!(out[6]["snapshot_id"], 12);
    let mut after_append = rows[5].clone();
    after_append.push(json!([900, "again", "a/b", 0]));
    after_append.push(json!([901, "kept", "2024-01-01", 1]));
    assert_eq!(
        sorted(out[7]["rows"].as_array().unwrap().clone()),
        sorted(after_append)
    );

    // Snapshot expiry now deletes the dropped files that no remaining version needs (the tag
    // t1 and branch b1 still need some; the consumer would hold everything back).
    std::fs::remove_file(table.join("consumer/consumer-c1")).unwrap();
    let xy_before: Vec<String> = common::data_files_on_disk(&table)
        .into_iter()
        .filter(|f| f.starts_with("dt=x%3Dy/hr=0/"))
        .collect();
    assert_eq!(xy_before.len(), 2, "{xy_before:?}");
    let cfg = ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            limit: Some(1000),
            ..Default::default()
        },
        ..Default::default()
    };
    let expired = common::rt()
        .block_on(async {
            let t = open(&table, &HashMap::new()).await?;
            expire_snapshots(&t, &cfg, &RunControl::default()).await
        })
        .unwrap();
    assert_eq!(expired.earliest_after, Some(12));
    let after = common::all_versions(&table);
    for (k, v) in &after {
        assert!(v.get("error").is_none(), "{k} unreadable after expiry: {v}");
    }
    let needed: BTreeSet<String> = after
        .values()
        .flat_map(|v| v["live_files"].as_array().unwrap().clone())
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let on_disk: BTreeSet<String> = common::data_files_on_disk(&table)
        .into_iter()
        .filter(|f| !f.ends_with("_SUCCESS"))
        .collect();
    assert_eq!(on_disk, needed, "data files left vs needed");
    let xy_after: Vec<&String> = on_disk
        .iter()
        .filter(|f| f.starts_with("dt=x%3Dy/hr=0/"))
        .collect();
    assert_eq!(
        xy_after.len(),
        1,
        "the tag's x=y file stays, the other goes"
    );
}

#[test]
fn drops_int_date_and_string_keys_with_partial_specs() {
    if common::python().is_none() {
        return;
    }
    let wh = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    let mut id = 0;
    for p in [1, 2] {
        for d in ["2024-01-01", "2024-01-02"] {
            for s in [json!("a"), json!("b/c"), Value::Null] {
                for _ in 0..2 {
                    rows.push(json!({"id": id, "v": format!("v{id}"), "p": p, "d": d, "s": s}));
                    id += 1;
                }
            }
        }
    }
    let (first, second): (Vec<Value>, Vec<Value>) = rows.into_iter().partition(|r| r["p"] == 1);
    let table = wh.path().join("db.db/keys3");
    py_run(json!([
        {"op": "create", "warehouse": wh.path(), "name": "keys3",
         "fields": [["id", "int64", false], ["v", "string", true], ["p", "int32", true],
                    ["d", "date32", true], ["s", "string", true]],
         "partition_keys": ["p", "d", "s"], "options": {"bucket": "-1"}},
        {"op": "append", "table": table, "rows": first},
        {"op": "append", "table": table, "rows": second},
    ]));
    // DATE partitions live in epoch-day directories.
    assert!(table.join("p=1/d=19723/s=a").is_dir());
    // Rows are [id, v, p, d, s].
    let steps: Vec<(Vec<Spec>, Gone)> = vec![
        (
            vec![spec(&[("p", "1"), ("d", "2024-01-01")])],
            Box::new(|r| r[2] == 1 && r[3] == "2024-01-01"),
        ),
        (
            vec![spec(&[("d", "19724"), ("s", "b/c")])],
            Box::new(|r| r[3] == "2024-01-02" && r[4] == "b/c"),
        ),
        (
            vec![spec(&[("s", "__DEFAULT_PARTITION__")])],
            Box::new(|r| r[4].is_null()),
        ),
        (
            vec![spec(&[("p", "02"), ("d", "2024-01-01"), ("s", "a")])],
            Box::new(|r| r[2] == 2 && r[3] == "2024-01-01" && r[4] == "a"),
        ),
    ];
    for (specs, _) in &steps {
        let r = preview_then_drop(&table, specs);
        assert!(r.files_marked_deleted > 0, "{specs:?}: {r:?}");
    }
    let snaps: Vec<Option<i64>> = (2..=6).map(Some).collect();
    let rows = rows_at(&table, &snaps);
    assert_eq!(rows[0].len(), 24);
    for (i, (specs, gone)) in steps.iter().enumerate() {
        assert_eq!(rows[i + 1], without(&rows[i], gone), "{specs:?}");
        assert!(
            rows[i + 1].len() < rows[i].len(),
            "{specs:?} dropped nothing"
        );
    }
}

#[test]
fn index_manifests_lose_dropped_partitions_and_pypaimon_keeps_writing() {
    let Some((_t1, pk, _)) = common::pypaimon_table("pk_dynamic") else {
        return;
    };
    let (_t2, dv, _) = common::pypaimon_table("dv_table").unwrap();
    let r = preview_then_drop(&pk, &[spec(&[("p", "0")])]);
    assert!(r.index_entries_removed >= 1, "{r:?}");
    let r2 = preview_then_drop(&dv, &[spec(&[("dt", "a")])]);
    assert_eq!(r2.index_entries_removed, 1, "{r2:?}");
    // Our own reader: no index entry of a dropped partition is left.
    common::rt().block_on(async {
        for (path, key) in [(&pk, "p=0"), (&dv, "dt=a")] {
            let t = open(path, &HashMap::new()).await.unwrap();
            let dir = t.snapshots();
            let latest = dir.latest_id(t.storage()).await.unwrap().unwrap();
            let s = dir.read(t.storage(), latest).await.unwrap();
            let entries = t
                .reader()
                .index_manifest(t.paths(), s.index_manifest.as_deref().unwrap())
                .await
                .unwrap();
            for e in entries {
                assert_ne!(
                    t.paths().partition_path(&e.partition).unwrap(),
                    format!("{key}/")
                );
            }
        }
    });
    // pypaimon reads both, and writes into the dropped partition of the dynamic-bucket table
    // (which needs a consistent hash index).
    let out = py_run(json!([
        {"op": "rows", "table": pk, "snapshot": r.snapshot_ids[0] - 1},
        {"op": "rows", "table": dv, "snapshot": null},
        {"op": "append", "table": pk, "rows": [
            {"id": 1, "v": "new0", "p": 0}, {"id": 3, "v": "new1", "p": 1}]},
        {"op": "rows", "table": pk, "snapshot": null},
    ]));
    let before = out[0]["rows"].as_array().unwrap();
    let dv_rows = out[1]["rows"].as_array().unwrap();
    assert!(!dv_rows.is_empty());
    assert!(dv_rows.iter().all(|r| r[2] == "b"), "{dv_rows:?}");
    let pk_rows = out[3]["rows"].as_array().unwrap();
    let mut expected: Vec<Value> = before
        .iter()
        .filter(|r| r[2] == 1 && r[0] != 3)
        .cloned()
        .collect();
    expected.push(json!([1, "new0", 0]));
    expected.push(json!([3, "new1", 1]));
    assert_eq!(sorted(pk_rows.clone()), sorted(expected));
}

#[test]
fn every_codec_and_a_java_table_read_by_pypaimon() {
    let Some((_t, base, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let mut dirs = Vec::new();
    let mut ops = Vec::new();
    for codec in ["null", "deflate", "snappy", "zstd"] {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().join("t");
        common::copy_dir(&base, &t);
        drop_with(
            &t,
            &opts(&[("manifest.compression", codec)]),
            &[spec(&[("p", "1")])],
        )
        .unwrap();
        ops.push(json!({"op": "rows", "table": t, "snapshot": null}));
        dirs.push(tmp);
    }
    // A Java-written table (Avro manifests, deletion vectors): its own writer schemas are reused.
    let java = common::fixtures_dir().map(|root| {
        let src = root.join(
            "parquet/pk_dv_index_not_in_data_no_external.db/pk_dv_index_not_in_data_no_external",
        );
        let (tmp, t) = common::copy_table(&src);
        (tmp, t)
    });
    if let Some((_, t)) = &java {
        let r = drop(t, &[spec(&[("f1", "20")])]);
        assert_eq!(r.partitions, vec![spec(&[("f1", "20")])]);
        ops.push(json!({"op": "rows", "table": t, "snapshot": null}));
        ops.push(json!({"op": "rows", "table": t, "snapshot": r.snapshot_ids[0] - 1}));
    }
    // The snapshot before the drop, in the first copy.
    ops.push(json!({"op": "rows", "table": dirs[0].path().join("t"), "snapshot": 3}));
    let out = py_run(Value::Array(ops));
    let before = out.last().unwrap()["rows"].as_array().unwrap().clone();
    // append_fixed_bucket rows are [id, v, p].
    let expected = without(&before, |r| r[2] == 1);
    for (i, codec) in ["null", "deflate", "snappy", "zstd"].iter().enumerate() {
        assert_eq!(out[i]["rows"].as_array().unwrap(), &expected, "{codec}");
    }
    if java.is_some() {
        let b = out[5]["rows"].as_array().unwrap();
        let a = out[4]["rows"].as_array().unwrap();
        assert_eq!(a, &without(b, |r| r[1] == 20), "java table after the drop");
        assert!(a.len() < b.len());
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------------------

#[test]
fn bad_input_is_an_error_and_commits_nothing() {
    let Some((_t, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let tree = common::tree(&table);
    let bad: Vec<Vec<Spec>> = vec![
        vec![],
        vec![spec(&[])],
        vec![spec(&[("nope", "1")])],
        vec![spec(&[("p", "1")]), spec(&[("P", "1")])],
        vec![spec(&[("p", "one")])],
        vec![spec(&[("p", "99999999999")])],
        // an INT key has no empty value (NULL is the default partition name)
        vec![spec(&[("p", "")])],
    ];
    for specs in &bad {
        let e = drop_with(&table, &HashMap::new(), specs).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{specs:?}: {e}");
    }
    for text in ["", "p", "=1", "p=1,p=2", r"p=\", "p=NULL", "p='1"] {
        assert!(parse_partition_spec(text).is_err(), "{text}");
    }
    for (k, v) in [("manifest.format", "orc"), ("manifest.compression", "lz4")] {
        let e = drop_with(&table, &opts(&[(k, v)]), &[spec(&[("p", "1")])]).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{k}={v}: {e}");
    }
    let bad_expiry = [
        PartitionExpireConfig::default(), // no expiration time anywhere
        PartitionExpireConfig {
            expiration_time: Some(Duration::from_secs(1)),
            timestamp_formatter: Some("yyyy-qq".into()),
            ..Default::default()
        },
        PartitionExpireConfig {
            expiration_time: Some(Duration::from_secs(1)),
            batch_size: Some(0),
            ..Default::default()
        },
    ];
    for cfg in &bad_expiry {
        let e = common::rt()
            .block_on(async {
                let t = open(&table, &HashMap::new()).await?;
                expire_partitions(&t, cfg, &RunControl::default()).await
            })
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{cfg:?}: {e}");
    }
    assert!("sometimes".parse::<PartitionExpireStrategy>().is_err());
    assert_eq!(common::tree(&table), tree, "bad input changed the table");

    // A Java table with ORC manifests is refused: Paimon would not read Avro ones there.
    if let Some(root) = common::fixtures_dir() {
        let (_t, orc) = common::copy_table(&root.join("orc/append_09.db/append_09"));
        let tree = common::tree(&orc);
        let e = drop_with(&orc, &HashMap::new(), &[spec(&[("f1", "10")])]).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        assert_eq!(common::tree(&orc), tree);
    }
}

// ---------------------------------------------------------------------------------------------
// Races
// ---------------------------------------------------------------------------------------------

const FAST_RETRIES: &[(&str, &str)] = &[
    ("commit.min-retry-wait", "1 ms"),
    ("commit.max-retry-wait", "50 ms"),
    ("commit.max-retries", "200"),
];

#[test]
fn racing_committers_of_this_library_all_land_once() {
    let Some((_t, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let dts = ["2024-01-01", "x=y", "ü日", "has space", "%41"];
    // Each committer has its own thread, runtime, storage and table, like separate processes.
    let start = Arc::new(std::sync::Barrier::new(dts.len()));
    let handles: Vec<_> = dts
        .iter()
        .map(|dt| {
            let (table, dt, start) = (table.clone(), dt.to_string(), start.clone());
            std::thread::spawn(move || {
                let overrides = opts(FAST_RETRIES);
                common::rt().block_on(async {
                    let t = open(&table, &overrides).await.unwrap();
                    start.wait();
                    drop_partitions(
                        &t,
                        &[spec(&[("dt", &dt)])],
                        None,
                        None,
                        &RunControl::default(),
                    )
                    .await
                    .unwrap()
                })
            })
        })
        .collect();
    let reports: Vec<PartitionReport> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut ids: Vec<i64> = reports
        .iter()
        .flat_map(|r| r.snapshot_ids.clone())
        .collect();
    ids.sort();
    assert_eq!(ids, (7..=11).collect::<Vec<_>>());
    assert_eq!(snapshot_ids(&table), (1..=11).collect::<Vec<_>>());
    let retries: u64 = reports.iter().map(|r| r.retries).sum();
    eprintln!("5 concurrent drops: {retries} retries");
    let [before, after]: [Vec<Value>; 2] = rows_at(&table, &[Some(6), None]).try_into().unwrap();
    assert_eq!(
        after,
        without(&before, |r| dt_of(r).is_some_and(|d| dts.contains(&d)))
    );
    // No attempt left files behind: every manifest file is referenced by some snapshot.
    let referenced = common::referenced_files(&[table.as_path()]);
    let names: BTreeSet<String> = serde_json::to_string(&referenced)
        .unwrap()
        .split('"')
        .filter(|s| s.starts_with("manifest-") || s.starts_with("index-manifest-"))
        .map(String::from)
        .collect();
    for f in std::fs::read_dir(table.join("manifest")).unwrap().flatten() {
        let n = f.file_name().to_string_lossy().to_string();
        assert!(names.contains(&n), "{n} is referenced by no snapshot");
    }
}

#[test]
fn racing_a_pypaimon_writer_process_loses_nothing() {
    let Some((_t, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let py = common::python().unwrap();
    const N: usize = 12;
    let child = std::process::Command::new(py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/partitions.py"))
        .args(["race", table.to_str().unwrap(), &N.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Start dropping once the writer is committing.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while snapshot_ids(&table).len() < 7 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let dts = ["2024-01-01", "x=y", "ü日", "has space", "%41"];
    let mut ours = Vec::new();
    for dt in dts {
        let r = drop_with(&table, &opts(FAST_RETRIES), &[spec(&[("dt", dt)])]).unwrap();
        ours.extend(r.snapshot_ids);
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "pypaimon writer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ids = snapshot_ids(&table);
    assert_eq!(ids, (1..=(6 + N + dts.len()) as i64).collect::<Vec<_>>());
    let mut appends = 0;
    let mut overwrites = Vec::new();
    for id in 7..=*ids.last().unwrap() {
        let s = snapshot_json(&table, id);
        match s["commitKind"].as_str().unwrap() {
            "APPEND" => appends += 1,
            "OVERWRITE" => overwrites.push(id),
            k => panic!("unexpected kind {k}"),
        }
    }
    eprintln!("pypaimon race: our OVERWRITE snapshots {overwrites:?} among {N} APPENDs");
    assert_eq!(appends, N);
    assert_eq!(overwrites, ours);
    let [before, after]: [Vec<Value>; 2] = rows_at(&table, &[Some(6), None]).try_into().unwrap();
    let mut expected = without(&before, |r| dt_of(r).is_some_and(|d| dts.contains(&d)));
    for i in 0..N {
        let n = 1_000_000 + i as i64;
        expected.push(json!([n, format!("race-{i}"), format!("race-{i}"), n]));
    }
    assert_eq!(sorted(after), sorted(expected));
}

// ---------------------------------------------------------------------------------------------
// Unknown outcome of a publish (object store that errors after or before writing)
// ---------------------------------------------------------------------------------------------

mod flaky {
    use std::fmt;
    use std::future::Future;
    use std::ops::Range;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use bytes::Bytes;
    use futures::stream::BoxStream;
    use object_store::path::Path;
    use object_store::{
        GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMode,
        PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
    };

    type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

    /// Fails the first `failures` exclusive creates of a `snapshot-` object, after writing it
    /// (`write_first`) or without writing.
    #[derive(Debug)]
    pub struct Flaky {
        pub inner: Arc<dyn ObjectStore>,
        pub failures: AtomicUsize,
        pub write_first: bool,
    }

    impl fmt::Display for Flaky {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Flaky({})", self.inner)
        }
    }

    fn boom() -> object_store::Error {
        object_store::Error::Generic {
            store: "flaky",
            source: "connection reset while publishing".into(),
        }
    }

    impl ObjectStore for Flaky {
        fn put_opts<'a, 'b, 'c>(
            &'a self,
            location: &'b Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> Fut<'c, PutResult>
        where
            'a: 'c,
            'b: 'c,
        {
            Box::pin(async move {
                let snapshot = location
                    .filename()
                    .is_some_and(|n| n.starts_with("snapshot-"));
                if snapshot
                    && matches!(opts.mode, PutMode::Create)
                    && self
                        .failures
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok()
                {
                    if self.write_first {
                        self.inner.put_opts(location, payload, opts).await?;
                    }
                    return Err(boom());
                }
                self.inner.put_opts(location, payload, opts).await
            })
        }

        fn put_multipart_opts<'a, 'b, 'c>(
            &'a self,
            location: &'b Path,
            opts: PutMultipartOptions,
        ) -> Fut<'c, Box<dyn MultipartUpload>>
        where
            'a: 'c,
            'b: 'c,
        {
            self.inner.put_multipart_opts(location, opts)
        }

        fn get_opts<'a, 'b, 'c>(
            &'a self,
            location: &'b Path,
            options: GetOptions,
        ) -> Fut<'c, GetResult>
        where
            'a: 'c,
            'b: 'c,
        {
            self.inner.get_opts(location, options)
        }

        fn get_range<'a, 'b, 'c>(&'a self, location: &'b Path, range: Range<u64>) -> Fut<'c, Bytes>
        where
            'a: 'c,
            'b: 'c,
        {
            self.inner.get_range(location, range)
        }

        fn delete<'a, 'b, 'c>(&'a self, location: &'b Path) -> Fut<'c, ()>
        where
            'a: 'c,
            'b: 'c,
        {
            self.inner.delete(location)
        }

        fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
            self.inner.list(prefix)
        }

        fn list_with_delimiter<'a, 'b, 'c>(
            &'a self,
            prefix: Option<&'b Path>,
        ) -> Fut<'c, ListResult>
        where
            'a: 'c,
            'b: 'c,
        {
            self.inner.list_with_delimiter(prefix)
        }

        fn copy<'a, 'b, 'c, 'd>(&'a self, from: &'b Path, to: &'c Path) -> Fut<'d, ()>
        where
            'a: 'd,
            'b: 'd,
            'c: 'd,
        {
            self.inner.copy(from, to)
        }

        fn copy_if_not_exists<'a, 'b, 'c, 'd>(&'a self, from: &'b Path, to: &'c Path) -> Fut<'d, ()>
        where
            'a: 'd,
            'b: 'd,
            'c: 'd,
        {
            self.inner.copy_if_not_exists(from, to)
        }
    }
}

/// A copy of a local table in a fresh in-memory object store, behind [`flaky::Flaky`].
async fn memory_table(
    src: &Path,
    write_first: bool,
) -> (Table, Arc<object_store::memory::InMemory>) {
    use object_store::ObjectStore;
    let mem = Arc::new(object_store::memory::InMemory::new());
    for (rel, _) in common::tree(src) {
        let key = object_store::path::Path::parse(format!("w/t/{rel}")).unwrap();
        let data = std::fs::read(src.join(&rel)).unwrap();
        mem.put(&key, data.into()).await.unwrap();
    }
    let root = format!("memory://flaky-{}/w/t", uuid::Uuid::new_v4().simple());
    let storage = Storage::open(&root, &HashMap::new()).unwrap();
    let store = Arc::new(flaky::Flaky {
        inner: mem.clone(),
        failures: std::sync::atomic::AtomicUsize::new(1),
        write_first,
    });
    storage.set_object_store(storage.root(), store).unwrap();
    let t = Table::open(Arc::new(storage), &opts(FAST_RETRIES))
        .await
        .unwrap();
    (t, mem)
}

#[test]
fn a_publish_with_an_unknown_outcome_is_found_or_retried_never_doubled() {
    let Some((_t, src, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    common::rt().block_on(async {
        for write_first in [true, false] {
            let (t, _mem) = memory_table(&src, write_first).await;
            let r = drop_partitions(
                &t,
                &[spec(&[("dt", "x=y")])],
                Some("me".into()),
                Some(42),
                &RunControl::default(),
            )
            .await
            .unwrap();
            // Exactly one new snapshot, ours, whether the failed publish landed or not.
            let dir = t.snapshots();
            let ids = dir.list_ids(t.storage()).await.unwrap();
            assert_eq!(
                ids,
                (1..=7).collect::<Vec<_>>(),
                "write_first={write_first}"
            );
            let s = dir.read(t.storage(), 7).await.unwrap();
            assert_eq!((s.commit_user.as_str(), s.commit_identifier), ("me", 42));
            assert_eq!(s.commit_kind, CommitKind::Overwrite);
            assert_eq!(r.snapshot_ids, vec![7]);
            let live = t.live_data_files(&s).await.unwrap();
            assert!(live.iter().all(|e| !t
                .paths()
                .partition_path(&e.partition)
                .unwrap()
                .starts_with("dt=x%3Dy/")));
            assert_eq!(r.retries, 1, "write_first={write_first}");
            // Nothing is left behind: a landed attempt's files are referenced by snapshot 7; a
            // failed one's are deleted once its snapshot id is taken by another snapshot.
            let mut referenced = BTreeSet::new();
            for l in [&s.base_manifest_list, &s.delta_manifest_list] {
                referenced.insert(l.clone());
                for m in t.reader().manifest_list(t.paths(), l).await.unwrap() {
                    referenced.insert(m.file_name);
                }
            }
            referenced.extend(s.index_manifest.clone());
            let before: BTreeSet<String> = std::fs::read_dir(src.join("manifest"))
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect();
            let listing = t
                .storage()
                .list_dir(&t.root().join("manifest"))
                .await
                .unwrap();
            for f in listing.files {
                let n = f.location.name().to_string();
                assert!(
                    before.contains(&n) || referenced.contains(&n),
                    "write_first={write_first}: {n} is referenced by no snapshot"
                );
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Partition expiry
// ---------------------------------------------------------------------------------------------

/// Rows of a two-key table (dt STRING, hr INT) for the given partitions, two rows each.
fn dt_hr_rows(parts: &[(Value, i32)], first_id: &mut i64) -> Vec<Value> {
    let mut out = Vec::new();
    for (dt, hr) in parts {
        for _ in 0..2 {
            out.push(json!({"id": *first_id, "v": "x", "dt": dt, "hr": hr}));
            *first_id += 1;
        }
    }
    out
}

fn partition_set(r: &PartitionReport) -> BTreeSet<Vec<String>> {
    r.partitions
        .iter()
        .map(|p| p.values().cloned().collect())
        .collect()
}

#[test]
fn values_time_expiry_drops_exactly_the_partitions_older_than_the_window() {
    if common::python().is_none() {
        return;
    }
    let now_ms = paimon_cleanup::clean::shared::clock::now_millis();
    let today = chrono::DateTime::from_timestamp_millis(now_ms)
        .unwrap()
        .with_timezone(&chrono::Local)
        .date_naive();
    let day = |k: i64| local_day(k, today).format("%Y-%m-%d").to_string();
    let compact = |k: i64| local_day(k, today).format("%Y%m%d").to_string();
    let wh = tempfile::tempdir().unwrap();
    let two_keys = json!([
        ["id", "int64", false],
        ["v", "string", true],
        ["dt", "string", true],
        ["hr", "int32", true]
    ]);
    let parts: Vec<(Value, i32)> = vec![
        (json!(day(-10)), 0),
        (json!("2020-01-01"), 0),
        (json!(day(-7)), 0),
        (json!(day(-8)), 5),
        (json!(day(-10)), 99),
        (json!(day(-6)), 0),
        (json!(day(-3)), 0),
        (json!(day(0)), 0),
        (json!("2999-01-01"), 0),
        (Value::Null, 0),
        (json!(""), 0),
        (json!("garbage"), 0),
    ];
    let mut id = 0;
    let rows = dt_hr_rows(&parts, &mut id);
    let fmt_parts: Vec<(Value, i32)> = vec![
        (json!("20200101"), 0),
        (json!(compact(-10)), 0),
        (json!(compact(1)), 0),
        (json!("2020-01-01"), 0),
        (Value::Null, 0),
    ];
    let fmt_rows = dt_hr_rows(&fmt_parts, &mut id);
    let date_rows: Vec<Value> = ["2020-01-01".to_string(), day(-10), day(0), day(30)]
        .iter()
        .enumerate()
        .map(|(i, d)| json!({"id": i, "d": d}))
        .collect();
    let mut ops = Vec::new();
    for (name, options) in [
        ("plain", json!({})),
        ("pattern", json!({})),
        (
            "fmt",
            json!({"partition.timestamp-formatter": "yyyyMMdd",
                       "partition.expiration-time": "7 d"}),
        ),
    ] {
        ops.push(
            json!({"op": "create", "warehouse": wh.path(), "name": name, "fields": two_keys,
                        "partition_keys": ["dt", "hr"], "options": options}),
        );
    }
    ops.push(
        json!({"op": "create", "warehouse": wh.path(), "name": "dates",
                    "fields": [["id", "int64", false], ["d", "date32", true]],
                    "partition_keys": ["d"], "options": {}}),
    );
    let path = |name: &str| wh.path().join("db.db").join(name);
    let (plain, pattern, fmt, dates) = (path("plain"), path("pattern"), path("fmt"), path("dates"));
    ops.push(json!({"op": "append", "table": plain, "rows": rows}));
    ops.push(json!({"op": "append", "table": pattern, "rows": rows}));
    ops.push(json!({"op": "append", "table": fmt, "rows": fmt_rows}));
    ops.push(json!({"op": "append", "table": dates, "rows": date_rows}));
    py_run(Value::Array(ops));
    let week = PartitionExpireConfig {
        expiration_time: Some(Duration::from_secs(7 * 86_400)),
        now_millis: Some(now_ms),
        ..Default::default()
    };
    let set = |v: &[(&str, &str)]| -> BTreeSet<Vec<String>> {
        v.iter()
            .map(|(a, b)| vec![a.to_string(), b.to_string()])
            .collect()
    };
    let (d10, d7, d8) = (day(-10), day(-7), day(-8));

    // Without a pattern the first key decides: the hour is ignored.
    let expected_plain = set(&[
        (&d10, "0"),
        ("2020-01-01", "0"),
        (&d7, "0"),
        (&d8, "5"),
        (&d10, "99"),
    ]);
    let tree = common::tree(&plain);
    let dry = expire(
        &plain,
        &PartitionExpireConfig {
            dry_run: true,
            ..week.clone()
        },
    );
    assert_eq!(partition_set(&dry), expected_plain);
    assert!(dry.snapshot_ids.is_empty());
    assert_eq!(common::tree(&plain), tree, "dry run changed the table");
    let r = expire(
        &plain,
        &PartitionExpireConfig {
            batch_size: Some(2),
            ..week.clone()
        },
    );
    assert_eq!(partition_set(&r), expected_plain);
    assert_eq!(
        r.snapshot_ids,
        vec![2, 3, 4],
        "5 partitions in batches of 2"
    );
    assert_eq!(r.files_marked_deleted, dry.files_marked_deleted);
    assert_eq!(r.rows_marked_deleted, 10);

    // With `$dt $hr:00:00`, hour 99 rolls over 4 days later (lenient): not expired. At most 3,
    // in Java's order (by the comma-joined values).
    let r2 = expire(
        &pattern,
        &PartitionExpireConfig {
            timestamp_pattern: Some("$dt $hr:00:00".into()),
            strategy: Some(PartitionExpireStrategy::ValuesTime),
            max_expires: Some(3),
            ..week.clone()
        },
    );
    assert_eq!(
        partition_set(&r2),
        set(&[("2020-01-01", "0"), (&d10, "0"), (&d8, "5")])
    );
    assert_eq!(r2.snapshot_ids, vec![2]);

    // Options from the table: formatter yyyyMMdd and expiration time 7 d.
    let r3 = expire(
        &fmt,
        &PartitionExpireConfig {
            now_millis: Some(now_ms),
            ..Default::default()
        },
    );
    assert_eq!(
        partition_set(&r3),
        set(&[("20200101", "0"), (&compact(-10), "0")])
    );

    // DATE keys (epoch-day directories) are read as dates.
    let r4 = expire(&dates, &week);
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let d10_days = (local_day(-10, today) - epoch).num_days().to_string();
    assert_eq!(
        r4.partitions
            .iter()
            .map(|p| p["d"].clone())
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([d10_days, "18262".to_string()])
    );

    // pypaimon reads what is left.
    let out = py_run(json!([
        {"op": "rows", "table": plain, "snapshot": null},
        {"op": "rows", "table": plain, "snapshot": 1},
        {"op": "rows", "table": pattern, "snapshot": null},
    ]));
    let after: Vec<Vec<Value>> = out
        .iter()
        .map(|r| r["rows"].as_array().unwrap().clone())
        .collect();
    let before = after[1].clone();
    let gone = |r: &Value| {
        let dt = r[2].as_str().unwrap_or("");
        let hr = r[3].to_string();
        expected_plain.contains(&vec![dt.to_string(), hr])
    };
    assert_eq!(after[0], without(&before, gone));
    assert_eq!(after[2].len(), before.len() - 6);
    // Nothing more to expire: no commit.
    let again = expire(&plain, &week);
    assert!(again.snapshot_ids.is_empty() && again.partitions.is_empty());
    assert_eq!(snapshot_ids(&plain), vec![1, 2, 3, 4]);
}

#[test]
fn update_time_expiry_uses_the_last_file_creation_time() {
    if common::python().is_none() {
        return;
    }
    let wh = tempfile::tempdir().unwrap();
    let table = wh.path().join("db.db/upd");
    let mut id = 0;
    py_run(json!([
        {"op": "create", "warehouse": wh.path(), "name": "upd",
         "fields": [["id", "int64", false], ["v", "string", true], ["dt", "string", true],
                    ["hr", "int32", true]],
         "partition_keys": ["dt"], "options": {"partition.expiration-strategy": "update-time"}},
        {"op": "append", "table": table,
         "rows": dt_hr_rows(&[(json!("A"), 0), (json!("B"), 0), (Value::Null, 0)], &mut id)},
        {"op": "sleep", "ms": 30},
        {"op": "append", "table": table,
         "rows": dt_hr_rows(&[(json!("B"), 1), (json!("C"), 0), (json!(""), 0)], &mut id)},
    ]));
    // The cut-off between the two commits' creation times (writer-local time stored as UTC).
    let (first_max, second_min) = common::rt().block_on(async {
        let t = open(&table, &HashMap::new()).await.unwrap();
        let dir = t.snapshots();
        let s1 = dir.read(t.storage(), 1).await.unwrap();
        let s2 = dir.read(t.storage(), 2).await.unwrap();
        let first: Vec<i64> = t
            .live_data_files(&s1)
            .await
            .unwrap()
            .iter()
            .filter_map(|e| e.file.creation_time)
            .collect();
        let all = t.live_data_files(&s2).await.unwrap();
        let second: Vec<i64> = all
            .iter()
            .filter(|e| !first.contains(&e.file.creation_time.unwrap()))
            .filter_map(|e| e.file.creation_time)
            .collect();
        (*first.iter().max().unwrap(), *second.iter().min().unwrap())
    });
    assert!(first_max < second_min, "{first_max} {second_min}");
    let cut_local = chrono::DateTime::from_timestamp_millis((first_max + second_min) / 2)
        .unwrap()
        .naive_utc();
    let hour = Duration::from_secs(3600);
    use chrono::TimeZone;
    let now = chrono::Local
        .from_local_datetime(&cut_local)
        .earliest()
        .unwrap()
        .timestamp_millis()
        + 3_600_000;
    let r = expire(
        &table,
        &PartitionExpireConfig {
            expiration_time: Some(hour),
            now_millis: Some(now),
            ..Default::default()
        },
    );
    // A and the NULL partition were last written by commit 1; B got a file in commit 2, and
    // so did the '' partition, which shares the NULL partition's directory but not its expiry.
    assert_eq!(
        partition_set(&r),
        [
            vec!["A".to_string()],
            vec!["__DEFAULT_PARTITION__".to_string()]
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(r.names, vec!["dt=A".to_string(), "dt=NULL".to_string()]);
    let rows = rows_at(&table, &[None]).remove(0);
    assert!(rows
        .iter()
        .all(|r| matches!(r[2].as_str(), Some("B") | Some("C") | Some(""))));
    assert_eq!(rows.len(), 8);
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

#[test]
fn cli_drop_and_expire_partitions() {
    let Some((_t, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let bin = common::cli_bin();
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let t = table.to_str().unwrap();
    let before = snapshot_ids(&table);
    let out = run(&[
        "drop-partitions",
        t,
        "--partition",
        "p=0",
        "--dry-run",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let preview: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(preview["partitions"], json!([{"p": "0"}]));
    assert_eq!(preview["dry_run"], true);
    assert!(preview["files_marked_deleted"].as_u64().unwrap() > 0);
    assert_eq!(snapshot_ids(&table), before, "a dry run committed");
    let out = run(&["drop-partitions", t, "--partition", "p=0", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["partitions"], json!([{"p": "0"}]));
    assert_eq!(report["snapshot_ids"].as_array().unwrap().len(), 1);
    assert_eq!(
        report["files_marked_deleted"],
        preview["files_marked_deleted"]
    );
    let out = run(&["drop-partitions", t, "--partition", "nokey=1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a partition key"));
    let out = run(&["drop-partitions", t, "--partition", "p"]);
    assert_eq!(out.status.code(), Some(2));
    // INT partition values are no dates: values-time expires nothing (and says so in JSON).
    let out = run(&[
        "expire-partitions",
        t,
        "--expiration-time",
        "1 d",
        "--dry-run",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["partitions"], json!([]));
    assert_eq!(report["dry_run"], true);
    let out = run(&[
        "expire-partitions",
        t,
        "--strategy",
        "weekly",
        "--expiration-time",
        "1 d",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// A table whose STRING partition key `p` holds NULL, '', ' ' and 'a', two rows each (rows are
/// `[id, v, p]`). Paimon writes NULL, '' and ' ' to the one directory `p=__DEFAULT_PARTITION__`.
fn null_empty_blank_table(wh: &Path) -> std::path::PathBuf {
    let table = wh.join("db.db/neb");
    let mut rows = Vec::new();
    for (i, p) in [Value::Null, json!(""), json!(" "), json!("a")]
        .iter()
        .enumerate()
    {
        for k in 0..2 {
            let id = i * 2 + k;
            rows.push(json!({"id": id, "v": format!("v{id}"), "p": p}));
        }
    }
    py_run(json!([
        {"op": "create", "warehouse": wh, "name": "neb",
         "fields": [["id", "int64", false], ["v", "string", true], ["p", "string", true]],
         "partition_keys": ["p"], "options": {"bucket": "-1"}},
        {"op": "append", "table": table, "rows": rows},
    ]));
    table
}

/// Java reads a spec as partition values (`convertSpecToInternalRow`): `p=` and `p=''` name
/// the empty string, `p=' '` one space, the default partition name NULL — each exactly its two
/// rows, although all three partitions share the directory `p=__DEFAULT_PARTITION__` (main
/// dropped all six for `p=`). Dry runs and drops through the CLI, pypaimon reads the rest.
#[test]
fn cli_specs_name_null_empty_and_blank_partitions_apart() {
    if common::python().is_none() {
        return;
    }
    let wh = tempfile::tempdir().unwrap();
    let table = null_empty_blank_table(wh.path());
    let t = table.to_str().unwrap();
    let bin = common::cli_bin();
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let ok = |args: &[&str]| {
        let out = run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert_eq!(snapshot_ids(&table), vec![1]);
    let dirs: Vec<String> = std::fs::read_dir(&table)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("p=").map(String::from))
        .collect();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    assert!(dirs.contains(&"__DEFAULT_PARTITION__".to_string()));

    for (text, values, name) in [
        ("p=", json!([{"p": ""}]), "p=''"),
        ("p=''", json!([{"p": ""}]), "p=''"),
        ("p=' '", json!([{"p": " "}]), "p=' '"),
        (r"p=\ ", json!([{"p": " "}]), "p=' '"),
        (
            "p=__DEFAULT_PARTITION__",
            json!([{"p": "__DEFAULT_PARTITION__"}]),
            "p=NULL",
        ),
        (" p = a ", json!([{"p": "a"}]), "p=a"),
    ] {
        let r: Value = serde_json::from_slice(&ok(&[
            "drop-partitions",
            t,
            "--partition",
            text,
            "--dry-run",
            "--json",
        ]))
        .unwrap();
        assert_eq!(r["partitions"], values, "{text}");
        assert_eq!(r["names"], json!([name]), "{text}");
        assert_eq!(r["rows_marked_deleted"], 2, "{text}");
        assert_eq!(r["files_marked_deleted"], 1, "{text}");
    }
    // Two specs, one report line each; the NULL partition is not among them.
    let r: Value = serde_json::from_slice(&ok(&[
        "drop-partitions",
        t,
        "--partition",
        "p=",
        "--partition",
        "p=' '",
        "--dry-run",
        "--json",
    ]))
    .unwrap();
    assert_eq!(r["names"], json!(["p=''", "p=' '"]));
    assert_eq!(r["rows_marked_deleted"], 4);
    // Ambiguous or malformed specs are refused before anything is read.
    for text in ["p=NULL", "p=null", "p='a", "p=a'", "p"] {
        let out = run(&["drop-partitions", t, "--partition", text]);
        assert_eq!(out.status.code(), Some(2), "{text}");
    }
    assert_eq!(snapshot_ids(&table), vec![1], "a refused spec committed");

    // Drop one at a time; the text report shows each value distinctly.
    let steps: [(&str, Option<&str>, &str); 3] = [
        ("p=' '", Some(" "), "  p=' '"),
        ("p=", Some(""), "  p=''"),
        ("p=__DEFAULT_PARTITION__", None, "  p=NULL"),
    ];
    for (text, _, line) in &steps {
        let out = String::from_utf8(ok(&["drop-partitions", t, "--partition", text])).unwrap();
        assert!(out.contains("dropped 1 partitions"), "{text}: {out}");
        assert!(out.lines().any(|l| l == *line), "{text}: {out}");
    }
    assert_eq!(snapshot_ids(&table), vec![1, 2, 3, 4]);
    let rows = rows_at(&table, &[Some(1), Some(2), Some(3), Some(4)]);
    assert_eq!(rows[0].len(), 8);
    for (i, (text, gone, _)) in steps.iter().enumerate() {
        let expected = without(&rows[i], |r| r[2].as_str() == *gone);
        assert_eq!(expected.len(), rows[i].len() - 2, "{text}");
        assert_eq!(rows[i + 1], expected, "{text}");
    }
    assert!(rows[3].iter().all(|r| r[2] == "a"), "{:?}", rows[3]);
}

/// Java-written tables: `_with_empty_value` holds one NULL, two '' and one ' ' row, all in the
/// directory `f0=__DEFAULT_PARTITION__` (main matched all four for `f0=`); `_with_specific_name` sets `partition.default-name` to
/// `__HIVE_DEFAULT_PARTITION__`, which then (and only then) names NULL. Previews through the
/// CLI (the fixtures' ORC manifests are read; a commit would be refused).
#[test]
fn java_fixture_specs_name_values_not_directories() {
    let Some(root) = common::fixtures_dir() else {
        return;
    };
    let bin = common::cli_bin();
    for (table, cases) in [
        (
            "parquet/append_with_empty_partition_with_empty_value.db/append_with_empty_partition_with_empty_value",
            vec![
                ("f0=", Some("f0=''"), 2),
                ("f0=''", Some("f0=''"), 2),
                ("f0=__DEFAULT_PARTITION__", Some("f0=NULL"), 1),
                ("f0=' '", Some("f0=' '"), 1),
                ("f0=__HIVE_DEFAULT_PARTITION__", None, 0),
            ],
        ),
        (
            "parquet/append_with_empty_partition_with_specific_name.db/append_with_empty_partition_with_specific_name",
            vec![
                ("f0=__HIVE_DEFAULT_PARTITION__", Some("f0=NULL"), 3),
                ("f0=__DEFAULT_PARTITION__", None, 0),
                ("f0=", None, 0),
            ],
        ),
    ] {
        let (_t, copy) = common::copy_table(&root.join(table));
        let tree = common::tree(&copy);
        for (text, name, rows) in cases {
            let out = std::process::Command::new(bin)
                .args([
                    "drop-partitions",
                    copy.to_str().unwrap(),
                    "--partition",
                    text,
                    "--dry-run",
                    "--json",
                ])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{table} {text}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let r: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(r["rows_marked_deleted"], rows, "{table} {text}: {r}");
            let expected: Vec<&str> = name.into_iter().collect();
            assert_eq!(r["names"], json!(expected), "{table} {text}");
        }
        assert_eq!(common::tree(&copy), tree, "a preview changed the table");
    }
}
