//! Manifest lists, manifests and index manifests (spec §3), decoded by field name from the
//! file's own writer schema. Avro is the normal container; ORC and Parquet appear in tables
//! written with the legacy `manifest.format` option.
//!
//! The decoders are pure functions over the file bytes; the format is detected by magic bytes
//! (Avro `Obj\x01`, ORC `ORC`, Parquet `PAR1`). Every failure is an [`Error::Malformed`] naming
//! the file (or [`Error::Unsupported`] for a valid file this library refuses), never a panic.
//!
//! Byte fields (`_MIN_KEY`, stats rows) are [`bytes::Bytes`] copied out of the decompressed
//! Avro block (a slice would keep the whole block alive while one small field is
//! referenced); blocks are decompressed into buffers reused across files.
//!
//! Writing (Avro only) is in [`writer`]: records are encoded by field name in a writer schema
//! copied from the table's own files, or in the built-in Java 2.x schema; [`meta`] computes the
//! `ManifestFileMeta` (exact partition stats) of a written manifest.

use crate::error::{Error, Result};

mod avro;
#[cfg(any(feature = "orc", feature = "parquet"))]
mod columnar;
mod decode;
mod entry;
mod format;
pub mod meta;
mod skip;
mod value;
pub mod writer;

pub use entry::{
    DataFileMeta, DeletionVectorMeta, FileKind, FileLocator, GlobalIndexMeta, IndexManifestEntry,
    ManifestEntry, ManifestFileMeta, SimpleStats,
};
use format::format_of;
pub use format::{detect_format, ManifestFormat};
pub(crate) use format::{to_error, FileType};
pub use meta::manifest_file_meta;
pub use value::AvroValue;
pub use writer::{
    encode_builtin_container, encode_index_manifest, encode_manifest, encode_manifest_list,
    encode_records, read_raw_records, ManifestCompression, MetadataFileKind, RawRecords,
    WriterSchema,
};

#[cfg(any(feature = "orc", feature = "parquet"))]
use arrow_array::RecordBatch;

/// Uninhabited stand-in for arrow's `RecordBatch` when no columnar feature is compiled in.
#[cfg(not(any(feature = "orc", feature = "parquet")))]
enum RecordBatch {}

#[cfg(any(feature = "orc", feature = "parquet"))]
use columnar::{batch_index_manifest, batch_manifest, batch_manifest_list};

#[cfg(not(any(feature = "orc", feature = "parquet")))]
fn no_batches<T>(b: &RecordBatch) -> std::result::Result<Vec<T>, avro::DecodeError> {
    match *b {}
}
#[cfg(not(any(feature = "orc", feature = "parquet")))]
use no_batches as batch_manifest_list;
#[cfg(not(any(feature = "orc", feature = "parquet")))]
use no_batches as batch_manifest;
#[cfg(not(any(feature = "orc", feature = "parquet")))]
use no_batches as batch_index_manifest;

/// Reads every record batch of an ORC or Parquet file (or explains why it cannot).
#[allow(unused_variables)]
fn read_batches(
    t: FileType,
    format: ManifestFormat,
    bytes: &[u8],
    path: &str,
) -> Result<Vec<RecordBatch>> {
    let unsupported = |feature: &str, name: &str| {
        Error::Unsupported(format!(
            "{} file {path} is {name}, but this build lacks the '{feature}' feature",
            t.kind()
        ))
    };
    match format {
        ManifestFormat::Avro => Err(Error::Internal(format!(
            "{path}: Avro passed to the columnar reader"
        ))),
        #[cfg(feature = "orc")]
        ManifestFormat::Orc => columnar::read_orc(bytes).map_err(|e| to_error(t, path, e)),
        #[cfg(not(feature = "orc"))]
        ManifestFormat::Orc => Err(unsupported("orc", "ORC")),
        #[cfg(feature = "parquet")]
        ManifestFormat::Parquet => columnar::read_parquet(bytes).map_err(|e| to_error(t, path, e)),
        #[cfg(not(feature = "parquet"))]
        ManifestFormat::Parquet => Err(unsupported("parquet", "Parquet")),
    }
}

fn decode_columnar<T>(
    t: FileType,
    format: ManifestFormat,
    bytes: &[u8],
    path: &str,
    f: fn(&RecordBatch) -> std::result::Result<Vec<T>, avro::DecodeError>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for batch in read_batches(t, format, bytes, path)? {
        out.extend(f(&batch).map_err(|e| to_error(t, path, e))?);
    }
    Ok(out)
}

