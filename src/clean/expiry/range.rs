//! Which versions expire now: the id ranges snapshot and changelog expiry compute from the
//! resolved retention, the consumers' next snapshots and the versions' times. Protectors use the
//! changelog range too (a changelog expiring anyway may be half-deleted).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::clean::expiry::consumers::consumer_bound;
use crate::clean::expiry::retention::{Retention, RetentionOverrides};
use crate::clean::shared::clock::now_millis;
use crate::error::Result;
use crate::spec::snapshot::Snapshot;
use crate::table::Table;

/// What kept the snapshots from `end` on (the first bound that held), so that a run that
/// expires nothing, or fewer than expected, can say why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "bound", rename_all = "snake_case")]
pub enum ExpiryBound {
    /// The branch has no snapshot.
    NoSnapshots,
    /// The latest `retain_min` snapshots are kept (`snapshot.num-retained.min`,
    /// `--retain-min`).
    RetainMin {
        /// The minimum kept.
        retain_min: i64,
        /// The latest snapshot.
        latest: i64,
    },
    /// A consumer reads from `next_snapshot` on: no snapshot from there expires.
    Consumer {
        /// The consumer's id.
        consumer: String,
        /// The snapshot it reads next.
        next_snapshot: i64,
    },
    /// At most `limit` snapshots expire in one run (`snapshot.expire.limit`,
    /// `--max-deletes`).
    Limit {
        /// The limit.
        limit: i64,
    },
    /// Snapshot `snapshot`, which follows the last one that could expire, was committed at
    /// `time_millis`, not before the cut-off `older_than_ms` (`snapshot.time-retained`,
    /// `--time-retained`, `--older-than`): a snapshot expires only once its successor is older
    /// than the cut-off.
    Time {
        /// The successor that is too young.
        snapshot: i64,
        /// Its commit time (epoch milliseconds).
        time_millis: i64,
        /// The cut-off (epoch milliseconds).
        older_than_ms: i64,
    },
}

impl ExpiryBound {
    /// One line for a person: which bound held.
    pub fn describe(&self) -> String {
        match self {
            ExpiryBound::NoSnapshots => "the branch has no snapshot".to_string(),
            ExpiryBound::RetainMin { retain_min, latest } => format!(
                "retain-min: the latest {retain_min} snapshots are kept (latest is {latest})"
            ),
            ExpiryBound::Consumer {
                consumer,
                next_snapshot,
            } => format!("consumer {consumer} reads from snapshot {next_snapshot} on"),
            ExpiryBound::Limit { limit } => {
                format!("the limit: at most {limit} snapshots expire per run (max-deletes)")
            }
            ExpiryBound::Time {
                snapshot,
                time_millis,
                older_than_ms,
            } => format!(
                "time: snapshot {snapshot} was committed at {time_millis} ms, not before the \
                 cut-off {older_than_ms} ms (time-retained / older-than)"
            ),
        }
    }
}

