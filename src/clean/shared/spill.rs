//! An append-only log of length-framed records that starts in memory and moves to an anonymous
//! temporary file past a threshold (a plan of millions of candidate files keeps its
//! records off the heap). The file lives in the system temp dir ([`std::env::temp_dir`]) and is
//! removed by the system when the log is dropped, even if the process dies.
//!
//! Records are read back in the order appended ([`RecordLog::reader`]), any number of times
//! and by several readers at once (each reads its own chunks under the file's lock).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

/// Bytes buffered before they are written to the file.
const WRITE_BUFFER: usize = 64 << 10;

/// Bytes read from the file at a time.
const READ_BUFFER: usize = 256 << 10;

/// Records `length (4 bytes, LE) | bytes`, in memory up to a threshold, then in a temporary
/// file (with a write buffer in memory).
#[derive(Debug)]
pub struct RecordLog {
    /// Every record while in memory; once spilled, those not written to the file yet.
    pending: Vec<u8>,
    file: Option<Mutex<File>>,
    /// Bytes in the file.
    written: u64,
    /// Bytes kept in memory before the log moves to a file.
    in_memory: usize,
    records: u64,
}

impl RecordLog {
    /// An empty log that stays in memory up to `in_memory` bytes.
    pub fn new(in_memory: usize) -> RecordLog {
        RecordLog {
            pending: Vec::new(),
            file: None,
            written: 0,
            in_memory,
            records: 0,
        }
    }

    /// Records appended.
    pub fn len(&self) -> u64 {
        self.records
    }

    /// True if none.
    #[cfg(feature = "internal-api")]
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// True once the records went to the temporary file.
    pub fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Bytes held in memory.
    pub fn heap_bytes(&self) -> u64 {
        self.pending.capacity() as u64
    }

    /// Append one record, written by `write` into the buffer it is given. Fails if the
    /// temporary file cannot be created or written (the record is then not appended).
    pub fn push(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> std::io::Result<()> {
        let start = self.pending.len();
        self.pending.extend_from_slice(&[0; 4]);
        write(&mut self.pending);
        let len = match u32::try_from(self.pending.len() - start - 4) {
            Ok(l) => l,
            Err(e) => {
                self.pending.truncate(start);
                return Err(std::io::Error::other(e));
            }
        };
        self.pending[start..start + 4].copy_from_slice(&len.to_le_bytes());
        let limit = if self.file.is_some() {
            WRITE_BUFFER
        } else {
            self.in_memory
        };
        if self.pending.len() > limit {
            if let Err(e) = self.flush() {
                // Never half a record: what was not written stays pending, this one goes.
                self.pending.truncate(start);
                return Err(e);
            }
        }
        self.records += 1;
        Ok(())
    }

    /// Write the pending records to the temporary file (created on first use).
    fn flush(&mut self) -> std::io::Result<()> {
        if self.file.is_none() {
            self.file = Some(Mutex::new(tempfile::tempfile_in(std::env::temp_dir())?));
        }
        if let Some(f) = &self.file {
            let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
            f.seek(SeekFrom::Start(self.written))?;
            f.write_all(&self.pending)?;
        }
        self.written += self.pending.len() as u64;
        self.pending.clear();
        if self.pending.capacity() > 2 * WRITE_BUFFER {
            // The in-memory part moved to the file: keep only a write buffer.
            self.pending.shrink_to(2 * WRITE_BUFFER);
        }
        Ok(())
    }

    /// Done appending: a spilled log writes its buffer out and gives it back.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if self.file.is_some() && !self.pending.is_empty() {
            self.flush()?;
        }
        if self.file.is_some() {
            self.pending = Vec::new();
        } else {
            self.pending.shrink_to_fit();
        }
        Ok(())
    }

    /// The records in the order appended.
    pub fn reader(&self) -> RecordReader<'_> {
        RecordReader {
            log: self,
            file_at: 0,
            buf: Vec::new(),
            at: 0,
            pending_at: 0,
        }
    }
}

