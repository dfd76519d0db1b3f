//! Snapshot expiry as units an engine schedules (plan / execute / merge / protect / decide /
//! finish). Units, partial results, plan states and decisions are opaque, versioned byte
//! strings handed out in the buffers of orphan removal as units ([`PaimonCleanupBuffer`],
//! [`PaimonCleanupBufferList`]).

use std::os::raw::c_char;

use crate::clean::expiry::units;

use super::context::options_arg;
use super::context::PaimonCleanupContext;
use super::control::PaimonCleanupRunOptions;
use super::executor::PaimonCleanupExecutor;
use super::expire::PaimonCleanupExpireConfig;
use super::handle::{hand_out, settings_of};
use super::ops::run_on;
use super::report::PaimonCleanupReport;
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};
use super::units::{
    buffer, buffer_list, byte_strings_arg, bytes_arg, driver_call, execute_unit, finish_units,
    merge_partials, split_partial, PaimonCleanupBuffer, PaimonCleanupBufferList, TwoOuts,
};
use super::util::{handle_ref, out_arg};

/// Plans a snapshot expiry of the context's branch as units (on the driver): resolves the
/// retention (the rules of `paimon_cleanup_expire_snapshots`), picks the snapshots to expire
/// (reads only) and returns the plan state and the candidate units, each "read these delta (or
/// changelog) manifest lists and return the files they free".
///
/// Then: execute every unit with `paimon_cleanup_expiry_unit_execute` (anywhere, any order),
/// merge the results with `paimon_cleanup_expiry_partials_merge`, call
/// `paimon_cleanup_expiry_units_protect`, execute and merge its protect units, call
/// `paimon_cleanup_expiry_units_decide`, execute and merge its delete units, and call
/// `paimon_cleanup_expiry_units_finish`. The result equals `paimon_cleanup_expire_snapshots`.
///
/// `config`: required (as for `paimon_cleanup_expire_snapshots`). `run_options`: may be NULL.
/// Blocks the calling thread; the work runs on `executor`.
///
/// Ownership: on success `*out_state` receives a new buffer and `*out_units` a new list, owned
/// by the caller (free with `paimon_cleanup_buffer_free` / `paimon_cleanup_buffer_list_free`);
/// on failure both are left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor`, `config`, `out_state` or `out_units` is
/// NULL; `INVALID_ARGUMENT` for bad retention values; `NOT_FOUND` if the table does not exist;
/// `CONFLICT` (tags pin expired snapshots with `_set_refuse_if_tags_pin`, or the first kept
/// snapshot is missing); `MALFORMED` / `STORAGE` reading the snapshots; `CANCELLED`. `*err`
/// (when `err` is not NULL) is set to NULL on success and to a new error object on failure.
///
/// # Safety
/// Handles must be NULL or live; out-parameters and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_units_plan(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupExpireConfig,
    run_options: *const PaimonCleanupRunOptions,
    out_state: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_units_plan";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or writable (caller's guarantee).
        let outs = unsafe { TwoOuts::new(F, (out_state, "out_state"), (out_units, "out_units")) }?;
        // SAFETY: NULL or live handles (caller's guarantee).
        let call = unsafe { driver_call(F, context, executor, run_options) }?;
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { settings_of(config, F) }?.snapshots();
        let planned =
            call.run(|table, control| async move { units::plan(&table, &config, &control).await })?;
        outs.deliver(planned.state, buffer_list(planned.units));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Executes one unit of snapshot expiry (a candidate, protect or delete unit) on any host:
