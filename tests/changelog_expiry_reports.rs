//! Changelog expiry's report lists exactly the files that left the disk, and its dry run lists
//! the same files. A long-lived changelog of a changelog-producing table that has no changelog
//! manifest list (an APPEND commit of a `lookup` table) is left without its base and delta
//! manifest lists by Java's decoupled snapshot expiry: expiring it deletes nothing of those
//! lists, so the report must not name them.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use paimon_cleanup::clean::{expire_snapshots, ExpireConfig, ExpireReport, RunControl};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

/// Decoupled retention: two snapshots kept, changelogs kept far longer.
const DECOUPLED: [(&str, &str); 6] = [
    ("changelog.num-retained.max", "100"),
    ("changelog.num-retained.min", "1"),
    ("changelog.time-retained", "0s"),
    ("snapshot.num-retained.max", "2"),
    ("snapshot.num-retained.min", "1"),
    ("snapshot.time-retained", "0s"),
];

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The `changelog-N` files of the table, sorted by id.
fn changelogs(table: &Path) -> Vec<PathBuf> {
    let mut out: Vec<(i64, PathBuf)> = std::fs::read_dir(table.join("changelog"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_str()?.to_owned();
                    let id = n.strip_prefix("changelog-")?.parse().ok()?;
                    Some((id, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.into_iter().map(|(_, p)| p).collect()
}

/// Every `{"class": .., "path": ..}` of a JSON report, relative to the table.
fn report_paths(v: &serde_json::Value, table: &Path, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let (Some(serde_json::Value::String(p)), true) =
                (m.get("path"), m.contains_key("class"))
            {
                let p = p.strip_prefix("file://").unwrap_or(p);
                let root = table.to_str().unwrap();
                let rel = p.strip_prefix(root).unwrap_or(p).trim_start_matches('/');
                out.insert(rel.to_owned());
            }
            m.values().for_each(|x| report_paths(x, table, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| report_paths(x, table, out)),
        _ => {}
    }
}

/// `expire-changelogs TABLE --json` keeping one changelog (plus `extra` arguments); the files
/// its report names.
fn expire_changelogs_cli(table: &Path, extra: &[&str]) -> BTreeSet<String> {
    let mut cmd = Command::new(common::cli_bin());
    cmd.arg("expire-changelogs")
        .arg(table)
        .args(["--retain-min=1", "--retain-max=1", "--json"])
        .args(extra);
    for (k, v) in DECOUPLED {
        cmd.arg("-o").arg(format!("{k}={v}"));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut paths = BTreeSet::new();
    report_paths(&v, table, &mut paths);
    paths
}

/// A pypaimon `input`-producer table expired (decoupled) to its last two snapshots, whose
/// first long-lived changelog is made into one without a changelog manifest list and without
/// its base and delta lists on disk (as Java leaves a `lookup` table's APPEND changelog).
/// Returns (guard, table, the absent lists).
fn table_with_changelog_without_lists() -> Option<(tempfile::TempDir, PathBuf, Vec<String>)> {
    let (tmp, table, _) = common::pypaimon_table("pk_changelog")?;
    let r = expire_snapshots_decoupled(&table);
    assert!(r.changelogs_written >= 1, "{r:?}");
    let logs = changelogs(&table);
    assert!(!logs.is_empty());
    let first = &logs[0];
    let mut c = json(first);
    let mut absent = Vec::new();
    for k in ["baseManifestList", "deltaManifestList"] {
        let l = c[k].as_str().unwrap().to_owned();
        // Our own decoupled expiry may have removed them already; else remove them here.
        let _ = std::fs::remove_file(table.join("manifest").join(&l));
        absent.push(l);
    }
    c["changelogManifestList"] = serde_json::Value::Null;
    if let Some(m) = c.as_object_mut() {
        m.remove("changelogManifestListSize");
        m.remove("changelogRecordCount");
    }
    std::fs::write(first, serde_json::to_vec(&c).unwrap()).unwrap();
    Some((tmp, table, absent))
}

#[test]
fn absent_lists_of_an_expired_changelog_are_not_reported() {
    let Some((_tmp, table, absent)) = table_with_changelog_without_lists() else {
        return;
    };
    let before: BTreeMap<String, u64> = common::tree(&table);

    let dry = expire_changelogs_cli(&table, &["--dry-run"]);
    assert_eq!(common::tree(&table), before, "a dry run changed the table");
    let reported = expire_changelogs_cli(&table, &[]);
    let after: BTreeMap<String, u64> = common::tree(&table);
    let removed: BTreeSet<String> = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .cloned()
        .collect();

    assert!(
        reported
            .iter()
            .any(|p| p.starts_with("changelog/changelog-")),
        "a changelog expired: {reported:?}"
    );
    for l in &absent {
        let p = format!("manifest/{l}");
        assert!(!reported.contains(&p), "{p} was not on disk: {reported:?}");
        assert!(!dry.contains(&p), "dry run lists absent {p}: {dry:?}");
    }
    assert_eq!(reported, removed, "the report lists what left the disk");
    assert_eq!(dry, reported, "the dry run says what the real run does");
    for (k, v) in common::all_versions(&table) {
        assert!(v.get("error").is_none(), "{k}: {v}");
    }
}

/// Snapshot expiry with default retention on `table` opened with the decoupled changelog
/// options ([`DECOUPLED`]), which writes long-lived changelogs for the expired snapshots.
fn expire_snapshots_decoupled(table: &Path) -> ExpireReport {
    let rt = common::rt();
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    let o: HashMap<String, String> = DECOUPLED
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let t = rt.block_on(Table::open(storage, &o)).unwrap();
    rt.block_on(expire_snapshots(
        &t,
        &ExpireConfig::default(),
        &RunControl::default(),
    ))
    .unwrap()
}

/// A file a long-lived changelog still names can be gone before that changelog expires: a
/// decoupled snapshot expiry (Paimon Java's) deletes compacted-away files itself and leaves
/// the changelogs naming them in their deltas, and an interrupted run leaves others. Expiring
/// the changelog deletes nothing there, so its report must not name such a file.
#[test]
fn files_already_gone_are_not_reported() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let r = expire_snapshots_decoupled(&table);
    assert!(r.changelogs_written >= 1, "{r:?}");

    // What the expiry would delete in the bucket directories; every other one of those files
    // is removed beforehand, as an earlier expiry would have.
    let dry = expire_changelogs_cli(&table, &["--dry-run"]);
    let in_buckets: Vec<&String> = dry.iter().filter(|p| p.contains("bucket-")).collect();
    assert!(
        in_buckets.len() >= 2,
        "the expiry deletes files in bucket directories: {dry:?}"
    );
    let gone: BTreeSet<String> = in_buckets.iter().step_by(2).map(|p| (*p).clone()).collect();
    for p in &gone {
        std::fs::remove_file(table.join(p)).unwrap();
    }
    let before: BTreeMap<String, u64> = common::tree(&table);

    let dry_after = expire_changelogs_cli(&table, &["--dry-run"]);
    let reported = expire_changelogs_cli(&table, &[]);
    let after: BTreeMap<String, u64> = common::tree(&table);
    let removed: BTreeSet<String> = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .cloned()
        .collect();

    for p in &gone {
        assert!(!reported.contains(p), "{p} was not on disk: {reported:?}");
        assert!(!dry_after.contains(p), "dry run lists absent {p}");
    }
    assert_eq!(reported, removed, "the report lists what left the disk");
    assert_eq!(
        dry_after, reported,
        "the dry run says what the real run does"
    );
    let expected: BTreeSet<String> = dry.difference(&gone).cloned().collect();
    assert_eq!(reported, expected, "everything else still goes");
    for (k, v) in common::all_versions(&table) {
        assert!(v.get("error").is_none(), "{k}: {v}");
    }
}

/// Gives the file `name` the extra file `extra` in every manifest entry of the table that
/// names it (as Paimon writes `_EXTRA_FILES`: names beside the file); returns how many
/// entries changed.
fn give_extra_file(table: &Path, name: &str, extra: &str) -> usize {
    let py = common::python().expect("python");
    let script = r#"
import os, sys, fastavro
manifest_dir, name, extra = sys.argv[1:4]
changed = 0
for f in sorted(os.listdir(manifest_dir)):
    if not f.startswith("manifest-") or f.startswith("manifest-list-"):
        continue
    path = os.path.join(manifest_dir, f)
    with open(path, "rb") as fh:
        reader = fastavro.reader(fh)
        schema, codec, records = reader.writer_schema, reader.codec, list(reader)
    hits = [r for r in records if r["_FILE"]["_FILE_NAME"] == name]
    if not hits:
        continue
    for r in hits:
        r["_FILE"]["_EXTRA_FILES"] = [extra]
    with open(path, "wb") as fh:
        fastavro.writer(fh, schema, records, codec=codec)
    changed += len(hits)
print(changed)
"#;
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .arg(table.join("manifest"))
        .arg(name)
        .arg(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// A candidate file already gone whose extra file is still there: the extra file is garbage
/// of the expired range like the others, so the expiry deletes and reports it (never the
/// gone file), and the dry run says the same. A Java-written merge-on-read table whose
/// compactions removed data files that its long-lived changelogs' deltas name.
#[test]
fn extra_files_of_a_file_already_gone_still_go() {
    let Some(root) = common::fixtures_dir() else {
        return;
    };
    if common::python().is_none() {
        return;
    }
    let (_tmp, table) = common::copy_table(
        &root.join("parquet/pk_table_scan_and_read_mor.db/pk_table_scan_and_read_mor"),
    );
    let r = expire_snapshots_decoupled(&table);
    assert!(r.snapshots_expired >= 1, "{r:?}");

    // One data file the expiry deletes gets an extra file beside it (an index, as Paimon's
    // file index writes); then the data file itself goes, the extra file stays.
    let dry = expire_changelogs_cli(&table, &["--dry-run"]);
    let file = dry
        .iter()
        .find(|p| p.contains("bucket-") && p.rsplit('/').next().unwrap().starts_with("data-"))
        .cloned()
        .unwrap_or_else(|| panic!("the expiry deletes a data file: {dry:?}"));
    let name = file.rsplit_once('/').unwrap().1.to_owned();
    let extra_name = format!("{name}.index");
    let extra = format!("{}/{extra_name}", file.rsplit_once('/').unwrap().0);
    assert!(give_extra_file(&table, &name, &extra_name) >= 1, "{name}");
    std::fs::write(table.join(&extra), b"index").unwrap();
    let with_extra = expire_changelogs_cli(&table, &["--dry-run"]);
    assert!(with_extra.contains(&extra), "{with_extra:?}");
    std::fs::remove_file(table.join(&file)).unwrap();
    let before: BTreeMap<String, u64> = common::tree(&table);

    let dry_after = expire_changelogs_cli(&table, &["--dry-run"]);
    let reported = expire_changelogs_cli(&table, &[]);
    let after: BTreeMap<String, u64> = common::tree(&table);
    let removed: BTreeSet<String> = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .cloned()
        .collect();

    assert!(!table.join(&extra).exists(), "{extra} was left behind");
    assert!(
        reported.contains(&extra),
        "{extra} not reported: {reported:?}"
    );
    assert!(
        !reported.contains(&file),
        "{file} was not on disk: {reported:?}"
    );
    assert_eq!(reported, removed, "the report lists what left the disk");
    assert_eq!(
        dry_after, reported,
        "the dry run says what the real run does"
    );
    let expected: BTreeSet<String> = with_extra.iter().filter(|p| **p != file).cloned().collect();
    assert_eq!(reported, expected, "everything else still goes");
    for (k, v) in common::all_versions(&table) {
        assert!(v.get("error").is_none(), "{k}: {v}");
    }
}
