//! `maintain`: everything the table's own options ask for, in Paimon Java's order — tag
//! expiry, partition expiry, consumer expiry, snapshot expiry, changelog expiry — with one
//! combined report. The natural single call for an engine after each commit or on a schedule.
//!
//! A dry run plans what a real run does: the tags and consumers the first steps would remove
//! are treated as removed by snapshot and changelog expiry ([`AssumeRemoved`]). One thing a dry
//! run cannot foresee: the OVERWRITE snapshots a partition expiry would commit, which move the
//! snapshot retention window by as many snapshots.

use std::time::Instant;

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::expiry::changelogs::{
    expire_changelogs, ChangelogExpireConfig, ChangelogExpireReport,
};
use crate::clean::expiry::consumers::{expire_consumers, ConsumerReport};
use crate::clean::expiry::retention::{AssumeRemoved, Retention, RetentionOverrides};
use crate::clean::expiry::snapshots::{expire_snapshots, ExpireConfig, ExpireReport};
use crate::clean::expiry::tags::{expire_tags_by_options, TagReport};
use crate::clean::partitions::{expire_partitions, PartitionExpireConfig, PartitionReport};
use crate::clean::shared::clock::now_millis;
use crate::error::Result;
use crate::table::Table;

/// Settings for `maintain`.
#[derive(Debug, Clone, Default)]
pub struct MaintainConfig {
    /// Compute and report, change nothing.
    pub dry_run: bool,
}

/// The combined report; a step that did not run is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MaintainReport {
    /// Tag expiry (always runs; only tags with a retention time expire).
    pub tags: Option<TagReport>,
    /// Partition expiry (when `partition.expiration-time` is set on a partitioned table).
    pub partitions: Option<PartitionReport>,
    /// Consumer expiry (when `consumer.expiration-time` is set).
    pub consumers: Option<ConsumerReport>,
    /// Snapshot expiry.
    pub snapshots: Option<ExpireReport>,
    /// Changelog expiry (when the changelog lifecycle is decoupled).
    pub changelogs: Option<ChangelogExpireReport>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// Run the table's own maintenance.
pub async fn maintain(
    table: &Table,
    cfg: &MaintainConfig,
    ctl: &RunControl,
) -> Result<MaintainReport> {
    let started = Instant::now();
    let mut report = MaintainReport {
        tags: Some(expire_tags_by_options(table, cfg.dry_run, ctl).await?),
        ..Default::default()
    };
    if table.options().get("partition.expiration-time").is_some()
        && !table.schema().partition_keys.is_empty()
    {
        let cfg = PartitionExpireConfig {
            dry_run: cfg.dry_run,
            ..Default::default()
        };
        report.partitions = Some(expire_partitions(table, &cfg, ctl).await?);
    }
    if table.options().get("consumer.expiration-time").is_some() {
        report.consumers = Some(expire_consumers(table, None, cfg.dry_run, ctl).await?);
    }
    // What tag and consumer expiry removed (in a dry run: would remove) neither bounds nor
    // protects anything below, so a dry run plans what a real run does.
    let assume_removed = AssumeRemoved {
        tags: report
            .tags
            .as_ref()
            .map(|t| t.tags_deleted.clone())
            .unwrap_or_default(),
        consumers: report
            .consumers
            .as_ref()
            .map(|c| c.expired.clone())
            .unwrap_or_default(),
    };
    let expire = ExpireConfig {
        dry_run: cfg.dry_run,
        assume_removed: assume_removed.clone(),
        ..Default::default()
    };
    report.snapshots = Some(expire_snapshots(table, &expire, ctl).await?);
    let retention = Retention::resolve_changelog(
        table.options(),
        &RetentionOverrides::default(),
        now_millis(),
    )?;
    if retention.changelog_decoupled {
        let changelogs = ChangelogExpireConfig {
            dry_run: cfg.dry_run,
            assume_removed,
            ..Default::default()
        };
        report.changelogs = Some(expire_changelogs(table, &changelogs, ctl).await?);
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}
