//! The candidate files of a plan: held as one 64-bit location key per location in
//! memory, their records (directory, packed name, size, class, extra files) in a
//! [`RecordLog`] that moves to an anonymous temporary file past [`RECORDS_IN_MEMORY`].
//!
//! Every location a candidate would delete has a *slot*, in gathering order: a candidate's own
//! file, then its extra files. Planning decides per slot, on keys alone, which may go
//! ([`Candidates::decide`]); the plan then reads the records back in gathering order.

use crate::clean::report::FileClass;
use crate::clean::shared::names;
use crate::clean::shared::spill::{RecordLog, RecordReader};
use crate::error::{Error, Result};
use crate::hash::{location_key, FastMap};
use crate::memory::MemoryBudget;
use crate::storage::Location;

/// A data or changelog file that may become unreferenced, with its extra files (what
/// [`Candidates::push`] takes).
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Data or changelog data.
    pub class: FileClass,
    /// `_FILE_SIZE`.
    pub bytes: u64,
    /// Extra files beside it (`.index`, ...), deleted with it.
    pub extras: Vec<Location>,
}

impl Candidate {
    /// A candidate whose location's last segment is `name` (the name is taken from the
    /// location when it is pushed; the parameter stays for callers).
    pub fn new(class: FileClass, bytes: u64, extras: Vec<Location>, _name: &str) -> Candidate {
        Candidate {
            class,
            bytes,
            extras,
        }
    }
}

/// Record bytes kept in memory before the records move to a temporary file: a small plan
/// (about 25,000 candidates) never touches the disk.
pub const RECORDS_IN_MEMORY: usize = 1 << 20;

/// What the record log holds in memory once spilled (its write buffer), as charged.
const SPILLED_BUFFER: u64 = 128 << 10;

/// Directory id of a location kept whole (then followed by its index in `whole`).
const WHOLE: u32 = u32::MAX;

/// One bit per slot.
#[derive(Debug, Default, Clone)]
pub(crate) struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    /// `len` clear bits.
    pub(crate) fn zeros(len: usize) -> Bits {
        Bits {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    fn push(&mut self, bit: bool) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        if bit {
            self.words[self.len / 64] |= 1 << (self.len % 64);
        }
        self.len += 1;
    }

    /// Room for `more` bits.
    fn reserve(&mut self, more: usize) {
        self.words.reserve_exact(
            (self.len + more)
                .div_ceil(64)
                .saturating_sub(self.words.len()),
        );
    }

    /// The bit at `i` (clear past the end).
    pub(crate) fn get(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Set the bit at `i` (ignored past the end).
    pub(crate) fn set(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    /// Clear the bit at `i` (ignored past the end).
    fn clear(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    /// The indexes of the set bits, ascending.
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(at, w)| {
            let mut w = *w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(at * 64 + bit)
            })
        })
    }
}

/// Candidates with their locations, gathered in order; a location named twice counts once,
/// as it was first gathered (see [`Candidates::decide`]).
///
/// In memory: a 64-bit location key a slot and two bits (about 8.3 bytes a data file), the
/// interned directories (a table has few partition/bucket directories next to millions of
/// files) and any location that does not split back exactly into its directory and name (none
/// the table layer makes). The records (class, size, directory id and packed name
/// ([`names::pack`]), extra files likewise) go to a [`RecordLog`]. What stays in memory is
/// charged to the run's [`MemoryBudget`], if it has one.
#[derive(Debug)]
pub struct Candidates {
    dirs: Vec<Location>,
    dir_ids: FastMap<String, u32>,
    whole: Vec<Location>,
    /// Per slot: its location's [`location_key`].
    pub(crate) keys: Vec<u64>,
    /// Per slot: set for a candidate's own file, clear for an extra file.
    pub(crate) mains: Bits,
    /// Per slot: set for the files of a changelog data candidate.
    pub(crate) changelog: Bits,
    /// Per slot: set for a candidate's own file that is known to be absent
    /// ([`Candidates::push_gone`]).
    gone: Bits,
    records: RecordLog,
    /// One record while it is built.
    scratch: Vec<u8>,
    budget: Option<MemoryBudget>,
    charged: u64,
    /// What the records' in-memory part is charged.
    records_charged: u64,
}

