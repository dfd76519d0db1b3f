//! The commit simulation: which files each snapshot adds and deletes, how manifests are merged
//! into base lists, index files, branches. Runs on one thread and hands every file write to the
//! [`Pool`]; manifest metas come back through a channel.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::Sender;
use paimon_cleanup::spec::manifest::{
    encode_builtin_container, encode_index_manifest, manifest_file_meta, ManifestCompression,
    ManifestFileMeta, MetadataFileKind,
};
use paimon_cleanup::spec::snapshot::CommitKind;

use super::model::{touch, CEntry, Ctx, FileMeta, IndexFile, IndexType, MAX_LEVEL};
use super::pool::Pool;
use super::rng::Rng;
use super::GenConfig;

/// Level of a manifest that is full (`roll_entries` entries) and never merged again.
const FULL: u8 = u8::MAX;

/// Empty files per creation job.
const TOUCH_BATCH: usize = 512;

/// A manifest in a base list: its number, merge tier and entries (shared, for later merges).
#[derive(Debug, Clone)]
pub struct MRef {
    id: u32,
    level: u8,
    entries: Arc<Vec<CEntry>>,
    /// DELETE entries among `entries`.
    deletes: usize,
}

/// The state of one branch's line of snapshots.
#[derive(Debug, Clone)]
pub struct Line {
    /// Live files per `part * buckets + bucket`.
    pub live: Vec<Vec<FileMeta>>,
    base: Vec<MRef>,
    last_delta: Option<MRef>,
    index: BTreeMap<(u32, u16, IndexType), IndexFile>,
    index_manifest: Option<String>,
    total_rows: i64,
    seq: i64,
    appends: u32,
}

/// Everything phase B needs to write one snapshot: its lists and JSON.
#[derive(Debug, Clone)]
pub struct SnapSpec {
    /// Snapshot id.
    pub id: i64,
    /// Branch name, `None` for main.
    pub branch: Option<String>,
    /// Commit kind.
    pub kind: CommitKind,
    /// Manifests of the base list.
    pub base: Vec<u32>,
    /// The delta manifest (none for an empty delta).
    pub delta: Option<u32>,
    /// The changelog manifest.
    pub changelog: Option<u32>,
    /// Base list number.
    pub base_list: u32,
    /// Delta list number.
    pub delta_list: u32,
    /// Changelog list number.
    pub changelog_list: Option<u32>,
    /// Index manifest name.
    pub index_manifest: Option<String>,
    /// `timeMillis`.
    pub time: i64,
    /// `totalRecordCount`.
    pub total_rows: i64,
    /// `deltaRecordCount`.
    pub delta_rows: i64,
    /// `changelogRecordCount`.
    pub changelog_rows: i64,
    /// Tags on this snapshot.
    pub tags: Vec<String>,
    /// A branch created from this snapshot (via the tag of that name): (branch, tag).
    pub branch_from_here: Option<(String, String)>,
}

/// Counters reported in the summary.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub data_files: u64,
    pub changelog_files: u64,
    pub index_files: u64,
    pub manifests: u64,
    pub merged_manifests: u64,
    pub full_compactions: u64,
    pub manifest_entries: u64,
    pub index_manifests: u64,
    pub list_entries: u64,
    pub max_base_list: u64,
    pub kinds: BTreeMap<String, u64>,
}

enum Plan {
    Append,
    Compact,
    Overwrite(u32),
    Drop(u32),
}

/// The simulator.
pub struct Sim<'a> {
    cfg: &'a GenConfig,
    ctx: Arc<Ctx>,
    pool: &'a Pool,
    rng: Rng,
    metas: Sender<(u32, ManifestFileMeta)>,
    commits: u32,
    manifests: u32,
    lists: u32,
    index_manifests: u32,
    index_files: u32,
    /// Files to create and their sizes (0: empty).
    touch_buf: Vec<(PathBuf, u32)>,
    /// Every snapshot, main and branch, in commit order.
    pub specs: Vec<SnapSpec>,
    /// Counters.
    pub counts: Counts,
}

