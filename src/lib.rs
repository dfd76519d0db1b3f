//! paimon-cleanup: Apache Paimon table maintenance for foreign engines.
//!
//! Layers, with dependencies pointing one way only:
//! `ffi` (C ABI) → `clean` (capabilities) → `table` (a table as a whole) → `spec` (pure format
//! code, no I/O) and `storage` (object_store behind one small API).
//! See `docs/architecture.md`.

#![deny(missing_docs)]

pub mod clean;
pub mod error;
pub mod ffi;
pub mod hash;
pub mod spec;
pub mod storage;
pub mod table;

pub use error::{Error, Result};
