//! Planning shared by every capability that removes versions (snapshot expiry, changelog
//! expiry, tag deletion): which data files the removed versions free, which metadata files
//! nothing else names, and the crash-safe order in which they go.

use std::collections::{HashMap, HashSet};

use futures::stream::{self, StreamExt};

use crate::clean::deleter::{Deleter, Planned};
use crate::clean::references::{read_index_files, Protector, ReferenceReader};
use crate::clean::report::FileClass;
use crate::error::{Error, Result};
use crate::spec::manifest::{FileKind, ManifestEntry};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::Table;

/// A data or changelog file that may become unreferenced, with its extra files.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Data or changelog data.
    pub class: FileClass,
    /// `_FILE_SIZE`.
    pub bytes: u64,
    /// Extra files beside it (`.index`, ...), deleted with it.
    pub extras: Vec<Location>,
}

/// Candidates by location.
pub type Candidates = HashMap<Location, Candidate>;

fn candidate(
    table: &Table,
    e: &ManifestEntry,
    class: FileClass,
    with_extras: bool,
) -> Result<(Location, Candidate)> {
    let mut files = table
        .paths()
        .data_file_with_extras(&e.partition, e.bucket, &e.file)?;
    let main = files.remove(0);
    Ok((
        main,
        Candidate {
            class,
            bytes: e.file.file_size.max(0) as u64,
            extras: if with_extras { files } else { Vec::new() },
        },
    ))
}

