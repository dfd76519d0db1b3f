//! Consumer JSON (`consumer/consumer-<id>`, spec §2.5) and hint files (spec §1.2).

use serde::Deserialize;

use crate::error::{Error, Result};

/// A streaming consumer's progress: the next snapshot it will read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Consumer {
    /// Next snapshot id the consumer will read.
    pub next_snapshot: i64,
}

impl Consumer {
    /// Parse a consumer file.
    pub fn parse(bytes: &[u8], path: &str) -> Result<Consumer> {
        serde_json::from_slice(bytes).map_err(|e| Error::malformed("consumer", path, e))
    }
}

/// Parse an `EARLIEST` / `LATEST` hint: the whole content is a decimal id. Returns `None` for
/// anything else (Java treats an unparsable hint as missing).
pub fn parse_hint(bytes: &[u8]) -> Option<i64> {
    std::str::from_utf8(bytes).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_and_hints() {
        assert_eq!(
            Consumer::parse(br#"{"nextSnapshot": 7, "x": 1}"#, "c")
                .unwrap()
                .next_snapshot,
            7
        );
        assert!(Consumer::parse(b"{}", "consumer-x").is_err());
        assert_eq!(parse_hint(b"31"), Some(31));
        assert_eq!(parse_hint(b"12\n"), Some(12));
        assert_eq!(parse_hint(b"x"), None);
    }
}
