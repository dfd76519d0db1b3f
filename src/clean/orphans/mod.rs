//! Orphan file removal (spec §5.6): delete old files in the table's own directories that no
//! snapshot, tag or long-lived changelog of any branch references — never a file in flight.
//!
//! The run, in order:
//! 1. **Cut-off.** Only files modified before `older_than_ms` are candidates (default: now − 1
//!    day). A cut-off in the future is refused; so is one within the last hour unless the
//!    caller promises that no writer is running (pitfall P6).
//! 2. **Candidates first** (P1): `manifest/`, `index/`, `statistics/`, every bucket directory of
//!    the data root and, when declared owned, of each `data-file.external-paths` root (through `#partitionKeys` levels
//!    of `k=v` directories; a last-level partition directory without bucket directories is a
//!    candidate directory itself), and temp files in `snapshot/` and `changelog/` of every
//!    branch. Never `schema/`, `tag/`, `consumer/`, `service/`, `metadata/`, `branch/*`
//!    metadata other than temp files in `snapshot/` and `changelog/`, `snapshot-N`,
//!    `changelog-N`, `EARLIEST`, `LATEST`, `*.managed.blob`, files at the table root, or anything
//!    outside these directories. See [`candidates`](self) for details.
//! 3. **References** of every snapshot, tag and long-lived changelog of EVERY branch (P2),
//!    kept only where they are candidates. The table is listed again afterwards until no new
//!    version appears. Unreadable metadata that a version still present needs — a missing
//!    manifest list, manifest or index manifest included (P3) — aborts the run before anything
//!    is deleted; the error names the file. So does an empty reference set while snapshots
//!    exist.
//! 4. **Decide.** A candidate is kept when its resolved location is referenced; also when only
//!    its *name* is referenced, at another location: that means our path resolution disagrees
//!    with the writer's (e.g. partition options changed since, P18), and such candidates are
//!    kept and listed in [`OrphanReport::kept_name_referenced_elsewhere`] rather than risked.
//!    The caller's veto runs last.
//! 5. **Delete** through the guarded, batched [`Deleter`]: data, changelog and index files in
//!    data directories, then `index/`, `statistics/`, manifests, index manifests, manifest
//!    lists, then temp files. Then bucket and partition directories left empty are removed
//!    (never a data root, so never the table root). A dry run deletes nothing and reports the
//!    same set.
//!
//! Branch directories without a readable schema (pypaimon's `create_branch` can leave one) do
//! not abort the run, unlike Java: they are reported in
//! [`OrphanReport::branches_without_schema`], and their snapshots, tags and changelogs still
//! count as references, resolved with the main branch's schema and options. A branch whose
//! schema exists but cannot be parsed aborts the run.
//!
//! External data roots are neither listed nor cleaned unless the caller states that they belong
//! to this table alone ([`OrphanConfig::external_roots_owned`]); they are reported in
//! [`OrphanReport::skipped`]. Paimon writes external files under `<root>/<partition>/bucket-N`
//! without the table name, so two tables sharing one external root see each other's live files
//! as orphans. With the opt-in, the roots are added as delete roots for this run only.

mod candidates;
mod hits;
mod interned;
mod prune;
mod used;

use std::collections::BTreeSet;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::expiry::retention::now_millis;
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::kinds::KindRules;
use crate::error::{Error, Result};
use crate::storage::Location;
use crate::table::{branch_root, list_branches, Table, MAIN_BRANCH};
use candidates::Layout;
use interned::CandidateTable;

/// One day in milliseconds: the default age of the youngest file that may be deleted.
pub const DEFAULT_OLDER_THAN_MS: i64 = 24 * 60 * 60 * 1000;

/// Without [`OrphanConfig::no_writers_running`], a cut-off must be at least this old (1 hour).
pub const MIN_WINDOW_WITH_WRITERS_MS: i64 = 60 * 60 * 1000;

