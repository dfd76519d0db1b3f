//! Iceberg-compatible metadata after a partition drop: what Paimon Java's commit callback writes
//! when `metadata.iceberg.storage` is `table-location`, so that Iceberg readers stop seeing the
//! dropped partitions at the same snapshot as Paimon readers.
//!
//! After the OVERWRITE snapshot `S` is published, `metadata/v<S-1>.metadata.json` (the Iceberg
//! metadata of the snapshot before) is the base: every manifest of its current snapshot that
//! lists a dropped data file as live is written again (live entries kept, the dropped ones as
//! DELETED, the others as EXISTING), a new manifest list names the rewritten and the unchanged
//! manifests, and `v<S>.metadata.json` adds Iceberg snapshot `S` (then `version-hint.text`).
//! Iceberg snapshots beyond the table's snapshot retention (`snapshot.num-retained.min/max`,
//! `snapshot.time-retained`) leave the new metadata, as in Java.
//!
//! **What it deletes:** the base `v<S-1>.metadata.json`, and for each Iceberg snapshot that
//! leaves the metadata its manifest list and the manifests of that list the next snapshot's list
//! does not name — exactly Java's expiry of its Iceberg metadata. **What keeps a file:** a
//! manifest any retained Iceberg snapshot's list names; data files are never touched (snapshot
//! expiry deletes the dropped ones later). Every name comes from metadata and must be one plain
//! segment under the metadata directory; the storage guard checks each path before deleting.
//!
//! Not written (the report says why; Java's next commit rebuilds the metadata): another storage
//! kind (`hadoop-catalog`, `hive-catalog`, `rest-catalog` need a catalog's directory or commit),
//! no base metadata for `S-1`, a base whose schema is not the table's current schema, a commit
//! found after an unknown outcome (its delta is not known here), a branch other than main.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{json, Value};

use super::commit::CommitOutcome;
use crate::clean::report::{DeletedPath, FileClass};
use crate::error::{Error, Result};
use crate::spec::manifest::writer::{encode_foreign_container, read_foreign_container};
use crate::spec::manifest::{AvroValue, FileKind};
use crate::storage::Location;
use crate::table::child;
use crate::table::Table;

/// Iceberg manifest entry status: the file was already in the table.
const EXISTING: i32 = 0;
/// Iceberg manifest entry status: the file was deleted by the entry's snapshot.
const DELETED: i32 = 2;

/// What a partition drop did to the table's Iceberg-compatible metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IcebergUpdate {
    /// The snapshot whose Iceberg metadata was to be written.
    pub snapshot_id: i64,
    /// True when `metadata/v<snapshot_id>.metadata.json` was written.
    pub written: bool,
    /// Why it was not written (empty when it was).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Manifests written again because they listed a dropped file.
    pub manifests_rewritten: u64,
    /// Metadata files deleted (class `other`, paths relative to the table root): the base
    /// metadata and the manifest lists and manifests of the Iceberg snapshots that left the
    /// metadata.
    pub files_deleted: Vec<DeletedPath>,
}

impl IcebergUpdate {
    fn skipped(snapshot_id: i64, reason: impl Into<String>) -> Self {
        IcebergUpdate {
            snapshot_id,
            reason: reason.into(),
            ..Default::default()
        }
    }
}

