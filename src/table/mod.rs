//! A Paimon table as a whole: snapshot, tag, branch, consumer and changelog managers, the path
//! factory, and "which files does version V reference".

mod branch_ref;
mod files;
pub mod inspect;
mod paths;
mod versioned;
pub mod warehouse;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use branch_ref::{
    resolve_table_ref, resolve_with_options, validate_branch_name, TableRef, BRANCH_OPTION,
    MAIN_BRANCH,
};
pub use files::{merge_entries, EntryMerger, ManifestFiles, MetadataReader};
pub use paths::{child, DataFileLocator, PathFactory};
pub use versioned::VersionedDir;

use crate::error::{Error, Result};
use crate::spec::consumer::Consumer;
use crate::spec::options::TableOptions;
use crate::spec::schema::TableSchema;
use crate::spec::snapshot::{Snapshot, Tag};
use crate::storage::{FileStatus, Location, Storage};

/// Default concurrency for metadata reads.
pub const DEFAULT_READ_CONCURRENCY: usize = 16;

/// Default concurrency for metadata reads of a table on a local filesystem: there reads are
/// bound by the cores, not by latency, and each read in flight holds a blocking thread whose
/// allocator arena keeps what it once held (at 1 M data files, 8 instead of 16
/// took about 4 MB off expiry's peak and was faster on 2 cores).
pub const LOCAL_READ_CONCURRENCY: usize = 8;

/// One branch of a table, opened: its schema, options, path factory and metadata directories.
/// Manifests, index files, statistics and data are shared by all branches (spec §1.1).
#[derive(Debug, Clone)]
pub struct Table {
    storage: Arc<Storage>,
    overrides: HashMap<String, String>,
    branch: String,
    branch_root: Location,
    schema: Arc<TableSchema>,
    options: Arc<TableOptions>,
    paths: Arc<PathFactory>,
    reader: MetadataReader,
}

/// Root of a branch's metadata: the table root for main, `branch/branch-<name>` otherwise.
pub fn branch_root(root: &Location, branch: &str) -> Location {
    if branch == MAIN_BRANCH {
        root.clone()
    } else {
        root.join(&format!("branch/branch-{branch}"))
    }
}

/// Read the latest schema under `<branch root>/schema/`. `NotFound` if there is none.
pub async fn latest_schema(storage: &Storage, branch_root: &Location) -> Result<TableSchema> {
    let dir = branch_root.join("schema");
    let listing = storage.list_metadata_dir(&dir).await?;
    let latest = listing
        .files
        .iter()
        .filter_map(|f| {
            f.location
                .name()
                .strip_prefix("schema-")?
                .parse::<i64>()
                .ok()
        })
        .max()
        .ok_or_else(|| Error::NotFound {
            path: format!("{}/schema-*", dir.as_str()),
        })?;
    let loc = dir.join(&format!("schema-{latest}"));
    let bytes = storage.get(&loc).await?;
    TableSchema::parse(&bytes, loc.as_str())
}

impl Table {
    /// Open the main branch of the table at `storage.root()`; `overrides` win over schema options.
    pub async fn open(storage: Arc<Storage>, overrides: &HashMap<String, String>) -> Result<Table> {
        Self::open_branch(storage, overrides, MAIN_BRANCH).await
    }

    /// Open a named branch (`main` is the table root). A branch without a schema of its own is
    /// [`Error::NotFound`]; a path-like name is [`Error::InvalidArgument`]. The table's layout
    /// is checked first ([`check_layout`]): a directory of any branch that exists but is not
    /// a readable directory fails the open, so no capability ever starts on a table whose
    /// structure it cannot see.
    pub async fn open_branch(
        storage: Arc<Storage>,
        overrides: &HashMap<String, String>,
        branch: &str,
    ) -> Result<Table> {
        validate_branch_name(branch)?;
        check_layout(&storage).await?;
        Self::open_checked(storage, overrides, branch).await
    }