/// Reads the records of a [`RecordLog`] in order (see [`RecordLog::reader`]).
#[derive(Debug)]
pub struct RecordReader<'a> {
    log: &'a RecordLog,
    /// Next byte of the file to read.
    file_at: u64,
    /// Bytes read from the file, from `at` on not consumed yet.
    buf: Vec<u8>,
    at: usize,
    /// Next byte of the log's pending records to read (once the file is read).
    pending_at: usize,
}

impl RecordReader<'_> {
    /// The next record; `None` at the end. A record cut short or a file that cannot be read
    /// is an error.
    pub fn next_record(&mut self) -> Option<std::io::Result<&[u8]>> {
        if self.file_at >= self.log.written && self.at >= self.buf.len() {
            // The pending records, read in place.
            let p = &self.log.pending;
            if self.pending_at >= p.len() {
                return None;
            }
            return Some(match frame(p, self.pending_at) {
                Some((start, end)) => {
                    self.pending_at = end;
                    Ok(&p[start..end])
                }
                None => Err(cut()),
            });
        }
        let mut end = None;
        loop {
            if let Some((s, e)) = frame(&self.buf, self.at) {
                end = Some((s, e));
                break;
            }
            match self.refill() {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return Some(Err(e)),
            }
        }
        match end {
            Some((s, e)) => {
                self.at = e;
                Some(Ok(&self.buf[s..e]))
            }
            None => Some(Err(cut())),
        }
    }

    /// Read the next chunk of the file after the unread bytes. False at the file's end.
    fn refill(&mut self) -> std::io::Result<bool> {
        let Some(file) = &self.log.file else {
            return Ok(false);
        };
        if self.file_at >= self.log.written {
            return Ok(false);
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let want = (self.log.written - self.file_at).min(READ_BUFFER as u64) as usize;
        let start = self.buf.len();
        self.buf.resize(start + want, 0);
        let read = {
            let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
            f.seek(SeekFrom::Start(self.file_at))
                .and_then(|_| f.read_exact(&mut self.buf[start..]))
        };
        if let Err(e) = read {
            self.buf.truncate(start);
            return Err(e);
        }
        self.file_at += want as u64;
        Ok(true)
    }
}

/// The bytes of the record framed at `at` in `buf`, if all there.
fn frame(buf: &[u8], at: usize) -> Option<(usize, usize)> {
    let head = buf.get(at..at + 4)?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let end = at + 4 + len;
    (end <= buf.len()).then_some((at + 4, end))
}

fn cut() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "a record of the temporary file is cut short",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(log: &RecordLog) -> Vec<Vec<u8>> {
        let mut r = log.reader();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            out.push(rec.unwrap().to_vec());
        }
        out
    }

    #[test]
    fn records_come_back_in_order_in_memory_and_spilled() {
        for limit in [usize::MAX, 0, 100, 1 << 20] {
            let mut log = RecordLog::new(limit);
            let want: Vec<Vec<u8>> = (0..50_000u32)
                .map(|i| {
                    let n = (i % 37) as usize;
                    (0..n).map(|j| (i as usize + j) as u8).collect()
                })
                .collect();
            for (i, w) in want.iter().enumerate() {
                log.push(|b| b.extend_from_slice(w)).unwrap();
                if i == 100 {
                    // Readable while appending.
                    assert_eq!(records(&log), want[..=100].to_vec());
                }
            }
            assert_eq!(log.len(), want.len() as u64);
            assert_eq!(log.spilled(), limit != usize::MAX);
            assert_eq!(records(&log), want, "before finish, limit {limit}");
            log.finish().unwrap();
            assert_eq!(records(&log), want, "limit {limit}");
            // Two readers at once each see everything.
            let (mut a, mut b) = (log.reader(), log.reader());
            for w in &want {
                assert_eq!(a.next_record().unwrap().unwrap(), &w[..]);
                assert_eq!(b.next_record().unwrap().unwrap(), &w[..]);
            }
            assert!(a.next_record().is_none() && b.next_record().is_none());
            if log.spilled() {
                assert!(log.heap_bytes() < 1 << 20);
            }
        }
        assert!(RecordLog::new(0).reader().next_record().is_none());
    }
}
