//! Working copies of a generated table that cost no data inodes: data files are hard-linked,
//! everything else is copied.
//!
//! The master table is generated once and never touched; each operation and each floor works
//! on a copy. A file in a partition directory (first path segment `key=value`: data files,
//! changelog files, orphan data files) is a hard link to the master's file: a new directory
//! entry, no new inode, no new block. Every other file (snapshots, hints, manifests, manifest
//! lists, index manifests, index files, tags, branches, schemas, consumers, statistics) is a
//! real copy, so whatever an operation writes or replaces there cannot reach the master.
//!
//! That is enough because nothing writes into an existing file: the library's only writers
//! (`storage::local::put`, `put_if_absent`) write a fresh temp file and rename or link it onto
//! the target, so a rewritten file gets a new inode; the operations only unlink data files and
//! never read or write their contents. Unlinking a link drops one name; the master's name and
//! the inode stay. [`Fingerprint`] checks it (`paimon-bench --check-master`).

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Threads linking and copying (the work is system calls; two cores, waits on the disk).
const THREADS: usize = 8;

/// Whether the file at `rel` (relative to the table root, `/`-separated) is hard-linked rather
/// than copied: it lies in a partition directory.
pub fn is_data_path(rel: &str) -> bool {
    rel.split('/')
        .next()
        .is_some_and(|first| first.contains('='))
        && rel.contains('/')
}

/// What a copy made.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct CopyStats {
    /// Hard links made (data files).
    pub linked: u64,
    /// Files copied (metadata).
    pub copied: u64,
    /// Bytes copied.
    pub copied_bytes: u64,
    /// Directories created.
    pub dirs: u64,
    /// Wall time, ms.
    pub elapsed_ms: u64,
}

/// Every directory under `root` (root included), relative, `""` for the root.
fn directories(root: &Path) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let rd = std::fs::read_dir(&dir).map_err(|e| format!("list {}: {e}", dir.display()))?;
        for e in rd {
            let e = e.map_err(|e| format!("list {}: {e}", dir.display()))?;
            if e.file_type().map_err(|e| e.to_string())?.is_dir() {
                let name = e.file_name().to_string_lossy().into_owned();
                stack.push(if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                });
            }
        }
        out.push(rel);
    }
    out.sort();
    Ok(out)
}

/// Links or copies `src` to `dst` by [`is_data_path`] of `rel`; returns the bytes copied
/// (`None` for a link). A copy keeps the source's modification time, so that which files are
/// older than an orphan cut-off does not depend on when the copy was made (a metadata orphan
/// copied after the cut-off would otherwise be kept in one run and deleted in the next).
pub fn link_or_copy(rel: &str, src: &Path, dst: &Path) -> Result<Option<u64>, String> {
    if is_data_path(rel) {
        std::fs::hard_link(src, dst).map_err(|e| {
            format!(
                "hard link {} -> {}: {e} (the bench's copies need the same file system)",
                src.display(),
                dst.display()
            )
        })?;
        Ok(None)
    } else {
        let err = |e: std::io::Error| format!("copy {} -> {}: {e}", src.display(), dst.display());
        let bytes = std::fs::copy(src, dst).map_err(err)?;
        let modified = std::fs::metadata(src)
            .and_then(|m| m.modified())
            .map_err(err)?;
        std::fs::File::options()
            .write(true)
            .open(dst)
            .and_then(|f| f.set_modified(modified))
            .map_err(err)?;
        Ok(Some(bytes))
    }
}

/// Runs `f` on every item on [`THREADS`] threads; the first error.
fn parallel<T: Sync>(
    items: &[T],
    f: impl Fn(&T) -> Result<(), String> + Sync,
) -> Result<(), String> {
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(None::<String>);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if let Err(e) = f(item) {
                    if let Ok(mut slot) = failed.lock() {
                        slot.get_or_insert(e);
                    }
                    break;
                }
            });
        }
    });
    match failed.into_inner().ok().flatten() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Makes `dst` (which must not exist) a working copy of the table `master`.
