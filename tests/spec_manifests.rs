//! Decodes EVERY metadata file under every `manifest/` directory of the Java-written fixture
//! tables (read-only) and checks the results against the files on disk:
//!
//! * every manifest list / manifest / index manifest decodes, with non-empty file names;
//! * every manifest a manifest list names, and every data file an ADD entry names, exists
//!   (data files: at the computed bucket path, else anywhere under the table by name, else via
//!   `_EXTERNAL_PATH`);
//! * for partitioned tables the partition path computed from `_PARTITION` with the latest
//!   schema's `partitionKeys`, `fields` and `options` is a directory that exists (or is part of
//!   the entry's `_EXTERNAL_PATH`).

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use paimon_cleanup::spec::manifest::{
    decode_index_manifest, decode_manifest, decode_manifest_list, detect_format, FileKind,
    ManifestFormat,
};
use paimon_cleanup::spec::partition::{PartitionComputer, DEFAULT_PARTITION_NAME};
use paimon_cleanup::spec::types::{DataField, DataType};
use serde_json::Value;

fn fixtures_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var("PAIMON_FIXTURES").ok().map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/java-written-tables")),
    ];
    for c in candidates.into_iter().flatten() {
        if c.is_dir() {
            return Some(c);
        }
    }
    if std::env::var("PAIMON_REQUIRE_FIXTURES").as_deref() == Ok("1") {
        panic!("PAIMON_REQUIRE_FIXTURES=1 but the Java fixture tables were not found");
    }
    common::skip("Java fixture corpus not found", "set PAIMON_FIXTURES");
    None
}

/// Every directory named `manifest` below `root`.
fn manifest_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                if e.file_name() == "manifest" {
                    out.push(p.clone());
                }
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// All file paths under `dir`, by file name.
fn files_by_name(dir: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut out: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.entry(e.file_name().to_string_lossy().into_owned())
                    .or_default()
                    .push(p);
            }
        }
    }
    out
}

