//! Long-lived changelogs of a changelog-producing table (producer `input`) whose base and
//! delta manifest lists are gone, as Paimon Java's decoupled snapshot expiry leaves them: such a
//! changelog is read through its changelog manifest list only. Every operation must still run
//! (the absent lists name nothing) and keep what the changelog manifest list names; an absent
//! changelog manifest list still stops every operation with nothing deleted.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use paimon_cleanup::clean::{
    expire_changelogs, expire_snapshots, remove_orphan_files, ChangelogExpireConfig, ExpireConfig,
    OrphanConfig, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn open(table: &Path, overrides: &[(&str, &str)]) -> (tokio::runtime::Runtime, Table) {
    let rt = common::rt();
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    let o: HashMap<String, String> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let t = rt.block_on(Table::open(storage, &o)).unwrap();
    (rt, t)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The version files (`snapshot-N`, `changelog-N`) in `dir` of the table.
fn versions(table: &Path, dir: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(table.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with("snapshot-") || n.starts_with("changelog-")
        })
        .collect();
    out.sort();
    out
}

/// A pypaimon `input`-producer table expired (decoupled) down to its last two snapshots, so
/// that changelog 1 is long-lived, without its base and delta lists (as Java leaves it). Returns (guard, table, changelog 1's changelog manifest list).
fn table_with_listless_changelog() -> Option<(tempfile::TempDir, PathBuf, String)> {
    let (tmp, table, _) = common::pypaimon_table("pk_changelog")?;
    assert!(
        versions(&table, "snapshot").len() >= 3,
        "pk_changelog has 3 snapshots"
    );
    let (rt, t) = open(&table, &decoupled(2));
    let r = rt
        .block_on(expire_snapshots(
            &t,
            &ExpireConfig::default(),
            &RunControl::default(),
        ))
        .unwrap();
    assert!(r.changelogs_written >= 1, "{r:?}");
    let changelog = json(&table.join("changelog/changelog-1"));
    let cl_list = changelog["changelogManifestList"]
        .as_str()
        .expect("an input-producer changelog has a changelog manifest list")
        .to_string();
    // Lists of the remaining snapshots are never shared with changelog 1 (one list per commit).
    let mut still_named = BTreeSet::new();
    for s in versions(&table, "snapshot") {
        let s = json(&s);
        for k in [
            "baseManifestList",
            "deltaManifestList",
            "changelogManifestList",
        ] {
            if let Some(l) = s[k].as_str() {
                still_named.insert(l.to_string());
            }
        }
    }
    for k in ["baseManifestList", "deltaManifestList"] {
        let l = changelog[k].as_str().unwrap();
        assert!(!still_named.contains(l), "{l} is shared with a snapshot");
        // Our own decoupled expiry removes them already (as Java does); else remove them here.
        let _ = std::fs::remove_file(table.join("manifest").join(l));
        assert!(!table.join("manifest").join(l).exists());
    }
    Some((tmp, table, cl_list))
}

/// Decoupled retention: `snapshots` snapshots kept, changelogs kept far longer.
fn decoupled(snapshots: usize) -> Vec<(&'static str, &'static str)> {
    let max = match snapshots {
        1 => "1",
        2 => "2",
        _ => panic!("unsupported"),
    };
    vec![
        ("changelog.num-retained.max", "100"),
        ("changelog.num-retained.min", "1"),
        ("changelog.time-retained", "0s"),
        ("snapshot.num-retained.max", max),
        ("snapshot.num-retained.min", "1"),
        ("snapshot.time-retained", "0s"),
    ]
}

/// Changelog files (`changelog-…` in bucket directories) on disk, relative paths.
fn changelog_data_files(table: &Path) -> BTreeSet<String> {
    common::data_files_on_disk(table)
        .into_iter()
        .filter(|f| f.rsplit('/').next().unwrap().starts_with("changelog-"))
        .collect()
}

/// The manifests a manifest list names, read by the library's own reader.
fn manifests_of(table: &Path, list: &str) -> Vec<String> {
    let (rt, t) = open(table, &[]);
    rt.block_on(t.reader().manifest_list(t.paths(), list))
        .unwrap()
        .into_iter()
        .map(|m| m.file_name)
        .collect()
}

fn orphans(table: &Path) -> paimon_cleanup::Result<paimon_cleanup::clean::OrphanReport> {
    let (rt, t) = open(table, &[]);
    rt.block_on(remove_orphan_files(
        &t,
        &OrphanConfig::default(),
        &RunControl::default(),
    ))
}

fn age_everything(table: &Path) {
    common::set_tree_mtime(table, SystemTime::now() - Duration::from_secs(3 * 86_400));
}

#[test]
fn changelog_without_its_base_and_delta_lists_is_read_through_its_changelog_list() {
    let Some((_tmp, table, cl_list)) = table_with_listless_changelog() else {
        return;
    };
    let cl_manifests = manifests_of(&table, &cl_list);
    assert!(!cl_manifests.is_empty());
    let changelog_files = changelog_data_files(&table);
    assert!(
        !changelog_files.is_empty(),
        "pk_changelog writes changelog files"
    );

    // Orphan removal: an old planted orphan goes; the changelog's list, its manifests and
    // every changelog file stay.
    let planted = table.join("manifest/manifest-planted-orphan-0");
    std::fs::write(&planted, b"orphan").unwrap();
    age_everything(&table);
    let r = orphans(&table).expect("orphan removal reads the changelog through its changelog list");
    assert!(!planted.exists(), "{r:?}");
    assert!(table.join("manifest").join(&cl_list).exists());
    for m in &cl_manifests {
        assert!(table.join("manifest").join(m).exists(), "{m} deleted");
    }
    assert_eq!(changelog_data_files(&table), changelog_files);

    let (rt, t) = open(&table, &decoupled(1));
    // Changelog expiry of changelog 1 itself (its absent lists are no error) ...
    let cfg = ChangelogExpireConfig {
        retention: RetentionOverrides {
            retain_max: Some(1),
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            ..Default::default()
        },
        ..Default::default()
    };
    let cl = rt
        .block_on(expire_changelogs(&t, &cfg, &RunControl::default()))
        .expect("changelog expiry of a changelog without base/delta lists");
    assert!(cl.changelogs_expired >= 1, "{cl:?}");
    assert!(!table.join("changelog/changelog-1").exists());
    assert_eq!(
        versions(&table, "changelog").len(),
        1,
        "the last changelog stays"
    );
    // ... and the readers that remain still read every version.
    for (k, v) in common::all_versions(&table) {
        assert!(v.get("error").is_none(), "{k}: {v}");
    }
}

#[test]
fn changelog_without_its_changelog_list_still_stops_every_operation() {
    let Some((_tmp, table, cl_list)) = table_with_listless_changelog() else {
        return;
    };
    std::fs::remove_file(table.join("manifest").join(&cl_list)).unwrap();
    std::fs::write(table.join("manifest/manifest-planted-orphan-0"), b"orphan").unwrap();
    age_everything(&table);
    let before: BTreeMap<String, u64> = common::tree(&table);

    let err = orphans(&table).expect_err("a changelog whose changelog list is gone");
    assert!(err.to_string().contains(&cl_list), "{err}");
    assert_eq!(
        common::tree(&table),
        before,
        "orphan removal deleted something"
    );
}
