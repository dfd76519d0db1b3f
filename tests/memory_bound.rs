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
            matches!(err, paimon_cleanup::Error::InvalidArgument(_))
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
    // Free the tags' files first: expire everything the tags do not pin.
    expire(&table, &RunControl::default()).unwrap();
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
    if tags.is_empty() {
        return;
    }
    let before = common::tree(&table);
    let err = common::rt()
        .block_on(async {
            delete_tags(&open(&table).await?, &tags, false, &bounded(Some(1))).await
        })
        .unwrap_err();
    assert!(err.to_string().contains("max_memory"), "{err}");
    assert_eq!(common::tree(&table), before);
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
