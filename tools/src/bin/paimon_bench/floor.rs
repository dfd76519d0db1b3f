//! The floor of each operation: the least I/O any implementation must do, done plainly.
//!
//! The default floor (`--floor plain`) is the one docs/benchmarks.md defines: in one thread, right after
//! `sync`, list (`read_dir` + `metadata` of every entry) the directories the operation must
//! list, read the bytes of every snapshot, tag, manifest list, manifest and index manifest it
//! must read (no decoding), and `std::fs::remove_file` a copy of exactly the files it deletes.
//! Which directories and files those are is worked out before the clock starts (that needs the
//! lists decoded), so nothing but the I/O is timed.
//!
//! `--floor decode` is the earlier, stricter floor: the same directories listed and the same
//! metadata read *and decoded* with the crate's decoders (manifests entry by entry with the
//! fields that locate a file) at the operation's concurrency, unlinks on 4 threads.
//!
//! Drop partition has one floor: read the latest snapshot's metadata and write the same commit.
//!
//! The copy the floor removes is made by `copy::prepare_mirror` (data files hard-linked).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::stream::{self, StreamExt, TryStreamExt};
use paimon_cleanup::spec::manifest::{
    decode_index_manifest, decode_manifest, decode_manifest_list, encode_index_manifest,
    encode_manifest, encode_manifest_list, for_each_manifest_file, manifest_file_meta, FileKind,
    ManifestCompression, ManifestEntry, ManifestFileMeta,
};
use paimon_cleanup::spec::schema::TableSchema;
use paimon_cleanup::spec::snapshot::{Snapshot, Tag};
use paimon_cleanup::table::merge_entries;
use serde_json::json;

use super::measure::{Clock, Measure};
use super::ops::{runtime, Op, PlanFile};

/// Lists `dirs` (files with their metadata) with `concurrency` listings in flight; returns
/// (sub-directories, files seen).
async fn list(dirs: Vec<PathBuf>, concurrency: usize) -> Result<(Vec<PathBuf>, u64), String> {
    let out: Vec<(Vec<PathBuf>, u64)> = stream::iter(dirs)
        .map(|d| async move {
            tokio::task::spawn_blocking(move || {
                let mut sub = Vec::new();
                let mut files = 0u64;
                let rd = match std::fs::read_dir(&d) {
                    Ok(rd) => rd,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((sub, 0)),
                    Err(e) => return Err(format!("list {}: {e}", d.display())),
                };
                for e in rd {
                    let e = e.map_err(|e| e.to_string())?;
                    let m = e.metadata().map_err(|e| e.to_string())?;
                    if m.is_dir() {
                        sub.push(e.path());
                    } else {
                        files += 1;
                    }
                }
                Ok((sub, files))
            })
            .await
            .map_err(|e| e.to_string())?
        })
        .buffer_unordered(concurrency)
        .try_collect()
        .await?;
    let mut dirs = Vec::new();
    let mut files = 0;
    for (d, f) in out {
        dirs.extend(d);
        files += f;
    }
    Ok((dirs, files))
}

/// Reads and decodes every file with `concurrency` reads in flight; results in input order.
async fn read_all<T: Send + 'static>(
    paths: Vec<PathBuf>,
    concurrency: usize,
    decode: fn(&[u8], &str) -> paimon_cleanup::Result<T>,
) -> Result<Vec<T>, String> {
    stream::iter(paths)
        .map(|p| async move {
            let q = p.clone();
            let bytes = tokio::task::spawn_blocking(move || std::fs::read(&q))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("read {}: {e}", p.display()))?;
            let name = p.to_string_lossy();
            decode(&bytes, &name).map_err(|e| e.to_string())
        })
        .buffered(concurrency)
        .try_collect()
        .await
}

fn tag_snapshot(bytes: &[u8], path: &str) -> paimon_cleanup::Result<Snapshot> {
    Tag::parse(bytes, path).map(|t| t.snapshot)
}

/// Versions of the table: main's snapshots and tags, and each branch's.
#[derive(Default)]
struct Versions {
    main: BTreeMap<i64, Snapshot>,
    main_tags: Vec<Snapshot>,
    branches: Vec<Snapshot>,
}

