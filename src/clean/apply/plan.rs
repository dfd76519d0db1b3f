//! The plan document: what a dry run would delete, with what the apply re-checks.

use std::collections::BTreeMap;

use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};

use crate::clean::control::RunControl;
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::clock::now_millis;
use crate::error::{Error, Result};
use crate::spec::consumer::Consumer;
use crate::storage::{Location, Storage};
use crate::table::{branch_root, list_branches, Table, VersionedDir};

/// The `format` of every plan document.
pub const PLAN_FORMAT: &str = "paimon-cleanup-plan";

/// The version of the plan document this library writes and reads.
pub const PLAN_VERSION: u32 = 1;

/// What identifies the table a plan was made for: its first schema file. A table dropped and
/// created again at the same place writes a new one (with its own creation time inside).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanIdentity {
    /// The schema file, relative to the table root (`schema/schema-0`).
    pub schema_file: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// A 64-bit fingerprint of its content (hex): detects a change, not a forgery.
    pub fingerprint: String,
}

/// One branch as the plan saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchState {
    /// Branch name (`main` for the table's own metadata).
    pub name: String,
    /// Its earliest snapshot id.
    pub earliest_snapshot: Option<i64>,
    /// Its latest snapshot id.
    pub latest_snapshot: Option<i64>,
    /// Its earliest long-lived changelog id.
    pub earliest_changelog: Option<i64>,
    /// Its latest long-lived changelog id.
    pub latest_changelog: Option<i64>,
    /// Its tags.
    pub tags: Vec<String>,
    /// Its consumers and the snapshot each reads next.
    pub consumers: BTreeMap<String, i64>,
}

/// One planned file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanFile {
    /// Its location: relative to the table root when under it, else the full location.
    pub path: String,
    /// Its kind (`data`, `manifest`, `snapshot_meta`, ... as in reports).
    pub kind: String,
    /// Its size at planning (`None`: it was already gone).
    pub bytes: Option<u64>,
    /// For version files (snapshot, changelog, tag, consumer): a fingerprint of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// A reviewed deletion plan: the exact files a dry run would delete and what the apply needs
/// to tell whether it still holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Always [`PLAN_FORMAT`].
    pub format: String,
    /// [`PLAN_VERSION`] when written by this library.
    pub version: u32,
    /// When the plan was made (epoch milliseconds).
    pub created_ms: i64,
    /// The command that made it (e.g. `expire-snapshots`).
    pub command: String,
    /// Its arguments as given (secret option values redacted by the caller).
    pub arguments: Vec<String>,
    /// The table root.
    pub table: String,
    /// The branch the command worked on.
    pub branch: String,
    /// The table's identity.
    pub identity: PlanIdentity,
    /// Every branch as read at planning: the versions the plan was made against.
    pub branches: Vec<BranchState>,
    /// The files to delete, in the order the dry run would have deleted them.
    pub files: Vec<PlanFile>,
    /// Files and bytes per kind.
    pub totals: BTreeMap<String, (u64, u64)>,
}

/// The report name of a file class (`data`, `snapshot_meta`, ...).
pub(crate) fn class_name(class: FileClass) -> String {
    serde_json::to_value(class)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| "other".to_string())
}

/// The file class a report name stands for.
pub(crate) fn class_of(name: &str) -> Option<FileClass> {
    FileClass::ALL
        .iter()
        .copied()
        .find(|c| class_name(*c) == name)
}

/// True for the classes whose content the plan fingerprints (they hold versions or bounds).
pub(crate) fn is_version_file(class: FileClass) -> bool {
    matches!(
        class,
        FileClass::SnapshotMeta
            | FileClass::ChangelogMeta
            | FileClass::TagMeta
            | FileClass::ConsumerMeta
    )
}

/// A 64-bit FNV-1a fingerprint of `bytes` with their length, as hex.
pub(crate) fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}-{}", bytes.len())
}

/// The location a plan path names: a full location, or a path relative to `root` with no
/// empty, `.` or `..` segment. Anything else is [`Error::PathRefused`].
pub(crate) fn location_of(root: &Location, path: &str) -> Result<Location> {
    let refused = |why: String| Error::PathRefused {
        path: path.to_string(),
        reason: why,
    };
    if path.contains("://") {
        return Location::parse(path).map_err(|e| refused(e.to_string()));
    }
    root.try_join(path)
        .map_err(|_| refused("not a plain path below the table root".to_string()))
}

/// The table's identity: its schema file of the lowest id.
pub(crate) async fn identity(storage: &Storage) -> Result<Option<PlanIdentity>> {
    let root = storage.root();
    let listing = storage.list_metadata_dir(&root.join("schema")).await?;
    let first = listing
        .files
        .iter()
        .filter_map(|f| {
            let id: i64 = f.location.name().strip_prefix("schema-")?.parse().ok()?;
            Some((id, f.location.clone()))
        })
        .min_by_key(|(id, _)| *id);
    let Some((_, loc)) = first else {
        return Ok(None);
    };
    let bytes = match storage.get(&loc).await {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(PlanIdentity {
        schema_file: loc
            .relative_to(root)
            .map_or_else(|| loc.as_str().to_string(), String::from),
        bytes: bytes.len() as u64,
        fingerprint: fingerprint(&bytes),
    }))
}

