//! The caller's memory bound (`RunControl::max_memory`, CLI `--max-memory`, issue 19): a run
//! whose plan needs more than the bound stops with a clear error while planning and leaves the
//! table exactly as it was; a bound the run fits in changes nothing about what it deletes.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use paimon_cleanup::clean::{
    delete_tags, expire_snapshots, ExpireConfig, ExpireReport, RetentionOverrides, RunControl,
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