/// The snapshots `[begin, end)` that `retention` expires now (`all`: the branch's snapshots by
/// id, as listed; `begin` is the first of them) and the bound that kept `end` ([`ExpiryBound`]),
/// or None when the branch has no snapshot. `honour_consumers`: no snapshot from the
/// smallest `nextSnapshot` of the consumers (but `ignored_consumers`) on expires.
pub(crate) async fn snapshot_range(
    table: &Table,
    retention: &Retention,
    honour_consumers: bool,
    ignored_consumers: &[String],
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<(i64, i64, ExpiryBound)>> {
    let storage = table.storage();
    let dir = table.snapshots();
    // The earliest is the first listed snapshot, whatever `EARLIEST` says: one below the hint
    // is expired whole like any other (its files are candidates, its file goes last), never
    // left unprotected. The latest trusts `LATEST` only as `VersionedDir::latest_id` does; a
    // hint below the listed maximum counts the retention from the hint (keeping more), and
    // every listed snapshot from `end` on protects its files.
    let (Some(latest), Some(&earliest)) = (dir.latest_id(storage).await?, all.keys().next()) else {
        return Ok(None);
    };
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = latest
        .saturating_sub(retention.retain_max)
        .saturating_add(1)
        .max(earliest);
    let mut max_exclusive = latest
        .saturating_sub(retention.retain_min)
        .saturating_add(1);
    let mut bound = ExpiryBound::RetainMin {
        retain_min: retention.retain_min,
        latest,
    };
    if honour_consumers {
        let consumers = table.consumers().await?;
        let first = consumers
            .iter()
            .filter(|(id, _)| !ignored_consumers.contains(id))
            .map(|(id, (c, _))| (c.next_snapshot, id))
            .min();
        if let Some((next_read, id)) = first {
            if next_read < max_exclusive {
                max_exclusive = next_read;
                bound = ExpiryBound::Consumer {
                    consumer: id.clone(),
                    next_snapshot: next_read,
                };
            }
        }
    }
    let limited = earliest.saturating_add(retention.limit);
    if limited < max_exclusive {
        max_exclusive = limited;
        bound = ExpiryBound::Limit {
            limit: retention.limit,
        };
    }
    let mut end = max_exclusive;
    for id in min..max_exclusive {
        if let Some(next) = all.get(&(id + 1)) {
            if retention.older_than_ms <= next.time_millis {
                end = id;
                bound = ExpiryBound::Time {
                    snapshot: id + 1,
                    time_millis: next.time_millis,
                    older_than_ms: retention.older_than_ms,
                };
                break;
            }
        }
    }
    Ok(Some((earliest, end, bound)))
}

/// The ids a changelog expiry works with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChangelogIds {
    /// The branch's latest snapshot.
    pub(crate) latest_snapshot: i64,
    /// The earliest long-lived changelog.
    pub(crate) earliest_changelog: i64,
    /// The latest long-lived changelog.
    pub(crate) latest_changelog: i64,
}

/// The first changelog id that `retention` keeps (changelogs `[earliest_changelog, end)`
/// expire), or `None` when none expires: Paimon's rules — retain max/min counted from the
/// latest snapshot, the consumers' next snapshot, the expire limit, then the time rule.
pub(crate) async fn changelog_end(
    table: &Table,
    retention: &Retention,
    ids: ChangelogIds,
    ignored_consumers: &[String],
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<i64>> {
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = ids
        .latest_snapshot
        .saturating_sub(retention.retain_max)
        .saturating_add(1)
        .max(ids.earliest_changelog);
    let mut max_exclusive = ids
        .latest_snapshot
        .saturating_sub(retention.retain_min)
        .saturating_add(1);
    if let Some(next_read) = consumer_bound(table, ignored_consumers).await? {
        max_exclusive = max_exclusive.min(next_read);
    }
    max_exclusive = max_exclusive
        .min(ids.earliest_changelog.saturating_add(retention.limit))
        .min(ids.latest_changelog);
    if max_exclusive <= ids.earliest_changelog {
        return Ok(None);
    }
    let mut end = max_exclusive;
    for id in min..=max_exclusive {
        if let Some(changelog) = all.get(&id) {
            if retention.older_than_ms <= changelog.time_millis {
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
    let retention = Retention::resolve_changelog(
        table.options(),
        &RetentionOverrides::default(),
        now_millis(),
    )?;
    let (Some(latest_snapshot), Some(earliest_changelog), Some(latest_changelog)) = (
        table.snapshots().latest_id(storage).await?,
        changelogs.keys().next().copied(),
        changelogs.keys().next_back().copied(),
    ) else {
        return Ok(0..0);
    };
    let ids = ChangelogIds {
        latest_snapshot,
        earliest_changelog,
        latest_changelog,
    };
    Ok(
        match changelog_end(table, &retention, ids, &[], changelogs).await? {
            Some(end) => earliest_changelog..end,
            None => 0..0,
        },
    )
}