/// The table's latest schema JSON (`schema/schema-<max id>`).
fn latest_schema(table: &Path) -> Value {
    let dir = table.join("schema");
    let latest = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("schema-"))
                .and_then(|id| id.parse::<u64>().ok())
        })
        .max()
        .unwrap_or_else(|| panic!("no schema in {}", dir.display()));
    let text = std::fs::read_to_string(dir.join(format!("schema-{latest}"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

struct TableInfo {
    partition: PartitionComputer,
    partitioned: bool,
    data_dir: Option<String>,
}

fn table_info(table: &Path) -> TableInfo {
    let schema = latest_schema(table);
    let keys: Vec<String> = schema["partitionKeys"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let fields: Vec<DataField> = keys
        .iter()
        .map(|k| {
            let f = schema["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"].as_str() == Some(k.as_str()))
                .unwrap_or_else(|| {
                    panic!("partition key {k} not in fields of {}", table.display())
                });
            let (data_type, nullable) = DataType::from_json(&f["type"]).unwrap();
            DataField {
                id: f["id"].as_i64().unwrap_or(0),
                name: k.clone(),
                data_type,
                nullable,
            }
        })
        .collect();
    let opt = |k: &str| schema["options"][k].as_str().map(str::to_string);
    let default_name =
        opt("partition.default-name").unwrap_or_else(|| DEFAULT_PARTITION_NAME.to_string());
    let legacy = opt("partition.legacy-name")
        .map(|v| v == "true")
        .unwrap_or(true);
    TableInfo {
        partitioned: !fields.is_empty(),
        partition: PartitionComputer::new(fields, &default_name, legacy).unwrap(),
        data_dir: opt("data-file.path-directory"),
    }
}

#[derive(Default)]
struct Counts {
    files: BTreeMap<String, usize>,
    lists: usize,
    manifests: usize,
    index_manifests: usize,
    list_entries: usize,
    entries: usize,
    add_entries: usize,
    delete_entries: usize,
    index_entries: usize,
    at_bucket_path: usize,
    found_by_name: usize,
    external: usize,
    missing_deleted_later: usize,
    partition_paths_checked: usize,
    distinct_partitions: HashSet<(PathBuf, String)>,
    dv_ranges: usize,
    global_index_entries: usize,
}

fn avro_codec(bytes: &[u8]) -> String {
    // The header map is small; find the codec value by its key.
    let key = b"avro.codec";
    let Some(pos) = bytes.windows(key.len()).position(|w| w == key) else {
        return "null".to_string();
    };
    let rest = &bytes[pos + key.len()..];
    let len = (rest[0] >> 1) as usize; // short zig-zag length
    String::from_utf8_lossy(&rest[1..1 + len]).into_owned()
}

#[test]
fn decode_every_fixture_manifest() {
    let Some(root) = fixtures_dir() else {
        return;
    };
    let mut c = Counts::default();
    let mut problems: Vec<String> = Vec::new();

    for mdir in manifest_dirs(&root) {
        let table = mdir.parent().unwrap().to_path_buf();
        let info = table_info(&table);
        let on_disk = files_by_name(&table);
        let mut names: Vec<PathBuf> = std::fs::read_dir(&mdir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        names.sort();

        // Decode everything first; remember the data files DELETEd anywhere in the table.
        let mut deleted_somewhere: HashSet<String> = HashSet::new();
        let mut table_entries = Vec::new();
        for path in &names {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let bytes = std::fs::read(path).unwrap();
            let shown = path.strip_prefix(&root).unwrap().display().to_string();
            let format = match detect_format(&bytes) {
                Some(ManifestFormat::Avro) => format!("avro/{}", avro_codec(&bytes)),
                Some(f) => format!("{f:?}").to_lowercase(),
                None => "unknown".to_string(),
            };
            *c.files.entry(format).or_default() += 1;

            if name.starts_with("manifest-list-") {
                let metas =
                    decode_manifest_list(&bytes, &shown).unwrap_or_else(|e| panic!("{shown}: {e}"));
                c.lists += 1;
                for m in &metas {
                    c.list_entries += 1;
                    assert!(!m.file_name.is_empty(), "{shown}: empty manifest name");
                    assert!(
                        m.file_size > 0,
                        "{shown}: {} has size {}",
                        m.file_name,
                        m.file_size
                    );
                    if !mdir.join(&m.file_name).exists() {
                        problems.push(format!("{shown}: manifest {} does not exist", m.file_name));
                    }
                }
            } else if name.starts_with("index-manifest-") {
                let entries = decode_index_manifest(&bytes, &shown)
                    .unwrap_or_else(|e| panic!("{shown}: {e}"));
                c.index_manifests += 1;
                for e in &entries {
                    c.index_entries += 1;
                    assert!(!e.file_name.is_empty(), "{shown}: empty index file name");
                    assert!(!e.index_type.is_empty(), "{shown}: empty index type");
                    c.dv_ranges += e.dv_ranges.as_ref().map_or(0, Vec::len);
                    c.global_index_entries += e.is_global as usize;
                    let exists = on_disk.contains_key(&e.file_name) || e.external_path.is_some();
                    if !exists {
                        problems.push(format!("{shown}: index file {} not found", e.file_name));
                    }
                }
            } else if name.starts_with("manifest-") {
                let entries =
                    decode_manifest(&bytes, &shown).unwrap_or_else(|e| panic!("{shown}: {e}"));
                c.manifests += 1;
                for e in &entries {
                    assert!(
                        !e.file.file_name.is_empty(),
                        "{shown}: empty data file name"
                    );
                    if e.kind == FileKind::Delete {
                        deleted_somewhere.insert(e.file.file_name.clone());
                    }
                }
                table_entries.push((shown, entries));
            } else {
                problems.push(format!("{shown}: unexpected file in manifest/"));
            }
        }

        for (shown, entries) in &table_entries {
            for e in entries {
                c.entries += 1;
                if e.kind == FileKind::Delete {
                    c.delete_entries += 1;
                    continue;
                }
                c.add_entries += 1;
                let part_path = info.partition.path(&e.partition).unwrap_or_else(|err| {
                    panic!("{shown}: partition of {}: {err}", e.file.file_name)
                });
                if !info.partitioned {
                    assert_eq!(part_path, "");
                }
                let bucket_dir = if e.bucket == -2 {
                    "bucket-postpone".to_string()
                } else {
                    format!("bucket-{}", e.bucket)
                };
                let data_root = match &info.data_dir {
                    Some(d) => table.join(d),
                    None => table.clone(),
                };
                let expected = data_root
                    .join(&part_path)
                    .join(&bucket_dir)
                    .join(&e.file.file_name);

                if let Some(ext) = &e.file.external_path {
                    c.external += 1;
                    assert!(
                        ext.ends_with(&format!("/{}{bucket_dir}/{}", part_path, e.file.file_name)),
                        "{shown}: external path {ext} does not end with {part_path}{bucket_dir}/{}",
                        e.file.file_name
                    );
                } else if expected.is_file() {
                    c.at_bucket_path += 1;
                } else if on_disk.contains_key(&e.file.file_name) {
                    c.found_by_name += 1;
                    problems.push(format!(
                        "{shown}: {} not at {} but elsewhere: {:?}",
                        e.file.file_name,
                        expected.display(),
                        on_disk[&e.file.file_name]
                    ));
                } else if deleted_somewhere.contains(&e.file.file_name) {
                    // compacted away and physically removed by expiry; a later manifest DELETEs it
                    c.missing_deleted_later += 1;
                } else {
                    problems.push(format!(
                        "{shown}: ADD {} exists nowhere under {}",
                        e.file.file_name,
                        table.display()
                    ));
                }
                for extra in &e.file.extra_files {
                    if e.file.external_path.is_none()
                        && expected.is_file()
                        && !expected.with_file_name(extra).is_file()
                    {
                        problems.push(format!("{shown}: extra file {extra} missing"));
                    }
                }

                if info.partitioned {
                    c.partition_paths_checked += 1;
                    c.distinct_partitions
                        .insert((table.clone(), part_path.clone()));
                    let dir_ok = data_root.join(&part_path).is_dir();
                    let ext_ok = e
                        .file
                        .external_path
                        .as_ref()
                        .is_some_and(|x| x.contains(&format!("/{part_path}")));
                    let gone = deleted_somewhere.contains(&e.file.file_name);
                    if !dir_ok && !ext_ok && !gone {
                        problems.push(format!(
                            "{shown}: partition directory {part_path} of {} does not exist",
                            e.file.file_name
                        ));
                    }
                }
            }
        }
    }

    println!("files decoded by format/codec: {:?}", c.files);
    println!(
        "manifest lists {} ({} entries), manifests {} ({} entries: {} ADD, {} DELETE), index manifests {} ({} entries, {} DV ranges, {} global)",
        c.lists,
        c.list_entries,
        c.manifests,
        c.entries,
        c.add_entries,
        c.delete_entries,
        c.index_manifests,
        c.index_entries,
        c.dv_ranges,
        c.global_index_entries
    );
    println!(
        "ADD data files: {} at the computed bucket path, {} external, {} found elsewhere by name, {} gone but DELETEd later",
        c.at_bucket_path, c.external, c.found_by_name, c.missing_deleted_later
    );
    println!(
        "partition paths checked: {} ({} distinct partition directories)",
        c.partition_paths_checked,
        c.distinct_partitions.len()
    );
    for p in &problems {
        println!("PROBLEM: {p}");
    }
    assert!(
        c.lists > 0 && c.manifests > 0 && c.index_manifests > 0,
        "nothing decoded"
    );
    assert!(
        problems.is_empty(),
        "{} problems (see output)",
        problems.len()
    );
}
