//! Local filesystem backend, written directly against `std::fs` so that names stay byte-exact,
//! hidden files are listed and empty directories can be removed. Every function here blocks; the
//! async [`crate::storage::Storage`] runs them on tokio's blocking pool.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::{DirListing, FileStatus, Location, NameListing, StatFilter};
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

/// True for errors meaning "there is no such file" (for [`head`]: a file under a path that
/// is not a directory is not there either).
fn is_missing_file(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The outcome of failing to open the directory `dir` with `open_err`: `Ok(())` only if the
/// directory truly does not exist, decided with `lstat`, never from the kind of `open_err`.
/// Nothing may exist at the path itself (not even a dangling symlink), and the nearest
/// ancestor that exists must be a directory (or a symlink to one). Anything else is an error
/// naming the path and what is there: a regular file, a FIFO, socket or device, a dangling
/// symlink or a symlink loop (at the path or at a parent component), or a directory that
/// cannot be opened (permission denied). Taking such a path for an empty directory would
/// make a table look as if it had no snapshots, tags or branches.
fn absent_dir(dir: &Location, open_err: io::Error) -> Result<()> {
    let path = path_of(dir)?;
    let refuse = |what: String| {
        Error::storage(
            dir.as_str(),
            format!("{what}; refusing to take it for an empty or absent directory"),
        )
    };
    match fs::symlink_metadata(path) {
        Ok(meta) => Err(refuse(describe_not_dir(path, &meta, &open_err))),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            // Nothing at the path, or a parent component that is not a directory: the nearest
            // ancestor that exists must be a directory (or a symlink to one).
            let mut at = path.parent();
            while let Some(p) = at {
                match fs::symlink_metadata(p) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => at = p.parent(),
                    Err(e) => {
                        return Err(refuse(format!(
                            "its parent component {} cannot be examined ({e})",
                            p.display()
                        )))
                    }
                    Ok(_) if fs::metadata(p).is_ok_and(|m| m.is_dir()) => {
                        return if e.kind() == io::ErrorKind::NotFound {
                            Ok(())
                        } else {
                            Err(refuse(format!(
                                "a parent component is not a directory ({e})"
                            )))
                        };
                    }
                    Ok(meta) => {
                        return Err(refuse(format!(
                            "its parent component {} {}",
                            p.display(),
                            describe_not_dir(p, &meta, &open_err)
                        )))
                    }
                }
            }
            Err(refuse(format!("no parent of it exists ({e})")))
        }
        Err(e) => Err(refuse(format!("it cannot be examined ({e})"))),
    }
}

/// What is at `path` (whose `lstat` gave `meta`) when it could not be opened as a directory
/// (`open_err`): "is a regular file", "is a dangling symlink", ...
fn describe_not_dir(path: &Path, meta: &fs::Metadata, open_err: &io::Error) -> String {
    let ft = meta.file_type();
    if ft.is_symlink() {
        return match fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                format!("is a symlink to a directory that cannot be opened ({open_err})")
            }
            Ok(m) if m.is_file() => "is a symlink to a regular file, not a directory".to_string(),
            Ok(m) => format!(
                "is a symlink to {}, not a directory",
                special_kind(&m.file_type())
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                "is a dangling symlink (its target does not exist)".to_string()
            }
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
                "is a symlink loop".to_string()
            }
            Err(e) => format!("is a symlink whose target cannot be examined ({e})"),
        };
    }
    if ft.is_dir() {
        format!("is a directory that cannot be opened ({open_err})")
    } else if ft.is_file() {
        "is a regular file, not a directory".to_string()
    } else {
        format!("is {}, not a directory", special_kind(&ft))
    }
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

