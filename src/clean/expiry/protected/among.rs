//! Which candidates the protectors still need ([`ReferenceReader::protect_among`]: the live
//! files of each full version, the files each later delta or changelog adds) and which metadata
//! they reference ([`ReferenceReader::referenced_metadata`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clean::expiry::protected::live::LiveEntries;
use crate::clean::expiry::protected::protectors::{
    changelog_optional_lists, ProtectMode, Protector,
};
use crate::clean::expiry::protected::reader::{ListedManifest, ReferenceReader};
use crate::clean::expiry::protected::slim::{CandidateKeys, Slim};
use crate::error::Result;
use crate::memory::Charge;
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
    ///
    /// The protectors' manifests are streamed once, in an order every protector's merge
    /// sequence (base then delta list) follows ([`stream_order`]), and each manifest's entries
    /// are applied to every protector that reads it as soon as it is read: what is held is the
    /// manifests in flight and, per protector (one set for protectors whose merge is the start
    /// of another's), its candidate entries live so far, not every
    /// manifest's entries at once (on tables whose manifests were never merged that is two
    /// entries per data file). Protectors whose orders conflict (or that name a manifest twice)
    /// are read as before: every manifest reduced first, then merged per protector.
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
        let producer_none = self.table.options().changelog_producer_none();
        let reads: Vec<ProtectorReads> = protectors
            .iter()
            .map(|p| self.reads_of(p, producer_none))
            .collect();
        // Every manifest of the lists read is read (strictly), even one no protector takes
        // entries from (a long-lived changelog's base list): unreadable metadata of a
        // protector stops the run.
        let every = self.distinct_manifests_of_lists(&all_lists);
        match stream_order(&reads) {
            Some(mut order) => {
                let mut listed: HashSet<&str> = order.iter().map(String::as_str).collect();
                let rest: Vec<String> = every
                    .iter()
                    .filter(|m| listed.insert(m.as_str()))
                    .cloned()
                    .collect();
                order.extend(rest);
                self.protect_streamed(&reads, &order, &candidate_keys, &is_candidate, &mut protect)
                    .await
            }
            None => {
                tracing::debug!(
                    "protectors' manifest orders conflict: protection reduces every manifest first"
                );
                self.protect_loaded(&reads, &every, &candidate_keys, &is_candidate, &mut protect)
                    .await
            }
        }
    }

    /// The manifests protector `p` reads, in order, by how it reads them (its lists loaded).
    fn reads_of(&self, p: &Protector, producer_none: bool) -> ProtectorReads {
        let s = &p.snapshot;
        let mut merged: Vec<Arc<ListedManifest>> = Vec::new();
        let mut adds_lists: Vec<String> = Vec::new();
        match p.mode {
            ProtectMode::Full => {
                merged = self.manifests_of_lists(&[
                    s.base_manifest_list.clone(),
                    s.delta_manifest_list.clone(),
                ]);
                adds_lists.extend(s.changelog_manifest_list.clone());
            }
            ProtectMode::DeltaAdds => {
                adds_lists.push(s.delta_manifest_list.clone());
                adds_lists.extend(s.changelog_manifest_list.clone());
            }
            ProtectMode::Changelog => match &s.changelog_manifest_list {
                Some(c) => adds_lists.push(c.clone()),
                None if producer_none => adds_lists.push(s.delta_manifest_list.clone()),
                None => {}
            },
        }
        ProtectorReads {
            merged,
            adds: self.manifests_of_lists(&adds_lists),
        }
    }

    /// Protection streamed in `order` (see [`ReferenceReader::protect_among`]).
    async fn protect_streamed(
        &self,
        reads: &[ProtectorReads],
        order: &[String],
        candidate_keys: &Arc<CandidateKeys>,
        is_candidate: &impl Fn(&Location) -> bool,
        protect: &mut impl FnMut(&Location),
    ) -> Result<()> {
        let at: HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, m)| (m.as_str(), i))
            .collect();
        // A protector whose merge is the start of another's shares that one's live entries
        // (`head`): on a table whose manifests were never merged, every version's merge is
        // the start of the latest's, and one set serves them all.
        let head = share_prefixes(reads);
        // Per manifest: the heads merging it, whether some protector reads its ADDs, and the
        // protectors whose merge it ends.
        let mut mergers: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
        let mut adds: Vec<bool> = vec![false; order.len()];
        let mut ending: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
        for (p, r) in reads.iter().enumerate() {
            if head[p] == p {
                for m in &r.merged {
                    if let Some(&i) = at.get(m.file_name.as_str()) {
                        mergers[i].push(p);
                    }
                }
            }
            if let Some(&i) = r.merged.last().and_then(|m| at.get(m.file_name.as_str())) {
                ending[i].push(p);
            }
            for m in &r.adds {
                if let Some(&i) = at.get(m.file_name.as_str()) {
                    adds[i] = true;
                }
            }
        }
        // What the manifests in flight and the protectors' live entries hold is charged to
        // the run's budget: a manifest's size from when it is handed to the reads (in order, so
        // the charges do not depend on which read finishes first), then its reduced entries
        // until they are applied. A manifest found in the reduced-manifest cache is charged
        // there already.
        let sizes = self.manifest_sizes(order);
        let memory = self.memory();
        let mut live_charge = Charge::new(&memory, "protection's live entries");
        let mut live: Vec<LiveEntries> = reads.iter().map(|_| LiveEntries::default()).collect();
        let mut read = stream::iter(order.iter().cloned())
            .map(|n| {
                let mut charge = Charge::new(&memory, "protection's manifests in flight");
                let charged = if self.is_slim_cached(&n) {
                    Ok(())
                } else {
                    charge.set(sizes.get(n.as_str()).copied().unwrap_or(0))
                };
                let keys = candidate_keys.clone();
                async move {
                    charged?;
                    let (slim, fresh) = self.reduced_for_protection(n, keys).await?;
                    Ok::<_, crate::error::Error>((slim, fresh, charge))
                }
            })
            .buffered(self.concurrency());
        let mut i = 0;
        while let Some(read) = read.next().await {
            let (slim, fresh, mut in_flight) = read?;
            if fresh {
                in_flight.set(slim.iter().map(Slim::heap_bytes).sum())?;
            }
            let relevant: Vec<&Slim> = slim
                .iter()
                .filter(|e| e.locations().any(is_candidate))
                .collect();
            for &p in &mergers[i] {
                live[p].apply(&relevant);
            }
            if adds[i] {
                protect_adds(&relevant, protect);
            }
            // A merge ending here protects what is live in its head's set; the head's own end
            // (the last of its set's merges to end) drops the set.
            let mut ended: Vec<usize> = ending[i].iter().map(|&p| head[p]).collect();
            ended.sort_unstable();
            ended.dedup();
            for h in ended {
                if ending[i].contains(&h) {
                    std::mem::take(&mut live[h]).protect_all(protect);
                } else {
                    live[h].protect_each(protect);
                }
            }
            live_charge.set(live.iter().map(|l| l.bytes).sum())?;
            i += 1;
        }
        Ok(())
    }

    /// Protection with every manifest reduced first, then merged per protector (the orders of
    /// the protectors' manifests conflict, or one names a manifest twice).
    async fn protect_loaded(
        &self,
        reads: &[ProtectorReads],
        manifests: &[String],
        candidate_keys: &Arc<CandidateKeys>,
        is_candidate: &impl Fn(&Location) -> bool,
        protect: &mut impl FnMut(&Location),
    ) -> Result<()> {
        self.load_slim(manifests, candidate_keys).await?;
        // Each manifest's entries that name a candidate, found once per manifest (protectors
        // share most manifests): a slim manifest holds what passed the name filter, which
        // also passes names that only share a key with a candidate's.
        let mut slims: HashMap<&str, Arc<Vec<Slim>>> = HashMap::new();
        for m in manifests {
            if !slims.contains_key(m.as_str()) {
                slims.insert(m.as_str(), self.cached_slim(m));
            }
        }
        let relevant: HashMap<&str, Vec<&Slim>> = slims
            .iter()
            .map(|(m, slim)| {
                let kept = slim
                    .iter()
                    .filter(|e| e.locations().any(is_candidate))
                    .collect();
                (*m, kept)
            })
            .collect();
        for r in reads {
            let mut live = LiveEntries::default();
            for m in &r.merged {
                if let Some(entries) = relevant.get(m.file_name.as_str()) {
                    live.apply(entries);
                }
            }
            live.protect_all(protect);
            for m in &r.adds {
                if let Some(entries) = relevant.get(m.file_name.as_str()) {
                    protect_adds(entries, protect);
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

/// The manifests one protector reads: `merged` in order (a full version's base then delta
/// list, merged by identifier as readers merge), `adds` for the files their ADD entries name;
/// each manifest shared with the cached lists (a protector's merge costs a pointer a manifest).
#[derive(Debug)]
struct ProtectorReads {
    merged: Vec<Arc<ListedManifest>>,
    adds: Vec<Arc<ListedManifest>>,
}

/// An order of every manifest the protectors read in which each protector's `merged` manifests
/// come in its own order: the first-appearance order where the protectors agree, a topological
/// order of "comes right before" otherwise. `None` when no such order exists or a protector
/// merges a manifest twice (protection then reduces every manifest first).
fn stream_order(reads: &[ProtectorReads]) -> Option<Vec<String>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    let mut edges: Vec<Vec<usize>> = Vec::new();
    let mut indegree: Vec<usize> = Vec::new();
    for r in reads {
        let mut seen: HashSet<usize> = HashSet::new();
        let mut prev: Option<usize> = None;
        for m in &r.merged {
            let m = m.file_name.as_str();
            let i = match index.get(m) {
                Some(&i) => i,
                None => {
                    index.insert(m, names.len());
                    names.push(m);
                    edges.push(Vec::new());
                    indegree.push(0);
                    names.len() - 1
                }
            };
            if !seen.insert(i) {
                return None;
            }
            // Protectors that agree repeat the same edge (one per protector and consecutive
            // pair); a repeat right after itself is kept once, which Kahn's order below does
            // not need more than once.
            if let Some(p) = prev {
                if edges[p].last() != Some(&i) {
                    edges[p].push(i);
                    indegree[i] += 1;
                }
            }
            prev = Some(i);
        }
    }
    // Kahn's algorithm, smallest first-appearance index first (deterministic).
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = indegree
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == 0)
        .map(|(i, _)| std::cmp::Reverse(i))
        .collect();
    let mut order: Vec<String> = Vec::with_capacity(names.len());
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(names[i].to_string());
        for &j in &edges[i] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.push(std::cmp::Reverse(j));
            }
        }
    }
    if order.len() != names.len() {
        return None;
    }
    // Manifests only read for their ADDs, anywhere (their order does not matter).
    let mut extra: HashSet<&str> = HashSet::new();
    for r in reads {
        for m in &r.adds {
            let m = m.file_name.as_str();
            if !index.contains_key(m) && extra.insert(m) {
                order.push(m.to_string());
            }
        }
    }
    Some(order)
}