impl<'a> Sim<'a> {
    /// A simulator writing through `pool`.
    pub fn new(
        cfg: &'a GenConfig,
        ctx: Arc<Ctx>,
        pool: &'a Pool,
        metas: Sender<(u32, ManifestFileMeta)>,
    ) -> Self {
        Sim {
            cfg,
            ctx,
            pool,
            rng: Rng::new(cfg.seed),
            metas,
            commits: 0,
            manifests: 0,
            lists: 0,
            index_manifests: 0,
            index_files: 0,
            touch_buf: Vec::with_capacity(TOUCH_BATCH),
            specs: Vec::new(),
            counts: Counts::default(),
        }
    }

    /// Time of main's snapshot `id`.
    pub fn time_of(&self, id: i64) -> i64 {
        self.cfg.end_millis - (self.cfg.snapshots as i64 - id) * self.cfg.step_millis
    }

    /// Runs every main commit (and the branch's commits where it forks). Returns main's final
    /// line.
    pub fn run(&mut self) -> Result<Line, String> {
        let cfg = self.cfg;
        let slots = (cfg.partitions * cfg.buckets) as usize;
        let mut main = Line {
            live: vec![Vec::new(); slots],
            base: Vec::new(),
            last_delta: None,
            index: BTreeMap::new(),
            index_manifest: None,
            total_rows: 0,
            seq: 0,
            appends: 0,
        };
        let tag_ids: BTreeMap<i64, u32> = (1..=cfg.tags)
            .map(|i| {
                let id = (i as u64 * cfg.snapshots as u64 / (cfg.tags as u64 + 1)).max(1);
                (id as i64, i)
            })
            .collect();
        for t in 1..=cfg.snapshots as i64 {
            let plan = self.plan(&main, t);
            let time = self.time_of(t);
            let cur = self.current_partition(t);
            self.step(&mut main, plan, t, time, cur, None)?;
            if let Some(i) = tag_ids.get(&t) {
                if let Some(s) = self.specs.last_mut() {
                    s.tags.push(format!("nightly-{i:04}"));
                }
            }
            if let Some(b) = cfg.branch.as_ref().filter(|b| b.at as i64 == t) {
                let tag = format!("{}-base", b.name);
                if let Some(s) = self.specs.last_mut() {
                    s.tags.push(tag.clone());
                    s.branch_from_here = Some((b.name.clone(), tag));
                }
                let mut line = main.clone();
                for i in 1..=b.commits as i64 {
                    let id = t + i;
                    let time = time + i * (cfg.step_millis / (b.commits as i64 + 1)).max(1);
                    self.step(&mut line, Plan::Append, id, time, cur, Some(&b.name))?;
                }
            }
        }
        self.flush_touches()?;
        Ok(main)
    }

    fn current_partition(&self, t: i64) -> u32 {
        let cfg = self.cfg;
        (((t - 1) as u64 * cfg.partitions as u64) / cfg.snapshots as u64)
            .min(cfg.partitions as u64 - 1) as u32
    }

    fn non_empty(&self, line: &Line, part: u32) -> bool {
        let b = self.cfg.buckets as usize;
        line.live[part as usize * b..(part as usize + 1) * b]
            .iter()
            .any(|v| !v.is_empty())
    }

    fn plan(&mut self, line: &Line, t: i64) -> Plan {
        let cfg = self.cfg;
        let cur = self.current_partition(t);
        let lo = cur.saturating_sub(1);
        let every = |n: u32| n > 0 && t % n as i64 == 0;
        if every(cfg.drop_every) {
            if let Some(p) = (0..lo).find(|p| self.non_empty(line, *p)) {
                return Plan::Drop(p);
            }
        }
        if every(cfg.overwrite_every) {
            let candidates: Vec<u32> = (0..=cur).filter(|p| self.non_empty(line, *p)).collect();
            if !candidates.is_empty() {
                let p = candidates[self.rng.below(candidates.len() as u64) as usize];
                return Plan::Overwrite(p);
            }
        }
        if every(cfg.compact_every) {
            let b = cfg.buckets as usize;
            let worth = (lo..=cur).any(|p| {
                line.live[p as usize * b..(p as usize + 1) * b]
                    .iter()
                    .any(|v| v.len() >= 2 || v.first().is_some_and(|f| f.level == 0))
            });
            if worth {
                return Plan::Compact;
            }
        }
        Plan::Append
    }

