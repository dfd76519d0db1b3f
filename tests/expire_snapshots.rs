//! Snapshot expiry on pypaimon-written tables, checked by pypaimon: every remaining version
//! (snapshot, tag, branch snapshot) reads the same rows as before; every data file no remaining
//! version needs is gone; EARLIEST names the first kept snapshot; a second run changes nothing;
//! a run stopped after k deletions and rerun ends where an uninterrupted run ends.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use paimon_cleanup::clean::{
    expire_snapshots, ExpireConfig, ExpireReport, FileClass, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn cfg(retain_min: i64) -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(retain_min),
            time_retained: Some(std::time::Duration::ZERO),
            limit: Some(1000),
            ..Default::default()
        },
        clean_empty_dirs: Some(true),
        ..Default::default()
    }
}

fn run(table: &Path, cfg: &ExpireConfig, ctl: &RunControl) -> paimon_cleanup::Result<ExpireReport> {
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    common::rt().block_on(async {
        let t = Table::open(storage, &HashMap::new()).await?;
        expire_snapshots(&t, cfg, ctl).await
    })
}

/// Files every remaining version needs, by pypaimon: live data files + changelog files.
fn needed(views: &serde_json::Map<String, serde_json::Value>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for v in views.values() {
        for key in ["live_files", "changelog_files"] {
            if let Some(a) = v[key].as_array() {
                out.extend(a.iter().map(|s| s.as_str().unwrap().to_string()));
            }
        }
    }
    out
}

fn check_table(name: &str, retain_min: i64) -> Option<ExpireReport> {
    check_table_with(name, retain_min, |_| {})
}

fn check_table_with(name: &str, retain_min: i64, prepare: impl Fn(&Path)) -> Option<ExpireReport> {
    let (_tmp, table, _) = common::pypaimon_table(name)?;
    prepare(&table);
    let before = common::all_versions(&table);
    let report = run(&table, &cfg(retain_min), &RunControl::default())
        .unwrap_or_else(|e| panic!("{name}: expire failed: {e}"));
    let after = common::all_versions(&table);

    // Every remaining version reads identically, and nothing that remains fails.
    for (key, v) in &after {
        assert!(
            v.get("error").is_none(),
            "{name}: {key} unreadable after expiry: {v}"
        );
        assert_eq!(
            v["row_digest"], before[key]["row_digest"],
            "{name}: {key} reads different rows after expiry"
        );
    }
    // Expired snapshots are gone; the others are still there.
    for key in before.keys() {
        if let Some(id) = key.strip_prefix("snapshot:") {
            let id: i64 = id.parse().unwrap();
            let expired = report.first_expired.is_some_and(|a| id >= a)
                && report.last_expired.is_some_and(|b| id <= b);
            assert_eq!(after.contains_key(key), !expired, "{name}: {key}");
        }
    }
    // Data files on disk are exactly what the remaining versions need.
    let on_disk: BTreeSet<String> = common::data_files_on_disk(&table)
        .into_iter()
        .filter(|f| !f.ends_with("_SUCCESS"))
        .collect();
    assert_eq!(on_disk, needed(&after), "{name}: data files left vs needed");
    // EARLIEST names the first kept snapshot.
    if let Some(e) = report.earliest_after {
        let hint = std::fs::read_to_string(table.join("snapshot/EARLIEST")).unwrap();
        assert_eq!(hint.trim(), e.to_string(), "{name}: EARLIEST");
    }
    // A second run changes nothing.
    let tree = common::tree(&table);
    let again = run(&table, &cfg(retain_min), &RunControl::default()).unwrap();
    assert_eq!(
        again.deletion.total_files(),
        0,
        "{name}: second run deleted {:?}",
        again.deletion.paths
    );
    assert_eq!(
        common::tree(&table),
        tree,
        "{name}: second run changed files"
    );
    eprintln!(
        "{name}: expired {} snapshots, deleted {} files ({} data, {} changelog, {} manifests, {} lists, {} index)",
        report.snapshots_expired,
        report.deletion.total_files(),
        report.deletion.count(FileClass::Data).files,
        report.deletion.count(FileClass::ChangelogData).files,
        report.deletion.count(FileClass::Manifest).files,
        report.deletion.count(FileClass::ManifestList).files,
        report.deletion.count(FileClass::Index).files,
    );
    Some(report)
}

#[test]
fn append_with_tag_branch_consumer_overwrite_and_drop() {
    // The consumer (nextSnapshot 3) bounds the run.
    if let Some(r) = check_table("append_unaware", 1) {
        assert_eq!(r.earliest_after, Some(3));
    }
}

#[test]
fn overwritten_and_dropped_files_go_while_tag_and_branch_files_stay() {
    // Without the consumer, expiry reaches past the OVERWRITE (4) and the drop (5): the files
    // they removed must go, except those the tag t1 (snapshot 2) and branch b1 still read.
    let Some(report) = check_table_with("append_unaware", 1, |t| {
        std::fs::remove_file(t.join("consumer/consumer-c1")).unwrap();
    }) else {
        return;
    };
    assert_eq!(report.earliest_after, Some(6));
    assert!(
        report.deletion.count(FileClass::Data).files > 0,
        "{report:?}"
    );
}

#[test]
fn append_fixed_bucket() {
    check_table("append_fixed_bucket", 1);
}

#[test]
fn primary_key_fixed_bucket() {
    check_table("pk_fixed", 1);
}

#[test]
fn primary_key_dynamic_bucket_hash_index() {
    check_table("pk_dynamic", 1);
}

#[test]
fn changelog_producer_input() {
    check_table("pk_changelog", 1);
}

#[test]
fn deletion_vectors() {
    check_table("dv_table", 1);
}

