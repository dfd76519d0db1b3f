//! What a report names: the class of a deleted file and one deleted path.

use serde::Serialize;

/// What kind of file a deletion removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileClass {
    /// Data files (and their extra files).
    Data,
    /// Changelog data files.
    ChangelogData,
    /// Manifest files.
    Manifest,
    /// Manifest lists.
    ManifestList,
    /// Index manifests.
    IndexManifest,
    /// Index files (hash, deletion vectors, global index).
    Index,
    /// Statistics files.
    Statistics,
    /// `snapshot/snapshot-N` files.
    SnapshotMeta,
    /// `changelog/changelog-N` files.
    ChangelogMeta,
    /// Tag files.
    TagMeta,
    /// Consumer files.
    ConsumerMeta,
    /// Anything else (temp files, unknown leftovers found by orphan cleanup).
    Other,
}

impl FileClass {
    /// This class's position in [`FileClass::ALL`]: one byte, for records in temporary files
    /// (the report's spilled paths, spilled candidates).
    pub(crate) fn code(self) -> u8 {
        FileClass::ALL.iter().position(|x| *x == self).unwrap_or(0) as u8
    }

    /// The class at `code` in [`FileClass::ALL`] ([`FileClass::code`]); `Other` for a code
    /// out of range.
    pub(crate) fn from_code(code: u8) -> FileClass {
        FileClass::ALL
            .get(code as usize)
            .copied()
            .unwrap_or(FileClass::Other)
    }

    /// Every class, in report order.
    pub const ALL: [FileClass; 12] = [
        FileClass::Data,
        FileClass::ChangelogData,
        FileClass::Manifest,
        FileClass::ManifestList,
        FileClass::IndexManifest,
        FileClass::Index,
        FileClass::Statistics,
        FileClass::SnapshotMeta,
        FileClass::ChangelogMeta,
        FileClass::TagMeta,
        FileClass::ConsumerMeta,
        FileClass::Other,
    ];
}

/// One deleted (or, in a dry run, deletable) file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeletedPath {
    /// Its class.
    pub class: FileClass,
    /// Its location, relative to the table root when under it.
    pub path: String,
}
