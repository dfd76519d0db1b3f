//! The report handle every maintenance operation returns, and its accessors.

use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr;
use std::sync::OnceLock;

use serde::Serialize;

use crate::clean::report::{Count, DeletedPath, DeletionReport, FileClass};
use crate::clean::{
    ChangelogExpireReport, ConsumerReport, ExpireReport, MaintainReport, OrphanReport,
    PartitionReport, TagReport,
};

use super::status::boundary_infallible;

/// Kind of file a maintenance operation deleted (or, in a dry run, would delete). The numbers are
/// stable; new kinds are only appended. Functions that take a file class take it as an `int32_t`
/// holding one of these values; an unknown value is answered with 0 / "unknown", never an error.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaimonCleanupFileClass {
    /// Data files of the table (with their extra files such as file indexes).
    Data = 0,
    /// Changelog data files.
    ChangelogData = 1,
    /// Manifest files.
    Manifest = 2,
    /// Manifest lists.
    ManifestList = 3,
    /// Index manifests.
    IndexManifest = 4,
    /// Index files (hash index, deletion vectors, global index).
    Index = 5,
    /// Statistics files.
    Statistics = 6,
    /// Snapshot files (`snapshot/snapshot-N`).
    SnapshotMeta = 7,
    /// Long-lived changelog metadata files (`changelog/changelog-N`).
    ChangelogMeta = 8,
    /// Tag files (`tag/tag-NAME`).
    TagMeta = 9,
    /// Consumer files (`consumer/consumer-ID`).
    ConsumerMeta = 10,
    /// Anything else (temporary files, unknown leftovers found by orphan-file removal).
    Other = 11,
}

/// Number of file classes: the valid `PaimonCleanupFileClass` values are 0 to
/// `PAIMON_CLEANUP_FILE_CLASS_COUNT - 1`. A library newer than the header may report more classes;
/// their files still count in the totals (`paimon_cleanup_report_total_files`).
pub const PAIMON_CLEANUP_FILE_CLASS_COUNT: i32 = 12;

impl PaimonCleanupFileClass {
    /// Every class in numeric order.
    const ALL: [PaimonCleanupFileClass; PAIMON_CLEANUP_FILE_CLASS_COUNT as usize] = [
        PaimonCleanupFileClass::Data,
        PaimonCleanupFileClass::ChangelogData,
        PaimonCleanupFileClass::Manifest,
        PaimonCleanupFileClass::ManifestList,
        PaimonCleanupFileClass::IndexManifest,
        PaimonCleanupFileClass::Index,
        PaimonCleanupFileClass::Statistics,
        PaimonCleanupFileClass::SnapshotMeta,
        PaimonCleanupFileClass::ChangelogMeta,
        PaimonCleanupFileClass::TagMeta,
        PaimonCleanupFileClass::ConsumerMeta,
        PaimonCleanupFileClass::Other,
    ];

    pub(crate) fn from_code(code: i32) -> Option<Self> {
        usize::try_from(code)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// The name used by the CLI's JSON output (serde snake case of [`FileClass`]), NUL-terminated.
    fn name_nul(self) -> &'static str {
        match self {
            PaimonCleanupFileClass::Data => "data\0",
            PaimonCleanupFileClass::ChangelogData => "changelog_data\0",
            PaimonCleanupFileClass::Manifest => "manifest\0",
            PaimonCleanupFileClass::ManifestList => "manifest_list\0",
            PaimonCleanupFileClass::IndexManifest => "index_manifest\0",
            PaimonCleanupFileClass::Index => "index\0",
            PaimonCleanupFileClass::Statistics => "statistics\0",
            PaimonCleanupFileClass::SnapshotMeta => "snapshot_meta\0",
            PaimonCleanupFileClass::ChangelogMeta => "changelog_meta\0",
            PaimonCleanupFileClass::TagMeta => "tag_meta\0",
            PaimonCleanupFileClass::ConsumerMeta => "consumer_meta\0",
            PaimonCleanupFileClass::Other => "other\0",
        }
    }
}

