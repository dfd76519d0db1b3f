//! The byte format of orphan-removal units and partial results: a 4-byte magic (`PCOU`), a
//! format version, a kind byte, then the body. Bodies are little-endian varints, length-prefixed
//! UTF-8 strings and delta-coded sorted key lists, so a partial result of a million references
//! takes about 2 MB, not the 40 MB of a JSON array. Every read is bounds-checked: foreign or
//! truncated bytes are an [`Error::InvalidArgument`], never a panic.

use crate::error::{Error, Result};

/// The magic that starts every unit, partial result, plan state and decision.
const MAGIC: &[u8; 4] = b"PCOU";

/// Version of the byte format. Bytes of another version are refused: every unit of a plan must
/// be executed by the library version that planned it. Version 2: partial results count the
/// candidates found referenced while listing. Version 3: `referenced` counts listed files of
/// any age, and partial results carry the location keys of the listed files younger than the
/// cut-off (a version-2 result would count young referenced files differently: refused).
/// Version 4: location keys carry the top bits of their file name's key (so that a location
/// and its name fall into one shard), partial results say which part they hold (whole, the
/// summary, or one shard), and the sharded decision's gate and shard reports.
pub const FORMAT_VERSION: u8 = 4;

/// What a byte string holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// A unit to execute.
    Unit = 1,
    /// A partial result (of any number of units, merged).
    Partial = 2,
    /// The driver's plan state.
    State = 3,
    /// The driver's decision.
    Decision = 4,
    /// What the driver hands every shard task of a sharded decision.
    Gate = 5,
    /// What one shard task of a sharded decision returns to the driver.
    ShardReport = 6,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Unit => "an orphan-removal unit",
            Kind::Partial => "an orphan-removal partial result",
            Kind::State => "an orphan-removal plan state",
            Kind::Decision => "an orphan-removal decision",
            Kind::Gate => "an orphan-removal shard gate",
            Kind::ShardReport => "an orphan-removal shard report",
        }
    }
}

/// Writes the byte format.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// A writer whose bytes start with the header of `kind`.
    pub fn new(kind: Kind) -> Self {
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(MAGIC);
        buf.push(FORMAT_VERSION);
        buf.push(kind as u8);
        Writer { buf }
    }

    /// The bytes written.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }

    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// A varint.
    pub fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// A length-prefixed string.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    /// Length-prefixed bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A sorted list of keys, delta-coded.
    pub fn keys(&mut self, keys: &[u64]) {
        self.u64(keys.len() as u64);
        let mut prev = 0u64;
        for &k in keys {
            self.u64(k.wrapping_sub(prev));
            prev = k;
        }
    }
}

/// Reads the byte format.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`, which must start with the header of `kind` in this format version.
    pub fn new(bytes: &'a [u8], kind: Kind) -> Result<Self> {
        let what = kind.name();
        let head = bytes.get(..6).ok_or_else(|| bad(what, "too short"))?;
        if &head[..4] != MAGIC {
            return Err(bad(what, "no PCOU header"));
        }
        if head[4] != FORMAT_VERSION {
            return Err(Error::InvalidArgument(format!(
                "not {what} of this library: format version {} (this library reads version \
                 {FORMAT_VERSION}); run every unit of a plan with the library version that planned it",
                head[4]
            )));
        }
        if head[5] != kind as u8 {
            return Err(bad(what, &format!("it holds kind {} instead", head[5])));
        }
        Ok(Reader {
            buf: bytes,
            pos: 6,
            what,
        })
    }

    /// The bytes after the header (for bodies stored as JSON).
    pub fn rest(&mut self) -> &'a [u8] {
        let out = self.buf.get(self.pos..).unwrap_or(&[]);
        self.pos = self.buf.len();
        out
    }

    /// Fails unless every byte was read.
    pub fn end(&self) -> Result<()> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(bad(self.what, "trailing bytes"))
        }
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| bad(self.what, "truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    /// A varint.
    pub fn u64(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(bad(self.what, "varint too long"))
    }

    /// A count of items that each take at least one byte (bounded by the bytes left, so a
    /// corrupt count cannot reserve unbounded memory).
    pub fn count(&mut self) -> Result<usize> {
        let n = self.u64()?;
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            return Err(bad(self.what, "count larger than the data"));
        }
        Ok(n as usize)
    }

    /// Length-prefixed bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.count()?;
        let out = self
            .buf
            .get(self.pos..self.pos + n)
            .ok_or_else(|| bad(self.what, "truncated"))?;
        self.pos += n;
        Ok(out)
    }

    /// A length-prefixed string.
    pub fn str(&mut self) -> Result<String> {
        let b = self.bytes()?;
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|_| bad(self.what, "a string is not UTF-8"))
    }

    /// A delta-coded sorted key list; must be strictly increasing.
    pub fn keys(&mut self) -> Result<Vec<u64>> {
        let n = self.count()?;
        let mut out = Vec::with_capacity(n);
        let mut prev = 0u64;
        for i in 0..n {
            let k = prev.wrapping_add(self.u64()?);
            if i > 0 && k <= prev {
                return Err(bad(self.what, "keys not sorted"));
            }
            out.push(k);
            prev = k;
        }
        Ok(out)
    }
}

fn bad(what: &str, why: &str) -> Error {
    Error::InvalidArgument(format!("not {what} of this library ({why})"))
}

/// Writes a serde value as the JSON body of `kind`.
pub(crate) fn to_json_bytes<T: serde::Serialize>(kind: Kind, value: &T) -> Result<Vec<u8>> {
    let mut w = Writer::new(kind);
    let body = serde_json::to_vec(value)
        .map_err(|e| Error::Internal(format!("cannot encode {}: {e}", kind.name())))?;
    w.buf.extend_from_slice(&body);
    Ok(w.finish())
}

/// Reads the JSON body of `kind`.
pub(crate) fn from_json_bytes<T: serde::de::DeserializeOwned>(
    kind: Kind,
    bytes: &[u8],
) -> Result<T> {
    let mut r = Reader::new(bytes, kind)?;
    serde_json::from_slice(r.rest()).map_err(|e| bad(kind.name(), &e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let mut w = Writer::new(Kind::Partial);
        w.u64(0);
        w.u64(u64::MAX);
        w.str("é/x");
        w.keys(&[1, 7, u64::MAX]);
        let b = w.finish();
        let mut r = Reader::new(&b, Kind::Partial).unwrap();
        assert_eq!(r.u64().unwrap(), 0);
        assert_eq!(r.u64().unwrap(), u64::MAX);
        assert_eq!(r.str().unwrap(), "é/x");
        assert_eq!(r.keys().unwrap(), vec![1, 7, u64::MAX]);
        r.end().unwrap();
        assert!(Reader::new(&b, Kind::Unit).is_err());
        assert!(Reader::new(&b[..3], Kind::Partial).is_err());
        let mut other = b.clone();
        other[4] = FORMAT_VERSION + 1;
        let e = Reader::new(&other, Kind::Partial).unwrap_err().to_string();
        assert!(e.contains("format version"), "{e}");
        let mut r = Reader::new(&b[..b.len() - 1], Kind::Partial).unwrap();
        for _ in 0..2 {
            r.u64().unwrap();
        }
        r.str().unwrap();
        assert!(r.keys().is_err());
    }
}