/// Writes the Iceberg metadata of the OVERWRITE snapshot `outcome` committed, when the table
/// keeps Iceberg-compatible metadata in its own directory. None when it keeps none. A failure
/// after the commit is reported in the update (the commit stands; Java's next commit rebuilds
/// the metadata), never as an error of the drop.
pub(crate) async fn refresh(table: &Table, outcome: &CommitOutcome) -> Option<IcebergUpdate> {
    let storage = table.options().get("metadata.iceberg.storage")?;
    let s = outcome.snapshot_id;
    let kind = storage.trim().to_ascii_lowercase();
    if kind == "disabled" {
        return None;
    }
    if kind != "table-location" {
        return Some(IcebergUpdate::skipped(
            s,
            format!(
                "metadata.iceberg.storage is {storage}: only table-location metadata is written \
                 here (the others need a catalog's directory or commit)"
            ),
        ));
    }
    if table.branch_name() != "main" {
        return Some(IcebergUpdate::skipped(
            s,
            "Iceberg metadata follows the main branch only",
        ));
    }
    if outcome.found_after_unknown_outcome {
        return Some(IcebergUpdate::skipped(
            s,
            "the commit was found after an unknown outcome: its dropped files are not known here",
        ));
    }
    match write(table, outcome).await {
        Ok(u) => Some(u),
        Err(e) => {
            tracing::warn!(snapshot = s, error = %e, "Iceberg metadata not written");
            Some(IcebergUpdate::skipped(s, format!("not written: {e}")))
        }
    }
}

/// The metadata directory, `<table>/metadata`.
fn metadata_dir(table: &Table) -> Location {
    table.root().join("metadata")
}

/// The last segment of a path or URI written in Iceberg metadata.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The path Iceberg metadata names new file `name` of `dir` by, in the form of `example` (a
/// path the table's metadata already holds): Paimon Java writes the table's own location, as
/// `file:/abs/path` on local disks, the URI on object stores.
fn metadata_path(dir: &Location, example: &str, name: &str) -> String {
    match dir.local_path() {
        Some(p) if example.starts_with("file:") => format!("file:{}/{name}", p.display()),
        Some(p) if example.starts_with('/') => format!("{}/{name}", p.display()),
        _ => format!("{}/{name}", dir.as_str().trim_end_matches('/')),
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn field<'a>(record: &'a AvroValue, name: &str) -> Option<&'a AvroValue> {
    record.field(name)
}

fn set_field(record: &mut AvroValue, name: &str, value: AvroValue) {
    if let AvroValue::Record(fields) = record {
        if let Some(slot) = fields.iter_mut().find(|(n, _)| n == name) {
            slot.1 = value;
        }
    }
}

fn as_i64(v: Option<&AvroValue>) -> Option<i64> {
    match v? {
        AvroValue::Long(x) => Some(*x),
        AvroValue::Int(x) => Some(i64::from(*x)),
        _ => None,
    }
}

fn as_str(v: Option<&AvroValue>) -> Option<&str> {
    match v? {
        AvroValue::String(s) => Some(s),
        _ => None,
    }
}

/// Sets an int or long field, keeping the field's own width.
fn set_number(record: &mut AvroValue, name: &str, v: i64) {
    let value = match field(record, name) {
        Some(AvroValue::Int(_)) => AvroValue::Int(i32::try_from(v).unwrap_or(i32::MAX)),
        Some(_) => AvroValue::Long(v),
        None => return,
    };
    set_field(record, name, value);
}

async fn read_json(table: &Table, loc: &Location) -> Result<Value> {
    let bytes = table.storage().get(loc).await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::malformed("Iceberg metadata", loc.as_str(), e.to_string()))
}

/// The retention that decides which Iceberg snapshots leave the metadata (Java uses the table's
/// snapshot retention).
struct Retention {
    min: i64,
    max: i64,
    time: Duration,
}

impl Retention {
    fn of(table: &Table) -> Result<Self> {
        let o = table.options();
        Ok(Retention {
            min: o.get_i64("snapshot.num-retained.min")?.unwrap_or(10),
            max: o
                .get_i64("snapshot.num-retained.max")?
                .unwrap_or(i64::from(i32::MAX)),
            time: o
                .get_duration("snapshot.time-retained")?
                .unwrap_or(Duration::from_secs(3600)),
        })
    }