impl From<FileClass> for PaimonCleanupFileClass {
    /// Exhaustive on purpose: a new Rust class must get its own stable C number.
    fn from(class: FileClass) -> Self {
        match class {
            FileClass::Data => PaimonCleanupFileClass::Data,
            FileClass::ChangelogData => PaimonCleanupFileClass::ChangelogData,
            FileClass::Manifest => PaimonCleanupFileClass::Manifest,
            FileClass::ManifestList => PaimonCleanupFileClass::ManifestList,
            FileClass::IndexManifest => PaimonCleanupFileClass::IndexManifest,
            FileClass::Index => PaimonCleanupFileClass::Index,
            FileClass::Statistics => PaimonCleanupFileClass::Statistics,
            FileClass::SnapshotMeta => PaimonCleanupFileClass::SnapshotMeta,
            FileClass::ChangelogMeta => PaimonCleanupFileClass::ChangelogMeta,
            FileClass::TagMeta => PaimonCleanupFileClass::TagMeta,
            FileClass::ConsumerMeta => PaimonCleanupFileClass::ConsumerMeta,
            FileClass::Other => PaimonCleanupFileClass::Other,
        }
    }
}

/// Which operation produced a report. The numbers are stable; new kinds are only appended.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaimonCleanupReportKind {
    /// Not a report (returned for a NULL report).
    None = 0,
    /// `paimon_cleanup_expire_snapshots`.
    ExpireSnapshots = 1,
    /// `paimon_cleanup_expire_changelogs`.
    ExpireChangelogs = 2,
    /// `paimon_cleanup_delete_tag`.
    DeleteTag = 3,
    /// `paimon_cleanup_expire_tags`.
    ExpireTags = 4,
    /// `paimon_cleanup_expire_consumers`.
    ExpireConsumers = 5,
    /// `paimon_cleanup_remove_orphan_files`.
    RemoveOrphanFiles = 6,
    /// `paimon_cleanup_drop_partitions`.
    DropPartitions = 7,
    /// `paimon_cleanup_expire_partitions`.
    ExpirePartitions = 8,
    /// `paimon_cleanup_maintain`: the steps that ran are sub-reports
    /// (`paimon_cleanup_report_step`).
    Maintain = 9,
}

impl PaimonCleanupReportKind {
    /// Every kind in numeric order.
    const ALL: [PaimonCleanupReportKind; 10] = [
        PaimonCleanupReportKind::None,
        PaimonCleanupReportKind::ExpireSnapshots,
        PaimonCleanupReportKind::ExpireChangelogs,
        PaimonCleanupReportKind::DeleteTag,
        PaimonCleanupReportKind::ExpireTags,
        PaimonCleanupReportKind::ExpireConsumers,
        PaimonCleanupReportKind::RemoveOrphanFiles,
        PaimonCleanupReportKind::DropPartitions,
        PaimonCleanupReportKind::ExpirePartitions,
        PaimonCleanupReportKind::Maintain,
    ];

    fn name_nul(self) -> &'static str {
        match self {
            PaimonCleanupReportKind::None => "none\0",
            PaimonCleanupReportKind::ExpireSnapshots => "expire_snapshots\0",
            PaimonCleanupReportKind::ExpireChangelogs => "expire_changelogs\0",
            PaimonCleanupReportKind::DeleteTag => "delete_tag\0",
            PaimonCleanupReportKind::ExpireTags => "expire_tags\0",
            PaimonCleanupReportKind::ExpireConsumers => "expire_consumers\0",
            PaimonCleanupReportKind::RemoveOrphanFiles => "remove_orphan_files\0",
            PaimonCleanupReportKind::DropPartitions => "drop_partitions\0",
            PaimonCleanupReportKind::ExpirePartitions => "expire_partitions\0",
            PaimonCleanupReportKind::Maintain => "maintain\0",
        }
    }
}

/// A path the run deleted (or would delete), with its class.
#[derive(Debug)]
struct ReportPath {
    path: CString,
    class: PaimonCleanupFileClass,
}

/// A deletion that failed: the path and the error text.
#[derive(Debug)]
struct ReportFailure {
    path: CString,
    error: CString,
}

/// One partition: its key/value pairs in partition-key order of the directory names.
#[derive(Debug)]
struct ReportPartition {
    fields: Vec<(CString, CString)>,
}

