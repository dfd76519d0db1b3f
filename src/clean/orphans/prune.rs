//! Last phase of orphan cleanup (spec §5.6 step 7): remove data directories left empty, walking
//! up through partition (`k=v`) directories, never reaching a data root (so never the table
//! root). Only empty directories are removed (a non-recursive `rmdir`); object stores have none.

use std::collections::BTreeSet;

use crate::clean::shared::deleter::Deleter;
use crate::storage::Location;

/// Tries to remove each `(dir, data root)` and then its partition parents below the data root.
/// Never called in a dry run (the deleter refuses anyway).
pub(crate) async fn remove_empty_dirs(deleter: &mut Deleter<'_>, dirs: Vec<(Location, Location)>) {
    let mut level: BTreeSet<(Location, Location)> = dirs
        .into_iter()
        .filter(|(d, root)| d.is_under(root))
        .collect();
    while !level.is_empty() {
        let mut next = BTreeSet::new();
        // Deepest first, so a parent is tried after its children.
        let mut todo: Vec<(Location, Location)> = level.into_iter().collect();
        todo.sort_by_key(|(d, _)| std::cmp::Reverse(d.as_str().matches('/').count()));
        for (dir, root) in todo {
            if !deleter.remove_dir_if_empty(&dir).await {
                continue;
            }
            tracing::debug!(dir = %dir, "removed empty directory");
            if let Some(parent) = dir.parent() {
                if parent.is_under(&root) && parent.name().contains('=') {
                    next.insert((parent, root));
                }
            }
        }
        level = next;
    }
}
