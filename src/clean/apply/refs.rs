//! What the versions present now reference: the location keys of every file a snapshot, tag
//! or long-lived changelog of any branch reads, apart from the versions a plan deletes.

use std::collections::BTreeSet;

use crate::clean::control::RunControl;
use crate::error::{Error, Result};
use crate::hash::{location_key, FastSet};
use crate::spec::manifest::{FileKind, ManifestEntry};
use crate::spec::snapshot::{Snapshot, Tag};
use crate::storage::Location;
use crate::table::{list_branches, Table, MAIN_BRANCH};

/// The progress phase of reading the versions present.
pub(crate) const PHASE: &str = "read versions";

/// The versions of one branch a plan deletes: they protect nothing.
#[derive(Debug, Default, Clone)]
pub(crate) struct Excluded {
    /// The branch.
    pub branch: String,
    /// Snapshot ids.
    pub snapshots: BTreeSet<i64>,
    /// Long-lived changelog ids.
    pub changelogs: BTreeSet<i64>,
    /// Tag names.
    pub tags: BTreeSet<String>,
}

/// The location keys of every referenced file (a 64-bit collision only keeps a file).
#[derive(Debug, Default)]
pub(crate) struct Referenced {
    keys: FastSet<u64>,
    /// Versions read.
    pub versions: u64,
}

impl Referenced {
    /// True when a present version references `loc`.
    pub fn contains(&self, loc: &Location) -> bool {
        self.keys.contains(&location_key(loc.as_str()))
    }

    fn add(&mut self, loc: &Location) {
        self.keys.insert(location_key(loc.as_str()));
    }

    fn add_entry(&mut self, t: &Table, e: &ManifestEntry) -> Result<()> {
        for loc in t
            .paths()
            .data_file_with_extras(&e.partition, e.bucket, &e.file)?
        {
            self.add(&loc);
        }
        Ok(())
    }
}

/// How a version's files are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// Its live files (base and delta merged).
    Live,
    /// What its delta adds (the previous snapshot was read).
    DeltaAdds,
    /// A long-lived changelog: what its changelog list and delta add; missing lists are
    /// tolerated (an interrupted changelog expiry removes metadata first).
    Changelog,
}

/// Reads every version of every branch of `main`'s table except `excluded`.
pub(crate) async fn referenced_now(
    main: &Table,
    excluded: &Excluded,
    ctl: &RunControl,
) -> Result<Referenced> {
    let storage = main.storage().clone();
    let mut refs = Referenced::default();
    // Manifests whose ADD entries were recorded, per branch (paths may differ per branch).
    let mut adds_done: FastSet<(usize, String)> = FastSet::default();
    for (bi, name) in list_branches(&storage).await?.into_iter().enumerate() {
        let t = if name == MAIN_BRANCH {
            main.with_branch_root_of(MAIN_BRANCH)
        } else {
            match main.branch(&name).await {
                Ok(b) => b,
                Err(Error::NotFound { .. }) => main.with_branch_root_of(&name),
                Err(e) => return Err(e),
            }
        };
        let ours = name == excluded.branch;
        let mut previous: Option<i64> = None;
        for id in t.snapshots().list_ids(&storage).await? {
            ctl.cancel.check()?;
            if ours && excluded.snapshots.contains(&id) {
                continue;
            }
            let Some(s) = t.snapshots().try_read(&storage, id).await? else {
                continue;
            };
            let how = if previous.is_some_and(|p| p.checked_add(1) == Some(id)) {
                Read::DeltaAdds
            } else {
                Read::Live
            };
            read_version(&t, bi, &s, how, &mut refs, &mut adds_done).await?;
            previous = Some(id);
            ctl.progress(PHASE, refs.versions, 0, 0);
        }
        for id in t.changelogs().list_ids(&storage).await? {
            ctl.cancel.check()?;
            if ours && excluded.changelogs.contains(&id) {
                continue;
            }
            let Some(s) = t.changelogs().try_read(&storage, id).await? else {
                continue;
            };
            read_version(&t, bi, &s, Read::Changelog, &mut refs, &mut adds_done).await?;
            ctl.progress(PHASE, refs.versions, 0, 0);
        }
        let tag_dir = t.branch_root().join("tag");
        for f in storage.list_metadata_dir(&tag_dir).await?.files {
            ctl.cancel.check()?;
            let Some(tag) = f.location.name().strip_prefix("tag-") else {
                continue;
            };
            if ours && excluded.tags.contains(tag) {
                continue;
            }
            let bytes = match storage.get(&f.location).await {
                Ok(b) => b,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e),
            };
            let tag = Tag::parse(&bytes, f.location.as_str())?;
            read_version(&t, bi, &tag.snapshot, Read::Live, &mut refs, &mut adds_done).await?;
            ctl.progress(PHASE, refs.versions, 0, 0);
        }
    }
    Ok(refs)
}