/// What a special file is, for error messages.
fn special_kind(ft: &fs::FileType) -> &'static str {
    if ft.is_fifo() {
        "a named pipe (FIFO)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The error for a special file (FIFO, socket, device) where a file was expected: never
/// skipped silently, never read (reading a FIFO blocks for ever).
fn not_regular(path: &str, ft: &fs::FileType) -> Error {
    Error::storage(
        path,
        format!(
            "it is {}, not a regular file; refusing to read or list it as a file",
            special_kind(ft)
        ),
    )
}

/// Classifies an entry without following directory symlinks: a symlink to a file (or a broken
/// symlink) is reported as a file (deleting it removes only the link), a symlink to a directory
/// is skipped so listings never leave the table's tree. A FIFO, socket or device (or a symlink
/// to one) is an error: where a file is expected it must be a regular file.
fn classify(entry: &fs::DirEntry) -> Result<Entry> {
    let ft = entry
        .file_type()
        .map_err(|e| Error::storage(entry.path().display().to_string(), e))?;
    classify_as(entry, ft)
}

/// [`classify`] of an entry whose type (from the directory entry, or an `lstat` where the
/// filesystem does not give it) is `ft`.
fn classify_as(entry: &fs::DirEntry, ft: fs::FileType) -> Result<Entry> {
    classify_path(|| entry.path(), ft, || entry.metadata())
}

/// [`classify`] of the entry at `path` (built only when needed) whose type is `ft`;
/// `regular_meta` gives a regular file's own metadata (not following links).
fn classify_path(
    path: impl Fn() -> PathBuf,
    ft: fs::FileType,
    regular_meta: impl FnOnce() -> io::Result<fs::Metadata>,
) -> Result<Entry> {
    let io_err = |e: io::Error| Error::storage(path().display().to_string(), e);
    if ft.is_dir() {
        return Ok(Entry::Dir);
    }
    if ft.is_file() {
        return Ok(Entry::File(regular_meta().map_err(io_err)?));
    }
    if ft.is_symlink() {
        let path = path();
        return match fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(Entry::File(m)),
            Ok(m) if m.is_dir() => {
                tracing::warn!(path = %path.display(), "not following symlinked directory");
                Ok(Entry::Skip)
            }
            Ok(m) => Err(not_regular(&path.display().to_string(), &m.file_type())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Ok(Entry::File(fs::symlink_metadata(&path).map_err(io_err)?))
            }
            Err(e) => Err(io_err(e)),
        };
    }
    Err(not_regular(&path().display().to_string(), &ft))
}

/// Walks the immediate children of `dir`, calling `on_file` with each file's name and metadata
/// and `on_dir` with each sub-directory's name (symlinked directories skipped, names that are
/// not UTF-8 skipped with a warning, entries removed while listed left out, a FIFO, socket or
/// device an error). A directory that truly does not exist has no children; a path that is
/// anything else than a readable directory is an error ([`absent_dir`]).
fn scan(
    dir: &Location,
    mut on_file: impl FnMut(&str, &fs::Metadata) -> Result<()>,
    mut on_dir: impl FnMut(&str),
) -> Result<()> {
    let path = path_of(dir)?;
    let rd = match fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) => return absent_dir(dir, e),
    };
    for entry in rd {
        let entry = entry.map_err(|e| Error::storage(dir.as_str(), e))?;
        let os_name = entry.file_name();
        let Some(name) = os_name.to_str() else {
            tracing::warn!(dir = %dir, name = ?os_name, "skipping entry whose name is not UTF-8");
            continue;
        };
        match classify(&entry) {
            Ok(Entry::File(meta)) => on_file(name, &meta)?,
            Ok(Entry::Dir) => on_dir(name),
            Ok(Entry::Skip) => {}
            Err(e) => vanished_or(dir, name, &entry.path(), e)?,
        }
    }
    Ok(())
}

/// The outcome of failing to classify or `stat` the entry `name` of `dir` with `e`: nothing if
/// it was removed meanwhile (it is simply not there any more), else the error, naming the
/// entry.
fn vanished_or(dir: &Location, name: &str, path: &Path, e: Error) -> Result<()> {
    match e {
        Error::Storage { message, .. } if is_vanished(path) => {
            tracing::debug!(path = %dir.child(name), error = %message, "entry vanished while listed");
            Ok(())
        }
        Error::Storage { message, .. } => Err(Error::storage(dir.child(name).as_str(), message)),
        e => Err(e),
    }
}

/// Bytes of directory entries read per `getdents64` call by [`scan_filtered`].
const DIRENT_BUFFER: usize = 32 * 1024;

