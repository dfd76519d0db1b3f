//! Partial results of orphan-removal units, and their merge.
//!
//! One [`Partial`] type serves every unit kind: a list unit fills the listing fields, a read
//! unit the reference fields, a delete unit the deletion fields, so any set of results merges
//! with one function. Every list is kept sorted and deduplicated, counters are sums and the
//! set of units included is a disjoint union, so [`merge`] is associative and commutative and
//! its bytes do not depend on the order or grouping of the merges. A unit merged twice, or
//! results of two different plans, are refused (they would double counts or mix runs).
//!
//! References are 64-bit keys ([`crate::hash::location_key`], [`crate::hash::name_key`]) with a
//! fixed seed, identical in every process. A key collision can only make an orphan look
//! referenced (it is then kept), never the reverse.

use std::sync::Arc;

use crate::clean::report::FileClass;
use crate::error::{Error, Result};

use super::codec::{Kind, Reader, Writer};
use super::keyset::KeyLog;
use super::shard::{self, MAX_SHARDS};
use crate::hash::name_key;

/// One candidate file of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Candidate {
    /// Its name in the directory.
    pub name: String,
    /// Size from the listing.
    pub size: u64,
    /// Its class, by directory and name.
    pub class: FileClass,
}

/// The candidates of one directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ListedDir {
    /// The directory's location.
    pub dir: String,
    /// The data root it lies under (data directories only).
    pub data_root: Option<String>,
    /// Candidates, sorted by name.
    pub files: Vec<Candidate>,
}

/// A metadata file a read unit could not read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ReadFailure {
    /// An index manifest (else a manifest).
    pub index: bool,
    /// Its name in `manifest/`.
    pub name: String,
    /// The error, as it can be rebuilt ([`ReadFailure::error`]).
    pub code: u8,
    /// Path the error names.
    pub path: String,
    /// Malformed kind, or empty.
    pub kind: String,
    /// The message.
    pub message: String,
}

/// Error kinds a [`ReadFailure`] carries.
const E_NOT_FOUND: u8 = 1;
const E_MALFORMED: u8 = 2;
const E_STORAGE: u8 = 3;
const E_CANCELLED: u8 = 4;
const E_OTHER: u8 = 5;

/// Kinds of [`Error::Malformed`] a failure may name (the type needs a static string).
const MALFORMED_KINDS: [&str; 8] = [
    "manifest",
    "manifest list",
    "index manifest",
    "snapshot",
    "tag",
    "schema",
    "changelog",
    "metadata",
];

impl ReadFailure {
    /// The failure of reading `name` with `error`.
    pub fn new(index: bool, name: &str, error: &Error) -> Self {
        let (code, path, kind, message) = match error {
            Error::NotFound { path } => (E_NOT_FOUND, path.clone(), "", String::new()),
            Error::Malformed {
                kind,
                path,
                message,
            } => (E_MALFORMED, path.clone(), *kind, message.clone()),
            Error::Storage { path, message } => (E_STORAGE, path.clone(), "", message.clone()),
            Error::Cancelled => (E_CANCELLED, String::new(), "", String::new()),
            other => (E_OTHER, String::new(), "", other.to_string()),
        };
        ReadFailure {
            index,
            name: name.to_string(),
            code,
            path,
            kind: kind.to_string(),
            message,
        }
    }

    /// The error again.
    pub fn error(&self) -> Error {
        match self.code {
            E_NOT_FOUND => Error::NotFound {
                path: self.path.clone(),
            },
            E_MALFORMED => Error::Malformed {
                kind: MALFORMED_KINDS
                    .iter()
                    .find(|k| **k == self.kind)
                    .copied()
                    .unwrap_or("metadata"),
                path: self.path.clone(),
                message: self.message.clone(),
            },
            E_STORAGE => Error::Storage {
                path: self.path.clone(),
                message: self.message.clone(),
            },
            E_CANCELLED => Error::Cancelled,
            _ => Error::Internal(self.message.clone()),
        }
    }
}

