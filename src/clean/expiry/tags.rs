//! Tag deletion and tag expiry (spec §5.3). Deleting a tag removes its tag file first (as
//! Java does: a crash then leaves only unreferenced files, which orphan cleanup finds), then
//! every file only that tag kept, unless a snapshot, another tag, another branch or a
//! changelog still needs it.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::expiry::plan::{Candidate, Candidates, DeletionPlan, MetadataScope};
use crate::clean::expiry::protected::protectors::{other_protectors_except, snapshot_line};
use crate::clean::expiry::protected::ReferenceReader;
use crate::clean::expiry::removed::added_by_lists;
use crate::clean::partitions::budget::Charges;
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::clock::now_millis;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::error::{Error, Result};
use crate::spec::snapshot::{Snapshot, Tag};
use crate::storage::Location;
use crate::table::{DataFileLocator, Table};

/// The directory under `tag/` where Java's success-file tag callback marks tags.
const TAG_SUCCESS_DIR: &str = "tag-success-file";

/// What a tag deletion or expiry did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TagReport {
    /// Tags deleted (or, in a dry run, deletable).
    pub tags_deleted: Vec<String>,
    /// Requested tags that did not exist (not an error, as in Java; nothing was deleted for
    /// them).
    pub tags_not_found: Vec<String>,
    /// Files deleted per kind, failures and paths.
    pub deletion: DeletionReport,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// Delete one tag and the files only it kept.
pub async fn delete_tag(
    table: &Table,
    name: &str,
    dry_run: bool,
    ctl: &RunControl,
) -> Result<TagReport> {
    delete_tags(table, &[name.to_string()], dry_run, ctl).await
}

/// Check a tag name given by a caller: [`Error::InvalidArgument`] for an empty or blank name,
/// or one that could act as a path (`/`, `\`, `..`, a NUL or other control character). Tag
/// files are `tag/tag-<name>`; Java refuses blank names; the rest is stricter than Java (a
/// name Java accepts with such characters cannot be deleted through this library).
pub fn check_tag_name(name: &str) -> Result<()> {
    let why = if name.trim().is_empty() {
        Some("it is empty or blank")
    } else if name.contains('/') || name.contains('\\') {
        Some("it contains a path separator")
    } else if name.contains("..") {
        Some("it contains `..`")
    } else if name.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::InvalidArgument(format!(
            "`{}` is not a tag name: {why}",
            name.escape_debug()
        ))),
        None => Ok(()),
    }
}

/// Delete several tags of `table`'s branch in one pass (each manifest read once). Every name is
/// checked first ([`check_tag_name`]): one bad name is [`Error::InvalidArgument`] and nothing is
/// deleted. A tag that does not exist is not an error (as in Java): it is logged as a warning
/// and listed in [`TagReport::tags_not_found`].
pub async fn delete_tags(
    table: &Table,
    names: &[String],
    dry_run: bool,
    ctl: &RunControl,
) -> Result<TagReport> {
    for n in names {
        check_tag_name(n)?;
    }
    delete_listed_tags(table, names, dry_run, ctl).await
}