/// opens the table's branch from the table URI, branch and options the unit carries, with the
/// host's options added (they win; units never carry credentials — option keys naming secrets,
/// tokens, passwords or access keys are left out when planning — so pass them here), and
/// returns the unit's partial result.
///
/// `unit` / `unit_len`: a unit from `paimon_cleanup_expiry_units_plan`, `_protect` or
/// `_decide`. `option_keys` / `option_values`: `option_count` NUL-terminated UTF-8 strings each
/// (both may be NULL when the count is 0). `run_options`: may be NULL (its token cancels; the
/// reads of a candidate or protect unit stop at once). The I/O concurrency is the executor's.
/// Candidate and protect units only read: a failed, cancelled or repeated one changes nothing.
/// A delete unit checks every path again (roots, kind, no symlinked directory) before its
/// first deletion; files it cannot delete are reported in its result, and finish then stops
/// before the metadata that names them.
///
/// Ownership: the caller keeps its arguments. On success `*out` receives a new buffer owned by
/// the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
/// Thread-safety: any number of host threads may call it at once, with one executor.
/// Errors: `NULL_POINTER` for a NULL `executor`, `out`, unit bytes or option array;
/// `INVALID_UTF8`; `INVALID_ARGUMENT` for bytes that are not a unit of this library's format
/// version, an empty or duplicate key; `NOT_FOUND` / `STORAGE` opening the table; `MALFORMED` /
/// `NOT_FOUND` / `STORAGE` when a protect unit cannot read metadata a protector needs;
/// `PATH_REFUSED` for a delete unit naming a path outside the table's roots or of the wrong
/// kind; `CANCELLED`. `*err` as usual.
///
/// # Safety
/// `unit` must be NULL or point to `unit_len` readable bytes; each option array NULL or
/// `option_count` readable pointers to NUL-terminated strings; handles NULL or live; `out` and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_unit_execute(
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
    const F: &str = "paimon_cleanup_expiry_unit_execute";
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

/// `paimon_cleanup_expiry_unit_execute` for any unit, including the delete units of a gate
/// that hands the freed paths to the tasks (`paimon_cleanup_expiry_units_gate_with_paths`
/// with `paths_to_tasks`): their result holds the files and bytes deleted per class, every
/// failure (path and error) and the first 20 deleted paths, and `*out_paths` lists every path
/// the unit deleted, one buffer each (UTF-8, as the report shows paths, not NUL-terminated), in
/// the order deleted, for the task to keep where it wants. For every other unit `*out_paths`
/// is an empty list and `*out` is what `paimon_cleanup_expiry_unit_execute` returns.
///
/// Ownership: the caller keeps its arguments. On success `*out` receives a new buffer and
/// `*out_paths` a new list, owned by the caller (`paimon_cleanup_buffer_free`,
/// `paimon_cleanup_buffer_list_free`); on failure both are left untouched.
/// Thread-safety and errors: as `paimon_cleanup_expiry_unit_execute` (`NULL_POINTER` for a
/// NULL `out_paths` too).
///
/// # Safety
/// As `paimon_cleanup_expiry_unit_execute`; `out_paths` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_unit_execute_paths(
    executor: *const PaimonCleanupExecutor,
    unit: *const u8,
    unit_len: usize,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupBuffer,
    out_paths: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_unit_execute_paths";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live (caller's guarantee).
        let executor = unsafe { handle_ref(executor, F, "executor") }?;
        // SAFETY: NULL or writable (caller's guarantee).
        let outs = unsafe { TwoOuts::new(F, (out, "out"), (out_paths, "out_paths")) }?;
        if unit_len == 0 {
            return Err(FfiError::invalid_argument(format!(
                "{F}: argument `unit` is empty"
            )));
        }
        // SAFETY: as documented.
        let unit = unsafe { bytes_arg(unit, unit_len, F, "unit") }?;
        // SAFETY: as documented.
        let options = unsafe { options_arg(F, option_keys, option_values, option_count) }?;
        // SAFETY: NULL or live (caller's guarantee).
        let run = unsafe { run_options.as_ref() };
        let uri = units::table_uri(unit)?;
        let executed = run_on(F, executor, run, &uri, |control| async move {
            units::execute_handing_paths(unit, &options, &control).await
        })?;
        let paths = executed.paths.into_iter().map(String::into_bytes).collect();
        outs.deliver(executed.result, buffer_list(paths));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Merges two partial results of snapshot-expiry units of one stage. Associative and
/// commutative (any order and grouping give identical bytes); an empty byte string (length 0,
/// pointer may be NULL) is the neutral element.
///
/// Ownership: the caller keeps `a` and `b`. On success `*out` receives a new buffer owned by
/// the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
/// Thread-safety: any thread; no executor needed (pure computation).
/// Errors: `NULL_POINTER` for a NULL `out` or a NULL pointer with a non-zero length;
/// `INVALID_ARGUMENT` for bytes that are not a partial result of this format version, results
/// of two different plans or stages, or a unit's result included in both. `*err` as usual.
///
/// # Safety
/// `a` / `b` must be NULL or point to `a_len` / `b_len` readable bytes; `out` and `err` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_partials_merge(
    a: *const u8,
    a_len: usize,
    b: *const u8,
    b_len: usize,
    out: *mut *mut PaimonCleanupBuffer,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_partials_merge";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe { merge_partials(F, a, a_len, b, b_len, out, units::merge) };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// After the candidate units (on the driver): rebuilds the candidates in plan order from