    /// [`Table::open_branch`] of a table whose layout was checked.
    async fn open_checked(
        storage: Arc<Storage>,
        overrides: &HashMap<String, String>,
        branch: &str,
    ) -> Result<Table> {
        validate_branch_name(branch)?;
        let root = storage.root().clone();
        let broot = branch_root(&root, branch);
        let schema = latest_schema(&storage, &broot).await.map_err(|e| match e {
            Error::NotFound { path } if branch == MAIN_BRANCH => Error::NotFound {
                path: format!("{path} (no Paimon table at {})", root.as_str()),
            },
            Error::NotFound { path } => Error::NotFound {
                path: format!(
                    "{path} (no branch `{branch}` in the Paimon table at {})",
                    root.as_str()
                ),
            },
            other => other,
        })?;
        let options = TableOptions::new(&schema.options, overrides);
        let storage = with_external_roots(storage, &options);
        let paths = PathFactory::new(&root, &options, schema.partition_fields())?;
        let concurrency = if root.is_local() {
            LOCAL_READ_CONCURRENCY
        } else {
            DEFAULT_READ_CONCURRENCY
        };
        let reader = MetadataReader::new(storage.clone(), concurrency);
        Ok(Table {
            storage,
            overrides: overrides.clone(),
            branch: branch.to_string(),
            branch_root: broot,
            schema: Arc::new(schema),
            options: Arc::new(options),
            paths: Arc::new(paths),
            reader,
        })
    }

    /// The same table opened on another branch (the layout of every branch was checked when
    /// this table was opened).
    pub async fn branch(&self, name: &str) -> Result<Table> {
        Self::open_checked(self.storage.clone(), &self.overrides, name).await
    }

    /// This table (schema, options, paths) with the metadata directories of branch `name`; for
    /// a branch directory that has no schema of its own.
    pub fn with_branch_root_of(&self, name: &str) -> Table {
        let mut t = self.clone();
        t.branch = name.to_string();
        t.branch_root = branch_root(self.storage.root(), name);
        t
    }

    /// The options the table was opened with (storage options and table-option overrides).
    pub fn overrides(&self) -> &HashMap<String, String> {
        &self.overrides
    }

    /// The storage.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// Table root.
    pub fn root(&self) -> &Location {
        self.storage.root()
    }

    /// This branch's name.
    pub fn branch_name(&self) -> &str {
        &self.branch
    }

    /// This branch's metadata root.
    pub fn branch_root(&self) -> &Location {
        &self.branch_root
    }

    /// Latest schema of this branch.
    pub fn schema(&self) -> &TableSchema {
        &self.schema
    }

    /// Effective options (schema + overrides).
    pub fn options(&self) -> &TableOptions {
        &self.options
    }

    /// Path factory.
    pub fn paths(&self) -> &PathFactory {
        &self.paths
    }

    /// The path factory, shared (for work moved to the blocking pool).
    pub fn paths_arc(&self) -> &Arc<PathFactory> {
        &self.paths
    }

    /// Manifest reader bound to this table.
    pub fn reader(&self) -> &MetadataReader {
        &self.reader
    }

    /// Set the concurrency used for metadata reads.
    pub fn set_read_concurrency(&mut self, n: usize) {
        self.reader = MetadataReader::new(self.storage.clone(), n.max(1));
    }

    /// Snapshot directory of this branch.
    pub fn snapshots(&self) -> VersionedDir {
        VersionedDir::snapshots(&self.branch_root)
    }

    /// Long-lived changelog directory of this branch.
    pub fn changelogs(&self) -> VersionedDir {
        VersionedDir::changelogs(&self.branch_root)
    }

    /// Read every snapshot present (ascending id). Snapshots that vanish meanwhile are skipped.
    pub async fn all_snapshots(&self) -> Result<Vec<Snapshot>> {
        Ok(self
            .all_snapshots_sized()
            .await?
            .into_iter()
            .map(|(s, _)| s)
            .collect())
    }

    /// [`Table::all_snapshots`], each with its file's size from the directory listing.
    pub async fn all_snapshots_sized(&self) -> Result<Vec<(Snapshot, u64)>> {
        read_all_versions(&self.storage, &self.snapshots(), self.reader.concurrency()).await
    }

    /// Read every long-lived changelog present (ascending id).
    pub async fn all_changelogs(&self) -> Result<Vec<Snapshot>> {
        let read =
            read_all_versions(&self.storage, &self.changelogs(), self.reader.concurrency()).await?;
        Ok(read.into_iter().map(|(s, _)| s).collect())
    }

