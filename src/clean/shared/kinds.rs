//! Kind-checked deletions: a planned deletion must sit where a file of the class it claims to be
//! lives, with that class's name pattern. Metadata that names `schema/schema-0`, `LATEST`, a
//! snapshot, a tag, a consumer file or a manifest as a data file (a crafted `_EXTERNAL_PATH`)
//! therefore cannot get it deleted; the whole plan is refused before the first deletion.
//!
//! The rules ([`KindRules::check`]):
//!
//! * **Data, changelog and index files**: in a data directory — `<data root>/<k=v>…/bucket-N/`
//!   with exactly one `k=v` directory per partition key (or, for files orphan removal found
//!   there, the last partition directory itself), under the table's data root or a configured
//!   external data root (same shape, with or without the `data-file.path-directory` prefix) —
//!   or directly in `<table root>/index/`, or under the global-index external root (index
//!   files).
//! * **Manifests** `<table root>/manifest/manifest-…` (not `manifest-list-…`), **manifest
//!   lists** `manifest/manifest-list-…`, **index manifests** `manifest/index-manifest-…`.
//! * **Statistics**: directly in `<table root>/statistics/`.
//! * **Snapshot / changelog files**: `snapshot/snapshot-<n>` and `changelog/changelog-<n>` of the
//!   branch the run works on; **tags** `tag/tag-<name>` (and Java's success files
//!   `tag/tag-success-file/<file>`) and **consumers**
//!   `consumer/consumer-<id>` of that branch.
//! * **Other** (what orphan removal found and could not name): in `manifest/`, `index/`,
//!   `statistics/` or a data directory, or a temp file in `snapshot/` or `changelog/` of any
//!   branch — never a version file, `EARLIEST` or `LATEST`.

use crate::clean::report::FileClass;
use crate::error::{Error, Result};
use crate::storage::Location;
use crate::table::Table;

/// Where each class of file may be deleted for one table and branch.
#[derive(Debug, Clone)]
pub struct KindRules {
    root: Location,
    branch_root: Location,
    /// The table's data root, then each external data root with and without the data prefix.
    data_roots: Vec<Location>,
    /// Roots under which index files may lie at any depth (the global-index external root).
    index_roots: Vec<Location>,
    partition_levels: usize,
}

impl KindRules {
    /// The rules for `table`'s branch: its data root, partition keys and external roots.
    pub fn of(table: &Table) -> KindRules {
        let root = table.root().clone();
        let data_root = table.paths().data_root().clone();
        let data_prefix = data_root
            .relative_to(&root)
            .filter(|p| !p.is_empty())
            .map(String::from);
        let mut data_roots = vec![data_root];
        for raw in table.options().data_file_external_paths() {
            if let Ok(ext) = Location::parse(&raw) {
                if let Some(prefix) = &data_prefix {
                    data_roots.push(ext.join(prefix));
                }
                data_roots.push(ext);
            }
        }
        let index_roots = table
            .options()
            .global_index_external_path()
            .and_then(|r| Location::parse(r).ok())
            .into_iter()
            .collect();
        KindRules {
            root,
            branch_root: table.branch_root().clone(),
            data_roots,
            index_roots,
            partition_levels: table.schema().partition_keys.len(),
        }
    }