/// A caller's veto on deleting one file: return `true` to KEEP the file (like paimon-cpp's
/// file-retain condition). Called once per file that would otherwise be deleted, before
/// anything is deleted, possibly from a library thread.
pub type VetoFn = Arc<dyn Fn(&Location) -> bool + Send + Sync>;

/// Settings of one orphan cleanup run.
#[derive(Clone, Default)]
pub struct OrphanConfig {
    /// Absolute cut-off in epoch milliseconds: only files modified before it may be deleted.
    /// Default: now − 1 day. A cut-off in the future is refused; one within the last hour is
    /// refused unless `no_writers_running` is set.
    pub older_than_ms: Option<i64>,
    /// Compute and report everything, change nothing.
    pub dry_run: bool,
    /// The caller guarantees that no writer (no job, no engine, no other process) is writing
    /// or committing to this table during the run, so the cut-off may be as recent as "now"
    /// (Lance's `delete_unverified`).
    ///
    /// DANGER: a writer writes its data files and manifests *before* it commits the snapshot
    /// that references them. Any file written but not yet committed is, to this cleanup,
    /// indistinguishable from an orphan; with a recent cut-off it is deleted, and the commit
    /// that follows publishes a snapshot whose files are gone — lost data. Only set this when
    /// every writer of the table is stopped.
    pub no_writers_running: bool,
    /// Directory listings in flight at once (default: [`RunControl::io_concurrency`]).
    pub list_concurrency: Option<usize>,
    /// Deletions in flight at once (default: [`RunControl::io_concurrency`]). Metadata reads
    /// always use [`RunControl::io_concurrency`].
    pub delete_concurrency: Option<usize>,
    /// Optional veto: return `true` to keep a file that would otherwise be deleted.
    pub veto: Option<VetoFn>,
    /// The caller states that the table's external data roots (`data-file.external-paths`)
    /// belong to this table alone. Default false: external roots are not listed and nothing
    /// in them is deleted (they are reported in [`OrphanReport::skipped`]).
    ///
    /// DANGER: Paimon writes external data files at `<root>/<partition>/bucket-N/` without the
    /// table's name, so two tables configured with one root share those directories, and each
    /// table's live files are orphans to the other. Set this only when no other table writes
    /// under any of this table's external roots.
    pub external_roots_owned: bool,
}

impl fmt::Debug for OrphanConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrphanConfig")
            .field("older_than_ms", &self.older_than_ms)
            .field("dry_run", &self.dry_run)
            .field("no_writers_running", &self.no_writers_running)
            .field("list_concurrency", &self.list_concurrency)
            .field("delete_concurrency", &self.delete_concurrency)
            .field("veto", &self.veto.as_ref().map(|_| "<callback>"))
            .field("external_roots_owned", &self.external_roots_owned)
            .finish()
    }
}

/// What an orphan cleanup run found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OrphanReport {
    /// The cut-off used (epoch ms): only files modified before it were candidates.
    pub older_than_ms: i64,
    /// Files seen in the candidate directories that would be candidates if they were old
    /// enough (so not `snapshot-N`, `changelog-N` or hint files).
    pub files_listed: u64,
    /// Candidates examined: files in candidate directories older than the cut-off (temp files
    /// only in `snapshot/` and `changelog/`; never `*.managed.blob`).
    pub candidates: u64,
    /// Candidates kept because a version references them.
    pub referenced: u64,
    /// Candidates kept because the caller's veto said so.
    pub vetoed: u64,
    /// Candidates kept because their name is referenced at another location (path resolution
    /// disagreement; see the module documentation), relative to the table root where possible.
    pub kept_name_referenced_elsewhere: Vec<String>,
    /// Deleted (in a dry run: deletable) files and bytes per kind, failed deletions,
    /// directories removed, and every path.
    pub deletion: DeletionReport,
    /// Branch directories without a schema; their snapshots and tags were still read.
    pub branches_without_schema: Vec<String>,
    /// Snapshots, tags and long-lived changelogs whose references were read (all branches).
    pub versions_read: u64,
    /// Manifests read (each at most once).
    pub manifests_read: u64,
    /// External data roots that were listed (only with
    /// [`OrphanConfig::external_roots_owned`]).
    pub external_roots: Vec<String>,
    /// Roots or directories not listed, with the reason; nothing in them was deleted.
    pub skipped: Vec<String>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// Removes orphan files of the table `table` belongs to (every branch; `table` may be opened
