//! Local filesystem backend, written directly against `std::fs` so that names stay byte-exact,
//! hidden files are listed and empty directories can be removed. Every function here blocks; the
//! async [`crate::storage::Storage`] runs them on tokio's blocking pool.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::{DirListing, FileStatus, Location};
use crate::error::{Error, Result};

/// The filesystem path of a `file://` location.
pub(crate) fn path_of(loc: &Location) -> Result<&Path> {
    loc.local_path()
        .ok_or_else(|| Error::Internal(format!("{loc} is not a local location")))
}

/// Maps an I/O error on `loc` to the crate's error (`NotFound` kept distinct).
pub(crate) fn io_error(loc: &Location, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::NotFound {
        Error::NotFound {
            path: loc.to_string(),
        }
    } else {
        Error::storage(loc.as_str(), e)
    }
}

/// True for errors meaning "there is no such directory".
fn is_missing_dir(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Modification time in epoch milliseconds. A platform without modification times yields
/// `i64::MAX` ("brand new"), so age-based cleanup never deletes a file of unknown age.
fn mtime_ms(meta: &fs::Metadata) -> i64 {
    match meta.modified() {
        Ok(t) => match t.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
        },
        Err(_) => i64::MAX,
    }
}

fn status(location: Location, meta: &fs::Metadata) -> FileStatus {
    FileStatus {
        location,
        size: meta.len(),
        last_modified_ms: mtime_ms(meta),
    }
}

/// What one directory entry is, for listing purposes.
enum Entry {
    File(fs::Metadata),
    Dir,
    Skip,
}

/// Classifies an entry without following directory symlinks: a symlink to a file (or a broken
/// symlink) is reported as a file (deleting it removes only the link), a symlink to a directory
/// is skipped so listings never leave the table's tree, and sockets/FIFOs/devices are skipped.
fn classify(entry: &fs::DirEntry) -> io::Result<Entry> {
    let ft = entry.file_type()?;
    if ft.is_dir() {
        return Ok(Entry::Dir);
    }
    if ft.is_file() {
        return Ok(Entry::File(entry.metadata()?));
    }
    if ft.is_symlink() {
        let path = entry.path();
        return match fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(Entry::File(m)),
            Ok(m) if m.is_dir() => {
                tracing::warn!(path = %path.display(), "not following symlinked directory");
                Ok(Entry::Skip)
            }
            Ok(_) => Ok(Entry::Skip),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Ok(Entry::File(fs::symlink_metadata(&path)?))
            }
            Err(e) => Err(e),
        };
    }
    Ok(Entry::Skip)
}

/// Immediate children of `dir`; a missing directory (or a file) gives an empty listing.
pub(crate) fn list_dir(dir: &Location) -> Result<DirListing> {
    let path = path_of(dir)?;
    let rd = match fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) if is_missing_dir(&e) => return Ok(DirListing::default()),
        Err(e) => return Err(io_error(dir, e)),
    };
    let mut out = DirListing::default();
    for entry in rd {
        let entry = entry.map_err(|e| Error::storage(dir.as_str(), e))?;
        let os_name = entry.file_name();
        let Some(name) = os_name.to_str() else {
            tracing::warn!(dir = %dir, name = ?os_name, "skipping entry whose name is not UTF-8");
            continue;
        };
        let child = dir.child(name);
        match classify(&entry) {
            Ok(Entry::File(meta)) => out.files.push(status(child, &meta)),
            Ok(Entry::Dir) => out.dirs.push(child),
            Ok(Entry::Skip) => {}
            // Removed between readdir and stat: it is simply not there any more.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::storage(child.as_str(), e)),
        }
    }
    // Every entry is `dir` + `/name`: comparing what follows the shared prefix gives the same
    // order as comparing whole locations, without rescanning the prefix.
    let prefix = dir.as_str();
    if out
        .files
        .iter()
        .all(|f| f.location.as_str().starts_with(prefix))
    {
        let n = prefix.len();
        out.files
            .sort_unstable_by(|a, b| a.location.as_str()[n..].cmp(&b.location.as_str()[n..]));
    } else {
        out.files.sort_by(|a, b| a.location.cmp(&b.location));
    }
    out.dirs.sort();
    Ok(out)
}