/// A file a delete unit deleted (or a dry run would delete).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Deleted {
    /// Its deletion phase (report order).
    pub phase: u8,
    /// Its path as reported (relative to the table root where possible).
    pub path: String,
    /// Its class.
    pub class: FileClass,
    /// Its size.
    pub bytes: u64,
}

/// A deletion that failed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Failed {
    /// Its deletion phase.
    pub phase: u8,
    /// Its path as reported.
    pub path: String,
    /// The error.
    pub error: String,
}

/// Name keys held in temporary files ([`KeyLog`]) rather than in [`Partial::names`]: the
/// single-process run's references. Results are equal when they share the same logs.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameLogs(Vec<Arc<KeyLog>>);

impl PartialEq for NameLogs {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl Eq for NameLogs {}

impl NameLogs {
    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Calls `f` with every logged key, a run at a time.
    pub fn for_each(&self, mut f: impl FnMut(&[u64])) -> Result<()> {
        for log in &self.0 {
            log.for_each(&mut f)?;
        }
        Ok(())
    }

    /// Every logged key and `names`, sorted and deduplicated.
    fn with(&self, names: &[u64]) -> Result<Vec<u64>> {
        let mut all = names.to_vec();
        self.for_each(|run| all.extend_from_slice(run))?;
        canon(&mut all);
        Ok(all)
    }
}

/// Which part of the units' results a [`Partial`] holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Part {
    /// Everything (as a unit returns it).
    #[default]
    Whole,
    /// Everything but the candidates and keys, of results split into `of` shards: counters,
    /// failures, errors, empty directories (for the driver).
    Summary {
        /// The shard count.
        of: u32,
    },
    /// The candidates and keys of shard `id` of `of` (for the shard's task).
    Shard {
        /// The shard.
        id: u32,
        /// The shard count.
        of: u32,
    },
}

/// The result of one or more units, merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Partial {
    /// The plan the units belong to (0: the empty result, which belongs to every plan).
    pub plan: u64,
    /// Which part of the results it holds (results of different parts never merge).
    pub part: Part,
    /// Ids of the units included, sorted.
    pub units: Vec<u32>,
    /// Listed directories with candidates, sorted by directory.
    pub dirs: Vec<ListedDir>,
    /// Files seen in candidate directories that would be candidates if old enough.
    pub files_listed: u64,
    /// Listed files found referenced (by location) while listing, against the references read
    /// before, whatever their age: counted here, not held in [`Partial::dirs`].
    pub referenced: u64,
    /// Location keys of the listed files younger than the cut-off, sorted and deduplicated
    /// (list units run without the references only): the decision counts those a version
    /// references into the report's `referenced` and `candidates`, as the single-process run
    /// counts them while listing.
    pub young: Vec<u64>,
    /// Data directories found empty, with their data root, sorted.
    pub empty_dirs: Vec<(String, String)>,
    /// Directories that could not be listed, sorted.
    pub errors: Vec<String>,
    /// Keys of referenced locations, sorted.
    pub locations: Vec<u64>,
    /// Keys of referenced names, sorted.
    pub names: Vec<u64>,
    /// More keys of referenced names, in temporary files (only ever in the single-process
    /// run's merged result; serialized into [`Partial::names`]).
    pub name_logs: NameLogs,
    /// Manifests read.
    pub manifests_read: u64,
    /// Manifest entries decoded.
    pub entries_seen: u64,
    /// Referenced files whose location could not be computed (kept by name).
    pub unresolved: u64,
    /// Metadata that could not be read, sorted.
    pub failures: Vec<ReadFailure>,
    /// Files deleted, sorted by phase and path.
    pub deleted: Vec<Deleted>,
    /// Deletions that failed, sorted.
    pub failed: Vec<Failed>,
    /// Directories removed.
    pub dirs_removed: u64,
}

fn class_code(c: FileClass) -> u8 {
    FileClass::ALL.iter().position(|x| *x == c).unwrap_or(0) as u8
}

