//! What still references files: the versions that protect them (retained snapshots, tags of
//! every branch, other branches' snapshots, long-lived changelogs), and for a set of candidate
//! files, which of them any such version still needs.
//!
//! Every manifest list and manifest is read at most once per run; manifests are decoded and
//! immediately filtered down to the candidates, so memory follows the candidate set, not the
//! table.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::error::Result;
use crate::spec::manifest::{FileKind, ManifestEntry, ManifestFileMeta};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::Table;

/// How a protecting version is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectMode {
    /// A readable version (snapshot, tag): its live files (base + delta merged) and the ADDs of
    /// its changelog list; all of its manifest lists, manifests, index files and statistics.
    Full,
    /// A snapshot after an already-`Full` one of the same line: files its delta (and changelog
    /// list) adds; all of its metadata. (Any file live in it is live in the earlier `Full`
    /// version or added by one of these deltas.)
    DeltaAdds,
    /// A long-lived changelog: what an incremental reader of it uses — its changelog list when
    /// it has one, else its delta list (plus the base list Java keeps with it).
    Changelog,
}

/// One version that keeps files alive.
#[derive(Debug, Clone)]
pub struct Protector {
    /// For logs and errors, e.g. "tag t1 (branch main)".
    pub label: String,
    /// The version's snapshot document.
    pub snapshot: Snapshot,
    /// How to read it.
    pub mode: ProtectMode,
}

/// A file entry reduced to what protection needs.
#[derive(Debug, Clone)]
struct Slim {
    kind: FileKind,
    level: i32,
    location: Location,
}

/// Caches and reads for one run.
pub struct ReferenceReader<'t> {
    table: &'t Table,
    lists: HashMap<String, Arc<Vec<ManifestFileMeta>>>,
    /// Fully decoded manifests (those read to find candidates), reused for protection.
    full: HashMap<String, Arc<Vec<ManifestEntry>>>,
    slim: HashMap<String, Arc<Vec<Slim>>>,
    index_files: HashMap<String, Arc<Vec<Location>>>,
}

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

impl<'t> ReferenceReader<'t> {
    /// A reader for `table` (any branch: manifests are shared).
    pub fn new(table: &'t Table) -> Self {
        ReferenceReader {
            table,
            lists: HashMap::new(),
            full: HashMap::new(),
            slim: HashMap::new(),
            index_files: HashMap::new(),
        }
    }

    fn concurrency(&self) -> usize {
        self.table.reader().concurrency()
    }

    /// Read (once) the given manifest lists. With `tolerate_missing`, absent lists read as
    /// empty; otherwise absence is an error.
    pub async fn load_lists(&mut self, names: &[String], tolerate_missing: bool) -> Result<()> {
        let todo: Vec<String> = distinct(names.iter().filter(|n| !self.lists.contains_key(*n)));
        let table = self.table;
        let read: Vec<(String, Vec<ManifestFileMeta>)> = stream::iter(todo)
            .map(|n| async move {
                match table.reader().manifest_list(table.paths(), &n).await {
                    Ok(v) => Ok((n, v)),
                    Err(e) if tolerate_missing && e.is_not_found() => Ok((n, Vec::new())),
                    Err(e) => Err(e),
                }
            })
            .buffer_unordered(self.concurrency())
            .try_collect()
            .await?;
        for (n, v) in read {
            self.lists.insert(n, Arc::new(v));
        }
        Ok(())
    }

    /// A loaded list's manifests (empty if never loaded).
    pub fn list(&self, name: &str) -> Arc<Vec<ManifestFileMeta>> {
        self.lists.get(name).cloned().unwrap_or_default()
    }