/// Decodes a manifest list (`manifest-list-…`) into its [`ManifestFileMeta`] entries.
pub fn decode_manifest_list(bytes: &[u8], path: &str) -> Result<Vec<ManifestFileMeta>> {
    let t = FileType::ManifestList;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => decode::avro_manifest_list(bytes).map_err(|e| to_error(t, path, e)),
        f => decode_columnar(t, f, bytes, path, batch_manifest_list),
    }
}

/// Decodes a manifest (`manifest-…`) into its [`ManifestEntry`] records.
pub fn decode_manifest(bytes: &[u8], path: &str) -> Result<Vec<ManifestEntry>> {
    let t = FileType::Manifest;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => decode::avro_manifest(bytes).map_err(|e| to_error(t, path, e)),
        f => decode_columnar(t, f, bytes, path, batch_manifest),
    }
}

/// Runs an Avro decode whose per-entry callback may fail with a crate error: `decode` gets
/// `stop`, which turns the callback's result into the decoder's; the first callback error is
/// returned as is (not as a decoding error of the file), any other failure as the file's.
fn stoppable(
    t: FileType,
    path: &str,
    decode: impl FnOnce(&mut dyn FnMut(Result<()>) -> avro::DecodeResult<()>) -> avro::DecodeResult<()>,
) -> Result<()> {
    let mut stopped: Option<Error> = None;
    let decoded = decode(&mut |r: Result<()>| {
        r.map_err(|err| {
            stopped = Some(err);
            avro::DecodeError::malformed("stopped by the caller")
        })
    });
    match (stopped, decoded) {
        (Some(err), _) => Err(err),
        (None, r) => r.map_err(|e| to_error(t, path, e)),
    }
}

/// Decodes a manifest entry by entry (no vector of entries is built), calling `f` with each,
/// with only the fields that locate and identify a file: kind, partition, bucket, total buckets,
/// and of `_FILE` all but `_MIN_KEY`, `_MAX_KEY`, `_KEY_STATS`, `_VALUE_STATS`,
/// `_VALUE_STATS_COLS`, `_WRITE_COLS` and `_WRITE_COLS_SEQUENCES`, which are checked for
/// well-formedness like the rest but left empty. Stops at the first error, of the file or of
/// `f` (returned as is). ORC and Parquet manifests are decoded in full first.
pub fn for_each_manifest_file(
    bytes: &[u8],
    path: &str,
    mut f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<()> {
    let t = FileType::Manifest;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => stoppable(t, path, |stop| {
            decode::avro_manifest_locating(bytes, |e| stop(f(e)))
        }),
        format => decode_columnar(t, format, bytes, path, batch_manifest)?
            .into_iter()
            .try_for_each(f),
    }
}

/// Decodes a manifest entry by entry and passes what locates each entry's file to `f`,
/// borrowed from the decoded content: for Avro nothing is allocated per entry (but the list of
/// extra files when there are any). Reads and checks every field exactly as
/// [`for_each_manifest_file`] does, so it fails exactly where that does. Stops at the first
/// error, of the file or of `f` (returned as is). ORC and Parquet manifests are decoded in full
/// first.
pub fn for_each_file_locator(
    bytes: &[u8],
    path: &str,
    mut f: impl FnMut(&FileLocator<'_>) -> Result<()>,
) -> Result<()> {
    let t = FileType::Manifest;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => stoppable(t, path, |stop| {
            decode::avro_manifest_locators(bytes, |e| stop(f(e)))
        }),
        format => decode_columnar(t, format, bytes, path, batch_manifest)?
            .iter()
            .try_for_each(|e| f(&FileLocator::of(e))),
    }
}

/// Decodes an index manifest (`index-manifest-…`) into its [`IndexManifestEntry`] records.
pub fn decode_index_manifest(bytes: &[u8], path: &str) -> Result<Vec<IndexManifestEntry>> {
    let t = FileType::IndexManifest;
    match format_of(t, bytes, path)? {
        ManifestFormat::Avro => {
            decode::avro_index_manifest(bytes).map_err(|e| to_error(t, path, e))
        }
        f => decode_columnar(t, f, bytes, path, batch_index_manifest),
    }
}

#[cfg(test)]
mod tests;
