//! A protector's manifest entry reduced to what protection needs ([`Slim`]), and the key filter
//! that keeps only the entries that may name a candidate ([`CandidateKeys`]).

use crate::clean::shared::keys::SortedKeys;
use crate::error::Result;
use crate::spec::manifest::{FileKind, FileLocator};
use crate::storage::Location;
use crate::table::{DataFileLocator, ManifestFiles, PathFactory};

/// A file entry reduced to what protection needs.
#[derive(Debug, Clone)]
pub(crate) struct Slim {
    pub(crate) kind: FileKind,
    pub(crate) level: i32,
    pub(crate) location: Location,
    /// Its extra files (beside it): a version that reads the entry reads them too.
    pub(crate) extras: Vec<Location>,
    /// The rest of the entry's Paimon identifier (spec §3.7), exact: with `location` and
    /// `level` it tells whether a DELETE removes an ADD in a version's merge. Readers merge by
    /// identifier, so a DELETE under another identifier leaves a file live even at the same
    /// location (a crafted or confused entry must not free a file a reader still reads).
    pub(super) ident: Box<[u8]>,
}

impl Slim {
    /// `e` located at `location`, with its extra files at `extras`.
    pub(crate) fn of(e: &FileLocator<'_>, location: Location, extras: Vec<Location>) -> Slim {
        Slim {
            kind: e.kind,
            level: e.level,
            location,
            extras,
            ident: identifier_rest(e),
        }
    }

    /// About what the entry holds (for the memory bound).
    pub(super) fn heap_bytes(&self) -> u64 {
        (std::mem::size_of::<Slim>()
            + self.location.as_str().len()
            + self.ident.len()
            + self
                .extras
                .iter()
                .map(|x| 24 + x.as_str().len())
                .sum::<usize>()) as u64
    }

    /// Every location the entry names: the file, then its extra files.
    pub(super) fn locations(&self) -> impl Iterator<Item = &Location> {
        std::iter::once(&self.location).chain(&self.extras)
    }
}

/// The parts of an entry's identifier that its location does not already fix, encoded
/// without ambiguity (length-prefixed): partition bytes (distinct rows may share a directory),
/// bucket, extra files, embedded index and, with an external path, that path and the file
/// name (without one, the location ends in the bucket directory and the name).
fn identifier_rest(e: &FileLocator<'_>) -> Box<[u8]> {
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let mut out = Vec::with_capacity(e.partition.len() + 16);
    put(&mut out, e.partition);
    out.extend_from_slice(&e.bucket.to_le_bytes());
    out.extend_from_slice(&(e.extra_files.len() as u64).to_le_bytes());
    for x in &e.extra_files {
        put(&mut out, x.as_bytes());
    }
    match e.embedded_index {
        Some(i) => {
            out.push(1);
            put(&mut out, i);
        }
        None => out.push(0),
    }
    match e.external_path {
        Some(p) => {
            out.push(1);
            put(&mut out, p.as_bytes());
            put(&mut out, e.file_name.as_bytes());
        }
        None => out.push(0),
    }
    out.into_boxed_slice()
}

/// The locations of a candidate set (its files and their extra files), as 64-bit keys
/// ([`crate::hash::location_key`]): the pre-filter that keeps protectors' manifests down to
/// the entries that may name a candidate. A location that shares a key with a candidate's only
/// passes the filter; whether it is a candidate is then decided on its exact location.
///
/// Held sorted ([`SortedKeys`], about 10 bytes a location).
///
/// The data and changelog candidates' keys are held apart from the few other candidates'
/// (the removed versions' metadata, [`CandidateKeys::with_more`]): the first are indexed by
/// slot by the plan, and protection looks for both.
#[derive(Debug, Default)]
pub struct CandidateKeys(SortedKeys, SortedKeys);

impl CandidateKeys {
    /// From the locations' keys.
    pub fn new(keys: SortedKeys) -> CandidateKeys {
        CandidateKeys(keys, SortedKeys::default())
    }

    /// With `more` candidates' keys besides (the metadata of removed versions).
    pub fn with_more(self, more: SortedKeys) -> CandidateKeys {
        CandidateKeys(self.0, more)
    }