/// `candidates` (every candidate unit's result, merged), reads the removed snapshots' metadata
/// and every version that protects files (retained snapshots, tags of every branch, other
/// branches, long-lived changelogs), and returns the new plan state and the protect units, each
/// "read these protectors and return which candidates they still need". Nothing is deleted.
///
/// `state`: `*out_state` of `paimon_cleanup_expiry_units_plan`.
///
/// Ownership: the caller keeps its arguments. On success `*out_state` receives a new buffer
/// (pass it to `_decide`) and `*out_units` a new list, owned by the caller; on failure both are
/// left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, bytes of another table or a
/// missing unit result; `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a protector needs
/// cannot be read (nothing deleted); `CANCELLED`. `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_units_protect(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
    state: *const u8,
    state_len: usize,
    candidates: *const u8,
    candidates_len: usize,
    out_state: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_units_protect";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or writable (caller's guarantee).
        let outs = unsafe { TwoOuts::new(F, (out_state, "out_state"), (out_units, "out_units")) }?;
        // SAFETY: as documented.
        let state = unsafe { bytes_arg(state, state_len, F, "state") }?;
        // SAFETY: as documented.
        let candidates = unsafe { bytes_arg(candidates, candidates_len, F, "candidates") }?;
        // SAFETY: NULL or live handles (caller's guarantee).
        let call = unsafe { driver_call(F, context, executor, run_options) }?;
        let planned = call.run(|table, control| async move {
            units::protect(&table, &control, state, candidates).await
        })?;
        outs.deliver(planned.state, buffer_list(planned.units));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// After the protect units (on the driver): builds the deletion plan of
/// `paimon_cleanup_expire_snapshots` from the candidates and the protected keys, checks every
/// path of it (roots, kinds, no symlinked directory), and returns the decision and the delete
/// units (batches of data and changelog files; none in a dry run). Nothing is deleted.
///
/// `state`: `*out_state` of `_protect`. `candidates`: the merged candidate results given to
/// `_protect`. `protected`: every protect unit's result, merged (length 0 when `_protect`
/// returned no unit).
///
/// Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
/// and `*out_units` a new list, owned by the caller; on failure both are left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing result;
/// `CONFLICT` when the removed snapshots' metadata changed since `_protect`; `PATH_REFUSED`;
/// `NOT_FOUND` / `MALFORMED` / `STORAGE` reading the protectors' metadata; `CANCELLED`.
/// `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_units_decide(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
    state: *const u8,
    state_len: usize,
    candidates: *const u8,
    candidates_len: usize,
    protected: *const u8,
    protected_len: usize,
    out_decision: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_units_decide";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or writable (caller's guarantee).
        let outs =
            unsafe { TwoOuts::new(F, (out_decision, "out_decision"), (out_units, "out_units")) }?;
        // SAFETY: as documented.
        let state = unsafe { bytes_arg(state, state_len, F, "state") }?;
        // SAFETY: as documented.
        let candidates = unsafe { bytes_arg(candidates, candidates_len, F, "candidates") }?;
        // SAFETY: as documented.
        let protected = unsafe { bytes_arg(protected, protected_len, F, "protected") }?;
        // SAFETY: NULL or live handles (caller's guarantee).
        let call = unsafe { driver_call(F, context, executor, run_options) }?;
        let decided = call.run(|table, control| async move {
            units::decide(&table, &control, state, candidates, protected).await
        })?;
        outs.deliver(decided.decision, buffer_list(decided.units));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Finishes a snapshot expiry run as units (on the driver), after every delete unit: if a
