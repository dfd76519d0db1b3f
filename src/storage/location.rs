//! [`Location`]: one normalized, absolute, byte-exact address of a file or directory.

use std::fmt;

use crate::error::{Error, Result};

/// A normalized absolute location such as `file:///abs/path`, `memory:///key`,
/// `s3://bucket/key`, `gs://bucket/key` or `az://container/key`.
///
/// Invariants (every constructor keeps them, so comparisons can be made on the string):
/// * the form is `<scheme>://<authority><path>` with a lower-case scheme and an authority that
///   contains no `/` (empty for `file` and usually for `memory`);
/// * the path is either empty (the root of a bucket), `/` (the root of an authority-less
///   filesystem) or `/seg1/seg2/...` with no empty, `.` or `..` segment and no trailing `/`;
/// * names are byte-exact: nothing is percent-decoded or percent-encoded, so a `%` in a file name
///   stays a `%`.
///
/// Scheme aliases are folded so that the same file always has the same location: `FILE:`,
/// `file:` and plain absolute paths become `file://`, `s3a`/`s3n` become `s3`, `gcs` becomes `gs`,
/// `azure` becomes `az`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location(String);

/// True if `s` is a syntactically valid URI scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Folds scheme aliases onto one canonical spelling (input already lower-case).
fn canonical_scheme(scheme: &str) -> &str {
    match scheme {
        "s3a" | "s3n" => "s3",
        "gcs" => "gs",
        "azure" => "az",
        other => other,
    }
}

impl Location {
    /// Parses a location written by a user or found in Paimon metadata.
    ///
    /// Accepts plain absolute paths (`/tmp/t`), `file:/tmp/t`, `file:///tmp/t`,
    /// `file://localhost/tmp/t`, Paimon's upper-case `FILE:/tmp/t`, and `<scheme>://<authority>/<key>`
    /// for object stores (`s3://`, `s3a://`, `oss://`, `gs://`, `az://`, `abfss://`, `memory:///`,
    /// ...). Repeated `/` are collapsed and a trailing `/` is stripped.
    ///
    /// Rejects ([`Error::InvalidArgument`]) empty and relative paths, any path with a `.` or `..`
    /// segment, NUL characters, a `file` location with a host other than `localhost`, and an
    /// object-store location without an authority (bucket). Whether the scheme can actually be
    /// opened is decided by [`crate::storage::Storage`], not here.
    pub fn parse(s: &str) -> Result<Location> {
        let invalid = |why: &str| Error::InvalidArgument(format!("location '{s}': {why}"));
        if s.is_empty() {
            return Err(invalid("empty"));
        }
        if s.contains('\0') {
            return Err(invalid("contains a NUL character"));
        }
        let (scheme, authority, path) = if s.starts_with('/') {
            ("file".to_string(), "", s)
        } else {
            let (scheme, rest) = match s.split_once(':') {
                Some((scheme, rest)) if is_scheme(scheme) => (scheme, rest),
                _ => return Err(invalid("not an absolute path or URI")),
            };
            let scheme = canonical_scheme(&scheme.to_ascii_lowercase()).to_string();
            if let Some(after) = rest.strip_prefix("//") {
                match after.find('/') {
                    Some(i) => (scheme, &after[..i], &after[i..]),
                    None => (scheme, after, ""),
                }
            } else if rest.starts_with('/') {
                (scheme, "", rest)
            } else {
                return Err(invalid("relative path after the scheme"));
            }
        };

        let authority = match scheme.as_str() {
            "file" => {
                if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) {
                    return Err(invalid("a file location cannot name a remote host"));
                }
                if path.is_empty() {
                    return Err(invalid("a file location needs an absolute path"));
                }
                ""
            }
            "memory" => authority,
            _ => {
                if authority.is_empty() {
                    return Err(invalid("missing bucket / authority"));
                }
                authority
            }
        };

