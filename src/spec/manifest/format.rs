//! Which container a metadata file is (by magic bytes), what it is expected to hold, and decode
//! errors turned into crate errors naming the file.

use super::avro;
use crate::error::{Error, Result};

/// Container format of a metadata file, detected from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestFormat {
    /// Avro object container (`Obj\x01`).
    Avro,
    /// ORC (`ORC`).
    Orc,
    /// Parquet (`PAR1`).
    Parquet,
}

/// Detects the container format by magic bytes.
pub fn detect_format(bytes: &[u8]) -> Option<ManifestFormat> {
    if bytes.starts_with(b"Obj\x01") {
        Some(ManifestFormat::Avro)
    } else if bytes.starts_with(b"ORC") {
        Some(ManifestFormat::Orc)
    } else if bytes.starts_with(b"PAR1") {
        Some(ManifestFormat::Parquet)
    } else {
        None
    }
}

/// What a file is expected to contain; selects the record mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileType {
    ManifestList,
    Manifest,
    IndexManifest,
}

impl FileType {
    pub(crate) fn kind(self) -> &'static str {
        match self {
            FileType::ManifestList => "manifest list",
            FileType::Manifest => "manifest",
            FileType::IndexManifest => "index manifest",
        }
    }
}

/// Converts an internal decode error into the crate error, naming the file.
pub(crate) fn to_error(t: FileType, path: &str, e: avro::DecodeError) -> Error {
    match e {
        avro::DecodeError::Malformed(m) => Error::malformed(t.kind(), path, m),
        avro::DecodeError::Unsupported(m) => {
            Error::Unsupported(format!("{} file {path}: {m}", t.kind()))
        }
    }
}

/// The container format of `bytes`, or a malformed-file error naming `path`.
pub(super) fn format_of(t: FileType, bytes: &[u8], path: &str) -> Result<ManifestFormat> {
    detect_format(bytes).ok_or_else(|| {
        let head: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
        Error::malformed(
            t.kind(),
            path,
            format!(
                "unknown magic bytes [{}] (expected Avro 'Obj\\x01', ORC 'ORC' or Parquet 'PAR1')",
                head.join(" ")
            ),
        )
    })
}