/// The outcome of a maintenance operation.
///
/// One opaque report type serves every operation; `paimon_cleanup_report_kind` says which one
/// produced it and the accessors that do not apply to that kind return 0 / false / NULL. Counts
/// per file class, failed deletions, the list of deleted (in a dry run: deletable) paths,
/// warnings and the JSON form are common to all kinds.
///
/// Created by the operation (through its `PaimonCleanupReport **out` parameter), owned by the
/// caller, released with `paimon_cleanup_report_free`. Immutable and thread-safe: any thread may
/// read it until it is freed. Strings and sub-reports returned by its accessors are borrowed from
/// it and stay valid until it is freed.
#[derive(Debug)]
pub struct PaimonCleanupReport {
    kind: PaimonCleanupReportKind,
    dry_run: bool,
    expired: u64,
    first_expired: Option<i64>,
    last_expired: Option<i64>,
    earliest_after: Option<i64>,
    changelogs_written: u64,
    /// Files and bytes per class, including those of the steps.
    counts: Vec<Count>,
    /// This report's own failures (the steps' follow in the accessors).
    failed: Vec<ReportFailure>,
    /// This report's own paths (the steps' follow in the accessors).
    paths: Vec<ReportPath>,
    /// This report's own warnings (the steps' follow in the accessors).
    warnings: Vec<CString>,
    /// Directories removed, including those of the steps.
    dirs_removed: u64,
    elapsed_ms: u64,
    names: Vec<CString>,
    missing: Vec<CString>,
    partitions: Vec<ReportPartition>,
    files_marked_deleted: u64,
    rows_marked_deleted: u64,
    bytes_marked_deleted: u64,
    committed: Vec<i64>,
    cutoff_ms: Option<i64>,
    candidates: u64,
    referenced: u64,
    vetoed: u64,
    /// Sub-reports with the JSON key they appear under.
    steps: Vec<(&'static str, PaimonCleanupReport)>,
    /// The Rust report as JSON, without its path list (kept once, in `paths`) and its steps.
    json_base: serde_json::Value,
    /// The full JSON text, built on first request.
    json: OnceLock<CString>,
}

/// A C string from report text; an interior NUL (never expected) is replaced, not dropped.
fn c_text(text: String) -> CString {
    CString::new(text).unwrap_or_else(|e| {
        let text = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{FFFD}");
        CString::new(text).unwrap_or_default()
    })
}

fn c_texts(texts: Vec<String>) -> Vec<CString> {
    texts.into_iter().map(c_text).collect()
}

/// The JSON of a Rust report, or a JSON string naming the failure (never expected).
fn to_json<T: Serialize>(report: &T) -> serde_json::Value {
    serde_json::to_value(report)
        .unwrap_or_else(|e| serde_json::Value::String(format!("report not serializable: {e}")))
}

impl PaimonCleanupReport {
    fn empty(kind: PaimonCleanupReportKind) -> Self {
        PaimonCleanupReport {
            kind,
            dry_run: false,
            expired: 0,
            first_expired: None,
            last_expired: None,
            earliest_after: None,
            changelogs_written: 0,
            counts: vec![Count::default(); PAIMON_CLEANUP_FILE_CLASS_COUNT as usize],
            failed: Vec::new(),
            paths: Vec::new(),
            warnings: Vec::new(),
            dirs_removed: 0,
            elapsed_ms: 0,
            names: Vec::new(),
            missing: Vec::new(),
            partitions: Vec::new(),
            files_marked_deleted: 0,
            rows_marked_deleted: 0,
            bytes_marked_deleted: 0,
            committed: Vec::new(),
            cutoff_ms: None,
            candidates: 0,
            referenced: 0,
            vetoed: 0,
            steps: Vec::new(),
            json_base: serde_json::Value::Null,
            json: OnceLock::new(),
        }
    }

    /// Takes the deletions of `deletion` into this report. Its path list must already be
    /// detached (`std::mem::take`) into `paths`, so the JSON base is serialized without it.
    fn add_deletion(&mut self, deletion: &DeletionReport, paths: Vec<DeletedPath>) {
        self.dry_run |= deletion.dry_run;
        for (class, count) in &deletion.deleted {
            let slot = &mut self.counts[PaimonCleanupFileClass::from(*class) as usize];
            slot.files += count.files;
            slot.bytes += count.bytes;
        }
        self.failed
            .extend(deletion.failed.iter().map(|f| ReportFailure {
                path: c_text(f.path.clone()),
                error: c_text(f.error.clone()),
            }));
        self.paths.extend(paths.into_iter().map(|p| ReportPath {
            path: c_text(p.path),
            class: p.class.into(),
        }));
        self.dirs_removed += deletion.dirs_removed;
    }