    /// `Ok(())` if a file of `class` may be deleted at `loc`; otherwise [`Error::PathRefused`]
    /// naming the rule it breaks (the metadata that planned it is invalid).
    pub fn check(&self, class: FileClass, loc: &Location) -> Result<()> {
        let ok = match class {
            FileClass::Data | FileClass::ChangelogData => self.in_data_dir(loc),
            FileClass::Index => {
                self.in_data_dir(loc)
                    || self.directly_in(loc, &self.root.join("index"))
                    || (self.index_roots.iter().any(|r| loc.is_under(r))
                        && !self.in_table_metadata(loc))
            }
            FileClass::Manifest => {
                self.manifest_named(loc, "manifest-") && !loc.name().starts_with("manifest-list-")
            }
            FileClass::ManifestList => self.manifest_named(loc, "manifest-list-"),
            FileClass::IndexManifest => self.manifest_named(loc, "index-manifest-"),
            FileClass::Statistics => self.directly_in(loc, &self.root.join("statistics")),
            FileClass::SnapshotMeta => self.version_file(loc, "snapshot", "snapshot-"),
            FileClass::ChangelogMeta => self.version_file(loc, "changelog", "changelog-"),
            FileClass::TagMeta => {
                let tag_dir = self.branch_root.join("tag");
                self.named_in(loc, &tag_dir, "tag-")
                    || (self.directly_in(loc, &tag_dir.join("tag-success-file"))
                        && !loc.name().is_empty())
            }
            FileClass::ConsumerMeta => {
                self.named_in(loc, &self.branch_root.join("consumer"), "consumer-")
            }
            FileClass::Other => self.other_leftover(loc),
        };
        if ok {
            Ok(())
        } else {
            Err(Error::PathRefused {
                path: loc.to_string(),
                reason: format!(
                    "the plan deletes it as {}, but {}; the metadata naming it is invalid, so \
                     the whole plan is refused and nothing is deleted",
                    class_name(class),
                    rule(class)
                ),
            })
        }
    }

    /// True if `loc` lies directly in `dir`.
    fn directly_in(&self, loc: &Location, dir: &Location) -> bool {
        loc.parent().as_ref() == Some(dir)
    }

    /// Directly in `dir` with a name `prefix` + something.
    fn named_in(&self, loc: &Location, dir: &Location, prefix: &str) -> bool {
        self.directly_in(loc, dir)
            && loc.name().len() > prefix.len()
            && loc.name().starts_with(prefix)
    }

    /// `<table root>/manifest/<prefix>…`.
    fn manifest_named(&self, loc: &Location, prefix: &str) -> bool {
        self.named_in(loc, &self.root.join("manifest"), prefix)
    }

    /// `<branch root>/<dir>/<prefix><id>` with a non-negative id.
    fn version_file(&self, loc: &Location, dir: &str, prefix: &str) -> bool {
        self.directly_in(loc, &self.branch_root.join(dir)) && version_id(loc.name(), prefix)
    }

    /// In a data directory under one of the data roots: `(k=v/){levels}bucket-*/name`, or
    /// `(k=v/){levels}name` for a partitioned table (a partition directory without buckets).
    fn in_data_dir(&self, loc: &Location) -> bool {
        self.data_roots.iter().any(|r| {
            let Some(rel) = loc.relative_to(r) else {
                return false;
            };
            let Some((dirs, _name)) = rel.rsplit_once('/') else {
                return false;
            };
            let (parts, bucket) = match dirs.rsplit_once('/') {
                Some((parts, last)) if last.starts_with("bucket-") => (Some(parts), true),
                None if dirs.starts_with("bucket-") => (None, true),
                _ => (Some(dirs), false),
            };
            let (levels, all_partitions) = parts.map_or((0, true), |p| {
                p.split('/').fold((0, true), |(n, ok), seg| {
                    (n + 1, ok && is_partition_dir(seg))
                })
            });
            levels == self.partition_levels
                && all_partitions
                && (bucket || self.partition_levels > 0)
        })
    }

    /// True if `loc` lies in one of the table's metadata areas (`schema/`, `snapshot/`,
    /// `changelog/`, `tag/`, `consumer/`, `branch/`, `manifest/`, `statistics/` or a hint of
    /// the root): an index root that covers the table root (a global-index external path set
    /// to it) must not let an index entry name a schema, a version or a manifest.
    fn in_table_metadata(&self, loc: &Location) -> bool {
        let Some(rel) = loc.relative_to(&self.root) else {
            return false;
        };
        let first = rel.split('/').next().unwrap_or(rel);
        METADATA_DIRS.contains(&first) || !rel.contains('/')
    }

    /// Where orphan removal finds leftovers it cannot name.
    fn other_leftover(&self, loc: &Location) -> bool {
        if self.in_data_dir(loc)
            || ["manifest", "index", "statistics"]
                .iter()
                .any(|d| self.directly_in(loc, &self.root.join(d)))
        {
            return true;
        }
        // A temp file in snapshot/ or changelog/ of any branch.
        let Some(dir) = loc.parent() else {
            return false;
        };
        let Some(branch_root) = dir.parent() else {
            return false;
        };
        let branch_ok = branch_root == self.root
            || (branch_root.parent().as_ref() == Some(&self.root.join("branch"))
                && branch_root.name().starts_with("branch-"));
        let name = loc.name();
        let version = match dir.name() {
            "snapshot" => version_id(name, "snapshot-"),
            "changelog" => version_id(name, "changelog-"),
            _ => return false,
        };
        branch_ok && !version && name != "EARLIEST" && name != "LATEST"
    }
}

