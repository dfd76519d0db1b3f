//! The list of deleted paths of a [`super::DeletionReport`], kept off the heap past a small
//! in-memory budget (a run deleting millions of files must not hold a `String` per
//! file).
//!
//! The first [`IN_MEMORY`] paths are kept in memory; later ones are appended to an anonymous
//! temporary file in the system temp dir ([`std::env::temp_dir`]; removed by the system when
//! the list is dropped, even if the process dies). Reading goes through the file again, in
//! the order the paths were recorded. If the temporary file cannot be created or written, the
//! paths stay in memory (the report is complete either way) and a warning is logged.

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use super::class::{DeletedPath, FileClass};

/// Paths kept in memory before the list spills to a temporary file.
pub const IN_MEMORY: usize = 4096;

/// Bytes of records buffered before they are written to the file.
const WRITE_BUFFER: usize = 64 << 10;

/// Bytes read from the file at a time when iterating.
const READ_BUFFER: usize = 64 << 10;

/// The spilled part: records `class (1 byte) | length (4 bytes, LE) | path (UTF-8)`.
#[derive(Debug)]
struct Spill {
    file: Arc<Mutex<File>>,
    /// Bytes in the file.
    written: u64,
    /// Records not written yet (after those in the file).
    pending: Vec<u8>,
}

impl Spill {
    fn create() -> std::io::Result<Spill> {
        let file = tempfile::tempfile_in(std::env::temp_dir())?;
        Ok(Spill {
            file: Arc::new(Mutex::new(file)),
            written: 0,
            pending: Vec::with_capacity(WRITE_BUFFER),
        })
    }

    fn push(&mut self, class: FileClass, path: &str) -> std::io::Result<()> {
        let len = u32::try_from(path.len()).map_err(std::io::Error::other)?;
        self.pending.push(class.code());
        self.pending.extend_from_slice(&len.to_le_bytes());
        self.pending.extend_from_slice(path.as_bytes());
        if self.pending.len() >= WRITE_BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.seek(SeekFrom::Start(self.written))?;
        f.write_all(&self.pending)?;
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }
}

/// Every deleted (or, in a dry run, deletable) file of a report, in the order recorded.
///
/// Read it with [`DeletedPaths::iter`] (or `for p in &paths`), which yields owned
/// [`DeletedPath`]s; [`DeletedPaths::len`] is known without reading. Safe to share between
/// threads; cloning copies the list (into a new temporary file past the in-memory budget).
#[derive(Default)]
pub struct DeletedPaths {
    memory: Vec<DeletedPath>,
    spill: Option<Spill>,
    /// Paths in `spill`.
    spilled: usize,
    /// Set once spilling failed: everything stays in `memory` from then on.
    spill_failed: bool,
}

impl DeletedPaths {
    /// An empty list.
    pub fn new() -> DeletedPaths {
        DeletedPaths::default()
    }

    /// Number of paths.
    pub fn len(&self) -> usize {
        self.memory.len() + self.spilled
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Paths held in memory (the rest are in the temporary file).
    pub fn in_memory(&self) -> usize {
        self.memory.len()
    }

    /// Append one path.
    pub fn push(&mut self, p: DeletedPath) {
        if self.memory.len() < IN_MEMORY || self.spill_failed {
            self.memory.push(p);
            return;
        }
        if self.spill.is_none() {
            match Spill::create() {
                Ok(s) => self.spill = Some(s),
                Err(e) => {
                    tracing::warn!(error = %e, "report paths: no temporary file, kept in memory");
                    self.spill_failed = true;
                    self.memory.push(p);
                    return;
                }
            }
        }
        if let Some(s) = &mut self.spill {
            // A failed write leaves the file as it was (`written` only counts what landed);
            // the record is then dropped from the buffer and kept in memory.
            let mark = s.pending.len();
            match s.push(p.class, &p.path) {
                Ok(()) => self.spilled += 1,
                Err(e) => {
                    tracing::warn!(error = %e, "report paths: temporary file failed, kept in memory");
                    s.pending.truncate(mark);
                    self.spill_failed = true;
                    self.spill_to_memory(p);
                }
            }
        }
    }

    /// After a failed write: read back what was spilled, then keep everything in memory.
    fn spill_to_memory(&mut self, p: DeletedPath) {
        let spilled: Vec<DeletedPath> = self.iter().skip(self.memory.len()).collect();
        if spilled.len() != self.spilled {
            tracing::error!(
                expected = self.spilled,
                read = spilled.len(),
                "report paths: the temporary file could not be read back; the list is incomplete"
            );
        }
        self.memory.extend(spilled);
        self.memory.push(p);
        self.spill = None;
        self.spilled = 0;
    }

    /// The paths in the order recorded, each built as it is read. A temporary file that can
    /// no longer be read ends the iteration early, with an error logged.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            paths: self,
            memory_at: 0,
            file_at: 0,
            buf: Vec::new(),
            buf_at: 0,
            pending_done: false,
            spilled_left: self.spilled,
        }
    }
}

/// Iterator over [`DeletedPaths`] (see [`DeletedPaths::iter`]).
pub struct Iter<'a> {
    paths: &'a DeletedPaths,
    memory_at: usize,
    /// Next byte of the file to read.
    file_at: u64,
    buf: Vec<u8>,
    buf_at: usize,
    pending_done: bool,
    spilled_left: usize,
}

