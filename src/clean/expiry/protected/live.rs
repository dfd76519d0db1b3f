//! The candidate entries live so far in a protector's merge ([`LiveEntries`]): what a version
//! still reads among the candidates once every manifest of its merge has been applied.
//!
//! Entries are matched exactly by their whole Paimon identifier (location, level and the rest,
//! as readers merge): a DELETE removes a live entry only if every byte of the identifier is the
//! same. Each entry is one allocation holding that identifier, so the set costs about the
//! identifier's bytes and a hash slot per live entry.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

use crate::clean::expiry::protected::slim::Slim;
use crate::hash::FastSet;
use crate::memory::hashed;
use crate::spec::manifest::FileKind;
use crate::storage::Location;

/// Bytes before an identifier's location: the level (4) and the length of the rest (8).
const HEAD: usize = 12;

/// One live entry: `id` is the level, the length of the identifier's rest, the rest, and the
/// location's bytes (the rest is length-prefixed, so no two identifiers share an `id`).
#[derive(Debug)]
struct Live {
    id: Box<[u8]>,
    /// Its extra files (beside it), read with it.
    extras: Box<[Location]>,
}

impl PartialEq for Live {
    fn eq(&self, other: &Live) -> bool {
        self.id == other.id
    }
}

impl Eq for Live {}

impl Hash for Live {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // As `[u8]` hashes, so that lookups by an encoded identifier find it.
        self.id[..].hash(h)
    }
}

impl Borrow<[u8]> for Live {
    fn borrow(&self) -> &[u8] {
        &self.id
    }
}

impl Live {
    /// About what the entry holds: its share of the table and its allocations.
    fn heap_bytes(&self) -> u64 {
        hashed(std::mem::size_of::<Live>())
            + allocated(self.id.len())
            + if self.extras.is_empty() {
                0
            } else {
                allocated(std::mem::size_of_val(&self.extras[..]))
                    + self
                        .extras
                        .iter()
                        .map(|x| allocated(x.as_str().len()))
                        .sum::<u64>()
            }
    }

    /// The entry's location (the bytes after the identifier's rest).
    fn location(&self) -> Location {
        let rest = self
            .id
            .get(4..HEAD)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .unwrap_or(0);
        let start = (HEAD as u64).saturating_add(rest);
        let bytes = usize::try_from(start)
            .ok()
            .and_then(|s| self.id.get(s..))
            .unwrap_or_default();
        // Written from a `Location` by `identify`, so valid UTF-8 and normalized.
        Location::from_normalized(&String::from_utf8_lossy(bytes))
    }
}

/// A heap block's size for `n` bytes requested: glibc's 8-byte header, 16-byte steps, at least
/// 32 bytes.
fn allocated(n: usize) -> u64 {
    ((n as u64 + 8).div_ceil(16) * 16).max(32)
}

/// `e`'s whole identifier, encoded as [`Live::id`], into `out`.
fn identify(e: &Slim, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&e.level.to_le_bytes());
    out.extend_from_slice(&(e.ident.len() as u64).to_le_bytes());
    out.extend_from_slice(&e.ident);
    out.extend_from_slice(e.location.as_str().as_bytes());
}

/// A protector's candidate entries live so far in its merge.
#[derive(Debug, Default)]
pub(super) struct LiveEntries {
    set: FastSet<Live>,
    /// About what the entries hold (for the run's budget).
    pub(super) bytes: u64,
    /// The identifier being looked up.
    scratch: Vec<u8>,
}

impl LiveEntries {
    /// Apply one manifest's entries in order: an ADD makes its identifier live, a DELETE
    /// removes it.
    pub(super) fn apply(&mut self, entries: &[&Slim]) {
        for e in entries {
            identify(e, &mut self.scratch);
            match e.kind {
                FileKind::Add => {
                    let same = self.set.get(&self.scratch[..]);
                    if same.is_some_and(|x| x.extras[..] == e.extras[..]) {
                        continue;
                    }
                    let x = Live {
                        id: Box::from(&self.scratch[..]),
                        extras: e.extras.clone().into_boxed_slice(),
                    };
                    self.bytes += x.heap_bytes();
                    if let Some(old) = self.set.replace(x) {
                        self.bytes = self.bytes.saturating_sub(old.heap_bytes());
                    }
                }
                FileKind::Delete => {
                    if let Some(x) = self.set.take(&self.scratch[..]) {
                        self.bytes = self.bytes.saturating_sub(x.heap_bytes());
                    }
                }
            }
        }
    }