/// Longest file name (one path component) a local filesystem takes (`NAME_MAX`).
pub const MAX_LOCAL_NAME: usize = 255;

/// Longest local path a system call takes (`PATH_MAX` is 4,096 with the terminating NUL).
pub const MAX_LOCAL_PATH: usize = 4095;

/// Longest object key S3, GCS and Azure Blob Storage take.
pub const MAX_OBJECT_KEY: usize = 1024;

/// `Ok(())` if a file can exist at `loc` on its store: on a local disk every path component
/// is at most [`MAX_LOCAL_NAME`] bytes and the path at most [`MAX_LOCAL_PATH`]; on S3, GCS and
/// Azure the key is at most [`MAX_OBJECT_KEY`] bytes (`memory://` has no bound). NUL, empty,
/// `.` and `..` segments cannot be in a [`Location`] at all, and a file name from metadata
/// with a `/` is refused where it is joined (`table::paths::child`).
///
/// Otherwise [`Error::PathRefused`]: metadata that names a file which cannot exist is invalid,
/// and a plan holding one is refused before its first deletion (a deletion of it could only
/// fail, and every rerun the same way, after the files before it were gone).
pub fn check_possible(loc: &Location) -> Result<()> {
    let longest = loc.path().split('/').map(str::len).max().unwrap_or(0);
    check_lengths(loc, loc.path().len(), longest)
}

/// [`check_possible`] of a file named `name_len` bytes directly in `dir`, whose location's
/// text is `text_len` bytes, without building it (the directory's own components are checked
/// with the first file of the directory).
pub(crate) fn check_possible_in(dir: &Location, name_len: usize, text_len: usize) -> Result<()> {
    let path_len = text_len.saturating_sub(dir.store_base().len());
    check_lengths(dir, path_len, name_len).map_err(|e| match e {
        Error::PathRefused { reason, .. } => Error::PathRefused {
            path: format!("{}/<a name of {name_len} bytes>", shortened(dir.as_str())),
            reason,
        },
        other => other,
    })
}

/// The length rules of [`check_possible`] for a location on `at`'s store whose path is
/// `path_len` bytes with its longest component `longest` bytes.
fn check_lengths(at: &Location, path_len: usize, longest: usize) -> Result<()> {
    let why = match at.scheme() {
        "file" if longest > MAX_LOCAL_NAME => Some(format!(
            "a path component of {longest} bytes is longer than a local filesystem allows \
             ({MAX_LOCAL_NAME})"
        )),
        "file" if path_len > MAX_LOCAL_PATH => Some(format!(
            "a path of {path_len} bytes is longer than a local filesystem allows \
             ({MAX_LOCAL_PATH})"
        )),
        "file" | "memory" => None,
        // The key is the path without its leading `/`.
        _ if path_len.saturating_sub(1) > MAX_OBJECT_KEY => Some(format!(
            "an object key of {} bytes is longer than the store allows ({MAX_OBJECT_KEY})",
            path_len.saturating_sub(1)
        )),
        _ => None,
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Error::PathRefused {
            path: shortened(at.as_str()),
            reason: format!(
                "{why}: no such file can exist, so the metadata naming it is invalid; the whole \
                 plan is refused and nothing is deleted"
            ),
        }),
    }
}

/// `s`, cut to its first 200 bytes (at a character boundary) with its length when longer:
/// an error names a path of megabytes without repeating it.
fn shortened(s: &str) -> String {
    const KEEP: usize = 200;
    if s.len() <= KEEP {
        return s.to_string();
    }
    let mut end = KEEP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// The directories of a table root (and of a branch root) that hold metadata, never data or
/// index files.
const METADATA_DIRS: [&str; 8] = [
    "schema",
    "snapshot",
    "changelog",
    "tag",
    "consumer",
    "branch",
    "manifest",
    "statistics",
];

/// A `k=v` partition directory name.
fn is_partition_dir(seg: &str) -> bool {
    seg.split_once('=').is_some_and(|(k, _)| !k.is_empty())
}

/// `<prefix><id>` with a non-negative decimal id.
fn version_id(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|id| id.parse::<i64>().ok())
        .is_some_and(|id| id >= 0)
}

