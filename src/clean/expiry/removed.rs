//! Which files a range of removed versions frees: the data files their delta lists delete
//! ([`deleted_by_deltas`]) and the files their changelog lists add ([`added_by_lists`]), read
//! as candidates for a deletion plan. Whether a candidate goes is decided later, against what
//! the kept versions protect ([`crate::clean::expiry::plan::DeletionPlan::from_parts`]).

use std::collections::HashSet;

use futures::stream::{self, StreamExt};

use crate::clean::expiry::plan::candidates::{Candidate, Candidates};
use crate::clean::expiry::protected::{ListedManifest, ReferenceReader, Slim};
use crate::clean::report::FileClass;
use crate::error::{Error, Result};
use crate::hash::{location_key, FastMap};
use crate::spec::manifest::FileKind;
use crate::storage::Location;
use crate::table::{DataFileLocator, ManifestFiles, PathFactory, Table};

/// One entry of a manifest read for candidates, reduced by the task that decodes it.
enum Reduced {
    /// A file the entry deletes (delta lists) or adds (changelog lists): a candidate, with its
    /// [`crate::hash::location_key`].
    Candidate(u64, Location, Candidate),
    /// The location key of a file a delta list adds: cancels a DELETE of the same location
    /// earlier in that list.
    Added(u64),
}

/// Reduce a delta manifest: DELETE entries to candidates (with extras), ADD entries to
/// location keys; with `keep_slim`, also every entry as protection reduces it.
fn reduce_delta(
    paths: &PathFactory,
    entries: ManifestFiles<'_>,
    keep_slim: bool,
) -> Result<(Vec<Reduced>, Option<Vec<Slim>>)> {
    let mut locate = DataFileLocator::new(paths);
    let mut out = take_reduced();
    let mut slim = Vec::new();
    entries.for_each_locator(|e| {
        out.push(match e.kind {
            FileKind::Delete => {
                let (main, extras) = locate.locate(e)?;
                if keep_slim {
                    slim.push(Slim::of(e, main.clone(), extras.clone()));
                }
                let c = Candidate::new(
                    FileClass::Data,
                    e.file_size.max(0) as u64,
                    extras,
                    main.name(),
                );
                Reduced::Candidate(location_key(main.as_str()), main, c)
            }
            FileKind::Add if keep_slim => {
                let (location, extras) = locate.locate(e)?;
                let key = location_key(location.as_str());
                // Cached until protection ends: an exact-size copy of the location (a joined
                // one has room to spare).
                slim.push(Slim::of(e, location.clone(), extras));
                Reduced::Added(key)
            }
            FileKind::Add => Reduced::Added(locate.locator_key(e)?),
        });
        Ok(())
    })?;
    slim.shrink_to_fit();
    Ok((out, keep_slim.then_some(slim)))
}

/// Emptied vectors of [`Reduced`] entries, reused by later manifests: a fresh one
/// per manifest, grown on one thread and freed on another, left every thread's allocator
/// arena fragmented.
static REDUCED_VECS: std::sync::Mutex<Vec<Vec<Reduced>>> = std::sync::Mutex::new(Vec::new());

/// At most this many idle vectors are kept ...
const MAX_IDLE_REDUCED: usize = 32;

/// ... each of at most this many entries.
const MAX_KEPT_REDUCED: usize = 2048;

/// An empty vector for a manifest's reduced entries (an idle one if any).
fn take_reduced() -> Vec<Reduced> {
    REDUCED_VECS
        .lock()
        .ok()
        .and_then(|mut idle| idle.pop())
        .unwrap_or_default()
}

/// Keep `v` (emptied) for [`take_reduced`] unless enough are kept or it is large.
fn give_back_reduced(mut v: Vec<Reduced>) {
    v.clear();
    if v.capacity() == 0 || v.capacity() > MAX_KEPT_REDUCED {
        return;
    }
    if let Ok(mut idle) = REDUCED_VECS.lock() {
        if idle.len() < MAX_IDLE_REDUCED {
            idle.push(v);
        }
    }
}

/// Free the idle vectors of [`take_reduced`] once the candidates are read (the plan's peak
/// comes later).
fn release_reduced() {
    if let Ok(mut idle) = REDUCED_VECS.lock() {
        *idle = Vec::new();
    }
}

