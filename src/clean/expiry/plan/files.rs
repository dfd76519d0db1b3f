//! A plan's data and changelog data files ([`PlannedFiles`]), held as the candidates they came
//! from and a bit a slot that says whether it goes, read back in gathering order.

use std::sync::Arc;

use crate::clean::expiry::plan::candidates::{spill_error, Bits, Candidates, Stored};
use crate::clean::report::FileClass;
use crate::clean::shared::deleter::{Planned, Represented};
use crate::clean::shared::keys::SortedKeys;
use crate::clean::shared::kinds::check_possible_in;
use crate::clean::shared::names;
use crate::error::{Error, Result};
use crate::hash::FastSet;

/// The candidates of a plan with, per slot (see [`Candidates::decide`]), whether it goes.
#[derive(Debug)]
pub(super) struct KeptCandidates {
    pub(super) cands: Candidates,
    /// Per slot: set if its location is deleted (by this slot).
    pub(super) ok: Bits,
    /// The first error reading the records back (an iteration ends early on one).
    pub(super) failed: std::sync::Mutex<Option<String>>,
}

/// Reads a plan's data or changelog data files back from the candidates' records, in
/// gathering order: each candidate's own file, then its extra files, those whose slot goes.
struct PlanIter<'a> {
    kept: &'a KeptCandidates,
    records: crate::clean::shared::spill::RecordReader<'a>,
    changelog: bool,
    /// The slot of the next record's own file.
    slot: usize,
    /// Files of the current record still to yield (reversed).
    ready: Vec<Planned>,
    /// The name buffer of [`Candidates::decode_with`].
    name: String,
}

impl PlanIter<'_> {
    fn fail(&self, e: std::io::Error) {
        tracing::error!(error = %e, "plan: the candidates' temporary file could not be read");
        let mut f = self.kept.failed.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e.to_string());
        }
    }
}

impl Iterator for PlanIter<'_> {
    type Item = Planned;

    fn next(&mut self) -> Option<Planned> {
        loop {
            if let Some(p) = self.ready.pop() {
                return Some(p);
            }
            let k = self.kept;
            let rec = match self.records.next_record()? {
                Ok(rec) => rec,
                Err(e) => {
                    self.fail(e);
                    return None;
                }
            };
            let Some(n) = Candidates::extras_in(rec) else {
                self.fail(std::io::Error::other("malformed record"));
                return None;
            };
            let s = self.slot;
            self.slot += 1 + n;
            if k.cands.changelog.get(s) != self.changelog || !(s..s + 1 + n).any(|i| k.ok.get(i)) {
                continue;
            }
            let Some(r) = k.cands.decode_with(rec, &mut self.name) else {
                self.fail(std::io::Error::other("malformed record"));
                return None;
            };
            // An extra file goes only with its candidate's own file ([`Candidates::decide`]).
            for (j, x) in r.extras.into_iter().enumerate().rev() {
                if k.ok.get(s + 1 + j) {
                    self.ready.push(Planned {
                        location: x,
                        class: r.class,
                        bytes: None,
                    });
                }
            }
            if k.ok.get(s) {
                self.ready.push(Planned {
                    location: r.location,
                    class: r.class,
                    bytes: Some(r.bytes),
                });
            }
        }
    }
}

/// The error of a record that does not parse.
fn malformed() -> Error {
    spill_error(std::io::Error::other("malformed record"))
}

/// Data or changelog data files of a plan, held as the candidates they came from (their
/// records, see [`Candidates`], and a bit a location): each file's [`Planned`] is built as it
/// is read, so a plan of millions of files never holds their locations at once.
#[derive(Debug, Clone, Default)]
pub struct PlannedFiles {
    from: Option<Arc<KeptCandidates>>,
    changelog: bool,
    len: usize,
}

impl PlannedFiles {
    pub(super) fn of(kept: &Arc<KeptCandidates>, changelog: bool) -> PlannedFiles {
        // Counted without reading the records.
        let len = (0..kept.cands.slots())
            .filter(|i| kept.ok.get(*i) && kept.cands.changelog.get(*i) == changelog)
            .count();
        PlannedFiles {
            from: Some(kept.clone()),
            changelog,
            len,
        }
    }

