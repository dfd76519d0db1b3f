//! Snapshot expiry's protection on tables whose manifests were never merged (every snapshot's
//! base list names every earlier delta manifest): the reduced manifests kept for protection stay
//! within their byte limit, and whatever the limit (nothing kept, a few manifests, all of them),
//! the files the protectors still read are exactly those an independent merge of each
//! protector's manifests finds live. Tables from `paimon-gen`, read through the crate's own
//! manifest reader for the reference.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use paimon_cleanup::clean::expiry::protected::protectors::{
    other_protectors, snapshot_line, ProtectMode, Protector,
};
use paimon_cleanup::clean::expiry::protected::ReferenceReader;
use paimon_cleanup::clean::expiry::removed::deleted_by_deltas;
use paimon_cleanup::spec::manifest::FileKind;
use paimon_cleanup::storage::{Location, Storage};
use paimon_cleanup::table::Table;

/// A never-merged table: tags, a branch, compactions, overwrites, drops, changelogs.
fn never_merged(dir: &Path, seed: u64) -> PathBuf {
    let table = dir.join(format!("meta-{seed}"));
    let seed_text = seed.to_string();
    common::paimon_gen(
        &table,
        &[
            "--snapshots",
            "60",
            "--files-per-commit",
            "5",
            "--partitions",
            "3",
            "--buckets",
            "2",
            "--compact-every",
            "4",
            "--overwrite-every",
            "17",
            "--drop-every",
            "23",
            "--tags",
            "4",
            "--branch",
            "b1",
            "--branch-at",
            "30",
            "--branch-commits",
            "3",
            "--consumers",
            "0",
            "--changelog",
            if seed % 2 == 0 { "true" } else { "false" },
            "--index",
            "false",
            "--merge-min",
            "1000000",
            "--full-compaction-deletes",
            "0",
            "--seed",
            &seed_text,
        ],
    );
    table
}

async fn open(table: &Path) -> Table {
    let storage = Arc::new(Storage::open(table.to_str().unwrap(), &HashMap::new()).unwrap());
    Table::open(storage, &HashMap::new()).await.unwrap()
}

/// The locations (with extra files) of the ADD entries of the manifests `lists` name.
async fn adds_of_lists(t: &Table, lists: &[String], out: &mut HashSet<Location>) {
    for l in lists {
        for m in t.reader().manifest_list(t.paths(), l).await.unwrap() {
            for e in t.reader().manifest(t.paths(), &m.file_name).await.unwrap() {
                if e.kind == FileKind::Add {
                    out.extend(
                        t.paths()
                            .data_file_with_extras(&e.partition, e.bucket, &e.file)
                            .unwrap(),
                    );
                }
            }
        }
    }
}

/// Every location the protectors read, merged independently of protection's code: a full
/// version's live files (`Table::live_data_files`), the ADDs of delta lists of the others, and
/// the ADDs of every changelog list.
async fn reference_reads(t: &Table, protectors: &[Protector]) -> HashSet<Location> {
    let mut out = HashSet::new();
    for p in protectors {
        let s = &p.snapshot;
        match p.mode {
            ProtectMode::Full => {
                for e in t.live_data_files(s).await.unwrap() {
                    out.extend(
                        t.paths()
                            .data_file_with_extras(&e.partition, e.bucket, &e.file)
                            .unwrap(),
                    );
                }
            }
            ProtectMode::DeltaAdds => {
                adds_of_lists(t, std::slice::from_ref(&s.delta_manifest_list), &mut out).await;
            }
            ProtectMode::Changelog => panic!("no long-lived changelogs expected"),
        }
        if let Some(c) = &s.changelog_manifest_list {
            adds_of_lists(t, std::slice::from_ref(c), &mut out).await;
        }
    }
    out
}

/// Expiry of all but the last `keep` snapshots of main, planned with at most `limit` bytes of
/// reduced manifests kept for protection: the candidates, the protected ones, and the most
/// the cache held.
async fn protected_with_limit(
    t: &Table,
    keep: usize,
    limit: u64,
) -> (HashSet<Location>, HashSet<Location>, u64, Vec<Protector>) {
    let all = t.all_snapshots().await.unwrap();
    let cut = all.len() - keep;
    let kept = &all[cut..];
    let mut protectors = snapshot_line("main", kept);
    protectors.extend(other_protectors(t).await.unwrap());
    let deltas: Vec<String> = all[1..=cut]
        .iter()
        .map(|s| s.delta_manifest_list.clone())
        .collect();
    let mut rr = ReferenceReader::new(t).with_slim_cache_bytes(limit);
    let named = rr.protector_manifests(&protectors).await.unwrap();
    let candidates = deleted_by_deltas(&rr, t, &deltas, &named).await.unwrap();
    let held = rr.slim_cached_bytes();
    let set: HashSet<Location> = candidates.locations().collect();
    let protected = rr.protected_files(&protectors, &set).await.unwrap();
    (set, protected.into_iter().collect(), held, protectors)
}