impl Default for Candidates {
    fn default() -> Candidates {
        Candidates {
            dirs: Vec::new(),
            dir_ids: FastMap::default(),
            whole: Vec::new(),
            keys: Vec::new(),
            mains: Bits::default(),
            changelog: Bits::default(),
            gone: Bits::default(),
            records: RecordLog::new(RECORDS_IN_MEMORY),
            scratch: Vec::new(),
            budget: None,
            charged: 0,
            records_charged: 0,
        }
    }
}

impl Drop for Candidates {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.release(self.charged);
        }
    }
}

/// One record read back.
pub(crate) struct Record {
    pub(crate) class: FileClass,
    pub(crate) bytes: u64,
    pub(crate) location: Location,
    pub(crate) extras: Vec<Location>,
}

/// One location of a record as it is stored ([`Candidates::for_each_stored`]).
pub(crate) enum Stored<'a> {
    /// The name (packed, see [`names::pack`]) of a file directly in an interned directory,
    /// with the directory's id and location: the file is `dir.child(name)`.
    InDir(u32, &'a Location, &'a [u8]),
    /// A location kept whole.
    Whole(&'a Location),
}

impl Stored<'_> {
    /// The length of the location's text, without building it.
    pub(crate) fn text_len(&self) -> usize {
        match self {
            Stored::Whole(l) => l.as_str().len(),
            Stored::InDir(_, dir, packed) => {
                // `Location::child` adds a separator unless the directory ends with one.
                let sep = usize::from(!dir.as_str().ends_with('/'));
                dir.as_str().len() + sep + names::unpacked_len(packed)
            }
        }
    }

    /// The location, built.
    pub(crate) fn location(&self) -> Location {
        match self {
            Stored::Whole(l) => (*l).clone(),
            Stored::InDir(_, dir, packed) => dir.child(&names::unpack(packed)),
        }
    }
}

/// The error of a temporary file of the candidates.
pub(crate) fn spill_error(e: std::io::Error) -> Error {
    Error::storage(
        std::env::temp_dir().display().to_string(),
        format!("the temporary file of the candidate files failed: {e}"),
    )
}

/// Little-endian reads from a record.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Option<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Some(u64::from_le_bytes(a))
    }
}

impl Candidates {
    /// Empty, charging what it holds to `budget` (released when dropped).
    pub fn with_budget(budget: MemoryBudget) -> Candidates {
        let mut c = Candidates::default();
        c.budget = Some(budget);
        c
    }

    /// `location` as a directory id and packed name (appended to `out`), interning its
    /// directory; or kept whole. Returns the bytes it costs in memory.
    fn encode_location(&mut self, location: &Location, out: &mut Vec<u8>) -> u64 {
        let s = location.as_str();
        let split = s.rsplit_once('/').filter(|(_, n)| {
            !n.is_empty() && *n != "." && *n != ".." && n.len() < u32::MAX as usize
        });
        let mut cost = 0;
        let mut at = None;
        if let Some((dir, name)) = split {
            if let Some(&d) = self.dir_ids.get(dir) {
                at = Some((d, name));
            } else if let Some(p) = location.parent() {
                // `dir + "/" + name` is then `location` exactly for every `name` without a
                // `/` (`Location::join` appends one segment after a separator).
                if p.as_str() == dir && self.dirs.len() < (WHOLE - 1) as usize {
                    let d = self.dirs.len() as u32;
                    cost += 2 * (dir.len() as u64 + 24) + 16;
                    self.dir_ids.insert(dir.to_string(), d);
                    self.dirs.push(p);
                    at = Some((d, name));
                }
            }
        }
        match at {
            Some((d, name)) => {
                out.extend_from_slice(&d.to_le_bytes());
                let len_at = out.len();
                out.extend_from_slice(&[0; 4]);
                names::pack(name, out);
                let len = (out.len() - len_at - 4) as u32;
                out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
            }
            None => {
                cost += 24 + s.len() as u64;
                out.extend_from_slice(&WHOLE.to_le_bytes());
                out.extend_from_slice(&(self.whole.len() as u32).to_le_bytes());
                self.whole.push(location.clone());
            }
        }
        cost
    }