/// Files named `<prefix><something>` directly in `dir`.
fn names_in(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

async fn read_versions(table: &Path, concurrency: usize) -> Result<(Versions, u64), String> {
    let mut v = Versions::default();
    let snaps = read_all(
        names_in(&table.join("snapshot"), "snapshot-"),
        concurrency,
        Snapshot::parse,
    )
    .await?;
    let mut n = snaps.len() as u64;
    v.main = snaps.into_iter().map(|s| (s.id, s)).collect();
    v.main_tags = read_all(
        names_in(&table.join("tag"), "tag-"),
        concurrency,
        tag_snapshot,
    )
    .await?;
    n += v.main_tags.len() as u64;
    for b in names_in(&table.join("branch"), "branch-") {
        let mut files = names_in(&b.join("snapshot"), "snapshot-");
        let tags = names_in(&b.join("tag"), "tag-");
        let s = read_all(std::mem::take(&mut files), concurrency, Snapshot::parse).await?;
        let t = read_all(tags, concurrency, tag_snapshot).await?;
        n += (s.len() + t.len()) as u64;
        v.branches.extend(s);
        v.branches.extend(t);
    }
    Ok((v, n))
}

fn lists_of(s: &Snapshot) -> impl Iterator<Item = String> + '_ {
    s.manifest_lists().map(String::from)
}

/// Decodes `lists`, then the manifests named by those of them in `manifest_lists` (each
/// manifest once), then the index manifests. Returns the entries decoded.
async fn decode(
    table: &Path,
    lists: BTreeSet<String>,
    manifest_lists: &BTreeSet<String>,
    index_manifests: BTreeSet<String>,
    concurrency: usize,
) -> Result<u64, String> {
    let dir = table.join("manifest");
    let names: Vec<String> = lists.into_iter().collect();
    let decoded = read_all(
        names.iter().map(|n| dir.join(n)).collect(),
        concurrency,
        decode_manifest_list,
    )
    .await?;
    let mut count: u64 = decoded.iter().map(|m| m.len() as u64).sum();
    let manifests: BTreeSet<String> = names
        .iter()
        .zip(&decoded)
        .filter(|(n, _)| manifest_lists.contains(*n))
        .flat_map(|(_, metas)| metas.iter().map(|m| m.file_name.clone()))
        .collect();
    // Entries are decoded one at a time with the fields that locate a file (the leanest decode
    // the crate has, the one the operations use) and dropped at once: only the count is kept.
    let entries = read_all(
        manifests.iter().map(|n| dir.join(n)).collect(),
        concurrency,
        |b, p| {
            let mut n = 0usize;
            for_each_manifest_file(b, p, |_| {
                n += 1;
                Ok(())
            })?;
            Ok(n)
        },
    )
    .await?;
    count += entries.iter().map(|n| *n as u64).sum::<u64>();
    let index = read_all(
        index_manifests.iter().map(|n| dir.join(n)).collect(),
        concurrency,
        |b, p| decode_index_manifest(b, p).map(|v| v.len()),
    )
    .await?;
    count += index.iter().map(|n| *n as u64).sum::<u64>();
    Ok(count)
}

/// Removes `root/<path>` for every path, on `threads` threads.
fn unlink(root: &Path, paths: &[String], threads: usize) -> Result<u64, String> {
    let next = AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(None::<String>);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = paths.get(i) else { break };
                if let Err(e) = std::fs::remove_file(root.join(p)) {
                    if let Ok(mut f) = failed.lock() {
                        f.get_or_insert(format!("remove {p}: {e}"));
                    }
                }
            });
        }
    });
    match failed.into_inner().ok().flatten() {
        Some(e) => Err(e),
        None => Ok(paths.len() as u64),
    }
}