/// [`delete_tags`] for names that need no check (read from the tag directory).
async fn delete_listed_tags(
    table: &Table,
    names: &[String],
    dry_run: bool,
    ctl: &RunControl,
) -> Result<TagReport> {
    let started = Instant::now();
    let mut report = TagReport::default();
    let doomed = existing_tags(table, names, &mut report).await?;
    let mut deleter = Deleter::for_table(table, ctl, dry_run);
    let plan = plan_for_tags(table, &doomed, &deleter, ctl).await?;
    ctl.cancel.check()?;

    // Tag files first, then what they alone kept.
    let tag_dir = table.branch_root().join("tag");
    let tag_files: Vec<Planned> = doomed
        .keys()
        .map(|n| Planned {
            location: tag_dir.join(&format!("tag-{n}")),
            class: FileClass::TagMeta,
            bytes: None,
        })
        .collect();
    // The tag files go first: they and the plan are checked before anything goes.
    plan.check(&deleter, &tag_files).await?;
    deleter.delete("tag files", tag_files).await?;
    let success_files = success_files(table, &tag_dir, &doomed).await?;
    deleter.delete("tag success files", success_files).await?;
    let clean_dirs = table
        .options()
        .get_bool("snapshot.clean-empty-directories")?
        .unwrap_or(false);
    plan.execute(table, &mut deleter, clean_dirs).await?;
    report.tags_deleted = doomed.into_keys().collect();
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The tags of `names` that exist, by name; a missing one is logged and listed in `report`.
async fn existing_tags(
    table: &Table,
    names: &[String],
    report: &mut TagReport,
) -> Result<BTreeMap<String, Tag>> {
    let all_tags = table.tags().await?;
    let mut doomed = BTreeMap::new();
    for n in names {
        match all_tags.get(n) {
            Some(t) => {
                doomed.insert(n.clone(), t.clone());
            }
            None => {
                tracing::warn!(tag = %n, "tag not found; nothing to delete");
                report.tags_not_found.push(n.clone());
            }
        }
    }
    Ok(doomed)
}

/// The deletion plan for the files that only the `doomed` tags keep: empty when every tagged
/// snapshot is still on the branch, else the candidates of [`freed_by_tags`] checked against
/// the branch's snapshots and every other protector (tags, branches, changelogs).
async fn plan_for_tags(
    table: &Table,
    doomed: &BTreeMap<String, Tag>,
    deleter: &Deleter<'_>,
    ctl: &RunControl,
) -> Result<DeletionPlan> {
    let (removed, mut candidates, changelog_lists) = freed_by_tags(table, doomed, deleter).await?;
    let mut rr = ReferenceReader::new(table).with_memory(deleter.memory());
    if !changelog_lists.is_empty() {
        candidates.append(
            added_by_lists(&rr, table, &changelog_lists, FileClass::ChangelogData).await?,
        )?;
    }
    ctl.cancel.check()?;
    if removed.is_empty() {
        return Ok(DeletionPlan::default());
    }
    let mut protectors = snapshot_line(
        &format!("branch {}", table.branch_name()),
        &table.all_snapshots().await?,
    );
    let doomed_names: Vec<String> = doomed.keys().cloned().collect();
    protectors.extend(other_protectors_except(table, &doomed_names).await?);
    DeletionPlan::build(
        &mut rr,
        table,
        candidates,
        &removed,
        MetadataScope::All,
        &protectors,
    )
    .await
}

/// The versions whose files the `doomed` tags' deletion may free (tags whose snapshot is gone
/// from the branch), their live data files as candidates, and their snapshots' changelog
/// manifest lists.
async fn freed_by_tags(
    table: &Table,
    doomed: &BTreeMap<String, Tag>,
    deleter: &Deleter<'_>,
) -> Result<(Vec<Snapshot>, Candidates, Vec<String>)> {
    let storage = table.storage();
    let snapshots = table.snapshots();
    let mut removed = Vec::new();
    let mut candidates = Candidates::with_budget(deleter.memory());
    let mut changelog_lists: Vec<String> = Vec::new();
    for t in doomed.values() {
        if storage.exists(&snapshots.location(t.snapshot.id)).await? {
            continue;
        }
        // The tag's live entries are held whole while its candidates are built: charged to the
        // run's bound (a floor from the manifest lists before the merge, then the estimate of
        // what was merged), released once they are dropped.
        let mut held = Charges::new(deleter.memory());
        held.charge_merge_floor(table, &t.snapshot).await?;
        let live = table.live_data_files(&t.snapshot).await?;
        held.release_all();
        held.charge_live(&live)?;
        let mut locate = DataFileLocator::new(table.paths());
        for e in &live {
            let (main, extras) = locate.data_file_with_extras(&e.partition, e.bucket, &e.file)?;
            let c = Candidate::new(
                FileClass::Data,
                e.file.file_size.max(0) as u64,
                extras,
                main.name(),
            );
            candidates.push(main, c)?;
        }
        // Its snapshot's changelog files, list and manifests too: the snapshot's expiry kept
        // them for the tag (Java leaves them behind for good). A long-lived changelog of the
        // same snapshot, or another tag, still protects them.
        if let Some(list) = &t.snapshot.changelog_manifest_list {
            changelog_lists.push(list.clone());
        }
        removed.push(t.snapshot.clone());
    }
    Ok((removed, candidates, changelog_lists))
}

/// The success files of the `doomed` tags that exist: Java's `SuccessFileTagCallback` marks a
/// tag with `tag/tag-success-file/<name>_SUCCESS` and deletes it with the tag.
async fn success_files(
    table: &Table,
    tag_dir: &Location,
    doomed: &BTreeMap<String, Tag>,
) -> Result<Vec<Planned>> {
    let storage = table.storage();
    let success_dir = tag_dir.join(TAG_SUCCESS_DIR);
    let mut success_files = Vec::new();
    for n in doomed.keys() {
        for name in [format!("{n}_SUCCESS"), n.clone()] {
            let location = success_dir.join(&name);
            if storage.exists(&location).await? {
                success_files.push(Planned {
                    location,
                    class: FileClass::TagMeta,
                    bytes: None,
                });
            }
        }
    }
    Ok(success_files)
}

/// Expire tags as Java's `expire_tags` procedure does: those whose `tagCreateTime +
/// tagTimeRetained` has passed — time expiry is enabled for the call whatever
/// `tag.time-expire-enabled` says —, and with `older_than_ms`, those created before it (the tag
/// file's modification time when the tag has no creation time). [`crate::clean::maintain`]
/// instead follows `tag.time-expire-enabled`, as Java's expiry at commit does.
pub async fn expire_tags(
    table: &Table,
    older_than_ms: Option<i64>,
    dry_run: bool,
    ctl: &RunControl,
) -> Result<TagReport> {
    expire_tags_with(table, true, older_than_ms, dry_run, ctl).await
}

/// Tag expiry as the table's options ask for it (what `maintain` runs): by retained time when
/// `tag.time-expire-enabled` (default true), else nothing.
pub(crate) async fn expire_tags_by_options(
    table: &Table,
    dry_run: bool,
    ctl: &RunControl,
) -> Result<TagReport> {
    let by_retention = table
        .options()
        .get_bool("tag.time-expire-enabled")?
        .unwrap_or(true);
    expire_tags_with(table, by_retention, None, dry_run, ctl).await
}

/// The local wall-clock time at the instant `epoch_ms`, as epoch millis of that naive time
/// (the form of a tag's creation time). The zone's offset at that instant, not one measured by
/// two clock reads, which can be a millisecond off and move a cut-off placed 1 ms after a
/// tag's creation to the other side of it.
fn local_wall_millis(epoch_ms: i64) -> i64 {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(epoch_ms) {
        chrono::LocalResult::Single(t) | chrono::LocalResult::Ambiguous(t, _) => {
            t.naive_local().and_utc().timestamp_millis()
        }
        chrono::LocalResult::None => epoch_ms,
    }
}

async fn expire_tags_with(
    table: &Table,
    by_retention: bool,
    older_than_ms: Option<i64>,
    dry_run: bool,
    ctl: &RunControl,
) -> Result<TagReport> {
    let now_local = local_wall_millis(now_millis());
    // The cut-off as the local wall-clock time it was at that instant: Java compares the tag's
    // `LocalDateTime` with the cut-off turned into one the same way.
    let cut_local = older_than_ms.map(local_wall_millis);
    let tag_dir = table.branch_root().join("tag");
    let mut names = Vec::new();
    for (name, tag) in table.tags().await? {
        let retention_passed = by_retention
            && matches!((tag.create_time_millis, tag.time_retained_millis),
                (Some(c), Some(r)) if now_local > c.saturating_add(r));
        let older = match (older_than_ms, cut_local) {
            (Some(cut), Some(cut_local)) => match tag.create_time_millis {
                // Creation times are the creating JVM's local wall clock.
                Some(c) => c < cut_local,
                None => table
                    .storage()
                    .head(&tag_dir.join(&format!("tag-{name}")))
                    .await?
                    .is_some_and(|st| st.last_modified_ms < cut),
            },
            _ => false,
        };
        if retention_passed || older {
            names.push(name);
        }
    }
    delete_listed_tags(table, &names, dry_run, ctl).await
}

#[cfg(test)]
mod tests {
    use super::local_wall_millis;
    use chrono::{Offset, TimeZone};

    /// A cut-off 1 ms after a tag's creation is after it, and one at the creation is not,
    /// at every instant: the local time of the cut-off is the zone's offset at that instant
    /// added exactly, with no clock read in between.
    #[test]
    fn a_cut_off_one_ms_after_a_creation_time_is_after_it() {
        let now = crate::clean::shared::clock::now_millis();
        for k in 0..2_000i64 {
            let created_utc = now - k * 3_600_007;
            let created_local = local_wall_millis(created_utc);
            let offset = chrono::Local
                .timestamp_millis_opt(created_utc)
                .single()
                .map(|t| i64::from(t.offset().fix().local_minus_utc()) * 1000);
            if let Some(o) = offset {
                assert_eq!(created_local, created_utc + o);
            }
            assert!(created_local < local_wall_millis(created_utc + 1));
            assert!(created_local >= local_wall_millis(created_utc));
        }
    }
}