/// on any branch). See the module documentation for the rules.
pub async fn remove_orphan_files(
    table: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
) -> Result<OrphanReport> {
    let started = Instant::now();
    let cutoff = resolve_cutoff(cfg, now_millis())?;
    let main = if table.branch_name() == MAIN_BRANCH {
        table.clone()
    } else {
        table.branch(MAIN_BRANCH).await?
    };
    let storage = main.storage().clone();
    let root = storage.root().clone();
    let mut report = OrphanReport {
        older_than_ms: cutoff,
        ..Default::default()
    };

    // Roots: the data root and the external data roots, which deletions are allowed under.
    let data_root = main.paths().data_root().clone();
    let mut ext_roots = external_roots(&main, &mut report.skipped);
    if !cfg.external_roots_owned {
        // Shared directories: another table's live files would look like orphans here.
        for r in ext_roots.drain(..) {
            tracing::info!(root = %r, "external data root not cleaned (not declared owned)");
            report.skipped.push(format!(
                "{r}: external data root not cleaned: Paimon writes external files without the \
                 table name, so tables configured with the same root share its directories; \
                 declare the roots owned by this table alone (external_roots_owned) to clean them"
            ));
        }
    }
    let delete_storage = storage.with_delete_roots(&ext_roots);
    let mut data_roots = Vec::new();
    let data_prefix = match data_root.relative_to(&root) {
        Some(prefix) => {
            data_roots.push(data_root.clone());
            prefix.to_string()
        }
        None => {
            report.skipped.push(format!(
                "{data_root}: data-file.path-directory leads outside the table root"
            ));
            String::new()
        }
    };
    for r in &ext_roots {
        if delete_storage.check_deletable(&r.join("x")).is_err() {
            report
                .skipped
                .push(format!("{r}: deletions are not allowed there"));
            continue;
        }
        report.external_roots.push(r.to_string());
        data_roots.push(if data_prefix.is_empty() {
            r.clone()
        } else {
            r.join(&data_prefix)
        });
    }
    ctl.cancel.check()?;

    // Phase 1: candidates, before any reference is read.
    let branch_roots: Vec<Location> = match list_branches(&storage).await {
        Ok(names) => names.iter().map(|b| branch_root(&root, b)).collect(),
        Err(e) => {
            tracing::warn!(error = %e, "cannot list branches; only main's temp files are candidates");
            report.skipped.push(format!("{}: {e}", root.join("branch")));
            vec![root.clone()]
        }
    };
    let layout = Layout {
        root: root.clone(),
        branch_roots,
        data_roots,
        partition_levels: main.schema().partition_keys.len(),
    };
    let list_conc = cfg.list_concurrency.unwrap_or(ctl.io_concurrency).max(1);
    let listed =
        candidates::list_candidates(&storage, &layout, cutoff, list_conc, &ctl.cancel).await;
    report.files_listed = listed.files_listed;
    report.candidates = listed.table.len() as u64;
    report.skipped.extend(listed.errors);
    ctl.progress("list candidates", report.candidates, report.candidates, 0);
    tracing::info!(
        files = report.files_listed,
        candidates = report.candidates,
        cutoff,
        "orphan candidates listed"
    );
    ctl.cancel.check()?;
    let table = Arc::new(listed.table);

    // Phase 2: references of every version of every branch, filtered to the candidates.
    let mut deletable: Vec<u32> = Vec::new();
    if !table.is_empty() {
        let collector = used::Collector::new(&main, Arc::clone(&table), ctl.io_concurrency);
        let used = collector.collect(ctl).await?;
        report.versions_read = used.versions_read;
        report.manifests_read = used.manifests_read;
        report.branches_without_schema = used.branches_without_schema.clone();
        if used.unresolved > 0 {
            tracing::warn!(
                entries = used.unresolved,
                "references whose location could not be computed are protected by name"
            );
        }
        ctl.cancel.check()?;

        // Phase 3: decide.
        let mut kept_elsewhere: Vec<Location> = Vec::new();
        for id in 0..table.len() {
            let Ok(id) = u32::try_from(id) else { break };
            let i = id as usize;
            if used.location.get(i).copied().unwrap_or(true) {
                report.referenced += 1;
                continue;
            }
            let Some(loc) = table.location(id) else {
                continue;
            };
            if used.name.get(i).copied().unwrap_or(true) {
                tracing::warn!(path = %loc, "kept: its name is referenced at another location");
                kept_elsewhere.push(loc);
            } else if vetoed(cfg, &loc)? {
                report.vetoed += 1;
            } else {
                deletable.push(id);
            }
        }
        kept_elsewhere.sort();
        report.kept_name_referenced_elsewhere = kept_elsewhere
            .iter()
            .map(|l| main.paths().display(l))
            .collect();
    }
    ctl.cancel.check()?;

    // Phase 4: delete, then prune directories left empty.
    let mut dctl = ctl.clone();
    dctl.io_concurrency = cfg.delete_concurrency.unwrap_or(ctl.io_concurrency).max(1);
    let mut deleter = Deleter::new(&delete_storage, KindRules::of(&main), &dctl, cfg.dry_run);
    let mut prune: Vec<(Location, Location)> = listed.empty_dirs;
    let dirs: BTreeSet<u32> = deletable.iter().map(|id| table.dir_of(*id)).collect();
    prune.extend(dirs.into_iter().filter_map(|d| {
        let dir = table.dir(d)?;
        Some((dir.location.clone(), dir.data_root.clone()?))
    }));
    let groups = delete_order(&table, deletable);
    // Every check (root, kind, no symlinked directory) for every group before the first
    // deletion.
    deleter
        .check_plan(groups.iter().flat_map(|(_, g)| g.iter()))
        .await?;
    for (phase, group) in groups {
        deleter.delete(phase, group).await?;
    }
    if !cfg.dry_run {
        prune::remove_empty_dirs(&mut deleter, prune).await;
    }
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        deleted = report.deletion.total_files(),
        bytes = report.deletion.total_bytes(),
        failed = report.deletion.failed.len(),
        dirs = report.deletion.dirs_removed,
        dry_run = cfg.dry_run,
        "orphan cleanup done"
    );
    Ok(report)
}

