//! The versions that protect files ([`Protector`], read as their [`ProtectMode`] says), gathered
//! across every branch of a table: a removed version's line of retained snapshots
//! ([`snapshot_line`]) and everything outside it ([`other_protectors_except`]).

use std::collections::BTreeMap;

use crate::clean::expiry::range::expiring_now;
use crate::error::{Error, Result};
use crate::spec::snapshot::Snapshot;
use crate::table::{list_branches, Table};

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
    /// A long-lived changelog: what an incremental reader of it uses. Data: the files its
    /// changelog list adds; without a changelog list, with changelog producer `none`, the data
    /// files its delta adds (with another producer, nothing: its data was compacted away or
    /// is read through later changelog lists, and Java deletes it at snapshot expiry). Never
    /// the files of its base list (those are a full read, which a changelog is not).
    /// Metadata: its changelog list, else its delta and base lists (Java keeps both) and their
    /// manifests; never its index manifest or statistics (they go with the snapshot).
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

/// The manifest lists a long-lived changelog `c` needs (a missing one is an error): its
/// changelog manifest list when it has one (a changelog reader reads only that); otherwise,
/// with changelog producer `none` (`producer_none`), its base and delta lists (the reader
/// reads the files its delta adds); otherwise none (no reader reads anything of it).
pub(crate) fn changelog_needed_lists(c: &Snapshot, producer_none: bool) -> Vec<String> {
    match &c.changelog_manifest_list {
        Some(l) => vec![l.clone()],
        None if producer_none => vec![c.base_manifest_list.clone(), c.delta_manifest_list.clone()],
        None => Vec::new(),
    }
}

/// The manifest lists of a long-lived changelog `c` without a changelog manifest list of a
/// table whose changelog producer is not `none`: no reader needs them, but while present
/// they keep the metadata they name. Paimon Java deletes them when it turns a snapshot into
/// such a changelog, so only their absence ("not found") is tolerated.
pub(crate) fn changelog_optional_lists(c: &Snapshot, producer_none: bool) -> Vec<String> {
    if c.changelog_manifest_list.is_none() && !producer_none {
        vec![c.base_manifest_list.clone(), c.delta_manifest_list.clone()]
    } else {
        Vec::new()
    }
}

/// Protectors of one line of snapshots (ascending ids): the first `Full`, the rest `DeltaAdds`.
pub fn snapshot_line(label: &str, snapshots: &[Snapshot]) -> Vec<Protector> {
    snapshots
        .iter()
        .enumerate()
        .map(|(i, s)| Protector {
            label: format!("{label} snapshot {}", s.id),
            snapshot: s.clone(),
            mode: if i == 0 {
                ProtectMode::Full
            } else {
                ProtectMode::DeltaAdds
            },
        })
        .collect()
}

/// Everything outside `branch`'s own snapshot line that keeps files alive: the tags of every
/// branch (including `branch`), the snapshots of every other branch, and the long-lived
/// changelogs of every branch. A branch whose metadata cannot be read is an error, except a
/// branch directory without any schema (pypaimon can leave one behind), whose snapshots and
/// tags are still read when present.
#[cfg(feature = "internal-api")]
pub async fn other_protectors(table: &Table) -> Result<Vec<Protector>> {
    other_protectors_except(table, &[]).await
}

/// Like [`other_protectors`], without the named tags of `table`'s own branch (tags being
/// deleted).
pub async fn other_protectors_except(
    table: &Table,
    skip_tags: &[String],
) -> Result<Vec<Protector>> {
    // Branches are read concurrently; their protectors keep the branches' order.
    let branches = list_branches(table.storage()).await?;
    let per_branch = futures::future::try_join_all(
        branches
            .iter()
            .map(|name| branch_protectors(table, name, skip_tags)),
    )
    .await?;
    Ok(per_branch.into_iter().flatten().collect())
}

/// The protectors [`other_protectors_except`] finds in branch `name`: its tags, its snapshots
/// (unless it is `table`'s own branch) and its long-lived changelogs, read concurrently.
async fn branch_protectors(
    table: &Table,
    name: &str,
    skip_tags: &[String],
) -> Result<Vec<Protector>> {
    let branch = match table.branch(name).await {
        Ok(branch) => branch,
        Err(Error::NotFound { .. }) => {
            // No schema: read it with this table's schema; manifests are shared.
            tracing::warn!(branch = %name, "branch has no readable schema; its snapshots and tags still protect files");
            table.with_branch_root_of(name)
        }
        Err(e) => return Err(e),
    };
    let own_branch = name == table.branch_name();
    let tags = async {
        let mut out = Vec::new();
        for (tag, t) in branch.tags().await? {
            if own_branch && skip_tags.contains(&tag) {
                continue;
            }
            out.push(Protector {
                label: format!("tag {tag} (branch {name})"),
                snapshot: t.snapshot,
                mode: ProtectMode::Full,
            });
        }
        Ok::<_, Error>(out)
    };
    let snapshots = async {
        if own_branch {
            return Ok(Vec::new());
        }
        let snaps = branch.all_snapshots().await?;
        Ok::<_, Error>(snapshot_line(&format!("branch {name}"), &snaps))
    };
    let changelogs = changelog_protectors(&branch, name);
    let (mut out, snapshots, changelogs) = futures::try_join!(tags, snapshots, changelogs)?;
    out.extend(snapshots);
    out.extend(changelogs);
    Ok(out)
}

/// The long-lived changelogs of branch `b` (named `name`) that protect files.
async fn changelog_protectors(branch: &Table, name: &str) -> Result<Vec<Protector>> {
    let mut out = Vec::new();
    let changelogs: BTreeMap<i64, Snapshot> = branch
        .all_changelogs()
        .await?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let expiring = if changelogs.is_empty() {
        0..0
    } else {
        expiring_now(branch, &changelogs).await?
    };
    for (id, c) in changelogs {
        if expiring.contains(&id) && !changelog_readable(branch, &c).await? {
            // Half-deleted by an interrupted changelog expiry (its metadata goes before its
            // file): unreadable for everyone, and expiring anyway. Strict otherwise (P3).
            tracing::warn!(branch = %name, changelog = id, "changelog past its retention misses its metadata (an interrupted changelog expiry); it protects nothing until the next changelog expiry removes it");
            continue;
        }
        out.push(Protector {
            label: changelog_label(id, name),
            snapshot: c,
            mode: ProtectMode::Changelog,
        });
    }
    Ok(out)
}

/// Whether every metadata file a changelog protector needs is present: the lists of
/// [`changelog_needed_lists`] and the manifests they name. Errors other than "not found" are
/// errors.
async fn changelog_readable(branch: &Table, changelog: &Snapshot) -> Result<bool> {
    let lists = changelog_needed_lists(changelog, branch.options().changelog_producer_none());
    for l in lists {
        let metas = match branch.reader().manifest_list(branch.paths(), &l).await {
            Ok(m) => m,
            Err(e) if e.is_not_found() => return Ok(false),
            Err(e) => return Err(e),
        };
        for m in metas {
            if !branch
                .storage()
                .exists(&branch.paths().manifest(&m.file_name)?)
                .await?
            {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The label of a long-lived changelog protector (also used to recognise it).
pub(crate) fn changelog_label(id: i64, branch: &str) -> String {
    format!("changelog {id} (branch {branch})")
}