fn class_name(class: FileClass) -> &'static str {
    match class {
        FileClass::Data => "a data file",
        FileClass::ChangelogData => "a changelog data file",
        FileClass::Index => "an index file",
        FileClass::Manifest => "a manifest",
        FileClass::ManifestList => "a manifest list",
        FileClass::IndexManifest => "an index manifest",
        FileClass::Statistics => "a statistics file",
        FileClass::SnapshotMeta => "a snapshot file",
        FileClass::ChangelogMeta => "a changelog file",
        FileClass::TagMeta => "a tag file",
        FileClass::ConsumerMeta => "a consumer file",
        FileClass::Other => "a leftover file",
    }
}

fn rule(class: FileClass) -> &'static str {
    match class {
        FileClass::Data | FileClass::ChangelogData => {
            "such files are only deleted from a bucket directory (<data root>/<k=v>.../bucket-N/) \
             of the table's data root or a configured external data root"
        }
        FileClass::Index => {
            "index files are only deleted from a bucket directory, the table's index/ directory \
             or the global-index external root"
        }
        FileClass::Manifest => "manifests are only deleted as manifest/manifest-<...>",
        FileClass::ManifestList => {
            "manifest lists are only deleted as manifest/manifest-list-<...>"
        }
        FileClass::IndexManifest => {
            "index manifests are only deleted as manifest/index-manifest-<...>"
        }
        FileClass::Statistics => "statistics are only deleted from statistics/",
        FileClass::SnapshotMeta => {
            "snapshot files are only deleted as snapshot/snapshot-<n> of the branch concerned"
        }
        FileClass::ChangelogMeta => {
            "changelog files are only deleted as changelog/changelog-<n> of the branch concerned"
        }
        FileClass::TagMeta => {
            "tag files are only deleted as tag/tag-<name> or tag/tag-success-file/<file> of \
             the branch concerned"
        }
        FileClass::ConsumerMeta => {
            "consumer files are only deleted as consumer/consumer-<id> of the branch concerned"
        }
        FileClass::Other => {
            "leftovers are only deleted from manifest/, index/, statistics/, a data directory, \
             or as temp files of snapshot/ and changelog/"
        }
    }
}