#[test]
fn retention_options_from_the_schema() {
    check_table("retention_opts", 2);
}

#[test]
fn dry_run_changes_nothing_and_lists_every_path() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_dynamic") else {
        return;
    };
    let tree = common::tree(&table);
    let mut c = cfg(1);
    c.dry_run = true;
    let dry = run(&table, &c, &RunControl::default()).unwrap();
    assert_eq!(common::tree(&table), tree, "dry run changed files");
    assert!(dry.deletion.total_files() > 0);
    let real = run(&table, &cfg(1), &RunControl::default()).unwrap();
    let mut a: Vec<_> = dry.deletion.paths.iter().map(|p| p.path.clone()).collect();
    let mut b: Vec<_> = real.deletion.paths.iter().map(|p| p.path.clone()).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b, "dry run lists exactly what a real run deletes");
}

#[test]
fn invalid_configuration_deletes_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_fixed_bucket") else {
        return;
    };
    let tree = common::tree(&table);
    let bad = [
        RetentionOverrides {
            retain_min: Some(0),
            ..Default::default()
        },
        RetentionOverrides {
            retain_min: Some(3),
            retain_max: Some(2),
            ..Default::default()
        },
        RetentionOverrides {
            older_than_ms: Some(i64::MAX),
            ..Default::default()
        },
        RetentionOverrides {
            limit: Some(0),
            ..Default::default()
        },
    ];
    for r in bad {
        let c = ExpireConfig {
            retention: r.clone(),
            ..Default::default()
        };
        let e = run(&table, &c, &RunControl::default()).unwrap_err();
        assert!(
            matches!(e, paimon_cleanup::Error::InvalidArgument(_)),
            "{r:?}: {e}"
        );
    }
    // An unknown option value in the table options is an error too.
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    let overrides = HashMap::from([("snapshot.num-retained.min".to_string(), "ten".to_string())]);
    let e = common::rt()
        .block_on(async {
            let t = Table::open(storage, &overrides).await?;
            expire_snapshots(&t, &ExpireConfig::default(), &RunControl::default()).await
        })
        .unwrap_err();
    assert!(
        matches!(e, paimon_cleanup::Error::InvalidArgument(_)),
        "{e}"
    );
    assert_eq!(common::tree(&table), tree);
}

#[test]
fn crash_after_k_deletions_then_rerun_converges() {
    let Some((_tmp, reference, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let full = run(&reference, &cfg(1), &RunControl::default()).unwrap();
    let total = full.deletion.total_files();
    assert!(total > 5, "too little to delete: {total}");
    let end_state = common::tree(&reference);
    let kept = common::all_versions(&reference);
    for k in 0..total {
        let (_t, table, _) = common::pypaimon_table("pk_changelog").unwrap();
        let ctl = RunControl {
            fail_after_deletes: Some(k),
            ..Default::default()
        };
        let err = run(&table, &cfg(1), &ctl).unwrap_err();
        assert!(err.to_string().contains("injected failure"), "k={k}: {err}");
        // Nothing that survives the full run may be missing now.
        let now = common::tree(&table);
        for f in end_state.keys() {
            if !f.ends_with("EARLIEST") {
                assert!(
                    now.contains_key(f),
                    "k={k}: {f} deleted by the interrupted run"
                );
            }
        }
        run(&table, &cfg(1), &RunControl::default()).unwrap();
        assert_eq!(
            common::tree(&table),
            end_state,
            "k={k}: rerun did not converge"
        );
    }
    // And the converged state reads as before.
    let after = common::all_versions(&reference);
    for (key, v) in &kept {
        assert_eq!(v["row_digest"], after[key]["row_digest"], "{key}");
    }
}

/// The metadata the first kept snapshot needs is also read, tolerantly, as expired deltas: its
/// delta list is the last delta list of the expired range, and its base list names manifests
/// that expired deltas wrote (decoded once, for candidates and for protection). Either one
/// missing must still stop the run with an error naming it and nothing deleted.
#[test]
fn kept_snapshots_missing_list_or_manifest_read_as_a_delta_too_deletes_nothing() {
    let Some((_tmp, reference, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let storage = Arc::new(Storage::open(reference.to_str().unwrap(), &HashMap::new()).unwrap());
    let (delta_list, shared_manifest) = common::rt().block_on(async {
        let t = Table::open(storage, &HashMap::new()).await.unwrap();
        let snapshots = t.all_snapshots().await.unwrap();
        let latest = snapshots.last().expect("a snapshot").clone();
        let base: BTreeSet<String> = t
            .reader()
            .manifest_list(t.paths(), &latest.base_manifest_list)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.file_name)
            .collect();
        let mut shared = None;
        // Deltas of (earliest, latest]: what expiry reads for candidates with retain-min 1.
        for s in snapshots.iter().skip(1) {
            for m in t
                .reader()
                .manifest_list(t.paths(), &s.delta_manifest_list)
                .await
                .unwrap()
            {
                if base.contains(&m.file_name) {
                    shared = Some(m.file_name);
                }
            }
        }
        (
            latest.delta_manifest_list,
            shared.expect("a manifest both an expired delta and the kept base list name"),
        )
    });
    for name in [delta_list, shared_manifest] {
        let (tmp, table) = common::copy_table(&reference);
        std::fs::remove_file(table.join("manifest").join(&name)).unwrap();
        let tree = common::tree(&table);
        let err = run(&table, &cfg(1), &RunControl::default())
            .expect_err("metadata of the kept snapshot is missing");
        assert!(
            err.to_string().contains(&name),
            "the error names {name}: {err}"
        );
        assert_eq!(common::tree(&table), tree, "{name}: nothing may be deleted");
        drop(tmp);
    }
}
