//! What listings and `head` return: one file's status, one directory's immediate children.

use super::Location;

/// Size and modification time of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStatus {
    /// Where the file is.
    pub location: Location,
    /// Length in bytes.
    pub size: u64,
    /// Last modification, epoch milliseconds (`i64::MAX` when the platform cannot tell, so an
    /// age-based cleanup never considers such a file old).
    pub last_modified_ms: i64,
}

/// Immediate children of one directory, both sorted by location.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirListing {
    /// Regular files (on local disks also symlinks to files and broken symlinks).
    pub files: Vec<FileStatus>,
    /// Sub-directories (object stores: common prefixes). Symlinked directories are not listed.
    pub dirs: Vec<Location>,
}