/// The cut-off: `older_than_ms` or now − 1 day, validated against `now`.
fn resolve_cutoff(cfg: &OrphanConfig, now: i64) -> Result<i64> {
    let cutoff = cfg
        .older_than_ms
        .unwrap_or(now.saturating_sub(DEFAULT_OLDER_THAN_MS));
    if cutoff > now {
        return Err(Error::InvalidArgument(format!(
            "older-than cut-off {cutoff} is in the future (now is {now}); refusing to remove orphan files"
        )));
    }
    if !cfg.no_writers_running && cutoff > now.saturating_sub(MIN_WINDOW_WITH_WRITERS_MS) {
        return Err(Error::InvalidArgument(format!(
            "older-than cut-off {cutoff} is within the last hour (now is {now}): files of writes not \
             yet committed would be deleted; use an older cut-off, or no_writers_running when every \
             writer is stopped"
        )));
    }
    Ok(cutoff)
}

/// The table's external data roots (`data-file.external-paths`); unusable ones are skipped with
/// a reason.
fn external_roots(table: &Table, skipped: &mut Vec<String>) -> Vec<Location> {
    let mut out = Vec::new();
    for raw in table.options().data_file_external_paths() {
        match Location::parse(&raw) {
            Ok(l) if l.is_store_root() => skipped.push(format!(
                "{raw}: an external root cannot be a whole filesystem or bucket"
            )),
            Ok(l) if *table.root() == l || table.root().is_under(&l) => skipped.push(format!(
                "{raw}: an external root cannot contain the table root"
            )),
            Ok(l) => {
                if !out.contains(&l) {
                    out.push(l);
                }
            }
            Err(e) => skipped.push(format!("{raw}: {e}")),
        }
    }
    out
}