        let mut out = String::with_capacity(s.len() + 8);
        out.push_str(&scheme);
        out.push_str("://");
        out.push_str(authority);
        let mut any = false;
        for seg in path.split('/') {
            match seg {
                "" => continue,
                "." | ".." => return Err(invalid("'.' and '..' segments are not allowed")),
                seg => {
                    out.push('/');
                    out.push_str(seg);
                    any = true;
                }
            }
        }
        if !any && authority.is_empty() {
            out.push('/');
        }
        Ok(Location(out))
    }

    /// Builds a location from an absolute local filesystem path (which must be valid UTF-8).
    pub fn from_local_path(path: &std::path::Path) -> Result<Location> {
        let s = path.to_str().ok_or_else(|| {
            Error::InvalidArgument(format!("path {} is not valid UTF-8", path.display()))
        })?;
        if !path.is_absolute() {
            return Err(Error::InvalidArgument(format!(
                "path '{s}' is not absolute"
            )));
        }
        Location::parse(s)
    }

    /// The normalized string, e.g. `file:///tmp/t/snapshot/snapshot-1`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Index of the first byte after `scheme://`.
    fn authority_start(&self) -> usize {
        // Invariant: the string contains "://" right after the scheme.
        // The scheme has no ':', so the first ':' starts the separator.
        match self.0.bytes().position(|b| b == b':') {
            Some(i) if self.0[i..].starts_with("://") => i + 3,
            _ => self.0.find("://").map_or(0, |i| i + 3),
        }
    }

    /// Index of the first byte of the path (the `/` after the authority, or the end).
    fn path_start(&self) -> usize {
        let a = self.authority_start();
        self.0[a..].find('/').map_or(self.0.len(), |i| a + i)
    }

    /// The scheme, lower-case and alias-folded (`file`, `memory`, `s3`, `gs`, `az`, ...).
    pub fn scheme(&self) -> &str {
        let a = self.authority_start();
        &self.0[..a.saturating_sub(3)]
    }

    /// The authority: the bucket / container (empty for `file`).
    pub fn authority(&self) -> &str {
        &self.0[self.authority_start()..self.path_start()]
    }

    /// The path part: empty, `/`, or `/seg/...`.
    pub fn path(&self) -> &str {
        &self.0[self.path_start()..]
    }

    /// `<scheme>://<authority>`: identifies the filesystem or bucket this location lives on.
    pub fn store_base(&self) -> &str {
        &self.0[..self.path_start()]
    }

    /// The object key inside the bucket (the path without its leading `/`).
    pub fn key(&self) -> &str {
        let p = self.path();
        p.strip_prefix('/').unwrap_or(p)
    }

    /// True for `file://` locations.
    pub fn is_local(&self) -> bool {
        self.scheme() == "file"
    }

    /// The local filesystem path of a `file://` location, `None` for other schemes.
    pub fn local_path(&self) -> Option<&std::path::Path> {
        if self.is_local() {
            Some(std::path::Path::new(self.path()))
        } else {
            None
        }
    }

    /// True if this is the root of its filesystem or bucket (no path segment at all).
    pub fn is_store_root(&self) -> bool {
        self.key().is_empty()
    }

    /// Appends one already-validated segment (no `/`, not empty, not `.` / `..`).
    /// A copy with room for `extra` more bytes and no more: a plain `clone` followed by pushes
    /// doubles the buffer, and locations held by the million (plans, protection caches) would
    /// carry that slack.
    fn with_room(&self, extra: usize) -> Location {
        let mut s = String::with_capacity(self.0.len().saturating_add(extra));
        s.push_str(&self.0);
        Location(s)
    }

    fn push_segment(&mut self, seg: &str) {
        if !self.0.ends_with('/') {
            self.0.push('/');
        }
        self.0.push_str(seg);
    }

    /// Removes the last segment, if any; never goes above the store root.
    fn pop_segment(&mut self) {
        let start = self.path_start();
        let path = &self.0[start..];
        if let Some(i) = path.rfind('/') {
            if path.len() > 1 {
                let authority_empty = self.authority_start() == start;
                let keep = if i == 0 && authority_empty { 1 } else { i };
                self.0.truncate(start + keep);
            }
        }
    }

    /// A location from its own text ([`Location::as_str`]), taken as it is: only for text
    /// this crate copied from a `Location` (checked against [`Location::parse`] in debug
    /// builds).
    pub(crate) fn from_normalized(s: &str) -> Location {
        debug_assert_eq!(
            Location::parse(s).ok().as_ref().map(Location::as_str),
            Some(s)
        );
        Location(s.to_owned())
    }

    /// The child `name` (one segment, e.g. from a directory listing). A `name` that is not a
    /// single plain segment is handled like [`Location::join`].
    pub(crate) fn child(&self, name: &str) -> Location {
        if name.is_empty() || name == "." || name == ".." || name.contains('/') {
            return self.join(name);
        }
        let mut out = self.with_room(name.len().saturating_add(1));
        out.push_segment(name);
        out
    }

    /// The root of the store (filesystem or bucket) this location lives on.
    pub fn store_root(&self) -> Location {
        let mut s = self.store_base().to_string();
        if self.authority().is_empty() {
            s.push('/');
        }
        Location(s)
    }

    /// A location below this one. `rel` may contain `/` (e.g. `snapshot/snapshot-1` or
    /// `dt=a%2Fb/bucket-0/data-1.orc`); names are kept byte-exact (`%` is never decoded).
    ///
    /// `rel` is normalized lexically so that the result keeps the [`Location`] invariants:
    /// empty and `.` segments are dropped and `..` removes the previous segment (never going
    /// above the store root). A `..` therefore can lead *out* of `self`; such a location is then
    /// refused by the delete guard ([`crate::storage::Storage::check_deletable`]), which compares
    /// normalized locations. Use [`Location::try_join`] to reject such input instead.
    pub fn join(&self, rel: &str) -> Location {
        let mut out = self.with_room(rel.len().saturating_add(1));
        for seg in rel.split('/') {
            match seg {
                "" | "." => {}
                ".." => out.pop_segment(),
                seg => out.push_segment(seg),
            }
        }
        out
    }

    /// Like [`Location::join`], but rejects ([`Error::InvalidArgument`]) a `rel` that is empty or
    /// has an empty, `.` or `..` segment, a leading `/`, or a NUL character.
    pub fn try_join(&self, rel: &str) -> Result<Location> {
        if rel.is_empty() || rel.contains('\0') {
            return Err(Error::InvalidArgument(format!(
                "invalid relative path '{rel}' below {self}"
            )));
        }
        let mut out = self.with_room(rel.len().saturating_add(1));
        for seg in rel.split('/') {
            match seg {
                "" | "." | ".." => {
                    return Err(Error::InvalidArgument(format!(
                        "invalid relative path '{rel}' below {self}: empty, '.' or '..' segment"
                    )))
                }
                seg => out.push_segment(seg),
            }
        }
        Ok(out)
    }

    /// The last component (file or directory name); empty for a store root.
    pub fn name(&self) -> &str {
        let key = self.key();
        key.rsplit('/').next().unwrap_or(key)
    }

    /// The parent directory; `None` for a store root.
    pub fn parent(&self) -> Option<Location> {
        if self.is_store_root() {
            return None;
        }
        let mut out = self.clone();
        out.pop_segment();
        Some(out)
    }

    /// True if this location is *strictly* below `root`, compared component-wise on the same
    /// scheme and authority: `/t/a` is under `/t`, but neither `/t` nor `/t/ab` is under `/t/a`.
    pub fn is_under(&self, root: &Location) -> bool {
        matches!(self.relative_to(root), Some(rel) if !rel.is_empty())
    }

    /// The part of this location below `root` (`""` if equal to `root`), or `None` if this
    /// location is not `root` or below it.
    pub fn relative_to(&self, root: &Location) -> Option<&str> {
        let r = root.as_str();
        let rest = self.0.strip_prefix(r)?;
        if rest.is_empty() {
            return Some("");
        }
        if r.ends_with('/') {
            // Root of an authority-less store ("file:///"): `rest` is already a relative path,
            // unless the authority differs ("file:///" vs "file://x/..." cannot both be valid).
            return Some(rest);
        }
        rest.strip_prefix('/')
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Location {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Location {
    type Err = Error;

    fn from_str(s: &str) -> Result<Location> {
        Location::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    #[test]
    fn child_and_join_hold_no_slack() {
        let dir = loc("s3://bucket/warehouse/db.db/t/dt=2024-01-01/bucket-0");
        let name = "data-7b442051-a4a4-482a-8230-cbe3710efb55-48.parquet";
        for (made, text) in [
            (dir.child(name), format!("{dir}/{name}")),
            (dir.join(name), format!("{dir}/{name}")),
            (dir.try_join(name).unwrap(), format!("{dir}/{name}")),
            (
                dir.join("../bucket-1/x"),
                "s3://bucket/warehouse/db.db/t/dt=2024-01-01/bucket-1/x".to_string(),
            ),
        ] {
            assert_eq!(made.as_str(), text);
            // At most the room asked for (the name and a separator), never a doubled buffer.
            assert!(
                made.0.capacity() <= dir.0.len() + 64,
                "{}",
                made.0.capacity()
            );
        }
    }

    #[test]
    fn parse_local_forms() {
        for s in [
            "/tmp/t",
            "/tmp/t/",
            "file:/tmp/t",
            "file:///tmp/t",
            "FILE:/tmp/t",
            "File:///tmp//t//",
            "file://localhost/tmp/t",
        ] {
            assert_eq!(loc(s).as_str(), "file:///tmp/t", "{s}");
        }
        assert_eq!(loc("/").as_str(), "file:///");
        assert_eq!(loc("file:///").as_str(), "file:///");
        assert!(loc("/tmp/t").is_local());
        assert_eq!(
            loc("/tmp/t").local_path(),
            Some(std::path::Path::new("/tmp/t"))
        );
    }

    #[test]
    fn parse_object_store_forms() {
        assert_eq!(loc("s3://b/w/t").as_str(), "s3://b/w/t");
        assert_eq!(loc("s3a://b/w/t/").as_str(), "s3://b/w/t");
        assert_eq!(loc("S3N://b/w").as_str(), "s3://b/w");
        assert_eq!(loc("oss://b/w").as_str(), "oss://b/w");
        assert_eq!(loc("gcs://b/w").as_str(), "gs://b/w");
        assert_eq!(loc("s3://b").as_str(), "s3://b");
        assert_eq!(loc("s3://b/").as_str(), "s3://b");
        assert_eq!(loc("memory:///x").as_str(), "memory:///x");
        assert_eq!(loc("memory:///").as_str(), "memory:///");
        assert_eq!(
            loc("abfss://fs@acct.dfs.core.windows.net/t").as_str(),
            "abfss://fs@acct.dfs.core.windows.net/t"
        );
        let l = loc("s3://bucket/a/b");
        assert_eq!(l.scheme(), "s3");
        assert_eq!(l.authority(), "bucket");
        assert_eq!(l.key(), "a/b");
        assert_eq!(l.store_base(), "s3://bucket");
        let m = loc("memory:///a/b");
        assert_eq!(m.scheme(), "memory");
        assert_eq!(m.authority(), "");
        assert_eq!(m.key(), "a/b");
        assert_eq!(m.store_base(), "memory://");
    }

    #[test]
    fn parse_rejects() {
        for s in [
            "",
            "tmp/t",
            "./t",
            "../t",
            "/tmp/../etc",
            "/tmp/./t",
            "file:tmp/t",
            "file://host/tmp",
            "file://",
            "s3:///key",
            "s3://",
            "s3://b/a/../../x",
            "/tmp/a\0b",
            "1x://a/b",
        ] {
            assert!(
                matches!(Location::parse(s), Err(Error::InvalidArgument(_))),
                "{s:?} should be rejected"
            );
        }
    }

    #[test]
    fn names_are_byte_exact() {
        let l = loc("FILE:/tmp/external/dt=a%2Fb/bucket-0/data-x.parquet");
        assert_eq!(
            l.as_str(),
            "file:///tmp/external/dt=a%2Fb/bucket-0/data-x.parquet"
        );
        assert_eq!(l.name(), "data-x.parquet");
        assert_eq!(l.parent().unwrap().name(), "bucket-0");
        let j = loc("/t").join("dt=a%2Fb/bucket-0/data 1 ü.orc");
        assert_eq!(j.as_str(), "file:///t/dt=a%2Fb/bucket-0/data 1 ü.orc");
        assert_eq!(j.name(), "data 1 ü.orc");
        assert_eq!(
            loc("/t").join(".snapshot-7.x.tmp").name(),
            ".snapshot-7.x.tmp"
        );
        assert_eq!(
            loc("/t").join("__DEFAULT_PARTITION__").name(),
            "__DEFAULT_PARTITION__"
        );
    }

    #[test]
    fn join_normalizes() {
        let root = loc("/t");
        assert_eq!(
            root.join("snapshot/snapshot-1").as_str(),
            "file:///t/snapshot/snapshot-1"
        );
        assert_eq!(root.join("/a//b/./c/").as_str(), "file:///t/a/b/c");
        assert_eq!(root.join("").as_str(), "file:///t");
        assert_eq!(root.join("a/../b").as_str(), "file:///t/b");
        // Traversal leaves the root: the result is a normal location outside of it.
        let out = root.join("../etc/passwd");
        assert_eq!(out.as_str(), "file:///etc/passwd");
        assert!(!out.is_under(&root));
        assert_eq!(root.join("../../../../x").as_str(), "file:///x");
        assert_eq!(loc("/").join("a").as_str(), "file:///a");
        assert_eq!(loc("/").join("..").as_str(), "file:///");
        assert_eq!(loc("s3://b/t").join("../../..").as_str(), "s3://b");
        assert_eq!(loc("s3://b").join("k").as_str(), "s3://b/k");
        assert_eq!(loc("memory:///").join("k/l").as_str(), "memory:///k/l");
        // Every join result round-trips through parse.
        for rel in ["a", "../a", "a/../../b", "..", "x/./y"] {
            let j = root.join(rel);
            assert_eq!(Location::parse(j.as_str()).unwrap(), j, "{rel}");
        }
    }

    #[test]
    fn try_join_rejects() {
        let root = loc("/t");
        assert_eq!(root.try_join("a/b").unwrap().as_str(), "file:///t/a/b");
        for rel in ["", "..", "../x", "a/../b", "./a", "a//b", "/a", "a/", "a\0"] {
            assert!(root.try_join(rel).is_err(), "{rel:?}");
        }
    }

    #[test]
    fn parent_and_name() {
        assert_eq!(loc("/a").parent().unwrap().as_str(), "file:///");
        assert_eq!(loc("/").parent(), None);
        assert_eq!(loc("/").name(), "");
        assert_eq!(loc("s3://b/k").parent().unwrap().as_str(), "s3://b");
        assert_eq!(loc("s3://b").parent(), None);
        assert_eq!(loc("s3://b/a/k").parent().unwrap().as_str(), "s3://b/a");
        assert_eq!(loc("memory:///k").parent().unwrap().as_str(), "memory:///");
    }

    #[test]
    fn containment_is_component_wise() {
        let t = loc("/t/a");
        assert!(loc("/t/a/x").is_under(&t));
        assert!(loc("/t/a/x/y").is_under(&t));
        assert!(!loc("/t/a").is_under(&t));
        assert!(!loc("/t/ab").is_under(&t));
        assert!(!loc("/t/ab/x").is_under(&t));
        assert!(!loc("/t").is_under(&t));
        assert!(!loc("s3://t/a/x").is_under(&t));
        assert!(!loc("memory:///t/a/x").is_under(&t));
        assert_eq!(loc("/t/a/x/y").relative_to(&t), Some("x/y"));
        assert_eq!(loc("/t/a").relative_to(&t), Some(""));
        assert_eq!(loc("/t/ab").relative_to(&t), None);
        assert!(loc("/x").is_under(&loc("/")));
        assert_eq!(loc("/x/y").relative_to(&loc("/")), Some("x/y"));
        let b = loc("s3://b");
        assert!(loc("s3://b/k").is_under(&b));
        assert!(!loc("s3://bb/k").is_under(&b));
        assert!(!loc("s3://b").is_under(&b));
        assert!(!loc("gs://b/k").is_under(&b));
        assert!(loc("memory:///a/b").is_under(&loc("memory:///a")));
        assert!(loc("memory:///a").is_under(&loc("memory:///")));
        assert!(!loc("memory://x/a").is_under(&loc("memory:///")));
    }
}
