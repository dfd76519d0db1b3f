//! Orphan-file removal as units an engine schedules (plan / execute / merge / decide / finish),
//! and the byte buffers they are handed out in.
//!
//! Every unit, partial result, plan state and decision is an opaque, versioned byte string.
//! The library hands them out in [`PaimonCleanupBuffer`]s (one byte string) and
//! [`PaimonCleanupBufferList`]s (several), owned by the caller and released with their `_free`
//! function; it takes them back as `(pointer, length)` pairs that it only reads during the call.

use std::collections::HashMap;
use std::future::Future;
use std::os::raw::c_char;
use std::ptr;

use crate::clean::control::RunControl;
use crate::clean::orphans::units;
use crate::table::Table;

use super::context::{options_arg, PaimonCleanupContext};
use super::control::PaimonCleanupRunOptions;
use super::executor::PaimonCleanupExecutor;
use super::handle::{free_handle, hand_out};
use super::ops::{run_on, Call};
use super::orphans::PaimonCleanupOrphanConfig;
use super::report::PaimonCleanupReport;
use super::status::{
    boundary, boundary_infallible, FfiError, PaimonCleanupError, PaimonCleanupStatus,
};
use super::util::{handle_ref, out_arg};

/// One byte string handed out by the library: a unit, a partial result, a plan state or a
/// decision of orphan removal as units.
///
/// Created by the call that returns it, owned by the caller, released with
/// `paimon_cleanup_buffer_free`. Immutable and thread-safe: any thread may read it until it is
/// freed. The bytes are opaque and versioned: store or ship them as they are.
pub struct PaimonCleanupBuffer {
    bytes: Box<[u8]>,
}

/// Several byte strings handed out by the library (the units of a plan or a decision).
///
/// Created by the call that returns it, owned by the caller, released with
/// `paimon_cleanup_buffer_list_free` (which frees its buffers too). Immutable and thread-safe.
/// The buffers returned by `paimon_cleanup_buffer_list_get` are borrowed from the list.
pub struct PaimonCleanupBufferList {
    items: Vec<PaimonCleanupBuffer>,
}

pub(super) fn buffer(bytes: Vec<u8>) -> PaimonCleanupBuffer {
    PaimonCleanupBuffer {
        bytes: bytes.into_boxed_slice(),
    }
}

pub(super) fn buffer_list(all: Vec<Vec<u8>>) -> PaimonCleanupBufferList {
    PaimonCleanupBufferList {
        items: all.into_iter().map(buffer).collect(),
    }
}

/// The two out-parameters of a step that hands out a byte string and a second object (a list
/// of byte strings, or another byte string), checked non-NULL.
pub(super) struct TwoOuts<H> {
    first: *mut *mut PaimonCleanupBuffer,
    second: *mut *mut H,
}

impl<H> TwoOuts<H> {
    /// Checks both out-parameters, `first` before `second`: a NULL one is `NULL_POINTER`
    /// naming it.
    ///
    /// # Safety
    /// Each pointer must be NULL or writable until [`TwoOuts::deliver`] returns.
    pub(super) unsafe fn new(
        function: &str,
        first: (*mut *mut PaimonCleanupBuffer, &str),
        second: (*mut *mut H, &str),
    ) -> Result<Self, FfiError> {
        Ok(TwoOuts {
            first: out_arg(first.0, function, first.1)?,
            second: out_arg(second.0, function, second.1)?,
        })
    }

    /// Hands `first` (as a buffer) and `second` out, both owned by the caller from then on.
    pub(super) fn deliver(self, first: Vec<u8>, second: H) {
        // SAFETY: both checked non-NULL in `new` and writable (caller's guarantee to `new`).
        unsafe {
            hand_out(self.first, buffer(first));
            hand_out(self.second, second);
        }
    }
}

/// Checks the handles of a step on the driver that hands out no report (`context` and
/// `executor` must not be NULL, `run_options` may be). The step only reads, so its reads stop
/// once the run's token is cancelled ([`Call::reads_stop_on_cancel`]).
///
/// # Safety
/// Each handle must be NULL or live for `'a`.
pub(super) unsafe fn driver_call<'a>(
    function: &'static str,
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
) -> Result<Call<'a>, FfiError> {
    // SAFETY: NULL or live handles (caller's guarantee).
    Ok(
        unsafe { Call::without_report(function, context, executor, run_options) }?
            .reads_stop_on_cancel(),
    )
}