fn class_of(code: u8) -> Result<FileClass> {
    FileClass::ALL
        .get(code as usize)
        .copied()
        .ok_or_else(|| Error::InvalidArgument(format!("unknown file class {code}")))
}

/// Sorts and removes duplicates.
fn canon<T: Ord>(v: &mut Vec<T>) {
    v.sort_unstable();
    v.dedup();
}

impl Partial {
    /// An empty result of the units `units` of plan `plan`.
    pub fn of_unit(plan: u64, unit: u32) -> Self {
        Partial {
            plan,
            units: vec![unit],
            ..Default::default()
        }
    }

    /// Puts every list in canonical order (call after filling a result by hand).
    pub fn canonicalize(&mut self) {
        for d in &mut self.dirs {
            d.files.sort_unstable();
            d.files.dedup_by(|a, b| a.name == b.name);
        }
        self.dirs.sort_unstable_by(|a, b| a.dir.cmp(&b.dir));
        // The same directory from two units (reached through two spellings): one entry.
        let mut out: Vec<ListedDir> = Vec::with_capacity(self.dirs.len());
        for d in std::mem::take(&mut self.dirs) {
            match out.last_mut() {
                Some(last) if last.dir == d.dir => {
                    last.files.extend(d.files);
                    last.files.sort_unstable();
                    last.files.dedup_by(|a, b| a.name == b.name);
                    if last.data_root.is_none() {
                        last.data_root = d.data_root;
                    }
                }
                _ => out.push(d),
            }
        }
        self.dirs = out;
        canon(&mut self.units);
        canon(&mut self.empty_dirs);
        self.errors.sort_unstable();
        canon(&mut self.young);
        canon(&mut self.locations);
        canon(&mut self.names);
        canon(&mut self.failures);
        canon(&mut self.deleted);
        self.failed.sort_unstable();
    }

    /// Number of candidates (those held and those found referenced while listing; not the
    /// young files of [`Partial::young`] the decision finds referenced).
    pub fn candidates(&self) -> u64 {
        self.referenced + self.dirs.iter().map(|d| d.files.len() as u64).sum::<u64>()
    }

    /// Heap bytes the candidates of `dirs` hold (an estimate, for the memory bound).
    pub fn candidate_bytes(&self) -> u64 {
        self.dirs
            .iter()
            .map(|d| {
                (std::mem::size_of::<ListedDir>() + d.dir.len()) as u64
                    + d.files
                        .iter()
                        .map(|f| (std::mem::size_of::<Candidate>() + f.name.len()) as u64)
                        .sum::<u64>()
            })
            .sum()
    }

    /// Adds `log`'s keys to the referenced names.
    pub fn add_name_log(&mut self, log: KeyLog) {
        if log.len() > 0 {
            self.name_logs.0.push(Arc::new(log));
        }
    }

    /// Heap bytes the reference keys and the young files' keys hold (their capacity).
    pub fn key_bytes(&self) -> u64 {
        ((self.locations.capacity() + self.names.capacity() + self.young.capacity()) * 8) as u64
    }

    /// Sorts and deduplicates the reference keys only (cheaper than [`Partial::canonicalize`]
    /// while results are being folded in).
    pub fn compact_keys(&mut self) {
        canon(&mut self.locations);
        canon(&mut self.names);
    }