/// Reduce a manifest to the candidates its ADD entries name (extras only for data files).
fn reduce_adds(
    paths: &PathFactory,
    entries: ManifestFiles<'_>,
    class: FileClass,
) -> Result<Vec<(Location, Candidate)>> {
    let mut locate = DataFileLocator::new(paths);
    let mut out = Vec::new();
    entries.for_each_locator(|e| {
        if e.kind != FileKind::Add {
            return Ok(());
        }
        let (main, extras) = locate.locate(e)?;
        let extras = if class == FileClass::Data {
            extras
        } else {
            Vec::new()
        };
        let c = Candidate::new(class, e.file_size.max(0) as u64, extras, main.name());
        out.push((main, c));
        Ok(())
    })?;
    Ok(out)
}

/// How many candidates loaded `lists` name, by their manifests' counts (`count`), as a hint
/// for [`Candidates::reserve`]. The counts are not trusted: a manifest counts for at most one
/// entry a byte, and the total is capped.
fn slots_hint(
    rr: &ReferenceReader,
    lists: &[String],
    count: impl Fn(&ListedManifest) -> u32,
) -> usize {
    const MAX_HINT: u64 = 1 << 26;
    let mut seen: HashSet<&str> = HashSet::new();
    let mut total: u64 = 0;
    for l in lists {
        if !seen.insert(l.as_str()) {
            continue;
        }
        total += rr
            .list(l)
            .iter()
            .map(|m| (count(m) as u64).min(m.file_size.max(0) as u64))
            .sum::<u64>();
        if total >= MAX_HINT {
            return MAX_HINT as usize;
        }
    }
    total as usize
}

