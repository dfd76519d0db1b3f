//! The path listing of a C report, held with bounded heap memory.
//!
//! `paimon_cleanup_report_path` promises that the string it returns stays valid until the
//! report is freed, and a caller may read the listing in any order. Copying every path into a
//! `CString` when the report is built would hold one heap string per deleted file. Instead the
//! first [`IN_MEMORY`] paths are kept as `CString`s and the rest are written once, in order, to
//! two anonymous temporary files that are then mapped read-only:
//!
//! * the text file holds every path as NUL-terminated UTF-8, back to back;
//! * the index file holds one little-endian `u64` per path: the offset of its text in the low
//!   56 bits, its `PaimonCleanupFileClass` in the high 8 bits.
//!
//! A returned pointer points into the text mapping, which lives (unchanged) as long as the
//! report, so the promise holds without a per-string allocation. The mapped pages are backed by
//! the file: the kernel reads them on access and may drop them again, so they never add to what
//! the process must hold. If a temporary file cannot be created, written or mapped, the listing
//! falls back to heap strings (complete either way) and a warning is logged.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::raw::c_char;
use std::ptr::NonNull;

use crate::clean::report::{DeletedPath, DeletedPaths};

use super::file_class::PaimonCleanupFileClass;
use super::text::c_text;

/// Paths of a report kept as heap strings before the rest go to the mapped files.
pub(crate) const IN_MEMORY: usize = 4096;

/// Bits of an index entry holding the text offset.
const OFFSET_BITS: u32 = 56;

/// A path held on the heap, with its class.
#[derive(Debug)]
struct HeapPath {
    path: CString,
    class: PaimonCleanupFileClass,
}

