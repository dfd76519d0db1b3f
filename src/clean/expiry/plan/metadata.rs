//! The metadata of removed versions (their manifest lists, the manifests those name, index
//! manifests, index files and statistics), read while the candidates are
//! ([`RemovedMetadata::read`]), and which of it a plan deletes: every file no protector names
//! ([`MetadataCandidates::plan_into`]).

use std::collections::HashSet;

use futures::stream::{self, StreamExt};

use crate::clean::expiry::protected::{read_index_files_sized, ReferenceReader};
use crate::clean::report::FileClass;
use crate::clean::shared::deleter::Planned;
use crate::clean::shared::keys::SortedKeys;
use crate::error::{Error, Result};
use crate::hash::{location_key, FastSet};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::Table;

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
    manifests: Vec<(String, u64)>,
    /// Index manifests with their sizes once read (`None`: missing).
    index_manifests: Vec<(String, Option<u64>)>,
    index_files: Vec<(Location, u64)>,
    statistics: Vec<String>,
}

impl RemovedMetadata {
    /// The location keys of the files [`super::DeletionPlan::from_parts`] deletes of this
    /// metadata unless a protector names them, sorted.
    pub(crate) fn location_keys(&self, table: &Table) -> Result<SortedKeys> {
        Ok(MetadataCandidates::of(table, self)?.keys())
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
        let mut manifests: Vec<(String, u64)> = Vec::new();
        let mut absent: HashSet<usize> = HashSet::new();
        {
            let lists_ref = &lists;
            let mut read =
                stream::iter(base_lists.into_iter().chain(other_lists))
                    .map(|i| async move {
                        Ok::<_, Error>((i, rr.list_if_present(&lists_ref[i].0).await?))
                    })
                    .buffered(rr.concurrency());
            let mut manifest_seen: HashSet<String> = HashSet::new();
            while let Some(next) = read.next().await {
                let (i, metas) = next?;
                let Some(metas) = metas else {
                    absent.insert(i);
                    continue;
                };
                for m in metas.iter() {
                    if !manifest_seen.contains(&m.file_name) {
                        manifest_seen.insert(m.file_name.clone());
                        manifests.push((m.file_name.clone(), m.file_size.max(0) as u64));
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
/// located, in plan order: manifests, index files, statistics, then lists and index
/// manifests (each location once, a list before a manifest of the same name).
#[derive(Debug, Default)]
pub(super) struct MetadataCandidates {
    /// Each file with the phase it goes in.
    files: Vec<(MetadataPhase, Planned)>,
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

impl MetadataCandidates {
    /// The metadata of `removed`, located.
    pub(super) fn of(table: &Table, removed: &RemovedMetadata) -> Result<MetadataCandidates> {
        let paths = table.paths();
        let mut out = MetadataCandidates::default();
        let mut named: HashSet<&str> = HashSet::new();
        for (l, _) in &removed.lists {
            named.insert(l.as_str());
        }
        for (m, size) in &removed.manifests {
            if named.insert(m.as_str()) {
                out.push(
                    MetadataPhase::Manifests,
                    paths.manifest(m)?,
                    FileClass::Manifest,
                    Some(*size),
                );
            }
        }
        for (l, size) in &removed.lists {
            out.push(
                MetadataPhase::Lists,
                paths.manifest(l)?,
                FileClass::ManifestList,
                *size,
            );
        }
        if removed.scope == MetadataScope::ChangelogOnly {
            return Ok(out);
        }
        for (f, size) in &removed.index_files {
            out.push(
                MetadataPhase::IndexFiles,
                f.clone(),
                FileClass::Index,
                Some(*size),
            );
        }
        for (im, size) in &removed.index_manifests {
            if named.insert(im.as_str()) {
                out.push(
                    MetadataPhase::Lists,
                    paths.manifest(im)?,
                    FileClass::IndexManifest,
                    *size,
                );
            }
        }
        for st in &removed.statistics {
            out.push(
                MetadataPhase::Statistics,
                paths.statistics(st)?,
                FileClass::Statistics,
                None,
            );
        }
        Ok(out)
    }

    fn push(
        &mut self,
        phase: MetadataPhase,
        location: Location,
        class: FileClass,
        bytes: Option<u64>,
    ) {
        self.files.push((
            phase,
            Planned {
                location,
                class,
                bytes,
            },
        ));
    }

    /// Their location keys, sorted.
    pub(super) fn keys(&self) -> SortedKeys {
        SortedKeys::from_unsorted(
            self.files
                .iter()
                .map(|(_, p)| location_key(p.location.as_str()))
                .collect(),
        )
    }

    /// By phase, but those whose location key is `protected`.
    pub(super) fn plan_into(self, protected: &FastSet<u64>) -> PlannedMetadata {
        let mut plan = PlannedMetadata::default();
        for (phase, p) in self.files {
            if protected.contains(&location_key(p.location.as_str())) {
                continue;
            }
            match phase {
                MetadataPhase::Manifests => plan.manifests.push(p),
                MetadataPhase::IndexFiles => plan.index_files.push(p),
                MetadataPhase::Statistics => plan.statistics.push(p),
                MetadataPhase::Lists => plan.lists.push(p),
            }
        }
        plan
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
