//! The byte format of snapshot-expiry units, partial results, plan states and decisions: a
//! 4-byte magic (`PCEU`), a format version, a kind byte, the length of a JSON body, the body,
//! then a tail of 64-bit keys (runs of ascending keys), delta-coded as wrapping varints (the candidates' keys a protect
//! unit filters with: about 2 bytes a key where JSON takes 20). Every read is bounds-checked:
//! foreign or truncated bytes are an [`Error::InvalidArgument`], never a panic.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, Result};

/// The magic that starts every byte string of snapshot expiry as units.
const MAGIC: &[u8; 4] = b"PCEU";

/// Version of the byte format. Bytes of another version are refused: every unit of a plan must
/// be executed by the library version that planned it.
pub const FORMAT_VERSION: u8 = 2;

/// What a byte string holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// A unit to execute.
    Unit = 1,
    /// A partial result (of any number of units of one stage, merged).
    Partial = 2,
    /// The driver's plan state.
    State = 3,
    /// The driver's decision.
    Decision = 4,
    /// What every shard task of a sharded decision gets.
    Gate = 5,
    /// What one shard task decided.
    ShardReport = 6,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Unit => "a snapshot-expiry unit",
            Kind::Partial => "a snapshot-expiry partial result",
            Kind::State => "a snapshot-expiry plan state",
            Kind::Decision => "a snapshot-expiry decision",
            Kind::Gate => "a snapshot-expiry shard gate",
            Kind::ShardReport => "a snapshot-expiry shard report",
        }
    }
}

/// `value` as bytes of `kind`, with `keys` as the tail (smallest when ascending).
pub(crate) fn encode<T: Serialize>(kind: Kind, value: &T, keys: &[u64]) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(value)
        .map_err(|e| Error::Internal(format!("encoding {}: {e}", kind.name())))?;
    let mut out = Vec::with_capacity(10 + json.len() + keys.len() * 3);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT_VERSION);
    out.push(kind as u8);
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    let mut prev = 0u64;
    for k in keys {
        let mut v = k.wrapping_sub(prev);
        prev = *k;
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    Ok(out)
}

fn invalid(kind: Kind, what: &str) -> Error {
    Error::InvalidArgument(format!(
        "not {} of format version {FORMAT_VERSION}: {what}",
        kind.name()
    ))
}

/// The value and the tail keys of bytes of `kind`.
pub(crate) fn decode<T: DeserializeOwned>(kind: Kind, bytes: &[u8]) -> Result<(T, Vec<u64>)> {
    let (json, tail) = split_checked(kind, bytes)?;
    let value: T = serde_json::from_slice(json).map_err(|e| invalid(kind, &e.to_string()))?;
    Ok((value, decode_keys(kind, tail)?))
}

/// Fails unless `bytes` start as bytes of `kind` of this format version with a body that fits
/// (the body itself is not read).
pub(crate) fn check_header(kind: Kind, bytes: &[u8]) -> Result<()> {
    split_checked(kind, bytes).map(|_| ())
}

/// The JSON body and the key tail of bytes of `kind`, the header checked.
fn split_checked(kind: Kind, bytes: &[u8]) -> Result<(&[u8], &[u8])> {
    if bytes.len() < 14 || &bytes[..4] != MAGIC {
        return Err(invalid(kind, "no magic"));
    }
    if bytes[4] != FORMAT_VERSION {
        return Err(invalid(
            kind,
            &format!(
                "format version {} (this library plans and runs only its own)",
                bytes[4]
            ),
        ));
    }
    if bytes[5] != kind as u8 {
        return Err(invalid(kind, &format!("kind byte {}", bytes[5])));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[6..14]);
    let len = u64::from_le_bytes(len);
    let rest = &bytes[14..];
    if len > rest.len() as u64 {
        return Err(invalid(kind, "truncated body"));
    }
    Ok(rest.split_at(len as usize))
}

/// The delta-coded keys of a tail.
fn decode_keys(kind: Kind, mut tail: &[u8]) -> Result<Vec<u64>> {
    let mut keys = Vec::with_capacity(tail.len() / 2);
    let mut prev = 0u64;
    while !tail.is_empty() {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let Some((&b, more)) = tail.split_first() else {
                return Err(invalid(kind, "truncated key"));
            };
            tail = more;
            if shift > 63 {
                return Err(invalid(kind, "key out of range"));
            }
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let k = prev.wrapping_add(v);
        keys.push(k);
        prev = k;
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let keys = vec![0u64, 1, 300, u64::MAX - 1, u64::MAX];
        let b = encode(Kind::Unit, &vec!["a".to_string()], &keys).unwrap();
        let (v, k): (Vec<String>, Vec<u64>) = decode(Kind::Unit, &b).unwrap();
        assert_eq!(v, vec!["a".to_string()]);
        assert_eq!(k, keys);
        // Another kind, version, truncation, garbage.
        assert!(decode::<Vec<String>>(Kind::Partial, &b).is_err());
        let mut other = b.clone();
        other[4] = FORMAT_VERSION + 1;
        assert!(decode::<Vec<String>>(Kind::Unit, &other).is_err());
        assert!(decode::<Vec<String>>(Kind::Unit, &b[..16]).is_err());
        assert!(decode::<Vec<String>>(Kind::Unit, b"PCEU").is_err());
        assert!(decode::<Vec<String>>(Kind::Unit, b"PCOU\x01\x01xxxxxxxxxxxx").is_err());
        // The header alone: right for `b`, wrong kind, truncated, garbage.
        assert!(check_header(Kind::Unit, &b).is_ok());
        assert!(check_header(Kind::Partial, &b).is_err());
        assert!(check_header(Kind::Unit, &b[..16]).is_err());
        assert!(check_header(Kind::Unit, b"garbage").is_err());
    }

    #[test]
    fn merging_with_the_neutral_element_refuses_foreign_bytes() {
        use crate::clean::expiry::units::merge;
        for (a, b) in [(&b"garbage"[..], &b""[..]), (&b""[..], &b"garbage"[..])] {
            let e = merge(a, b).unwrap_err();
            assert!(
                matches!(e, Error::InvalidArgument(_)),
                "merging {a:?} with {b:?}: {e}"
            );
        }
        assert_eq!(merge(b"", b"").unwrap(), Vec::<u8>::new());
    }
}