    /// Serializes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(Kind::Partial);
        w.u64(self.plan);
        match self.part {
            Part::Whole => w.u8(0),
            Part::Summary { of } => {
                w.u8(1);
                w.u64(u64::from(of));
            }
            Part::Shard { id, of } => {
                w.u8(2);
                w.u64(u64::from(id));
                w.u64(u64::from(of));
            }
        }
        w.u64(self.units.len() as u64);
        for u in &self.units {
            w.u64(u64::from(*u));
        }
        w.u64(self.dirs.len() as u64);
        for d in &self.dirs {
            w.str(&d.dir);
            match &d.data_root {
                Some(r) => {
                    w.u8(1);
                    w.str(r);
                }
                None => w.u8(0),
            }
            w.u64(d.files.len() as u64);
            for f in &d.files {
                w.str(&f.name);
                w.u64(f.size);
                w.u8(class_code(f.class));
            }
        }
        w.u64(self.files_listed);
        w.u64(self.referenced);
        w.keys(&self.young);
        w.u64(self.empty_dirs.len() as u64);
        for (d, r) in &self.empty_dirs {
            w.str(d);
            w.str(r);
        }
        w.u64(self.errors.len() as u64);
        for e in &self.errors {
            w.str(e);
        }
        w.keys(&self.locations);
        if self.name_logs.is_empty() {
            w.keys(&self.names);
        } else {
            match self.name_logs.with(&self.names) {
                Ok(all) => w.keys(&all),
                Err(e) => {
                    // Never a result without names it had: one that cannot be read back.
                    tracing::error!(error = %e, "the reference names could not be read back");
                    w.u64(2);
                    w.u64(1);
                    w.u64(u64::MAX);
                }
            }
        }
        w.u64(self.manifests_read);
        w.u64(self.entries_seen);
        w.u64(self.unresolved);
        w.u64(self.failures.len() as u64);
        for f in &self.failures {
            w.u8(u8::from(f.index));
            w.str(&f.name);
            w.u8(f.code);
            w.str(&f.path);
            w.str(&f.kind);
            w.str(&f.message);
        }
        w.u64(self.deleted.len() as u64);
        for d in &self.deleted {
            w.u8(d.phase);
            w.str(&d.path);
            w.u8(class_code(d.class));
            w.u64(d.bytes);
        }
        w.u64(self.failed.len() as u64);
        for f in &self.failed {
            w.u8(f.phase);
            w.str(&f.path);
            w.str(&f.error);
        }
        w.u64(self.dirs_removed);
        w.finish()
    }

    /// Deserializes; an empty byte string is the empty result.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.is_empty() {
            return Ok(Partial::default());
        }
        let mut r = Reader::new(bytes, Kind::Partial)?;
        let mut p = Partial {
            plan: r.u64()?,
            ..Default::default()
        };
        let shard_count = |r: &mut Reader<'_>| -> Result<u32> {
            let v = r.u64()?;
            u32::try_from(v)
                .ok()
                .filter(|v| (1..=MAX_SHARDS).contains(v))
                .ok_or_else(|| Error::InvalidArgument(format!("shard count {v}")))
        };
        p.part = match r.u8()? {
            0 => Part::Whole,
            1 => Part::Summary {
                of: shard_count(&mut r)?,
            },
            2 => {
                let id = r.u64()?;
                let of = shard_count(&mut r)?;
                let id = u32::try_from(id)
                    .ok()
                    .filter(|id| *id < of)
                    .ok_or_else(|| Error::InvalidArgument(format!("shard {id} of {of}")))?;
                Part::Shard { id, of }
            }
            k => return Err(Error::InvalidArgument(format!("unknown partial part {k}"))),
        };
        for _ in 0..r.count()? {
            let u = r.u64()?;
            p.units.push(
                u32::try_from(u).map_err(|_| Error::InvalidArgument(format!("unit id {u}")))?,
            );
        }
        for _ in 0..r.count()? {
            let dir = r.str()?;
            let data_root = if r.u8()? == 1 { Some(r.str()?) } else { None };
            let n = r.count()?;
            let mut files = Vec::with_capacity(n);
            for _ in 0..n {
                files.push(Candidate {
                    name: r.str()?,
                    size: r.u64()?,
                    class: class_of(r.u8()?)?,
                });
            }
            p.dirs.push(ListedDir {
                dir,
                data_root,
                files,
            });
        }
        p.files_listed = r.u64()?;
        p.referenced = r.u64()?;
        p.young = r.keys()?;
        for _ in 0..r.count()? {
            p.empty_dirs.push((r.str()?, r.str()?));
        }
        for _ in 0..r.count()? {
            p.errors.push(r.str()?);
        }
        p.locations = r.keys()?;
        p.names = r.keys()?;
        p.manifests_read = r.u64()?;
        p.entries_seen = r.u64()?;
        p.unresolved = r.u64()?;
        for _ in 0..r.count()? {
            p.failures.push(ReadFailure {
                index: r.u8()? == 1,
                name: r.str()?,
                code: r.u8()?,
                path: r.str()?,
                kind: r.str()?,
                message: r.str()?,
            });
        }
        for _ in 0..r.count()? {
            p.deleted.push(Deleted {
                phase: r.u8()?,
                path: r.str()?,
                class: class_of(r.u8()?)?,
                bytes: r.u64()?,
            });
        }
        for _ in 0..r.count()? {
            p.failed.push(Failed {
                phase: r.u8()?,
                path: r.str()?,
                error: r.str()?,
            });
        }
        p.dirs_removed = r.u64()?;
        r.end()?;
        Ok(p)
    }
}

