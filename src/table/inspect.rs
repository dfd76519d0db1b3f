//! `inspect`: what a table holds, as Paimon itself sees it (branches, snapshots, tags,
//! consumers, and the live data files of main's latest snapshot).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::storage::Storage;
use crate::table::{list_branches, Table};

/// Per-branch view.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BranchInspection {
    /// Snapshot ids present on the branch.
    pub snapshots: Vec<i64>,
    /// Tag name → snapshot id.
    pub tags: BTreeMap<String, i64>,
    /// Latest snapshot id, by the hint rules.
    pub latest_snapshot_id: Option<i64>,
    /// Error text when the branch's schema is missing or malformed; the branch is still
    /// listed. Any other failure to read a branch fails the whole inspection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Everything `inspect` reports.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TableInspection {
    /// Table root location.
    pub table: String,
    /// The branch the per-branch fields below describe (`main` unless one was named).
    pub branch: String,
    /// Branch names, "main" first.
    pub branches: Vec<String>,
    /// Snapshot ids on main.
    pub snapshots: Vec<i64>,
    /// Tags on main: name → snapshot id.
    pub tags: BTreeMap<String, i64>,
    /// Consumers on main: id → nextSnapshot.
    pub consumers: BTreeMap<String, i64>,
    /// Long-lived changelog ids on main.
    pub changelogs: Vec<i64>,
    /// Earliest snapshot id on main.
    pub earliest_snapshot_id: Option<i64>,
    /// Latest snapshot id on main.
    pub latest_snapshot_id: Option<i64>,
    /// Schema id of the latest schema.
    pub schema_id: i64,
    /// Partition keys.
    pub partition_keys: Vec<String>,
    /// Primary keys.
    pub primary_keys: Vec<String>,
    /// Live data files of main's latest snapshot: relative to the table root, or the recorded
    /// external location. Sorted.
    pub live_files: Vec<String>,
    /// Sum of `_FILE_SIZE` of the live files.
    pub live_file_bytes: u64,
    /// Other branches' views.
    pub branch_details: BTreeMap<String, BranchInspection>,
}

async fn inspect_branch(table: &Table) -> Result<BranchInspection> {
    let storage = table.storage();
    let dir = table.snapshots();
    Ok(BranchInspection {
        snapshots: dir.list_ids(storage).await?,
        tags: table
            .tags()
            .await?
            .into_iter()
            .map(|(n, t)| (n, t.snapshot.id))
            .collect(),
        latest_snapshot_id: dir.latest_id(storage).await?,
        error: None,
    })
}

/// Inspect the table at `storage.root()` (its main branch in detail).
pub async fn inspect(
    storage: Arc<Storage>,
    overrides: &HashMap<String, String>,
) -> Result<TableInspection> {
    inspect_branch_named(storage, overrides, crate::table::MAIN_BRANCH).await
}

/// Inspect the table at `storage.root()` with branch `branch` in detail (snapshots, tags,
/// consumers, changelogs and live files are that branch's; `branch_details` lists the others).
pub async fn inspect_branch_named(
    storage: Arc<Storage>,
    overrides: &HashMap<String, String>,
    branch: &str,
) -> Result<TableInspection> {
    let table = Table::open_branch(storage.clone(), overrides, branch).await?;
    let main = inspect_branch(&table).await?;
    let snapshots_dir = table.snapshots();
    let earliest = snapshots_dir.earliest_id(&storage).await?;
    let mut live_files = Vec::new();
    let mut live_file_bytes = 0u64;
    if let Some(id) = main.latest_snapshot_id {
        let snap = snapshots_dir.read(&storage, id).await?;
        for e in table.live_data_files(&snap).await? {
            live_file_bytes += e.file.file_size.max(0) as u64;
            let display = match &e.file.external_path {
                Some(ext) => ext.clone(),
                None => table.paths().display(&table.paths().data_file(
                    &e.partition,
                    e.bucket,
                    &e.file,
                )?),
            };
            live_files.push(display);
        }
    }
    live_files.sort();
    let branches = list_branches(&storage).await?;
    let mut branch_details = BTreeMap::new();
    for b in branches.iter().filter(|b| b.as_str() != branch) {
        let detail = match table.branch(b).await {
            Ok(t) => inspect_branch(&t).await?,
            // A branch without a (parseable) schema is still listed, with its error; a branch
            // that cannot be read at all (a storage error) fails the inspection.
            Err(e @ (Error::NotFound { .. } | Error::Malformed { .. })) => BranchInspection {
                snapshots: Vec::new(),
                tags: BTreeMap::new(),
                latest_snapshot_id: None,
                error: Some(e.to_string()),
            },
            Err(e) => return Err(e),
        };
        branch_details.insert(b.clone(), detail);
    }
    Ok(TableInspection {
        table: storage.root().as_str().to_string(),
        branch: branch.to_string(),
        branches,
        snapshots: main.snapshots,
        tags: main.tags,
        consumers: table
            .consumers()
            .await?
            .into_iter()
            .map(|(id, (c, _))| (id, c.next_snapshot))
            .collect(),
        changelogs: table.changelogs().list_ids(&storage).await?,
        earliest_snapshot_id: earliest,
        latest_snapshot_id: main.latest_snapshot_id,
        schema_id: table.schema().id,
        partition_keys: table.schema().partition_keys.clone(),
        primary_keys: table.schema().primary_keys.clone(),
        live_files,
        live_file_bytes,
        branch_details,
    })
}