/// [`scan`] for [`list_dir_names`] with a filter. The directory is read with `getdents64`
/// (no allocation per entry) and each entry's type taken from the entry itself: the regular
/// files are collected by name, `filter` says which of them need their size and time, and
/// only those are `statx`ed, relative to the open directory. Every other entry is classified
/// as [`scan`] does (a sub-directory by its type; a symlink, an entry of unknown type or a
/// special file after an `lstat`).
fn scan_filtered(
    dir: &Location,
    filter: &dyn StatFilter,
    index: usize,
    out: &mut NameListing,
    mut on_dir: impl FnMut(&str),
) -> Result<()> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, StatxFlags};
    let path = path_of(dir)?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) => {
            return absent_dir(dir, io::Error::from(e));
        }
    };
    // The regular files' names, one after the other.
    let mut names = String::new();
    let mut ends: Vec<usize> = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(DIRENT_BUFFER);
    let mut entries = RawDir::new(&fd, buf.spare_capacity_mut());
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| Error::storage(dir.as_str(), io::Error::from(e)))?;
        let raw = entry.file_name();
        let Ok(name) = raw.to_str() else {
            tracing::warn!(dir = %dir, name = ?raw, "skipping entry whose name is not UTF-8");
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        match entry.file_type() {
            FileType::RegularFile => {
                names.push_str(name);
                ends.push(names.len());
            }
            FileType::Directory => on_dir(name),
            _ => {
                // A symlink, an unknown type or a special file: as `scan` (rare).
                let at = path.join(name);
                let classified = fs::symlink_metadata(&at)
                    .map_err(|e| Error::storage(at.display().to_string(), e))
                    .and_then(|m| classify_path(|| at.clone(), m.file_type(), || Ok(m)));
                match classified {
                    Ok(Entry::File(meta)) => out.push(name, meta.len(), mtime_ms(&meta))?,
                    Ok(Entry::Dir) => on_dir(name),
                    Ok(Entry::Skip) => {}
                    Err(e) => vanished_or(dir, name, &at, e)?,
                }
            }
        }
    }
    drop(buf);
    let mut start = 0;
    let listed: Vec<&str> = ends
        .iter()
        .map(|end| {
            let name = names.get(start..*end).unwrap_or("");
            start = *end;
            name
        })
        .collect();
    let mut want = vec![true; listed.len()];
    filter.select(index, dir, &listed, &mut want);
    for (name, want) in listed.iter().zip(&want) {
        if !*want {
            out.push_unstated(name)?;
            continue;
        }
        let stat = rustix::fs::statx(
            &fd,
            *name,
            AtFlags::SYMLINK_NOFOLLOW,
            StatxFlags::SIZE | StatxFlags::MTIME,
        );
        match stat {
            Ok(st) => {
                out.push(name, st.stx_size, statx_mtime_ms(&st))?;
            }
            Err(rustix::io::Errno::NOSYS) => {
                // No `statx` (an old kernel, a sandbox): by path.
                let at = path.join(name);
                match fs::symlink_metadata(&at) {
                    Ok(meta) => out.push(name, meta.len(), mtime_ms(&meta))?,
                    Err(e) => {
                        vanished_or(dir, name, &at, Error::storage(at.display().to_string(), e))?
                    }
                }
            }
            Err(e) => {
                let at = path.join(name);
                vanished_or(
                    dir,
                    name,
                    &at,
                    Error::storage(at.display().to_string(), io::Error::from(e)),
                )?
            }
        }
    }
    Ok(())
}

/// Checks each of `dirs`, directories of the table's layout: each must be a directory this
/// process can open (symlinks followed) or truly absent ([`absent_dir`]); anything else is an
/// error naming the path. Nothing is listed.
pub(crate) fn check_dirs(dirs: &[Location]) -> Result<()> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    for dir in dirs {
        if let Err(e) = rustix::fs::open(path_of(dir)?, flags, Mode::empty()) {
            absent_dir(dir, io::Error::from(e))?;
        }
    }
    Ok(())
}

/// Immediate children of `dir`; a directory that truly does not exist gives an empty listing,
/// anything else that is not a readable directory an error ([`absent_dir`]).
pub(crate) fn list_dir(dir: &Location) -> Result<DirListing> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    scan(
        dir,
        |name, meta| {
            files.push(status(dir.child(name), meta));
            Ok(())
        },
        |name| dirs.push(dir.child(name)),
    )?;
    let mut out = DirListing { files, dirs };
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