    /// Java's `shouldExpire` for Iceberg snapshot `snapshot` when `current` is committed.
    fn expires(&self, snapshot: &Value, current: i64, now: i64) -> bool {
        let id = snapshot["snapshot-id"].as_i64().unwrap_or(i64::MAX);
        if id > current.saturating_sub(self.min) {
            return false;
        }
        if id <= current.saturating_sub(self.max) {
            return true;
        }
        let ts = snapshot["timestamp-ms"].as_i64().unwrap_or(i64::MAX);
        let kept = i64::try_from(self.time.as_millis()).unwrap_or(i64::MAX);
        ts < now.saturating_sub(kept)
    }
}

/// Index of the first Iceberg snapshot of `all` (oldest first, the new one last) that stays:
/// Java's walk stops at the first snapshot that does not expire; when every older one expires,
/// the one before the new snapshot stays (its list is the new list's base).
fn first_kept(all: &[Value], retention: &Retention, current: i64, now: i64) -> usize {
    let last_old = all.len().saturating_sub(2);
    all.iter()
        .take(all.len().saturating_sub(1))
        .position(|snap| !retention.expires(snap, current, now))
        .unwrap_or(last_old)
}

async fn write(table: &Table, outcome: &CommitOutcome) -> Result<IcebergUpdate> {
    let s = outcome.snapshot_id;
    let dir = metadata_dir(table);
    let storage = table.storage();
    let target = child(&dir, &format!("v{s}.metadata.json"))?;
    if storage.exists(&target).await? {
        return Ok(IcebergUpdate::skipped(s, "already written"));
    }
    let base_loc = child(&dir, &format!("v{}.metadata.json", s - 1))?;
    if !storage.exists(&base_loc).await? {
        return Ok(IcebergUpdate::skipped(
            s,
            format!(
                "no Iceberg metadata of snapshot {} to build on (Paimon Java rebuilds it at its \
                 next commit)",
                s - 1
            ),
        ));
    }
    let base = read_json(table, &base_loc).await?;
    let bad = |m: &str| Error::malformed("Iceberg metadata", base_loc.as_str(), m);
    let schema_id = table.schema().id;
    if base["current-schema-id"].as_i64() != Some(schema_id) {
        return Ok(IcebergUpdate::skipped(
            s,
            format!(
                "the Iceberg metadata's schema is not the table's current schema {schema_id} \
                 (Paimon Java adds it at its next commit)"
            ),
        ));
    }
    let current = base["current-snapshot-id"]
        .as_i64()
        .ok_or_else(|| bad("no current-snapshot-id"))?;
    let snapshots = base["snapshots"]
        .as_array()
        .ok_or_else(|| bad("no snapshots"))?
        .clone();
    let list_path = snapshots
        .iter()
        .find(|x| x["snapshot-id"].as_i64() == Some(current))
        .and_then(|x| x["manifest-list"].as_str())
        .ok_or_else(|| bad("the current snapshot has no manifest list"))?
        .to_string();

    // The dropped files, by name (unique per table), with their path under the table root to
    // check the Iceberg path against.
    // By file name, each with the `/<partition>/bucket-<n>/<name>` suffix the Iceberg path must
    // end with (one lookup per Iceberg entry).
    let mut dropped: HashMap<String, Vec<String>> = HashMap::new();
    for e in &outcome.delta {
        if e.kind != FileKind::Delete {
            return Err(Error::Internal(
                "a partition drop's delta holds an ADD entry".into(),
            ));
        }
        let rel = table.paths().relative_bucket_path(&e.partition, e.bucket)?;
        dropped
            .entry(e.file.file_name.clone())
            .or_default()
            .push(format!("/{rel}/{}", e.file.file_name));
    }
    let is_dropped = |p: &str| {
        dropped
            .get(file_name(p))
            .is_some_and(|suffixes| suffixes.iter().any(|s| p.ends_with(s.as_str())))
    };

    let list_loc = child(&dir, file_name(&list_path))?;
    let list = read_foreign_container(&storage.get(&list_loc).await?, list_loc.as_str())?;
    let uuid = uuid::Uuid::new_v4();
    let mut new_list = Vec::with_capacity(list.records.len());
    let mut rewritten = 0u64;
    let mut written: Vec<Location> = Vec::new();
    for meta in &list.records {
        let path = as_str(field(meta, "manifest_path"))
            .ok_or_else(|| bad("a manifest list entry has no manifest_path"))?
            .to_string();
        let loc = child(&dir, file_name(&path))?;
        let manifest = read_foreign_container(&storage.get(&loc).await?, loc.as_str())?;
        let live = |r: &AvroValue| as_i64(field(r, "status")) != Some(i64::from(DELETED));
        let hit = manifest.records.iter().any(|r| {
            live(r)
                && as_str(field(r, "data_file").and_then(|d| d.field("file_path")))
                    .is_some_and(is_dropped)
        });
        if !hit {
            new_list.push(meta.clone());
            continue;
        }
        // Live entries only: dropped ones DELETED, the others EXISTING.
        let mut entries = Vec::new();
        let (mut existing, mut deleted, mut existing_rows, mut deleted_rows) = (0i64, 0, 0, 0);
        let mut min_seq: Option<i64> = None;
        for r in manifest.records.iter().filter(|r| live(r)) {
            let mut r = r.clone();
            let data = field(&r, "data_file");
            let rows = as_i64(data.and_then(|d| d.field("record_count"))).unwrap_or(0);
            let gone = as_str(data.and_then(|d| d.field("file_path"))).is_some_and(is_dropped);
            let status = if gone { DELETED } else { EXISTING };
            set_field(&mut r, "status", AvroValue::Int(status));
            if gone {
                deleted += 1;
                deleted_rows += rows;
            } else {
                existing += 1;
                existing_rows += rows;
            }
            if let Some(q) = as_i64(field(&r, "sequence_number")) {
                min_seq = Some(min_seq.map_or(q, |m: i64| m.min(q)));
            }
            entries.push(r);
        }
        rewritten += 1;
        let name = format!("{uuid}-m{rewritten}.avro");
        let bytes =
            encode_foreign_container(&manifest.schema_json, &entries, manifest.compression)?;
        let length = bytes.len() as i64;
        let new_loc = child(&dir, &name)?;
        if !storage.put_if_absent(&new_loc, bytes).await? {
            return Err(Error::Internal(format!("{new_loc} already exists")));
        }
        written.push(new_loc);
        let mut m = meta.clone();
        set_field(
            &mut m,
            "manifest_path",
            AvroValue::String(metadata_path(&dir, &path, &name)),
        );
        set_number(&mut m, "manifest_length", length);
        set_number(&mut m, "sequence_number", s);
        set_number(&mut m, "min_sequence_number", min_seq.unwrap_or(-1));
        set_number(&mut m, "added_snapshot_id", s);
        for (names, v) in [
            (&["added_files_count", "added_data_files_count"][..], 0),
            (
                &["existing_files_count", "existing_data_files_count"][..],
                existing,
            ),
            (
                &["deleted_files_count", "deleted_data_files_count"][..],
                deleted,
            ),
            (&["added_rows_count"][..], 0),
            (&["existing_rows_count"][..], existing_rows),
            (&["deleted_rows_count"][..], deleted_rows),
        ] {
            for n in names {
                set_number(&mut m, n, v);
            }
        }
        new_list.push(m);
    }

    let list_name = format!("snap-1-{uuid}.avro");
    let list_bytes = encode_foreign_container(&list.schema_json, &new_list, list.compression)?;
    let new_list_loc = child(&dir, &list_name)?;
    if !storage.put_if_absent(&new_list_loc, list_bytes).await? {
        return Err(Error::Internal(format!("{new_list_loc} already exists")));
    }
    written.push(new_list_loc);

    // The new metadata: Iceberg snapshot `s` added, the expired ones left out (Java's rule).
    let now = now_ms();
    let retention = Retention::of(table)?;
    let mut all = snapshots;
    all.push(json!({
        "sequence-number": s,
        "snapshot-id": s,
        "parent-snapshot-id": current,
        "timestamp-ms": now,
        "summary": {"operation": if rewritten > 0 { "overwrite" } else { "append" }},
        "manifest-list": metadata_path(&dir, &list_path, &list_name),
        "schema-id": schema_id,
    }));
    let kept_from = first_kept(&all, &retention, s, now);
    // The snapshots whose lists are compared, oldest first: the expired ones and the first
    // kept one (the next of the last expired).
    let chain: Vec<Value> = all[..=kept_from.min(all.len() - 1)].to_vec();
    let kept: Vec<Value> = all[kept_from..].to_vec();
    let mut meta = base.clone();
    meta["last-sequence-number"] = json!(s);
    meta["last-updated-ms"] = json!(now);
    meta["snapshots"] = Value::Array(kept);
    meta["current-snapshot-id"] = json!(s);
    if let Some(main) = meta.get_mut("refs").and_then(|r| r.get_mut("main")) {
        main["snapshot-id"] = json!(s);
    }
    let text = serde_json::to_vec(&meta)
        .map_err(|e| Error::Internal(format!("Iceberg metadata not serializable: {e}")))?;
    if !storage.put_if_absent(&target, text.into()).await? {
        // Someone else (Java's callback) wrote it meanwhile: ours are unreferenced.
        discard(table, written).await;
        return Ok(IcebergUpdate::skipped(
            s,
            "written meanwhile by another writer",
        ));
    }
    if let Err(e) = storage
        .put(&child(&dir, "version-hint.text")?, s.to_string().into())
        .await
    {
        // The metadata stands (readers that list the versions find it); the old files stay.
        tracing::warn!(snapshot = s, error = %e, "Iceberg version hint not written");
        return Ok(IcebergUpdate {
            snapshot_id: s,
            written: true,
            reason: format!("written; version-hint.text not updated: {e}"),
            manifests_rewritten: rewritten,
            files_deleted: Vec::new(),
        });
    }

    // The new metadata stands; the old files go only when every kept list could be read.
    let (files_deleted, reason) =
        match expire_old(table, &dir, base_loc.name(), &chain, &all[kept_from..]).await {
            Ok(d) => (d, String::new()),
            Err(e) => {
                tracing::warn!(snapshot = s, error = %e, "old Iceberg metadata files not deleted");
                (
                    Vec::new(),
                    format!("written; old metadata files not deleted: {e}"),
                )
            }
        };
    Ok(IcebergUpdate {
        snapshot_id: s,
        written: true,
        reason,
        manifests_rewritten: rewritten,
        files_deleted,
    })
}