/// delete unit could not delete a file, fails with `STORAGE` before deleting the metadata that
/// names it (a rerun finishes); otherwise removes emptied directories, deletes the manifests,
/// index files, statistics and lists, then the snapshot files, writes the `EARLIEST` hint and
/// returns the report `paimon_cleanup_expire_snapshots` returns.
///
/// `decision`: `*out_decision` of `_decide`. `merged`: every delete unit's result, merged
/// (length 0 when `_decide` returned no unit).
///
/// Ownership: the caller keeps its arguments. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS`), released with `paimon_cleanup_report_free`;
/// on failure it is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing delete unit
/// result; `STORAGE` when a deletion failed; `PATH_REFUSED`; `NOT_FOUND` if the table does not
/// exist; `CANCELLED`. `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; `out` and `err` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_units_finish(
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
    const F: &str = "paimon_cleanup_expiry_units_finish";
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
            PaimonCleanupReport::from_expire_snapshots,
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Splits a candidate unit's result (or several merged) into its summary and `shards` pieces
/// (1 to 65,536) for the sharded decision: piece `i` holds the candidates whose directory is
/// in shard `i` (a file, its extra files and every candidate at the same location share one).
/// The engine shuffles the pieces by shard (merging each shard's pieces with
/// `paimon_cleanup_expiry_partials_merge`) and merges the summaries for the driver
/// (`paimon_cleanup_expiry_units_gate`).
///
/// Ownership: the caller keeps `partial`. On success `*out_summary` receives a new buffer and
/// `*out_shards` a new list of `shards` buffers (buffer `i` is shard `i`), owned by the
/// caller; on failure both are left untouched.
/// Thread-safety: any thread; no executor needed (pure computation).
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for a shard count out of range, bytes that are
/// not a whole result of candidate units of this format version (a result already split, a
/// protect or delete unit's result). `*err` as usual.
///
/// # Safety
/// `partial` NULL or readable for `partial_len` bytes; out-parameters and `err` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_partial_split(
    partial: *const u8,
    partial_len: usize,
    shards: u32,
    out_summary: *mut *mut PaimonCleanupBuffer,
    out_shards: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_partial_split";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        split_partial(
            F,
            partial,
            partial_len,
            shards,
            out_summary,
            out_shards,
            |p, n| units::split(p, n).map(|split| (split.summary, split.pieces)),
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// The gate of the sharded decision (on the driver), instead of `_protect` and `_decide`:
/// with every candidate unit's summary merged (`summary`, split into `shards`), reads the
/// removed snapshots' metadata and every version that protects files, decides and checks the
/// manifests, lists, index files, statistics and snapshot files the expiry deletes, and
/// returns the decision so far (for `paimon_cleanup_expiry_units_conclude`) and the gate every
/// shard decides with (`paimon_cleanup_expiry_shard_decide`): it holds the protectors, in
/// proportion to snapshots and tags, not to files. Nothing is deleted.
///
/// `state`: `*out_state` of `paimon_cleanup_expiry_units_plan`.
///
/// Ownership: the caller keeps its arguments. On success `*out_decision` and `*out_gate`
/// receive new buffers owned by the caller; on failure both are left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, bytes of another table, a
/// missing or doubled summary, summaries of another shard count or a shard count out of range;
/// `PATH_REFUSED`; `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata cannot be read (nothing
/// deleted); `CANCELLED`. `*err` as usual.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_units_gate(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
    state: *const u8,
    state_len: usize,
    summary: *const u8,
    summary_len: usize,
    shards: u32,
    out_decision: *mut *mut PaimonCleanupBuffer,
    out_gate: *mut *mut PaimonCleanupBuffer,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_units_gate";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        gate_call(
            F,
            (context, executor, run_options),
            (state, state_len),
            (summary, summary_len),
            shards,
            units::Paths::InResults,
            (out_decision, out_gate),
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// `paimon_cleanup_expiry_units_gate`, with `paths_to_tasks` choosing where the freed data and
/// changelog paths go. `false`: exactly `_gate`. `true`: each path goes to the task that freed
/// it, and only counts come back to the driver — every shard decides with
/// `paimon_cleanup_expiry_shard_decide_paths` (in a dry run its `*out_paths` lists the paths
/// the shard would delete), every delete unit runs with
/// `paimon_cleanup_expiry_unit_execute_paths` (its `*out_paths` lists the paths it deleted;
/// `paimon_cleanup_expiry_unit_execute` refuses such a unit), and the shard reports and delete
/// results carry files and bytes per class, every failure (path and error) and the first 20
/// paths instead of every path. The report of `paimon_cleanup_expiry_units_finish` then has
/// the counts and failures of `paimon_cleanup_expire_snapshots`, but its path list holds those
/// 20 and the metadata files the driver deleted, and its JSON says `"paths_elsewhere": true`
/// (under `"deletion"`). The choice travels in the gate and the decision.
///
/// Ownership, thread-safety and errors: as `paimon_cleanup_expiry_units_gate`.
///
/// # Safety
/// Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_units_gate_with_paths(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    run_options: *const PaimonCleanupRunOptions,
    state: *const u8,
    state_len: usize,
    summary: *const u8,
    summary_len: usize,
    shards: u32,
    paths_to_tasks: bool,
    out_decision: *mut *mut PaimonCleanupBuffer,
    out_gate: *mut *mut PaimonCleanupBuffer,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_units_gate_with_paths";
    let paths = if paths_to_tasks {
        units::Paths::ToTasks
    } else {
        units::Paths::InResults
    };
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        gate_call(
            F,
            (context, executor, run_options),
            (state, state_len),
            (summary, summary_len),
            shards,
            paths,
            (out_decision, out_gate),
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// The handles of a driver step.
type DriverHandles = (
    *const PaimonCleanupContext,
    *const PaimonCleanupExecutor,
    *const PaimonCleanupRunOptions,
);

/// The body of both gate calls.
///
/// # Safety
/// As the gate calls document.
unsafe fn gate_call(
    function: &'static str,
    (context, executor, run_options): DriverHandles,
    (state, state_len): (*const u8, usize),
    (summary, summary_len): (*const u8, usize),
    shards: u32,
    paths: units::Paths,
    (out_decision, out_gate): (*mut *mut PaimonCleanupBuffer, *mut *mut PaimonCleanupBuffer),
) -> Result<(), FfiError> {
    // SAFETY: NULL or writable (caller's guarantee).
    let outs = unsafe {
        TwoOuts::new(
            function,
            (out_decision, "out_decision"),
            (out_gate, "out_gate"),
        )
    }?;
    // SAFETY: as documented.
    let state = unsafe { bytes_arg(state, state_len, function, "state") }?;
    // SAFETY: as documented.
    let summary = unsafe { bytes_arg(summary, summary_len, function, "summary") }?;
    // SAFETY: NULL or live handles (caller's guarantee).
    let call = unsafe { driver_call(function, context, executor, run_options) }?;
    let gated = call.run(|table, control| async move {
        units::gate_with(&table, &control, state, summary, shards, paths).await
    })?;
    outs.deliver(gated.decision, buffer(gated.gate));
    Ok(())
}

/// Decides one shard of the sharded decision on any host: `piece` is every candidate unit's
/// piece of shard `shard` merged (checked complete, each unit once), `gate` the gate's bytes.
/// Opens the table from the gate with the host's options added (they win: pass the
/// credentials here), decides the shard's data and changelog files exactly as
/// `paimon_cleanup_expire_snapshots` does (reading every protector's manifests for the shard's
/// candidates), checks every one of them (roots, kinds, no symlinked directory) and returns
/// the shard's report (for `_conclude`) and its delete units (none in a dry run), executed
/// with `paimon_cleanup_expiry_unit_execute`. Nothing is deleted by this call.
///
/// `option_keys` / `option_values`: `option_count` NUL-terminated UTF-8 strings each (both
/// may be NULL when the count is 0). `run_options`: may be NULL.
///
/// Ownership: the caller keeps its arguments. On success `*out_report` receives a new buffer
/// and `*out_units` a new list, owned by the caller; on failure both are left untouched.
/// Thread-safety: any number of host threads may call it at once, with one executor.
/// Errors: `NULL_POINTER`; `INVALID_UTF8`; `INVALID_ARGUMENT` for foreign bytes, another
/// shard's piece, a piece missing a unit or a shard out of range; `PATH_REFUSED`;
/// `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a protector needs cannot be read;
/// `CANCELLED`. `*err` as usual.
///
/// # Safety
/// Byte pointers NULL or readable for their lengths; each option array NULL or `option_count`
/// readable pointers to NUL-terminated strings; handles NULL or live; out-parameters and `err`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_shard_decide(
    executor: *const PaimonCleanupExecutor,
    gate: *const u8,
    gate_len: usize,
    shard: u32,
    piece: *const u8,
    piece_len: usize,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    run_options: *const PaimonCleanupRunOptions,
    out_report: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_shard_decide";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        decide_shard_call(
            F,
            executor,
            (gate, gate_len),
            shard,
            (piece, piece_len),
            (option_keys, option_values, option_count),
            run_options,
            (out_report, out_units),
            None,
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// `paimon_cleanup_expiry_shard_decide`, also handing out the paths the shard frees when the
/// gate hands them to the tasks (`paimon_cleanup_expiry_units_gate_with_paths` with
/// `paths_to_tasks`): in a dry run `*out_paths` lists every path the shard would delete, one
/// buffer each (UTF-8, as the report shows paths, not NUL-terminated), in the single-process
/// order; otherwise (a real run, whose delete units hand out their paths, or another gate) it
/// is an empty list. The shard's report then holds counts and a sample, not the paths.
///
/// Ownership: the caller keeps its arguments. On success `*out_report`, `*out_units` and
/// `*out_paths` receive new objects owned by the caller (free the lists with
/// `paimon_cleanup_buffer_list_free`); on failure all three are left untouched.
/// Thread-safety and errors: as `paimon_cleanup_expiry_shard_decide` (`NULL_POINTER` for a
/// NULL `out_paths` too).
///
/// # Safety
/// As `paimon_cleanup_expiry_shard_decide`; `out_paths` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_shard_decide_paths(
    executor: *const PaimonCleanupExecutor,
    gate: *const u8,
    gate_len: usize,
    shard: u32,
    piece: *const u8,
    piece_len: usize,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    run_options: *const PaimonCleanupRunOptions,
    out_report: *mut *mut PaimonCleanupBuffer,
    out_units: *mut *mut PaimonCleanupBufferList,
    out_paths: *mut *mut PaimonCleanupBufferList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_shard_decide_paths";
    // SAFETY: the arguments as documented (caller's guarantee).
    let body = || unsafe {
        decide_shard_call(
            F,
            executor,
            (gate, gate_len),
            shard,
            (piece, piece_len),
            (option_keys, option_values, option_count),
            run_options,
            (out_report, out_units),
            Some(out_paths),
        )
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Host options as C arrays: keys, values, count.
type OptionArrays = (*const *const c_char, *const *const c_char, usize);

/// The body of both shard decisions; `out_paths` only for the one that hands paths out.
///
/// # Safety
/// As the shard decisions document.
#[allow(clippy::too_many_arguments)]
unsafe fn decide_shard_call(
    function: &'static str,
    executor: *const PaimonCleanupExecutor,
    (gate, gate_len): (*const u8, usize),
    shard: u32,
    (piece, piece_len): (*const u8, usize),
    (option_keys, option_values, option_count): OptionArrays,
    run_options: *const PaimonCleanupRunOptions,
    (out_report, out_units): (
        *mut *mut PaimonCleanupBuffer,
        *mut *mut PaimonCleanupBufferList,
    ),
    out_paths: Option<*mut *mut PaimonCleanupBufferList>,
) -> Result<(), FfiError> {
    // SAFETY: NULL or live (caller's guarantee).
    let executor = unsafe { handle_ref(executor, function, "executor") }?;
    // SAFETY: NULL or writable (caller's guarantee).
    let outs = unsafe {
        TwoOuts::new(
            function,
            (out_report, "out_report"),
            (out_units, "out_units"),
        )
    }?;
    let out_paths = out_paths
        .map(|p| out_arg(p, function, "out_paths"))
        .transpose()?;
    // SAFETY: as documented.
    let gate = unsafe { bytes_arg(gate, gate_len, function, "gate") }?;
    // SAFETY: as documented.
    let piece = unsafe { bytes_arg(piece, piece_len, function, "piece") }?;
    // SAFETY: as documented.
    let options = unsafe { options_arg(function, option_keys, option_values, option_count) }?;
    // SAFETY: NULL or live (caller's guarantee).
    let run = unsafe { run_options.as_ref() };
    let uri = units::gate_table_uri(gate)?;
    let decided = run_on(function, executor, run, &uri, |control| async move {
        units::decide_shard(gate, shard, piece, &options, &control).await
    })?;
    if let Some(out_paths) = out_paths {
        let paths = decided.paths.into_iter().map(String::into_bytes).collect();
        // SAFETY: checked non-NULL and writable.
        unsafe { hand_out(out_paths, buffer_list(paths)) };
    }
    outs.deliver(decided.report, buffer_list(decided.units));
    Ok(())
}

/// Concludes the sharded decision (on the driver): with the decision of `_gate` and the report
/// of every shard, each exactly once (a missing, doubled or foreign report is refused),
/// returns the decision for `paimon_cleanup_expiry_units_finish`, which then takes every delete
/// unit's result, merged, and deletes the metadata in the crash-safe order.
///
/// `reports` / `report_lens`: `count` byte strings (NULL for `count` 0).
///
/// Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
/// owned by the caller; on failure it is left untouched.
/// Thread-safety: any thread; no executor needed (pure computation).
/// Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, a decision concluded already
/// or a missing, doubled or foreign shard report. `*err` as usual.
///
/// # Safety
/// Byte pointers NULL or readable for their lengths; `reports` and `report_lens` NULL or
/// readable for `count` items; `out_decision` and `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expiry_units_conclude(
    decision: *const u8,
    decision_len: usize,
    reports: *const *const u8,
    report_lens: *const usize,
    count: usize,
    out_decision: *mut *mut PaimonCleanupBuffer,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expiry_units_conclude";
    let body = || -> Result<(), FfiError> {
        let out_decision = out_arg(out_decision, F, "out_decision")?;
        // SAFETY: as documented.
        let decision = unsafe { bytes_arg(decision, decision_len, F, "decision") }?;
        // SAFETY: as documented.
        let all = unsafe { byte_strings_arg(reports, report_lens, count, F, "reports") }?;
        let concluded = units::conclude(decision, &all)?;
        // SAFETY: checked non-NULL and writable.
        unsafe { hand_out(out_decision, buffer(concluded)) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{paimon_cleanup_buffer_free, paimon_cleanup_buffer_len};
    use crate::ffi::{
        paimon_cleanup_error_free, paimon_cleanup_executor_free, paimon_cleanup_executor_new,
    };
    use std::ptr;

    #[test]
    fn merge_and_argument_checks() {
        // SAFETY: every pointer below is NULL, a live handle or a local out-parameter.
        unsafe {
            let mut out: *mut PaimonCleanupBuffer = ptr::null_mut();
            let s = paimon_cleanup_expiry_partials_merge(
                ptr::null(),
                0,
                ptr::null(),
                0,
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::Ok);
            assert_eq!(paimon_cleanup_buffer_len(out), 0);
            paimon_cleanup_buffer_free(out);

            let mut err = ptr::null_mut();
            let mut out: *mut PaimonCleanupBuffer = ptr::null_mut();
            let s = paimon_cleanup_expiry_partials_merge(
                b"nope".as_ptr(),
                4,
                b"nope".as_ptr(),
                4,
                &mut out,
                &mut err,
            );
            assert_eq!(s, PaimonCleanupStatus::InvalidArgument);
            assert!(out.is_null() && !err.is_null());
            paimon_cleanup_error_free(err);
            let s = paimon_cleanup_expiry_partials_merge(
                ptr::null(),
                3,
                ptr::null(),
                0,
                &mut out,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);

            let s = paimon_cleanup_expiry_unit_execute(
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
            // An orphan-removal unit is not an expiry unit.
            let s = paimon_cleanup_expiry_unit_execute(
                exec,
                b"PCOU\x03\x01{}".as_ptr(),
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
    fn the_calls_handing_paths_out_check_their_arguments() {
        // SAFETY: every pointer below is NULL, a live handle or a local out-parameter.
        unsafe {
            let mut exec = ptr::null_mut();
            assert_eq!(
                paimon_cleanup_executor_new(1, &mut exec, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            let mut out: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut paths: *mut PaimonCleanupBufferList = ptr::null_mut();
            // A NULL `out_paths`, then bytes that are not a unit.
            let s = paimon_cleanup_expiry_unit_execute_paths(
                exec,
                b"x".as_ptr(),
                1,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                &mut out,
                ptr::null_mut(),
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            let s = paimon_cleanup_expiry_unit_execute_paths(
                exec,
                b"PCOU\x03\x01{}".as_ptr(),
                8,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                &mut out,
                &mut paths,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::InvalidArgument);
            assert!(out.is_null() && paths.is_null());
            let mut report = ptr::null_mut();
            let mut units = ptr::null_mut();
            for out_paths in [ptr::null_mut(), &mut paths as *mut _] {
                let s = paimon_cleanup_expiry_shard_decide_paths(
                    exec,
                    b"PCEU\x02\x05xxxxxxxx".as_ptr(),
                    14,
                    0,
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null(),
                    0,
                    ptr::null(),
                    &mut report,
                    &mut units,
                    out_paths,
                    ptr::null_mut(),
                );
                let want = if out_paths.is_null() {
                    PaimonCleanupStatus::NullPointer
                } else {
                    PaimonCleanupStatus::InvalidArgument
                };
                assert_eq!(s, want);
                assert!(report.is_null() && units.is_null() && paths.is_null());
            }
            let mut decision = ptr::null_mut();
            let mut gate = ptr::null_mut();
            let s = paimon_cleanup_expiry_units_gate_with_paths(
                ptr::null(),
                exec,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                0,
                2,
                true,
                &mut decision,
                &mut gate,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            assert!(decision.is_null() && gate.is_null());
            paimon_cleanup_executor_free(exec);
        }
    }

    #[test]
    fn sharded_calls_check_their_arguments() {
        // SAFETY: every pointer below is NULL, a live handle or a local out-parameter.
        unsafe {
            let mut summary: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut shards: *mut PaimonCleanupBufferList = ptr::null_mut();
            // Not a partial result; a shard count of 0; a NULL out-parameter.
            for (bytes, n, want) in [
                (&b"nope"[..], 2, PaimonCleanupStatus::InvalidArgument),
                (
                    &b"PCEU\x01\x02"[..],
                    0,
                    PaimonCleanupStatus::InvalidArgument,
                ),
            ] {
                let s = paimon_cleanup_expiry_partial_split(
                    bytes.as_ptr(),
                    bytes.len(),
                    n,
                    &mut summary,
                    &mut shards,
                    ptr::null_mut(),
                );
                assert_eq!(s, want);
                assert!(summary.is_null() && shards.is_null());
            }
            let s = paimon_cleanup_expiry_partial_split(
                ptr::null(),
                0,
                2,
                ptr::null_mut(),
                &mut shards,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);

            let mut decision: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut err = ptr::null_mut();
            let s = paimon_cleanup_expiry_units_conclude(
                b"nope".as_ptr(),
                4,
                ptr::null(),
                ptr::null(),
                0,
                &mut decision,
                &mut err,
            );
            assert_eq!(s, PaimonCleanupStatus::InvalidArgument);
            assert!(decision.is_null() && !err.is_null());
            paimon_cleanup_error_free(err);
            // Reports counted but not given.
            let s = paimon_cleanup_expiry_units_conclude(
                b"nope".as_ptr(),
                4,
                ptr::null(),
                ptr::null(),
                2,
                &mut decision,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);

            let report: *mut PaimonCleanupBuffer = ptr::null_mut();
            let mut units: *mut PaimonCleanupBufferList = ptr::null_mut();
            let decide = |exec, gate: &[u8]| {
                let mut report = ptr::null_mut();
                let mut units = ptr::null_mut();
                let s = paimon_cleanup_expiry_shard_decide(
                    exec,
                    gate.as_ptr(),
                    gate.len(),
                    0,
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null(),
                    0,
                    ptr::null(),
                    &mut report,
                    &mut units,
                    ptr::null_mut(),
                );
                assert!(report.is_null() && units.is_null());
                s
            };
            assert_eq!(decide(ptr::null(), b"x"), PaimonCleanupStatus::NullPointer);
            let mut exec = ptr::null_mut();
            assert_eq!(
                paimon_cleanup_executor_new(1, &mut exec, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            // Not a gate.
            assert_eq!(
                decide(exec, b"PCEU\x01\x01xxxxxxxx"),
                PaimonCleanupStatus::InvalidArgument
            );
            let s = paimon_cleanup_expiry_shard_decide(
                exec,
                b"x".as_ptr(),
                1,
                0,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
                &mut units,
                ptr::null_mut(),
            );
            assert_eq!(s, PaimonCleanupStatus::NullPointer);
            assert!(report.is_null() && units.is_null());
            paimon_cleanup_executor_free(exec);
        }
    }
}