/// Folds `p` into `out` without putting anything in canonical order (see [`finish_merge`]).
/// Refuses results of two different plans.
pub(crate) fn merge_into(out: &mut Partial, p: Partial) -> Result<()> {
    if p.plan != 0 {
        if out.plan != 0 && out.plan != p.plan {
            return Err(Error::InvalidArgument(
                "partial results of two different orphan-removal plans cannot be merged".into(),
            ));
        }
        if out.plan != 0 && out.part != p.part {
            return Err(Error::InvalidArgument(format!(
                "partial results of different parts cannot be merged ({} and {}): merge the \
                 pieces of one shard, or the summaries, with each other only",
                out.part.describe(),
                p.part.describe()
            )));
        }
        out.plan = p.plan;
        out.part = p.part;
    }
    out.units.extend(p.units);
    out.dirs.extend(p.dirs);
    out.files_listed += p.files_listed;
    out.referenced += p.referenced;
    out.young.extend(p.young);
    out.empty_dirs.extend(p.empty_dirs);
    out.errors.extend(p.errors);
    out.locations.extend(p.locations);
    out.names.extend(p.names);
    out.name_logs.0.extend(p.name_logs.0);
    out.manifests_read += p.manifests_read;
    out.entries_seen += p.entries_seen;
    out.unresolved += p.unresolved;
    out.failures.extend(p.failures);
    out.deleted.extend(p.deleted);
    out.failed.extend(p.failed);
    out.dirs_removed += p.dirs_removed;
    Ok(())
}

/// Ends a sequence of [`merge_into`]: refuses a unit included twice and puts every list in
/// canonical order.
pub(crate) fn finish_merge(out: &mut Partial) -> Result<()> {
    out.units.sort_unstable();
    if let Some(w) = out.units.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::InvalidArgument(format!(
            "unit {} is included twice in the partial results being merged (merge each unit's \
             result once)",
            w[0]
        )));
    }
    out.canonicalize();
    Ok(())
}

/// Merges partial results: associative and commutative (the result does not depend on the
/// order or the grouping). Refuses results of different plans and a unit included twice.
pub(crate) fn merge_all(parts: Vec<Partial>) -> Result<Partial> {
    let mut out = Partial::default();
    for p in parts {
        merge_into(&mut out, p)?;
    }
    finish_merge(&mut out)?;
    Ok(out)
}

/// [`merge_all`] of two serialized results.
pub(crate) fn merge_bytes(a: &[u8], b: &[u8]) -> Result<Vec<u8>> {
    let merged = merge_all(vec![Partial::from_bytes(a)?, Partial::from_bytes(b)?])?;
    Ok(merged.to_bytes())
}

impl Part {
    /// For messages.
    pub fn describe(&self) -> String {
        match self {
            Part::Whole => "whole results".into(),
            Part::Summary { of } => format!("the summary of results split into {of} shards"),
            Part::Shard { id, of } => format!("shard {id} of {of}"),
        }
    }
}

