//! The metadata of removed versions (their manifest lists, the manifests those name, index
//! manifests, index files and statistics), read while the candidates are
//! ([`RemovedMetadata::read`]), and which of it a plan deletes: every file no protector names
//! ([`MetadataCandidates::plan_into`]).

use std::collections::HashSet;
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clean::expiry::protected::{read_index_files_sized, ListedManifest, ReferenceReader};
use crate::clean::report::FileClass;
use crate::clean::shared::deleter::Planned;
use crate::clean::shared::keys::SortedKeys;
use crate::error::{Error, Result};
use crate::hash::{location_key, FastSet};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::{PathFactory, Table};

/// Which metadata of a removed version to consider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataScope {
    /// Lists, manifests, index manifest and index files, statistics.
    All,
    /// Only the lists (and their manifests) that an incremental changelog reader uses; index
    /// and statistics stay for snapshot expiry (Java's changelog expiry does the same).
    ChangelogOnly,
}

/// The metadata of removed versions that may become unreferenced: their manifest lists, the
/// manifests those name, their index manifests and the index files those name, and their
/// statistics files, each distinct, with sizes where metadata has them. It needs only the
/// removed versions, so it can be read while the candidates are (see
/// [`super::DeletionPlan::from_parts`]); what the protectors still reference is taken out later.
#[derive(Debug)]
pub struct RemovedMetadata {
    scope: MetadataScope,
    lists: Vec<(String, Option<u64>)>,
    /// The manifests the lists name, each once (by name), as the reader holds them: a pointer
    /// each, no copy of the name.
    manifests: Vec<Arc<ListedManifest>>,
    /// Index manifests with their sizes once read (`None`: missing).
    index_manifests: Vec<(String, Option<u64>)>,
    index_files: Vec<(Location, u64)>,
    statistics: Vec<String>,
}

impl RemovedMetadata {
    /// The location keys of the files [`super::DeletionPlan::from_parts`] deletes of this
    /// metadata unless a protector names them, sorted.
    pub(crate) fn location_keys(&self, table: &Table) -> Result<SortedKeys> {
        let paths = table.paths();
        let keys = self
            .sources()?
            .into_iter()
            .map(|(_, source)| Ok(location_key(self.planned(paths, source)?.location.as_str())))
            .collect::<Result<Vec<u64>>>()?;
        Ok(SortedKeys::from_unsorted(keys))
    }

    /// Read the lists (base lists first: the others are usually being cached by the candidate
    /// readers meanwhile) and, for [`MetadataScope::All`], index manifests of `removed`,
    /// concurrently. Missing lists and index manifests name nothing (an interrupted earlier run
    /// may have removed them).
    pub async fn read(
        rr: &ReferenceReader<'_>,
        table: &Table,
        removed: &[Snapshot],
        scope: MetadataScope,
    ) -> Result<RemovedMetadata> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut lists: Vec<(String, Option<u64>)> = Vec::new();
        let mut base_lists: Vec<usize> = Vec::new();
        let mut other_lists: Vec<usize> = Vec::new();
        for s in removed {
            for l in lists_in_scope(s, scope) {
                if seen.insert(l.clone()) {
                    if l == s.base_manifest_list {
                        base_lists.push(lists.len());
                    } else {
                        other_lists.push(lists.len());
                    }
                    let size = list_size(s, &l);
                    lists.push((l, size));
                }
            }
        }
        // Each list's manifests are taken as it arrives (in this fixed order, so the plan is
        // the same in a dry run and the real run) and the list is dropped. A list that is not
        // on disk (removed by an earlier run, or by Java's snapshot expiry for a long-lived
        // changelog that no longer needs it) is not planned: a report lists only files that
        // left the disk, and a dry run says what the real run does.
        let mut manifests: Vec<Arc<ListedManifest>> = Vec::new();
        let mut absent: HashSet<usize> = HashSet::new();
        {
            let lists_ref = &lists;
            let mut read =
                stream::iter(base_lists.into_iter().chain(other_lists))
                    .map(|i| async move {
                        Ok::<_, Error>((i, rr.list_if_present(&lists_ref[i].0).await?))
                    })
                    .buffered(rr.concurrency());
            let mut manifest_seen: HashSet<ByName> = HashSet::new();
            while let Some(next) = read.next().await {
                let (i, metas) = next?;
                let Some(metas) = metas else {
                    absent.insert(i);
                    continue;
                };
                for m in metas.iter() {
                    if manifest_seen.insert(ByName(m.clone())) {
                        manifests.push(m.clone());
                    }
                }
            }
        }
        let lists: Vec<(String, Option<u64>)> = lists
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !absent.contains(i))
            .map(|(_, l)| l)
            .collect();
        let mut out = RemovedMetadata {
            scope,
            lists,
            manifests,
            index_manifests: Vec::new(),
            index_files: Vec::new(),
            statistics: Vec::new(),
        };
        if scope == MetadataScope::ChangelogOnly {
            return Ok(out);
        }

        out.read_index_and_statistics(rr, table, removed, &mut seen)
            .await?;
        Ok(out)
    }

    /// Adds the index manifests and statistics files of `removed` (each once; an index
    /// manifest also once among the lists `seen`) and reads the index files those name,
    /// concurrently: a missing index manifest names nothing.
    async fn read_index_and_statistics(
        &mut self,
        rr: &ReferenceReader<'_>,
        table: &Table,
        removed: &[Snapshot],
        seen: &mut HashSet<String>,
    ) -> Result<()> {
        let mut statistics_seen: HashSet<&str> = HashSet::new();
        for s in removed {
            if let Some(im) = &s.index_manifest {
                if seen.insert(im.clone()) {
                    self.index_manifests.push((im.clone(), None));
                }
            }
            if let Some(st) = &s.statistics {
                if statistics_seen.insert(st) {
                    self.statistics.push(st.clone());
                }
            }
        }
        let mut index_seen: FastSet<Location> = FastSet::default();
        let names: Vec<String> = self
            .index_manifests
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        let mut read = stream::iter(names.into_iter().enumerate())
            .map(|(i, im)| async move {
                Ok::<_, Error>((i, read_index_files_sized(table, &im, true).await?))
            })
            .buffered(rr.concurrency());
        while let Some(next) = read.next().await {
            let (i, Some((files, size))) = next? else {
                continue;
            };
            self.index_manifests[i].1 = Some(size);
            for f in files {
                if !index_seen.contains(&f.location) {
                    index_seen.insert(f.location.clone());
                    self.index_files.push((f.location, f.bytes));
                }
            }
        }
        Ok(())
    }
}

