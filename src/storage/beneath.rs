//! Local deletes relative to directory handles that cannot be redirected: the physical layer of
//! the delete guard.
//!
//! An allowed root (table root or external data root) is opened once (it is the caller's
//! configuration and may itself be reached through symlinks). Every directory below it is then
//! opened from that handle with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS)`, or, where the kernel lacks `openat2` (`ENOSYS`, or `EPERM` from a
//! seccomp filter), one component at a time with `openat(O_DIRECTORY | O_NOFOLLOW)`. A symlink
//! anywhere below the root is refused, and a path can never leave the root. Files are then
//! removed with `unlinkat(dirfd, name)` and empty directories with `unlinkat(parentfd, name,
//! AT_REMOVEDIR)`, like a safe `rm -r`: swapping a directory for a symlink after its handle was
//! opened redirects nothing, since the handle keeps naming the directory that was checked.
//!
//! Every function here blocks; the storage layer runs them on the blocking pool.

use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{Location, Removal};
use crate::error::{Error, Result};

/// Why a directory below a root cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DirState {
    /// The directory (or a component on the way) does not exist: nothing in it to delete.
    Absent,
    /// A component is a symlink or the path leaves the root: nothing in it may be deleted.
    Refused(String),
}

/// Set once `openat2` turned out to be unavailable (old kernel, seccomp filter).
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Flags of a directory handle used as the base of `*at` calls. Not `O_PATH`: with it,
/// `O_NOFOLLOW` would open a trailing symlink itself instead of failing with `ELOOP`.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW
}

/// Opens `rel` (a relative path of normal components) beneath `root` without following any
/// symlink. `Ok(Err(state))` when it is absent or refused.
fn open_beneath(root: &OwnedFd, rel: &Path) -> io::Result<std::result::Result<OwnedFd, DirState>> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            other => {
                return Ok(Err(DirState::Refused(format!(
                    "path component {other:?} is not a plain name"
                ))))
            }
        }
    }
    if parts.is_empty() {
        return rustix::fs::openat(root, ".", dir_flags(), Mode::empty())
            .map(Ok)
            .map_err(io::Error::from);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let resolve = rustix::fs::ResolveFlags::BENEATH
            | rustix::fs::ResolveFlags::NO_SYMLINKS
            | rustix::fs::ResolveFlags::NO_MAGICLINKS;
        let path: PathBuf = parts.iter().collect();
        let mut walk = false;
        // EAGAIN: a concurrent rename somewhere on the path; the kernel asks for a retry.
        for _ in 0..8 {
            match rustix::fs::openat2(root, &path, dir_flags(), Mode::empty(), resolve) {
                Ok(fd) => return Ok(Ok(fd)),
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS) | Err(Errno::PERM) => {
                    tracing::debug!("openat2 unavailable; opening directories one by one");
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                    break;
                }
                // Some component is not a directory: a file (absent) or a trailing symlink
                // (the kernel checks O_DIRECTORY first); the walk below tells which.
                Err(Errno::NOTDIR) => {
                    walk = true;
                    break;
                }
                Err(e) => return classify_open_error(e),
            }
        }
        if !walk && !NO_OPENAT2.load(Ordering::Relaxed) {
            return Err(io::Error::other(
                "openat2 kept answering EAGAIN (directories renamed concurrently)",
            ));
        }
    }
    // Component by component: each `openat` of one plain name with O_NOFOLLOW | O_DIRECTORY
    // from the previous handle, so no symlink is followed and `..` never appears.
    let mut current: Option<OwnedFd> = None;
    for p in parts {
        let base: &OwnedFd = current.as_ref().unwrap_or(root);
        match rustix::fs::openat(base, p, dir_flags(), Mode::empty()) {
            Ok(fd) => current = Some(fd),
            // With O_DIRECTORY the kernel reports a symlink as ENOTDIR: look at it.
            Err(Errno::NOTDIR) => {
                return match rustix::fs::statat(base, p, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                        classify_open_error(Errno::LOOP)
                    }
                    Ok(_) | Err(Errno::NOENT) => Ok(Err(DirState::Absent)),
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => return classify_open_error(e),
        }
    }
    match current {
        Some(fd) => Ok(Ok(fd)),
        None => Err(io::Error::other("no directory opened")),
    }
}

