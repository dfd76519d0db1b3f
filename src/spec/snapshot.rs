//! Snapshot, tag and changelog JSON documents (spec §2.1–2.3).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
pub use crate::spec::extra::Extra;

/// Commit kind of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommitKind {
    /// New files appended.
    #[serde(rename = "APPEND")]
    Append,
    /// Files rewritten by compaction.
    #[serde(rename = "COMPACT")]
    Compact,
    /// Partitions or the table overwritten (also drop partition).
    #[serde(rename = "OVERWRITE")]
    Overwrite,
    /// Statistics only.
    #[serde(rename = "ANALYZE")]
    Analyze,
    /// A kind this library does not know; kept verbatim.
    #[serde(untagged)]
    Other(String),
}

/// A snapshot (`snapshot/snapshot-<id>`); also the body of tags and long-lived changelogs.
/// Unknown keys are kept in `extra` so a snapshot can be copied without losing anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Format version (absent ⇒ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    /// Snapshot id; equals the id in the file name.
    pub id: i64,
    /// Schema in effect.
    pub schema_id: i64,
    /// Manifest list with every live-file change before this snapshot.
    pub base_manifest_list: String,
    /// Manifest list with the changes made by this snapshot.
    pub delta_manifest_list: String,
    /// Manifest list of the changelog files produced by this snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_manifest_list: Option<String>,
    /// Index manifest: the full set of live index files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_manifest: Option<String>,
    /// Writer job id.
    #[serde(default)]
    pub commit_user: String,
    /// Commit identifier (Long.MAX_VALUE for batch commits).
    #[serde(default)]
    pub commit_identifier: i64,
    /// Commit kind.
    pub commit_kind: CommitKind,
    /// Commit wall-clock time, epoch ms.
    pub time_millis: i64,
    /// Total records of live files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_record_count: Option<i64>,
    /// Records added minus deleted by this commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_record_count: Option<i64>,
    /// Statistics file name (in `statistics/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<String>,
    /// Every other key, verbatim (sizes, watermark, properties, tag keys, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// The manifest lists a version names, in order: base, delta and (if any) changelog.
fn lists_named<'a>(
    base: &'a str,
    delta: &'a str,
    changelog: Option<&'a str>,
) -> impl Iterator<Item = &'a str> {
    [Some(base), Some(delta), changelog].into_iter().flatten()
}

/// A version's `id` must be the id its file name gives (`snapshot-<id>`).
fn check_file_id(path: &str, id: i64, expected_id: i64) -> Result<()> {
    if id != expected_id {
        return Err(Error::malformed(
            "snapshot",
            path,
            format!("id {id} does not match the file name id {expected_id}"),
        ));
    }
    Ok(())
}

impl Snapshot {
    /// Parse a snapshot (or changelog) JSON document; `path` names the file in errors.
    pub fn parse(bytes: &[u8], path: &str) -> Result<Snapshot> {
        serde_json::from_slice(bytes).map_err(|e| Error::malformed("snapshot", path, e))
    }

    /// Parse and check that the `id` matches the id in the file name.
    pub fn parse_expecting_id(bytes: &[u8], path: &str, expected_id: i64) -> Result<Snapshot> {
        let s = Self::parse(bytes, path)?;
        check_file_id(path, s.id, expected_id)?;
        Ok(s)
    }

    /// Serialize to JSON (pretty, like Java).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(|e| Error::Internal(e.to_string()))
    }

    /// The manifest lists this snapshot names: base, delta and (if any) changelog.
    pub fn manifest_lists(&self) -> impl Iterator<Item = &str> {
        lists_named(
            &self.base_manifest_list,
            &self.delta_manifest_list,
            self.changelog_manifest_list.as_deref(),
        )
    }
}