/// The metadata files of removed versions that a plan deletes unless a protector names them,
/// in plan order: manifests, index files, statistics, then lists and index manifests (each
/// location once, a list before a manifest of the same name). It keeps the removed metadata's
/// names and each file's location key; a file is located again only when the plan takes it
/// ([`MetadataCandidates::plan_into`]), so the files a protector keeps (on a table whose
/// manifests are never merged, nearly every removed manifest) never hold a whole location.
#[derive(Debug)]
pub(super) struct MetadataCandidates {
    removed: RemovedMetadata,
    /// Each file: its phase, where its name is in `removed`, its location key.
    files: Vec<(MetadataPhase, Source, u64)>,
}

/// The metadata files a plan deletes, by phase of [`super::DeletionPlan`].
#[derive(Debug, Default)]
pub(super) struct PlannedMetadata {
    pub(super) manifests: Vec<Planned>,
    pub(super) index_files: Vec<Planned>,
    pub(super) statistics: Vec<Planned>,
    pub(super) lists: Vec<Planned>,
}

/// The phase of [`super::DeletionPlan`] a metadata file goes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MetadataPhase {
    Manifests,
    IndexFiles,
    Statistics,
    Lists,
}

/// Where a metadata candidate's name is in [`RemovedMetadata`]: the vector and the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    List(u32),
    Manifest(u32),
    IndexFile(u32),
    IndexManifest(u32),
    Statistics(u32),
}

impl RemovedMetadata {
    /// Every file of this metadata a plan deletes unless a protector names it, in plan order
    /// (see [`MetadataCandidates`]).
    fn sources(&self) -> Result<Vec<(MetadataPhase, Source)>> {
        let index = |i: usize| {
            u32::try_from(i).map_err(|_| {
                Error::Unsupported("more than 4 G metadata files in one expiry".into())
            })
        };
        let mut out = Vec::new();
        let mut named: HashSet<&str> = HashSet::new();
        for (l, _) in &self.lists {
            named.insert(l.as_str());
        }
        for (i, m) in self.manifests.iter().enumerate() {
            if named.insert(m.file_name.as_str()) {
                out.push((MetadataPhase::Manifests, Source::Manifest(index(i)?)));
            }
        }
        for i in 0..self.lists.len() {
            out.push((MetadataPhase::Lists, Source::List(index(i)?)));
        }
        if self.scope == MetadataScope::ChangelogOnly {
            return Ok(out);
        }
        for i in 0..self.index_files.len() {
            out.push((MetadataPhase::IndexFiles, Source::IndexFile(index(i)?)));
        }
        for (i, (im, _)) in self.index_manifests.iter().enumerate() {
            if named.insert(im.as_str()) {
                out.push((MetadataPhase::Lists, Source::IndexManifest(index(i)?)));
            }
        }
        for i in 0..self.statistics.len() {
            out.push((MetadataPhase::Statistics, Source::Statistics(index(i)?)));
        }
        Ok(out)
    }