/// Writes every dirty page back to disk (`sync(1)`), untimed, before a measured phase: the
/// table's files and the floor's copy must both be on disk. Removing a file whose blocks are
/// still only in the page cache costs a fraction of removing one already written (ext4 frees
/// and, mounted with `discard`, trims its blocks): 18,000 manifest copies took 0.66 s to remove
/// unwritten and 7.1 s after `sync` on the benchmark machine.
pub fn settle_disk() -> Result<(), String> {
    let status = std::process::Command::new("sync")
        .status()
        .map_err(|e| format!("sync: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("sync exited with {status}"))
    }
}

/// Runs the floor of `op`.
#[allow(clippy::too_many_arguments)] // one per command-line knob of the floor
pub fn floor(
    op: Op,
    table: &Path,
    plan: &PlanFile,
    mirror: &Path,
    threads: usize,
    concurrency: usize,
    unlink_threads: usize,
    plain: bool,
) -> Result<Measure, String> {
    let rt = runtime(threads)?;
    if plain && op != Op::Drop {
        return plain_floor(op, table, plan, mirror, &rt, concurrency);
    }
    let mut clock = Clock::start();
    match op {
        Op::Expire => {
            let dirs: Vec<PathBuf> = ["snapshot", "tag", "consumer", "changelog", "branch"]
                .iter()
                .map(|d| table.join(d))
                .collect();
            clock.step("list directories", || {
                let r = rt.block_on(async {
                    let (sub, mut n) = list(dirs, concurrency).await?;
                    let mut next = Vec::new();
                    for b in sub {
                        next.extend(["snapshot", "tag", "schema"].iter().map(|d| b.join(d)));
                    }
                    n += list(next, concurrency).await?.1;
                    Ok::<_, String>(n)
                });
                let n = r.as_ref().map(|n| *n).unwrap_or(0);
                (r, n)
            })?;
            let versions = clock.step("read snapshots and tags", || {
                let r = rt.block_on(read_versions(table, concurrency));
                let n = r.as_ref().map(|(_, n)| *n).unwrap_or(0);
                (r.map(|(v, _)| v), n)
            })?;
            let (lists, manifest_lists, index) = expiry_metadata(&versions, plan);
            clock.step("decode manifest lists, manifests, index manifests", || {
                let r = rt.block_on(decode(table, lists, &manifest_lists, index, concurrency));
                let n = *r.as_ref().unwrap_or(&0);
                (r, n)
            })?;
            clock.step("unlink (std::fs::remove_file on a copy)", || {
                let r = unlink(mirror, &plan.paths, unlink_threads);
                let n = *r.as_ref().unwrap_or(&0);
                (r, n)
            })?;
        }
        Op::Orphans => {
            clock.step("list directories", || {
                let r = rt.block_on(async {
                    let mut top: Vec<PathBuf> = [
                        "manifest",
                        "index",
                        "statistics",
                        "snapshot",
                        "changelog",
                        "tag",
                        "branch",
                    ]
                    .iter()
                    .map(|d| table.join(d))
                    .collect();
                    top.push(table.to_path_buf());
                    let (sub, mut n) = list(top, concurrency).await?;
                    let mut branch_dirs = Vec::new();
                    let mut partitions = Vec::new();
                    for d in sub {
                        let name = d
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        if name.starts_with("branch-") {
                            branch_dirs
                                .extend(["snapshot", "changelog", "tag"].iter().map(|x| d.join(x)));
                        } else if name.contains('=') {
                            partitions.push(d);
                        }
                    }
                    n += list(branch_dirs, concurrency).await?.1;
                    let (buckets, m) = list(partitions, concurrency).await?;
                    n += m;
                    n += list(buckets, concurrency).await?.1;
                    Ok::<_, String>(n)
                });
                let n = r.as_ref().map(|n| *n).unwrap_or(0);
                (r, n)
            })?;
            let versions = clock.step("read snapshots and tags", || {
                let r = rt.block_on(read_versions(table, concurrency));
                let n = r.as_ref().map(|(_, n)| *n).unwrap_or(0);
                (r.map(|(v, _)| v), n)
            })?;
            let mut lists = BTreeSet::new();
            let mut index = BTreeSet::new();
            for s in versions
                .main
                .values()
                .chain(&versions.main_tags)
                .chain(&versions.branches)
            {
                lists.extend(lists_of(s));
                index.extend(s.index_manifest.clone());
            }
            let all = lists.clone();
            clock.step("decode manifest lists, manifests, index manifests", || {
                let r = rt.block_on(decode(table, lists, &all, index, concurrency));
                let n = *r.as_ref().unwrap_or(&0);
                (r, n)
            })?;
            clock.step("unlink (std::fs::remove_file on a copy)", || {
                let r = unlink(mirror, &plan.paths, unlink_threads);
                let n = *r.as_ref().unwrap_or(&0);
                (r, n)
            })?;
        }
        Op::Drop => drop_floor(table, mirror, &rt, concurrency, &mut clock)?,
    }
    let files = match op {
        Op::Drop => plan.partition_files,
        _ => plan.paths.len() as u64,
    };
    Ok(clock.finish("floor", files, json!({})))
}

/// Directories directly in `dir` (none if it is missing).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Every snapshot and tag file of main and of each branch.
fn version_files(table: &Path) -> Vec<PathBuf> {
    let mut out = names_in(&table.join("snapshot"), "snapshot-");
    out.extend(names_in(&table.join("tag"), "tag-"));
    for b in names_in(&table.join("branch"), "branch-") {
        out.extend(names_in(&b.join("snapshot"), "snapshot-"));
        out.extend(names_in(&b.join("tag"), "tag-"));
    }
    out
}

/// The manifest lists, manifests (of the lists in `manifest_lists`) and index manifests to
/// read, each once, as paths. Decodes the lists (untimed: the plain floor only reads them).
async fn metadata_reads(
    table: &Path,
    lists: BTreeSet<String>,
    manifest_lists: &BTreeSet<String>,
    index_manifests: BTreeSet<String>,
    concurrency: usize,
) -> Result<Vec<PathBuf>, String> {
    let dir = table.join("manifest");
    let names: Vec<String> = lists.into_iter().collect();
    let decoded = read_all(
        names
            .iter()
            .filter(|n| manifest_lists.contains(*n))
            .map(|n| dir.join(n))
            .collect(),
        concurrency,
        decode_manifest_list,
    )
    .await?;
    let manifests: BTreeSet<String> = decoded
        .iter()
        .flat_map(|metas| metas.iter().map(|m| m.file_name.clone()))
        .collect();
    Ok(names
        .iter()
        .chain(&manifests)
        .chain(&index_manifests)
        .map(|n| dir.join(n))
        .collect())
}

/// The floor of expiry and orphan removal: the directories and files are found first
/// (not timed), then one thread lists every directory (with each entry's metadata), reads the
/// bytes of every metadata file and removes the copy of every planned file.
fn plain_floor(
    op: Op,
    table: &Path,
    plan: &PlanFile,
    mirror: &Path,
    rt: &tokio::runtime::Runtime,
    concurrency: usize,
) -> Result<Measure, String> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let versions = rt.block_on(read_versions(table, concurrency))?.0;
    let (lists, manifest_lists, index);
    match op {
        Op::Expire => {
            dirs.extend(
                ["snapshot", "tag", "consumer", "changelog", "branch"]
                    .iter()
                    .map(|d| table.join(d)),
            );
            for b in subdirs(&table.join("branch")) {
                dirs.extend(["snapshot", "tag", "schema"].iter().map(|d| b.join(d)));
            }
            (lists, manifest_lists, index) = expiry_metadata(&versions, plan);
        }
        Op::Orphans => {
            dirs.push(table.to_path_buf());
            dirs.extend(
                [
                    "manifest",
                    "index",
                    "statistics",
                    "snapshot",
                    "changelog",
                    "tag",
                    "branch",
                ]
                .iter()
                .map(|d| table.join(d)),
            );
            for b in subdirs(&table.join("branch")) {
                dirs.extend(["snapshot", "changelog", "tag"].iter().map(|x| b.join(x)));
            }
            for p in subdirs(table) {
                if p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains('='))
                {
                    dirs.push(p.clone());
                    dirs.extend(subdirs(&p));
                }
            }
            let (mut all_lists, mut all_index) = (BTreeSet::new(), BTreeSet::new());
            for s in versions
                .main
                .values()
                .chain(&versions.main_tags)
                .chain(&versions.branches)
            {
                all_lists.extend(lists_of(s));
                all_index.extend(s.index_manifest.clone());
            }
            manifest_lists = all_lists.clone();
            (lists, index) = (all_lists, all_index);
        }
        Op::Drop => return Err("drop partition has no plain floor".into()),
    }
    let mut reads = version_files(table);
    reads.extend(rt.block_on(metadata_reads(
        table,
        lists,
        &manifest_lists,
        index,
        concurrency,
    ))?);
    drop(versions);

    let mut clock = Clock::start();
    clock.step("list directories (one thread, read_dir + metadata)", || {
        let mut n = 0u64;
        let r = (|| {
            for d in &dirs {
                let rd = match std::fs::read_dir(d) {
                    Ok(rd) => rd,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(format!("list {}: {e}", d.display())),
                };
                for e in rd {
                    let e = e.map_err(|e| e.to_string())?;
                    e.metadata().map_err(|e| e.to_string())?;
                    n += 1;
                }
            }
            Ok::<_, String>(())
        })();
        (r, n)
    })?;
    clock.step(
        "read snapshots, tags, lists, manifests, index manifests (one thread, bytes only)",
        || {
            let r = reads.iter().try_fold(0u64, |bytes, f| {
                std::fs::read(f)
                    .map(|b| bytes + b.len() as u64)
                    .map_err(|e| format!("read {}: {e}", f.display()))
            });
            (r.map(|_| ()), reads.len() as u64)
        },
    )?;
    clock.step(
        "unlink (one thread, std::fs::remove_file on a copy)",
        || {
            let r = unlink(mirror, &plan.paths, 1);
            let n = *r.as_ref().unwrap_or(&0);
            (r, n)
        },
    )?;
    Ok(clock.finish("floor", plan.paths.len() as u64, json!({"floor": "plain"})))
}