    /// The report of a snapshot expiry.
    pub(crate) fn from_expire_snapshots(mut report: ExpireReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::ExpireSnapshots);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.snapshots_expired;
        out.first_expired = report.first_expired;
        out.last_expired = report.last_expired;
        out.earliest_after = report.earliest_after;
        out.changelogs_written = report.changelogs_written;
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    /// The report of a changelog expiry.
    pub(crate) fn from_expire_changelogs(mut report: ChangelogExpireReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::ExpireChangelogs);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.changelogs_expired;
        out.first_expired = report.first_expired;
        out.last_expired = report.last_expired;
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    /// The report of a tag deletion (`kind` DeleteTag) or tag expiry (`kind` ExpireTags).
    pub(crate) fn from_tags(kind: PaimonCleanupReportKind, mut report: TagReport) -> Self {
        let mut out = Self::empty(kind);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.tags_deleted.len() as u64;
        out.names = c_texts(report.tags_deleted.clone());
        out.missing = c_texts(report.tags_not_found.clone());
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    /// The report of a consumer expiry.
    pub(crate) fn from_consumers(mut report: ConsumerReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::ExpireConsumers);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.expired = report.expired.len() as u64;
        out.names = c_texts(report.expired.clone());
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    /// The report of an orphan-file removal.
    pub(crate) fn from_orphans(mut report: OrphanReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::RemoveOrphanFiles);
        let paths = std::mem::take(&mut report.deletion.paths);
        out.add_deletion(&report.deletion, paths);
        out.cutoff_ms = Some(report.older_than_ms);
        out.candidates = report.candidates;
        out.referenced = report.referenced;
        out.vetoed = report.vetoed;
        out.elapsed_ms = report.elapsed_ms;
        let mut warnings: Vec<String> = report
            .skipped
            .iter()
            .map(|s| format!("not listed, nothing deleted there: {s}"))
            .collect();
        warnings.extend(
            report
                .branches_without_schema
                .iter()
                .map(|b| format!("branch without a schema (its versions were still read): {b}")),
        );
        warnings.extend(
            report
                .kept_name_referenced_elsewhere
                .iter()
                .map(|p| format!("kept {p}: its file name is referenced at another location")),
        );
        out.warnings = c_texts(warnings);
        out.json_base = to_json(&report);
        out
    }

    /// The report of a partition drop (`kind` DropPartitions) or expiry (`kind`
    /// ExpirePartitions).
    pub(crate) fn from_partitions(kind: PaimonCleanupReportKind, report: PartitionReport) -> Self {
        let mut out = Self::empty(kind);
        out.dry_run = report.dry_run;
        out.expired = report.partitions.len() as u64;
        out.names = report.names.iter().cloned().map(c_text).collect();
        out.partitions = report
            .partitions
            .iter()
            .map(|p| ReportPartition {
                fields: p
                    .iter()
                    .map(|(k, v)| (c_text(k.clone()), c_text(v.clone())))
                    .collect(),
            })
            .collect();
        out.files_marked_deleted = report.files_marked_deleted;
        out.rows_marked_deleted = report.rows_marked_deleted;
        out.bytes_marked_deleted = report.bytes_marked_deleted;
        out.committed = report.snapshot_ids.clone();
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    /// The report of `maintain`: one step per operation that ran, in the order they ran.
    pub(crate) fn from_maintain(mut report: MaintainReport) -> Self {
        let mut out = Self::empty(PaimonCleanupReportKind::Maintain);
        if let Some(r) = report.tags.take() {
            out.add_step(
                "tags",
                Self::from_tags(PaimonCleanupReportKind::ExpireTags, r),
            );
        }
        if let Some(r) = report.partitions.take() {
            out.add_step(
                "partitions",
                Self::from_partitions(PaimonCleanupReportKind::ExpirePartitions, r),
            );
        }
        if let Some(r) = report.consumers.take() {
            out.add_step("consumers", Self::from_consumers(r));
        }
        if let Some(r) = report.snapshots.take() {
            out.add_step("snapshots", Self::from_expire_snapshots(r));
        }
        if let Some(r) = report.changelogs.take() {
            out.add_step("changelogs", Self::from_expire_changelogs(r));
        }
        out.elapsed_ms = report.elapsed_ms;
        out.json_base = to_json(&report);
        out
    }

    fn add_step(&mut self, key: &'static str, step: PaimonCleanupReport) {
        self.dry_run |= step.dry_run;
        for (total, part) in self.counts.iter_mut().zip(&step.counts) {
            total.files += part.files;
            total.bytes += part.bytes;
        }
        self.dirs_removed += step.dirs_removed;
        self.steps.push((key, step));
    }

    fn count(&self, class: i32) -> Count {
        PaimonCleanupFileClass::from_code(class)
            .and_then(|c| self.counts.get(c as usize).copied())
            .unwrap_or_default()
    }

    /// Length of a list over this report and, after it, its steps.
    fn list_len<T>(&self, own: fn(&Self) -> &[T]) -> usize {
        own(self).len()
            + self
                .steps
                .iter()
                .map(|(_, s)| s.list_len(own))
                .sum::<usize>()
    }

    /// Element `index` of a list over this report and, after it, its steps.
    fn list_get<T>(&self, own: fn(&Self) -> &[T], mut index: usize) -> Option<&T> {
        let mine = own(self);
        if index < mine.len() {
            return mine.get(index);
        }
        index -= mine.len();
        for (_, step) in &self.steps {
            let len = step.list_len(own);
            if index < len {
                return step.list_get(own, index);
            }
            index -= len;
        }
        None
    }

    fn own_paths(&self) -> &[ReportPath] {
        &self.paths
    }

    fn own_failed(&self) -> &[ReportFailure] {
        &self.failed
    }

    fn own_warnings(&self) -> &[CString] {
        &self.warnings
    }

    /// The full JSON value: the base with the path list and the steps put back.
    fn json_value(&self) -> serde_json::Value {
        let mut value = self.json_base.clone();
        if let Some(deletion) = value.get_mut("deletion").and_then(|d| d.as_object_mut()) {
            let paths = self
                .paths
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "class": p.class.name_nul().trim_end_matches('\0'),
                        "path": p.path.to_string_lossy(),
                    })
                })
                .collect();
            deletion.insert("paths".to_owned(), serde_json::Value::Array(paths));
        }
        if let Some(object) = value.as_object_mut() {
            for (key, step) in &self.steps {
                object.insert((*key).to_owned(), step.json_value());
            }
        }
        value
    }

    fn json_text(&self) -> &CString {
        self.json
            .get_or_init(|| c_text(self.json_value().to_string()))
    }
}