impl Partial {
    /// Splits a result (of any units, whole) into the summary (everything but candidates and
    /// keys) and `shards` shard pieces, each with the candidates of the file names of its
    /// shard and the location and name keys of that shard ([`shard::shard_of`]). Each piece
    /// and the summary carry the result's unit ids, so that every shard, and the driver, can
    /// check that it has every unit's result exactly once.
    pub fn split(mut self, shards: u32) -> Result<(Partial, Vec<Partial>)> {
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(Error::InvalidArgument(format!(
                "a shard count must be 1 to {MAX_SHARDS}, not {shards}"
            )));
        }
        if self.part != Part::Whole {
            return Err(Error::InvalidArgument(format!(
                "only whole results can be split, not {}",
                self.part.describe()
            )));
        }
        if !self.name_logs.is_empty() {
            self.names = self.name_logs.with(&self.names)?;
            self.name_logs = NameLogs::default();
        }
        let n = shards as usize;
        let mut pieces: Vec<Partial> = (0..shards)
            .map(|id| Partial {
                plan: self.plan,
                part: Part::Shard { id, of: shards },
                units: self.units.clone(),
                ..Default::default()
            })
            .collect();
        let mut by_shard: Vec<Vec<Candidate>> = vec![Vec::new(); n];
        for d in std::mem::take(&mut self.dirs) {
            for f in d.files {
                by_shard[shard::shard_of(name_key(&f.name), shards) as usize].push(f);
            }
            for (piece, files) in pieces.iter_mut().zip(by_shard.iter_mut()) {
                if !files.is_empty() {
                    piece.dirs.push(ListedDir {
                        dir: d.dir.clone(),
                        data_root: d.data_root.clone(),
                        files: std::mem::take(files),
                    });
                }
            }
        }
        let keys =
            |keys: Vec<u64>, pieces: &mut [Partial], field: fn(&mut Partial) -> &mut Vec<u64>| {
                for k in keys {
                    if let Some(p) = pieces.get_mut(shard::shard_of(k, shards) as usize) {
                        field(p).push(k);
                    }
                }
            };
        keys(std::mem::take(&mut self.young), &mut pieces, |p| {
            &mut p.young
        });
        keys(std::mem::take(&mut self.locations), &mut pieces, |p| {
            &mut p.locations
        });
        keys(std::mem::take(&mut self.names), &mut pieces, |p| {
            &mut p.names
        });
        for p in &mut pieces {
            p.canonicalize();
        }
        self.part = Part::Summary { of: shards };
        self.canonicalize();
        Ok((self, pieces))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(plan: u64, unit: u32, seed: u64) -> Partial {
        let mut p = Partial::of_unit(plan, unit);
        p.dirs.push(ListedDir {
            dir: format!("file:///t/p={}/bucket-0", seed % 3),
            data_root: Some("file:///t".into()),
            files: vec![Candidate {
                name: format!("data-{seed}.orc"),
                size: seed,
                class: FileClass::Data,
            }],
        });
        p.files_listed = seed;
        p.referenced = seed % 4;
        p.young = vec![seed * 3, seed * 3 + 1];
        p.locations = vec![seed, seed * 7 + 1];
        p.names = vec![seed ^ 5];
        p.errors.push(format!("e{}", seed % 2));
        p.failures.push(ReadFailure::new(
            seed % 2 == 0,
            &format!("manifest-{seed}"),
            &Error::NotFound { path: "x".into() },
        ));
        p.deleted.push(Deleted {
            phase: (seed % 3) as u8,
            path: format!("f{seed}"),
            class: FileClass::Manifest,
            bytes: seed,
        });
        p.canonicalize();
        p
    }

