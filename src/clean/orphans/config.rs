//! The settings of an orphan cleanup run and the two rules read from them before anything is
//! deleted: the cut-off ([`resolve_cutoff`]) and the caller's veto ([`vetoed`]).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::storage::Location;

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
    /// in them is deleted (they are reported in [`OrphanReport::skipped`](super::OrphanReport::skipped)).
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

/// The cut-off: `older_than_ms` or now − 1 day, validated against `now`.
pub(crate) fn resolve_cutoff(cfg: &OrphanConfig, now: i64) -> Result<i64> {
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

/// Asks the caller's veto about `loc`; a panicking veto aborts the run (nothing deleted yet).
pub(crate) fn vetoed(cfg: &OrphanConfig, loc: &Location) -> Result<bool> {
    let Some(veto) = &cfg.veto else {
        return Ok(false);
    };
    catch_unwind(AssertUnwindSafe(|| veto(loc))).map_err(|_| {
        Error::Internal(format!(
            "the veto callback panicked on {loc}; nothing deleted"
        ))
    })
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