/// A read-only mapping of a whole file, unmapped on drop.
#[derive(Debug)]
struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is read-only and never changes while it exists (the anonymous temporary
// file behind it is reachable by no one else), so sharing and sending it between threads is as
// safe as sharing a `&[u8]`.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the first `len` bytes (`len > 0`) of `file` read-only.
    fn map(file: &File, len: usize) -> std::io::Result<Mapping> {
        if len == 0 {
            return Err(std::io::Error::other("nothing to map"));
        }
        // SAFETY: a fresh private read-only mapping of a file we own; the arguments are valid
        // and the result is checked before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        NonNull::new(base.cast::<u8>())
            .map(|base| Mapping { base, len })
            .ok_or_else(|| std::io::Error::other("mmap returned NULL"))
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `base` maps `len` readable bytes for the lifetime of `self`, and nothing writes
        // to them (see the `Send`/`Sync` note).
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map` mapped, once; no borrowed pointer outlives the
        // report that owns this mapping (the accessors' contract).
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// The paths past [`IN_MEMORY`], in two mapped files (see the module docs).
#[derive(Debug)]
struct Mapped {
    text: Mapping,
    index: Mapping,
}

impl Mapped {
    fn len(&self) -> usize {
        self.index.len / 8
    }

    fn get(&self, at: usize) -> Option<(*const c_char, PaimonCleanupFileClass)> {
        let entry = self.index.bytes().get(at * 8..at * 8 + 8)?;
        let entry = u64::from_le_bytes(entry.try_into().ok()?);
        let offset = usize::try_from(entry & ((1 << OFFSET_BITS) - 1)).ok()?;
        let class = PaimonCleanupFileClass::from_code((entry >> OFFSET_BITS) as i32)
            .unwrap_or(PaimonCleanupFileClass::Other);
        // The text at `offset` is NUL-terminated inside the mapping (written so by `write`).
        let text = self.text.bytes().get(offset..)?;
        Some((text.as_ptr().cast(), class))
    }

    /// Writes `paths` to two new temporary files and maps them.
    fn write(paths: impl Iterator<Item = DeletedPath>) -> std::io::Result<Option<Mapped>> {
        let dir = std::env::temp_dir();
        let mut text = BufWriter::with_capacity(64 << 10, tempfile::tempfile_in(&dir)?);
        let mut index = BufWriter::with_capacity(64 << 10, tempfile::tempfile_in(&dir)?);
        let mut offset: u64 = 0;
        let mut count: usize = 0;
        for p in paths {
            if offset >= 1 << OFFSET_BITS {
                return Err(std::io::Error::other("path listing too large"));
            }
            let class = PaimonCleanupFileClass::from(p.class) as u64;
            index.write_all(&(offset | (class << OFFSET_BITS)).to_le_bytes())?;
            let bytes = if p.path.contains('\0') {
                p.path.replace('\0', "\u{FFFD}").into_bytes()
            } else {
                p.path.into_bytes()
            };
            text.write_all(&bytes)?;
            text.write_all(&[0])?;
            offset += bytes.len() as u64 + 1;
            count += 1;
        }
        if count == 0 {
            return Ok(None);
        }
        let text = text.into_inner().map_err(|e| e.into_error())?;
        let index = index.into_inner().map_err(|e| e.into_error())?;
        let text_len = usize::try_from(offset).map_err(std::io::Error::other)?;
        Ok(Some(Mapped {
            text: Mapping::map(&text, text_len)?,
            index: Mapping::map(&index, count * 8)?,
        }))
    }
}

/// The path listing of one report (not its steps'): deleted (dry run: deletable) files in
/// deletion order.
#[derive(Debug, Default)]
pub(super) struct ReportPaths {
    heap: Vec<HeapPath>,
    mapped: Option<Mapped>,
}

impl ReportPaths {
    /// Takes the listing of a Rust report, reading it once in order.
    pub(super) fn new(paths: &DeletedPaths) -> ReportPaths {
        let heap = |p: DeletedPath| HeapPath {
            class: p.class.into(),
            path: c_text(p.path),
        };
        let mut out = ReportPaths {
            heap: paths.iter().take(IN_MEMORY).map(heap).collect(),
            mapped: None,
        };
        if paths.len() <= IN_MEMORY {
            return out;
        }
        match Mapped::write(paths.iter().skip(IN_MEMORY)) {
            Ok(mapped) => out.mapped = mapped,
            Err(e) => {
                tracing::warn!(error = %e, "report paths: no mapped file, kept in memory");
                out.heap.extend(paths.iter().skip(IN_MEMORY).map(heap));
            }
        }
        out
    }

    /// Number of paths.
    pub(super) fn len(&self) -> usize {
        self.heap.len() + self.mapped.as_ref().map_or(0, Mapped::len)
    }

    /// Path `index` and its class. The pointer is valid as long as `self`.
    pub(super) fn get(&self, index: usize) -> Option<(*const c_char, PaimonCleanupFileClass)> {
        match self.heap.get(index) {
            Some(p) => Some((p.path.as_ptr(), p.class)),
            None => self.mapped.as_ref()?.get(index - self.heap.len()),
        }
    }

    /// Every path in order, as text, with its class.
    pub(super) fn iter(&self) -> impl Iterator<Item = (String, PaimonCleanupFileClass)> + '_ {
        (0..self.len()).filter_map(|i| {
            self.get(i).map(|(p, class)| {
                // SAFETY: `get` returns NUL-terminated text that lives as long as `self`.
                let text = unsafe { CStr::from_ptr(p) };
                (text.to_string_lossy().into_owned(), class)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clean::report::FileClass;

    fn p(i: usize) -> DeletedPath {
        DeletedPath {
            class: FileClass::ALL[i % FileClass::ALL.len()],
            path: format!("bucket-{}/data-{i}.orc", i % 3),
        }
    }

    #[test]
    fn only_the_first_paths_stay_on_the_heap() {
        let small: DeletedPaths = (0..IN_MEMORY).map(p).collect();
        let small = ReportPaths::new(&small);
        assert_eq!(
            (small.heap.len(), small.mapped.is_none()),
            (IN_MEMORY, true)
        );
        let n = IN_MEMORY + 10_000;
        let big: DeletedPaths = (0..n).map(p).collect();
        let big = ReportPaths::new(&big);
        assert_eq!(big.heap.len(), IN_MEMORY);
        assert_eq!(big.mapped.as_ref().map(Mapped::len), Some(10_000));
        let back: Vec<(String, PaimonCleanupFileClass)> = big.iter().collect();
        let want: Vec<(String, PaimonCleanupFileClass)> =
            (0..n).map(|i| (p(i).path, p(i).class.into())).collect();
        assert_eq!(back, want);
        assert!(big.get(n).is_none());
        assert_eq!(ReportPaths::new(&DeletedPaths::new()).len(), 0);
    }
}