/// Deletes what Java deletes after writing the new metadata (see [`files_to_delete`]): `chain`
/// is the expired snapshots and the first kept one, `kept` every kept snapshot (the new one
/// last). A kept snapshot without a readable list is an error, and nothing is deleted then.
async fn expire_old(
    table: &Table,
    dir: &Location,
    base: &str,
    chain: &[Value],
    kept: &[Value],
) -> Result<Vec<DeletedPath>> {
    let list_of = |v: &Value| v["manifest-list"].as_str().map(str::to_string);
    let mut expired = Vec::new();
    for snap in chain {
        if let Some(l) = list_of(snap) {
            let manifests = manifests_of(table, dir, &l, false).await?;
            expired.push((file_name(&l).to_string(), manifests));
        }
    }
    let mut kept_lists = Vec::new();
    for snap in kept {
        let l = list_of(snap).ok_or_else(|| {
            Error::malformed(
                "Iceberg metadata",
                dir.as_str(),
                "a kept snapshot has no manifest-list",
            )
        })?;
        let manifests = manifests_of(table, dir, &l, true).await?;
        kept_lists.push((file_name(&l).to_string(), manifests));
    }
    let mut locs = Vec::new();
    for n in files_to_delete(base, &expired, &kept_lists) {
        locs.push(child(dir, &n)?);
    }
    let mut deleted = Vec::new();
    for (loc, r) in table.storage().delete_files(locs, 8).await {
        match r {
            Ok(()) => deleted.push(DeletedPath {
                class: FileClass::Other,
                path: format!("metadata/{}", loc.name()),
            }),
            Err(e) => tracing::warn!(path = %loc, error = %e, "Iceberg metadata file not deleted"),
        }
    }
    Ok(deleted)
}