/// Asks the caller's veto about `loc`; a panicking veto aborts the run (nothing deleted yet).
fn vetoed(cfg: &OrphanConfig, loc: &Location) -> Result<bool> {
    let Some(veto) = &cfg.veto else {
        return Ok(false);
    };
    catch_unwind(AssertUnwindSafe(|| veto(loc))).map_err(|_| {
        Error::Internal(format!(
            "the veto callback panicked on {loc}; nothing deleted"
        ))
    })
}

/// Groups deletable candidates into phases, each sorted by location: data directories first,
/// manifest lists and temp files last.
fn delete_order(table: &CandidateTable, ids: Vec<u32>) -> Vec<(&'static str, Vec<Planned>)> {
    let mut groups: Vec<(&'static str, Vec<Planned>)> = vec![
        ("orphan data files", Vec::new()),
        ("orphan index files", Vec::new()),
        ("orphan statistics", Vec::new()),
        ("orphan manifests", Vec::new()),
        ("orphan manifest lists", Vec::new()),
        ("orphan temp files", Vec::new()),
    ];
    for id in ids {
        let Some(location) = table.location(id) else {
            continue;
        };
        let in_data_dir = table
            .dir(table.dir_of(id))
            .is_some_and(|d| d.data_root.is_some());
        let class = table.class(id);
        let slot = match (in_data_dir, class) {
            (true, _) => 0,
            (false, FileClass::Index) => 1,
            (false, FileClass::Statistics) => 2,
            (false, FileClass::Manifest) => 3,
            (false, FileClass::ManifestList | FileClass::IndexManifest) => 4,
            (false, _) => 5,
        };
        groups[slot].1.push(Planned {
            location,
            class,
            bytes: Some(table.size(id)),
        });
    }
    for (_, g) in &mut groups {
        g.sort_by(|a, b| a.location.cmp(&b.location));
    }
    groups.retain(|(_, g)| !g.is_empty());
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn cfg(older_than_ms: Option<i64>, no_writers_running: bool) -> OrphanConfig {
        OrphanConfig {
            older_than_ms,
            no_writers_running,
            ..Default::default()
        }
    }

    #[test]
    fn cutoff_rules() {
        assert_eq!(
            resolve_cutoff(&cfg(None, false), NOW).unwrap(),
            NOW - DEFAULT_OLDER_THAN_MS
        );
        let hour = MIN_WINDOW_WITH_WRITERS_MS;
        assert_eq!(
            resolve_cutoff(&cfg(Some(NOW - hour), false), NOW).unwrap(),
            NOW - hour
        );
        for bad in [NOW - hour + 1, NOW, NOW + 1] {
            assert!(matches!(
                resolve_cutoff(&cfg(Some(bad), false), NOW),
                Err(Error::InvalidArgument(_))
            ));
        }
        assert_eq!(resolve_cutoff(&cfg(Some(NOW), true), NOW).unwrap(), NOW);
        assert!(matches!(
            resolve_cutoff(&cfg(Some(NOW + 1), true), NOW),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn veto_panics_become_errors() {
        let loc = Location::parse("/t/manifest/m").unwrap();
        let mut c = OrphanConfig::default();
        assert!(!vetoed(&c, &loc).unwrap());
        c.veto = Some(Arc::new(|l: &Location| l.name() == "m"));
        assert!(vetoed(&c, &loc).unwrap());
        c.veto = Some(Arc::new(|_: &Location| panic!("boom")));
        assert!(matches!(vetoed(&c, &loc), Err(Error::Internal(_))));
        assert!(format!("{c:?}").contains("<callback>"));
    }
}