    /// Read (once) manifests in full. With `tolerate_missing`, absent ones read as empty.
    pub async fn load_full(&mut self, names: &[String], tolerate_missing: bool) -> Result<()> {
        let todo: Vec<String> = distinct(names.iter().filter(|n| !self.full.contains_key(*n)));
        let table = self.table;
        let read: Vec<(String, Vec<ManifestEntry>)> = stream::iter(todo)
            .map(|n| async move {
                match table.reader().manifest(table.paths(), &n).await {
                    Ok(v) => Ok((n, v)),
                    Err(e) if tolerate_missing && e.is_not_found() => Ok((n, Vec::new())),
                    Err(e) => Err(e),
                }
            })
            .buffer_unordered(self.concurrency())
            .try_collect()
            .await?;
        for (n, v) in read {
            self.full.insert(n, Arc::new(v));
        }
        Ok(())
    }

    /// A fully loaded manifest (empty if never loaded).
    pub fn full(&self, name: &str) -> Arc<Vec<ManifestEntry>> {
        self.full.get(name).cloned().unwrap_or_default()
    }

    /// Resolve an entry's data file location.
    pub fn location(&self, e: &ManifestEntry) -> Result<Location> {
        self.table
            .paths()
            .data_file(&e.partition, e.bucket, &e.file)
    }

    async fn load_slim(
        &mut self,
        names: &[String],
        candidate_names: &HashSet<String>,
    ) -> Result<()> {
        let mut todo = Vec::new();
        for n in distinct(names.iter()) {
            if self.slim.contains_key(&n) {
                continue;
            }
            if let Some(full) = self.full.get(&n).cloned() {
                let slim = slim_of(self.table, &full, candidate_names)?;
                self.slim.insert(n, Arc::new(slim));
            } else {
                todo.push(n);
            }
        }
        let table = self.table;
        let read: Vec<(String, Vec<Slim>)> = stream::iter(todo)
            .map(|n| async move {
                let entries = table.reader().manifest(table.paths(), &n).await?;
                let slim = slim_of(table, &entries, candidate_names)?;
                Ok::<_, crate::error::Error>((n, slim))
            })
            .buffer_unordered(self.concurrency())
            .try_collect()
            .await?;
        for (n, v) in read {
            self.slim.insert(n, Arc::new(v));
        }
        Ok(())
    }

    fn lists_of(p: &Protector) -> Vec<String> {
        let s = &p.snapshot;
        match p.mode {
            ProtectMode::Full | ProtectMode::DeltaAdds => {
                s.manifest_lists().map(String::from).collect()
            }
            ProtectMode::Changelog => match &s.changelog_manifest_list {
                Some(c) => vec![c.clone()],
                None => vec![s.base_manifest_list.clone(), s.delta_manifest_list.clone()],
            },
        }
    }

    /// Of the `candidates`, those that some protector still needs. Any metadata a protector
    /// needs that cannot be read is an error (nothing may then be deleted).
    pub async fn protected_files(
        &mut self,
        protectors: &[Protector],
        candidates: &HashSet<Location>,
    ) -> Result<HashSet<Location>> {
        let mut protected = HashSet::new();
        if candidates.is_empty() {
            return Ok(protected);
        }
        let candidate_names: HashSet<String> =
            candidates.iter().map(|l| l.name().to_string()).collect();
        let all_lists: Vec<String> = protectors.iter().flat_map(Self::lists_of).collect();
        self.load_lists(&all_lists, false).await?;
        let manifests: Vec<String> = all_lists
            .iter()
            .flat_map(|l| {
                self.list(l)
                    .iter()
                    .map(|m| m.file_name.clone())
                    .collect::<Vec<_>>()
            })
            .collect();
        self.load_slim(&manifests, &candidate_names).await?;

        for p in protectors {
            let s = &p.snapshot;
            let slim_of_list = |list: &str| -> Vec<Arc<Vec<Slim>>> {
                self.list(list)
                    .iter()
                    .filter_map(|m| self.slim.get(&m.file_name).cloned())
                    .collect()
            };
            let mut adds_only: Vec<String> = Vec::new();
            match p.mode {
                ProtectMode::Full => {
                    // Merge base then delta by (location, level).
                    let mut live: HashMap<(Location, i32), ()> = HashMap::new();
                    for list in [&s.base_manifest_list, &s.delta_manifest_list] {
                        for m in slim_of_list(list) {
                            for e in m.iter() {
                                let key = (e.location.clone(), e.level);
                                match e.kind {
                                    FileKind::Add => {
                                        live.insert(key, ());
                                    }
                                    FileKind::Delete => {
                                        live.remove(&key);
                                    }
                                }
                            }
                        }
                    }
                    protected.extend(live.into_keys().map(|(l, _)| l));
                    adds_only.extend(s.changelog_manifest_list.clone());
                }
                ProtectMode::DeltaAdds => {
                    adds_only.push(s.delta_manifest_list.clone());
                    adds_only.extend(s.changelog_manifest_list.clone());
                }
                ProtectMode::Changelog => adds_only.extend(Self::lists_of(p)),
            }
            for list in adds_only {
                for m in slim_of_list(&list) {
                    protected.extend(
                        m.iter()
                            .filter(|e| e.kind == FileKind::Add)
                            .map(|e| e.location.clone()),
                    );
                }
            }
        }
        protected.retain(|l| candidates.contains(l));
        Ok(protected)
    }