/// The manifests of `lists` in list order, each with the index of the list naming it.
fn manifests_by_list(rr: &ReferenceReader, lists: &[String]) -> Vec<(usize, String)> {
    lists
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            rr.list(l)
                .iter()
                .map(|m| (i, m.file_name.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Files the given delta lists delete: per list, DELETE entries keyed by location, cancelled
/// by an ADD of the same location in that list (a level upgrade). Missing lists and manifests
/// read as empty (an interrupted earlier run may have removed them after their data).
///
/// Manifests are read concurrently and consumed in list order; each is reduced to its
/// candidates as soon as it is decoded, and its entries are dropped.
pub async fn deleted_by_deltas(
    rr: &mut ReferenceReader<'_>,
    table: &Table,
    delta_lists: &[String],
) -> Result<Candidates> {
    rr.load_lists(delta_lists, true).await?;
    let tasks = manifests_by_list(rr, delta_lists);
    let rr = &*rr;
    let mut read = stream::iter(tasks)
        .map(|(i, n)| async move { Ok::<_, Error>((i, rr.manifest(&n, true).await?)) })
        .buffered(rr.concurrency());
    let mut out = Candidates::new();
    let mut per_list = Candidates::new();
    let mut current = None;
    while let Some(next) = read.next().await {
        let (i, entries) = next?;
        if current != Some(i) {
            out.extend(per_list.drain());
            current = Some(i);
        }
        for e in &entries {
            match e.kind {
                FileKind::Delete => {
                    let (loc, c) = candidate(table, e, FileClass::Data, true)?;
                    per_list.insert(loc, c);
                }
                FileKind::Add => {
                    if !per_list.is_empty() {
                        per_list.remove(&rr.location(e)?);
                    }
                }
            }
        }
    }
    out.extend(per_list);
    Ok(out)
}

/// Files the given lists ADD (changelog lists; Java deletes changelog files without extras).
/// Missing lists and manifests read as empty. Manifests are reduced to candidates as they are
/// decoded.
pub async fn added_by_lists(
    rr: &mut ReferenceReader<'_>,
    table: &Table,
    lists: &[String],
    class: FileClass,
) -> Result<Candidates> {
    rr.load_lists(lists, true).await?;
    let tasks = manifests_by_list(rr, lists);
    let rr = &*rr;
    let mut read = stream::iter(tasks)
        .map(|(_, n)| async move { rr.manifest(&n, true).await })
        .buffered(rr.concurrency());
    let mut out = Candidates::new();
    while let Some(entries) = read.next().await {
        for e in entries?.iter().filter(|e| e.kind == FileKind::Add) {
            let (loc, c) = candidate(table, e, class, class == FileClass::Data)?;
            out.entry(loc).or_insert(c);
        }
    }
    Ok(out)
}

/// Everything one run deletes, grouped so it can go in crash-safe order.
#[derive(Debug, Default)]
pub struct DeletionPlan {
    /// Data files and their extra files.
    pub data: Vec<Planned>,
    /// Changelog data files.
    pub changelog_data: Vec<Planned>,
    /// Manifests.
    pub manifests: Vec<Planned>,
    /// Index files.
    pub index_files: Vec<Planned>,
    /// Statistics files.
    pub statistics: Vec<Planned>,
    /// Manifest lists and index manifests (after what they name).
    pub lists: Vec<Planned>,
}

/// Which metadata of a removed version to consider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataScope {
    /// Lists, manifests, index manifest and index files, statistics.
    All,
    /// Only the lists (and their manifests) that an incremental changelog reader uses; index
    /// and statistics stay for snapshot expiry (Java's changelog expiry does the same).
    ChangelogOnly,
}

impl DeletionPlan {
    /// Plan the deletion of `candidates` minus what `protectors` still need, and of the
    /// metadata of `removed` versions that no protector names.
    pub async fn build(
        rr: &mut ReferenceReader<'_>,
        table: &Table,
        candidates: Candidates,
        removed: &[Snapshot],
        scope: MetadataScope,
        protectors: &[Protector],
    ) -> Result<DeletionPlan> {
        let protected = {
            let names: HashSet<&str> = candidates.keys().map(|l| l.name()).collect();
            rr.protected_among(protectors, &names, |l| candidates.contains_key(l))
                .await?
        };
        let referenced = rr.referenced_metadata(protectors).await?;
        let mut plan = DeletionPlan::default();

        let mut sorted: Vec<(Location, Candidate)> = candidates
            .into_iter()
            .filter(|(l, _)| !protected.contains(l))
            .collect();
        drop(protected);
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (loc, c) in sorted {
            let target = if c.class == FileClass::ChangelogData {
                &mut plan.changelog_data
            } else {
                &mut plan.data
            };
            target.push(Planned {
                location: loc,
                class: c.class,
                bytes: Some(c.bytes),
            });
            for x in c.extras {
                target.push(Planned {
                    location: x,
                    class: c.class,
                    bytes: None,
                });
            }
        }

        // Lists (and their manifests) of the removed versions, read concurrently, each once,
        // not kept; sizes from the snapshot and the lists.
        let mut planned: HashSet<String> = HashSet::new();
        let mut removed_lists: Vec<(String, Option<u64>)> = Vec::new();
        for s in removed {
            for l in lists_in_scope(s, scope) {
                if !referenced.manifest_dir_names.contains(&l) && !planned.contains(&l) {
                    planned.insert(l.clone());
                    let size = list_size(s, &l);
                    removed_lists.push((l, size));
                }
            }
        }
        {
            let rr_ref = &*rr;
            let mut read = stream::iter(removed_lists)
                .map(|(l, size)| async move {
                    let metas = rr_ref.list_uncached(&l, true).await?;
                    Ok::<_, Error>((l, size, metas))
                })
                .buffered(rr_ref.concurrency());
            while let Some(next) = read.next().await {
                let (l, size, metas) = next?;
                for m in metas.iter() {
                    if !referenced.manifest_dir_names.contains(&m.file_name)
                        && !planned.contains(&m.file_name)
                    {
                        planned.insert(m.file_name.clone());
                        plan.manifests.push(Planned {
                            location: table.paths().manifest(&m.file_name)?,
                            class: FileClass::Manifest,
                            bytes: Some(m.file_size.max(0) as u64),
                        });
                    }
                }
                plan.lists.push(Planned {
                    location: table.paths().manifest(&l)?,
                    class: FileClass::ManifestList,
                    bytes: size,
                });
            }
        }
        if scope == MetadataScope::ChangelogOnly {
            return Ok(plan);
        }

        // Index manifests of the removed versions (each distinct one read once, concurrently,
        // not kept) and the index files no protector names.
        let mut index_manifests: Vec<String> = Vec::new();
        for s in removed {
            if let Some(im) = &s.index_manifest {
                if !referenced.manifest_dir_names.contains(im) && !planned.contains(im) {
                    planned.insert(im.clone());
                    index_manifests.push(im.clone());
                }
            }
        }
        let mut planned_index: HashSet<Location> = HashSet::new();
        {
            let table_ref = table;
            let mut read = stream::iter(index_manifests)
                .map(|im| async move {
                    let files = read_index_files(table_ref, &im, true).await?;
                    Ok::<_, Error>((im, files))
                })
                .buffered(rr.concurrency());
            while let Some(next) = read.next().await {
                let (im, files) = next?;
                for f in files {
                    if !referenced.index_files.contains(&f.location)
                        && !planned_index.contains(&f.location)
                    {
                        planned_index.insert(f.location.clone());
                        plan.index_files.push(Planned {
                            location: f.location,
                            class: FileClass::Index,
                            bytes: Some(f.bytes),
                        });
                    }
                }
                plan.lists.push(Planned {
                    location: table.paths().manifest(&im)?,
                    class: FileClass::IndexManifest,
                    bytes: None,
                });
            }
        }
        for s in removed {
            if let Some(st) = &s.statistics {
                if !referenced.statistics.contains(st) && planned.insert(format!("statistics/{st}"))
                {
                    plan.statistics.push(Planned {
                        location: table.paths().statistics(st)?,
                        class: FileClass::Statistics,
                        bytes: None,
                    });
                }
            }
        }
        Ok(plan)
    }

    /// Delete in crash-safe order: data → changelog data → empty directories → manifests →
    /// index files → statistics → lists and index manifests. The caller then removes the
    /// version files and writes hints.
    pub async fn execute(
        self,
        table: &Table,
        deleter: &mut Deleter<'_>,
        clean_empty_dirs: bool,
    ) -> Result<()> {
        // The guard, for the whole plan, before the first deletion: metadata that points
        // outside the table's roots stops the run with nothing deleted.
        for p in self
            .data
            .iter()
            .chain(&self.changelog_data)
            .chain(&self.manifests)
            .chain(&self.index_files)
            .chain(&self.statistics)
            .chain(&self.lists)
        {
            table.storage().check_deletable(&p.location)?;
        }
        let touched: Vec<Location> = self
            .data
            .iter()
            .chain(self.changelog_data.iter())
            .filter_map(|p| p.location.parent())
            .collect();
        deleter.delete("data files", self.data).await?;
        deleter
            .delete("changelog files", self.changelog_data)
            .await?;
        stop_if_failed(deleter)?;
        if clean_empty_dirs {
            remove_empty_dirs(table, deleter, touched).await;
        }
        deleter.delete("manifests", self.manifests).await?;
        stop_if_failed(deleter)?;
        deleter.delete("index files", self.index_files).await?;
        deleter.delete("statistics", self.statistics).await?;
        stop_if_failed(deleter)?;
        deleter.delete("manifest lists", self.lists).await?;
        stop_if_failed(deleter)?;
        Ok(())
    }
}

/// After a phase: if any deletion failed, stop before deleting (or hinting past) the metadata
/// (manifests, lists, version files, EARLIEST) through which a rerun finds the files that are still there; otherwise they
/// would be left for good (crash-safe order, design rule 5). Nothing referenced is at stake.
pub(crate) fn stop_if_failed(deleter: &Deleter<'_>) -> Result<()> {
    let failed = &deleter.report.failed;
    match failed.first() {
        None => Ok(()),
        Some(first) => Err(Error::storage(
            first.path.clone(),
            format!(
                "{} deletion(s) failed (first: {}); stopped before deleting the metadata that \
                 lists them, so a rerun can finish",
                failed.len(),
                first.error
            ),
        )),
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

/// Remove bucket directories left empty, then their partition directories, deepest first,
/// never above the data root. Failures mean "not empty" and are ignored.
pub async fn remove_empty_dirs(table: &Table, deleter: &mut Deleter<'_>, dirs: Vec<Location>) {
    let data_root = table.paths().data_root().clone();
    let levels = table.schema().partition_keys.len();
    let mut bucket_dirs: Vec<Location> = dirs
        .into_iter()
        .filter(|d| d.is_under(&data_root))
        .collect();
    bucket_dirs.sort();
    bucket_dirs.dedup();
    let mut parents: HashSet<Location> = HashSet::new();
    for d in bucket_dirs {
        if d.name().starts_with("bucket-") && deleter.remove_dir_if_empty(&d).await {
            if let Some(p) = d.parent() {
                parents.insert(p);
            }
        }
    }
    for _ in 0..levels {
        let mut next = HashSet::new();
        let mut level: Vec<Location> = parents.drain().collect();
        level.sort();
        for p in level {
            if p == data_root || !p.is_under(&data_root) || !p.name().contains('=') {
                continue;
            }
            if deleter.remove_dir_if_empty(&p).await {
                if let Some(pp) = p.parent() {
                    next.insert(pp);
                }
            }
        }
        parents = next;
    }
}