    /// Protect every live entry's location and extra files, keeping the entries (a shorter
    /// merge that shares them ends here).
    pub(super) fn protect_each(&self, protect: &mut impl FnMut(&Location)) {
        for x in &self.set {
            protect(&x.location());
            for l in x.extras.iter() {
                protect(l);
            }
        }
    }

    /// Protect every live entry's location and extra files, and drop the entries.
    pub(super) fn protect_all(self, protect: &mut impl FnMut(&Location)) {
        self.protect_each(protect);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slim(kind: FileKind, location: &str, level: i32, ident: &[u8]) -> Slim {
        Slim {
            kind,
            level,
            location: Location::parse(location).unwrap(),
            extras: vec![Location::parse(&format!("{location}.index")).unwrap()],
            ident: ident.into(),
        }
    }

    fn protected(live: &LiveEntries) -> Vec<String> {
        let mut got: Vec<String> = Vec::new();
        live.protect_each(&mut |l| got.push(l.as_str().to_string()));
        got.sort();
        got
    }

    fn with_extras(ls: &[&str]) -> Vec<String> {
        let mut want: Vec<String> = ls
            .iter()
            .flat_map(|l| [l.to_string(), format!("{l}.index")])
            .collect();
        want.sort();
        want
    }

    #[test]
    fn live_entries_merge_by_the_whole_identifier() {
        let a = "file:///t/bucket-0/data-a.orc";
        let b = "file:///t/bucket-0/data-b.orc";
        let c = "file:///t/bucket-0/data-c.orc";
        let entries = [
            slim(FileKind::Add, a, 0, b"p"),
            slim(FileKind::Add, b, 0, b"p"),
            slim(FileKind::Add, c, 0, b"p"),
            // Another level: does not remove `a`.
            slim(FileKind::Delete, a, 1, b"p"),
            // Another identifier rest (partition, bucket, ...): does not remove `b`.
            slim(FileKind::Delete, b, 0, b"q"),
            // Removes `c`, which a later ADD brings back at another level.
            slim(FileKind::Delete, c, 0, b"p"),
        ];
        let mut live = LiveEntries::default();
        live.apply(&entries.iter().collect::<Vec<_>>());
        let later = [slim(FileKind::Add, c, 2, b"p")];
        live.apply(&later.iter().collect::<Vec<_>>());
        assert_eq!(protected(&live), with_extras(&[a, b, c]));

        let mut live = LiveEntries::default();
        live.apply(&entries[..3].iter().collect::<Vec<_>>());
        let gone = [
            slim(FileKind::Delete, a, 0, b"p"),
            slim(FileKind::Delete, b, 0, b"p"),
            slim(FileKind::Delete, c, 0, b"p"),
        ];
        live.apply(&gone.iter().collect::<Vec<_>>());
        assert_eq!(protected(&live), Vec::<String>::new());
        assert_eq!(live.bytes, 0);
    }

    #[test]
    fn an_identifier_rest_cannot_pass_for_a_location() {
        // The same bytes split differently between the rest and the location are two
        // identifiers: the rest is length-prefixed.
        let a = slim(FileKind::Add, "file:///t/x", 0, b"file:///t/y");
        let d = slim(FileKind::Delete, "file:///t/y", 0, b"file:///t/x");
        let mut live = LiveEntries::default();
        live.apply(&[&a, &d]);
        assert_eq!(protected(&live), with_extras(&["file:///t/x"]));
    }

    #[test]
    fn an_add_again_keeps_one_entry_with_its_latest_extra_files() {
        let l = "file:///t/bucket-0/data-a.orc";
        let first = slim(FileKind::Add, l, 0, b"p");
        let mut again = slim(FileKind::Add, l, 0, b"p");
        again.extras = vec![Location::parse("file:///t/bucket-0/data-a.orc.idx").unwrap()];
        let mut live = LiveEntries::default();
        live.apply(&[&first, &again]);
        let bytes = live.bytes;
        assert!(bytes > 0);
        assert_eq!(protected(&live), vec![l.to_string(), format!("{l}.idx")]);
        live.apply(&[&again]);
        assert_eq!(live.bytes, bytes);
        let mut n = 0;
        live.protect_all(&mut |_| n += 1);
        assert_eq!(n, 2);
    }
}
