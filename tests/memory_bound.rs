//! The caller's memory bound (`RunControl::max_memory`, CLI `--max-memory`, issue 19): a run
//! whose plan needs more than the bound stops with a clear error while planning and leaves the
//! table exactly as it was; a bound the run fits in changes nothing about what it deletes.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use paimon_cleanup::clean::{
    delete_tags, expire_changelogs, expire_snapshots, ChangelogExpireConfig, ExpireConfig,
    ExpireReport, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::Storage;
use paimon_cleanup::table::Table;

fn cfg() -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(std::time::Duration::ZERO),
            limit: Some(1000),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn bounded(bytes: Option<u64>) -> RunControl {
    RunControl {
        max_memory: bytes,
        ..Default::default()
    }
}

async fn open(table: &Path) -> paimon_cleanup::Result<Table> {
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    Table::open(storage, &HashMap::new()).await
}

fn expire(table: &Path, ctl: &RunControl) -> paimon_cleanup::Result<ExpireReport> {
    common::rt().block_on(async { expire_snapshots(&open(table).await?, &cfg(), ctl).await })
}

#[test]
fn expiry_past_a_tiny_bound_fails_cleanly_and_changes_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let before = common::tree(&table);
    for bytes in [1, 512] {
        let err = expire(&table, &bounded(Some(bytes))).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, paimon_cleanup::Error::MemoryLimit { .. })
                && text.contains("max_memory")
                && text.contains(&bytes.to_string())
                && text.contains("nothing deleted"),
            "bound {bytes}: {text}"
        );
        assert_eq!(
            common::tree(&table),
            before,
            "bound {bytes} changed the table"
        );
    }
    // The same run without the bound has work to do (so the bound, not an empty plan, stopped it).
    let report = expire(&table, &RunControl::default()).unwrap();
    assert!(report.deletion.total_files() > 5, "{report:?}");
}