/// Every branch's versions as they are now.
pub(crate) async fn branch_states(storage: &Storage) -> Result<Vec<BranchState>> {
    let mut out = Vec::new();
    for name in list_branches(storage).await? {
        let broot = branch_root(storage.root(), &name);
        let snapshots = VersionedDir::snapshots(&broot).list_ids(storage).await?;
        let changelogs = VersionedDir::changelogs(&broot).list_ids(storage).await?;
        let tags = storage
            .list_metadata_dir(&broot.join("tag"))
            .await?
            .files
            .iter()
            .filter_map(|f| f.location.name().strip_prefix("tag-").map(String::from))
            .collect();
        out.push(BranchState {
            name,
            earliest_snapshot: snapshots.iter().min().copied(),
            latest_snapshot: snapshots.iter().max().copied(),
            earliest_changelog: changelogs.iter().min().copied(),
            latest_changelog: changelogs.iter().max().copied(),
            tags,
            consumers: consumers_of(storage, &broot).await?,
        });
    }
    Ok(out)
}

/// The consumers of the branch at `broot` and the snapshot each reads next.
pub(crate) async fn consumers_of(
    storage: &Storage,
    broot: &Location,
) -> Result<BTreeMap<String, i64>> {
    let mut out = BTreeMap::new();
    for f in storage
        .list_metadata_dir(&broot.join("consumer"))
        .await?
        .files
    {
        let Some(id) = f.location.name().strip_prefix("consumer-") else {
            continue;
        };
        let bytes = match storage.get(&f.location).await {
            Ok(b) => b,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        };
        let c = Consumer::parse(&bytes, f.location.as_str())?;
        out.insert(id.to_string(), c.next_snapshot);
    }
    Ok(out)
}

/// The plan of the dry-run reports `deletions`, made by `command` with `arguments` on
/// `table`'s branch: every file they list with its kind and its size now, the content
/// fingerprint of every version file among them, the table's identity and every branch's
/// versions. The reports must be dry runs (a report of a real run that deleted anything is
/// [`Error::InvalidArgument`]).
pub async fn make_plan(
    table: &Table,
    command: &str,
    arguments: Vec<String>,
    deletions: &[&DeletionReport],
    ctl: &RunControl,
) -> Result<Plan> {
    if deletions.iter().any(|d| !d.dry_run && d.total_files() > 0) {
        return Err(Error::InvalidArgument(
            "a plan is made from a dry run only".into(),
        ));
    }
    let storage = table.storage();
    let root = storage.root().clone();
    let identity = identity(storage).await?.ok_or_else(|| Error::NotFound {
        path: root.join("schema").as_str().to_string(),
    })?;
    let branches = branch_states(storage).await?;
    let mut listed: Vec<(String, FileClass, Location)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in deletions {
        for p in d.paths.iter() {
            if !seen.insert(p.path.clone()) {
                continue;
            }
            let loc = location_of(&root, &p.path)?;
            listed.push((p.path, p.class, loc));
        }
    }
    let files: Vec<PlanFile> = stream::iter(listed)
        .map(|(path, class, loc)| async move {
            let (bytes, fp) = if is_version_file(class) {
                match storage.get(&loc).await {
                    Ok(b) => (Some(b.len() as u64), Some(fingerprint(&b))),
                    Err(e) if e.is_not_found() => (None, None),
                    Err(e) => return Err(e),
                }
            } else {
                (storage.head(&loc).await?.map(|s| s.size), None)
            };
            Ok::<_, Error>(PlanFile {
                path,
                kind: class_name(class),
                bytes,
                fingerprint: fp,
            })
        })
        .buffered(ctl.io_concurrency.max(1))
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let mut totals: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for f in &files {
        let t = totals.entry(f.kind.clone()).or_default();
        t.0 += 1;
        t.1 += f.bytes.unwrap_or(0);
    }
    Ok(Plan {
        format: PLAN_FORMAT.to_string(),
        version: PLAN_VERSION,
        created_ms: now_millis(),
        command: command.to_string(),
        arguments,
        table: root.as_str().to_string(),
        branch: table.branch_name().to_string(),
        identity,
        branches,
        files,
        totals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_a_name_that_maps_back() {
        for c in FileClass::ALL {
            assert_eq!(class_of(&class_name(c)), Some(c));
        }
        assert_eq!(class_of("schema"), None);
    }

    #[test]
    fn plan_paths_stay_below_the_root() {
        let root = Location::parse("file:///tmp/wh/t").expect("root");
        assert!(location_of(&root, "bucket-0/data-1.orc").is_ok());
        for bad in ["../t2/x", "a/../../x", "/etc/passwd", "", "a//b"] {
            assert!(
                matches!(location_of(&root, bad), Err(Error::PathRefused { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn fingerprints_differ_with_content() {
        assert_ne!(fingerprint(b"{\"id\":1}"), fingerprint(b"{\"id\":2}"));
        assert_eq!(fingerprint(b"abc"), fingerprint(b"abc"));
    }
}
