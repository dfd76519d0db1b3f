//! Table options (spec §5.1): typed access with Paimon's defaults, durations and memory sizes.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::{Error, Result};

/// Parse a Paimon duration: `<integer><unit>` with optional spaces; no unit means milliseconds.
/// Units: d/day(s), h/hour(s), min/m/minute(s), s/sec(s)/second(s), ms/milli(s)/millisecond(s),
/// µs/us/micro(s)/microsecond(s), ns/nano(s)/nanosecond(s).
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(Error::InvalidArgument(format!(
            "duration '{text}' does not start with a number"
        )));
    }
    let n: u64 = t[..digits_end]
        .parse()
        .map_err(|_| Error::InvalidArgument(format!("duration '{text}' is out of range")))?;
    let unit = t[digits_end..].trim().to_ascii_lowercase();
    let nanos_per: u128 = match unit.as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        "h" | "hour" | "hours" => 3_600_000_000_000,
        "min" | "m" | "minute" | "minutes" => 60_000_000_000,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
        "µs" | "us" | "micro" | "micros" | "microsecond" | "microseconds" => 1_000,
        "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => 1,
        other => {
            return Err(Error::InvalidArgument(format!(
                "duration '{text}' has unknown unit '{other}'"
            )))
        }
    };
    let total = n as u128 * nanos_per;
    let secs = u64::try_from(total / 1_000_000_000)
        .map_err(|_| Error::InvalidArgument(format!("duration '{text}' is out of range")))?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

/// Parse a memory size such as `8 mb`, `500 B`, `1gb`, `1024` (bytes).
pub fn parse_memory_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits_end]
        .parse()
        .map_err(|_| Error::InvalidArgument(format!("memory size '{text}' is not a number")))?;
    let mult: u64 = match t[digits_end..].trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kibibytes" => 1 << 10,
        "m" | "mb" | "mebibytes" => 1 << 20,
        "g" | "gb" | "gibibytes" => 1 << 30,
        "t" | "tb" | "tebibytes" => 1 << 40,
        other => {
            return Err(Error::InvalidArgument(format!(
                "memory size '{text}' has unknown unit '{other}'"
            )))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| Error::InvalidArgument(format!("memory size '{text}' is out of range")))
}

/// The effective options of a table: schema options overlaid with caller overrides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableOptions {
    map: HashMap<String, String>,
}

impl TableOptions {
    /// Build from schema options, then apply `overrides` on top.
    pub fn new(
        schema_options: &HashMap<String, String>,
        overrides: &HashMap<String, String>,
    ) -> Self {
        let mut map = schema_options.clone();
        map.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
        TableOptions { map }
    }

    /// Raw value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
    }

    /// All options.
    pub fn as_map(&self) -> &HashMap<String, String> {
        &self.map
    }

    /// Value or a default.
    pub fn get_or<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.get(key).unwrap_or(default)
    }

    /// True when `changelog-producer` is `none` (the default): a changelog is then read from
    /// the data files a snapshot's delta adds, not from changelog files.
    pub fn changelog_producer_none(&self) -> bool {
        self.get_or("changelog-producer", "none")
            .trim()
            .eq_ignore_ascii_case("none")
    }

    /// Integer option.
    pub fn get_i64(&self, key: &str) -> Result<Option<i64>> {
        self.get(key)
            .map(|v| {
                v.trim().parse::<i64>().map_err(|_| {
                    Error::InvalidArgument(format!("option {key}='{v}' is not an integer"))
                })
            })
            .transpose()
    }

    /// Boolean option.
    pub fn get_bool(&self, key: &str) -> Result<Option<bool>> {
        self.get(key)
            .map(|v| match v.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(Error::InvalidArgument(format!(
                    "option {key}='{v}' is not a boolean"
                ))),
            })
            .transpose()
    }

    /// Duration option.
    pub fn get_duration(&self, key: &str) -> Result<Option<Duration>> {
        self.get(key).map(parse_duration).transpose()
    }

    /// `partition.default-name` (default `__DEFAULT_PARTITION__`).
    pub fn partition_default_name(&self) -> &str {
        self.get_or("partition.default-name", "__DEFAULT_PARTITION__")
    }

    /// `partition.legacy-name` (default true).
    pub fn partition_legacy_name(&self) -> Result<bool> {
        Ok(self.get_bool("partition.legacy-name")?.unwrap_or(true))
    }

    /// `bucket` (default -1).
    pub fn bucket(&self) -> Result<i64> {
        Ok(self.get_i64("bucket")?.unwrap_or(-1))
    }

    /// `data-file.path-directory`, if set.
    pub fn data_file_path_directory(&self) -> Option<&str> {
        self.get("data-file.path-directory")
            .filter(|s| !s.trim().is_empty())
    }

    /// `data-file.external-paths`: the configured external data roots.
    pub fn data_file_external_paths(&self) -> Vec<String> {
        self.get("data-file.external-paths")
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `index-file-in-data-file-dir` (default false).
    pub fn index_file_in_data_file_dir(&self) -> Result<bool> {
        Ok(self
            .get_bool("index-file-in-data-file-dir")?
            .unwrap_or(false))
    }

    /// `global-index.external-path`, if set.
    pub fn global_index_external_path(&self) -> Option<&str> {
        self.get("global-index.external-path")
            .filter(|s| !s.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("30 min").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("1 h").unwrap(), Duration::from_secs(3600));
        assert_eq!(
            parse_duration("7d").unwrap(),
            Duration::from_secs(7 * 86400)
        );
        assert_eq!(parse_duration("250").unwrap(), Duration::from_millis(250));
        assert_eq!(
            parse_duration("2 days").unwrap(),
            Duration::from_secs(2 * 86400)
        );
        assert!(parse_duration("h").is_err());
        assert!(parse_duration("5 fortnights").is_err());
    }

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_memory_size("8 mb").unwrap(), 8 << 20);
        assert_eq!(parse_memory_size("500 B").unwrap(), 500);
        assert!(parse_memory_size("x").is_err());
    }

    #[test]
    fn overrides_win() {
        let mut s = HashMap::new();
        s.insert("bucket".to_string(), "2".to_string());
        let mut options = HashMap::new();
        options.insert("bucket".to_string(), "4".to_string());
        let opts = TableOptions::new(&s, &options);
        assert_eq!(opts.bucket().unwrap(), 4);
        assert_eq!(opts.partition_default_name(), "__DEFAULT_PARTITION__");
        assert!(
            TableOptions::new(&options, &HashMap::from([("bucket".into(), "x".into())]))
                .bucket()
                .is_err()
        );
    }
}
