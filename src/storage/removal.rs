//! What deleting one file found: removed, absent, or not said by the store.

/// What deleting one file found ([`super::Storage::delete_files_found`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The file was there and is gone now.
    Removed,
    /// Nothing was there: the store said so (a local `ENOENT`, a 404).
    Absent,
    /// The delete succeeded and the store does not say whether anything was there (S3's
    /// delete is idempotent and answers alike either way; so does the memory store).
    Unconfirmed,
}
