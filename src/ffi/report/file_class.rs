//! File classes: `PaimonCleanupFileClass`, its numbers and names.

use std::os::raw::c_char;

use crate::clean::report::FileClass;

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
    pub(super) fn name_nul(self) -> &'static str {
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