#[cfg(test)]
impl KindRules {
    /// The rules of an unpartitioned table at `root` on its main branch, without external
    /// roots (for unit tests that have no table to open).
    pub(crate) fn unpartitioned(root: Location) -> KindRules {
        KindRules {
            branch_root: root.clone(),
            data_roots: vec![root.clone()],
            index_roots: Vec::new(),
            root,
            partition_levels: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(levels: usize) -> KindRules {
        let root = Location::parse("/w/t").unwrap();
        KindRules {
            branch_root: root.clone(),
            data_roots: vec![root.clone(), Location::parse("/ext").unwrap()],
            index_roots: vec![Location::parse("/gidx").unwrap()],
            root,
            partition_levels: levels,
        }
    }

    fn ok(r: &KindRules, c: FileClass, p: &str) -> bool {
        r.check(c, &Location::parse(p).unwrap()).is_ok()
    }

    #[test]
    fn data_files_only_in_bucket_directories() {
        let r = rules(2);
        assert!(ok(&r, FileClass::Data, "/w/t/a=1/b=2/bucket-0/data-1.orc"));
        assert!(ok(
            &r,
            FileClass::Data,
            "/w/t/a=1/b=2/bucket-postpone/data-1.orc"
        ));
        assert!(ok(
            &r,
            FileClass::Data,
            "/ext/a=1/b=%2F/bucket-3/data-1.orc"
        ));
        assert!(ok(
            &r,
            FileClass::ChangelogData,
            "/w/t/a=1/b=2/bucket-0/changelog-1"
        ));
        assert!(ok(&r, FileClass::Index, "/w/t/a=1/b=2/bucket-0/index-1"));
        assert!(ok(&r, FileClass::Index, "/w/t/index/index-1"));
        assert!(ok(&r, FileClass::Index, "/gidx/x/y"));
        for bad in [
            "/w/t/schema/schema-0",
            "/w/t/snapshot/snapshot-3",
            "/w/t/snapshot/LATEST",
            "/w/t/tag/tag-t1",
            "/w/t/consumer/consumer-c",
            "/w/t/manifest/manifest-list-a-0",
            "/w/t/manifest/manifest-a-0",
            "/w/t/a=1/bucket-0/data-1.orc",
            "/w/t/a=1/b=2/c=3/bucket-0/data-1.orc",
            "/w/t/a=1/b=2/x/data-1.orc",
            "/w/t/data-1.orc",
            "/w/t/branch/branch-b/snapshot/snapshot-1",
            "/other/a=1/b=2/bucket-0/data-1.orc",
        ] {
            assert!(!ok(&r, FileClass::Data, bad), "{bad}");
            assert!(!ok(&r, FileClass::Index, bad), "{bad}");
        }
        // Unpartitioned: only bucket directories directly under the data root.
        let r0 = rules(0);
        assert!(ok(&r0, FileClass::Data, "/w/t/bucket-0/data-1.orc"));
        assert!(!ok(&r0, FileClass::Data, "/w/t/data-1.orc"));
        assert!(!ok(&r0, FileClass::Data, "/w/t/a=1/bucket-0/data-1.orc"));
        // A last-level partition directory (orphan removal's buckets-less partition).
        assert!(ok(&r, FileClass::Data, "/w/t/a=1/b=2/data-1.orc"));
    }

    #[test]
    fn an_index_root_covering_the_table_root_never_reaches_its_metadata() {
        let mut r = rules(1);
        r.index_roots = vec![Location::parse("/w").unwrap()];
        assert!(ok(&r, FileClass::Index, "/w/t/a=1/bucket-0/index-1"));
        assert!(ok(&r, FileClass::Index, "/w/t/global-index/x/y"));
        assert!(ok(&r, FileClass::Index, "/w/other/x"));
        for bad in [
            "/w/t/schema/schema-0",
            "/w/t/snapshot/snapshot-3",
            "/w/t/snapshot/LATEST",
            "/w/t/changelog/changelog-1",
            "/w/t/tag/tag-t1",
            "/w/t/consumer/consumer-c",
            "/w/t/branch/branch-b/schema/schema-0",
            "/w/t/manifest/manifest-a-0",
            "/w/t/statistics/stat-1",
            "/w/t/OPTIONS",
        ] {
            assert!(!ok(&r, FileClass::Index, bad), "{bad}");
        }
    }

    #[test]
    fn names_that_cannot_exist_are_refused() {
        let possible = |s: &str| check_possible(&Location::parse(s).unwrap()).is_ok();
        let name = |n: usize| "n".repeat(n);
        assert!(possible(&format!("/t/b/{}", name(255))));
        assert!(!possible(&format!("/t/b/{}", name(256))));
        assert!(!possible(&format!("/t/{}/x", name(256))));
        assert!(!possible(&format!("/t/b/{}", name(16 << 20))));
        // A path of 4,095 bytes, then 4,096 (components of 200 bytes).
        let deep = |len: usize| {
            let mut p = String::new();
            while p.len() + 201 <= len {
                p.push('/');
                p.push_str(&name(200));
            }
            p.push('/');
            p.push_str(&name(len - p.len()));
            p
        };
        assert_eq!(deep(4095).len(), 4095);
        assert!(possible(&deep(4095)));
        assert!(!possible(&deep(4096)));
        // Object stores: the key's length counts, not its components'.
        assert!(possible(&format!("s3://b/t/{}", name(1020))));
        assert!(possible(&format!("s3://b/t/{}", name(1022))));
        assert!(!possible(&format!("s3://b/t/{}", name(1023))));
        assert!(!possible(&format!("gs://b/{}", name(1025))));
        assert!(possible(&format!("memory:///t/{}", name(5000))));
        // The error names the path shortened.
        let e = check_possible(&Location::parse(&format!("/t/{}", name(70_000))).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.len() < 1_000 && e.contains("70000 bytes"), "{e}");
        // Without building the location.
        let dir = Location::parse("/t/b").unwrap();
        let text = |n: usize| "file:///t/b/".len() + n;
        assert!(check_possible_in(&dir, 255, text(255)).is_ok());
        assert!(check_possible_in(&dir, 256, text(256)).is_err());
    }

    #[test]
    fn metadata_only_in_its_own_directory_with_its_own_name() {
        let r = rules(1);
        assert!(ok(&r, FileClass::Manifest, "/w/t/manifest/manifest-a-0"));
        assert!(!ok(
            &r,
            FileClass::Manifest,
            "/w/t/manifest/manifest-list-a-0"
        ));
        assert!(!ok(
            &r,
            FileClass::Manifest,
            "/w/t/manifest/index-manifest-a-0"
        ));
        assert!(!ok(&r, FileClass::Manifest, "/w/t/schema/manifest-a-0"));
        assert!(ok(
            &r,
            FileClass::ManifestList,
            "/w/t/manifest/manifest-list-a-0"
        ));
        assert!(!ok(
            &r,
            FileClass::ManifestList,
            "/w/t/manifest/manifest-a-0"
        ));
        assert!(ok(
            &r,
            FileClass::IndexManifest,
            "/w/t/manifest/index-manifest-a-0"
        ));
        assert!(ok(&r, FileClass::Statistics, "/w/t/statistics/stat-1"));
        assert!(!ok(&r, FileClass::Statistics, "/w/t/schema/schema-0"));
        assert!(ok(&r, FileClass::SnapshotMeta, "/w/t/snapshot/snapshot-7"));
        for bad in [
            "/w/t/snapshot/LATEST",
            "/w/t/snapshot/EARLIEST",
            "/w/t/snapshot/snapshot-x",
            "/w/t/snapshot/snapshot--1",
            "/w/t/branch/branch-b/snapshot/snapshot-7",
            "/w/t/changelog/changelog-7",
        ] {
            assert!(!ok(&r, FileClass::SnapshotMeta, bad), "{bad}");
        }
        assert!(ok(
            &r,
            FileClass::ChangelogMeta,
            "/w/t/changelog/changelog-7"
        ));
        assert!(ok(&r, FileClass::TagMeta, "/w/t/tag/tag-t1"));
        assert!(!ok(&r, FileClass::TagMeta, "/w/t/tag/tag-"));
        // Java's success file of a tag goes with the tag.
        assert!(ok(
            &r,
            FileClass::TagMeta,
            "/w/t/tag/tag-success-file/t1_SUCCESS"
        ));
        assert!(!ok(
            &r,
            FileClass::TagMeta,
            "/w/t/tag/tag-success-file/x/t1_SUCCESS"
        ));
        assert!(!ok(&r, FileClass::TagMeta, "/w/t/tag/other/t1_SUCCESS"));
        assert!(ok(&r, FileClass::ConsumerMeta, "/w/t/consumer/consumer-c1"));
        assert!(!ok(&r, FileClass::ConsumerMeta, "/w/t/tag/tag-t1"));
        // Leftovers.
        assert!(ok(
            &r,
            FileClass::Other,
            "/w/t/snapshot/.snapshot-3.abc.tmp"
        ));
        assert!(ok(
            &r,
            FileClass::Other,
            "/w/t/branch/branch-b/changelog/x.tmp"
        ));
        assert!(ok(&r, FileClass::Other, "/w/t/manifest/x.crc"));
        assert!(ok(&r, FileClass::Other, "/w/t/a=1/bucket-0/_SUCCESS"));
        for bad in [
            "/w/t/snapshot/LATEST",
            "/w/t/snapshot/snapshot-3",
            "/w/t/branch/branch-b/snapshot/EARLIEST",
            "/w/t/schema/schema-0",
            "/w/t/tag/tag-t1",
            "/w/t/consumer/consumer-c1",
            "/w/t/OPTIONS",
        ] {
            assert!(!ok(&r, FileClass::Other, bad), "{bad}");
        }
        let msg = r
            .check(
                FileClass::Data,
                &Location::parse("/w/t/schema/schema-0").unwrap(),
            )
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("as a data file") && msg.contains("bucket directory"),
            "{msg}"
        );
    }
}