/// Reads a `(pointer, length)` byte-string argument; NULL is accepted for length 0.
///
/// # Safety
/// `ptr` must be NULL or point to `len` readable bytes that outlive `'a`.
pub(super) unsafe fn bytes_arg<'a>(
    ptr: *const u8,
    len: usize,
    function: &str,
    argument: &str,
) -> Result<&'a [u8], FfiError> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(FfiError::null_pointer(function, argument));
    }
    if len > isize::MAX as usize {
        return Err(FfiError::invalid_argument(format!(
            "{function}: length of `{argument}` is out of range"
        )));
    }
    // SAFETY: non-NULL and `len` readable bytes (caller's guarantee).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The body of the `*_unit_execute` calls: checks and reads the arguments, opens nothing
/// itself, runs `execute` (the unit's bytes, the host's options, the run control) on
/// `executor` with the I/O concurrency for the unit's table (`table_uri`), and hands the
/// partial result out in `*out`.
///
/// # Safety
/// As those calls document: `executor` NULL or live; `unit` NULL or `unit_len` readable bytes;
/// each option array NULL or `option_count` readable pointers to NUL-terminated strings;
/// `run_options` NULL or live; `out` NULL or writable. All outlive the call.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn execute_unit<'a, Fut>(
    function: &'static str,
    executor: *const PaimonCleanupExecutor,
    unit: *const u8,
    unit_len: usize,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupBuffer,
    table_uri: fn(&[u8]) -> crate::Result<String>,
    execute: impl FnOnce(&'a [u8], HashMap<String, String>, RunControl) -> Fut,
) -> Result<(), FfiError>
where
    Fut: Future<Output = crate::Result<Vec<u8>>>,
{
    // SAFETY: NULL or live (caller's guarantee).
    let executor = unsafe { handle_ref(executor, function, "executor") }?;
    let out = out_arg(out, function, "out")?;
    if unit_len == 0 {
        return Err(FfiError::invalid_argument(format!(
            "{function}: argument `unit` is empty"
        )));
    }
    // SAFETY: as documented.
    let unit: &'a [u8] = unsafe { bytes_arg(unit, unit_len, function, "unit") }?;
    // SAFETY: as documented.
    let options = unsafe { options_arg(function, option_keys, option_values, option_count) }?;
    // SAFETY: NULL or live (caller's guarantee).
    let run = unsafe { run_options.as_ref() };
    // The executor's I/O concurrency, or the default for the unit's table location.
    let uri = table_uri(unit)?;
    let bytes = run_on(function, executor, run, &uri, |control| {
        execute(unit, options, control)
    })?;
    // SAFETY: checked non-NULL and writable.
    unsafe { hand_out(out, buffer(bytes)) };
    Ok(())
}

/// `count` byte strings from parallel arrays of pointers and lengths (both may be NULL when
/// `count` is 0).
///
/// # Safety
/// `ptrs` and `lens` NULL or readable for `count` items; each pointer NULL or readable for its
/// length. The bytes outlive `'a`.
pub(super) unsafe fn byte_strings_arg<'a>(
    ptrs: *const *const u8,
    lens: *const usize,
    count: usize,
    function: &'static str,
    name: &'static str,
) -> Result<Vec<&'a [u8]>, FfiError> {
    let mut all: Vec<&[u8]> = Vec::with_capacity(count.min(1 << 16));
    if count > 0 {
        if ptrs.is_null() {
            return Err(FfiError::null_pointer(function, name));
        }
        if lens.is_null() {
            return Err(FfiError::null_pointer(function, "lengths"));
        }
        for i in 0..count {
            // SAFETY: both arrays hold `count` readable items (caller's guarantee).
            let (p, n) = unsafe { (*ptrs.add(i), *lens.add(i)) };
            // SAFETY: as documented.
            all.push(unsafe { bytes_arg(p, n, function, name) }?);
        }
    }
    Ok(all)
}

/// The body of the `*_partials_merge` calls: reads `a` and `b`, merges them with `merge` and
/// hands the result out in `*out`.
///
/// # Safety
/// `a` / `b` NULL or `a_len` / `b_len` readable bytes; `out` NULL or writable.
pub(super) unsafe fn merge_partials(
    function: &'static str,
    a: *const u8,
    a_len: usize,
    b: *const u8,
    b_len: usize,
    out: *mut *mut PaimonCleanupBuffer,
    merge: fn(&[u8], &[u8]) -> crate::Result<Vec<u8>>,
) -> Result<(), FfiError> {
    let out = out_arg(out, function, "out")?;
    // SAFETY: as documented.
    let a = unsafe { bytes_arg(a, a_len, function, "a") }?;
    // SAFETY: as documented.
    let b = unsafe { bytes_arg(b, b_len, function, "b") }?;
    let merged = merge(a, b)?;
    // SAFETY: checked non-NULL and writable.
    unsafe { hand_out(out, buffer(merged)) };
    Ok(())
}