/// Immediate children of a metadata directory (`snapshot/`, `tag/`, `branch/`, ...) as Paimon
/// readers see them: symlinks are followed (a symlinked branch directory is a branch, a
/// symlinked tag file a tag). An entry that cannot be interpreted is an error, never skipped: a
/// name that is not UTF-8, a dangling symlink, or anything that is neither a regular file nor a
/// directory (FIFO, socket, device). A missing directory gives an empty listing; an entry
/// removed while listed is left out.
pub(crate) fn list_metadata_dir(dir: &Location) -> Result<DirListing> {
    let path = path_of(dir)?;
    let rd = match fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) if is_missing_dir(&e) => return Ok(DirListing::default()),
        Err(e) => return Err(io_error(dir, e)),
    };
    let refuse = |what: String| Error::malformed("metadata directory", dir.as_str(), what);
    let mut out = DirListing::default();
    for entry in rd {
        let entry = entry.map_err(|e| Error::storage(dir.as_str(), e))?;
        let os_name = entry.file_name();
        let Some(name) = os_name.to_str() else {
            return Err(refuse(format!(
                "entry {os_name:?} has a name that is not UTF-8; refusing to guess what it is"
            )));
        };
        let child = dir.child(name);
        let meta = match fs::metadata(entry.path()) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match fs::symlink_metadata(entry.path()) {
                    // Removed between readdir and stat: it is simply not there any more.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    _ => return Err(refuse(format!("entry `{name}` is a dangling symlink"))),
                }
            }
            Err(e) => return Err(Error::storage(child.as_str(), e)),
        };
        if meta.is_file() {
            out.files.push(status(child, &meta));
        } else if meta.is_dir() {
            out.dirs.push(child);
        } else {
            return Err(refuse(format!(
                "entry `{name}` is neither a regular file nor a directory"
            )));
        }
    }
    out.files.sort_by(|a, b| a.location.cmp(&b.location));
    out.dirs.sort();
    Ok(out)
}

/// Every file below `dir`, recursively (directory symlinks are not followed).
pub(crate) fn list_tree(dir: &Location) -> Result<Vec<FileStatus>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        let listing = list_dir(&d)?;
        files.extend(listing.files);
        stack.extend(listing.dirs);
    }
    files.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(files)
}

/// Status of a regular file (following symlinks); `None` if absent or not a file.
pub(crate) fn head(loc: &Location) -> Result<Option<FileStatus>> {
    match fs::metadata(path_of(loc)?) {
        Ok(m) if m.is_file() => Ok(Some(status(loc.clone(), &m))),
        Ok(_) => Ok(None),
        Err(e) if is_missing_dir(&e) => Ok(None),
        Err(e) => Err(io_error(loc, e)),
    }
}

/// Whole content of a file.
pub(crate) fn get(loc: &Location) -> Result<bytes::Bytes> {
    fs::read(path_of(loc)?)
        .map(bytes::Bytes::from)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotADirectory => Error::NotFound {
                path: loc.to_string(),
            },
            _ => io_error(loc, e),
        })
}

/// The parent directory of `loc`, created if missing.
fn ensure_parent(loc: &Location) -> Result<PathBuf> {
    let parent = loc
        .parent()
        .ok_or_else(|| Error::InvalidArgument(format!("{loc} has no parent directory")))?;
    let parent_path = path_of(&parent)?.to_path_buf();
    fs::create_dir_all(&parent_path).map_err(|e| Error::storage(parent.as_str(), e))?;
    Ok(parent_path)
}

/// Writes `data` to a fresh hidden temp file next to `loc` (`.<name>.<uuid>.tmp`, the naming
/// Paimon uses, so orphan cleanup recognises leftovers) and syncs it.
fn write_temp(loc: &Location, parent: &Path, data: &[u8]) -> Result<PathBuf> {
    let tmp = parent.join(format!(".{}.{}.tmp", loc.name(), uuid::Uuid::new_v4()));
    let write = || -> io::Result<()> {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        return Err(Error::storage(loc.as_str(), e));
    }
    Ok(tmp)
}

/// Best effort: make a rename/link in `dir` durable.
fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Atomic overwrite: temp file + rename.
pub(crate) fn put(loc: &Location, data: &[u8]) -> Result<()> {
    let target = path_of(loc)?;
    let parent = ensure_parent(loc)?;
    let tmp = write_temp(loc, &parent, data)?;
    if let Err(e) = fs::rename(&tmp, target) {
        let _ = fs::remove_file(&tmp);
        return Err(Error::storage(loc.as_str(), e));
    }
    sync_dir(&parent);
    Ok(())
}

/// Exclusive create: temp file, then `link(2)` onto the target, which fails if the target exists
/// (atomic: readers see either nothing or the whole content). Filesystems without hard links
/// fall back to an `O_CREAT|O_EXCL` open of the target (still exclusive).
pub(crate) fn put_if_absent(loc: &Location, data: &[u8]) -> Result<bool> {
    let target = path_of(loc)?;
    let parent = ensure_parent(loc)?;
    let tmp = write_temp(loc, &parent, data)?;
    let linked = fs::hard_link(&tmp, target);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            sync_dir(&parent);
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => {
            tracing::debug!(path = %loc, error = %e, "hard link failed, falling back to O_EXCL");
            create_exclusive(loc, target, data)
        }
    }
}