/// What Java deletes after writing the new metadata: the base metadata, then for each expired
/// snapshot of `chain` (oldest first; its last entry is the first kept one) its list and the
/// manifests of that list the next list does not name. By file name, and never a list or
/// manifest a kept snapshot's list (`kept`) names: on metadata Java wrote, a manifest the next
/// list drops is never named again, and this holds also on metadata that says otherwise. A name
/// from a list that is not an Avro file (`v<N>.metadata.json`, `version-hint.text` in crafted
/// metadata) is never deleted.
fn files_to_delete(
    base: &str,
    chain: &[(String, HashSet<String>)],
    kept: &[(String, HashSet<String>)],
) -> Vec<String> {
    let kept_names: HashSet<&str> = kept
        .iter()
        .flat_map(|(l, ms)| std::iter::once(l.as_str()).chain(ms.iter().map(String::as_str)))
        .collect();
    let deletable = |n: &str| n.ends_with(".avro") && !kept_names.contains(n);
    let mut delete = vec![base.to_string()];
    for pair in chain.windows(2) {
        let ((old, old_manifests), (_, next_manifests)) = (&pair[0], &pair[1]);
        for m in old_manifests {
            if !next_manifests.contains(m) && deletable(m) {
                delete.push(m.clone());
            }
        }
        if deletable(old) {
            delete.push(old.clone());
        }
    }
    delete.sort();
    delete.dedup();
    delete
}