/// The body of the `*_partial_split` calls: reads `partial`, splits it with `split` into a
/// summary and `shards` pieces and hands them out in `*out_summary` / `*out_shards`.
///
/// # Safety
/// `partial` NULL or `partial_len` readable bytes; `out_summary` / `out_shards` NULL or
/// writable.
pub(super) unsafe fn split_partial(
    function: &'static str,
    partial: *const u8,
    partial_len: usize,
    shards: u32,
    out_summary: *mut *mut PaimonCleanupBuffer,
    out_shards: *mut *mut PaimonCleanupBufferList,
    split: impl FnOnce(&[u8], u32) -> crate::Result<(Vec<u8>, Vec<Vec<u8>>)>,
) -> Result<(), FfiError> {
    // SAFETY: NULL or writable (caller's guarantee).
    let outs = unsafe {
        TwoOuts::new(
            function,
            (out_summary, "out_summary"),
            (out_shards, "out_shards"),
        )
    }?;
    // SAFETY: as documented.
    let partial = unsafe { bytes_arg(partial, partial_len, function, "partial") }?;
    let (summary, pieces) = split(partial, shards)?;
    outs.deliver(summary, buffer_list(pieces));
    Ok(())
}

/// The body of the `*_units_finish` calls: reads `decision` and `merged`, checks the handles
/// and `out`, runs `finish` on the context's table and hands its result out in `*out` as the
/// report `report` makes of it.
///
/// # Safety
/// `decision` / `merged` NULL or `decision_len` / `merged_len` readable bytes; handles NULL or
/// live; `out` NULL or writable. All outlive the call.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn finish_units<'a, R, Fut>(
    function: &'static str,
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
    decision: (*const u8, usize),
    merged: (*const u8, usize),
    out: *mut *mut PaimonCleanupReport,
    finish: impl FnOnce(Table, RunControl, &'a [u8], &'a [u8]) -> Fut,
    report: fn(R) -> PaimonCleanupReport,
) -> Result<(), FfiError>
where
    Fut: Future<Output = crate::Result<R>>,
{
    // SAFETY: as documented.
    let decision: &'a [u8] = unsafe { bytes_arg(decision.0, decision.1, function, "decision") }?;
    // SAFETY: as documented.
    let merged: &'a [u8] = unsafe { bytes_arg(merged.0, merged.1, function, "merged") }?;
    // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
    let call = unsafe { Call::new(function, context, executor, run_options, out) }?;
    let result = call.run(|table, control| finish(table, control, decision, merged))?;
    call.deliver(report(result));
    Ok(())
}

/// Returns the first byte of `buffer` (NULL for a NULL buffer; a valid pointer, possibly
/// dangling-but-aligned, for an empty one — read `paimon_cleanup_buffer_len` bytes from it).
///
/// Ownership: borrowed from `buffer`; valid until the buffer (or the list it came from) is freed.
/// Thread-safety: any thread. Errors: none.
///
/// # Safety
/// `buffer` must be NULL or a live buffer.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_buffer_data(
    buffer: *const PaimonCleanupBuffer,
) -> *const u8 {
    boundary_infallible(ptr::null(), || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { buffer.as_ref() }.map_or(ptr::null(), |b| b.bytes.as_ptr())
    })
}

/// Returns the number of bytes in `buffer` (0 for NULL).
///
/// Thread-safety: any thread. Errors: none.
///
/// # Safety
/// `buffer` must be NULL or a live buffer.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_buffer_len(buffer: *const PaimonCleanupBuffer) -> usize {
    boundary_infallible(0, || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { buffer.as_ref() }.map_or(0, |b| b.bytes.len())
    })
}

/// Frees a buffer the library handed out. NULL is accepted and ignored. Never pass a buffer
/// borrowed from a list (`paimon_cleanup_buffer_list_get`).
///
/// Ownership: takes back ownership of `buffer`; free each exactly once.
/// Thread-safety: any thread, but not concurrently with another use of the same buffer.
///
/// # Safety
/// `buffer` must be NULL or a buffer returned through an out-parameter and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_buffer_free(buffer: *mut PaimonCleanupBuffer) {
    // SAFETY: NULL or handed out by this library and not yet freed (caller's guarantee).
    unsafe { free_handle(buffer) }
}

/// Returns the number of buffers in `list` (0 for NULL).
///
/// Thread-safety: any thread. Errors: none.
///
/// # Safety
/// `list` must be NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_buffer_list_count(
    list: *const PaimonCleanupBufferList,
) -> usize {
    boundary_infallible(0, || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { list.as_ref() }.map_or(0, |l| l.items.len())
    })
}

