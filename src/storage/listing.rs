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

/// One file of a [`NameListing`]: where its name ends in the listing's name buffer, its size and
/// modification time, and whether those were read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NamedFile {
    end: u32,
    stated: bool,
    size: u64,
    last_modified_ms: i64,
}

/// Size and modification time of one listed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeAndTime {
    /// Length in bytes.
    pub size: u64,
    /// Last modification, epoch milliseconds (as [`FileStatus::last_modified_ms`]).
    pub last_modified_ms: i64,
}

/// One file of a [`NameListing`], by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedStatus<'a> {
    /// Its name in the listed directory (one path segment).
    pub name: &'a str,
    /// Its size and modification time; `None` when the listing did not read them because the
    /// caller's [`StatFilter`] said it does not need them (a local regular file that was then
    /// never `stat`ed).
    pub status: Option<SizeAndTime>,
}

/// Which listed files need their size and modification time
/// ([`super::Storage::list_dirs_by_name_filtered`]). On a local disk a file's name and type
/// come from the directory entry itself, but its size and modification time cost a `stat` each:
/// a caller that needs them for only some files says which, and the others are listed by name
/// alone. Object stores return size and time with every name anyway and do not ask.
///
/// Called on the blocking pool, once per listed directory, with the names of its regular files
/// (symlinks, entries of unknown type and special files are classified and `stat`ed as by
/// [`super::Storage::list_dir`], never filtered). `Send + Sync`.
pub trait StatFilter: Send + Sync {
    /// For the regular files `names` directly in `dir` (the `index`-th directory of the listing
    /// call): sets `want[i]` to false for each file whose size and modification time the caller
    /// does not need. `want` has one entry per name, all true on entry.
    fn select(&self, index: usize, dir: &Location, names: &[&str], want: &mut [bool]);
}

/// Immediate children of one directory, the files kept by name in one shared buffer instead of
/// one [`Location`] each ([`super::Storage::list_dirs_by_name`]): a listing of thousands of
/// files is a few allocations, and a caller computes what it needs from the directory and the
/// name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameListing {
    /// Every file name, one after the other.
    names: String,
    /// The files directly in the directory, in no particular order.
    files: Vec<NamedFile>,
    /// Sub-directories (object stores: common prefixes), sorted. Symlinked directories are not
    /// listed.
    pub dirs: Vec<Location>,
    /// Files the store returned that are not directly in the directory (an object store that
    /// spells keys differently), sorted; empty on local disks.
    pub elsewhere: Vec<FileStatus>,
}

impl NameListing {
    /// Adds a file named `name` directly in the directory. A listing whose names pass 4 GiB
    /// is an error.
    pub(crate) fn push(
        &mut self,
        name: &str,
        size: u64,
        last_modified_ms: i64,
    ) -> crate::error::Result<()> {
        self.names.push_str(name);
        let end = u32::try_from(self.names.len()).map_err(|_| {
            crate::error::Error::Unsupported(
                "a directory whose file names pass 4 GiB in total".into(),
            )
        })?;
        self.files.push(NamedFile {
            end,
            stated: true,
            size,
            last_modified_ms,
        });
        Ok(())
    }

    /// Adds a file named `name` directly in the directory whose size and modification time
    /// were not read ([`NamedStatus::status`] is `None`).
    pub(crate) fn push_unstated(&mut self, name: &str) -> crate::error::Result<()> {
        self.push(name, 0, i64::MAX)?;
        if let Some(f) = self.files.last_mut() {
            f.stated = false;
        }
        Ok(())
    }

    /// The listing of `dir` in this form: files directly in `dir` by name, others in
    /// [`NameListing::elsewhere`].
    pub fn from_listing(dir: &Location, listing: DirListing) -> crate::error::Result<Self> {
        let prefix = dir.as_str();
        let mut out = NameListing {
            dirs: listing.dirs,
            ..Default::default()
        };
        for f in listing.files {
            let full = f.location.as_str();
            let name = f.location.name();
            let direct = full.len() == prefix.len() + 1 + name.len()
                && full.starts_with(prefix)
                && full.as_bytes().get(prefix.len()) == Some(&b'/');
            if direct {
                out.push(name, f.size, f.last_modified_ms)?;
            } else {
                out.elsewhere.push(f);
            }
        }
        Ok(out)
    }

    /// The files directly in the directory, in no particular order.
    pub fn files(&self) -> impl Iterator<Item = NamedStatus<'_>> + '_ {
        let mut start = 0usize;
        self.files.iter().map(move |f| {
            let end = f.end as usize;
            let name = self.names.get(start..end).unwrap_or("");
            start = end;
            NamedStatus {
                name,
                status: f.stated.then_some(SizeAndTime {
                    size: f.size,
                    last_modified_ms: f.last_modified_ms,
                }),
            }
        })
    }

    /// Files directly in the directory.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// True if the directory has no child at all.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.dirs.is_empty() && self.elsewhere.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_strays_stay_apart() {
        let dir = Location::parse("memory://b/t/p=1/bucket-0").unwrap();
        let listing = DirListing {
            files: vec![
                FileStatus {
                    location: dir.join("a%20b=c"),
                    size: 3,
                    last_modified_ms: 7,
                },
                FileStatus {
                    location: dir.join("x/y"),
                    size: 1,
                    last_modified_ms: 2,
                },
                FileStatus {
                    location: dir.join("é"),
                    size: 0,
                    last_modified_ms: -1,
                },
            ],
            dirs: vec![dir.join("sub")],
        };
        let n = NameListing::from_listing(&dir, listing).unwrap();
        let files: Vec<(String, u64, i64)> = n
            .files()
            .map(|f| {
                let s = f.status.unwrap();
                (f.name.to_string(), s.size, s.last_modified_ms)
            })
            .collect();
        assert_eq!(
            files,
            vec![("a%20b=c".to_string(), 3, 7), ("é".to_string(), 0, -1)]
        );
        assert_eq!(n.file_count(), 2);
        // A file listed without its status says so.
        let mut m = n.clone();
        m.push_unstated("ref").unwrap();
        let last = m.files().last().unwrap();
        assert_eq!((last.name, last.status), ("ref", None));
        assert_eq!(m.file_count(), 3);
        assert_eq!(n.elsewhere.len(), 1);
        assert_eq!(n.dirs, vec![dir.join("sub")]);
        assert!(!n.is_empty());
        assert!(NameListing::default().is_empty());
        assert_eq!(NameListing::default().files().count(), 0);
    }
}
