//! Paimon logical data types, as far as cleanup needs them (partition keys), parsed from the
//! schema JSON (`"INT"`, `"VARCHAR(10) NOT NULL"`, `{"type":"ARRAY", ...}`).

use serde_json::Value;

use crate::error::{Error, Result};

/// A Paimon data type. Nested types are kept only by name; cleanup never decodes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataType {
    /// BOOLEAN
    Boolean,
    /// TINYINT
    TinyInt,
    /// SMALLINT
    SmallInt,
    /// INT / INTEGER
    Int,
    /// BIGINT
    BigInt,
    /// FLOAT
    Float,
    /// DOUBLE
    Double,
    /// DECIMAL(precision, scale)
    Decimal {
        /// Total digits.
        precision: u32,
        /// Digits after the point.
        scale: u32,
    },
    /// CHAR(n), VARCHAR(n), STRING
    String,
    /// BINARY(n), VARBINARY(n), BYTES
    Binary,
    /// DATE (days since epoch)
    Date,
    /// TIME(p) (millis of day)
    Time {
        /// Fractional-second precision.
        precision: u32,
    },
    /// TIMESTAMP(p)
    Timestamp {
        /// Fractional-second precision.
        precision: u32,
    },
    /// TIMESTAMP(p) WITH LOCAL TIME ZONE
    TimestampLtz {
        /// Fractional-second precision.
        precision: u32,
    },
    /// ARRAY, MAP, MULTISET, ROW, VECTOR, VARIANT, BLOB, ... (by root name), and a DECIMAL
    /// outside Java's limits (`DECIMAL(p, s)`: precision 1..=38, scale <= precision)
    Other(String),
}

/// One field of a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataField {
    /// Field id.
    pub id: i64,
    /// Field name.
    pub name: String,
    /// Field type.
    pub data_type: DataType,
    /// Whether the type admits NULL.
    pub nullable: bool,
}

/// Smallest DECIMAL precision Java accepts.
pub const MIN_DECIMAL_PRECISION: u32 = 1;

/// Largest DECIMAL precision Java accepts.
pub const MAX_DECIMAL_PRECISION: u32 = 38;

fn parse_paren_args(s: &str) -> Vec<u32> {
    match (s.find('('), s.rfind(')')) {
        (Some(a), Some(b)) if b > a => s[a + 1..b]
            .split(',')
            .filter_map(|p| p.trim().parse().ok())
            .collect(),
        _ => Vec::new(),
    }
}

impl DataType {
    /// Parse the schema JSON representation of a type. Returns the type and its nullability.
    pub fn from_json(v: &Value) -> Result<(DataType, bool)> {
        match v {
            Value::String(s) => Ok(Self::parse_atomic(s)),
            Value::Object(m) => {
                let t = m.get("type").and_then(Value::as_str).ok_or_else(|| {
                    Error::InvalidArgument(format!("type object without 'type': {v}"))
                })?;
                let nullable = !t.to_ascii_uppercase().contains("NOT NULL");
                let root = t
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_ascii_uppercase();
                Ok((DataType::Other(root), nullable))
            }
            other => Err(Error::InvalidArgument(format!(
                "unexpected type JSON: {other}"
            ))),
        }
    }

    /// Parse an atomic type string such as `"DECIMAL(10, 2) NOT NULL"`.
    pub fn parse_atomic(s: &str) -> (DataType, bool) {
        let upper = s.trim().to_ascii_uppercase();
        let nullable = !upper.ends_with("NOT NULL");
        let body = upper.trim_end_matches("NOT NULL").trim_end();
        let body = body.strip_suffix(" NULL").unwrap_or(body).trim();
        let args = parse_paren_args(body);
        let name: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let ltz = body.contains("WITH LOCAL TIME ZONE");
        let dt = match name.as_str() {
            "BOOLEAN" => DataType::Boolean,
            "TINYINT" => DataType::TinyInt,
            "SMALLINT" => DataType::SmallInt,
            "INT" | "INTEGER" => DataType::Int,
            "BIGINT" => DataType::BigInt,
            "FLOAT" => DataType::Float,
            "DOUBLE" => DataType::Double,
            "DECIMAL" | "NUMERIC" | "DEC" => {
                let precision = args.first().copied().unwrap_or(10);
                let scale = args.get(1).copied().unwrap_or(0);
                // Java's DecimalType refuses anything else; a huge scale would make every value
                // print as a string of `scale` digits (4 GiB for DECIMAL(38, 4294967295)).
                if (MIN_DECIMAL_PRECISION..=MAX_DECIMAL_PRECISION).contains(&precision)
                    && scale <= precision
                {
                    DataType::Decimal { precision, scale }
                } else {
                    DataType::Other(format!("DECIMAL({precision}, {scale})"))
                }
            }
            "CHAR" | "VARCHAR" | "STRING" => DataType::String,
            "BINARY" | "VARBINARY" | "BYTES" => DataType::Binary,
            "DATE" => DataType::Date,
            "TIME" => DataType::Time {
                precision: args.first().copied().unwrap_or(0),
            },
            "TIMESTAMP" if ltz => DataType::TimestampLtz {
                precision: args.first().copied().unwrap_or(6),
            },
            "TIMESTAMP_LTZ" => DataType::TimestampLtz {
                precision: args.first().copied().unwrap_or(6),
            },
            "TIMESTAMP" => DataType::Timestamp {
                precision: args.first().copied().unwrap_or(6),
            },
            other => DataType::Other(other.to_string()),
        };
        (dt, nullable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_atomic_types() {
        assert_eq!(DataType::parse_atomic("INT"), (DataType::Int, true));
        assert_eq!(
            DataType::parse_atomic("BIGINT NOT NULL"),
            (DataType::BigInt, false)
        );
        assert_eq!(
            DataType::parse_atomic("DECIMAL(38, 4)"),
            (
                DataType::Decimal {
                    precision: 38,
                    scale: 4
                },
                true
            )
        );
        assert_eq!(
            DataType::parse_atomic("TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL"),
            (DataType::TimestampLtz { precision: 3 }, false)
        );
        assert_eq!(
            DataType::parse_atomic("VARCHAR(10)"),
            (DataType::String, true)
        );
        assert_eq!(DataType::parse_atomic("DATE"), (DataType::Date, true));
    }

    /// Fuzzing regression (json_metadata): a DECIMAL outside Java's limits is not a DECIMAL this
    /// library computes with (partition keys of such a type are refused), so a schema with
    /// `DECIMAL(38, 4294967295)` cannot make a partition path 4 GiB long.
    #[test]
    fn invalid_decimals_are_other_types() {
        for (s, p, sc) in [
            ("DECIMAL", 10, 0),
            ("DECIMAL(1)", 1, 0),
            ("DEC(38, 38)", 38, 38),
        ] {
            assert_eq!(
                DataType::parse_atomic(s).0,
                DataType::Decimal {
                    precision: p,
                    scale: sc
                },
                "{s}"
            );
        }
        for (s, name) in [
            ("DECIMAL(38, 4294967295)", "DECIMAL(38, 4294967295)"),
            ("DECIMAL(39, 0)", "DECIMAL(39, 0)"),
            ("DECIMAL(0)", "DECIMAL(0, 0)"),
            ("NUMERIC(5, 6) NOT NULL", "DECIMAL(5, 6)"),
        ] {
            assert_eq!(
                DataType::parse_atomic(s).0,
                DataType::Other(name.to_string()),
                "{s}"
            );
        }
    }
}