/// Maps a failed directory open to absent / refused / error.
fn classify_open_error(e: Errno) -> io::Result<std::result::Result<OwnedFd, DirState>> {
    match e {
        Errno::NOENT | Errno::NOTDIR => Ok(Err(DirState::Absent)),
        // ELOOP: a symlink (O_NOFOLLOW, RESOLVE_NO_SYMLINKS); EXDEV: leaves the root
        // (RESOLVE_BENEATH).
        Errno::LOOP | Errno::XDEV => Ok(Err(DirState::Refused(
            "a directory on its path is a symlink (or leads outside the allowed root)".into(),
        ))),
        other => Err(other.into()),
    }
}

/// One allowed root, opened once.
struct OpenRoot {
    /// The root as configured (locations are matched against it).
    path: PathBuf,
    /// The root's handle, or why it cannot be used (absent: nothing below it exists).
    fd: std::result::Result<OwnedFd, DirState>,
}

/// A test hook called with a local directory's path right after its handle was opened for
/// deletes and before anything in it is unlinked
/// ([`crate::storage::Storage::before_unlink_in_dir`]).
#[doc(hidden)]
pub type DirHook = std::sync::Arc<dyn Fn(&std::path::Path) + Send + Sync>;

/// Directory handles beneath the allowed roots, each opened at most once (per instance; one
/// instance serves one group of deletes inside one blocking section).
pub(crate) struct Beneath {
    roots: Vec<OpenRoot>,
    /// By (root index, path relative to it).
    dirs: HashMap<(usize, PathBuf), std::result::Result<OwnedFd, DirState>>,
    /// The key of the directory used last (files come directory by directory: the next one
    /// is looked up without building a key).
    last: Option<(usize, PathBuf)>,
    /// Test hook run once per directory, after its handle is opened and before anything in it
    /// is removed.
    before_unlink: Option<DirHook>,
    /// The split of the last file removed, by its parent path.
    hot: Option<Hot>,
}

/// The split of a file's location ([`Beneath::split`]) kept for the next file with the same
/// parent path.
struct Hot {
    /// The parent path as text (everything before the last `/`).
    parent: String,
    /// Index of the root.
    root: usize,
    /// The directory relative to the root.
    dir: PathBuf,
}

/// A local path as text (locations are UTF-8).
fn loc_path_text(path: &Path) -> Option<&str> {
    path.to_str()
}

/// A last path component that is a plain file name: not empty, not `.` or `..`.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".."
}

impl Beneath {
    /// Opens the local allowed `roots` (others are ignored). A root that does not exist
    /// makes everything below it absent.
    pub(crate) fn open(roots: &[Location], before_unlink: Option<DirHook>) -> Beneath {
        let roots = roots
            .iter()
            .filter_map(|r| r.local_path().map(Path::to_path_buf))
            .map(|path| {
                let fd =
                    match rustix::fs::open(&path, dir_flags() & !OFlags::NOFOLLOW, Mode::empty()) {
                        Ok(fd) => Ok(fd),
                        Err(Errno::NOENT) | Err(Errno::NOTDIR) => Err(DirState::Absent),
                        Err(e) => Err(DirState::Refused(format!("cannot open the root: {e}"))),
                    };
                OpenRoot { path, fd }
            })
            .collect();
        Beneath {
            roots,
            dirs: HashMap::new(),
            last: None,
            before_unlink,
            hot: None,
        }
    }