    /// From the locations.
    #[cfg(any(test, feature = "internal-api"))]
    pub fn from_locations<'a>(locations: impl Iterator<Item = &'a Location>) -> CandidateKeys {
        CandidateKeys::new(SortedKeys::from_unsorted(
            locations
                .map(|l| crate::hash::location_key(l.as_str()))
                .collect(),
        ))
    }

    /// The sorted keys (given to [`CandidateKeys::new`]).
    pub fn sorted(&self) -> &SortedKeys {
        &self.0
    }

    /// The other candidates' sorted keys (given to [`CandidateKeys::with_more`]).
    pub fn more(&self) -> &SortedKeys {
        &self.1
    }

    /// True if a location with this key may be a candidate.
    pub fn may_contain(&self, key: u64) -> bool {
        self.0.contains(key) || self.1.contains(key)
    }

    /// True if there are no candidates.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty() && self.1.is_empty()
    }
}

/// The entries of a protector's manifest that may name a candidate (see [`CandidateKeys`]).
pub(super) fn slim_of(
    paths: &PathFactory,
    entries: ManifestFiles<'_>,
    candidate_keys: &CandidateKeys,
) -> Result<Vec<Slim>> {
    let mut locate = DataFileLocator::new(paths);
    let mut out = Vec::new();
    entries.for_each_locator(|e| {
        // An entry passes if its location or one of its extra files' (beside it, under their
        // own names) may be a candidate's. An external path always passes, and so does an
        // entry that cannot be located: its exact location decides (or its error stops the
        // run, as any unreadable metadata of a protector does).
        if e.external_path.is_none() {
            let mut may = |name: &str| -> bool {
                locate
                    .file_key(e.partition, e.bucket, name, None)
                    .map_or(true, |k| candidate_keys.may_contain(k))
            };
            let passes = may(e.file_name) || e.extra_files.iter().any(|x| may(x));
            if !passes {
                return Ok(());
            }
        }
        let (location, extras) = locate.locate(e)?;
        // Held until protection ends: an exact-size copy of the location (a joined one has
        // room to spare).
        out.push(Slim::of(e, location.clone(), extras));
        Ok(())
    })?;
    out.shrink_to_fit();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::manifest::{DataFileMeta, ManifestEntry};
    use crate::spec::options::TableOptions;
    use std::collections::HashMap;

    fn entry(name: &str, external: Option<&str>) -> ManifestEntry {
        ManifestEntry {
            kind: FileKind::Add,
            partition: Vec::new(),
            bucket: 0,
            total_buckets: 1,
            file: DataFileMeta {
                file_name: name.to_string(),
                external_path: external.map(String::from),
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_key_filter_keeps_candidate_locations_their_extras_and_every_external_path() {
        let root = Location::parse("file:///t").unwrap();
        let options = TableOptions::new(&HashMap::new(), &HashMap::new());
        let paths = PathFactory::new(&root, &options, Vec::new()).unwrap();
        let names = CandidateKeys::from_locations(
            [
                Location::parse("file:///t/bucket-0/data-1.orc").unwrap(),
                Location::parse("file:///t/bucket-0/x.index").unwrap(),
                // Same name, another directory: no key match for `data-9.orc` below.
                Location::parse("file:///t/other/data-9.orc").unwrap(),
            ]
            .iter(),
        );
        let mut with_extra = entry("data-4.orc", None);
        with_extra.file.extra_files = vec!["x.index".into()];
        let entries = vec![
            entry("data-1.orc", None),
            entry("data-2.orc", None),
            // Same location as a candidate could have, under another file name.
            entry("data-3.orc", Some("file:///ext/data-1.orc")),
            // Its extra file is a candidate.
            with_extra,
            entry("data-9.orc", None),
        ];
        let bytes =
            crate::spec::manifest::encode_manifest(&entries, None, Default::default()).unwrap();
        let at = Location::parse("file:///t/manifest/manifest-1").unwrap();
        let slim = slim_of(&paths, ManifestFiles::new(&bytes, &at), &names).unwrap();
        let kept: Vec<&str> = slim.iter().map(|s| s.location.as_str()).collect();
        assert_eq!(
            kept,
            vec![
                "file:///t/bucket-0/data-1.orc",
                "file:///ext/data-1.orc",
                "file:///t/bucket-0/data-4.orc"
            ]
        );
    }
}