/// Returns buffer `index` of `list`, or NULL when `list` is NULL or `index` is out of range.
///
/// Ownership: borrowed from the list; valid until the list is freed. Never free it.
/// Thread-safety: any thread. Errors: none.
///
/// # Safety
/// `list` must be NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_buffer_list_get(
    list: *const PaimonCleanupBufferList,
    index: usize,
) -> *const PaimonCleanupBuffer {
    boundary_infallible(ptr::null(), || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { list.as_ref() }
            .and_then(|l| l.items.get(index))
            .map_or(ptr::null(), |b| b as *const PaimonCleanupBuffer)
    })
}

/// Frees a buffer list and its buffers. NULL is accepted and ignored.
///
/// Ownership: takes back ownership of `list`; free each exactly once.
/// Thread-safety: any thread, but not concurrently with another use of the list or its buffers.
///
/// # Safety
/// `list` must be NULL or a list returned through an out-parameter and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_buffer_list_free(list: *mut PaimonCleanupBufferList) {
    // SAFETY: NULL or handed out by this library and not yet freed (caller's guarantee).
    unsafe { free_handle(list) }
}

/// Plans an orphan-file removal as units (on the driver): checks the cut-off (the rules of
/// `paimon_cleanup_remove_orphan_files`), resolves the data roots, walks the partition
/// directories, reads every snapshot, tag and long-lived changelog of every branch and their
/// manifest lists, and returns the units — "list these directories" (a bounded group of
/// partition / bucket directories, or the metadata directories) and "read these manifests" (a
/// bounded slice of the distinct manifests and index manifests) — and the plan state.
///
/// Execute every unit with `paimon_cleanup_orphan_unit_execute` (anywhere, any order), merge
/// the results with `paimon_cleanup_orphan_partials_merge`, then call
/// `paimon_cleanup_orphan_units_decide` with `*out_state`. See docs/c-api.md, "Orphan removal
/// as units".
///
/// `config`: required; its veto is not used here (decide asks it), its list concurrency is used
/// here only, and its delete concurrency not at all (delete units run at the executing host's
/// executor I/O concurrency). `run_options`: may be NULL.
/// Blocks the calling thread; the work runs on `executor`.
///
/// Ownership: on success `*out_state` receives a new buffer and `*out_units` a new list, owned
/// by the caller (free with `paimon_cleanup_buffer_free` / `paimon_cleanup_buffer_list_free`);
/// on failure both are left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor`, `config`, `out_state` or `out_units` is
/// NULL; `INVALID_ARGUMENT` for a bad cut-off; `NOT_FOUND` if the table does not exist;
/// `MALFORMED` / `NOT_FOUND` / `STORAGE` when metadata a version needs cannot be read;
/// `CANCELLED`. `*err` (when `err` is not NULL) is set to NULL on success and to a new error
/// object on failure.
///
/// # Safety
/// Handles must be NULL or live; out-parameters and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_units_plan(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupOrphanConfig,
    run_options: *const PaimonCleanupRunOptions,
    out_state: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_units_plan";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or writable (caller's guarantee).
        let outs = unsafe { TwoOuts::new(F, (out_state, "out_state"), (out_units, "out_units")) }?;
        // SAFETY: NULL or live handles (caller's guarantee).
        let call = unsafe { driver_call(F, context, executor, run_options) }?;
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { handle_ref(config, F, "config") }?;
        let planned = call.run(|table, control| async move {
            let cfg = config.orphan_config(table.root().clone());
            units::plan(&table, &cfg, &control).await
        })?;
        outs.deliver(planned.state, buffer_list(planned.units));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Executes one unit of orphan removal (a plan unit or a delete unit) on any host: opens the