    fn new_commit(&mut self) -> u32 {
        let c = self.commits;
        self.commits += 1;
        c
    }

    /// Queues an empty file (metadata-side orphans, index files, the temp file).
    fn touch(&mut self, path: PathBuf) -> Result<(), String> {
        self.touch_sized(path, 0)
    }

    /// Queues a data-sized file (data, changelog, orphan data files).
    fn touch_data(&mut self, path: PathBuf) -> Result<(), String> {
        let n = self.ctx.data_file_bytes;
        self.touch_sized(path, n)
    }

    fn touch_sized(&mut self, path: PathBuf, bytes: u32) -> Result<(), String> {
        self.touch_buf.push((path, bytes));
        if self.touch_buf.len() >= TOUCH_BATCH {
            self.flush_touches()?;
        }
        Ok(())
    }

    fn flush_touches(&mut self) -> Result<(), String> {
        if self.touch_buf.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.touch_buf, Vec::with_capacity(TOUCH_BATCH));
        self.pool.submit(Box::new(move |_| {
            let zeros = vec![0u8; batch.iter().map(|(_, n)| *n as usize).max().unwrap_or(0)];
            for (p, n) in &batch {
                touch(p, &zeros[..*n as usize])
                    .map_err(|e| format!("create {}: {e}", p.display()))?;
            }
            Ok(())
        }))
    }

    fn touch_file(&mut self, f: &FileMeta) -> Result<(), String> {
        if f.changelog {
            self.counts.changelog_files += 1;
        } else {
            self.counts.data_files += 1;
        }
        if self.ctx.metadata_only {
            return Ok(());
        }
        let p = self.ctx.file_path(f);
        self.touch_data(p)
    }

    fn new_index_file(&mut self, covers: Option<FileMeta>) -> Result<IndexFile, String> {
        let id = self.index_files;
        self.index_files += 1;
        self.counts.index_files += 1;
        let p = self
            .ctx
            .root
            .join("index")
            .join(self.ctx.index_file_name(id));
        self.touch(p)?;
        Ok(IndexFile { id, covers })
    }

    /// Queues a manifest holding `entries` and returns its reference.
    fn write_manifest(&mut self, entries: Vec<CEntry>, level: u8) -> Result<MRef, String> {
        let id = self.manifests;
        self.manifests += 1;
        self.counts.manifests += 1;
        self.counts.manifest_entries += entries.len() as u64;
        let deletes = entries.iter().filter(|e| !e.add).count();
        let shared = Arc::new(entries);
        let entries = if level == FULL && !self.full_compaction_possible() {
            // Only a full compaction reads a full manifest's entries again: without one they
            // would stay in memory for nothing (about 56 bytes per reference).
            Arc::new(Vec::new())
        } else {
            shared.clone()
        };
        let metas = self.metas.clone();
        self.pool.submit(Box::new(move |ctx: &Ctx| {
            let name = ctx.manifest_name(id);
            let bytes = encode_builtin_container(
                MetadataFileKind::Manifest,
                shared.len(),
                ManifestCompression::default(),
                |i, out| {
                    ctx.encode_manifest_entry(&shared[i], out);
                    Ok(())
                },
            )
            .map_err(|e| format!("encode {name}: {e}"))?;
            let path = ctx.manifest_path(&name);
            std::fs::write(&path, &bytes).map_err(|e| format!("write {}: {e}", path.display()))?;
            let meta = manifest_meta(ctx, &name, bytes.len() as i64, &shared)?;
            metas
                .send((id, meta))
                .map_err(|_| "manifest meta channel closed".to_string())
        }))?;
        Ok(MRef {
            id,
            level,
            entries,
            deletes,
        })
    }

    /// Whether a full compaction of the base list can ever run: it needs DELETE entries
    /// (compactions, overwrites or partition drops) and a threshold.
    fn full_compaction_possible(&self) -> bool {
        let cfg = self.cfg;
        cfg.full_compaction_deletes > 0
            && (cfg.compact_every > 0 || cfg.overwrite_every > 0 || cfg.drop_every > 0)
    }

    /// Java-like manifest merging, tiered: whenever the tail of the list holds `merge_min`
    /// manifests of the same tier, they are merged (ADD/DELETE pairs cancel) into manifests of
    /// the next tier, rolled at `roll_entries` entries. A merge that covers the whole list also
    /// drops DELETE entries (nothing older can hold their ADD), like Java's full compaction.
    fn merge_tiers(&mut self, mut list: Vec<MRef>) -> Result<Vec<MRef>, String> {
        let min = self.cfg.merge_min.max(2) as usize;
        let roll = self.cfg.roll_entries.max(1) as usize;
        let threshold = self.cfg.full_compaction_deletes as usize;
        if threshold > 0 && list.iter().map(|m| m.deletes).sum::<usize>() >= threshold {
            // Java's manifest full compaction: rewrite the whole base without DELETE entries.
            let entries = fold(&list, true, self.cfg.seed)?;
            list.clear();
            for chunk in entries.chunks(roll) {
                list.push(self.write_manifest(chunk.to_vec(), FULL)?);
                self.counts.merged_manifests += 1;
            }
            self.counts.full_compactions += 1;
            return Ok(list);
        }
        while let Some(level) = list.last().map(|m| m.level) {
            if level == FULL {
                break;
            }
            let run = list.iter().rev().take_while(|m| m.level == level).count();
            if run < min {
                break;
            }
            let start = list.len() - run;
            let group = list.split_off(start);
            let entries = fold(&group, start == 0, self.cfg.seed)?;
            if entries.len().div_ceil(roll) >= group.len() {
                // Merging would not shrink the list (the manifests are full): freeze them.
                let keep = self.full_compaction_possible();
                list.extend(group.into_iter().map(|m| MRef {
                    level: FULL,
                    entries: if keep {
                        m.entries
                    } else {
                        Arc::new(Vec::new())
                    },
                    ..m
                }));
                break;
            }
            let next = level.saturating_add(1).min(FULL - 1);
            for chunk in entries.chunks(roll) {
                let lvl = if chunk.len() >= roll { FULL } else { next };
                list.push(self.write_manifest(chunk.to_vec(), lvl)?);
                self.counts.merged_manifests += 1;
            }
        }
        Ok(list)
    }

    fn write_index_manifest(&mut self, line: &mut Line) -> Result<(), String> {
        let id = self.index_manifests;
        self.index_manifests += 1;
        self.counts.index_manifests += 1;
        let name = self.ctx.index_manifest_name(id);
        let entries: Vec<_> = line
            .index
            .iter()
            .map(|((p, b, t), f)| self.ctx.index_entry(*p, *b, *t, f))
            .collect();
        let n = name.clone();
        self.pool.submit(Box::new(move |ctx: &Ctx| {
            let bytes = encode_index_manifest(&entries, None, ManifestCompression::default())
                .map_err(|e| format!("encode {n}: {e}"))?;
            let path = ctx.manifest_path(&n);
            std::fs::write(&path, &bytes).map_err(|e| format!("write {}: {e}", path.display()))
        }))?;
        line.index_manifest = Some(name);
        Ok(())
    }

    fn slot(&self, part: u32, bucket: u16) -> usize {
        (part * self.cfg.buckets + bucket as u32) as usize
    }

    /// One commit on `line` as snapshot `id`.
    fn step(
        &mut self,
        line: &mut Line,
        plan: Plan,
        id: i64,
        time: i64,
        cur: u32,
        branch: Option<&str>,
    ) -> Result<(), String> {
        let cfg = self.cfg;
        let commit = self.new_commit();
        let mut delta: Vec<CEntry> = Vec::new();
        let mut changelog: Vec<CEntry> = Vec::new();
        let mut index_changed = false;
        let mut n = 0u32;
        let kind;
        match plan {
            Plan::Append => {
                kind = CommitKind::Append;
                line.appends += 1;
                let mut touched: BTreeMap<(u32, u16), u32> = BTreeMap::new();
                for _ in 0..cfg.files_per_commit {
                    let part = if cur > 0 && self.rng.chance(10) {
                        cur - 1
                    } else {
                        cur
                    };
                    let bucket = self.rng.below(cfg.buckets as u64) as u16;
                    let rows = 1 + self.rng.below(1000) as u32;
                    let key_min = self.rng.below(1_000_000) as i32;
                    let f = FileMeta {
                        part,
                        commit,
                        n,
                        rows,
                        key_min,
                        key_max: key_min + rows as i32 - 1,
                        seq_min: line.seq,
                        seq_max: line.seq + rows as i64 - 1,
                        ctime: time,
                        bucket,
                        level: 0,
                        source: 0,
                        changelog: false,
                    };
                    n += 1;
                    line.seq += rows as i64;
                    let s = self.slot(part, bucket);
                    line.live[s].push(f);
                    delta.push(CEntry { add: true, file: f });
                    self.touch_file(&f)?;
                    *touched.entry((part, bucket)).or_default() += rows;
                }
                if cfg.changelog {
                    for (&(part, bucket), &rows) in &touched {
                        let f = FileMeta {
                            part,
                            commit,
                            n,
                            rows,
                            key_min: 0,
                            key_max: 999_999,
                            seq_min: line.seq - rows as i64,
                            seq_max: line.seq - 1,
                            ctime: time,
                            bucket,
                            level: 0,
                            source: 0,
                            changelog: true,
                        };
                        n += 1;
                        changelog.push(CEntry { add: true, file: f });
                        self.touch_file(&f)?;
                    }
                }
                if cfg.index && line.appends % cfg.index_every.max(1) == 0 {
                    for &(part, bucket) in touched.keys() {
                        let hash = self.new_index_file(None)?;
                        line.index.insert((part, bucket, IndexType::Hash), hash);
                        let s = self.slot(part, bucket);
                        if let Some(target) = line.live[s].iter().find(|f| f.level > 0).copied() {
                            let dv = self.new_index_file(Some(target))?;
                            line.index
                                .insert((part, bucket, IndexType::DeletionVectors), dv);
                        }
                        index_changed = true;
                    }
                }
            }
            Plan::Compact => {
                kind = CommitKind::Compact;
                for part in cur.saturating_sub(1)..=cur {
                    for bucket in 0..cfg.buckets as u16 {
                        let s = self.slot(part, bucket);
                        let files = std::mem::take(&mut line.live[s]);
                        match files.as_slice() {
                            [] => {}
                            [one] if one.level > 0 => line.live[s] = files,
                            [one] => {
                                // Level upgrade: the same file, one level entry replaced.
                                let up = FileMeta {
                                    level: MAX_LEVEL,
                                    ..*one
                                };
                                delta.push(CEntry {
                                    add: false,
                                    file: *one,
                                });
                                delta.push(CEntry {
                                    add: true,
                                    file: up,
                                });
                                line.live[s] = vec![up];
                            }
                            many => {
                                let rows: u32 = many.iter().map(|f| f.rows).sum();
                                let out = FileMeta {
                                    part,
                                    commit,
                                    n,
                                    rows,
                                    key_min: many.iter().map(|f| f.key_min).min().unwrap_or(0),
                                    key_max: many.iter().map(|f| f.key_max).max().unwrap_or(0),
                                    seq_min: many.iter().map(|f| f.seq_min).min().unwrap_or(0),
                                    seq_max: many.iter().map(|f| f.seq_max).max().unwrap_or(0),
                                    ctime: time,
                                    bucket,
                                    level: MAX_LEVEL,
                                    source: 1,
                                    changelog: false,
                                };
                                n += 1;
                                delta.extend(many.iter().map(|f| CEntry {
                                    add: false,
                                    file: *f,
                                }));
                                delta.push(CEntry {
                                    add: true,
                                    file: out,
                                });
                                self.touch_file(&out)?;
                                line.live[s] = vec![out];
                                if line
                                    .index
                                    .remove(&(part, bucket, IndexType::DeletionVectors))
                                    .is_some()
                                {
                                    index_changed = true;
                                }
                            }
                        }
                    }
                }
            }
            Plan::Overwrite(part) | Plan::Drop(part) => {
                let refill = matches!(plan, Plan::Overwrite(_));
                kind = CommitKind::Overwrite;
                for bucket in 0..cfg.buckets as u16 {
                    let s = self.slot(part, bucket);
                    for f in std::mem::take(&mut line.live[s]) {
                        delta.push(CEntry {
                            add: false,
                            file: f,
                        });
                    }
                    if refill {
                        let rows = 1 + self.rng.below(1000) as u32;
                        let f = FileMeta {
                            part,
                            commit,
                            n,
                            rows,
                            key_min: 0,
                            key_max: rows as i32 - 1,
                            seq_min: line.seq,
                            seq_max: line.seq + rows as i64 - 1,
                            ctime: time,
                            bucket,
                            level: 0,
                            source: 0,
                            changelog: false,
                        };
                        n += 1;
                        line.seq += rows as i64;
                        line.live[s].push(f);
                        delta.push(CEntry { add: true, file: f });
                        self.touch_file(&f)?;
                    }
                }
                let before = line.index.len();
                line.index.retain(|(p, _, _), _| *p != part);
                index_changed |= line.index.len() != before;
            }
        }
        *self
            .counts
            .kinds
            .entry(match &kind {
                CommitKind::Append => "APPEND".to_string(),
                CommitKind::Compact => "COMPACT".to_string(),
                CommitKind::Overwrite if delta.iter().any(|e| e.add) => "OVERWRITE".to_string(),
                _ => "OVERWRITE (drop partition)".to_string(),
            })
            .or_default() += 1;

        let rows_of = |v: &[CEntry], add: bool| -> i64 {
            v.iter()
                .filter(|e| e.add == add)
                .map(|e| e.file.rows as i64)
                .sum()
        };
        let delta_rows = rows_of(&delta, true) - rows_of(&delta, false);
        let changelog_rows = rows_of(&changelog, true);
        line.total_rows += delta_rows;
        if index_changed {
            self.write_index_manifest(line)?;
        }

        // Base of this snapshot = previous base + previous delta, merged.
        let mut base = std::mem::take(&mut line.base);
        base.extend(line.last_delta.take());
        let base = self.merge_tiers(base)?;
        let delta_ref = if delta.is_empty() {
            None
        } else {
            Some(self.write_manifest(delta, 0)?)
        };
        let changelog_ref = if changelog.is_empty() {
            None
        } else {
            Some(self.write_manifest(changelog, 0)?)
        };
        let base_list = self.next_list();
        let delta_list = self.next_list();
        let changelog_list = changelog_ref.as_ref().map(|_| self.next_list());
        self.counts.max_base_list = self.counts.max_base_list.max(base.len() as u64);
        self.counts.list_entries += base.len() as u64 + 1 + changelog_ref.is_some() as u64;
        self.specs.push(SnapSpec {
            id,
            branch: branch.map(String::from),
            kind,
            base: base.iter().map(|m| m.id).collect(),
            delta: delta_ref.as_ref().map(|m| m.id),
            changelog: changelog_ref.map(|m| m.id),
            base_list,
            delta_list,
            changelog_list,
            index_manifest: line.index_manifest.clone(),
            time,
            total_rows: line.total_rows,
            delta_rows,
            changelog_rows,
            tags: Vec::new(),
            branch_from_here: None,
        });
        line.base = base;
        line.last_delta = delta_ref;
        Ok(())
    }

    fn next_list(&mut self) -> u32 {
        let l = self.lists;
        self.lists += 1;
        l
    }

    /// Creates `count` orphan data files in random bucket directories, plus a few orphan
    /// manifests, index files and a temp snapshot file. Returns the number of files.
    pub fn orphans(&mut self, count: u32) -> Result<u64, String> {
        if count == 0 {
            return Ok(0);
        }
        let cfg = self.cfg;
        let seed = cfg.seed;
        let mut made = 0u64;
        for i in 0..count {
            let part = self.rng.below(cfg.partitions as u64) as u32;
            let bucket = self.rng.below(cfg.buckets as u64) as u16;
            let name = format!(
                "data-{}-{}.parquet",
                super::rng::uuid(seed, super::model::kinds::ORPHAN, (i / 100) as u64),
                i % 100
            );
            let p = self.ctx.bucket_dir(part, bucket).join(name);
            self.touch_data(p)?;
            made += 1;
        }
        let meta = (count / 100).clamp(1, 100);
        let u = super::rng::uuid(seed, super::model::kinds::ORPHAN, u64::MAX);
        for j in 0..meta {
            self.touch(
                self.ctx
                    .root
                    .join("manifest")
                    .join(format!("manifest-{u}-{j}")),
            )?;
            self.touch(self.ctx.root.join("index").join(format!("index-{u}-{j}")))?;
            made += 2;
        }
        self.touch(
            self.ctx
                .root
                .join("snapshot")
                .join(format!(".snapshot-{}.{u}.tmp", cfg.snapshots)),
        )?;
        made += 1;
        self.flush_touches()?;
        Ok(made)
    }
}

