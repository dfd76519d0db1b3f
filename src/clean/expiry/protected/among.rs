//! Which candidates the protectors still need ([`ReferenceReader::protect_among`]: the live
//! files of each full version, the files each later delta or changelog adds) and which metadata
//! they reference ([`ReferenceReader::referenced_metadata`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::clean::expiry::protected::protectors::{
    changelog_optional_lists, ProtectMode, Protector,
};
use crate::clean::expiry::protected::reader::ReferenceReader;
use crate::clean::expiry::protected::slim::{CandidateKeys, Slim};
use crate::error::Result;
use crate::hash::FastMap;
use crate::spec::manifest::FileKind;
use crate::storage::Location;

/// Metadata a set of versions references.
#[derive(Debug, Default)]
pub struct ReferencedMetadata {
    /// Manifest list, manifest and index manifest names (all in `manifest/`).
    pub manifest_dir_names: HashSet<String>,
    /// Index file locations.
    pub index_files: HashSet<Location>,
    /// Statistics file names.
    pub statistics: HashSet<String>,
}

impl ReferenceReader<'_> {
    /// Of the `candidates`, those that some protector still needs. Any metadata a protector
    /// needs that cannot be read is an error (nothing may then be deleted).
    #[cfg(feature = "internal-api")]
    pub async fn protected_files(
        &mut self,
        protectors: &[Protector],
        candidates: &HashSet<Location>,
    ) -> Result<crate::hash::FastSet<Location>> {
        let names = CandidateKeys::from_locations(candidates.iter());
        self.protected_among(protectors, Arc::new(names), |l| candidates.contains(l))
            .await
    }

    /// Of the candidates (files whose names pass `candidate_keys`, located where
    /// `is_candidate` says), those that some protector still needs. Any metadata a protector
    /// needs that cannot be read is an error (nothing may then be deleted). Slim entries are cached per
    /// manifest for the candidate names of the first call; later calls must pass the same
    /// (or a smaller) candidate set.
    #[cfg(feature = "internal-api")]
    pub async fn protected_among(
        &mut self,
        protectors: &[Protector],
        candidate_keys: Arc<CandidateKeys>,
        is_candidate: impl Fn(&Location) -> bool,
    ) -> Result<crate::hash::FastSet<Location>> {
        let mut protected = crate::hash::FastSet::default();
        self.protect_among(protectors, candidate_keys, is_candidate, |l| {
            if !protected.contains(l) {
                protected.insert(l.clone());
            }
        })
        .await?;
        Ok(protected)
    }

    /// [`ReferenceReader::protected_among`] without building the set: `protect` is called
    /// with every candidate location some protector still needs (possibly more than once).
    pub async fn protect_among(
        &mut self,
        protectors: &[Protector],
        candidate_keys: Arc<CandidateKeys>,
        is_candidate: impl Fn(&Location) -> bool,
        mut protect: impl FnMut(&Location),
    ) -> Result<()> {
        if candidate_keys.is_empty() {
            return Ok(());
        }
        let all_lists: Vec<String> = self.lists_of_all(protectors);
        self.load_lists(&all_lists, false).await?;
        let manifests = self.manifests_of_lists(&all_lists);
        self.load_slim(&manifests, &candidate_keys).await?;
        // Each manifest's entries that name a candidate, found once per manifest (protectors
        // share most manifests): a slim manifest holds what passed the name filter, which
        // also passes names that only share a key with a candidate's.
        let mut slims: HashMap<&str, Arc<Vec<Slim>>> = HashMap::new();
        for m in &manifests {
            if !slims.contains_key(m.as_str()) {
                slims.insert(m.as_str(), self.cached_slim(m));
            }
        }
        let relevant: HashMap<&str, Vec<&Slim>> = slims
            .iter()
            .map(|(m, slim)| {
                let kept = slim
                    .iter()
                    .filter(|e| e.locations().any(&is_candidate))
                    .collect();
                (*m, kept)
            })
            .collect();

        let producer_none = self.table.options().changelog_producer_none();
        for p in protectors {
            let s = &p.snapshot;
            let slim_of_list = |list: &str| -> Vec<&[&Slim]> {
                self.list(list)
                    .iter()
                    .filter_map(|m| relevant.get(m.file_name.as_str()).map(Vec::as_slice))
                    .collect()
            };
            let mut adds_only: Vec<String> = Vec::new();
            match p.mode {
                ProtectMode::Full => {
                    // Merge base then delta by identifier (location, level and the rest,
                    // exactly as readers merge), over candidates only (the merge is per
                    // key); every live entry then protects its location, whatever entry a
                    // candidate came from.
                    let mut live: FastMap<(&Location, i32, &[u8]), &Slim> = FastMap::default();
                    for list in [&s.base_manifest_list, &s.delta_manifest_list] {
                        for m in slim_of_list(list) {
                            for e in m.iter() {
                                let key = (&e.location, e.level, &e.ident[..]);
                                match e.kind {
                                    FileKind::Add => {
                                        live.insert(key, *e);
                                    }
                                    FileKind::Delete => {
                                        live.remove(&key);
                                    }
                                }
                            }
                        }
                    }
                    for e in live.into_values() {
                        for l in e.locations() {
                            protect(l);
                        }
                    }
                    adds_only.extend(s.changelog_manifest_list.clone());
                }
                ProtectMode::DeltaAdds => {
                    adds_only.push(s.delta_manifest_list.clone());
                    adds_only.extend(s.changelog_manifest_list.clone());
                }
                ProtectMode::Changelog => match &s.changelog_manifest_list {
                    Some(c) => adds_only.push(c.clone()),
                    None if producer_none => adds_only.push(s.delta_manifest_list.clone()),
                    None => {}
                },
            }
            for list in adds_only {
                for m in slim_of_list(&list) {
                    for e in m.iter().filter(|e| e.kind == FileKind::Add) {
                        for l in e.locations() {
                            protect(l);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Every metadata file the protectors reference (strict: unreadable metadata is an error).
    pub async fn referenced_metadata(
        &mut self,
        protectors: &[Protector],
    ) -> Result<ReferencedMetadata> {
        let mut out = ReferencedMetadata::default();
        let mut lists: Vec<String> = self.lists_of_all(protectors);
        self.load_lists(&lists, false).await?;
        let producer_none = self.table.options().changelog_producer_none();
        let optional: Vec<String> = protectors
            .iter()
            .filter(|p| p.mode == ProtectMode::Changelog)
            .flat_map(|p| changelog_optional_lists(&p.snapshot, producer_none))
            .collect();
        self.load_lists(&optional, true).await?;
        lists.extend(optional);
        for l in &lists {
            if !out.manifest_dir_names.contains(l) {
                out.manifest_dir_names.insert(l.clone());
            }
            for m in self.list(l).iter() {
                if !out.manifest_dir_names.contains(&m.file_name) {
                    out.manifest_dir_names.insert(m.file_name.clone());
                }
            }
        }
        self.load_index_manifests(&Self::index_manifests_of(protectors), false)
            .await?;
        for p in protectors {
            if p.mode == ProtectMode::Changelog {
                // A changelog reader reads neither statistics nor index files (Java deletes
                // both at snapshot expiry).
                continue;
            }
            if let Some(s) = &p.snapshot.statistics {
                out.statistics.insert(s.clone());
            }
            if let Some(im) = &p.snapshot.index_manifest {
                if out.manifest_dir_names.contains(im) {
                    // Read already (same index manifest as an earlier protector).
                    continue;
                }
                out.manifest_dir_names.insert(im.clone());
                let files = self.index_files_of(im, false).await?;
                out.index_files
                    .extend(files.iter().map(|f| f.location.clone()));
            }
        }
        Ok(out)
    }
}