/// What a version document (snapshot, tag or long-lived changelog) names, parsed without the
/// rest: its manifest lists, index manifest and statistics file, and whether it claims live
/// records. Orphan removal's planning reads every version and needs nothing else.
///
/// [`VersionRefs::parse`] accepts exactly the documents [`Snapshot::parse`] accepts: the same
/// keys are required, and every key [`Snapshot`] models must have the same type; every other
/// key is skipped, where a [`Snapshot`] must buffer it to keep it (`extra`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRefs {
    /// Snapshot id.
    pub id: i64,
    /// Manifest list with every live-file change before this version.
    pub base_manifest_list: String,
    /// Manifest list with the changes made by this version.
    pub delta_manifest_list: String,
    /// Manifest list of the changelog files produced by this version.
    pub changelog_manifest_list: Option<String>,
    /// Index manifest.
    pub index_manifest: Option<String>,
    /// Statistics file name (in `statistics/`).
    pub statistics: Option<String>,
    /// Total records of live files.
    pub total_record_count: Option<i64>,
}

/// The keys of a [`Snapshot`], those [`VersionRefs`] does not keep only checked (borrowed
/// where the JSON text allows).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RefsDoc<'a> {
    #[serde(default)]
    #[allow(dead_code)]
    version: Option<i32>,
    id: i64,
    #[allow(dead_code)]
    schema_id: i64,
    base_manifest_list: String,
    delta_manifest_list: String,
    #[serde(default)]
    changelog_manifest_list: Option<String>,
    #[serde(default)]
    index_manifest: Option<String>,
    #[serde(default, borrow)]
    #[allow(dead_code)]
    commit_user: std::borrow::Cow<'a, str>,
    #[serde(default)]
    #[allow(dead_code)]
    commit_identifier: i64,
    #[serde(borrow)]
    #[allow(dead_code)]
    commit_kind: std::borrow::Cow<'a, str>,
    #[allow(dead_code)]
    time_millis: i64,
    #[serde(default)]
    total_record_count: Option<i64>,
    #[serde(default)]
    #[allow(dead_code)]
    delta_record_count: Option<i64>,
    #[serde(default)]
    statistics: Option<String>,
}

impl VersionRefs {
    /// Parse a snapshot, tag or changelog document; `path` names the file in errors (as
    /// [`Snapshot::parse`]: a `snapshot` document).
    pub fn parse(bytes: &[u8], path: &str) -> Result<VersionRefs> {
        let d: RefsDoc<'_> =
            serde_json::from_slice(bytes).map_err(|e| Error::malformed("snapshot", path, e))?;
        Ok(VersionRefs {
            id: d.id,
            base_manifest_list: d.base_manifest_list,
            delta_manifest_list: d.delta_manifest_list,
            changelog_manifest_list: d.changelog_manifest_list,
            index_manifest: d.index_manifest,
            statistics: d.statistics,
            total_record_count: d.total_record_count,
        })
    }

    /// [`VersionRefs::parse`], checking that the `id` matches the id in the file name (as
    /// [`Snapshot::parse_expecting_id`]).
    pub fn parse_expecting_id(bytes: &[u8], path: &str, expected_id: i64) -> Result<VersionRefs> {
        let r = Self::parse(bytes, path)?;
        check_file_id(path, r.id, expected_id)?;
        Ok(r)
    }

    /// The manifest lists this version names: base, delta and (if any) changelog.
    pub fn manifest_lists(&self) -> impl Iterator<Item = &str> {
        lists_named(
            &self.base_manifest_list,
            &self.delta_manifest_list,
            self.changelog_manifest_list.as_deref(),
        )
    }
}

/// A tag (`tag/tag-<name>`): a snapshot plus optional creation time and retention.
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    /// The tagged snapshot ("trimmed": the tag keys removed from `extra`).
    pub snapshot: Snapshot,
    /// `tagCreateTime` as `[y, M, d, h, m, s?, nanos?]`, converted to local-naive epoch millis.
    pub create_time_millis: Option<i64>,
    /// `tagTimeRetained` in milliseconds.
    pub time_retained_millis: Option<i64>,
}