    /// The file `source` names, located, with its class and size.
    fn planned(&self, paths: &PathFactory, source: Source) -> Result<Planned> {
        let at = |i: u32| i as usize;
        let (location, class, bytes) = match source {
            Source::List(i) => {
                let (name, size) = &self.lists[at(i)];
                (paths.manifest(name)?, FileClass::ManifestList, *size)
            }
            Source::Manifest(i) => {
                let m = &self.manifests[at(i)];
                (
                    paths.manifest(&m.file_name)?,
                    FileClass::Manifest,
                    Some(m.file_size.max(0) as u64),
                )
            }
            Source::IndexFile(i) => {
                let (location, size) = &self.index_files[at(i)];
                (location.clone(), FileClass::Index, Some(*size))
            }
            Source::IndexManifest(i) => {
                let (name, size) = &self.index_manifests[at(i)];
                (paths.manifest(name)?, FileClass::IndexManifest, *size)
            }
            Source::Statistics(i) => (
                paths.statistics(&self.statistics[at(i)])?,
                FileClass::Statistics,
                None,
            ),
        };
        Ok(Planned {
            location,
            class,
            bytes,
        })
    }
}

impl MetadataCandidates {
    /// The metadata of `removed`, each file's location checked and its key taken.
    pub(super) fn of(table: &Table, removed: RemovedMetadata) -> Result<MetadataCandidates> {
        let paths = table.paths();
        let files = removed
            .sources()?
            .into_iter()
            .map(|(phase, source)| {
                let planned = removed.planned(paths, source)?;
                Ok((phase, source, location_key(planned.location.as_str())))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MetadataCandidates { removed, files })
    }

    /// Their location keys, sorted.
    pub(super) fn keys(&self) -> SortedKeys {
        SortedKeys::from_unsorted(self.files.iter().map(|(_, _, k)| *k).collect())
    }

    /// By phase, located, but those whose location key is `protected`.
    pub(super) fn plan_into(
        self,
        table: &Table,
        protected: &FastSet<u64>,
    ) -> Result<PlannedMetadata> {
        let paths = table.paths();
        let mut plan = PlannedMetadata::default();
        for (phase, source, key) in self.files {
            if protected.contains(&key) {
                continue;
            }
            let p = self.removed.planned(paths, source)?;
            match phase {
                MetadataPhase::Manifests => plan.manifests.push(p),
                MetadataPhase::IndexFiles => plan.index_files.push(p),
                MetadataPhase::Statistics => plan.statistics.push(p),
                MetadataPhase::Lists => plan.lists.push(p),
            }
        }
        Ok(plan)
    }
}

/// A listed manifest that hashes and compares by its name alone (the first of a name is kept).
struct ByName(Arc<ListedManifest>);

impl PartialEq for ByName {
    fn eq(&self, other: &Self) -> bool {
        self.0.file_name == other.0.file_name
    }
}

impl Eq for ByName {}

impl std::hash::Hash for ByName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.file_name.hash(state);
    }
}

/// The size a snapshot records for one of its manifest lists (`baseManifestListSize`,
/// `deltaManifestListSize`, `changelogManifestListSize`), if any.
fn list_size(s: &Snapshot, list: &str) -> Option<u64> {
    let key = if list == s.base_manifest_list {
        "baseManifestListSize"
    } else if list == s.delta_manifest_list {
        "deltaManifestListSize"
    } else if s.changelog_manifest_list.as_deref() == Some(list) {
        "changelogManifestListSize"
    } else {
        return None;
    };
    s.extra
        .get(key)
        .and_then(|v| v.as_i64())
        .filter(|n| *n >= 0)
        .map(|n| n as u64)
}

fn lists_in_scope(s: &Snapshot, scope: MetadataScope) -> Vec<String> {
    match scope {
        MetadataScope::All => s.manifest_lists().map(String::from).collect(),
        MetadataScope::ChangelogOnly => match &s.changelog_manifest_list {
            Some(c) => vec![c.clone()],
            None => vec![s.base_manifest_list.clone(), s.delta_manifest_list.clone()],
        },
    }
}