#[test]
fn protection_within_any_cache_limit_keeps_exactly_what_the_protectors_read() {
    let dir = tempfile::tempdir().unwrap();
    let rt = common::rt();
    let mut protected_total = 0;
    let mut freed_total = 0;
    for seed in 1..=4u64 {
        let table = never_merged(dir.path(), seed);
        rt.block_on(async {
            let t = open(&table).await;
            let keep = 1 + (seed as usize % 3);
            let mut results = Vec::new();
            for limit in [0, 4096, u64::MAX] {
                let (cands, protected, held, protectors) =
                    protected_with_limit(&t, keep, limit).await;
                assert!(held <= limit, "cache holds {held} bytes over its {limit}");
                let reads = reference_reads(&t, &protectors).await;
                let want: HashSet<Location> = cands.intersection(&reads).cloned().collect();
                assert_eq!(
                    protected, want,
                    "seed {seed}, cache limit {limit}: protection differs from the merge"
                );
                results.push((cands.len(), protected.len(), held));
            }
            // With no limit the candidate readers' manifests are all kept (a never-merged
            // table's kept snapshot names every one); with none, nothing is.
            assert_eq!(results[0].2, 0);
            assert!(results[2].2 > 4096, "seed {seed}: {results:?}");
            protected_total += results[0].1;
            freed_total += results[0].0 - results[0].1;
        });
    }
    // The tables exercise both outcomes: files a tag or the branch still reads, files freed.
    assert!(protected_total > 20, "only {protected_total} protected");
    assert!(freed_total > 100, "only {freed_total} freed");
}

/// Protection's manifests in flight and its protectors' live entries are charged to the run's
/// budget: a bound too small for them stops protection with the budget's error (the run then
/// deletes nothing), and a bound it fits in is never passed.
#[test]
fn protection_charges_its_manifests_in_flight_and_live_entries_to_the_bound() {
    use paimon_cleanup::memory::MemoryBudget;
    let dir = tempfile::tempdir().unwrap();
    let table = never_merged(dir.path(), 2);
    common::rt().block_on(async {
        let t = open(&table).await;
        // The candidates with nothing kept for protection (it reads every manifest itself).
        let (cands, want, _, protectors) = protected_with_limit(&t, 1, 0).await;
        assert!(
            !want.is_empty() && cands.len() > want.len(),
            "{}",
            want.len()
        );
        let protect = |bound: Option<u64>| {
            let budget = MemoryBudget::new(bound);
            let t = &t;
            let protectors = &protectors;
            let cands = &cands;
            async move {
                let mut rr = ReferenceReader::new(t)
                    .with_slim_cache_bytes(0)
                    .with_memory(budget.clone());
                let got = rr.protected_files(protectors, cands).await;
                (got, budget)
            }
        };
        let (free, budget) = protect(None).await;
        let free: HashSet<Location> = free.unwrap().into_iter().collect();
        assert_eq!(free, want);
        let peak = budget.peak();
        assert!(peak > 1024, "protection charged only {peak} bytes");
        assert_eq!(budget.used(), 0, "protection kept its charge");
        for bound in [1, peak / 8] {
            let (err, budget) = protect(Some(bound)).await;
            let err = err.unwrap_err();
            assert!(
                matches!(err, paimon_cleanup::Error::MemoryLimit { .. })
                    && err.to_string().contains("protection's"),
                "bound {bound}: {err}"
            );
            assert!(
                budget.peak() <= bound,
                "bound {bound} passed: {}",
                budget.peak()
            );
        }
        // Twice the unbounded peak: the reads in flight vary a little from run to run.
        let (fits, budget) = protect(Some(2 * peak)).await;
        assert_eq!(fits.unwrap().into_iter().collect::<HashSet<_>>(), want);
        assert!(budget.peak() <= 2 * peak);
    });
}