impl Tag {
    /// Parse a tag file.
    pub fn parse(bytes: &[u8], path: &str) -> Result<Tag> {
        let mut snapshot: Snapshot =
            serde_json::from_slice(bytes).map_err(|e| Error::malformed("tag", path, e))?;
        let create = snapshot.extra.remove("tagCreateTime");
        let retained = snapshot.extra.remove("tagTimeRetained");
        let create_time_millis =
            match create {
                None | Some(Value::Null) => None,
                Some(v) => Some(local_date_time_millis(&v).ok_or_else(|| {
                    Error::malformed("tag", path, format!("bad tagCreateTime {v}"))
                })?),
            };
        let time_retained_millis = match retained {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => n.as_f64().map(|secs| (secs * 1000.0).round() as i64),
            Some(Value::String(s)) => s
                .trim()
                .parse::<f64>()
                .ok()
                .map(|secs| (secs * 1000.0).round() as i64),
            Some(v) => {
                return Err(Error::malformed(
                    "tag",
                    path,
                    format!("bad tagTimeRetained {v}"),
                ));
            }
        };
        Ok(Tag {
            snapshot,
            create_time_millis,
            time_retained_millis,
        })
    }
}

/// Convert Java's `LocalDateTime` JSON array `[y, M, d, h, m, s?, nanos?]` (or an ISO string)
/// into milliseconds since 1970-01-01T00:00 of that wall clock (no zone applied).
pub fn local_date_time_millis(v: &Value) -> Option<i64> {
    match v {
        Value::Array(parts) => {
            let n: Vec<i64> = parts
                .iter()
                .map(Value::as_i64)
                .collect::<Option<Vec<_>>>()?;
            if n.len() < 3 {
                return None;
            }
            let date = chrono::NaiveDate::from_ymd_opt(n[0] as i32, n[1] as u32, n[2] as u32)?;
            let time = chrono::NaiveTime::from_hms_nano_opt(
                *n.get(3).unwrap_or(&0) as u32,
                *n.get(4).unwrap_or(&0) as u32,
                *n.get(5).unwrap_or(&0) as u32,
                *n.get(6).unwrap_or(&0) as u32,
            )?;
            Some(date.and_time(time).and_utc().timestamp_millis())
        }
        Value::String(s) => chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
            .ok()
            .map(|t| t.and_utc().timestamp_millis()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAVA: &str = r#"{"version":3,"id":4,"schemaId":0,"baseManifestList":"manifest-list-a-6","baseManifestListSize":1026,"deltaManifestList":"manifest-list-a-7","deltaManifestListSize":994,"changelogManifestList":null,"indexManifest":"index-manifest-b-0","commitUser":"0a51","commitIdentifier":2,"commitKind":"COMPACT","timeMillis":1757325259220,"logOffsets":{},"totalRecordCount":10,"deltaRecordCount":-1,"changelogRecordCount":0,"nextRowId":0}"#;

    #[test]
    fn parses_java_snapshot() {
        let s = Snapshot::parse(JAVA.as_bytes(), "snapshot-4").unwrap();
        assert_eq!(s.id, 4);
        assert_eq!(s.commit_kind, CommitKind::Compact);
        assert_eq!(s.changelog_manifest_list, None);
        assert_eq!(s.index_manifest.as_deref(), Some("index-manifest-b-0"));
        assert_eq!(s.manifest_lists().count(), 2);
        let round = Snapshot::parse(s.to_json().unwrap().as_bytes(), "x").unwrap();
        assert_eq!(round, s);
    }

    /// The lean parse accepts what the full one accepts and names the same files.
    #[test]
    fn version_refs_agree_with_the_full_parse() {
        let without = |key: &str| {
            let mut v: serde_json::Value = serde_json::from_str(JAVA).unwrap();
            v.as_object_mut().unwrap().remove(key);
            v.to_string()
        };
        let with = |key: &str, value: &str| {
            let mut v: serde_json::Value = serde_json::from_str(JAVA).unwrap();
            v[key] = serde_json::from_str(value).unwrap();
            v.to_string()
        };
        let mut docs = vec![
            JAVA.to_string(),
            r#"{"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND","timeMillis":1,"changelogManifestList":"c\u0041","statistics":"st","commitUser":"u\n"}"#.to_string(),
            "{".to_string(),
            "[]".to_string(),
            JAVA.replacen(r#""id":4"#, r#""id":4,"id":5"#, 1),
        ];
        for key in [
            "version",
            "id",
            "schemaId",
            "baseManifestList",
            "deltaManifestList",
            "indexManifest",
            "commitUser",
            "commitIdentifier",
            "commitKind",
            "timeMillis",
            "totalRecordCount",
            "deltaRecordCount",
        ] {
            docs.push(without(key));
            docs.push(with(key, "null"));
            docs.push(with(key, "\"x\""));
            docs.push(with(key, "7"));
            docs.push(with(key, "1.5"));
            docs.push(with(key, "{\"a\":[1]}"));
        }
        docs.push(with("version", "4294967296"));
        docs.push(with("statistics", "3"));
        docs.push(with("unknownKey", "{\"deep\":[null,true,1.5]}"));
        for doc in &docs {
            let full = Snapshot::parse(doc.as_bytes(), "p");
            let lean = VersionRefs::parse(doc.as_bytes(), "p");
            match (&full, &lean) {
                (Ok(s), Ok(r)) => {
                    assert_eq!(s.id, r.id, "{doc}");
                    assert!(s.manifest_lists().eq(r.manifest_lists()), "{doc}");
                    assert_eq!(s.index_manifest, r.index_manifest, "{doc}");
                    assert_eq!(s.statistics, r.statistics, "{doc}");
                    assert_eq!(s.total_record_count, r.total_record_count, "{doc}");
                }
                (Err(_), Err(e)) => assert!(matches!(e, Error::Malformed { .. }), "{doc}"),
                _ => panic!("{doc}: full {full:?}, lean {lean:?}"),
            }
        }
        assert!(VersionRefs::parse_expecting_id(JAVA.as_bytes(), "p", 4).is_ok());
        assert!(VersionRefs::parse_expecting_id(JAVA.as_bytes(), "p", 5).is_err());
    }

    /// Fuzzing regression (json_metadata): a float under an unknown key must survive
    /// parse → `to_json` → parse bit for bit. serde_json's default float parser may be off by
    /// one ULP, so a snapshot copied by this library (changelog decoupling, commits) could
    /// change such a value; the `float_roundtrip` feature makes parsing exact.
    #[test]
    fn floats_in_unknown_keys_round_trip_exactly() {
        let text = "92233720369223372036854775807854775.07";
        let json = JAVA.trim_end_matches('}').to_string() + r#","someFloat":"# + text + "}";
        let s = Snapshot::parse(json.as_bytes(), "snapshot-4").unwrap();
        let exact: f64 = text.parse().unwrap();
        assert_eq!(s.extra["someFloat"].as_f64(), Some(exact));
        let round = Snapshot::parse(s.to_json().unwrap().as_bytes(), "x").unwrap();
        assert_eq!(round, s);
        assert_eq!(
            round.extra["someFloat"].as_f64().map(f64::to_bits),
            Some(exact.to_bits())
        );
    }

    #[test]
    fn id_mismatch_is_an_error() {
        let e =
            Snapshot::parse_expecting_id(JAVA.as_bytes(), "snapshot/snapshot-5", 5).unwrap_err();
        assert!(e.to_string().contains("snapshot/snapshot-5"), "{e}");
    }

    #[test]
    fn invalid_json_names_file() {
        let e = Snapshot::parse(b"{not json", "snapshot/snapshot-1").unwrap_err();
        assert!(matches!(e, Error::Malformed { .. }));
        assert!(e.to_string().contains("snapshot/snapshot-1"));
    }

    #[test]
    fn parses_tag_with_retention() {
        let json = JAVA.trim_end_matches('}').to_string()
            + r#","tagCreateTime":[2024,1,2,3,4],"tagTimeRetained":5.000000000}"#;
        let t = Tag::parse(json.as_bytes(), "tag-x").unwrap();
        assert_eq!(t.time_retained_millis, Some(5000));
        let expect = chrono::NaiveDate::from_ymd_opt(2024, 1, 2)
            .unwrap()
            .and_hms_opt(3, 4, 0)
            .unwrap()
            .and_utc()
            .timestamp_millis();
        assert_eq!(t.create_time_millis, Some(expect));
        assert!(!t.snapshot.extra.contains_key("tagCreateTime"));
    }
}