    /// The root `path` lies strictly under (the deepest one), and the path relative to it.
    fn locate<'p>(&self, path: &'p Path) -> Option<(usize, &'p Path)> {
        self.roots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                path.strip_prefix(&r.path)
                    .ok()
                    .filter(|rel| rel.components().next().is_some())
                    .map(|rel| (i, rel, r.path.components().count()))
            })
            .max_by_key(|(_, _, depth)| *depth)
            .map(|(i, rel, _)| (i, rel))
    }

    /// The handle of directory `rel` beneath root `root`, opened on first use.
    fn dir(
        &mut self,
        root: usize,
        rel: &Path,
        loc: &Location,
    ) -> Result<std::result::Result<&OwnedFd, DirState>> {
        let key = match self.last.take() {
            Some((r, p)) if r == root && p.as_os_str() == rel.as_os_str() => (r, p),
            _ => (root, rel.to_path_buf()),
        };
        if !self.dirs.contains_key(&key) {
            let opened = match &self.roots[root].fd {
                Ok(root_fd) => {
                    open_beneath(root_fd, rel).map_err(|e| Error::storage(loc.as_str(), e))?
                }
                Err(state) => Err(state.clone()),
            };
            if let (Ok(_), Some(hook)) = (&opened, &self.before_unlink) {
                hook(&self.roots[root].path.join(rel));
            }
            self.dirs.insert(key.clone(), opened);
        }
        let key = self.last.insert(key);
        match self.dirs.get(key) {
            Some(Ok(fd)) => Ok(Ok(fd)),
            Some(Err(state)) => Ok(Err(state.clone())),
            None => Err(Error::Internal(format!("no directory handle for {loc}"))),
        }
    }

    /// Splits a local location into (root, directory relative to it, last name).
    fn split<'p>(&self, loc: &Location, path: &'p Path) -> Result<(usize, PathBuf, &'p str)> {
        let (root, rel) = self
            .locate(path)
            .ok_or_else(|| super::guard::refused(loc, "it is not under an allowed local root"))?;
        let name = rel
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| *n != "." && *n != "..")
            .ok_or_else(|| super::guard::refused(loc, "it has no plain file name"))?;
        let dir = rel.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok((root, dir, name))
    }

    /// Checks that the directory of `loc` resolves beneath its allowed root with no symlinked
    /// component (an absent directory passes: nothing in it exists to delete).
    pub(crate) fn check_dir_of(&mut self, loc: &Location) -> Result<()> {
        let path = super::local::path_of(loc)?;
        let (root, dir, _) = self.split(loc, path)?;
        match self.dir(root, &dir, loc)? {
            Ok(_) | Err(DirState::Absent) => Ok(()),
            Err(DirState::Refused(why)) => Err(super::guard::refused(loc, why)),
        }
    }

    /// Removes the file `loc` through its directory's handle: [`Removal::Removed`], or
    /// [`Removal::Absent`] when neither it nor its directory was there; a directory is an
    /// error (never removed here).
    pub(crate) fn remove_file(&mut self, loc: &Location) -> Result<Removal> {
        let path = super::local::path_of(loc)?;
        // Files come directory by directory: one with the same parent path as the previous one
        // (and a plain name) lies in the same directory beneath the same root, so the
        // component-wise split is done once per directory.
        let text = loc_path_text(path);
        let (parent, plain) = match text.and_then(|t| t.rsplit_once('/')) {
            Some((parent, name)) if is_plain_name(name) => (parent, Some(name)),
            _ => ("", None),
        };
        let hot = match (self.hot.take(), plain) {
            (Some(h), Some(_)) if h.parent == parent => Some(h),
            _ => None,
        };
        let (hot, name) = match (hot, plain) {
            (Some(h), Some(name)) => (h, name),
            _ => {
                let (root, dir, name) = self.split(loc, path)?;
                (
                    Hot {
                        parent: if plain.is_some() {
                            parent.to_string()
                        } else {
                            String::new()
                        },
                        root,
                        dir,
                    },
                    name,
                )
            }
        };
        let outcome = self.remove_in(hot.root, &hot.dir, name, loc);
        if plain.is_some() {
            self.hot = Some(hot);
        }
        outcome
    }

    /// Removes the file `name` of directory `dir` beneath root `root` (the split of `loc`).
    fn remove_in(
        &mut self,
        root: usize,
        dir: &Path,
        name: &str,
        loc: &Location,
    ) -> Result<Removal> {
        let fd = match self.dir(root, dir, loc)? {
            Ok(fd) => fd,
            Err(DirState::Absent) => return Ok(Removal::Absent),
            Err(DirState::Refused(why)) => {
                tracing::warn!(path = %loc, reason = %why, "delete refused");
                return Err(super::guard::refused(loc, why));
            }
        };
        match rustix::fs::unlinkat(fd, name, AtFlags::empty()) {
            Ok(()) => Ok(Removal::Removed),
            Err(Errno::NOENT) => Ok(Removal::Absent),
            Err(e) => Err(Error::storage(loc.as_str(), io::Error::from(e))),
        }
    }

    /// Removes `dir` if it is an empty directory (`unlinkat(parent, name, AT_REMOVEDIR)`, which
    /// never follows a symlink): `Ok(true)` if removed, `Ok(false)` if not empty or absent.
    pub(crate) fn remove_dir_if_empty(&mut self, dir: &Location) -> Result<bool> {
        let path = super::local::path_of(dir)?;
        let (root, parent, name) = self.split(dir, path)?;
        let fd = match self.dir(root, &parent, dir)? {
            Ok(fd) => fd,
            Err(DirState::Absent) => return Ok(false),
            Err(DirState::Refused(why)) => return Err(super::guard::refused(dir, why)),
        };
        match rustix::fs::unlinkat(fd, name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) | Err(Errno::NOTEMPTY) | Err(Errno::EXIST) => Ok(false),
            Err(Errno::NOTDIR) => Err(super::guard::refused(
                dir,
                "it is not a directory (a symlink?)",
            )),
            Err(e) => Err(Error::storage(dir.as_str(), io::Error::from(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(p: &Path) -> Location {
        Location::from_local_path(p).unwrap()
    }

    #[test]
    fn refuses_symlinked_directories_and_removes_through_handles() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("t");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("p=1/bucket-0")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("p=1/bucket-0/f"), b"x").unwrap();
        std::fs::write(outside.join("f"), b"keep").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("p=1/bucket-1")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("p=2")).unwrap();

        let mut b = Beneath::open(&[loc(&root)], None);
        let f = loc(&root.join("p=1/bucket-0/f"));
        assert_eq!(b.remove_file(&f).unwrap(), Removal::Removed);
        assert!(!root.join("p=1/bucket-0/f").exists());
        // Absent is fine, and said.
        assert_eq!(b.remove_file(&f).unwrap(), Removal::Absent);
        let in_absent_dir = loc(&root.join("p=9/bucket-0/f"));
        assert_eq!(b.remove_file(&in_absent_dir).unwrap(), Removal::Absent);
        for via in ["p=1/bucket-1/f", "p=2/f"] {
            let l = loc(&root.join(via));
            assert!(matches!(b.check_dir_of(&l), Err(Error::PathRefused { .. })));
            assert!(matches!(b.remove_file(&l), Err(Error::PathRefused { .. })));
        }
        assert!(outside.join("f").exists());
        // Outside every root.
        assert!(matches!(
            b.remove_file(&loc(&outside.join("f"))),
            Err(Error::PathRefused { .. })
        ));
        // Directories: empty one removed, symlink refused, non-empty kept.
        assert!(b
            .remove_dir_if_empty(&loc(&root.join("p=1/bucket-0")))
            .unwrap());
        assert!(b
            .remove_dir_if_empty(&loc(&root.join("p=1/bucket-1")))
            .is_err());
        assert!(outside.exists());
        assert!(!b.remove_dir_if_empty(&loc(&root.join("p=1"))).unwrap());
        assert!(outside.join("f").exists());
    }

    #[test]
    fn the_component_walk_refuses_symlinks_too() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("t");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("l")).unwrap();
        let fd = rustix::fs::open(&root, dir_flags(), Mode::empty()).unwrap();
        // Force the fallback on this thread's view (the flag is process-wide but only ever
        // switches to the equally safe walk).
        let saved = NO_OPENAT2.swap(true, Ordering::Relaxed);
        let ok = open_beneath(&fd, Path::new("a/b")).unwrap();
        let link = open_beneath(&fd, Path::new("l/b")).unwrap();
        let absent = open_beneath(&fd, Path::new("a/x")).unwrap();
        let dotdot = open_beneath(&fd, Path::new("a/../a")).unwrap();
        NO_OPENAT2.store(saved, Ordering::Relaxed);
        assert!(ok.is_ok());
        assert!(matches!(link, Err(DirState::Refused(_))));
        assert!(matches!(absent, Err(DirState::Absent)));
        assert!(matches!(dotdot, Err(DirState::Refused(_))));
    }
}
