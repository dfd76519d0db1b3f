//! The units of orphan removal: self-contained descriptions of one bounded piece of work, as
//! the planner and the decision produce them and [`super::exec`] runs them.
//!
//! A unit names the table (its root URI and the options needed to reach and read it, without
//! credentials: see [`is_secret`]) and its work: directories to list, manifests to read, or
//! files to delete. It serializes to a versioned byte string ([`Unit::to_bytes`]).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::table::Table;

use super::codec::{from_json_bytes, to_json_bytes, Kind};

/// How a unit reaches its table: the table root and the options, minus credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Reach {
    /// The table root URI.
    pub uri: String,
    /// Storage options and table-option overrides, without credentials.
    pub options: BTreeMap<String, String>,
}

/// True for option keys that hold credentials, which units never carry (the executing host
/// passes them): secrets, passwords, tokens, access keys, account keys, SAS and private keys.
pub(crate) fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "password",
        "token",
        "access-key",
        "access.key",
        "accesskey",
        "account.key",
        "account-key",
        "credential",
        "sas",
        "private",
    ]
    .iter()
    .any(|s| k.contains(s))
}

impl Reach {
    /// The reach of `main`'s table.
    pub fn of(main: &Table) -> Self {
        Reach {
            uri: main.root().as_str().to_string(),
            options: main
                .overrides()
                .iter()
                .filter(|(k, _)| !is_secret(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    /// The options to open the table with: the carried ones, overridden by `host`'s.
    pub fn options_with(&self, host: &HashMap<String, String>) -> HashMap<String, String> {
        let mut all: HashMap<String, String> = self.options.clone().into_iter().collect();
        all.extend(host.iter().map(|(k, v)| (k.clone(), v.clone())));
        all
    }
}

/// What a directory of a list unit holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ListKind {
    /// `manifest/`.
    Manifest,
    /// `index/`.
    Index,
    /// `statistics/`.
    Statistics,
    /// `snapshot/` of a branch (only temp files count).
    Snapshots,
    /// `changelog/` of a branch (only temp files count).
    Changelogs,
    /// A last-level partition directory (or a data root of an unpartitioned table): its bucket
    /// directories are listed, or the directory itself when it has none (never a data root).
    Partition {
        /// The data root it lies under.
        root: String,
    },
}

/// One directory to list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ListDir {
    /// The directory (for `Snapshots` / `Changelogs`: the branch root).
    pub dir: String,
    /// What it holds.
    pub kind: ListKind,
}

/// A branch a read unit resolves references for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BranchRef {
    /// Its name.
    pub name: String,
    /// It has a schema of its own (else main's schema and options resolve its references).
    pub own_schema: bool,
}

/// One manifest or index manifest to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReadItem {
    /// Its name in `manifest/`.
    pub name: String,
    /// An index manifest.
    pub index: bool,
    /// Indexes into the unit's branches whose versions use it.
    pub branches: Vec<u32>,
}

/// One file to delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DeleteItem {
    /// Deletion phase (report order).
    pub phase: u8,
    /// Its location.
    pub location: String,
    /// Its class (index into `FileClass::ALL`).
    pub class: u8,
    /// Its size.
    pub bytes: u64,
}

/// The work of a unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "work", rename_all = "snake_case")]
pub(crate) enum Work {
    /// List directories; their files older than `cutoff_ms` are candidates.
    List {
        /// The cut-off.
        cutoff_ms: i64,
        /// The directories.
        dirs: Vec<ListDir>,
    },
    /// Read manifests and index manifests; return the keys of every file they reference.
    Read {
        /// Branches whose path factories resolve the references.
        branches: Vec<BranchRef>,
        /// The files to read.
        items: Vec<ReadItem>,
    },
    /// Delete files (each checked again first).
    Delete {
        /// Roots besides the table root under which deletions are allowed (owned external
        /// data roots).
        delete_roots: Vec<String>,
        /// The files, in deletion order.
        files: Vec<DeleteItem>,
    },
}

/// A unit of work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Unit {
    /// The plan (or decision) it belongs to.
    pub plan: u64,
    /// Its id within the plan.
    pub id: u32,
    /// The table.
    pub reach: Reach,
    /// What to do.
    pub work: Work,
}

impl Unit {
    /// Serializes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        to_json_bytes(Kind::Unit, self)
    }

    /// Deserializes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        from_json_bytes(Kind::Unit, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognized() {
        for k in [
            "s3.access-key",
            "s3.secret-key",
            "fs.s3a.session.token",
            "fs.oss.accessKeyId",
            "fs.azure.account.key.acct.dfs.core.windows.net",
            "gcs.service-account-credentials",
            "azure.sas-token",
        ] {
            assert!(is_secret(k), "{k}");
        }
        for k in [
            "s3.endpoint",
            "s3.region",
            "branch",
            "bucket",
            "s3.path.style.access",
        ] {
            assert!(!is_secret(k), "{k}");
        }
    }

    #[test]
    fn units_round_trip() {
        let u = Unit {
            plan: 7,
            id: 3,
            reach: Reach {
                uri: "file:///t".into(),
                options: BTreeMap::from([("s3.region".to_string(), "x".to_string())]),
            },
            work: Work::Read {
                branches: vec![BranchRef {
                    name: "main".into(),
                    own_schema: true,
                }],
                items: vec![ReadItem {
                    name: "manifest-1".into(),
                    index: false,
                    branches: vec![0],
                }],
            },
        };
        let b = u.to_bytes().unwrap();
        assert_eq!(Unit::from_bytes(&b).unwrap(), u);
        assert!(Unit::from_bytes(&b[1..]).is_err());
    }
}