/// [`list_dir`] with the files by name ([`NameListing`]), in no particular order: no location
/// is built per file. With a filter (and the directory's index in the caller's listing), only
/// the regular files it wants are `stat`ed ([`scan_filtered`]); the others have no status.
pub(crate) fn list_dir_names(
    dir: &Location,
    filter: Option<(&dyn StatFilter, usize)>,
) -> Result<NameListing> {
    let mut out = NameListing::default();
    let mut dirs = Vec::new();
    match filter {
        Some((f, index)) => {
            scan_filtered(dir, f, index, &mut out, |name| dirs.push(dir.child(name)))?
        }
        None => scan(
            dir,
            |name, meta| out.push(name, meta.len(), mtime_ms(meta)),
            |name| dirs.push(dir.child(name)),
        )?,
    }
    dirs.sort();
    out.dirs = dirs;
    Ok(out)
}

/// Immediate children of a metadata directory (`snapshot/`, `tag/`, `branch/`, ...) as Paimon
/// readers see them: symlinks are followed (a symlinked branch directory is a branch, a
/// symlinked tag file a tag). An entry that cannot be interpreted is an error, never skipped: a
/// name that is not UTF-8, a dangling symlink, or anything that is neither a regular file nor a
/// directory (FIFO, socket, device). A directory that truly does not exist gives an empty
/// listing; a path that is anything else than a readable directory (a regular file, a FIFO, a
/// dangling symlink, ...) is an error ([`absent_dir`]); an entry removed while listed is left
/// out.
pub(crate) fn list_metadata_dir(dir: &Location) -> Result<DirListing> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, StatxFlags};
    let path = path_of(dir)?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) => {
            return absent_dir(dir, io::Error::from(e)).map(|()| DirListing::default());
        }
    };
    let refuse = |what: String| Error::malformed("metadata directory", dir.as_str(), what);
    let mut out = DirListing::default();
    let mut buf: Vec<u8> = Vec::with_capacity(DIRENT_BUFFER);
    let mut entries = RawDir::new(&fd, buf.spare_capacity_mut());
    // Each entry `stat`ed relative to the open directory (no path walk per entry), following
    // symlinks as readers do.
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| Error::storage(dir.as_str(), io::Error::from(e)))?;
        let raw = entry.file_name();
        let Ok(name) = raw.to_str() else {
            return Err(refuse(format!(
                "entry {raw:?} has a name that is not UTF-8; refusing to guess what it is"
            )));
        };
        if name == "." || name == ".." {
            continue;
        }
        let child = dir.child(name);
        let want = StatxFlags::TYPE | StatxFlags::SIZE | StatxFlags::MTIME;
        let st = match rustix::fs::statx(&fd, name, AtFlags::empty(), want) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => {
                match rustix::fs::statx(&fd, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::TYPE) {
                    // Removed between readdir and stat: it is simply not there any more.
                    Err(rustix::io::Errno::NOENT) => continue,
                    _ => return Err(refuse(format!("entry `{name}` is a dangling symlink"))),
                }
            }
            // No `statx` (an old kernel, a sandbox): by path.
            Err(rustix::io::Errno::NOSYS) => return list_metadata_dir_by_path(dir),
            Err(e) => return Err(Error::storage(child.as_str(), io::Error::from(e))),
        };
        match FileType::from_raw_mode(st.stx_mode.into()) {
            FileType::RegularFile => out.files.push(FileStatus {
                location: child,
                size: st.stx_size,
                last_modified_ms: statx_mtime_ms(&st),
            }),
            FileType::Directory => out.dirs.push(child),
            _ => {
                return Err(refuse(format!(
                    "entry `{name}` is neither a regular file nor a directory"
                )))
            }
        }
    }
    drop(buf);
    out.files.sort_by(|a, b| a.location.cmp(&b.location));
    out.dirs.sort();
    Ok(out)
}