    /// Files planned (extra files included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The planned files in gathering order: each file, then its extra files. Each location
    /// comes at most once (and not in both a plan's data and changelog data files). If the
    /// candidates' temporary file cannot be read the iteration ends early:
    /// [`PlannedFiles::read_error`] then says so.
    pub fn iter(&self) -> impl Iterator<Item = Planned> + Send + '_ {
        let changelog = self.changelog;
        let len = self.len;
        self.from
            .iter()
            .filter(move |_| len > 0)
            .flat_map(move |k| PlanIter {
                kept: k,
                records: k.cands.reader(),
                changelog,
                slot: 0,
                ready: Vec::new(),
                name: String::new(),
            })
    }

    /// What [`Deleter::check_plan`] needs of these files without building them all: the
    /// first file of each (directory, class) group in plan order, pushed to `out`, and the
    /// count and text length of the others, added to `rest`.
    ///
    /// The checks of a data or changelog data file ([`crate::storage::Storage::check_deletable`],
    /// [`crate::clean::shared::kinds::KindRules::check`], the physical check of its
    /// directory) depend only on its directory and class for a file named by one plain
    /// segment, as every file of an interned directory is: so the first of a group passes
    /// exactly when all of them do, and the first file refused in plan order is the same.
    /// Only the length of each file's own name is its own: it is checked here for every file
    /// that is not a group's first ([`check_possible_in`]).
    pub(super) fn representatives(
        &self,
        out: &mut Vec<Planned>,
        rest: &mut Represented,
    ) -> Result<()> {
        let Some(k) = self.from.as_ref().filter(|_| !self.is_empty()) else {
            return Ok(());
        };
        let mut groups: FastSet<(u32, FileClass)> = FastSet::default();
        let mut refused: Option<Error> = None;
        let mut records = k.cands.reader();
        let mut slot = 0usize;
        while let Some(rec) = records.next_record() {
            let rec = rec.map_err(spill_error)?;
            let (class, n) = Candidates::header(rec).ok_or_else(malformed)?;
            let s = slot;
            slot += 1 + n;
            if k.cands.changelog.get(s) != self.changelog || !(s..s + 1 + n).any(|i| k.ok.get(i)) {
                continue;
            }
            let mut j = s;
            k.cands
                .for_each_stored(rec, |stored| {
                    let goes = k.ok.get(j);
                    j += 1;
                    if !goes {
                        return;
                    }
                    let first = match &stored {
                        Stored::InDir(d, _, _) => groups.insert((*d, class)),
                        Stored::Whole(_) => true,
                    };
                    if first {
                        out.push(Planned {
                            location: stored.location(),
                            class,
                            bytes: None,
                        });
                    } else {
                        // The directory's checks hold for it; its name's length is its own.
                        if let Stored::InDir(_, dir, packed) = &stored {
                            if let Err(e) = check_possible_in(
                                dir,
                                names::unpacked_len(packed),
                                stored.text_len(),
                            ) {
                                refused.get_or_insert(e);
                            }
                        }
                        rest.files += 1;
                        rest.path_bytes += stored.text_len() as u64;
                    }
                })
                .ok_or_else(malformed)?;
            if let Some(e) = refused.take() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// An error if an iteration ended early because the candidates' temporary file could not
    /// be read.
    pub fn read_error(&self) -> Result<()> {
        let Some(k) = &self.from else {
            return Ok(());
        };
        let failed = k.failed.lock().unwrap_or_else(|p| p.into_inner());
        match failed.as_ref() {
            None => Ok(()),
            Some(e) => Err(spill_error(std::io::Error::other(e.clone()))),
        }
    }
}

/// `keys` (indexed by slot) sorted, with the slot of each sorted key (ordered by key, then
/// slot). The keys are reordered in place: the only other memory is the slots and a bit a
/// key, where sorting (key, slot) pairs takes 16 bytes a key.
pub(super) fn sort_with_slots(mut keys: Vec<u64>) -> (SortedKeys, Vec<u32>) {
    let mut slots: Vec<u32> = (0..keys.len() as u32).collect();
    slots.sort_unstable_by_key(|s| (keys[*s as usize], *s));
    // keys[i] becomes keys[slots[i]], one cycle of the permutation at a time.
    let mut done = Bits::zeros(keys.len());
    for start in 0..keys.len() {
        if done.get(start) {
            continue;
        }
        let first = keys[start];
        let mut at = start;
        loop {
            done.set(at);
            let from = slots[at] as usize;
            if from == start {
                keys[at] = first;
                break;
            }
            keys[at] = keys[from];
            at = from;
        }
    }
    (SortedKeys::from_sorted(keys), slots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clean::expiry::plan::candidates::Candidate;
    use crate::hash::location_key;
    use crate::storage::Location;
    use std::collections::HashSet;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    fn cand(class: FileClass, bytes: u64, extras: &[&str]) -> Candidate {
        Candidate::new(class, bytes, extras.iter().map(|x| loc(x)).collect(), "")
    }

    #[test]
    fn keys_sort_with_their_slots() {
        let keys = vec![5u64, 3, 9, 3, 0, 5, 5, 1];
        let (sorted, slots) = sort_with_slots(keys.clone());
        assert_eq!(sorted.keys(), &[0, 1, 3, 3, 5, 5, 5, 9][..]);
        assert_eq!(slots, vec![4, 7, 1, 3, 0, 5, 6, 2]);
        for (i, s) in slots.iter().enumerate() {
            assert_eq!(sorted.keys()[i], keys[*s as usize]);
        }
        assert_eq!(sorted.range(5), 4..7);
        assert!(sort_with_slots(Vec::new()).1.is_empty());
    }

    /// The planned files of `c` with the locations in `protect` protected, as `from_parts`
    /// decides them.
    fn plan_of(mut c: Candidates, protect: &[&str]) -> (Vec<Planned>, Vec<Planned>) {
        c.finish().unwrap();
        let slots = c.slots();
        let (sorted, slot_at) = sort_with_slots(std::mem::take(&mut c.keys));
        let mut protected = Bits::zeros(slots);
        for l in protect {
            let r = sorted.range(location_key(l));
            if !r.is_empty() {
                protected.set(r.start);
            }
        }
        let ok = c.decide(sorted.keys(), &slot_at, &protected);
        let kept = Arc::new(KeptCandidates {
            cands: c,
            ok,
            failed: std::sync::Mutex::new(None),
        });
        let data = PlannedFiles::of(&kept, false);
        let changelog = PlannedFiles::of(&kept, true);
        let d: Vec<Planned> = data.iter().collect();
        let cl: Vec<Planned> = changelog.iter().collect();
        assert_eq!((d.len(), cl.len()), (data.len(), changelog.len()));
        data.read_error().unwrap();
        for (files, all) in [(&data, &d), (&changelog, &cl)] {
            check_representatives(files, all);
        }
        (d, cl)
    }

    /// What the plan check sees of `files` (whose files are `all`) is the first file of each
    /// (directory, class) group in order, and the count and text length of the others.
    fn check_representatives(files: &PlannedFiles, all: &[Planned]) {
        let mut reps = Vec::new();
        let mut rest = Represented::default();
        files.representatives(&mut reps, &mut rest).unwrap();
        let mut groups = HashSet::new();
        let mut want = Vec::new();
        let mut want_rest = Represented::default();
        for p in all {
            let s = p.location.as_str();
            let dir = s.rsplit_once('/').unwrap().0;
            if groups.insert((dir.to_string(), p.class)) {
                want.push((s.to_string(), p.class));
            } else {
                want_rest.files += 1;
                want_rest.path_bytes += s.len() as u64;
            }
        }
        let got: Vec<(String, FileClass)> = reps
            .iter()
            .map(|p| (p.location.as_str().to_string(), p.class))
            .collect();
        assert_eq!(got, want);
        assert_eq!(rest, want_rest);
    }

    fn names(p: &[Planned]) -> Vec<(&str, FileClass, Option<u64>)> {
        p.iter()
            .map(|p| (p.location.as_str(), p.class, p.bytes))
            .collect()
    }

    /// A candidate whose own file is gone: its extra files go where its own file would have
    /// (not when it is protected), never the file itself; its location still takes the place
    /// of a later candidate of the same location; appending keeps all of that.
    #[test]
    fn a_gone_candidate_gives_only_its_extra_files() {
        let mut c = Candidates::default();
        let gone = |c: &mut Candidates, l: &str, class, extras: &[&str]| {
            c.push_gone(loc(l), cand(class, 7, extras)).unwrap()
        };
        gone(
            &mut c,
            "file:///t/b/g.orc",
            FileClass::ChangelogData,
            &["file:///t/b/g.orc.index"],
        );
        gone(
            &mut c,
            "file:///t/b/p.orc",
            FileClass::Data,
            &["file:///t/b/p.orc.index"],
        );
        let mut later = Candidates::default();
        // The same location again, present this time: the first gathered wins, and that one
        // is gone, so nothing deletes it.
        later
            .push(loc("file:///t/b/g.orc"), cand(FileClass::Data, 7, &[]))
            .unwrap();
        later
            .push(loc("file:///t/b/h.orc"), cand(FileClass::Data, 8, &[]))
            .unwrap();
        gone(
            &mut later,
            "file:///t/b/k.orc",
            FileClass::Data,
            &["file:///t/b/k.orc.index"],
        );
        c.append(later).unwrap();
        let (d, cl) = plan_of(c, &["file:///t/b/p.orc"]);
        assert_eq!(
            names(&d),
            vec![
                ("file:///t/b/h.orc", FileClass::Data, Some(8)),
                ("file:///t/b/k.orc.index", FileClass::Data, None),
            ]
        );
        assert_eq!(
            names(&cl),
            vec![("file:///t/b/g.orc.index", FileClass::ChangelogData, None)]
        );
    }

    #[test]
    fn first_gathered_of_a_location_goes_once_protected_ones_and_their_extras_stay() {
        for spill in [false, true] {
            let mut c = Candidates::default();
            let many = if spill { 30_000 } else { 0 };
            let push = |c: &mut Candidates, l: &str, class, bytes, extras: &[&str]| {
                c.push(loc(l), cand(class, bytes, extras)).unwrap()
            };
            push(&mut c, "file:///t/b/2.orc", FileClass::Data, 2, &[]);
            push(
                &mut c,
                "file:///t/b/1.orc",
                FileClass::Data,
                1,
                &["file:///t/b/1.orc.index"],
            );
            // Again, as changelog data: the first gathered wins.
            push(
                &mut c,
                "file:///t/b/2.orc",
                FileClass::ChangelogData,
                9,
                &[],
            );
            // Protected, so its extra file stays too.
            push(
                &mut c,
                "file:///t/b/p.orc",
                FileClass::Data,
                3,
                &["file:///t/b/p.orc.index"],
            );
            // Its extra file is protected.
            push(
                &mut c,
                "file:///t/b/4.orc",
                FileClass::Data,
                4,
                &["file:///t/b/x.index", "file:///t/b/4.orc.index"],
            );
            // Shares an extra file with a candidate that goes: deleted once.
            push(
                &mut c,
                "file:///t/b/5.orc",
                FileClass::ChangelogData,
                5,
                &["file:///t/b/1.orc.index"],
            );
            for i in 0..many {
                push(
                    &mut c,
                    &format!(
                        "file:///t/c{}/data-00799820-1fb5-481a-b44c-{i:012x}-{i}.orc",
                        i % 3
                    ),
                    FileClass::Data,
                    i,
                    &[],
                );
            }
            let (d, cl) = plan_of(c, &["file:///t/b/p.orc", "file:///t/b/x.index"]);
            assert_eq!(
                names(&d[..5]),
                vec![
                    ("file:///t/b/2.orc", FileClass::Data, Some(2)),
                    ("file:///t/b/1.orc", FileClass::Data, Some(1)),
                    ("file:///t/b/1.orc.index", FileClass::Data, None),
                    ("file:///t/b/4.orc", FileClass::Data, Some(4)),
                    ("file:///t/b/4.orc.index", FileClass::Data, None),
                ]
            );
            assert_eq!(d.len() as u64, 5 + many);
            assert_eq!(
                names(&cl),
                vec![("file:///t/b/5.orc", FileClass::ChangelogData, Some(5))]
            );
        }
    }

    #[test]
    fn a_planned_file_comes_at_most_once_whatever_the_repeats() {
        // Repeats across candidates' own files and extra files, in any roles.
        let l = |i: u64| format!("file:///t/b/{}.orc", i % 13);
        let mut c = Candidates::default();
        for i in 0..200u64 {
            let extras: Vec<String> = (1..(i % 4)).map(|j| l(i * 7 + j)).collect();
            let extras: Vec<&str> = extras.iter().map(String::as_str).collect();
            let class = if i % 3 == 0 {
                FileClass::ChangelogData
            } else {
                FileClass::Data
            };
            c.push(loc(&l(i * 5)), cand(class, i, &extras)).unwrap();
        }
        let (d, cl) = plan_of(c, &[&l(3)]);
        let mut all: Vec<&str> = d.iter().chain(&cl).map(|p| p.location.as_str()).collect();
        assert!(!all.contains(&l(3).as_str()));
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a location planned twice");
        assert_eq!(n, 12);
    }
}
