//! File names packed for the candidate arena: Paimon writers name data and
//! changelog files `data-<uuid>-<count>.<format>` / `changelog-<uuid>-<count>.<format>`, 53
//! bytes for a Parquet file; packed, the UUID takes its 16 bytes and the name about 27.
//!
//! A packed name starts with a tag byte: [`RAW`] (the name's bytes follow) or the prefix's
//! code, then the UUID's 16 bytes, the count's length and its digits as written, and the
//! format as written. A name is packed only if it unpacks to exactly itself, so packing is
//! deterministic and one-to-one: two names are equal exactly when their packed forms are.
//! [`cmp_packed`] orders packed names as their strings order.

/// Tag of a name kept as it is.
const RAW: u8 = 0;
/// Prefixes packed, by tag (1-based).
const PREFIXES: [&str; 2] = ["changelog-", "data-"];
/// Bytes of a canonical UUID's text.
const UUID_TEXT: usize = 36;

/// Append `name`, packed, to `out`.
pub fn pack(name: &str, out: &mut Vec<u8>) {
    let start = out.len();
    if try_pack(name, out).is_some() {
        // The parse is strict (canonical lower-case UUID, digits, a format after the '.'),
        // so the packed form gives the name back exactly.
        debug_assert_eq!(unpack(&out[start..]), name);
        return;
    }
    out.truncate(start);
    out.push(RAW);
    out.extend_from_slice(name.as_bytes());
}

fn try_pack(name: &str, out: &mut Vec<u8>) -> Option<()> {
    let (tag, rest) = PREFIXES
        .iter()
        .enumerate()
        .find_map(|(i, p)| name.strip_prefix(p).map(|r| (i as u8 + 1, r)))?;
    let uuid = rest.get(..UUID_TEXT)?.as_bytes();
    let rest = rest.get(UUID_TEXT..)?.strip_prefix('-')?;
    let (digits, format) = rest.split_once('.')?;
    if digits.is_empty() || digits.len() > 255 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    out.push(tag);
    let mut nibbles = uuid
        .iter()
        .enumerate()
        .filter(|(i, _)| !matches!(*i, 8 | 13 | 18 | 23));
    for (i, b) in uuid.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) && *b != b'-' {
            return None;
        }
    }
    for _ in 0..16 {
        let hi = hex(*nibbles.next()?.1)?;
        let lo = hex(*nibbles.next()?.1)?;
        out.push((hi << 4) | lo);
    }
    out.push(digits.len() as u8);
    out.extend_from_slice(digits.as_bytes());
    out.extend_from_slice(format.as_bytes());
    Some(())
}

/// A lower-case hex digit's value.
fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The parts of a packed (not raw) name.
struct Parts<'a> {
    prefix: &'static str,
    uuid: &'a [u8],
    digits: &'a [u8],
    format: &'a [u8],
}

/// The parts of a packed name, `None` for a raw one.
fn parts(packed: &[u8]) -> Option<Parts<'_>> {
    let (&tag, rest) = packed.split_first()?;
    let prefix = *PREFIXES.get(usize::from(tag).checked_sub(1)?)?;
    let uuid = rest.get(..16)?;
    let (&n, rest) = rest.get(16..)?.split_first()?;
    let digits = rest.get(..usize::from(n))?;
    let format = rest.get(usize::from(n)..)?;
    Some(Parts {
        prefix,
        uuid,
        digits,
        format,
    })
}

/// Append the name `packed` holds to `out`.
pub fn unpack_into(packed: &[u8], out: &mut String) {
    match parts(packed) {
        Some(Parts {
            prefix,
            uuid,
            digits,
            format,
        }) => {
            out.push_str(prefix);
            for (i, b) in uuid.iter().enumerate() {
                if matches!(i, 4 | 6 | 8 | 10) {
                    out.push('-');
                }
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
            out.push('-');
            out.push_str(&String::from_utf8_lossy(digits));
            out.push('.');
            out.push_str(&String::from_utf8_lossy(format));
        }
        None => out.push_str(&String::from_utf8_lossy(packed.get(1..).unwrap_or(&[]))),
    }
}

/// The length in bytes of the name `packed` holds, without unpacking it (what
/// [`unpack_into`] appends, for a packed form [`pack`] made).
pub fn unpacked_len(packed: &[u8]) -> usize {
    match parts(packed) {
        // `<prefix><uuid text>-<digits>.<format>`
        Some(p) => p.prefix.len() + UUID_TEXT + 1 + p.digits.len() + 1 + p.format.len(),
        None => packed.len().saturating_sub(1),
    }
}

/// The name `packed` holds.
pub fn unpack(packed: &[u8]) -> String {
    let mut s = String::new();
    unpack_into(packed, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(name: &str) -> Vec<u8> {
        let mut v = Vec::new();
        pack(name, &mut v);
        v
    }

    #[test]
    fn names_round_trip_and_paimon_names_shrink() {
        let names = [
            "data-00799820-1fb5-481a-b44c-173a73f008e4-61.parquet",
            "changelog-0ef3f29f-6b7a-4eab-9d90-6dd5366941a0-128.orc",
            "data-00799820-1fb5-481a-b44c-173a73f008e4-007.csv.gz",
            "data-00799820-1fb5-481a-b44c-173a73f008e4-1.",
            // Not packed: upper case, no count, no format, another prefix, short UUID.
            "data-00799820-1FB5-481a-b44c-173a73f008e4-61.parquet",
            "data-00799820-1fb5-481a-b44c-173a73f008e4.parquet",
            "data-00799820-1fb5-481a-b44c-173a73f008e4-61",
            "index-00799820-1fb5-481a-b44c-173a73f008e4-0",
            "data-00799820-1fb5-481a-b44c-173a73f008e-1.orc",
            "data-007998201-fb5-481a-b44c-173a73f008e4-1.orc",
            "data-",
            "x",
            "",
            "dätä-ü",
        ];
        for n in names {
            let p = packed(n);
            assert_eq!(unpack(&p), n);
            assert_eq!(unpacked_len(&p), n.len(), "{n}");
        }
        assert_eq!(packed(names[0]).len(), 1 + 16 + 1 + 2 + 7);
        assert_eq!(packed(names[4])[0], RAW);
    }
}