    /// The next location of a record as stored, without building it.
    fn stored_location<'r>(&'r self, c: &mut Cursor<'r>) -> Option<Stored<'r>> {
        let d = c.u32()?;
        let n = c.u32()?;
        if d == WHOLE {
            return self.whole.get(n as usize).map(Stored::Whole);
        }
        let packed = c.take(n as usize)?;
        Some(Stored::InDir(d, self.dirs.get(d as usize)?, packed))
    }

    /// The next location of a record, its name unpacked in `name` (a buffer reused across
    /// calls: the location is the only allocation).
    fn decode_location<'r>(&'r self, c: &mut Cursor<'r>, name: &mut String) -> Option<Location> {
        match self.stored_location(c)? {
            Stored::Whole(l) => Some(l.clone()),
            Stored::InDir(_, dir, packed) => {
                name.clear();
                names::unpack_into(packed, name);
                // `child` is `join` for one plain segment, with one allocation.
                Some(dir.child(name))
            }
        }
    }

    /// Make room for `slots` more slots (files and extra files) at once, so that the keys
    /// grow once rather than by doubling. Past the memory bound it reserves nothing (the
    /// pushes then fail as they would have).
    pub fn reserve(&mut self, slots: usize) {
        if let Some(b) = &self.budget {
            // Only a hint: never reserve more than the run may hold.
            if let Some(limit) = b.limit() {
                if b.used().saturating_add(8 * slots as u64) > limit {
                    return;
                }
            }
        }
        self.keys.reserve_exact(slots);
        self.mains.reserve(slots);
        self.changelog.reserve(slots);
        self.gone.reserve(slots);
    }

    /// Add one (an earlier entry of the same location wins). Fails past the memory bound or
    /// if the temporary file of the records cannot be created or written.
    pub fn push(&mut self, location: Location, candidate: Candidate) -> Result<()> {
        self.push_as(location, candidate, false)
    }

    /// [`Candidates::push`] of a candidate whose own file is already gone while some of its
    /// extra files are not: its location still counts as a candidate's own file (protection
    /// and duplicates are decided on it as on any other), but a plan never deletes or reports
    /// it, only its extra files, and only where its own file would have gone.
    pub fn push_gone(&mut self, location: Location, candidate: Candidate) -> Result<()> {
        self.push_as(location, candidate, true)
    }

    fn push_as(&mut self, location: Location, candidate: Candidate, gone: bool) -> Result<()> {
        if self.keys.len() + 1 + candidate.extras.len() > u32::MAX as usize {
            return Err(Error::Internal("more than 2^32 candidate files".into()));
        }
        let mut record = std::mem::take(&mut self.scratch);
        record.clear();
        record.push(candidate.class.code());
        record.extend_from_slice(&(candidate.extras.len() as u32).to_le_bytes());
        record.extend_from_slice(&candidate.bytes.to_le_bytes());
        let mut cost = self.encode_location(&location, &mut record);
        for x in &candidate.extras {
            cost += self.encode_location(x, &mut record);
        }
        let pushed = self.records.push(|b| b.extend_from_slice(&record));
        self.scratch = record;
        pushed.map_err(spill_error)?;
        let changelog = candidate.class == FileClass::ChangelogData;
        self.keys.push(location_key(location.as_str()));
        self.mains.push(true);
        self.changelog.push(changelog);
        self.gone.push(gone);
        for x in &candidate.extras {
            self.keys.push(location_key(x.as_str()));
            self.mains.push(false);
            self.changelog.push(changelog);
            self.gone.push(false);
        }
        // A key and three bits a slot.
        cost += 8 * (1 + candidate.extras.len() as u64);
        if self.keys.len() % 32 == 0 {
            cost += 8;
        }
        if self.keys.len() % 64 == 0 {
            cost += 8;
        }
        let records = if self.records.spilled() {
            SPILLED_BUFFER
        } else {
            self.records.heap_bytes()
        };
        if let Some(b) = &self.budget {
            if records < self.records_charged {
                let back = self.records_charged - records;
                b.release(back);
                self.charged -= back;
            } else {
                cost += records - self.records_charged;
            }
            self.records_charged = records;
            b.charge("candidate files", cost)?;
            self.charged += cost;
        }
        Ok(())
    }

    /// Add all of `later` after these (entries of these win on the same location). Fails only
    /// past the memory bound or on a temporary file's error.
    pub fn append(&mut self, later: Candidates) -> Result<()> {
        self.reserve(later.slots());
        let mut r = later.records.reader();
        let mut slot = 0;
        while let Some(rec) = r.next_record() {
            let rec = later
                .decode(rec.map_err(spill_error)?)
                .ok_or_else(|| spill_error(std::io::Error::other("malformed record")))?;
            let gone = later.gone.get(slot);
            slot += 1 + rec.extras.len();
            self.push_as(
                rec.location,
                Candidate {
                    class: rec.class,
                    bytes: rec.bytes,
                    extras: rec.extras,
                },
                gone,
            )?;
        }
        Ok(())
    }

    /// Entries gathered so far (a location named twice counts twice).
    pub fn len(&self) -> usize {
        self.records.len() as usize
    }

    /// True if nothing was gathered.
    #[cfg(feature = "internal-api")]
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Every gathered location, in order (built one at a time; a temporary file that cannot
    /// be read ends it early, with an error logged).
    #[cfg(any(test, feature = "internal-api"))]
    pub fn locations(&self) -> impl Iterator<Item = Location> + '_ {
        let mut r = self.records.reader();
        std::iter::from_fn(move || match r.next_record()? {
            Ok(rec) => self.decode(rec).map(|r| r.location),
            Err(e) => {
                tracing::error!(error = %e, "candidates: the temporary file could not be read");
                None
            }
        })
    }

    /// A record's fields, or only its class and its extra files' count (see
    /// [`Candidates::header`]).
    pub(crate) fn decode(&self, rec: &[u8]) -> Option<Record> {
        self.decode_with(rec, &mut String::new())
    }

    /// [`Candidates::decode`] with a name buffer reused across records.
    pub(crate) fn decode_with(&self, rec: &[u8], name: &mut String) -> Option<Record> {
        let mut c = Cursor(rec);
        let class = FileClass::from_code(c.u8()?);
        let n = c.u32()?;
        let bytes = c.u64()?;
        let location = self.decode_location(&mut c, name)?;
        let mut extras = Vec::with_capacity(n as usize);
        for _ in 0..n {
            extras.push(self.decode_location(&mut c, name)?);
        }
        Some(Record {
            class,
            bytes,
            location,
            extras,
        })
    }

    /// A record's class and its locations as stored (its own file's first, then its extra
    /// files'), each passed to `f` without being built; `None` for a malformed record.
    pub(crate) fn for_each_stored<'r>(
        &'r self,
        rec: &'r [u8],
        mut f: impl FnMut(Stored<'r>),
    ) -> Option<FileClass> {
        let mut c = Cursor(rec);
        let class = FileClass::from_code(c.u8()?);
        let n = c.u32()?;
        c.u64()?;
        for _ in 0..=n {
            f(self.stored_location(&mut c)?);
        }
        Some(class)
    }

    /// A record's class and number of extra files, without decoding it.
    pub(crate) fn header(rec: &[u8]) -> Option<(FileClass, usize)> {
        let mut c = Cursor(rec);
        let class = FileClass::from_code(c.u8()?);
        c.u32().map(|n| (class, n as usize))
    }

    /// The number of extra files of a record, without decoding it.
    pub(crate) fn extras_in(rec: &[u8]) -> Option<usize> {
        let mut c = Cursor(rec);
        c.u8()?;
        c.u32().map(|n| n as usize)
    }

    /// The records, in gathering order.
    pub(crate) fn reader(&self) -> RecordReader<'_> {
        self.records.reader()
    }

    /// Done gathering: the records' write buffer goes to their file.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.records.finish().map_err(spill_error)
    }

    /// Slots gathered: candidates' own files and their extra files.
    pub(crate) fn slots(&self) -> usize {
        self.mains.len
    }

    /// Which slots go, given the location keys sorted ascending with the slot of each
    /// (`sorted[i]` is the key of slot `slot_at[i]`; equal keys ordered by slot) and, per
    /// sorted position, whether the first key of a run of equal keys is protected.
    ///
    /// A group of equal keys is one location, deleted at most once: by its first gathered
    /// candidate's own file if it is one and not protected; else, if not protected, as the
    /// first gathered extra file of a candidate whose own file goes. So of equal locations
    /// the first gathered is deleted and the rest skipped, and no file is deleted whose
    /// location's key a protector names. Two different locations that share a key (a 64-bit
    /// collision) are taken for one: only the first gathered can go, and protecting either
    /// protects both; either way a file is kept, never deleted wrongly.
    pub(crate) fn decide(&self, sorted: &[u64], slot_at: &[u32], protected: &Bits) -> Bits {
        let mut ok = Bits::zeros(self.mains.len);
        let groups = || {
            let mut g = 0;
            std::iter::from_fn(move || {
                let k = *sorted.get(g)?;
                let start = g;
                while sorted.get(g) == Some(&k) {
                    g += 1;
                }
                Some(start..g)
            })
        };
        // Candidates' own files first: they do not depend on any other slot.
        for r in groups() {
            if protected.get(r.start) {
                continue;
            }
            if let Some(s) = slot_at[r].iter().find(|s| self.mains.get(**s as usize)) {
                ok.set(*s as usize);
            }
        }
        // Extra files: beside a candidate's own file that goes, where no own file goes.
        for r in groups() {
            if protected.get(r.start) {
                continue;
            }
            let slots = &slot_at[r];
            if slots
                .iter()
                .any(|s| self.mains.get(*s as usize) && ok.get(*s as usize))
            {
                continue;
            }
            let first = slots.iter().find(|s| {
                let s = **s as usize;
                !self.mains.get(s) && {
                    // Its candidate's own slot is the nearest own slot before it.
                    let mut p = s;
                    while p > 0 && !self.mains.get(p) {
                        p -= 1;
                    }
                    self.mains.get(p) && ok.get(p)
                }
            });
            if let Some(s) = first {
                ok.set(*s as usize);
            }
        }
        // An own file already gone was decided like any other, so that its extra files go
        // where it would have; it is not deleted itself.
        for s in self.gone.ones() {
            ok.clear(s);
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    fn cand(class: FileClass, bytes: u64, extras: &[&str]) -> Candidate {
        Candidate::new(class, bytes, extras.iter().map(|x| loc(x)).collect(), "")
    }

    fn records(c: &Candidates) -> Vec<(String, FileClass, u64, Vec<String>)> {
        let mut r = c.reader();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            let rec = c.decode(rec.unwrap()).unwrap();
            out.push((
                rec.location.as_str().to_string(),
                rec.class,
                rec.bytes,
                rec.extras.iter().map(|x| x.as_str().to_string()).collect(),
            ));
        }
        out
    }

    #[test]
    fn reserving_changes_nothing_but_capacity_and_respects_the_bound() {
        let mut plain = Candidates::default();
        let mut sized = Candidates::default();
        sized.reserve(1000);
        assert!(sized.keys.capacity() >= 1000);
        for c in [&mut plain, &mut sized] {
            c.push(
                loc("file:///t/dt=1/bucket-0/a.orc"),
                cand(FileClass::Data, 1, &["file:///t/dt=1/bucket-0/a.orc.index"]),
            )
            .unwrap();
            c.push(
                loc("file:///t/dt=1/bucket-0/b.orc"),
                cand(FileClass::ChangelogData, 2, &[]),
            )
            .unwrap();
        }
        assert_eq!(records(&plain), records(&sized));
        assert_eq!(plain.keys, sized.keys);
        assert_eq!(plain.slots(), sized.slots());
        for i in 0..plain.slots() {
            assert_eq!(plain.mains.get(i), sized.mains.get(i));
            assert_eq!(plain.changelog.get(i), sized.changelog.get(i));
        }
        // A hint past the memory bound reserves nothing.
        let mut bounded = Candidates::with_budget(MemoryBudget::new(Some(1 << 20)));
        bounded.reserve(1 << 20);
        assert_eq!(bounded.keys.capacity(), 0);
    }

    #[test]
    fn candidates_give_back_exact_locations_in_gathering_order() {
        let budget = MemoryBudget::default();
        let mut c = Candidates::with_budget(budget.clone());
        let name = "data-00799820-1fb5-481a-b44c-173a73f008e4-61.parquet";
        c.push(
            loc("file:///t/dt=2/bucket-0/b.orc"),
            cand(FileClass::Data, 2, &[]),
        )
        .unwrap();
        c.push(
            loc(&format!("file:///t/dt=1/bucket-0/{name}")),
            cand(
                FileClass::Data,
                1,
                &["file:///t/dt=1/bucket-0/a.orc.index", "memory:///y"],
            ),
        )
        .unwrap();
        // A store root has no directory to intern: kept whole.
        c.push(loc("memory:///x"), cand(FileClass::Data, 3, &[]))
            .unwrap();
        assert!(budget.used() > 0);
        let mut later = Candidates::default();
        later
            .push(
                loc("file:///t/dt=1/bucket-0/c.orc"),
                cand(FileClass::ChangelogData, 4, &[]),
            )
            .unwrap();
        c.append(later).unwrap();
        c.finish().unwrap();
        assert_eq!(c.len(), 4);
        let got = records(&c);
        assert_eq!(
            got,
            vec![
                (
                    "file:///t/dt=2/bucket-0/b.orc".into(),
                    FileClass::Data,
                    2,
                    vec![]
                ),
                (
                    format!("file:///t/dt=1/bucket-0/{name}"),
                    FileClass::Data,
                    1,
                    vec![
                        "file:///t/dt=1/bucket-0/a.orc.index".into(),
                        "memory:///y".into()
                    ]
                ),
                ("memory:///x".into(), FileClass::Data, 3, vec![]),
                (
                    "file:///t/dt=1/bucket-0/c.orc".into(),
                    FileClass::ChangelogData,
                    4,
                    vec![]
                ),
            ]
        );
        let all: Vec<&str> = got
            .iter()
            .flat_map(|g| std::iter::once(g.0.as_str()).chain(g.3.iter().map(|x| x.as_str())))
            .collect();
        assert_eq!(c.keys.len(), all.len());
        for (i, l) in all.iter().enumerate() {
            assert_eq!(c.keys[i], location_key(l));
        }
        let mains: Vec<bool> = (0..all.len()).map(|i| c.mains.get(i)).collect();
        assert_eq!(mains, vec![true, true, false, false, true, true]);
        assert!(c.changelog.get(5) && !c.changelog.get(4));
        let located: Vec<String> = c.locations().map(|l| l.as_str().to_string()).collect();
        assert_eq!(located.len(), 4);
        let used = budget.used();
        drop(c);
        assert!(used > 0 && budget.used() == 0, "released on drop");
    }

    #[test]
    fn many_candidates_spill_and_read_back() {
        let budget = MemoryBudget::default();
        let mut c = Candidates::with_budget(budget.clone());
        let n = 40_000u64;
        for i in 0..n {
            let name = format!("data-00799820-1fb5-481a-b44c-{:012x}-{i}.parquet", i);
            c.push(
                loc(&format!("file:///t/dt={}/bucket-0/{name}", i % 7)),
                cand(FileClass::Data, i, &[]),
            )
            .unwrap();
        }
        c.finish().unwrap();
        assert!(c.records.spilled());
        // About a key, two bits and the directories: the records are on disk.
        assert!(
            budget.used() < n * 9 + SPILLED_BUFFER + 4096,
            "{}",
            budget.used()
        );
        let got = records(&c);
        assert_eq!(got.len() as u64, n);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(g.2, i as u64);
            assert!(g.0.ends_with(&format!("-{i}.parquet")));
            assert_eq!(c.keys[i], location_key(&g.0));
        }
    }

    #[test]
    fn candidates_past_the_bound_fail() {
        let mut c = Candidates::with_budget(MemoryBudget::new(Some(40)));
        let e = c
            .push(
                loc("file:///t/dt=1/bucket-0/a-long-enough-name.orc"),
                cand(FileClass::Data, 1, &[]),
            )
            .unwrap_err();
        assert!(e.to_string().contains("candidate files"), "{e}");
    }
}
