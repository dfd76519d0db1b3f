//! Orphan file removal (spec §5.6, [`remove_orphan_files`], or unit by unit through [`units`]).
//!
//! **What it deletes:** files in the table's own directories ([`listing`]) modified before the
//! cut-off ([`config::resolve_cutoff`]) that no snapshot, tag or long-lived changelog of any
//! branch references. **What keeps a file:** its location among the references of every
//! version of every branch, read until no new version appears ([`refs`], [`tracker`]); its
//! name referenced at another location (kept and reported); a modification time after the
//! cut-off; the caller's veto ([`config::vetoed`]). [`decide::decide`] and its verdicts decide;
//! [`exec`] deletes in crash-safe order.
//!
//! The run in detail:
//!
//! The run, in order:
//! 1. **Cut-off.** Only files modified before `older_than_ms` may be deleted (default: now − 1
//!    day). A cut-off in the future is refused; so is one within the last hour unless the
//!    caller promises that no writer is running (pitfall P6).
//! 2. **Candidates first** (P1): `manifest/`, `index/`, `statistics/`, every bucket directory of
//!    the data root and, when declared owned, of each `data-file.external-paths` root (through `#partitionKeys` levels
//!    of `k=v` directories; a last-level partition directory without bucket directories is a
//!    candidate directory itself), and temp files in `snapshot/` and `changelog/` of every
//!    branch. Never `schema/`, `tag/`, `consumer/`, `service/`, `metadata/`, `branch/*`
//!    metadata other than temp files in `snapshot/` and `changelog/`, `snapshot-N`,
//!    `changelog-N`, `EARLIEST`, `LATEST`, `*.managed.blob`, files at the table root, or anything
//!    outside these directories. See [`listing`](self) for details.
//! 3. **References** of every snapshot, tag and long-lived changelog of EVERY branch (P2), as
//!    64-bit keys of locations and names. The table is listed again after every listing until
//!    no new version appears. Unreadable metadata that a version still present needs — a missing
//!    manifest list, manifest or index manifest included (P3) — aborts the run before anything
//!    is deleted; the error names the file. So does an empty reference set while snapshots
//!    exist, a layout directory (`manifest/`, `snapshot/`, `branch/`, ...) that is not a
//!    readable directory, and an empty snapshot listing of main while manifests, index or
//!    statistics files or data exist. A table created but never committed is a no-op.
//! 4. **Decide.** A candidate is kept when its resolved location is referenced; also when only
//!    its *name* is referenced, at another location: that means our path resolution disagrees
//!    with the writer's (e.g. partition options changed since, P18), and such candidates are
//!    kept and listed in [`OrphanReport::kept_name_referenced_elsewhere`] rather than risked.
//!    The caller's veto runs last.
//! 5. **Delete** through the guarded, batched `Deleter`: data, changelog and index files in
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
//!
//! The run is a sequence of units ([`units`]): planning, list units and read units, the
//! decision, delete units, the finish. [`remove_orphan_files`] runs them in one process; an
//! engine can run the units on its workers through the same code (see `docs/architecture.md`,
//! "Orphan files").

mod codec;
mod config;
mod decide;
mod exec;
mod keyset;
mod listing;
mod partial;
mod planner;
mod prune;
mod refs;
mod report;
mod run;
pub(crate) mod shard;
mod sharded;
mod tracker;
pub mod units;
mod work_unit;

pub(crate) use config::resolve_cutoff;
pub use config::{OrphanConfig, VetoFn, DEFAULT_OLDER_THAN_MS, MIN_WINDOW_WITH_WRITERS_MS};
pub use report::OrphanReport;
pub use run::remove_orphan_files;