fn create_exclusive(loc: &Location, target: &Path, data: &[u8]) -> Result<bool> {
    let mut f = match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(Error::storage(loc.as_str(), e)),
    };
    if let Err(e) = f.write_all(data).and_then(|()| f.sync_all()) {
        drop(f);
        let _ = fs::remove_file(target);
        return Err(Error::storage(loc.as_str(), e));
    }
    Ok(true)
}

/// Removes one file; an absent file is fine; a directory is an error (never removed here).
pub(crate) fn remove_file(loc: &Location) -> Result<()> {
    match fs::remove_file(path_of(loc)?) {
        Ok(()) => Ok(()),
        Err(e) if is_missing_dir(&e) => Ok(()),
        Err(e) => Err(Error::storage(loc.as_str(), e)),
    }
}

/// Removes local files, each only after its directory, resolved through symlinks (once per
/// directory), proves to lie inside one of `roots`: a file under a directory that resolves
/// elsewhere is refused, one whose directory is gone counts as deleted. Results keep the
/// indexes given.
pub(crate) fn checked_remove_files(
    files: Vec<(usize, Location)>,
    roots: &[Location],
) -> Vec<(usize, Result<()>)> {
    let canonical = canonical_roots(roots);
    let mut checked: HashMap<PathBuf, Result<RealCheck>> = HashMap::new();
    let mut out = Vec::with_capacity(files.len());
    for (i, loc) in files {
        let parent = match path_of(&loc).map(|p| p.parent()) {
            Ok(Some(p)) => p,
            Ok(None) => {
                out.push((
                    i,
                    Err(Error::storage(
                        loc.as_str(),
                        "a file location has no directory",
                    )),
                ));
                continue;
            }
            Err(e) => {
                out.push((i, Err(e)));
                continue;
            }
        };
        if !checked.contains_key(parent) {
            let check = real_check(parent, &canonical, false);
            checked.insert(parent.to_path_buf(), check);
        }
        let r = match checked.get(parent) {
            Some(Ok(RealCheck::Inside)) => remove_file(&loc),
            Some(Ok(RealCheck::Absent)) => Ok(()),
            Some(Ok(RealCheck::Outside)) => {
                tracing::warn!(path = %loc, "delete refused: resolves outside the roots");
                Err(super::refused(
                    &loc,
                    "its directory resolves (through a symlink) outside the allowed roots",
                ))
            }
            Some(Err(e)) => Err(Error::storage(loc.as_str(), e.to_string())),
            None => Err(Error::Internal(format!("no containment check for {loc}"))),
        };
        out.push((i, r));
    }
    out
}

/// Non-recursive `rmdir`: `Ok(true)` if removed, `Ok(false)` if not empty or absent.
pub(crate) fn remove_dir_if_empty(dir: &Location) -> Result<bool> {
    match fs::remove_dir(path_of(dir)?) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => Ok(false),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTEMPTY) | Some(libc::EEXIST)) => {
            Ok(false)
        }
        Err(e) => Err(Error::storage(dir.as_str(), e)),
    }
}

/// Resolved (symlink-free) paths of the local allowed roots that exist.
pub(crate) fn canonical_roots(roots: &[Location]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter_map(|r| r.local_path())
        .filter_map(|p| fs::canonicalize(p).ok())
        .collect()
}

/// Outcome of the physical containment check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RealCheck {
    /// The path resolves inside an allowed root.
    Inside,
    /// The path (or its directory) does not exist.
    Absent,
    /// The path resolves outside every allowed root (through a symlink).
    Outside,
}

/// Second, physical layer of the delete guard: resolves symlinks in `dir` and checks that the
/// result lies inside one of `roots` (already canonical); with `strict` it must lie strictly
/// inside (used for directories that are about to be removed).
pub(crate) fn real_check(dir: &Path, roots: &[PathBuf], strict: bool) -> Result<RealCheck> {
    let real = match fs::canonicalize(dir) {
        Ok(p) => p,
        Err(e) if is_missing_dir(&e) => return Ok(RealCheck::Absent),
        Err(e) => return Err(Error::storage(dir.display().to_string(), e)),
    };
    let inside = roots
        .iter()
        .any(|r| real.starts_with(r) && !(strict && real == *r));
    Ok(if inside {
        RealCheck::Inside
    } else {
        RealCheck::Outside
    })
}
