//! What an orphan cleanup run reports.

use serde::Serialize;

use crate::clean::report::DeletionReport;

/// What an orphan cleanup run found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OrphanReport {
    /// The cut-off used (epoch ms): only files modified before it were candidates.
    pub older_than_ms: i64,
    /// Files seen in the candidate directories that would be candidates if they were old
    /// enough (so not `snapshot-N`, `changelog-N` or hint files).
    pub files_listed: u64,
    /// Candidates examined: the listed files (temp files only in `snapshot/` and
    /// `changelog/`; never `*.managed.blob`) that a version references, whatever their age,
    /// plus the unreferenced ones older than the cut-off. So `candidates == referenced +
    /// vetoed + kept_name_referenced_elsewhere + deleted + failed`.
    pub candidates: u64,
    /// Listed files kept because a version references their location, whatever their age
    /// (their age is not read: on a local disk they are not even `stat`ed).
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
    /// [`OrphanConfig::external_roots_owned`](super::OrphanConfig::external_roots_owned)).
    pub external_roots: Vec<String>,
    /// Roots or directories not listed, with the reason; nothing in them was deleted.
    pub skipped: Vec<String>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}