/// table's storage from the table URI and the options the unit carries, with the host's
/// options added (they win; units never carry credentials — option keys naming secrets,
/// tokens, passwords or access keys are left out when planning — so pass them here), and
/// returns the unit's partial result.
///
/// `unit` / `unit_len`: a unit from `paimon_cleanup_orphan_units_plan` or
/// `paimon_cleanup_orphan_units_decide`. `option_keys` / `option_values`: `option_count`
/// NUL-terminated UTF-8 strings each (both may be NULL when the count is 0). `run_options`: may
/// be NULL (its token cancels; the reads of a plan unit stop at once). The I/O concurrency is
/// the executor's. Plan units only read: a failed, cancelled or repeated one changes nothing.
/// A delete unit checks every path again (roots, kind, no symlinked directory) before its first
/// deletion; files it cannot delete are reported in its result, not as an error.
///
/// Ownership: the caller keeps its arguments. On success `*out` receives a new buffer owned
/// by the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
/// Thread-safety: any number of host threads may call it at once, with one executor.
/// Errors: `NULL_POINTER` for a NULL `executor`, `out`, unit bytes or option array;
/// `INVALID_UTF8`; `INVALID_ARGUMENT` for bytes that are not a unit of this library's format
/// version, an empty or duplicate key; `NOT_FOUND` / `STORAGE` opening the table; `PATH_REFUSED`
/// for a delete unit naming a path outside the table's roots or of the wrong kind;
/// `CANCELLED`. A manifest that cannot be read is not an error here (it is in the result;
/// decide judges it). `*err` as usual.
///
/// # Safety
/// `unit` must be NULL or point to `unit_len` readable bytes; each option array NULL or
/// `option_count` readable pointers to NUL-terminated strings; handles NULL or live; `out` and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_unit_execute(
    executor: *const PaimonCleanupExecutor,
    unit: *const u8,
    unit_len: usize,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupBuffer,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_unit_execute";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        execute_unit(
            F,
            executor,
            unit,
            unit_len,
            option_keys,
            option_values,
            option_count,
            run_options,
            out,
            units::table_uri,
            |unit, options, control| async move { units::execute(unit, &options, &control).await },
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Merges two partial results of orphan-removal units. Associative and commutative (any
/// order and grouping give identical bytes); an empty byte string (length 0, pointer may be
/// NULL) is the neutral element.
///
/// Ownership: the caller keeps `a` and `b`. On success `*out` receives a new buffer owned by
/// the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
/// Thread-safety: any thread; no executor needed (pure computation).
/// Errors: `NULL_POINTER` for a NULL `out` or a NULL pointer with a non-zero length;
/// `INVALID_ARGUMENT` for bytes that are not a partial result of this format version, results
/// of two different plans, or a unit's result included in both. `*err` as usual.
///
/// # Safety
/// `a` / `b` must be NULL or point to `a_len` / `b_len` readable bytes; `out` and `err` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_partials_merge(
    a: *const u8,
    a_len: usize,
    b: *const u8,
    b_len: usize,
    out: *mut *mut PaimonCleanupBuffer,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_partials_merge";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe { merge_partials(F, a, a_len, b, b_len, out, units::merge) };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Decides an orphan-file removal planned as units (on the driver), with every safety rule of
/// `paimon_cleanup_remove_orphan_files`: lists the versions again until no new one appears
/// (reading the new ones' manifests itself), fails when metadata a version still needs could
/// not be read or when a plan unit's result is missing, keeps every referenced file, every
/// file whose name is referenced at another location and every file the veto keeps, checks
/// every path (roots, kinds, no symlinked directory), and returns the decision and the delete
/// units (none for a dry run). Nothing is deleted by this call.
///
/// `state`: `*out_state` of the plan. `merged`: every plan unit's result, merged. `config`:
/// the plan's config; its veto is asked here (the cut-off, dry run and roots are the plan's).
///
/// Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
/// and `*out_units` a new list, owned by the caller; on failure both are left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing unit result;
/// `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a version still needs could not be read
/// (the message names the file; nothing deleted); `CONFLICT` when versions keep appearing;
/// `PATH_REFUSED`; `CANCELLED`; `INTERNAL` if the veto panicked. `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_units_decide(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupOrphanConfig,
    run_options: *const PaimonCleanupRunOptions,
    state: *const u8,
    state_len: usize,
    merged: *const u8,
    merged_len: usize,
    out_decision: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_units_decide";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or writable (caller's guarantee).
        let outs =
            unsafe { TwoOuts::new(F, (out_decision, "out_decision"), (out_units, "out_units")) }?;
        // SAFETY: as documented.
        let state = unsafe { bytes_arg(state, state_len, F, "state") }?;
        // SAFETY: as documented.
        let merged = unsafe { bytes_arg(merged, merged_len, F, "merged") }?;
        // SAFETY: NULL or live handles (caller's guarantee).
        let call = unsafe { driver_call(F, context, executor, run_options) }?;
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { handle_ref(config, F, "config") }?;
        let decided = call.run(|table, control| async move {
            let cfg = config.orphan_config(table.root().clone());
            units::decide(&table, &cfg, &control, state, merged).await
        })?;
        outs.deliver(decided.decision, buffer_list(decided.units));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Finishes an orphan-file removal run as units (on the driver), after every delete unit:
/// removes the data directories the deletions left empty (not in a dry run) and returns the
/// report, the same as `paimon_cleanup_remove_orphan_files` returns.
///
/// `decision`: `*out_decision` of decide. `merged`: every delete unit's result, merged (length
/// 0 when decide returned no unit).
///
/// Ownership: the caller keeps its arguments. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_REMOVE_ORPHAN_FILES`), released with
/// `paimon_cleanup_report_free`; on failure it is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing delete unit
/// result; `NOT_FOUND` if the table does not exist; `CANCELLED`. `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; `out` and `err` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_units_finish(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
    decision: *const u8,
    decision_len: usize,
    merged: *const u8,
    merged_len: usize,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_units_finish";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        finish_units(
            F,
            context,
            executor,
            run_options,
            (decision, decision_len),
            (merged, merged_len),
            out,
            |table, control, decision, merged| async move {
                units::finish(&table, &control, decision, merged).await
            },
            PaimonCleanupReport::from_orphans,
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Splits a plan unit's result (or several merged) into its summary and `shards` pieces (1 to
/// 65,536) for the sharded decision: piece `i` holds the candidates and reference keys of the
/// file names of shard `i`. The engine shuffles the pieces by shard (merging each shard's
/// pieces with `paimon_cleanup_orphan_partials_merge`) and merges the summaries for the
/// driver.
///
/// Ownership: the caller keeps `partial`. On success `*out_summary` receives a new buffer and
/// `*out_shards` a new list of `shards` buffers (buffer `i` is shard `i`), owned by the
/// caller; on failure both are left untouched.
/// Thread-safety: any thread; no executor needed (pure computation).
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for a shard count out of range, bytes that are
/// not a partial result of this format version, or a result already split. `*err` as usual.
///
/// # Safety
/// `partial` NULL or readable for `partial_len` bytes; out-parameters and `err` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_partial_split(
    partial: *const u8,
    partial_len: usize,
    shards: u32,
    out_summary: *mut *mut PaimonCleanupBuffer,
    out_shards: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_partial_split";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        split_partial(
            F,
            partial,
            partial_len,
            shards,
            out_summary,
            out_shards,
            |p, n| units::split(p, n).map(|split| (split.summary, split.shards)),
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// The gate of the sharded decision (on the driver): lists the versions again until no new
/// one appears (reading the new ones' manifests itself), fails when metadata a version still
/// needs could not be read or when a plan unit's summary is missing, and returns the updated
/// state and the gate every shard decides with. Call it before the shards decide and again
/// after: `*out_decide` is true after the first call and after a later one that found a new
/// version (then every shard decides again with the new gate); false confirms the round the
/// shards decided, for `paimon_cleanup_orphan_units_conclude`. Nothing is deleted here.
///
/// `state`: the plan's `*out_state`, or the `*out_state` of the previous gate. `summary`:
/// every plan unit's summary, merged. `shards`: the count the results were split into.
///
/// Ownership: the caller keeps its arguments. On success `*out_state` and `*out_gate` receive
/// new buffers owned by the caller and `*out_decide` is written; on failure all are left
/// untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, a missing or doubled summary
/// or another shard count; `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a version still
/// needs could not be read (the message names the file); `CONFLICT` when versions keep
/// appearing; `CANCELLED`. `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_units_gate(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
    state: *const u8,
    state_len: usize,
    summary: *const u8,
    summary_len: usize,
    shards: u32,
    out_state: *mut *mut PaimonCleanupBuffer,
    out_gate: *mut *mut PaimonCleanupBuffer,
    out_decide: *mut bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_units_gate";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or writable (caller's guarantee).
        let outs = unsafe { TwoOuts::new(F, (out_state, "out_state"), (out_gate, "out_gate")) }?;
        let out_decide = out_arg(out_decide, F, "out_decide")?;
        // SAFETY: as documented.
        let state = unsafe { bytes_arg(state, state_len, F, "state") }?;
        // SAFETY: as documented.
        let summary = unsafe { bytes_arg(summary, summary_len, F, "summary") }?;
        // SAFETY: NULL or live handles (caller's guarantee).
        let call = unsafe { driver_call(F, context, executor, run_options) }?;
        let gated = call.run(|table, control| async move {
            units::gate(&table, &control, state, summary, shards).await
        })?;
        outs.deliver(gated.state, buffer(gated.gate));
        // SAFETY: checked non-NULL and writable.
        unsafe { out_decide.write(gated.decide) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Decides one shard of the sharded decision (anywhere): `piece` is every plan unit's piece
/// of shard `shard` merged (checked complete, each unit once), `gate` the round's gate. Keeps
/// every referenced file, every file whose name is referenced at another location and every
/// file the veto keeps, checks every remaining path (roots, kinds, no symlinked directory),
/// and returns the shard's report and its delete units (none for a dry run). Nothing is
/// deleted by this call.
///
/// `config`: the plan's config; its veto is asked here (the cut-off, dry run and roots are
/// the plan's).
///
/// Ownership: the caller keeps its arguments. On success `*out_report` receives a new buffer
/// and `*out_units` a new list, owned by the caller; on failure both are left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, another shard's piece or a
/// piece missing a unit; `PATH_REFUSED`; `CANCELLED`; `INTERNAL` if the veto panicked.
/// `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_shard_decide(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupOrphanConfig,
    run_options: *const PaimonCleanupRunOptions,
    gate: *const u8,
    gate_len: usize,
    shard: u32,
    piece: *const u8,
    piece_len: usize,
    out_report: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_shard_decide";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or writable (caller's guarantee).
        let outs =
            unsafe { TwoOuts::new(F, (out_report, "out_report"), (out_units, "out_units")) }?;
        // SAFETY: as documented.
        let gate = unsafe { bytes_arg(gate, gate_len, F, "gate") }?;
        // SAFETY: as documented.
        let piece = unsafe { bytes_arg(piece, piece_len, F, "piece") }?;
        // SAFETY: NULL or live handles (caller's guarantee).
        let call = unsafe { driver_call(F, context, executor, run_options) }?;
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { handle_ref(config, F, "config") }?;
        let decided = call.run(|table, control| async move {
            let cfg = config.orphan_config(table.root().clone());
            units::decide_shard(&table, &cfg, &control, gate, shard, piece).await
        })?;
        outs.deliver(decided.report, buffer_list(decided.units));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Concludes the sharded decision (on the driver): with the state of the gate that confirmed
/// the round (`*out_decide` false), every plan unit's summary merged and the round's report of
/// every shard, each exactly once (a missing, doubled or stale report is refused), returns the
/// decision for `paimon_cleanup_orphan_units_finish`.
///
/// `reports` / `report_lens`: `count` byte strings (NULL for `count` 0).
///
/// Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
/// owned by the caller; on failure it is left untouched.
/// Thread-safety: any thread; no executor needed (pure computation).
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, an unconfirmed round, or a
/// missing, doubled or stale shard report. `*err` as usual.
///
/// # Safety
/// Byte pointers NULL or readable for their lengths; `reports` and `report_lens` NULL or
/// readable for `count` items; `out_decision` and `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_units_conclude(
    state: *const u8,
    state_len: usize,
    summary: *const u8,
    summary_len: usize,
    reports: *const *const u8,
    report_lens: *const usize,
    count: usize,
    out_decision: *mut *mut PaimonCleanupBuffer,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_units_conclude";
    let body = || -> Result<(), FfiError> {
        let out_decision = out_arg(out_decision, F, "out_decision")?;
        // SAFETY: as documented.
        let state = unsafe { bytes_arg(state, state_len, F, "state") }?;
        // SAFETY: as documented.
        let summary = unsafe { bytes_arg(summary, summary_len, F, "summary") }?;
        // SAFETY: as documented.
        let all = unsafe { byte_strings_arg(reports, report_lens, count, F, "reports") }?;
        let decision = units::conclude(state, summary, &all)?;
        // SAFETY: checked non-NULL and writable.
        unsafe { hand_out(out_decision, buffer(decision)) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{
        paimon_cleanup_error_free, paimon_cleanup_executor_free, paimon_cleanup_executor_new,
    };

    #[test]
    fn buffers_merge_and_argument_checks() {
        // SAFETY: every pointer below is NULL, a live handle or a local out-parameter.
        unsafe {
            assert!(paimon_cleanup_buffer_data(ptr::null()).is_null());
            assert_eq!(paimon_cleanup_buffer_len(ptr::null()), 0);
            assert_eq!(paimon_cleanup_buffer_list_count(ptr::null()), 0);
            assert!(paimon_cleanup_buffer_list_get(ptr::null(), 0).is_null());
            paimon_cleanup_buffer_free(ptr::null_mut());
            paimon_cleanup_buffer_list_free(ptr::null_mut());

            // Two empty results merge into the empty result of no plan.
            let mut out: *mut PaimonCleanupBuffer = ptr::null_mut();
            let s = paimon_cleanup_orphan_partials_merge(
                ptr::null(),
                0,
                ptr::null(),
                0,
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::Ok);
            let len = paimon_cleanup_buffer_len(out);
            assert!(len > 6);
            let bytes = std::slice::from_raw_parts(paimon_cleanup_buffer_data(out), len).to_vec();
            assert_eq!(&bytes[..4], b"PCOU");
            // Merging it with itself is neutral (no unit inside).
            let mut again: *mut PaimonCleanupBuffer = ptr::null_mut();
            let s = paimon_cleanup_orphan_partials_merge(
                bytes.as_ptr(),
                bytes.len(),
                bytes.as_ptr(),
                bytes.len(),
                &mut again,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::Ok);
            assert_eq!(paimon_cleanup_buffer_len(again), len);
            paimon_cleanup_buffer_free(again);
            paimon_cleanup_buffer_free(out);

            // Foreign bytes, a NULL pointer with a length, a NULL out.
            let mut err = ptr::null_mut();
            let mut out: *mut PaimonCleanupBuffer = ptr::null_mut();
            let s = paimon_cleanup_orphan_partials_merge(
                b"nope".as_ptr(),
                4,
                ptr::null(),
                0,
                &mut out,
                &mut err,
            );
            assert_eq!(s, PaimonCleanupStatus::InvalidArgument);
            assert!(out.is_null() && !err.is_null());
            paimon_cleanup_error_free(err);
            let s = paimon_cleanup_orphan_partials_merge(
                ptr::null(),
                3,
                ptr::null(),
                0,
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            let s = paimon_cleanup_orphan_partials_merge(
                ptr::null(),
                0,
                ptr::null(),
                0,
                ptr::null_mut(),
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);

            // Execute: a NULL executor, then bytes that are not a unit.
            let s = paimon_cleanup_orphan_unit_execute(
                ptr::null(),
                b"x".as_ptr(),
                1,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            let mut exec = ptr::null_mut();
            assert_eq!(
                paimon_cleanup_executor_new(1, &mut exec, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            let s = paimon_cleanup_orphan_unit_execute(
                exec,
                b"PCOU\x01\x01{}".as_ptr(),
                8,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::InvalidArgument);
            assert!(out.is_null());
            paimon_cleanup_executor_free(exec);
        }
    }

    #[test]
    fn split_and_conclude_check_their_arguments() {
        // SAFETY: every pointer below is NULL, a local byte string or a local out-parameter.
        unsafe {
            let mut summary: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut shards: *mut PaimonCleanupBufferList = ptr::null_mut();
            // The empty result splits into an empty summary and three empty pieces.
            let s = paimon_cleanup_orphan_partial_split(
                ptr::null(),
                0,
                3,
                &mut summary,
                &mut shards,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::Ok);
            assert_eq!(paimon_cleanup_buffer_list_count(shards), 3);
            let piece = paimon_cleanup_buffer_list_get(shards, 1);
            let bytes = std::slice::from_raw_parts(
                paimon_cleanup_buffer_data(piece),
                paimon_cleanup_buffer_len(piece),
            );
            assert_eq!(&bytes[..4], b"PCOU");
            // A piece is not split again; no shards, or too many, are refused.
            let mut err = ptr::null_mut();
            let mut s2: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut l2: *mut PaimonCleanupBufferList = ptr::null_mut();
            for (data, len, n) in [
                (bytes.as_ptr(), bytes.len(), 2),
                (ptr::null(), 0, 0),
                (ptr::null(), 0, 65_537),
            ] {
                let s =
                    paimon_cleanup_orphan_partial_split(data, len, n, &mut s2, &mut l2, &mut err);
                assert_eq!(s, PaimonCleanupStatus::InvalidArgument);
                assert!(s2.is_null() && l2.is_null() && !err.is_null());
                paimon_cleanup_error_free(err);
                err = ptr::null_mut();
            }
            paimon_cleanup_buffer_free(summary);
            paimon_cleanup_buffer_list_free(shards);

            // Conclude: NULL report arrays with a count, foreign state, NULL out.
            let mut out: *mut PaimonCleanupBuffer = ptr::null_mut();
            let s = paimon_cleanup_orphan_units_conclude(
                ptr::null(),
                0,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null(),
                2,
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            let s = paimon_cleanup_orphan_units_conclude(
                b"nope".as_ptr(),
                4,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null(),
                0,
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::InvalidArgument);
            assert!(out.is_null());
            let s = paimon_cleanup_orphan_units_conclude(
                ptr::null(),
                0,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null_mut(),
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);

            // Gate and shard decisions need an executor.
            let mut gate: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut decide = false;
            let s = paimon_cleanup_orphan_units_gate(
                ptr::null(),
                ptr::null(),
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                0,
                2,
                &mut out,
                &mut gate,
                &mut decide,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            let mut report: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut units: *mut PaimonCleanupBufferList = ptr::null_mut();
            let s = paimon_cleanup_orphan_shard_decide(
                ptr::null(),
                ptr::null(),
                ptr::null(),
                ptr::null(),
                ptr::null(),
                0,
                0,
                ptr::null(),
                0,
                &mut report,
                &mut units,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            assert!(report.is_null() && units.is_null() && gate.is_null());
        }
    }
}