/// Protectors whose merges (`merged`) can share live entries: for each protector, the
/// protector whose merge starts with all of its own (itself if none). A protector's live
/// entries at the end of its merge are then its head's at that manifest. Each protector is
/// compared with at most [`MAX_HEADS_TRIED`] heads, so the work stays linear in the
/// protectors' manifests.
fn share_prefixes(reads: &[ProtectorReads]) -> Vec<usize> {
    let mut by_length: Vec<usize> = (0..reads.len()).collect();
    by_length.sort_by_key(|&p| std::cmp::Reverse(reads[p].merged.len()));
    let mut head: Vec<usize> = (0..reads.len()).collect();
    let mut heads: Vec<usize> = Vec::new();
    for p in by_length {
        let mine = &reads[p].merged;
        let found = heads.iter().take(MAX_HEADS_TRIED).copied().find(|&h| {
            let theirs = &reads[h].merged;
            // The last manifest first: most protectors that are not a prefix differ there.
            theirs.len() >= mine.len()
                && mine.last().map(|m| &theirs[mine.len() - 1] == m) != Some(false)
                && theirs.starts_with(mine)
        });
        match found {
            Some(h) => head[p] = h,
            None => heads.push(p),
        }
    }
    head
}

/// See [`share_prefixes`].
const MAX_HEADS_TRIED: usize = 64;