/// The manifest list entry of a manifest holding `entries`: the crate's
/// [`manifest_file_meta`] over one typed entry per distinct (partition, bucket, level) — the
/// only fields its stats read, and the generator's partitions are never null — with the ADD
/// and DELETE counts taken over every entry.
fn manifest_meta(
    ctx: &Ctx,
    name: &str,
    size: i64,
    entries: &[CEntry],
) -> Result<ManifestFileMeta, String> {
    let mut seen = std::collections::HashSet::new();
    let reps: Vec<_> = entries
        .iter()
        .filter(|e| seen.insert((e.file.part, e.file.bucket, e.file.level)))
        .map(|e| ctx.manifest_entry(e))
        .collect();
    let mut meta = manifest_file_meta(name, size, &reps, &ctx.partition_fields, 0)
        .map_err(|e| format!("meta of {name}: {e}"))?;
    let added = entries.iter().filter(|e| e.add).count() as i64;
    meta.num_added_files = added;
    meta.num_deleted_files = entries.len() as i64 - added;
    Ok(meta)
}

/// Folds the entries of consecutive manifests (spec §3.7): an ADD and a later DELETE of the same
/// file cancel; a DELETE whose ADD is older than the group stays, unless the group is the whole
/// list (`whole`), where nothing older exists.
fn fold(group: &[MRef], whole: bool, seed: u64) -> Result<Vec<CEntry>, String> {
    let mut slots: Vec<Option<CEntry>> = Vec::new();
    let mut index: HashMap<u128, usize> = HashMap::new();
    for m in group {
        for e in m.entries.iter() {
            let key = e.file.key();
            if e.add {
                if index.insert(key, slots.len()).is_some() {
                    return Err(format!(
                        "generator bug: file {} added twice",
                        e.file.name(seed)
                    ));
                }
                slots.push(Some(*e));
            } else if let Some(i) = index.remove(&key) {
                slots[i] = None;
            } else {
                index.insert(key, slots.len());
                slots.push(Some(*e));
            }
        }
    }
    Ok(slots
        .into_iter()
        .flatten()
        .filter(|e| e.add || !whole)
        .collect())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use paimon_cleanup::spec::manifest::encode_manifest;
    use paimon_cleanup::spec::types::{DataField, DataType};

    use super::super::{partition_row, PartitionKind};
    use super::*;

    fn ctx(kind: PartitionKind, data_file_bytes: u32) -> Ctx {
        let part_rows: Vec<Vec<u8>> = (0..3)
            .map(|p| partition_row(kind, p).expect("partition row"))
            .collect();
        let data_type = match kind {
            PartitionKind::Date => DataType::String,
            PartitionKind::Int => DataType::Int,
        };
        Ctx {
            root: PathBuf::from("/nonexistent"),
            seed: 11,
            buckets: 4,
            part_paths: (0..3).map(|p| format!("p={p}/")).collect(),
            part_rows,
            partition_fields: vec![DataField {
                id: 2,
                name: "p".into(),
                data_type,
                nullable: false,
            }],
            data_file_bytes,
            metadata_only: true,
        }
    }

    fn entries() -> Vec<CEntry> {
        let mut v = Vec::new();
        for i in 0..300u32 {
            let f = FileMeta {
                part: i % 3,
                commit: i / 7,
                n: i,
                rows: 1 + i * 37,
                key_min: (i as i32 - 150) * 1_000_003,
                key_max: i as i32 * 1_000_003,
                seq_min: i as i64 * 1_000_000_007 - 5,
                seq_max: i as i64 * 1_000_000_007,
                ctime: 1_700_000_000_000 + i as i64,
                bucket: (i % 4) as u16,
                level: (i % 6) as u8,
                source: (i % 2) as u8,
                changelog: i % 5 == 0,
            };
            v.push(CEntry {
                add: i % 3 != 1,
                file: f,
            });
        }
        v
    }

    /// Zeroes every occurrence of the file's sync marker (its last 16 bytes), the only bytes
    /// two writes of the same records may differ in.
    fn without_sync(b: &[u8]) -> Vec<u8> {
        let sync = b[b.len() - 16..].to_vec();
        let mut out = b.to_vec();
        let mut i = 0;
        while i + 16 <= out.len() {
            if out[i..i + 16] == sync[..] {
                out[i..i + 16].fill(0);
                i += 16;
            } else {
                i += 1;
            }
        }
        out
    }

    #[test]
    fn direct_encoding_is_the_generic_writers_bytes_and_meta() {
        for (kind, bytes) in [(PartitionKind::Date, 0), (PartitionKind::Int, 4096)] {
            let ctx = ctx(kind, bytes);
            let entries = entries();
            // Enough entries for several 64 KiB blocks, and a single one.
            let many: Vec<CEntry> = entries.iter().cycle().take(3000).copied().collect();
            for set in [&entries[..1], &entries[..], &many[..]] {
                for compression in [ManifestCompression::Null, ManifestCompression::default()] {
                    let typed: Vec<_> = set.iter().map(|e| ctx.manifest_entry(e)).collect();
                    let generic = encode_manifest(&typed, None, compression).expect("generic");
                    let direct = encode_builtin_container(
                        MetadataFileKind::Manifest,
                        set.len(),
                        compression,
                        |i, out| {
                            ctx.encode_manifest_entry(&set[i], out);
                            Ok(())
                        },
                    )
                    .expect("direct");
                    assert_eq!(without_sync(&generic), without_sync(&direct));
                    let want =
                        manifest_file_meta("m", 1, &typed, &ctx.partition_fields, 0).expect("meta");
                    let got = manifest_meta(&ctx, "m", 1, set).expect("meta");
                    assert_eq!(format!("{want:?}"), format!("{got:?}"));
                }
            }
        }
    }
}
