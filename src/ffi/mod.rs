//! The C ABI: a thin, mechanical wrapper over the Rust API.
//!
//! Everything a foreign engine (C/C++, JNI, cgo) links against lives here and only here; this is
//! the one module of the crate allowed to contain `unsafe`. `build.rs` runs cbindgen over this
//! module and writes `include/paimon_cleanup.h`; the conventions every entry point follows are
//! written once in that header's preamble (from `cbindgen.toml`) and in `docs/c-api.md`:
//!
//! * every symbol starts with `paimon_cleanup_` / `PaimonCleanup` / `PAIMON_CLEANUP_`;
//! * handles are opaque, created by `..._new` (owned by the caller) and released by `..._free`
//!   (NULL is accepted); the executor and context handles are `Send + Sync`;
//! * fallible calls return a [`PaimonCleanupStatus`] (0 = ok), write results through
//!   out-parameters only on success, and hand out a [`PaimonCleanupError`] object (status +
//!   message) that the caller frees with [`paimon_cleanup_error_free`];
//! * no panic crosses the boundary: every entry point runs inside `catch_unwind`;
//! * NULL pointers, invalid UTF-8 and out-of-range values are reported as errors.

#![deny(unsafe_op_in_unsafe_fn)]

// Declaration order is the order of the C header (cbindgen follows it).
mod status;

mod executor;

mod context;

mod summary;

mod control;

mod log;

mod report;

mod expire;

mod tags;

mod maintain;

mod orphans;

mod units;

mod expiry_units;
mod warehouse;

mod partitions;

mod time;

mod ops;

mod util;

mod callback;

mod handle;

#[cfg(test)]
mod tests;

pub use context::{paimon_cleanup_context_free, paimon_cleanup_context_new, PaimonCleanupContext};
pub use executor::{
    paimon_cleanup_executor_free, paimon_cleanup_executor_io_concurrency,
    paimon_cleanup_executor_new, paimon_cleanup_executor_set_io_concurrency,
    paimon_cleanup_executor_worker_threads, PaimonCleanupExecutor,
};
pub use status::{
    paimon_cleanup_error_free, paimon_cleanup_error_message, paimon_cleanup_error_status,
    paimon_cleanup_status_name, PaimonCleanupError, PaimonCleanupStatus,
};
pub use summary::{paimon_cleanup_table_summary, PaimonCleanupTableSummary};

pub use control::*;
pub use expire::*;
pub use expiry_units::*;
pub use log::{PaimonCleanupLogFn, PaimonCleanupLogLevel};
pub use maintain::*;
pub use orphans::*;
pub use partitions::*;
pub use report::*;
pub use tags::*;
pub use time::paimon_cleanup_parse_older_than;
pub use units::*;
pub use warehouse::*;

use std::os::raw::c_char;

/// Version of the C ABI described by this header.
///
/// Compare it with `paimon_cleanup_abi_version()` at start-up: equal numbers mean the library
/// you loaded is binary compatible with the header you compiled against. The number changes
/// whenever an existing function signature, struct layout or status code meaning changes; adding
/// functions, handles, setters or appending status codes does not change it.
pub const PAIMON_CLEANUP_ABI_VERSION: u32 = 1;

/// The library version (the crate version, e.g. `"0.1.0"`), NUL-terminated.
static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// Returns the library version as a NUL-terminated string, e.g. `"0.1.0"`.
///
/// Ownership: the string is static; never free it. It stays valid for the life of the process.
/// Thread-safety: may be called from any thread at any time, before or after any other call.
/// Errors: none; never returns NULL.
#[no_mangle]
pub extern "C" fn paimon_cleanup_version() -> *const c_char {
    VERSION.as_ptr().cast()
}

/// Returns the ABI version of the loaded library (`PAIMON_CLEANUP_ABI_VERSION` of the header it
/// was built with).
///
/// A host should check `paimon_cleanup_abi_version() == PAIMON_CLEANUP_ABI_VERSION` once at
/// start-up and refuse to continue when they differ.
/// Thread-safety: may be called from any thread at any time. Errors: none.
#[no_mangle]
pub extern "C" fn paimon_cleanup_abi_version() -> u32 {
    PAIMON_CLEANUP_ABI_VERSION
}