    /// Every tag of this branch, sorted by name. Directories under `tag/` are skipped (P17).
    pub async fn tags(&self) -> Result<BTreeMap<String, Tag>> {
        let dir = self.branch_root.join("tag");
        let listing = self.storage.list_metadata_dir(&dir).await?;
        let mut out = BTreeMap::new();
        for f in &listing.files {
            let Some(name) = f.location.name().strip_prefix("tag-") else {
                continue;
            };
            let bytes = match self.storage.get(&f.location).await {
                Ok(b) => b,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e),
            };
            out.insert(name.to_string(), Tag::parse(&bytes, f.location.as_str())?);
        }
        Ok(out)
    }

    /// Every consumer of this branch with its file status (for expiry by modification time).
    pub async fn consumers(&self) -> Result<BTreeMap<String, (Consumer, FileStatus)>> {
        let dir = self.branch_root.join("consumer");
        let listing = self.storage.list_metadata_dir(&dir).await?;
        let mut out = BTreeMap::new();
        for f in listing.files {
            let Some(id) = f
                .location
                .name()
                .strip_prefix("consumer-")
                .map(String::from)
            else {
                continue;
            };
            let bytes = match self.storage.get(&f.location).await {
                Ok(b) => b,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e),
            };
            out.insert(id, (Consumer::parse(&bytes, f.location.as_str())?, f));
        }
        Ok(out)
    }

    /// Live data files (ADD entries after merging base + delta) of a snapshot (spec §3.7).
    pub async fn live_data_files(
        &self,
        snapshot: &Snapshot,
    ) -> Result<Vec<crate::spec::manifest::ManifestEntry>> {
        let mut manifests = self
            .reader
            .manifest_list(&self.paths, &snapshot.base_manifest_list)
            .await?;
        manifests.extend(
            self.reader
                .manifest_list(&self.paths, &snapshot.delta_manifest_list)
                .await?,
        );
        let names: Vec<String> = manifests.into_iter().map(|m| m.file_name).collect();
        self.reader.merged_manifests(&self.paths, &names).await
    }
}

/// The table's configured external data roots (`data-file.external-paths`,
/// `global-index.external-path`) are part of the table: files there may be deleted. Roots that
/// do not parse are skipped with a warning (files under them then stay).
fn with_external_roots(storage: Arc<Storage>, options: &TableOptions) -> Arc<Storage> {
    let mut roots = Vec::new();
    let configured = options
        .data_file_external_paths()
        .into_iter()
        .chain(options.global_index_external_path().map(String::from));
    for r in configured {
        match Location::parse(&r) {
            Ok(l) => roots.push(l),
            Err(e) => tracing::warn!(root = %r, error = %e, "external root ignored"),
        }
    }
    if roots.iter().all(|r| storage.delete_roots().contains(r)) {
        return storage;
    }
    Arc::new(storage.with_delete_roots(&roots))
}

/// The directories of the layout under the table root that all branches share (spec §1.1).
pub const TABLE_LAYOUT_DIRS: [&str; 4] = ["manifest", "index", "statistics", "branch"];

/// The directories of the layout under each branch root (the table root for main).
pub const BRANCH_LAYOUT_DIRS: [&str; 5] = ["snapshot", "changelog", "tag", "consumer", "schema"];

/// Checks the table's structure before anything reads it: every directory of the layout
/// ([`TABLE_LAYOUT_DIRS`] under the root, [`BRANCH_LAYOUT_DIRS`] under the root and under
/// every branch's `branch/branch-<name>/`) must be a readable directory or truly absent
/// ([`Storage::check_layout_dirs`]). A dangling symlink (a mount momentarily gone), a FIFO, a
/// regular file, a symlink loop or a directory that cannot be opened there is an error naming
/// the path: taken for an empty directory, it would make the table look as if it had no
/// snapshots, tags, branches or schema, and every file they reference an orphan. Object
/// stores have no directories: nothing to check there (their listing errors are errors, and
/// orphan removal refuses an empty snapshot listing while manifests or data remain).
pub async fn check_layout(storage: &Storage) -> Result<()> {
    let root = storage.root();
    if !root.is_local() {
        return Ok(());
    }
    let dirs: Vec<Location> = TABLE_LAYOUT_DIRS
        .iter()
        .chain(BRANCH_LAYOUT_DIRS.iter())
        .map(|d| root.join(d))
        .collect();
    storage.check_layout_dirs(&dirs).await?;
    let own: Vec<Location> = list_branches(storage)
        .await?
        .iter()
        .filter(|b| b.as_str() != MAIN_BRANCH)
        .flat_map(|b| {
            let broot = branch_root(root, b);
            BRANCH_LAYOUT_DIRS.iter().map(move |d| broot.join(d))
        })
        .collect();
    storage.check_layout_dirs(&own).await
}

