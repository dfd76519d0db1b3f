//! What still references files: the versions that protect them (retained snapshots, tags of
//! every branch, other branches' snapshots, long-lived changelogs), and for a set of candidate
//! files, which of them any such version still needs.
//!
//! Protectors' manifest lists and manifests are read at most once per run; their manifests are
//! decoded and immediately filtered down to the candidates, so memory follows the candidate
//! set, not the table. Manifests read to find candidates (`clean::expiry::plan`) are reduced to
//! candidates as they are decoded and not kept; a protector naming one of them reads it again.

pub mod among;
mod live;
pub mod protectors;
pub mod reader;
pub mod slim;

pub use protectors::{ProtectMode, Protector};
pub(crate) use reader::read_index_files_sized;
pub use reader::{ListedManifest, ReferenceReader};
pub use slim::CandidateKeys;
pub(crate) use slim::Slim;