/// Drop partition: read the latest snapshot and its live files, write one OVERWRITE commit
/// (delta manifest of DELETEs, delta and base lists, index manifest, snapshot) into `mirror`.
fn drop_floor(
    table: &Path,
    mirror: &Path,
    rt: &tokio::runtime::Runtime,
    concurrency: usize,
    clock: &mut Clock,
) -> Result<(), String> {
    let (latest, fields) = clock.step("read LATEST, the latest snapshot and the schema", || {
        let r = (|| {
            let id: i64 = std::fs::read_to_string(table.join("snapshot/LATEST"))
                .map_err(|e| e.to_string())?
                .trim()
                .parse()
                .map_err(|e| format!("LATEST: {e}"))?;
            let next = table.join(format!("snapshot/snapshot-{}", id + 1));
            if next.exists() {
                return Err("LATEST is stale".to_string());
            }
            let p = table.join(format!("snapshot/snapshot-{id}"));
            let bytes = std::fs::read(&p).map_err(|e| e.to_string())?;
            let s = Snapshot::parse(&bytes, &p.to_string_lossy()).map_err(|e| e.to_string())?;
            let p = table.join(format!("schema/schema-{}", s.schema_id));
            let bytes = std::fs::read(&p).map_err(|e| e.to_string())?;
            let schema =
                TableSchema::parse(&bytes, &p.to_string_lossy()).map_err(|e| e.to_string())?;
            Ok((s, schema.partition_fields()))
        })();
        (r, 1)
    })?;
    let dir = table.join("manifest");
    let (metas, entries, index) = clock.step("decode lists, manifests, index manifest", || {
        let r = rt.block_on(async {
            let lists = read_all(
                vec![
                    dir.join(&latest.base_manifest_list),
                    dir.join(&latest.delta_manifest_list),
                ],
                concurrency,
                decode_manifest_list,
            )
            .await?;
            let metas: Vec<ManifestFileMeta> = lists.into_iter().flatten().collect();
            let entries = read_all(
                metas.iter().map(|m| dir.join(&m.file_name)).collect(),
                concurrency,
                decode_manifest,
            )
            .await?;
            let index = match &latest.index_manifest {
                Some(n) => read_all(vec![dir.join(n)], 1, decode_index_manifest)
                    .await?
                    .into_iter()
                    .flatten()
                    .collect(),
                None => Vec::new(),
            };
            Ok::<_, String>((
                metas,
                entries.into_iter().flatten().collect::<Vec<_>>(),
                index,
            ))
        });
        let n = r.as_ref().map(|(_, e, _)| e.len() as u64).unwrap_or(0);
        (r, n)
    })?;
    let live = clock.step("merge live files", || {
        let r = merge_entries(entries).map_err(|e| e.to_string());
        let n = r.as_ref().map(|v| v.len() as u64).unwrap_or(0);
        (r, n)
    })?;
    clock.step(
        "write the commit (manifest, lists, index manifest, snapshot)",
        || {
            let r = (|| {
                let mut per: BTreeMap<&[u8], u64> = BTreeMap::new();
                for e in &live {
                    *per.entry(e.partition.as_slice()).or_default() += 1;
                }
                let part = per
                    .into_iter()
                    .max_by_key(|(_, n)| *n)
                    .map(|(p, _)| p.to_vec())
                    .ok_or("no live files")?;
                let deletes: Vec<ManifestEntry> = live
                    .iter()
                    .filter(|e| e.partition == part)
                    .map(|e| ManifestEntry {
                        kind: FileKind::Delete,
                        ..e.clone()
                    })
                    .collect();
                let out = mirror.join("manifest");
                std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
                std::fs::create_dir_all(mirror.join("snapshot")).map_err(|e| e.to_string())?;
                let c = ManifestCompression::default();
                let bytes = encode_manifest(&deletes, None, c).map_err(|e| e.to_string())?;
                std::fs::write(out.join("manifest-floor-0"), &bytes).map_err(|e| e.to_string())?;
                let meta = manifest_file_meta(
                    "manifest-floor-0",
                    bytes.len() as i64,
                    &deletes,
                    &fields,
                    0,
                )
                .map_err(|e| e.to_string())?;
                let delta = encode_manifest_list(&[meta], None, c).map_err(|e| e.to_string())?;
                std::fs::write(out.join("manifest-list-floor-0"), &delta)
                    .map_err(|e| e.to_string())?;
                let base = encode_manifest_list(&metas, None, c).map_err(|e| e.to_string())?;
                std::fs::write(out.join("manifest-list-floor-1"), &base)
                    .map_err(|e| e.to_string())?;
                let kept: Vec<_> = index.into_iter().filter(|e| e.partition != part).collect();
                let im = encode_index_manifest(&kept, None, c).map_err(|e| e.to_string())?;
                std::fs::write(out.join("index-manifest-floor-0"), &im)
                    .map_err(|e| e.to_string())?;
                let mut s = latest.clone();
                s.id += 1;
                let text = s.to_json().map_err(|e| e.to_string())?;
                std::fs::write(mirror.join(format!("snapshot/snapshot-{}", s.id)), text)
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>(deletes.len() as u64)
            })();
            let n = *r.as_ref().unwrap_or(&0);
            (r, n)
        },
    )?;
    Ok(())
}

