//! Which branch a caller means: the `branch` option (like Paimon Java's `branch` table option)
//! and/or a table location ending in `<table>$branch_<name>` (the form Java users give a
//! branch as a table, `db.t$branch_b1`).

use std::collections::HashMap;

use crate::error::{Error, Result};

/// Name of the main branch.
pub const MAIN_BRANCH: &str = "main";

/// The option key that selects a branch (`paimon_cleanup_context_new`, the CLI's `--branch`).
pub const BRANCH_OPTION: &str = "branch";

/// The separator of Paimon's branch suffix in a table name (`t$branch_b1`).
const BRANCH_SUFFIX: &str = "$branch_";

/// A table location and the branch to work on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRef {
    /// The table root, without any `$branch_<name>` suffix.
    pub uri: String,
    /// The branch (`main` unless one was named).
    pub branch: String,
}

/// Resolves the table root and the branch from a location that may end in
/// `$branch_<name>` and an explicitly named branch (`explicit`, e.g. the `branch` option or
/// `--branch`). Both may name the branch; they must then agree. An empty, path-like (`/`, `\`,
/// `.`, `..`) or control-character name is an [`Error::InvalidArgument`].
pub fn resolve_table_ref(uri: &str, explicit: Option<&str>) -> Result<TableRef> {
    let trimmed = uri.trim_end_matches('/');
    let last_start = trimmed.rfind('/').map(|i| i + 1).unwrap_or(0);
    let last = &trimmed[last_start..];
    let (root, from_uri) = match last.find(BRANCH_SUFFIX) {
        Some(i) if i > 0 => {
            let name = &last[i + BRANCH_SUFFIX.len()..];
            (
                format!("{}{}", &trimmed[..last_start], &last[..i]),
                Some(name),
            )
        }
        _ => (uri.to_string(), None),
    };
    let branch = match (from_uri, explicit) {
        (Some(a), Some(b)) if a != b => {
            return Err(Error::InvalidArgument(format!(
                "the table location names branch `{a}` but the branch option names `{b}`"
            )))
        }
        (Some(a), _) => a,
        (None, Some(b)) => b,
        (None, None) => MAIN_BRANCH,
    };
    validate_branch_name(branch)?;
    Ok(TableRef {
        uri: root,
        branch: branch.to_string(),
    })
}

/// [`resolve_table_ref`] with the branch taken from `options[BRANCH_OPTION]`.
pub fn resolve_with_options(uri: &str, options: &HashMap<String, String>) -> Result<TableRef> {
    resolve_table_ref(uri, options.get(BRANCH_OPTION).map(String::as_str))
}

/// A branch name must be non-empty and name one directory `branch/branch-<name>`.
pub fn validate_branch_name(name: &str) -> Result<()> {
    let bad = name.trim().is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_control);
    if bad {
        return Err(Error::InvalidArgument(format!(
            "invalid branch name `{}`: it must be non-empty and contain no `/`, `\\`, control \
             characters, and not be `.` or `..`",
            name.escape_debug()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(uri: &str, b: Option<&str>) -> Result<TableRef> {
        resolve_table_ref(uri, b)
    }

    #[test]
    fn main_by_default_and_the_option_names_a_branch() {
        assert_eq!(r("/w/db.db/t", None).unwrap().branch, "main");
        let t = r("s3://b/w/db.db/t", Some("b1")).unwrap();
        assert_eq!(
            (t.uri.as_str(), t.branch.as_str()),
            ("s3://b/w/db.db/t", "b1")
        );
    }

    #[test]
    fn a_branch_suffix_in_the_location_is_split_off() {
        let t = r("/w/db.db/t$branch_b1", None).unwrap();
        assert_eq!((t.uri.as_str(), t.branch.as_str()), ("/w/db.db/t", "b1"));
        let t = r("s3://b/w/db.db/t$branch_b1/", Some("b1")).unwrap();
        assert_eq!(
            (t.uri.as_str(), t.branch.as_str()),
            ("s3://b/w/db.db/t", "b1")
        );
        // Only the last segment counts; a bare `$branch_x` is not a table name.
        assert_eq!(r("/w/$branch_x", None).unwrap().uri, "/w/$branch_x");
        assert_eq!(r("/w/a$branch_x/t", None).unwrap().branch, "main");
    }

    #[test]
    fn disagreeing_or_bad_names_are_invalid_arguments() {
        assert!(matches!(
            r("/w/t$branch_a", Some("b")),
            Err(Error::InvalidArgument(_))
        ));
        for bad in ["", " ", ".", "..", "a/b", "a\\b", "a\nb"] {
            assert!(
                matches!(r("/w/t", Some(bad)), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
        assert!(matches!(
            r("/w/t$branch_", None),
            Err(Error::InvalidArgument(_))
        ));
    }
}
