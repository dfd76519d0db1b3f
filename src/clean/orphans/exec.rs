//! Executing a unit, in the planning process or anywhere else: list units ([`listing`]), read
//! units ([`refs`]) and delete units (here: the guarded [`Deleter`], every path checked again
//! before the first deletion of the unit).

use std::sync::Arc;

use crate::clean::control::RunControl;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::kinds::KindRules;
use crate::error::Result;
use crate::storage::Location;
use crate::table::Table;

use super::decide::{class_of, PHASES};
use super::keyset::SharedKeyIndex;
use super::partial::{Deleted, Failed, Partial};
use super::work_unit::{DeleteItem, Unit, Work};
use super::{listing, refs};

/// Executes `unit` on the table whose main branch is `main`, with at most `concurrency`
/// requests in flight, and returns its partial result.
pub(crate) async fn execute(
    main: &Table,
    unit: Unit,
    concurrency: usize,
    ctl: &RunControl,
) -> Result<Partial> {
    execute_against(main, unit, concurrency, ctl, None).await
}

/// [`execute`]; a list unit only counts the listed files whose location key is in `referenced`
/// (indexed), without reading their age, see [`listing::list`].
pub(crate) async fn execute_against(
    main: &Table,
    unit: Unit,
    concurrency: usize,
    ctl: &RunControl,
    referenced: Option<&Arc<SharedKeyIndex>>,
) -> Result<Partial> {
    let mut out = execute_unordered(main, unit, concurrency, ctl, referenced).await?;
    out.canonicalize();
    Ok(out)
}

/// [`execute_against`] without putting the result in canonical order: for a caller that folds
/// it into a merge that does ([`super::partial::finish_merge`]), so its keys are not sorted
/// twice.
pub(crate) async fn execute_unordered(
    main: &Table,
    unit: Unit,
    concurrency: usize,
    ctl: &RunControl,
    referenced: Option<&Arc<SharedKeyIndex>>,
) -> Result<Partial> {
    let mut out = Partial::of_unit(unit.plan, unit.id);
    match unit.work {
        Work::List { cutoff_ms, dirs } => {
            listing::list(
                main.storage(),
                dirs,
                cutoff_ms,
                concurrency,
                ctl,
                referenced,
                &mut out,
            )
            .await?
        }
        Work::Read { branches, items } => {
            refs::read(main, &branches, items, concurrency, ctl, &mut out).await?
        }
        Work::Delete {
            delete_roots,
            files,
        } => delete(main, &delete_roots, files, concurrency, ctl, &mut out).await?,
    }
    Ok(out)
}

/// Executes a delete unit: every check for every file first, then the deletions phase by
/// phase. A refused path, a cancellation or an injected failure fails the unit (deleted files
/// stay deleted: they were orphans); a file that cannot be deleted is reported as failed.
async fn delete(
    main: &Table,
    delete_roots: &[String],
    files: Vec<DeleteItem>,
    concurrency: usize,
    ctl: &RunControl,
    out: &mut Partial,
) -> Result<()> {
    let roots: Vec<Location> = delete_roots
        .iter()
        .map(|r| Location::parse(r))
        .collect::<Result<_>>()?;
    let storage = main.storage().with_delete_roots(&roots);
    let mut dctl = ctl.clone();
    dctl.io_concurrency = concurrency.max(1);
    let mut deleter =
        Deleter::new(&storage, KindRules::of(main), &dctl, false).handing_paths_back();
    let mut groups: Vec<(u8, Vec<Planned>)> = Vec::new();
    for f in files {
        let planned = Planned {
            location: Location::parse(&f.location)?,
            class: class_of(f.class)?,
            bytes: Some(f.bytes),
        };
        match groups.last_mut() {
            Some((phase, g)) if *phase == f.phase => g.push(planned),
            _ => groups.push((f.phase, vec![planned])),
        }
    }
    deleter
        .check_plan(groups.iter().flat_map(|(_, g)| g.iter()))
        .await?;
    for (phase, group) in groups {
        let failed = deleter.report.failed.len();
        let name = PHASES
            .get(phase as usize)
            .copied()
            .unwrap_or("orphan files");
        let r = deleter.delete(name, group).await;
        // Each file's size is its planned one (every file here has one).
        for (class, path, bytes) in deleter.take_handed() {
            out.deleted.push(Deleted {
                phase,
                path,
                class,
                bytes,
            });
        }
        for f in deleter.report.failed.get(failed..).unwrap_or(&[]) {
            out.failed.push(Failed {
                phase,
                path: f.path.clone(),
                error: f.error.clone(),
            });
        }
        r?;
    }
    Ok(())
}