#[test]
fn a_bound_the_run_fits_in_deletes_exactly_what_an_unbounded_run_deletes() {
    let Some((_t1, a, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let (_t2, b, _) = common::pypaimon_table("pk_changelog").unwrap();
    let free = expire(&a, &RunControl::default()).unwrap();
    let capped = expire(&b, &bounded(Some(256 << 20))).unwrap();
    let paths = |r: &ExpireReport| {
        let mut v: Vec<String> = r.deletion.paths.iter().map(|p| p.path.clone()).collect();
        v.sort();
        v
    };
    assert!(!free.deletion.paths.is_empty());
    assert_eq!(paths(&free), paths(&capped));
    assert_eq!(common::tree(&a), common::tree(&b));
}

#[test]
fn tag_deletion_past_a_tiny_bound_fails_cleanly_and_changes_nothing() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    // A tag on the earliest snapshot (a tag file is the snapshot's JSON), so that deleting it
    // reads the live entries of a snapshot that is gone.
    let earliest = common::snapshot_ids(&table)
        .into_iter()
        .min()
        .expect("a snapshot");
    std::fs::create_dir_all(table.join("tag")).unwrap();
    std::fs::copy(
        table.join("snapshot").join(format!("snapshot-{earliest}")),
        table.join("tag").join("tag-bounded"),
    )
    .unwrap();
    // Free the tags' files first: expire everything the tags do not pin.
    expire(&table, &RunControl::default()).unwrap();
    assert!(
        !table
            .join("snapshot")
            .join(format!("snapshot-{earliest}"))
            .exists(),
        "the tagged snapshot was not expired"
    );
    let tags: Vec<String> = std::fs::read_dir(table.join("tag"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_prefix("tag-"))
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(tags.contains(&"bounded".to_owned()), "{tags:?}");
    let before = common::tree(&table);
    let err = common::rt()
        .block_on(async {
            delete_tags(&open(&table).await?, &tags, false, &bounded(Some(1))).await
        })
        .unwrap_err();
    // The first charge is the tag's live entries, before its manifests are merged.
    let text = err.to_string();
    assert!(
        matches!(err, paimon_cleanup::Error::MemoryLimit { limit: 1, .. })
            && text.contains("max_memory")
            && text.contains("entries held while merging the manifests")
            && text.contains("nothing deleted"),
        "{text}"
    );
    assert_eq!(common::tree(&table), before);
    // The smallest bound a dry run fits in (it charges what the real run does): one byte less
    // stops the real run with nothing deleted; at it, the real run deletes the tags.
    let run = |bound: u64, dry_run: bool| {
        common::rt().block_on(async {
            delete_tags(&open(&table).await?, &tags, dry_run, &bounded(Some(bound))).await
        })
    };
    let (mut lo, mut hi) = (1u64, 1u64 << 30);
    assert!(run(hi, true).is_ok(), "1 GiB is not enough for a dry run");
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match run(mid, true) {
            Ok(_) => hi = mid,
            Err(e) => {
                assert!(
                    matches!(e, paimon_cleanup::Error::MemoryLimit { .. }),
                    "{e}"
                );
                lo = mid;
            }
        }
    }
    assert_eq!(common::tree(&table), before, "a dry run changed the table");
    let err = run(hi - 1, false).unwrap_err();
    assert!(
        matches!(err, paimon_cleanup::Error::MemoryLimit { .. }),
        "{err}"
    );
    assert_eq!(
        common::tree(&table),
        before,
        "a run stopped by its bound changed the table"
    );
    let done = run(hi, false).unwrap();
    assert_eq!(done.tags_deleted.len(), tags.len());
    for t in &tags {
        assert!(
            !table.join("tag").join(format!("tag-{t}")).exists(),
            "tag {t} left"
        );
    }
}

/// Changelog expiry under a bound (planning and deletions charge one budget): below the
/// smallest bound its dry run passes with, the real run fails cleanly with nothing deleted; at
/// it, the real run does all its work (a dry run charges what the real run does).
#[test]
fn changelog_expiry_holds_one_bound_for_planning_and_deletion() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let opts: HashMap<String, String> = [
        ("changelog.num-retained.max", "100"),
        ("snapshot.num-retained.max", "1"),
        ("snapshot.num-retained.min", "1"),
        ("snapshot.time-retained", "0s"),
        ("changelog.time-retained", "0s"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let rt = common::rt();
    let open_with = |o: &HashMap<String, String>| {
        let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
        rt.block_on(Table::open(storage, o)).unwrap()
    };
    let t = open_with(&opts);
    rt.block_on(expire_snapshots(
        &t,
        &ExpireConfig::default(),
        &RunControl::default(),
    ))
    .unwrap();
    let cfg = ChangelogExpireConfig {
        delete_all: true,
        ..Default::default()
    };
    let before = common::tree(&table);
    // A failed run changes nothing, so the smallest passing bound can be searched on one table.
    let (mut lo, mut hi) = (0u64, 64u64 << 20);
    let mut fails_below = None;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let dry = ChangelogExpireConfig {
            dry_run: true,
            ..cfg.clone()
        };
        match rt.block_on(expire_changelogs(&t, &dry, &bounded(Some(mid)))) {
            Ok(_) => hi = mid,
            Err(e) => {
                assert!(e.to_string().contains("max_memory"), "{e}");
                fails_below = Some(mid);
                lo = mid;
            }
        }
        assert_eq!(common::tree(&table), before, "a dry run changed the table");
    }
    assert!(fails_below.is_some(), "even a tiny bound passed");
    // Just below the smallest passing bound the real run fails cleanly, deleting nothing.
    let err = rt
        .block_on(expire_changelogs(&t, &cfg, &bounded(Some(lo))))
        .unwrap_err();
    assert!(err.to_string().contains("nothing deleted"), "{err}");
    assert_eq!(common::tree(&table), before);
    // At it, the real run does all its work.
    let done = rt
        .block_on(expire_changelogs(&t, &cfg, &bounded(Some(hi))))
        .unwrap();
    assert!(done.deletion.total_files() > 0, "{done:?}");
    assert!(!table.join("changelog/changelog-1").exists());
}

// ---- partition drop, preview and expiry (the live entries merged from the manifests, the plan)

mod partitions {
    use std::collections::BTreeMap;
    use std::path::Path;

    use paimon_cleanup::clean::{
        drop_partitions, expire_partitions, preview_drop_partitions, PartitionExpireConfig,
        PartitionExpireStrategy, PartitionReport, RunControl,
    };

    use super::{bounded, common, open};

    fn specs() -> Vec<BTreeMap<String, String>> {
        vec![BTreeMap::from([("dt".to_string(), "a/b".to_string())])]
    }

    fn drop(table: &Path, ctl: &RunControl) -> paimon_cleanup::Result<PartitionReport> {
        common::rt().block_on(async {
            drop_partitions(
                &open(table).await?,
                &specs(),
                Some("u".into()),
                Some(1),
                ctl,
            )
            .await
        })
    }

    fn preview(table: &Path, ctl: &RunControl) -> paimon_cleanup::Result<PartitionReport> {
        common::rt()
            .block_on(async { preview_drop_partitions(&open(table).await?, &specs(), ctl).await })
    }

    /// Every partition expires: by update time, measured from ten days ahead.
    fn expire(table: &Path, ctl: &RunControl) -> paimon_cleanup::Result<PartitionReport> {
        let cfg = PartitionExpireConfig {
            expiration_time: Some(std::time::Duration::from_secs(1)),
            strategy: Some(PartitionExpireStrategy::UpdateTime),
            now_millis: Some(chrono::Utc::now().timestamp_millis() + 10 * 86_400_000),
            ..Default::default()
        };
        common::rt().block_on(async { expire_partitions(&open(table).await?, &cfg, ctl).await })
    }

    fn comparable(r: &PartitionReport) -> PartitionReport {
        PartitionReport {
            elapsed_ms: 0,
            ..r.clone()
        }
    }

    type Op = fn(&Path, &RunControl) -> paimon_cleanup::Result<PartitionReport>;

    /// Doubles the bound from 1 byte until `op` succeeds: each failure names the bound and
    /// leaves the table exactly as it was; the first success is the unbounded run's result.
    /// Returns what the failures named.
    fn sweep(name: &str, op: Op) -> Option<Vec<String>> {
        let (_t1, table, _) = common::pypaimon_table("append_unaware")?;
        let (_t2, free, _) = common::pypaimon_table("append_unaware").unwrap();
        let want = op(&free, &RunControl::default()).unwrap();
        assert!(want.files_marked_deleted > 0, "{name}: {want:?}");
        let before = common::tree(&table);
        let mut named = Vec::new();
        let mut bound: u64 = 1;
        loop {
            match op(&table, &bounded(Some(bound))) {
                Ok(got) => {
                    assert_eq!(comparable(&got), comparable(&want), "{name} at {bound}");
                    assert!(bound > 1, "{name}: a 1-byte bound did not stop the run");
                    break;
                }
                Err(e) => {
                    let text = e.to_string();
                    assert!(
                        matches!(e, paimon_cleanup::Error::MemoryLimit { .. })
                            && text.contains("max_memory")
                            && text.contains(&bound.to_string()),
                        "{name} at {bound}: {text}"
                    );
                    assert_eq!(
                        common::tree(&table),
                        before,
                        "{name}: a run stopped at {bound} bytes changed the table"
                    );
                    named.push(text);
                }
            }
            assert!(
                bound < 1 << 30,
                "{name}: no bound up to 1 GiB let the run through"
            );
            bound *= 2;
        }
        Some(named)
    }

    #[test]
    fn drop_partitions_past_the_bound_fails_cleanly_and_commits_nothing() {
        let Some(named) = sweep("drop", drop) else {
            return;
        };
        // The merge's floor stops a tiny bound before the manifests are merged.
        assert!(named[0].contains("merging the manifests"), "{}", named[0]);
    }

    #[test]
    fn preview_drop_partitions_past_the_bound_fails_cleanly() {
        let Some(named) = sweep("preview", preview) else {
            return;
        };
        assert!(named[0].contains("merging the manifests"), "{}", named[0]);
        // The smallest bound the preview fits in (it changes nothing, so it can be searched on
        // one table): one byte less fails on the plan, the last thing charged.
        let (_t, table, _) = common::pypaimon_table("append_unaware").unwrap();
        let before = common::tree(&table);
        let (mut fails, mut fits) = (1u64, 1u64 << 30);
        while fits - fails > 1 {
            let mid = fails + (fits - fails) / 2;
            match preview(&table, &bounded(Some(mid))) {
                Ok(_) => fits = mid,
                Err(_) => fails = mid,
            }
        }
        let err = preview(&table, &bounded(Some(fits - 1)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("the drop's DELETE entries"), "{err}");
        preview(&table, &bounded(Some(fits))).unwrap();
        assert_eq!(common::tree(&table), before);
    }

    #[test]
    fn expire_partitions_past_the_bound_fails_cleanly_and_commits_nothing() {
        let Some(named) = sweep("expire", expire) else {
            return;
        };
        assert!(named[0].contains("merging the manifests"), "{}", named[0]);
    }
}