    /// Index file locations named by an index manifest (read once). With `tolerate_missing`
    /// an absent index manifest names nothing.
    pub async fn index_files_of(
        &mut self,
        name: &str,
        tolerate_missing: bool,
    ) -> Result<Arc<Vec<Location>>> {
        if let Some(v) = self.index_files.get(name) {
            return Ok(v.clone());
        }
        let entries = match self
            .table
            .reader()
            .index_manifest(self.table.paths(), name)
            .await
        {
            Ok(v) => v,
            Err(e) if tolerate_missing && e.is_not_found() => Vec::new(),
            Err(e) => return Err(e),
        };
        let mut locs = Vec::with_capacity(entries.len());
        for e in entries.iter().filter(|e| e.kind == FileKind::Add) {
            locs.push(self.table.paths().index_file(e)?);
        }
        let locs = Arc::new(locs);
        self.index_files.insert(name.to_string(), locs.clone());
        Ok(locs)
    }

    /// Every metadata file the protectors reference (strict: unreadable metadata is an error).
    pub async fn referenced_metadata(
        &mut self,
        protectors: &[Protector],
    ) -> Result<ReferencedMetadata> {
        let mut out = ReferencedMetadata::default();
        let lists: Vec<String> = protectors.iter().flat_map(Self::lists_of).collect();
        self.load_lists(&lists, false).await?;
        for l in &lists {
            out.manifest_dir_names.insert(l.clone());
            out.manifest_dir_names
                .extend(self.list(l).iter().map(|m| m.file_name.clone()));
        }
        for p in protectors {
            if let Some(s) = &p.snapshot.statistics {
                out.statistics.insert(s.clone());
            }
            if p.mode == ProtectMode::Changelog {
                continue;
            }
            if let Some(im) = &p.snapshot.index_manifest {
                out.manifest_dir_names.insert(im.clone());
                let files = self.index_files_of(im, false).await?;
                out.index_files.extend(files.iter().cloned());
            }
        }
        Ok(out)
    }
}

fn slim_of(
    table: &Table,
    entries: &[ManifestEntry],
    candidate_names: &HashSet<String>,
) -> Result<Vec<Slim>> {
    let mut out = Vec::new();
    for e in entries {
        if !candidate_names.contains(&e.file.file_name) {
            continue;
        }
        out.push(Slim {
            kind: e.kind,
            level: e.file.level,
            location: table.paths().data_file(&e.partition, e.bucket, &e.file)?,
        });
    }
    Ok(out)
}

fn distinct<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names.filter(|n| seen.insert(n.as_str())).cloned().collect()
}