impl Iter<'_> {
    /// Refill `buf` (keeping its unread tail) from the file, then from the pending records.
    /// False when nothing more can be read.
    fn refill(&mut self) -> bool {
        let Some(spill) = &self.paths.spill else {
            return false;
        };
        self.buf.drain(..self.buf_at);
        self.buf_at = 0;
        if self.file_at < spill.written {
            let want = (spill.written - self.file_at).min(READ_BUFFER as u64) as usize;
            let start = self.buf.len();
            self.buf.resize(start + want, 0);
            let read = {
                let mut f = spill.file.lock().unwrap_or_else(|p| p.into_inner());
                f.seek(SeekFrom::Start(self.file_at))
                    .and_then(|_| f.read_exact(&mut self.buf[start..]))
            };
            if let Err(e) = read {
                tracing::error!(error = %e, "report paths: the temporary file could not be read");
                self.buf.truncate(start);
                return false;
            }
            self.file_at += want as u64;
            return true;
        }
        if !self.pending_done {
            self.pending_done = true;
            self.buf.extend_from_slice(&spill.pending);
            return !spill.pending.is_empty();
        }
        false
    }

    /// The next spilled record, reading more as needed.
    fn next_spilled(&mut self) -> Option<DeletedPath> {
        loop {
            let rest = &self.buf[self.buf_at..];
            if rest.len() >= 5 {
                let len = u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
                if rest.len() >= 5 + len {
                    let class = FileClass::from_code(rest[0]);
                    let path = String::from_utf8_lossy(&rest[5..5 + len]).into_owned();
                    self.buf_at += 5 + len;
                    return Some(DeletedPath { class, path });
                }
            }
            if !self.refill() {
                tracing::error!(
                    missing = self.spilled_left,
                    "report paths: the temporary file ended early"
                );
                return None;
            }
        }
    }
}

impl Iterator for Iter<'_> {
    type Item = DeletedPath;

    fn next(&mut self) -> Option<DeletedPath> {
        if let Some(p) = self.paths.memory.get(self.memory_at) {
            self.memory_at += 1;
            return Some(p.clone());
        }
        if self.spilled_left == 0 {
            return None;
        }
        let p = self.next_spilled();
        self.spilled_left = if p.is_some() {
            self.spilled_left - 1
        } else {
            0
        };
        p
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.paths.memory.len() - self.memory_at + self.spilled_left;
        (0, Some(n))
    }
}

impl<'a> IntoIterator for &'a DeletedPaths {
    type Item = DeletedPath;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for DeletedPaths {
    type Item = DeletedPath;
    type IntoIter = std::vec::IntoIter<DeletedPath>;

    /// Reads the whole list into memory (for a consumer that keeps every path anyway).
    fn into_iter(self) -> Self::IntoIter {
        self.iter().collect::<Vec<_>>().into_iter()
    }
}

impl FromIterator<DeletedPath> for DeletedPaths {
    fn from_iter<I: IntoIterator<Item = DeletedPath>>(iter: I) -> Self {
        let mut out = DeletedPaths::new();
        out.extend(iter);
        out
    }
}

impl Extend<DeletedPath> for DeletedPaths {
    fn extend<I: IntoIterator<Item = DeletedPath>>(&mut self, iter: I) {
        for p in iter {
            self.push(p);
        }
    }
}

impl Clone for DeletedPaths {
    fn clone(&self) -> Self {
        self.iter().collect()
    }
}

impl PartialEq for DeletedPaths {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for DeletedPaths {}

impl fmt::Debug for DeletedPaths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for DeletedPaths {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for p in self.iter() {
            seq.serialize_element(&p)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(i: usize) -> DeletedPath {
        DeletedPath {
            class: FileClass::ALL[i % FileClass::ALL.len()],
            path: format!("dt=2024-01-{:02}/bucket-{}/data-{i}.orc", i % 28, i % 7),
        }
    }

    #[test]
    fn spilled_paths_read_back_complete_and_in_order() {
        let n = IN_MEMORY + 50_000;
        let mut paths = DeletedPaths::new();
        for i in 0..n {
            paths.push(p(i));
        }
        assert_eq!(paths.len(), n);
        assert_eq!(paths.in_memory(), IN_MEMORY, "the rest went to the file");
        let back: Vec<DeletedPath> = paths.iter().collect();
        assert_eq!(back, (0..n).map(p).collect::<Vec<_>>());
        // Two readers at once, and a clone, see the same.
        let mut a = paths.iter();
        let mut b = (&paths).into_iter();
        for i in 0..n {
            assert_eq!(a.next(), Some(p(i)));
            assert_eq!(b.next(), Some(p(i)));
        }
        assert_eq!(a.next(), None);
        let c = paths.clone();
        assert_eq!(c, paths);
        assert_eq!(c.into_iter().count(), n);
        let json = serde_json::to_value(&paths).unwrap();
        assert_eq!(json.as_array().unwrap().len(), n);
        assert_eq!(json[n - 1]["path"], p(n - 1).path);
    }

    #[test]
    fn a_small_list_stays_in_memory() {
        let paths: DeletedPaths = (0..10).map(p).collect();
        assert_eq!(paths.in_memory(), 10);
        assert_eq!(
            format!("{paths:?}"),
            format!("{:?}", (0..10).map(p).collect::<Vec<_>>())
        );
        assert!(DeletedPaths::new().is_empty());
    }
}