pub fn copy_table(master: &Path, dst: &Path) -> Result<CopyStats, String> {
    let started = std::time::Instant::now();
    if dst.exists() {
        return Err(format!("{} exists", dst.display()));
    }
    let dirs = directories(master)?;
    for d in &dirs {
        let p = dst.join(d);
        std::fs::create_dir_all(&p).map_err(|e| format!("mkdir {}: {e}", p.display()))?;
    }
    let linked = AtomicU64::new(0);
    let copied = AtomicU64::new(0);
    let bytes = AtomicU64::new(0);
    parallel(&dirs, |rel_dir| {
        let from = master.join(rel_dir);
        let rd = std::fs::read_dir(&from).map_err(|e| format!("list {}: {e}", from.display()))?;
        for e in rd {
            let e = e.map_err(|e| format!("list {}: {e}", from.display()))?;
            if e.file_type().map_err(|e| e.to_string())?.is_dir() {
                continue;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            let rel = if rel_dir.is_empty() {
                name.into_owned()
            } else {
                format!("{rel_dir}/{name}")
            };
            match link_or_copy(&rel, &e.path(), &dst.join(&rel))? {
                None => linked.fetch_add(1, Ordering::Relaxed),
                Some(n) => {
                    bytes.fetch_add(n, Ordering::Relaxed);
                    copied.fetch_add(1, Ordering::Relaxed)
                }
            };
        }
        Ok(())
    })?;
    Ok(CopyStats {
        linked: linked.into_inner(),
        copied: copied.into_inner(),
        copied_bytes: bytes.into_inner(),
        dirs: dirs.len() as u64,
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}

/// Copies every planned file of `table` into `mirror` (same relative paths), data files as
/// links: what the floor removes.
pub fn prepare_mirror(table: &Path, mirror: &Path, paths: &[String]) -> Result<(), String> {
    let mut dirs = BTreeSet::new();
    for p in paths {
        if let Some(parent) = mirror.join(p).parent() {
            dirs.insert(parent.to_path_buf());
        }
    }
    for d in dirs {
        std::fs::create_dir_all(&d).map_err(|e| format!("mkdir {}: {e}", d.display()))?;
    }
    parallel(paths, |p| {
        link_or_copy(p, &table.join(p), &mirror.join(p)).map(|_| ())
    })
}

/// [`prepare_mirror`] plus a copy of the table's `schema/` directory: the probe of the deletion
/// path opens the copy as a table (its schema gives the options and partition keys the kind
/// rules of a deletion depend on), and the planned files alone do not include the schema.
/// Schemas are never planned for deletion, so the copy adds nothing to what is deleted.
pub fn prepare_probe(table: &Path, probe: &Path, paths: &[String]) -> Result<(), String> {
    prepare_mirror(table, probe, paths)?;
    let from = table.join("schema");
    let to = probe.join("schema");
    std::fs::create_dir_all(&to).map_err(|e| format!("mkdir {}: {e}", to.display()))?;
    let rd = std::fs::read_dir(&from).map_err(|e| format!("list {}: {e}", from.display()))?;
    for e in rd {
        let e = e.map_err(|e| format!("list {}: {e}", from.display()))?;
        if e.file_type().map_err(|e| e.to_string())?.is_file() {
            let name = e.file_name();
            let rel = format!("schema/{}", name.to_string_lossy());
            link_or_copy(&rel, &e.path(), &to.join(&name))?;
        }
    }
    Ok(())
}

/// A digest of a whole table: every file's relative path, size, inode, modification time and
/// link-independent identity; metadata files (not [`is_data_path`]) also by content. Two equal
/// fingerprints mean nothing was added, removed, replaced or rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Fingerprint {
    /// Files.
    pub files: u64,
    /// Of those, hashed by content.
    pub hashed: u64,
    /// The digest.
    pub digest: u64,
}

impl Fingerprint {
    /// Fingerprints the table at `root` (reads every metadata file; stats every file).
    pub fn of(root: &Path) -> Result<Fingerprint, String> {
        let mut h = DefaultHasher::new();
        let mut files = 0u64;
        let mut hashed = 0u64;
        for rel_dir in directories(root)? {
            let dir: PathBuf = root.join(&rel_dir);
            let mut entries: Vec<(String, std::fs::Metadata)> = Vec::new();
            for e in std::fs::read_dir(&dir).map_err(|e| format!("list {}: {e}", dir.display()))? {
                let e = e.map_err(|e| e.to_string())?;
                let m = std::fs::symlink_metadata(e.path()).map_err(|e| e.to_string())?;
                if !m.is_dir() {
                    entries.push((e.file_name().to_string_lossy().into_owned(), m));
                }
            }
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, m) in entries {
                let rel = if rel_dir.is_empty() {
                    name
                } else {
                    format!("{rel_dir}/{name}")
                };
                (&rel, m.len(), m.ino(), m.mtime(), m.mtime_nsec()).hash(&mut h);
                if !is_data_path(&rel) {
                    let bytes =
                        std::fs::read(root.join(&rel)).map_err(|e| format!("read {rel}: {e}"))?;
                    bytes.hash(&mut h);
                    hashed += 1;
                }
                files += 1;
            }
        }
        Ok(Fingerprint {
            files,
            hashed,
            digest: h.finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_paths_are_the_files_of_partition_directories() {
        assert!(is_data_path("dt=2024-01-01/bucket-0/data-1.parquet"));
        assert!(is_data_path("pt=3/bucket-1/changelog-2.parquet"));
        assert!(!is_data_path("manifest/manifest-1"));
        assert!(!is_data_path("snapshot/LATEST"));
        assert!(!is_data_path("index/index-1"));
        assert!(!is_data_path("branch/branch-x/snapshot/snapshot-3"));
        assert!(!is_data_path("a=b"));
    }

    #[test]
    fn a_copy_shares_data_inodes_and_owns_its_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let master = dir.path().join("master");
        std::fs::create_dir_all(master.join("dt=1/bucket-0")).unwrap();
        std::fs::create_dir_all(master.join("snapshot")).unwrap();
        std::fs::write(master.join("dt=1/bucket-0/data-1.parquet"), b"").unwrap();
        std::fs::write(master.join("dt=1/bucket-0/data-2.parquet"), b"x").unwrap();
        std::fs::write(master.join("snapshot/LATEST"), b"1").unwrap();
        let before = Fingerprint::of(&master).unwrap();
        assert_eq!((before.files, before.hashed), (3, 1));

        let copy = dir.path().join("copy");
        let stats = copy_table(&master, &copy).unwrap();
        assert_eq!((stats.linked, stats.copied), (2, 1));
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let data = "dt=1/bucket-0/data-1.parquet";
        assert_eq!(ino(&master.join(data)), ino(&copy.join(data)));
        assert_ne!(
            ino(&master.join("snapshot/LATEST")),
            ino(&copy.join("snapshot/LATEST"))
        );
        // A copied file keeps the master's modification time (orphan cut-offs).
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        let master_meta = dir.path().join("master2");
        std::fs::create_dir_all(master_meta.join("manifest")).unwrap();
        let orphan = master_meta.join("manifest/manifest-orphan-0");
        std::fs::write(&orphan, b"").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&orphan)
            .unwrap()
            .set_modified(old)
            .unwrap();
        copy_table(&master_meta, &dir.path().join("copy2")).unwrap();
        let copied = dir.path().join("copy2/manifest/manifest-orphan-0");
        assert_eq!(std::fs::metadata(&copied).unwrap().modified().unwrap(), old);
        // What an operation does to its copy: unlink data files, rewrite a hint in place.
        std::fs::remove_file(copy.join(data)).unwrap();
        std::fs::write(copy.join("snapshot/LATEST"), b"2").unwrap();
        let mirror = dir.path().join("mirror");
        prepare_mirror(&copy, &mirror, &["dt=1/bucket-0/data-2.parquet".into()]).unwrap();
        std::fs::remove_file(mirror.join("dt=1/bucket-0/data-2.parquet")).unwrap();
        assert_eq!(Fingerprint::of(&master).unwrap(), before);
        assert_eq!(std::fs::read(master.join("snapshot/LATEST")).unwrap(), b"1");
    }
}