/// The metadata an expiry reads, by what the floors do with it: `lists` (the base and delta
/// manifest lists of the expired snapshots and of every protector: later snapshots, tags,
/// branches), `manifest_lists` (the lists whose manifests are decoded or read: the protectors',
/// the deltas of the snapshots after the first expired one up to the first kept, the expired
/// changelogs') and `index` (the index manifests of both).
fn expiry_metadata(
    versions: &Versions,
    plan: &PlanFile,
) -> (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    let first = plan.first_expired.unwrap_or(i64::MAX);
    let last = plan.last_expired.unwrap_or(i64::MIN);
    let expired: Vec<&Snapshot> = versions.main.range(first..=last).map(|(_, s)| s).collect();
    let protectors: Vec<&Snapshot> = versions
        .main
        .range(last + 1..)
        .map(|(_, s)| s)
        .chain(&versions.main_tags)
        .chain(&versions.branches)
        .collect();
    let mut lists = BTreeSet::new();
    let mut manifest_lists = BTreeSet::new();
    let mut index = BTreeSet::new();
    for s in expired.iter().chain(&protectors) {
        lists.extend(lists_of(s));
        index.extend(s.index_manifest.clone());
    }
    for s in &protectors {
        manifest_lists.extend(lists_of(s));
    }
    for s in versions.main.range(first + 1..=last + 1).map(|(_, s)| s) {
        manifest_lists.insert(s.delta_manifest_list.clone());
    }
    for s in &expired {
        manifest_lists.extend(s.changelog_manifest_list.clone());
    }
    (lists, manifest_lists, index)
}