/// Records what version `s` of branch `t` (index `bi`) references.
async fn read_version(
    t: &Table,
    bi: usize,
    s: &Snapshot,
    how: Read,
    refs: &mut Referenced,
    adds_done: &mut FastSet<(usize, String)>,
) -> Result<()> {
    refs.versions += 1;
    let paths = t.paths();
    let reader = t.reader();
    let tolerant = how == Read::Changelog;
    // Metadata: the lists, their manifests, the index manifest and its index files, and the
    // statistics file.
    let lists: Vec<&String> = [&s.base_manifest_list, &s.delta_manifest_list]
        .into_iter()
        .chain(s.changelog_manifest_list.as_ref())
        .collect();
    let mut listed: Vec<(String, Vec<String>)> = Vec::with_capacity(lists.len());
    for l in lists {
        refs.add(&paths.manifest(l)?);
        match reader.manifest_list(paths, l).await {
            Ok(metas) => {
                let names: Vec<String> = metas.into_iter().map(|m| m.file_name).collect();
                for n in &names {
                    refs.add(&paths.manifest(n)?);
                }
                listed.push((l.clone(), names));
            }
            Err(e) if tolerant && e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(im) = &s.index_manifest {
        refs.add(&paths.manifest(im)?);
        match reader.index_manifest(paths, im).await {
            Ok(entries) => {
                for e in &entries {
                    refs.add(&paths.index_file(e)?);
                }
            }
            Err(e) if tolerant && e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(st) = &s.statistics {
        refs.add(&paths.statistics(st)?);
    }
    // Data: what a reader of this version reads.
    let manifests_of = |list: &str| {
        listed
            .iter()
            .find(|(l, _)| l == list)
            .map(|(_, names)| names.clone())
            .unwrap_or_default()
    };
    match how {
        Read::Live => {
            let mut names = manifests_of(&s.base_manifest_list);
            names.extend(manifests_of(&s.delta_manifest_list));
            for e in reader.merged_manifests(paths, &names).await? {
                refs.add_entry(t, &e)?;
            }
        }
        Read::DeltaAdds => {
            add_entries_of(
                t,
                bi,
                &manifests_of(&s.delta_manifest_list),
                refs,
                adds_done,
            )
            .await?;
        }
        Read::Changelog => {
            add_entries_of(
                t,
                bi,
                &manifests_of(&s.delta_manifest_list),
                refs,
                adds_done,
            )
            .await?;
        }
    }
    if let Some(c) = &s.changelog_manifest_list {
        add_entries_of(t, bi, &manifests_of(c), refs, adds_done).await?;
    }
    Ok(())
}

/// Records the files the ADD entries of manifests `names` name (each manifest once per
/// branch).
async fn add_entries_of(
    t: &Table,
    bi: usize,
    names: &[String],
    refs: &mut Referenced,
    adds_done: &mut FastSet<(usize, String)>,
) -> Result<()> {
    for n in names {
        if !adds_done.insert((bi, n.clone())) {
            continue;
        }
        for e in t.reader().manifest(t.paths(), n).await? {
            if e.kind == FileKind::Add {
                refs.add_entry(t, &e)?;
            }
        }
    }
    Ok(())
}