/// Reads a report pointer inside an infallible accessor.
///
/// # Safety
/// `report` must be NULL or a live report.
unsafe fn get<'a>(report: *const PaimonCleanupReport) -> Option<&'a PaimonCleanupReport> {
    // SAFETY: guaranteed by the caller.
    unsafe { report.as_ref() }
}

/// Runs an accessor: `fallback` for a NULL report or a panic.
///
/// # Safety
/// `report` must be NULL or a live report.
unsafe fn read<T>(
    report: *const PaimonCleanupReport,
    fallback: T,
    f: impl FnOnce(&PaimonCleanupReport) -> T,
) -> T
where
    T: Copy,
{
    boundary_infallible(fallback, || {
        // SAFETY: guaranteed by the caller.
        unsafe { get(report) }.map_or(fallback, f)
    })
}

/// Returns the static, lower-case name of a file class as used in the keys of the CLI's JSON
/// output (`"data"`, `"changelog_data"`, `"manifest"`, `"manifest_list"`, `"index_manifest"`,
/// `"index"`, `"statistics"`, `"snapshot_meta"`, `"changelog_meta"`, `"tag_meta"`,
/// `"consumer_meta"`, `"other"`), or `"unknown"` for a value that is not a file class.
///
/// Ownership: static; never free it. Thread-safety: any thread. Errors: none; never NULL.
#[no_mangle]
pub extern "C" fn paimon_cleanup_file_class_name(file_class: i32) -> *const c_char {
    let name = PaimonCleanupFileClass::from_code(file_class)
        .map(PaimonCleanupFileClass::name_nul)
        .unwrap_or("unknown\0");
    name.as_ptr().cast()
}

/// Returns the static, lower-case name of a report kind (`"none"`, `"expire_snapshots"`, ...),
/// or `"unknown"` for a value that is not a report kind.
///
/// Ownership: static; never free it. Thread-safety: any thread. Errors: none; never NULL.
#[no_mangle]
pub extern "C" fn paimon_cleanup_report_kind_name(kind: i32) -> *const c_char {
    let name = PaimonCleanupReportKind::ALL
        .iter()
        .find(|k| **k as i32 == kind)
        .map_or("unknown\0", |k| k.name_nul());
    name.as_ptr().cast()
}

/// Returns which operation produced the report, or `PAIMON_CLEANUP_REPORT_KIND_NONE` for NULL.
///
/// Thread-safety: any thread, until the report is freed (the same holds for every
/// `paimon_cleanup_report_*` accessor).
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_kind(
    report: *const PaimonCleanupReport,
) -> PaimonCleanupReportKind {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, PaimonCleanupReportKind::None, |r| r.kind) }
}

/// Returns true when the report comes from a dry run: nothing was changed, and the counts and
/// paths describe what a real run would delete. False for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_dry_run(report: *const PaimonCleanupReport) -> bool {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, false, |r| r.dry_run) }
}

