//! Which versions expire now: the id ranges snapshot and changelog expiry compute from the
//! resolved retention, the consumers' next snapshots and the versions' times. Protectors use the
//! changelog range too (a changelog expiring anyway may be half-deleted).

use std::collections::BTreeMap;

use crate::clean::expiry::consumers::consumer_bound;
use crate::clean::expiry::retention::{Retention, RetentionOverrides};
use crate::clean::shared::clock::now_millis;
use crate::error::Result;
use crate::spec::snapshot::Snapshot;
use crate::table::Table;

/// The range `[begin, end)` to expire, or None.
pub(crate) async fn expire_range(
    table: &Table,
    r: &Retention,
    honour_consumers: bool,
    ignored_consumers: &[String],
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<(i64, i64)>> {
    let storage = table.storage();
    let dir = table.snapshots();
    let (Some(latest), Some(earliest)) = (
        dir.latest_id(storage).await?,
        dir.earliest_id(storage).await?,
    ) else {
        return Ok(None);
    };
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = latest
        .saturating_sub(r.retain_max)
        .saturating_add(1)
        .max(earliest);
    let mut max_exclusive = latest.saturating_sub(r.retain_min).saturating_add(1);
    if honour_consumers {
        if let Some(c) = consumer_bound(table, ignored_consumers).await? {
            max_exclusive = max_exclusive.min(c);
        }
    }
    max_exclusive = max_exclusive.min(earliest.saturating_add(r.limit));
    let mut end = max_exclusive;
    for id in min..max_exclusive {
        if let Some(next) = all.get(&(id + 1)) {
            if r.older_than_ms <= next.time_millis {
                end = id;
                break;
            }
        }
    }
    Ok(Some((earliest, end)))
}

/// The ids a changelog expiry works with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub(crate) latest_snap: i64,
    pub(crate) earliest_cl: i64,
    pub(crate) latest_cl: i64,
}

/// The first changelog id that retention `r` keeps (changelogs `[earliest_cl, end)` expire), or
/// `None` when none expires: Paimon's rules — retain max/min counted from the latest snapshot,
/// the consumers' next snapshot, the expire limit, then the time rule.
pub(crate) async fn retention_end(
    table: &Table,
    r: &Retention,
    b: Bounds,
    ignored_consumers: &[String],
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<i64>> {
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = b
        .latest_snap
        .saturating_sub(r.retain_max)
        .saturating_add(1)
        .max(b.earliest_cl);
    let mut max_exclusive = b.latest_snap.saturating_sub(r.retain_min).saturating_add(1);
    if let Some(c) = consumer_bound(table, ignored_consumers).await? {
        max_exclusive = max_exclusive.min(c);
    }
    max_exclusive = max_exclusive
        .min(b.earliest_cl.saturating_add(r.limit))
        .min(b.latest_cl);
    if max_exclusive <= b.earliest_cl {
        return Ok(None);
    }
    let mut end = max_exclusive;
    for id in min..=max_exclusive {
        if let Some(c) = all.get(&id) {
            if r.older_than_ms <= c.time_millis {
                end = id;
                break;
            }
        }
    }
    Ok(Some(end))
}

/// The long-lived changelogs of `table`'s branch that a changelog expiry with the table's own
/// retention would expire now (`changelogs`: all of them, by id). An interrupted changelog
/// expiry can leave these half-deleted (their metadata gone before their files, the crash-safe
/// order); they are expiring anyway, so a missing manifest of theirs does not block other work.
pub(crate) async fn expiring_now(
    table: &Table,
    changelogs: &BTreeMap<i64, Snapshot>,
) -> Result<std::ops::Range<i64>> {
    let storage = table.storage();
    let r = Retention::resolve_changelog(
        table.options(),
        &RetentionOverrides::default(),
        now_millis(),
    )?;
    let (Some(latest_snap), Some(earliest_cl), Some(latest_cl)) = (
        table.snapshots().latest_id(storage).await?,
        changelogs.keys().next().copied(),
        changelogs.keys().next_back().copied(),
    ) else {
        return Ok(0..0);
    };
    let bounds = Bounds {
        latest_snap,
        earliest_cl,
        latest_cl,
    };
    Ok(
        match retention_end(table, &r, bounds, &[], changelogs).await? {
            Some(end) => earliest_cl..end,
            None => 0..0,
        },
    )
}