    #[test]
    fn merge_is_order_and_grouping_free() {
        let parts: Vec<Partial> = (0..6).map(|i| part(9, i, u64::from(i) * 13 + 2)).collect();
        let all = merge_all(parts.clone()).unwrap();
        let mut rev = parts.clone();
        rev.reverse();
        let (a, b) = rev.split_at(2);
        let left = merge_all(a.to_vec()).unwrap();
        let right = merge_all(b.to_vec()).unwrap();
        let grouped = merge_bytes(&right.to_bytes(), &left.to_bytes()).unwrap();
        assert_eq!(grouped, all.to_bytes());
        assert_eq!(Partial::from_bytes(&grouped).unwrap(), all);
        // The empty result is neutral.
        assert_eq!(merge_bytes(&grouped, &[]).unwrap(), grouped);
        // A unit twice, or another plan, is refused.
        assert!(merge_all(vec![parts[0].clone(), parts[0].clone()]).is_err());
        assert!(merge_all(vec![parts[0].clone(), part(8, 1, 1)]).is_err());
        let f = &all.failures[0];
        assert!(f.error().is_not_found());
    }

    #[test]
    fn logged_names_are_serialized_with_the_others() {
        let mut p = part(1, 0, 3);
        let mut log = KeyLog::default();
        log.add(&[9, 1, 9]).unwrap();
        p.add_name_log(log.finish().unwrap());
        // An empty log adds nothing.
        p.add_name_log(KeyLog::default().finish().unwrap());
        assert_eq!(p.name_logs.0.len(), 1);
        let back = Partial::from_bytes(&p.to_bytes()).unwrap();
        let mut expected = p.names.clone();
        expected.extend([1, 9]);
        canon(&mut expected);
        assert_eq!(back.names, expected);
        assert!(back.name_logs.is_empty());
        // Merged results keep the logs.
        let mut merged = Partial::default();
        merge_into(&mut merged, p.clone()).unwrap();
        assert_eq!(merged.name_logs, p.name_logs);
        assert_ne!(merged.name_logs, NameLogs::default());
    }

    #[test]
    fn a_split_result_holds_every_candidate_and_key_once() {
        let whole = merge_all((0..5).map(|i| part(4, i, u64::from(i) * 31 + 7)).collect()).unwrap();
        for shards in [1, 2, 5, 300] {
            let (summary, pieces) = whole.clone().split(shards).unwrap();
            assert_eq!(pieces.len(), shards as usize);
            assert_eq!(summary.part, Part::Summary { of: shards });
            assert!(summary.dirs.is_empty() && summary.locations.is_empty());
            assert_eq!(summary.failures, whole.failures);
            assert_eq!(summary.units, whole.units);
            let mut locations: Vec<u64> = Vec::new();
            let mut names: Vec<u64> = Vec::new();
            let mut young: Vec<u64> = Vec::new();
            let mut files = 0;
            for (id, p) in pieces.iter().enumerate() {
                assert_eq!(
                    p.part,
                    Part::Shard {
                        id: id as u32,
                        of: shards
                    }
                );
                assert_eq!(p.units, whole.units);
                let back = Partial::from_bytes(&p.to_bytes()).unwrap();
                assert_eq!(&back, p);
                for k in &p.locations {
                    assert_eq!(shard::shard_of(*k, shards), id as u32);
                }
                for d in &p.dirs {
                    for f in &d.files {
                        assert_eq!(shard::shard_of(name_key(&f.name), shards), id as u32);
                        files += 1;
                    }
                }
                locations.extend(&p.locations);
                names.extend(&p.names);
                young.extend(&p.young);
            }
            canon(&mut locations);
            canon(&mut names);
            canon(&mut young);
            assert_eq!(locations, whole.locations);
            assert_eq!(names, whole.names);
            assert_eq!(young, whole.young);
            assert_eq!(
                files,
                whole.dirs.iter().map(|d| d.files.len()).sum::<usize>()
            );
            // Parts never mix; a piece or summary is not split again.
            if shards > 1 {
                assert!(merge_all(vec![pieces[0].clone(), pieces[1].clone()]).is_err());
            }
            assert!(merge_all(vec![summary.clone(), pieces[0].clone()]).is_err());
            assert!(summary.clone().split(2).is_err());
            let back = Partial::from_bytes(&summary.to_bytes()).unwrap();
            assert_eq!(back, summary);
        }
        assert!(whole.clone().split(0).is_err());
        assert!(whole.split(MAX_SHARDS + 1).is_err());
    }
}