/// The manifests of `lists` in list order, each with the index of the list naming it.
pub(crate) fn manifests_by_list(rr: &ReferenceReader, lists: &[String]) -> Vec<(usize, String)> {
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

/// Files the given delta lists delete: per list, DELETE entries, cancelled by an ADD of the
/// same location later in that list (a level upgrade). Missing lists and manifests read as
/// empty (an interrupted earlier run may have removed them after their data).
///
/// Manifests are read concurrently and consumed in list order; each is reduced to locations
/// by the decoding task (on the runtime's workers), and its entries are dropped there. ADD entries are
/// reduced to 64-bit location keys: two locations sharing a key could only cancel a DELETE
/// wrongly, which keeps a file, never deletes one.
///
/// A delta manifest that `protector_manifests` names is also cached whole as protection
/// reduces it ([`ReferenceReader::cache_slim`]), so that protection does not decode it again,
/// while the cache is under its limit ([`crate::clean::expiry::protected::reader::SLIM_CACHE_BYTES`]).
/// (Such a manifest's entries are mostly candidates: protection would keep them anyway.)
pub async fn deleted_by_deltas(
    rr: &ReferenceReader<'_>,
    table: &Table,
    delta_lists: &[String],
    protector_manifests: &HashSet<String>,
) -> Result<Candidates> {
    rr.load_lists(delta_lists, true).await?;
    let tasks = manifests_by_list(rr, delta_lists);
    let paths = table.paths_arc();
    let mut read = stream::iter(tasks)
        .map(|(i, n)| async move {
            let keep_slim = protector_manifests.contains(&n) && !rr.slim_cache_full();
            let (reduced, slim) = rr
                .manifest_reduced(paths, &n, true, move |p, entries| {
                    reduce_delta(p, entries, keep_slim).map(Some)
                })
                .await?
                .unwrap_or_default();
            // `None` for a manifest read as absent: never cached, protection reads it strictly.
            if let Some(slim) = slim {
                rr.cache_slim(n, slim);
            }
            Ok::<_, Error>((i, reduced))
        })
        .buffered(rr.concurrency());
    let mut out = Candidates::with_budget(rr.memory());
    // Sized once from the lists' DELETE counts (a hint: growth by doubling left the earlier,
    // smaller copies as holes in the heap).
    out.reserve(slots_hint(rr, delta_lists, |m| m.deleted_files));
    let mut per_list = ListDeletes::default();
    let mut current = None;
    while let Some(next) = read.next().await {
        let (i, mut reduced) = next?;
        if current != Some(i) {
            per_list.take(&mut out)?;
            current = Some(i);
        }
        for r in reduced.drain(..) {
            match r {
                Reduced::Candidate(key, loc, c) => per_list.insert(key, loc, c),
                Reduced::Added(key) => per_list.cancel(key),
            }
        }
        give_back_reduced(reduced);
    }
    drop(read);
    release_reduced();
    per_list.take(&mut out)?;
    Ok(out)
}

/// One delta list's DELETEs by location key, in the order they came (the plan deletes in
/// gathering order, which must not depend on a hash map's seed: a dry run and the real run
/// report alike).
#[derive(Default)]
struct ListDeletes {
    /// Index in `order` by location key.
    at: FastMap<u64, usize>,
    /// In arrival order; `None` once cancelled (or replaced by a later DELETE of the same
    /// location, which takes its place at the end).
    order: Vec<Option<(Location, Candidate)>>,
}

impl ListDeletes {
    fn insert(&mut self, key: u64, l: Location, c: Candidate) {
        if let Some(i) = self.at.insert(key, self.order.len()) {
            self.order[i] = None;
        }
        self.order.push(Some((l, c)));
    }

    fn cancel(&mut self, key: u64) {
        if self.at.is_empty() {
            return;
        }
        if let Some(i) = self.at.remove(&key) {
            self.order[i] = None;
        }
    }

    /// Move the remaining DELETEs into `out`, in arrival order (between lists the earlier
    /// list's entry wins).
    fn take(&mut self, out: &mut Candidates) -> Result<()> {
        self.at.clear();
        for (l, c) in self.order.drain(..).flatten() {
            out.push(l, c)?;
        }
        Ok(())
    }
}

/// Files the given lists ADD (changelog lists; Java deletes changelog files without extras).
/// Missing lists and manifests read as empty. Manifests are reduced to candidates by the
/// task that decodes them.
pub async fn added_by_lists(
    rr: &ReferenceReader<'_>,
    table: &Table,
    lists: &[String],
    class: FileClass,
) -> Result<Candidates> {
    rr.load_lists(lists, true).await?;
    let tasks = manifests_by_list(rr, lists);
    let paths = table.paths_arc();
    let mut read = stream::iter(tasks)
        .map(|(_, n)| async move {
            rr.manifest_reduced(paths, &n, true, move |p, entries| {
                reduce_adds(p, entries, class)
            })
            .await
        })
        .buffered(rr.concurrency());
    let mut out = Candidates::with_budget(rr.memory());
    out.reserve(slots_hint(rr, lists, |m| m.added_files));
    while let Some(reduced) = read.next().await {
        for (l, c) in reduced? {
            out.push(l, c)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    /// An entry of a delta manifest for [`reduce_delta`] tests.
    fn delta_entry(
        kind: FileKind,
        name: &str,
        bucket: i32,
        level: i32,
        extras: &[&str],
        embedded: Option<Vec<u8>>,
        external: Option<&str>,
    ) -> crate::spec::manifest::ManifestEntry {
        crate::spec::manifest::ManifestEntry {
            kind,
            partition: vec![0, 0, 0, 0, 0, 0, 0, 0, bucket as u8],
            bucket,
            total_buckets: 4,
            file: crate::spec::manifest::DataFileMeta {
                file_name: name.to_string(),
                file_size: 100 * i64::from(bucket) - 50,
                level,
                extra_files: extras.iter().map(|x| x.to_string()).collect(),
                embedded_index: embedded,
                external_path: external.map(String::from),
                ..Default::default()
            },
        }
    }

    /// What `reduce_delta` gives, as text: candidates (key, location, size, extras), added
    /// keys and slim entries.
    fn reduced_text(
        paths: &PathFactory,
        bytes: &[u8],
        keep_slim: bool,
    ) -> std::result::Result<(Vec<String>, Vec<String>), String> {
        let at = loc("file:///t/manifest/manifest-1");
        let (reduced, slim) = reduce_delta(paths, ManifestFiles::new(bytes, &at), keep_slim)
            .map_err(|e| e.to_string())?;
        let reduced = reduced
            .iter()
            .map(|r| match r {
                Reduced::Candidate(k, l, c) => {
                    format!(
                        "C {k} {} {} {:?} {:?}",
                        l.as_str(),
                        c.bytes,
                        c.class,
                        c.extras
                    )
                }
                Reduced::Added(k) => format!("A {k}"),
            })
            .collect();
        let slim = slim
            .unwrap_or_default()
            .iter()
            .map(|s| format!("{s:?}"))
            .collect();
        Ok((reduced, slim))
    }

    /// The same, from owned entries located by [`PathFactory`] (what `reduce_delta` did before
    /// it read borrowed locators).
    fn owned_text(
        paths: &PathFactory,
        bytes: &[u8],
        keep_slim: bool,
    ) -> std::result::Result<(Vec<String>, Vec<String>), String> {
        let at = loc("file:///t/manifest/manifest-1");
        let mut reduced = Vec::new();
        let mut slim = Vec::new();
        ManifestFiles::new(bytes, &at)
            .for_each(|e| {
                if e.kind == FileKind::Add && !keep_slim {
                    let key = DataFileLocator::new(paths).data_file_key(
                        &e.partition,
                        e.bucket,
                        &e.file,
                    )?;
                    let main = paths.data_file(&e.partition, e.bucket, &e.file)?;
                    assert_eq!(key, location_key(main.as_str()));
                    reduced.push(format!("A {key}"));
                    return Ok(());
                }
                let all = paths.data_file_with_extras(&e.partition, e.bucket, &e.file)?;
                let (main, extras) = (all[0].clone(), all[1..].to_vec());
                let key = location_key(main.as_str());
                if keep_slim {
                    let l = crate::spec::manifest::FileLocator::of(&e);
                    slim.push(format!("{:?}", Slim::of(&l, main.clone(), extras.clone())));
                }
                reduced.push(match e.kind {
                    FileKind::Delete => format!(
                        "C {key} {} {} {:?} {extras:?}",
                        main.as_str(),
                        e.file.file_size.max(0),
                        FileClass::Data
                    ),
                    FileKind::Add => format!("A {key}"),
                });
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        Ok((reduced, slim))
    }

    /// `reduce_delta` reads borrowed locators, yet reduces every entry exactly as the owned
    /// entries locate it: same candidates (locations, keys, sizes, extras), same added keys,
    /// same slim entries (identifiers with the embedded index and external path), level
    /// upgrades included; and a name that is not one plain segment fails it the same way.
    #[test]
    fn reduce_delta_matches_the_owned_entries() {
        use crate::spec::manifest::encode_manifest;
        let root = loc("file:///t");
        let options = crate::spec::options::TableOptions::new(
            &std::collections::HashMap::new(),
            &std::collections::HashMap::new(),
        );
        let paths = PathFactory::new(&root, &options, Vec::new()).unwrap();
        let (add, del) = (FileKind::Add, FileKind::Delete);
        let good = vec![
            delta_entry(
                del,
                "data-1.orc",
                0,
                0,
                &["data-1.index"],
                Some(vec![1, 2]),
                None,
            ),
            // A level upgrade: DELETE then ADD of the same file.
            delta_entry(
                add,
                "data-1.orc",
                0,
                1,
                &["data-1.index"],
                Some(vec![1, 2]),
                None,
            ),
            delta_entry(
                del,
                "data-2.orc",
                1,
                0,
                &[],
                None,
                Some("file:///ext/data-2.orc"),
            ),
            delta_entry(add, "data-3.orc", 2, 0, &["a.idx", "b.idx"], None, None),
            delta_entry(
                add,
                "data-4.orc",
                3,
                5,
                &[],
                Some(vec![]),
                Some("file:///e/d-4.orc"),
            ),
            delta_entry(del, "data-5.orc", 3, 5, &[], None, None),
        ];
        let bytes = encode_manifest(&good, None, Default::default()).unwrap();
        for keep_slim in [false, true] {
            let got = reduced_text(&paths, &bytes, keep_slim).unwrap();
            assert_eq!(got, owned_text(&paths, &bytes, keep_slim).unwrap());
            assert_eq!(got.0.len(), 6);
            assert_eq!(got.1.len(), if keep_slim { 6 } else { 0 });
        }

        let hostile = [
            ("../x.orc", &[][..], None),
            ("a/b.orc", &[][..], None),
            ("..", &[][..], None),
            ("data-6.orc", &["../y.index"][..], None),
            (
                "data-7.orc",
                &["a/y.index"][..],
                Some("file:///ext/data-7.orc"),
            ),
            ("data-8.orc", &[][..], Some("not a location")),
        ];
        for (name, extras, external) in hostile {
            for kind in [add, del] {
                let mut entries = good.clone();
                entries.insert(2, delta_entry(kind, name, 1, 0, extras, None, external));
                let bytes = encode_manifest(&entries, None, Default::default()).unwrap();
                for keep_slim in [false, true] {
                    let got = reduced_text(&paths, &bytes, keep_slim);
                    let want = owned_text(&paths, &bytes, keep_slim);
                    assert_eq!(got, want, "{name} {extras:?} {kind:?} {keep_slim}");
                    // An ADD reduced to its key alone never locates its extra files.
                    let extras_only = !extras.is_empty() && kind == add && !keep_slim;
                    assert_eq!(got.is_err(), !extras_only, "{name} {kind:?} {keep_slim}");
                }
            }
        }
    }
}