/// Returns how many items the run removed (in a dry run: would remove): snapshots for
/// `EXPIRE_SNAPSHOTS`, changelogs for `EXPIRE_CHANGELOGS`, tags for `DELETE_TAG` / `EXPIRE_TAGS`,
/// consumers for `EXPIRE_CONSUMERS`, partitions for `DROP_PARTITIONS` / `EXPIRE_PARTITIONS`;
/// 0 for `REMOVE_ORPHAN_FILES` (see the file counts), `MAINTAIN` (see its steps) and NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_expired_count(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.expired) }
}

/// Returns true when the report has an expired id range, i.e. when
/// `paimon_cleanup_report_first_expired_id` / `_last_expired_id` are meaningful: at least one
/// snapshot (`EXPIRE_SNAPSHOTS`) or changelog (`EXPIRE_CHANGELOGS`) expired. False otherwise and
/// for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_has_expired_range(
    report: *const PaimonCleanupReport,
) -> bool {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, false, |r| {
            r.first_expired.is_some() && r.last_expired.is_some()
        })
    }
}

/// Returns the id of the first (oldest) version expired, or 0 when
/// `paimon_cleanup_report_has_expired_range` is false.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_first_expired_id(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.first_expired.unwrap_or(0)) }
}

/// Returns the id of the last (newest) version expired, or 0 when
/// `paimon_cleanup_report_has_expired_range` is false.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_last_expired_id(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.last_expired.unwrap_or(0)) }
}

/// Returns true when `paimon_cleanup_report_earliest_after_id` is meaningful: an
/// `EXPIRE_SNAPSHOTS` report of a table that had snapshots. False otherwise and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_has_earliest_after(
    report: *const PaimonCleanupReport,
) -> bool {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, false, |r| r.earliest_after.is_some()) }
}

/// Returns the id of the earliest version left after the run (in a dry run: that would be left),
/// or 0 when `paimon_cleanup_report_has_earliest_after` is false.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_earliest_after_id(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.earliest_after.unwrap_or(0)) }
}

/// Returns how many long-lived changelog files a snapshot expiry wrote (tables whose changelog
/// lifecycle is decoupled from snapshots, `changelog.num-retained.*`); 0 otherwise and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_changelogs_written(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.changelogs_written) }
}

/// Returns how many files of class `file_class` (a `PaimonCleanupFileClass` value) the run
/// deleted (in a dry run: would delete). 0 for NULL and for an unknown class.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_files(
    report: *const PaimonCleanupReport,
    file_class: i32,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.count(file_class).files) }
}

/// Returns the total size in bytes of the files of class `file_class` the run deleted (in a dry
/// run: would delete). Sizes come from metadata where it records them, else from the store. 0 for
/// NULL and for an unknown class.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_bytes(
    report: *const PaimonCleanupReport,
    file_class: i32,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.count(file_class).bytes) }
}

/// Returns the number of files deleted (in a dry run: deletable) over all classes; 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_total_files(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.counts.iter().map(|c| c.files).sum()) }
}

/// Returns the bytes deleted (in a dry run: deletable) over all classes; 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_total_bytes(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.counts.iter().map(|c| c.bytes).sum()) }
}

/// Returns the number of deletions that failed (the files are still there; a later run retries
/// them). The operation itself still returned OK. For `MAINTAIN` the failures of every step, in
/// step order. 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_failed_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.list_len(PaimonCleanupReport::own_failed)) }
}

/// Returns the path of failed deletion `index` (0-based, below
/// `paimon_cleanup_report_failed_count`), relative to the table root when it lies under it, or
/// NULL when `index` is out of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_failed_path(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.list_get(PaimonCleanupReport::own_failed, index)
                .map_or(ptr::null(), |f| f.path.as_ptr())
        })
    }
}

/// Returns the error message of failed deletion `index`, or NULL when `index` is out of range or
/// `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_failed_error(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.list_get(PaimonCleanupReport::own_failed, index)
                .map_or(ptr::null(), |f| f.error.as_ptr())
        })
    }
}

/// Returns the number of paths in the report's listing: every file the run deleted, or in a dry
/// run every file it would delete, in deletion order (for `MAINTAIN`: every step's, in step
/// order). Equals `paimon_cleanup_report_total_files`. 0 for NULL. A partition drop or expiry
/// deletes no file (it commits a snapshot that marks them deleted; a later snapshot expiry
/// deletes them), so its listing is empty.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_path_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.list_len(PaimonCleanupReport::own_paths)) }
}

