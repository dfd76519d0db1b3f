//! The tables of a local filesystem-catalog warehouse: `ROOT/<db>.db/<table>/` directories
//! holding a `schema/` directory, chosen by a `db.table` pattern as Paimon Java's procedures
//! take them (`db.*`, `*.*`, `db.t`; `*` matches any run of characters).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A table of a warehouse: its `db.table` name and its directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarehouseTable {
    /// `db.table`.
    pub name: String,
    /// The table's directory.
    pub path: PathBuf,
}

/// True when `text` matches `pattern`, where `*` matches any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(p) => p,
        None => return text.is_empty(),
    };
    let Some(mut tail) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return tail.is_empty();
    };
    for part in middle {
        match tail.find(part) {
            Some(i) => tail = &tail[i + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

/// The tables of the local warehouse `root` (a path or a `file://` URI) that `pattern`
/// (`db.table`, each part may be or hold `*`) names, sorted by name. A pattern without a `.` is
/// [`Error::InvalidArgument`]; an object-store root is [`Error::Unsupported`] (a
/// filesystem catalog on an object store has no directories to list); a root that cannot be
/// listed is [`Error::Storage`]; no matching table is [`Error::NotFound`].
///
/// A database or table directory whose name is not UTF-8 cannot be named by `db.table`, nor
/// run: when the pattern would take it with its undecodable bytes covered by a `*` (`*.*`,
/// `db.t*`), it is [`Error::Unsupported`] naming the directory (with those bytes escaped), so a
/// sweep never passes over a table unseen; a pattern that names other directories only (no
/// `*` where such a name differs from it) is not concerned.
pub fn find_tables(root: &str, pattern: &str) -> Result<Vec<WarehouseTable>> {
    let (db_pat, table_pat) = pattern.split_once('.').ok_or_else(|| {
        Error::InvalidArgument(format!(
            "table pattern '{pattern}': expected DB.TABLE, where either may be or hold * (db.*, \
             *.*)"
        ))
    })?;
    if root.contains("://") && !root.starts_with("file://") {
        return Err(Error::Unsupported(format!(
            "warehouse {root}: only local warehouses are listed; run each table of an object \
             store by its URI"
        )));
    }
    let root_path = Path::new(root.strip_prefix("file://").unwrap_or(root));
    let read = |dir: &Path| {
        std::fs::read_dir(dir).map_err(|e| Error::Storage {
            path: dir.display().to_string(),
            message: format!("cannot list the warehouse: {e}"),
        })
    };
    let mut found = Vec::new();
    for db in read(root_path)? {
        let db = db.map_err(|e| Error::Storage {
            path: root.to_string(),
            message: e.to_string(),
        })?;
        let file_name = db.file_name();
        let Some(db_name) = file_name.as_bytes().strip_suffix(b".db") else {
            continue;
        };
        let Some(db_name) = utf8_name(&db.path(), OsStr::from_bytes(db_name), db_pat, || {
            db.path().is_dir()
        })?
        else {
            continue;
        };
        if !db.path().is_dir() || !glob(db_pat, &db_name) {
            continue;
        }
        for t in read(&db.path())? {
            let t = t.map_err(|e| Error::Storage {
                path: db.path().display().to_string(),
                message: e.to_string(),
            })?;
            let Some(t_name) = utf8_name(&t.path(), &t.file_name(), table_pat, || {
                t.path().join("schema").is_dir()
            })?
            else {
                continue;
            };
            if glob(table_pat, &t_name) && t.path().join("schema").is_dir() {
                found.push(WarehouseTable {
                    name: format!("{db_name}.{t_name}"),
                    path: t.path(),
                });
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    if found.is_empty() {
        return Err(Error::NotFound {
            path: format!("{root} (no table matches {pattern})"),
        });
    }
    Ok(found)
}

/// The name of the directory entry at `path` as text. A name that is not UTF-8 is `None` when
/// `pattern` would not take it even with its undecodable bytes matched by a `*` or when it is
/// not what is looked for (`wanted`: a database directory, a table), and
/// [`Error::Unsupported`] otherwise.
fn utf8_name(
    path: &Path,
    name: &OsStr,
    pattern: &str,
    wanted: impl FnOnce() -> bool,
) -> Result<Option<String>> {
    if let Some(text) = name.to_str() {
        return Ok(Some(text.to_string()));
    }
    // The pattern is text: only a `*` can match bytes that are not. Decoded lossily, each run
    // of them is one U+FFFD, which a `*` matches and no literal part of a pattern holds.
    let lossy = name.to_string_lossy();
    if !pattern.contains('*') || !glob(pattern, &lossy) || !wanted() {
        return Ok(None);
    }
    Err(Error::Unsupported(format!(
        "{:?}: the name {:?} is not UTF-8, so no db.table name can name it and it is not \
         listed; rename it (or run its table by its path)",
        path.as_os_str(),
        name
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_runs() {
        assert!(glob("*", "anything"));
        assert!(glob("*", ""));
        assert!(glob("db", "db"));
        assert!(!glob("db", "db2"));
        assert!(glob("t_*", "t_1"));
        assert!(glob("*_1", "t_1"));
        assert!(glob("a*c*e", "abcde"));
        assert!(!glob("a*c*e", "abcd"));
        assert!(!glob("ab*ba", "aba"));
    }
}