/// The file names of the manifests a manifest list names. A missing list is an error when
/// `must_exist` (a kept snapshot's list: what it names must not be taken for nothing), else
/// names nothing (an expired snapshot's list already gone). A record without a manifest path is
/// an error.
async fn manifests_of(
    table: &Table,
    dir: &Location,
    list_path: &str,
    must_exist: bool,
) -> Result<HashSet<String>> {
    let loc = child(dir, file_name(list_path))?;
    if !must_exist && !table.storage().exists(&loc).await? {
        return Ok(HashSet::new());
    }
    let list = read_foreign_container(&table.storage().get(&loc).await?, loc.as_str())?;
    list.records
        .iter()
        .map(|r| {
            as_str(field(r, "manifest_path"))
                .map(|p| file_name(p).to_string())
                .ok_or_else(|| {
                    Error::malformed("Iceberg manifest list", loc.as_str(), "no manifest_path")
                })
        })
        .collect()
}

/// Deletes files this refresh wrote when they end up unreferenced.
async fn discard(table: &Table, written: Vec<Location>) {
    for (loc, r) in table.storage().delete_files(written, 8).await {
        if let Err(e) = r {
            tracing::warn!(path = %loc, error = %e, "could not delete an unreferenced Iceberg file");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(id: i64, ts: i64) -> Value {
        json!({"snapshot-id": id, "timestamp-ms": ts, "manifest-list": format!("/t/metadata/snap-{id}.avro")})
    }

    fn retention(min: i64, max: i64, secs: u64) -> Retention {
        Retention {
            min,
            max,
            time: Duration::from_secs(secs),
        }
    }

    #[test]
    fn the_walk_stops_at_the_first_snapshot_that_does_not_expire() {
        let now = 1_000_000;
        // Ids 1..=5, the new one 6; min 2 keeps 5 and 6; time: 1 and 2 are old, 3 is young.
        let all: Vec<Value> = (1..=6)
            .map(|i| snap(i, if i <= 2 { 0 } else { now }))
            .collect();
        assert_eq!(first_kept(&all, &retention(2, i64::MAX, 60), 6, now), 2);
        // Everything old: the snapshot before the new one stays.
        let old: Vec<Value> = (1..=6).map(|i| snap(i, 0)).collect();
        assert_eq!(first_kept(&old, &retention(1, i64::MAX, 60), 6, now), 4);
        // max 2: ids at most 6 - 2 expire whatever their time; 5 is within min.
        assert_eq!(first_kept(&all, &retention(1, 2, 1_000_000), 6, now), 4);
        // Only the base and the new one.
        assert_eq!(
            first_kept(&all[4..], &retention(10, i64::MAX, 60), 6, now),
            0
        );
    }

    #[test]
    fn new_files_are_named_by_the_tables_own_location_in_the_metadatas_form() {
        let dir = Location::from_local_path(std::path::Path::new("/w/db.db/t/metadata"))
            .expect("location");
        assert_eq!(
            metadata_path(
                &dir,
                "file:/elsewhere/t/metadata/snap-1-a.avro",
                "x-m1.avro"
            ),
            "file:/w/db.db/t/metadata/x-m1.avro"
        );
        assert_eq!(
            metadata_path(&dir, "/elsewhere/t/metadata/snap-1-a.avro", "y.avro"),
            "/w/db.db/t/metadata/y.avro"
        );
        assert_eq!(file_name("/w/t/metadata/a.avro"), "a.avro");
    }

    fn list(name: &str, manifests: &[&str]) -> (String, HashSet<String>) {
        (
            name.to_string(),
            manifests.iter().map(|m| m.to_string()).collect(),
        )
    }

    #[test]
    fn expiry_deletes_what_only_expired_lists_name_and_keeps_what_a_kept_list_names() {
        // Snapshots 1 and 2 expire, 3 is the first kept one, 4 the new one.
        let chain = [
            list("l1.avro", &["m1.avro", "m2.avro", "shared.avro"]),
            list(
                "l2.avro",
                &["m2.avro", "m3.avro", "hostile.avro", "v4.metadata.json"],
            ),
            list("l3.avro", &["m3.avro", "m4.avro"]),
        ];
        // The new list names "hostile" again although l3 dropped it (metadata Java would not
        // write), and "shared" which l2 dropped; l2 names the new metadata file as a manifest.
        let kept = [
            list("l3.avro", &["m3.avro", "m4.avro"]),
            list(
                "l4.avro",
                &["m4.avro", "m5.avro", "hostile.avro", "shared.avro"],
            ),
        ];
        let got = files_to_delete("v3.metadata.json", &chain, &kept);
        assert_eq!(
            got,
            [
                "l1.avro",
                "l2.avro",
                "m1.avro",
                "m2.avro",
                "v3.metadata.json"
            ]
        );
        // Only the base and the new snapshot: nothing expires but the base metadata file.
        let got = files_to_delete("v3.metadata.json", &chain[2..], &kept[..1]);
        assert_eq!(got, ["v3.metadata.json"]);
    }

    #[test]
    fn numbers_keep_their_field_width() {
        let mut r = AvroValue::Record(vec![
            ("a".into(), AvroValue::Int(1)),
            ("b".into(), AvroValue::Long(1)),
        ]);
        set_number(&mut r, "a", 7);
        set_number(&mut r, "b", 8);
        set_number(&mut r, "missing", 9);
        assert_eq!(r.field("a"), Some(&AvroValue::Int(7)));
        assert_eq!(r.field("b"), Some(&AvroValue::Long(8)));
        assert_eq!(r.field("missing"), None);
    }
}