/// Returns path `index` (0-based, below `paimon_cleanup_report_path_count`) of the listing,
/// relative to the table root when it lies under it (`f1=10/bucket-0/data-….orc`,
/// `manifest/manifest-list-…`), else the full URI (external data paths). NULL when `index` is out
/// of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_path(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.list_get(PaimonCleanupReport::own_paths, index)
                .map_or(ptr::null(), |p| p.path.as_ptr())
        })
    }
}

/// Returns the file class of path `index` of the listing. `index` must be below
/// `paimon_cleanup_report_path_count`; for an out-of-range index or a NULL report the answer is
/// `PAIMON_CLEANUP_FILE_CLASS_OTHER`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_path_class(
    report: *const PaimonCleanupReport,
    index: usize,
) -> PaimonCleanupFileClass {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, PaimonCleanupFileClass::Other, |r| {
            r.list_get(PaimonCleanupReport::own_paths, index)
                .map_or(PaimonCleanupFileClass::Other, |p| p.class)
        })
    }
}

/// Returns the number of directories the run removed because they were left empty (bucket and
/// partition directories; only when empty-directory cleaning is on and not in a dry run). 0 for
/// NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_dirs_removed(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.dirs_removed) }
}

/// Returns the wall time of the run in milliseconds; 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_elapsed_ms(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.elapsed_ms) }
}

/// Returns the number of names in the report: the tags deleted (`DELETE_TAG`, `EXPIRE_TAGS`), the
/// consumer ids expired (`EXPIRE_CONSUMERS`), or the partitions dropped (`DROP_PARTITIONS`,
/// `EXPIRE_PARTITIONS`) written `key=value/key2=value2` in partition key order for display, NULL
/// as `NULL` and empty, blank or otherwise ambiguous strings quoted (`p=''`, `p=' '`,
/// `p='NULL'`), one per distinct partition value (use `paimon_cleanup_report_partition_key` /
/// `_value` for exact values). In a dry run: what would be removed. 0 for other kinds and for
/// NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_name_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.names.len()) }
}

/// Returns name `index` (below `paimon_cleanup_report_name_count`), or NULL when out of range or
/// `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_name(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.names.get(index).map_or(ptr::null(), |n| n.as_ptr())
        })
    }
}

/// Returns the number of requested items that did not exist, so nothing was done for them (the
/// tag of a `DELETE_TAG` that is not there). 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_missing_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.missing.len()) }
}

/// Returns missing item `index` (below `paimon_cleanup_report_missing_count`), or NULL when out of
/// range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_missing(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.missing.get(index).map_or(ptr::null(), |n| n.as_ptr())
        })
    }
}

/// Returns the number of fields (partition keys) of dropped partition `index` (below
/// `paimon_cleanup_report_name_count` of a `DROP_PARTITIONS` / `EXPIRE_PARTITIONS` report); 0 when
/// out of range, for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_partition_field_count(
    report: *const PaimonCleanupReport,
    index: usize,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, 0, |r| {
            r.partitions.get(index).map_or(0, |p| p.fields.len())
        })
    }
}

/// Returns the key of field `field` of dropped partition `index`, or NULL when either is out of
/// range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_partition_key(
    report: *const PaimonCleanupReport,
    index: usize,
    field: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.partitions
                .get(index)
                .and_then(|p| p.fields.get(field))
                .map_or(ptr::null(), |(k, _)| k.as_ptr())
        })
    }
}

/// Returns the value of field `field` of dropped partition `index` as the text that, given back in
/// a `PaimonCleanupPartitionSpec`, names exactly this value: the table's default partition name
/// for NULL, a string key's value verbatim (possibly empty or blank: the NULL, `''` and `' '`
/// partitions share a directory but are reported apart), other types as in the partition
/// directory name. NULL when either index is out of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_partition_value(
    report: *const PaimonCleanupReport,
    index: usize,
    field: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.partitions
                .get(index)
                .and_then(|p| p.fields.get(field))
                .map_or(ptr::null(), |(_, v)| v.as_ptr())
        })
    }
}

/// Returns how many data files a partition drop or expiry marked deleted in its commit(s) (in a
/// dry run: would mark). The files themselves stay until a snapshot expiry removes the snapshots
/// that still reference them. 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_files_marked_deleted(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.files_marked_deleted) }
}

/// Returns the rows of the files counted by `paimon_cleanup_report_files_marked_deleted`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_rows_marked_deleted(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.rows_marked_deleted) }
}