/// Protect every location the ADD entries among `entries` name.
fn protect_adds(entries: &[&Slim], protect: &mut impl FnMut(&Location)) {
    for e in entries.iter().filter(|e| e.kind == FileKind::Add) {
        for l in e.locations() {
            protect(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Arc<ListedManifest> {
        Arc::new(ListedManifest {
            file_name: name.to_string(),
            file_size: 1,
            added_files: 1,
            deleted_files: 0,
        })
    }

    fn reads(merged: &[&str], adds: &[&str]) -> ProtectorReads {
        ProtectorReads {
            merged: merged.iter().map(|s| named(s)).collect(),
            adds: adds.iter().map(|s| named(s)).collect(),
        }
    }

    #[test]
    fn the_stream_order_follows_every_protectors_merge_order() {
        // Prefixes of one sequence (a never-merged table's versions), a merged manifest in
        // front of later deltas, and a manifest only read for its ADDs.
        let order = stream_order(&[
            reads(&["m1", "m2", "m3", "m4"], &["c1"]),
            reads(&["m1", "m2"], &[]),
            reads(&["x", "m3", "m4", "m5"], &["m5", "c2"]),
        ])
        .unwrap();
        let at = |m: &str| order.iter().position(|o| o == m).unwrap();
        assert!(at("m1") < at("m2") && at("m2") < at("m3") && at("m3") < at("m4"));
        assert!(at("x") < at("m3") && at("m4") < at("m5"));
        assert_eq!(order.len(), 8);
        assert_eq!(&order[6..], ["c1", "c2"]);
    }

    #[test]
    fn merges_that_start_another_share_its_live_entries() {
        let head = share_prefixes(&[
            reads(&["m1", "m2"], &[]),
            reads(&["m1", "m2", "m3", "m4"], &["c1"]),
            reads(&["m1", "m2", "m3", "m4"], &[]),
            // Same length as a prefix, another manifest: a head of its own.
            reads(&["m1", "x2"], &[]),
            reads(&["m1"], &[]),
            reads(&["x", "m3"], &[]),
            reads(&[], &["c2"]),
        ]);
        assert_eq!(head[1], 1);
        assert_eq!(head[2], 1);
        assert_eq!(head[0], 1);
        assert_eq!(head[3], 3);
        assert!(head[4] == 1 || head[4] == 3);
        assert_eq!(head[5], 5);
    }

    #[test]
    fn conflicting_orders_or_a_manifest_merged_twice_have_no_stream_order() {
        assert!(stream_order(&[reads(&["a", "b"], &[]), reads(&["b", "a"], &[])]).is_none());
        assert!(stream_order(&[
            reads(&["a", "b"], &[]),
            reads(&["b", "c"], &[]),
            reads(&["c", "a"], &[])
        ])
        .is_none());
        assert!(stream_order(&[reads(&["a", "b", "a"], &[])]).is_none());
        // Read for ADDs twice is no conflict.
        assert!(stream_order(&[reads(&["a"], &["a", "b"]), reads(&[], &["b"])]).is_some());
    }
}