/// List all branch names: "main" first, then `branch/branch-*` directories sorted. A
/// `branch/` that is not a readable directory, and an entry `branch-<name>` that is a file,
/// are errors: a branch is never silently left out.
pub async fn list_branches(storage: &Storage) -> Result<Vec<String>> {
    // Symlinked branch directories are branches (readers follow the link); an entry that
    // cannot be interpreted is an error, so no branch is ever silently left out.
    let dir = storage.root().join("branch");
    let listing = storage.list_metadata_dir(&dir).await?;
    if let Some(f) = listing.files.iter().find(|f| {
        f.location
            .name()
            .strip_prefix("branch-")
            .is_some_and(|n| !n.is_empty())
    }) {
        return Err(Error::malformed(
            "metadata directory",
            dir.as_str(),
            format!(
                "entry `{}` is a file where a branch directory belongs; refusing to leave the branch out",
                f.location.name()
            ),
        ));
    }
    let mut names: Vec<String> = listing
        .dirs
        .iter()
        .filter_map(|d| d.name().strip_prefix("branch-").map(String::from))
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    names.insert(0, MAIN_BRANCH.to_string());
    Ok(names)
}

async fn read_all_versions(
    storage: &Storage,
    dir: &VersionedDir,
    concurrency: usize,
) -> Result<Vec<(Snapshot, u64)>> {
    use futures::stream::{self, StreamExt, TryStreamExt};
    let listed = dir.list_sized(storage).await?;
    let read: Vec<Option<(Snapshot, u64)>> = stream::iter(listed)
        .map(|(id, size)| async move {
            Ok::<_, crate::error::Error>(dir.try_read(storage, id).await?.map(|s| (s, size)))
        })
        .buffered(concurrency.max(1))
        .try_collect()
        .await?;
    Ok(read.into_iter().flatten().collect())
}

/// A one-call overview of a table (used by `inspect` and the C ABI's table summary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableSummary {
    /// Earliest snapshot id on main, if any snapshot exists.
    pub earliest_snapshot_id: Option<i64>,
    /// Latest snapshot id on main, if any snapshot exists.
    pub latest_snapshot_id: Option<i64>,
    /// Number of snapshot files on main.
    pub snapshot_count: u64,
    /// Number of tags on main.
    pub tag_count: u64,
    /// Number of branches other than main.
    pub branch_count: u64,
    /// Live data files of main's latest snapshot.
    pub live_file_count: u64,
    /// Total bytes (`_FILE_SIZE`) of those files.
    pub live_file_bytes: u64,
}

/// Summarize the table stored at `storage.root()`, with `options` overriding the schema's options.
pub async fn summarize(
    storage: Arc<Storage>,
    options: &HashMap<String, String>,
) -> Result<TableSummary> {
    summarize_branch(storage, options, MAIN_BRANCH).await
}

/// [`summarize`] with the snapshot, tag and live-file figures of branch `branch`.
pub async fn summarize_branch(
    storage: Arc<Storage>,
    options: &HashMap<String, String>,
    branch: &str,
) -> Result<TableSummary> {
    let table = Table::open_branch(storage.clone(), options, branch).await?;
    let snapshots = table.snapshots();
    let ids = snapshots.list_ids(&storage).await?;
    let latest = snapshots.latest_id(&storage).await?;
    let earliest = snapshots.earliest_id(&storage).await?;
    let mut summary = TableSummary {
        earliest_snapshot_id: earliest,
        latest_snapshot_id: latest,
        snapshot_count: ids.len() as u64,
        tag_count: table.tags().await?.len() as u64,
        branch_count: list_branches(&storage).await?.len().saturating_sub(1) as u64,
        ..Default::default()
    };
    if let Some(id) = latest {
        let snap = snapshots.read(&storage, id).await?;
        let live = table.live_data_files(&snap).await?;
        summary.live_file_count = live.len() as u64;
        summary.live_file_bytes = live.iter().map(|e| e.file.file_size.max(0) as u64).sum();
    }
    Ok(summary)
}