/// Returns the bytes of the files counted by `paimon_cleanup_report_files_marked_deleted`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_bytes_marked_deleted(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.bytes_marked_deleted) }
}

/// Returns how many snapshots the run committed (partition drop / expiry: one OVERWRITE snapshot
/// per batch; none in a dry run). 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_committed_snapshot_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.committed.len()) }
}

/// Returns the id of committed snapshot `index` (in commit order), or 0 when out of range or
/// `report` is NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_committed_snapshot_id(
    report: *const PaimonCleanupReport,
    index: usize,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.committed.get(index).copied().unwrap_or(0)) }
}

/// Returns the cut-off an orphan-file removal used (milliseconds since the Unix epoch): only files
/// modified before it were candidates. 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_cutoff_ms(
    report: *const PaimonCleanupReport,
) -> i64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.cutoff_ms.unwrap_or(0)) }
}

/// Returns how many files an orphan-file removal examined: files in the directories it lists that
/// are older than the cut-off. Each was then referenced, vetoed, kept with a warning, or deleted
/// (in a dry run: listed as deletable). 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_candidates(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.candidates) }
}

/// Returns how many candidates an orphan-file removal kept because a snapshot, tag, branch or
/// changelog references them. 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_referenced(
    report: *const PaimonCleanupReport,
) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.referenced) }
}

/// Returns how many candidates an orphan-file removal kept because the caller's veto callback
/// returned true for them. 0 for other kinds and for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_vetoed(report: *const PaimonCleanupReport) -> u64 {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.vetoed) }
}

/// Returns the number of warnings: things the run deliberately did not touch and why (for an
/// orphan-file removal: directories it could not list, branches without a schema, files kept
/// because their name is referenced at another location). For `MAINTAIN` every step's, in step
/// order. 0 for NULL.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_warning_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.list_len(PaimonCleanupReport::own_warnings)) }
}

/// Returns warning `index` (below `paimon_cleanup_report_warning_count`) as readable text, or NULL
/// when out of range or `report` is NULL.
///
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_warning(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.list_get(PaimonCleanupReport::own_warnings, index)
                .map_or(ptr::null(), |w| w.as_ptr())
        })
    }
}

/// Returns the number of sub-reports: for `MAINTAIN`, one per step that ran, in the order they
/// ran (`EXPIRE_TAGS`, `EXPIRE_CONSUMERS`, `EXPIRE_SNAPSHOTS`, `EXPIRE_CHANGELOGS`; a step the
/// table's options do not ask for is absent). 0 for other kinds and for NULL. The parent's file
/// counts, bytes and removed directories are the sums of its steps'; its failures, paths and
/// warnings are its steps', concatenated in step order.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_step_count(
    report: *const PaimonCleanupReport,
) -> usize {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, 0, |r| r.steps.len()) }
}

/// Returns sub-report `index` (below `paimon_cleanup_report_step_count`), or NULL when out of
/// range or `report` is NULL. Read it with the same `paimon_cleanup_report_*` accessors.
///
/// Ownership: borrowed from (owned by) `report`: valid until `report` is freed; never pass it to
/// `paimon_cleanup_report_free`.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_step(
    report: *const PaimonCleanupReport,
    index: usize,
) -> *const PaimonCleanupReport {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe {
        read(report, ptr::null(), |r| {
            r.steps
                .get(index)
                .map_or(ptr::null(), |(_, s)| s as *const PaimonCleanupReport)
        })
    }
}

/// Returns the whole report as one JSON object, NUL-terminated UTF-8: the same document the CLI
/// prints with `--json` for the same operation (every field, including the kind-specific ones
/// that have no accessor, and the path listing). An empty string for NULL.
///
/// Built on the first call (memory proportional to the path listing) and cached.
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_json(
    report: *const PaimonCleanupReport,
) -> *const c_char {
    static EMPTY: &str = "\0";
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, EMPTY.as_ptr().cast(), |r| r.json_text().as_ptr()) }
}

/// Frees a report and every string borrowed from it. NULL is accepted and ignored.
///
/// Ownership: takes back ownership of `report`. Free each report exactly once.
/// Thread-safety: may be called from any thread, but not while another thread still reads the
/// report.
///
/// # Safety
/// `report` must be NULL or a report handed out by this library and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_free(report: *mut PaimonCleanupReport) {
    boundary_infallible((), || {
        if !report.is_null() {
            // SAFETY: created by `Box::into_raw` when the report was handed out.
            drop(unsafe { Box::from_raw(report) });
        }
    })
}
