//! Consumer expiry (spec §5.5): consumer files whose modification time is older than
//! `now − expiration` are deleted, so a dead reader stops blocking snapshot expiry.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::clock::{millis, now_millis};
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::error::{Error, Result};
use crate::table::Table;

/// What a consumer expiry did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConsumerReport {
    /// Ids of the consumers expired (or, in a dry run, expirable).
    pub expired: Vec<String>,
    /// Files deleted.
    pub deletion: DeletionReport,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// Expire consumers idle for longer than `expiration` (default: the table's
/// `consumer.expiration-time`; neither set is an error).
pub async fn expire_consumers(
    table: &Table,
    expiration: Option<Duration>,
    dry_run: bool,
    ctl: &RunControl,
) -> Result<ConsumerReport> {
    let started = Instant::now();
    let expiration = match expiration {
        Some(d) => d,
        None => table
            .options()
            .get_duration("consumer.expiration-time")?
            .ok_or_else(|| {
                Error::InvalidArgument(
                    "no expiration time given and the table has no consumer.expiration-time".into(),
                )
            })?,
    };
    let cutoff = now_millis().saturating_sub(millis(expiration));
    let mut report = ConsumerReport::default();
    let mut planned = Vec::new();
    for (id, (_, status)) in table.consumers().await? {
        if status.last_modified_ms < cutoff {
            report.expired.push(id);
            planned.push(Planned {
                location: status.location,
                class: FileClass::ConsumerMeta,
                bytes: Some(status.size),
            });
        }
    }
    let mut deleter = Deleter::for_table(table, ctl, dry_run);
    deleter.check_plan(&planned).await?;
    deleter.delete("consumers", planned).await?;
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The smallest `nextSnapshot` of the table's consumers, leaving out `ignored` ids: versions
/// from there on are still to be read by a consumer.
pub(crate) async fn consumer_bound(table: &Table, ignored: &[String]) -> Result<Option<i64>> {
    Ok(table
        .consumers()
        .await?
        .iter()
        .filter(|(id, _)| !ignored.contains(id))
        .map(|(_, (c, _))| c.next_snapshot)
        .min())
}
