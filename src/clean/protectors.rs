//! Gathering the versions that protect files, across every branch of a table.

use crate::clean::references::{ProtectMode, Protector};
use crate::error::{Error, Result};
use crate::spec::snapshot::Snapshot;
use crate::table::{list_branches, Table};

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
pub async fn other_protectors(table: &Table) -> Result<Vec<Protector>> {
    other_protectors_except(table, &[]).await
}

/// Like [`other_protectors`], without the named tags of `table`'s own branch (tags being
/// deleted).
pub async fn other_protectors_except(
    table: &Table,
    skip_tags: &[String],
) -> Result<Vec<Protector>> {
    let mut out = Vec::new();
    for name in list_branches(table.storage()).await? {
        let b = match table.branch(&name).await {
            Ok(b) => b,
            Err(Error::NotFound { .. }) => {
                // No schema: read it with this table's schema; manifests are shared.
                tracing::warn!(branch = %name, "branch has no readable schema; its snapshots and tags still protect files");
                table.with_branch_root_of(&name)
            }
            Err(e) => return Err(e),
        };
        for (tag, t) in b.tags().await? {
            if name == table.branch_name() && skip_tags.contains(&tag) {
                continue;
            }
            out.push(Protector {
                label: format!("tag {tag} (branch {name})"),
                snapshot: t.snapshot,
                mode: ProtectMode::Full,
            });
        }
        if name != table.branch_name() {
            let snaps = b.all_snapshots().await?;
            out.extend(snapshot_line(&format!("branch {name}"), &snaps));
        }
        for c in b.all_changelogs().await? {
            out.push(Protector {
                label: changelog_label(c.id, &name),
                snapshot: c,
                mode: ProtectMode::Changelog,
            });
        }
    }
    Ok(out)
}

/// The label of a long-lived changelog protector (also used to recognise it).
pub(crate) fn changelog_label(id: i64, branch: &str) -> String {
    format!("changelog {id} (branch {branch})")
}