/// The modification time of `st` as [`mtime_ms`] gives it: whole milliseconds, rounded
/// towards the epoch; `i64::MAX` when the file system does not tell.
fn statx_mtime_ms(st: &rustix::fs::Statx) -> i64 {
    if st.stx_mask & rustix::fs::StatxFlags::MTIME.bits() == 0 {
        return i64::MAX;
    }
    let ns = i128::from(st.stx_mtime.tv_sec) * 1_000_000_000 + i128::from(st.stx_mtime.tv_nsec);
    i64::try_from(ns / 1_000_000).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// [`list_metadata_dir`] through paths (where `statx` is missing).
fn list_metadata_dir_by_path(dir: &Location) -> Result<DirListing> {
    let path = path_of(dir)?;
    let rd = match fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) => return absent_dir(dir, e).map(|()| DirListing::default()),
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

/// True if nothing exists at `path` any more (not even a dangling link).
fn is_vanished(path: &Path) -> bool {
    matches!(fs::symlink_metadata(path), Err(e) if e.kind() == io::ErrorKind::NotFound)
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

/// Status of a regular file (following symlinks); `None` if absent or a directory. A FIFO,
/// socket or device is an error (never "absent").
pub(crate) fn head(loc: &Location) -> Result<Option<FileStatus>> {
    match fs::metadata(path_of(loc)?) {
        Ok(m) if m.is_file() => Ok(Some(status(loc.clone(), &m))),
        Ok(m) if m.is_dir() => Ok(None),
        Ok(m) => Err(not_regular(loc.as_str(), &m.file_type())),
        Err(e) if is_missing_file(&e) => Ok(None),
        Err(e) => Err(io_error(loc, e)),
    }
}

/// Set once the kernel refused `O_NOATIME` (the process owns neither the files nor
/// `CAP_FOWNER`): later reads no longer ask for it.
static NOATIME_REFUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Opens `path` read-only for [`get`]: `O_NONBLOCK` (opening a FIFO returns at once instead of
/// waiting for a writer) and, where permitted, `O_NOATIME`, so that reading metadata does not
/// update (and write back) each file's access time. `O_NOATIME` is only allowed to the file's
/// owner (or with `CAP_FOWNER`): on `EPERM` the file is opened without it, and it is not asked
/// for again.
fn open_for_read(path: &Path) -> io::Result<fs::File> {
    use rustix::fs::{Mode, OFlags};
    use std::sync::atomic::Ordering;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if !NOATIME_REFUSED.load(Ordering::Relaxed) {
        match rustix::fs::open(path, flags | OFlags::NOATIME, Mode::empty()) {
            Ok(fd) => return Ok(fs::File::from(fd)),
            Err(rustix::io::Errno::PERM) => NOATIME_REFUSED.store(true, Ordering::Relaxed),
            Err(e) => return Err(io::Error::from(e)),
        }
    }
    rustix::fs::open(path, flags, Mode::empty())
        .map(fs::File::from)
        .map_err(io::Error::from)
}

/// Reads `file` to its end into a buffer sized once from its length `len` (from the `fstat`
/// already made): `len` bytes are read straight into the buffer's spare capacity, then one
/// read confirms the end (a file that grew meanwhile is read on to its new end; one that
/// shrank ends where its data does). No second `stat`, no seek, no growth of the buffer in
/// the common case, and the buffer is exactly as long as its capacity, so it becomes
/// [`bytes::Bytes`] without another allocation.
fn read_sized(mut file: &fs::File, len: u64) -> io::Result<Vec<u8>> {
    let mut buf: Vec<u8> = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    loop {
        if buf.len() == buf.capacity() {
            // Expected end: confirm it without growing the buffer.
            let mut probe = [0u8; 512];
            let n = loop {
                match io::Read::read(&mut file, &mut probe) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => break r?,
                }
            };
            if n == 0 {
                return Ok(buf);
            }
            buf.extend_from_slice(&probe[..n]);
            io::Read::read_to_end(&mut file, &mut buf)?;
            return Ok(buf);
        }
        match rustix::io::read(file, rustix::buffer::spare_capacity(&mut buf)) {
            Ok(0) => return Ok(buf),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(io::Error::from(e)),
        }
    }
}

/// Whole content of a regular file. The file is opened with `O_NONBLOCK` (and `O_NOATIME`
/// where permitted: [`open_for_read`]) and its handle is `fstat`ed: anything but a regular
/// file (FIFO, socket, device, directory) is refused before a byte is read. The content is
/// read into a buffer sized from that `fstat` ([`read_sized`]).
pub(crate) fn get(loc: &Location) -> Result<bytes::Bytes> {
    let not_found = |e: io::Error| match e.kind() {
        io::ErrorKind::NotADirectory => Error::NotFound {
            path: loc.to_string(),
        },
        _ => io_error(loc, e),
    };
    let file = open_for_read(path_of(loc)?).map_err(not_found)?;
    let meta = file.metadata().map_err(|e| io_error(loc, e))?;
    if !meta.is_file() {
        return Err(not_regular(loc.as_str(), &meta.file_type()));
    }
    let buf = read_sized(&file, meta.len()).map_err(|e| io_error(loc, e))?;
    Ok(bytes::Bytes::from(buf))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(p: &Path) -> Location {
        Location::parse(p.to_str().unwrap()).unwrap()
    }

    #[test]
    fn only_a_truly_absent_directory_lists_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("real")).unwrap();
        fs::write(d.join("real/f"), b"x").unwrap();
        fs::write(d.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).unwrap();
        std::os::unix::fs::symlink(d.join("loop"), d.join("loop")).unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("linked")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            d.join("pipe"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // Truly absent, also below an absent parent: empty.
        for absent in ["absent", "absent/deeper"] {
            let at = loc(&d.join(absent));
            assert!(list_metadata_dir(&at).unwrap().files.is_empty(), "{absent}");
            assert!(list_dir(&at).unwrap().files.is_empty(), "{absent}");
            assert_eq!(list_dir_names(&at, None).unwrap().file_count(), 0);
            check_dirs(&[at]).unwrap();
        }
        // A real directory and a symlink to one are listed.
        for present in ["real", "linked"] {
            let at = loc(&d.join(present));
            assert_eq!(list_metadata_dir(&at).unwrap().files.len(), 1, "{present}");
            check_dirs(&[at]).unwrap();
        }
        // Everything else is an error naming the path, from every listing.
        for (bad, says) in [
            ("file", "regular file"),
            ("dangling", "dangling symlink"),
            ("loop", "symlink loop"),
            ("pipe", "named pipe"),
            ("file/child", "parent component"),
            ("dangling/child", "dangling symlink"),
            ("dangling/a/b", "dangling symlink"),
        ] {
            let at = loc(&d.join(bad));
            let errors = [
                list_metadata_dir(&at).map(|_| ()).unwrap_err(),
                list_dir(&at).map(|_| ()).unwrap_err(),
                list_dir_names(&at, None).map(|_| ()).unwrap_err(),
                list_tree(&at).map(|_| ()).unwrap_err(),
                check_dirs(std::slice::from_ref(&at)).unwrap_err(),
            ];
            for e in errors {
                let text = e.to_string();
                assert!(!e.is_not_found(), "{bad}: {text}");
                assert!(
                    text.contains(at.as_str()) && text.contains(says),
                    "{bad}: {text}"
                );
            }
        }
    }

    #[test]
    fn get_reads_whole_files_of_any_size() {
        let dir = tempfile::tempdir().unwrap();
        for n in [0usize, 1, 511, 512, 513, 4096, 100_000] {
            let p = dir.path().join(format!("f{n}"));
            let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            fs::write(&p, &data).unwrap();
            let got = get(&loc(&p)).unwrap();
            assert_eq!(&got[..], &data[..], "{n} bytes");
        }
    }

    #[test]
    fn a_file_that_grew_or_shrank_after_its_stat_is_read_to_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
        fs::write(&p, &data).unwrap();
        // Sizes the stat could have given before the file reached its length, or after it
        // was cut: every byte there is comes back, nothing more.
        for stale in [0u64, 1, 100, 4999, 5000, 5001, 9000] {
            let file = open_for_read(&p).unwrap();
            let got = read_sized(&file, stale).unwrap();
            assert_eq!(got, data, "stat said {stale}");
        }
    }

    #[test]
    fn get_refuses_what_is_not_a_regular_file_and_reports_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = get(&loc(&dir.path().join("absent"))).unwrap_err();
        assert!(missing.is_not_found(), "{missing:?}");
        fs::write(dir.path().join("file"), b"x").unwrap();
        let under_file = get(&loc(&dir.path().join("file").join("child"))).unwrap_err();
        assert!(under_file.is_not_found(), "{under_file:?}");
        let err = get(&loc(dir.path())).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let fifo = dir.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let err = get(&loc(&fifo)).unwrap_err();
        assert!(err.to_string().contains("named pipe"), "{err}");
    }
}
