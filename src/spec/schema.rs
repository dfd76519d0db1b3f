//! Table schema JSON (`schema/schema-<id>`, spec §2.4).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::spec::types::{DataField, DataType};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawField {
    id: i64,
    name: String,
    #[serde(rename = "type")]
    data_type: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSchema {
    #[serde(default)]
    version: Option<i32>,
    id: i64,
    #[serde(default)]
    fields: Vec<RawField>,
    #[serde(default)]
    partition_keys: Vec<String>,
    #[serde(default)]
    primary_keys: Vec<String>,
    #[serde(default)]
    options: HashMap<String, Value>,
}

/// A table schema: what cleanup needs of it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSchema {
    /// Schema id.
    pub id: i64,
    /// Format version (absent ⇒ 1).
    pub version: i32,
    /// All top-level fields.
    pub fields: Vec<DataField>,
    /// Partition key names, in order.
    pub partition_keys: Vec<String>,
    /// Primary key names.
    pub primary_keys: Vec<String>,
    /// Table options, with the version-compatibility defaults applied.
    pub options: HashMap<String, String>,
}

impl TableSchema {
    /// Parse a schema file.
    pub fn parse(bytes: &[u8], path: &str) -> Result<TableSchema> {
        let raw: RawSchema =
            serde_json::from_slice(bytes).map_err(|e| Error::malformed("schema", path, e))?;
        let version = raw.version.unwrap_or(1);
        let mut fields = Vec::with_capacity(raw.fields.len());
        for f in raw.fields {
            let (data_type, nullable) = DataType::from_json(&f.data_type)
                .map_err(|e| Error::malformed("schema", path, e))?;
            fields.push(DataField {
                id: f.id,
                name: f.name,
                data_type,
                nullable,
            });
        }
        let mut options: HashMap<String, String> = raw
            .options
            .into_iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, s)
            })
            .collect();
        if version <= 1 && !options.contains_key("bucket") {
            options.insert("bucket".into(), "1".into());
        }
        if version <= 2 && !options.contains_key("file.format") {
            options.insert("file.format".into(), "orc".into());
        }
        for k in &raw.partition_keys {
            if !fields.iter().any(|f| &f.name == k) {
                return Err(Error::malformed(
                    "schema",
                    path,
                    format!("partition key {k} is not a field"),
                ));
            }
        }
        Ok(TableSchema {
            id: raw.id,
            version,
            fields,
            partition_keys: raw.partition_keys,
            primary_keys: raw.primary_keys,
            options,
        })
    }

    /// The partition fields, in partition-key order.
    pub fn partition_fields(&self) -> Vec<DataField> {
        self.partition_keys
            .iter()
            .filter_map(|k| self.fields.iter().find(|f| &f.name == k).cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_schema() {
        let json = r#"{"version":3,"id":1,"fields":[{"id":0,"name":"f0","type":"INT NOT NULL"},
            {"id":1,"name":"dt","type":"STRING"},{"id":2,"name":"a","type":{"type":"ARRAY","element":"INT"}}],
            "highestFieldId":2,"partitionKeys":["dt"],"primaryKeys":["f0","dt"],
            "options":{"bucket":"2"},"timeMillis":1}"#;
        let s = TableSchema::parse(json.as_bytes(), "schema-1").unwrap();
        assert_eq!(s.partition_fields()[0].data_type, DataType::String);
        assert_eq!(s.options["bucket"], "2");
        assert!(
            !s.options.contains_key("file.format"),
            "version 3 has no compat default"
        );
        let old = TableSchema::parse(br#"{"id":0,"fields":[],"options":{}}"#, "schema-0").unwrap();
        assert_eq!(old.options["file.format"], "orc");
        assert_eq!(old.options["bucket"], "1");
        assert!(TableSchema::parse(b"[]", "schema-0").is_err());
    }

    /// A DECIMAL partition key with a scale of 4294967295 (its partition path would be a 4 GiB
    /// string of zeros) is refused.
    #[test]
    fn absurd_decimal_partition_key_is_refused() {
        use crate::spec::binary_row::BinaryRowWriter;
        use crate::spec::partition::{PartitionComputer, DEFAULT_PARTITION_NAME};
        let json = br#"{"id":0,"fields":[{"id":0,"name":"d","type":"DECIMAL(38, 4294967295)"}],"partitionKeys":["d"]}"#;
        let s = TableSchema::parse(json, "schema-0").unwrap();
        let fields = s.partition_fields();
        for legacy in [false, true] {
            let err =
                PartitionComputer::new(fields.clone(), DEFAULT_PARTITION_NAME, legacy).unwrap_err();
            assert!(matches!(err, Error::Unsupported(_)), "{err}");
            assert!(err.to_string().contains("DECIMAL(38, 4294967295)"), "{err}");
        }
        let zero_row = BinaryRowWriter::new(1).finish();
        assert!(crate::spec::partition::partition_path(&zero_row, &fields, "x", true).is_err());
    }
}
