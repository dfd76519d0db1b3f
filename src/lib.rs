//! paimon-cleanup: Apache Paimon table maintenance for foreign engines.
//!
//! Layers, with dependencies pointing one way only:
//! `ffi` (C ABI) → `clean` (capabilities) → `table` (a table as a whole) → `spec` (pure format
//! code, no I/O) and `storage` (object_store behind one small API).
//! See `docs/architecture.md`.

#![deny(missing_docs)]
#![warn(unnameable_types)]
// Conventions enforced by the compiler rather than by prose: no `unsafe` outside the C ABI layer,
// and no `unwrap`/`expect`/`panic!` in library code (tests may use them).
#![deny(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod clean;
pub mod error;
#[allow(unsafe_code)] // the C ABI: raw pointers from the host, `extern "C"` entry points
pub mod ffi;
pub mod hash;
pub mod memory;
pub mod spec;
pub mod storage;
pub mod table;

pub use error::{Error, Result};
