//! Partitions: `paimon_cleanup_drop_partitions` (specs as arrays of key/value arrays) and
//! `paimon_cleanup_expire_partitions` with its config handle.

use std::collections::BTreeMap;
use std::os::raw::c_char;
use std::time::Duration;

use crate::clean::shared::clock::now_millis;
use crate::clean::{
    drop_partitions, expire_partitions, preview_drop_partitions, PartitionExpireConfig,
    PartitionExpireStrategy,
};

use super::context::PaimonCleanupContext;
use super::control::PaimonCleanupRunOptions;
use super::executor::PaimonCleanupExecutor;
use super::handle::{
    free_handle, in_range, new_settings, set, settings_handle, settings_or_default, Settings,
    MAX_COUNT, MAX_DURATION_MS,
};
use super::ops::Call;
use super::report::{PaimonCleanupReport, PaimonCleanupReportKind};
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};
use super::util::{optional_str, str_arg};

/// Largest number of partition specs (and of fields per spec) one call accepts.
const MAX_SPECS: usize = 1 << 20;

/// One partition spec for `paimon_cleanup_drop_partitions`: `field_count` key/value pairs given as
/// two parallel arrays; key `i` goes with value `i`. A partition matches when every given key has
/// the given value, so a spec naming a prefix of the partition keys (`dt` of `dt, hr`) matches
/// all partitions below it.
///
/// Keys are partition key names (non-empty, unique within a spec). A value names a partition
/// *value*, read as Paimon Java's `convertSpecToInternalRow` reads it and matched against the
/// decoded partition row (never the directory name): a NULL pointer or the table's default
/// partition name (`partition.default-name`, `__DEFAULT_PARTITION__`) is a NULL value and matches
/// NULL only; for a string key any other text is that exact string, so `""` matches the empty
/// string only and `" "` one space only (Paimon writes all three to the directory
/// `k=__DEFAULT_PARTITION__`); other types are written as in the partition directory name or
/// in SQL (`2024-01-01` or `19723` for a DATE, `10`, `true`, `2024-01-02 03:04:05`), and an
/// empty text for them is `INVALID_ARGUMENT`.
/// A plain struct the caller fills (no ownership passes; the strings are copied by the call).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PaimonCleanupPartitionSpec {
    /// `field_count` NUL-terminated UTF-8 key names.
    pub keys: *const *const c_char,
    /// `field_count` NUL-terminated UTF-8 values (an element may be NULL: a NULL value; `""` is
    /// the empty string).
    pub values: *const *const c_char,
    /// Number of key/value pairs (at least 1).
    pub field_count: usize,
}

/// How `paimon_cleanup_expire_partitions` decides that a partition has expired
/// (`partition.expiration-strategy`). The numbers are stable.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaimonCleanupPartitionExpireStrategy {
    /// The time in the partition values (`values-time`, Paimon's default), read with the
    /// timestamp formatter and pattern.
    ValuesTime = 0,
    /// The last time a file was added to the partition (`update-time`).
    UpdateTime = 1,
}

/// Reads the caller's specs.
///
/// # Safety
/// `specs` must be NULL or hold `spec_count` readable specs whose arrays hold `field_count`
/// readable pointers, each NULL or NUL-terminated.
unsafe fn read_specs(
    function: &str,
    specs: *const PaimonCleanupPartitionSpec,
    spec_count: usize,
) -> Result<Vec<BTreeMap<String, Option<String>>>, FfiError> {
    if spec_count == 0 {
        return Err(FfiError::invalid_argument(format!(
            "{function}: spec_count is 0: give at least one partition"
        )));
    }
    if spec_count > MAX_SPECS {
        return Err(FfiError::invalid_argument(format!(
            "{function}: spec_count = {spec_count} is out of range (at most {MAX_SPECS})"
        )));
    }
    if specs.is_null() {
        return Err(FfiError::null_pointer(function, "specs"));
    }
    let mut out = Vec::with_capacity(spec_count);
    for i in 0..spec_count {
        // SAFETY: `specs` holds `spec_count` specs (caller's guarantee).
        let spec = unsafe { specs.add(i).read() };
        if spec.field_count == 0 {
            return Err(FfiError::invalid_argument(format!(
                "{function}: specs[{i}] is empty: it would match every partition; name at least \
                 one key"
            )));
        }
        if spec.field_count > MAX_SPECS {
            return Err(FfiError::invalid_argument(format!(
                "{function}: specs[{i}].field_count = {} is out of range",
                spec.field_count
            )));
        }
        if spec.keys.is_null() {
            return Err(FfiError::null_pointer(
                function,
                &format!("specs[{i}].keys"),
            ));
        }
        if spec.values.is_null() {
            return Err(FfiError::null_pointer(
                function,
                &format!("specs[{i}].values"),
            ));
        }
        let mut fields = BTreeMap::new();
        for j in 0..spec.field_count {
            // SAFETY: both arrays hold `field_count` pointers (caller's guarantee).
            let key_ptr = unsafe { spec.keys.add(j).read() };
            // SAFETY: as above.
            let value_ptr = unsafe { spec.values.add(j).read() };
            // SAFETY: NULL or NUL-terminated (caller's guarantee).
            let key = unsafe { str_arg(key_ptr, function, &format!("specs[{i}].keys[{j}]")) }?;
            let value = if value_ptr.is_null() {
                None
            } else {
                // SAFETY: NUL-terminated (caller's guarantee).
                Some(unsafe { str_arg(value_ptr, function, &format!("specs[{i}].values[{j}]")) }?)
            };
            if key.trim().is_empty() {
                return Err(FfiError::invalid_argument(format!(
                    "{function}: specs[{i}].keys[{j}] is empty"
                )));
            }
            if fields
                .insert(key.trim().to_owned(), value.map(str::to_owned))
                .is_some()
            {
                return Err(FfiError::invalid_argument(format!(
                    "{function}: specs[{i}] names key `{key}` more than once"
                )));
            }
        }
        out.push(fields);
    }
    Ok(out)
}

/// Drops partitions: one OVERWRITE commit marks every live data file of every partition matching
/// one of the specs deleted, and removes the partitions' index entries. Nothing is deleted from
/// storage: the files go when a later snapshot expiry expires the snapshots that still reference
/// them (so readers of older snapshots keep working). Commits publish the snapshot atomically and
/// retry on conflict.
///
/// `specs`: `spec_count` (at least 1) partition specs (see `PaimonCleanupPartitionSpec`).
/// `run_options`: may be NULL. The commit user is a fresh UUID and the commit identifier
/// `INT64_MAX` (a batch commit), as for Paimon's own `drop partition`.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller (the strings are copied). On success `*out`
/// receives a new report (`PAIMON_CLEANUP_REPORT_KIND_DROP_PARTITIONS`: the partitions dropped,
/// files / rows / bytes marked deleted, the snapshot committed), owned by the caller and released
/// with `paimon_cleanup_report_free`; on failure `*out` is left untouched and nothing is
/// committed.
/// Thread-safety: any number of host threads may call it at once; concurrent commits to one table
/// are serialized by the commit protocol.
/// Errors: `NULL_POINTER` if `context`, `executor`, `specs` (with `spec_count` > 0), `out`, a
/// spec's arrays or a key is NULL; `INVALID_UTF8`; `INVALID_ARGUMENT` for no spec, an empty spec,
/// an empty or repeated key, a key that is not a partition key, a value that cannot be of its
/// key's type, or an unpartitioned table; `UNSUPPORTED` for tables whose manifests are ORC or
/// Parquet; `CONFLICT` when the commit lost its race too many times; `NOT_FOUND`, `MALFORMED`,
/// `STORAGE`, `CANCELLED` as their names say. `*err` (when `err` is not NULL) is set to NULL on
/// success and to a new error object on failure.
///
/// # Safety
/// `context`, `executor` and `run_options` must be NULL or live handles; `specs` must be NULL or
/// hold `spec_count` readable specs, each with `field_count` readable pointers in `keys` and
/// `values`, each NULL or NUL-terminated; `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_drop_partitions(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    specs: *const PaimonCleanupPartitionSpec,
    spec_count: usize,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantee.
    unsafe {
        drop_or_preview(
            "paimon_cleanup_drop_partitions",
            false,
            (context, executor, run_options),
            specs,
            spec_count,
            out,
            err,
        )
    }
}

/// Previews `paimon_cleanup_drop_partitions`: reads the latest snapshot and reports what a drop
/// of `specs` would mark deleted (partitions, files, rows, bytes, index entries), committing
/// nothing. The report is of kind `PAIMON_CLEANUP_REPORT_KIND_DROP_PARTITIONS` with
/// `paimon_cleanup_report_dry_run` true and no snapshot. A writer committing between the preview
/// and a later drop can change what the drop marks.
///
/// Arguments, ownership, thread-safety and errors: as `paimon_cleanup_drop_partitions` (the
/// same input checks, minus the commit errors `UNSUPPORTED` and `CONFLICT`).
///
/// # Safety
/// As `paimon_cleanup_drop_partitions`.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_preview_drop_partitions(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    specs: *const PaimonCleanupPartitionSpec,
    spec_count: usize,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantee.
    unsafe {
        drop_or_preview(
            "paimon_cleanup_preview_drop_partitions",
            true,
            (context, executor, run_options),
            specs,
            spec_count,
            out,
            err,
        )
    }
}

/// The handles every operation takes: context, executor, run options (may be NULL).
type Handles = (
    *const PaimonCleanupContext,
    *const PaimonCleanupExecutor,
    *const PaimonCleanupRunOptions,
);

/// The body of `paimon_cleanup_drop_partitions` (`preview` false) and
/// `paimon_cleanup_preview_drop_partitions` (`preview` true).
///
/// # Safety
/// As `paimon_cleanup_drop_partitions`.
unsafe fn drop_or_preview(
    function: &'static str,
    preview: bool,
    (context, executor, run_options): Handles,
    specs: *const PaimonCleanupPartitionSpec,
    spec_count: usize,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call = unsafe { Call::new(function, context, executor, run_options, out) }?;
        // SAFETY: forwarded caller guarantee.
        let specs = unsafe { read_specs(function, specs, spec_count) }?;
        let report = call.run(|table, control| async move {
            // A NULL value is the table's default partition name, which names NULL.
            let default_name = table.options().partition_default_name().to_string();
            let specs: Vec<BTreeMap<String, String>> = specs
                .into_iter()
                .map(|spec| {
                    spec.into_iter()
                        .map(|(k, v)| (k, v.unwrap_or_else(|| default_name.clone())))
                        .collect()
                })
                .collect();
            if preview {
                preview_drop_partitions(&table, &specs, &control).await
            } else {
                drop_partitions(&table, &specs, None, None, &control).await
            }
        })?;
        call.deliver(PaimonCleanupReport::from_partitions(
            PaimonCleanupReportKind::DropPartitions,
            report,
        ));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(function, err, body) }
}

/// Settings of a partition expiry (`paimon_cleanup_expire_partitions`). Every field starts unset;
/// an unset field takes the table's option, then Paimon's default:
///
/// | setter | table option | default |
/// | --- | --- | --- |
/// | `_set_expiration_time_ms` | `partition.expiration-time` | none: required somewhere |
/// | `_set_strategy` | `partition.expiration-strategy` | values-time |
/// | `_set_timestamp_formatter` | `partition.timestamp-formatter` | `yyyy-MM-dd` forms |
/// | `_set_timestamp_pattern` | `partition.timestamp-pattern` | the first key's value |
/// | `_set_max_expires` | `partition.expiration-max-num` | 100 |
/// | `_set_batch_size` | `partition.expiration-batch-size` | all in one commit |
/// | `_set_dry_run` | (none) | false |
/// | `_set_now_ms` | (none) | the wall clock |
///
/// Created by `paimon_cleanup_partition_expire_config_new`, owned by the caller, released with
/// `paimon_cleanup_partition_expire_config_free`. Thread-safe (`Send + Sync`): setters may be
/// called while other threads run with the same config; a run uses the values as they were when
/// it started.
pub struct PaimonCleanupPartitionExpireConfig(Settings<PartitionExpireConfig>);

settings_handle!(
    PaimonCleanupPartitionExpireConfig,
    PartitionExpireConfig,
    "config"
);

/// `value` as a count of at least 1, or `INVALID_ARGUMENT`.
fn count(function: &str, name: &str, value: u64) -> Result<usize, FfiError> {
    // In range, so the conversion is exact.
    in_range(function, name, value, 1..=MAX_COUNT as u64).map(|n| n as usize)
}

/// The strategy a `PaimonCleanupPartitionExpireStrategy` value names, or `INVALID_ARGUMENT`.
fn strategy_of(function: &str, strategy: i32) -> Result<PartitionExpireStrategy, FfiError> {
    match strategy {
        s if s == PaimonCleanupPartitionExpireStrategy::ValuesTime as i32 => {
            Ok(PartitionExpireStrategy::ValuesTime)
        }
        s if s == PaimonCleanupPartitionExpireStrategy::UpdateTime as i32 => {
            Ok(PartitionExpireStrategy::UpdateTime)
        }
        other => Err(FfiError::invalid_argument(format!(
            "{function}: strategy = {other} is not a PaimonCleanupPartitionExpireStrategy"
        ))),
    }
}

/// Creates a partition-expire config with every field unset (table options, then defaults).
///
/// Ownership: on success `*out` receives a new config owned by the caller, released with
/// `paimon_cleanup_partition_expire_config_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
/// success and to a new error object on failure.
///
/// # Safety
/// `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_new(
    out: *mut *mut PaimonCleanupPartitionExpireConfig,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe { new_settings("paimon_cleanup_partition_expire_config_new", out, err) }
}

/// Sets the expiration time in milliseconds (`partition.expiration-time`): a partition whose time
/// (by the strategy) is older than now minus this expires.
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `expiration_time_ms` is 0
/// or above 2^63-1.
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_expiration_time_ms(
    config: *mut PaimonCleanupPartitionExpireConfig,
    expiration_time_ms: u64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_expiration_time_ms";
    let value = in_range(
        F,
        "expiration_time_ms",
        expiration_time_ms,
        1..=MAX_DURATION_MS,
    )
    .map(Duration::from_millis);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.expiration_time = Some(v)) }
}

/// Sets the strategy (`strategy`: a `PaimonCleanupPartitionExpireStrategy` value).
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` for an unknown value.
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_strategy(
    config: *mut PaimonCleanupPartitionExpireConfig,
    strategy: i32,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_strategy";
    let value = strategy_of(F, strategy);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.strategy = Some(v)) }
}

/// Sets the timestamp formatter (`partition.timestamp-formatter`): a Java `DateTimeFormatter`
/// pattern such as `yyyyMMdd` for reading the partition time of the values-time strategy. NULL
/// restores the table's option.
///
/// Ownership: the string is copied.
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_UTF8`. A pattern the library cannot use
/// is reported when the run starts (`INVALID_ARGUMENT`).
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `formatter` NULL or NUL-terminated; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_timestamp_formatter(
    config: *mut PaimonCleanupPartitionExpireConfig,
    formatter: *const c_char,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_timestamp_formatter";
    // SAFETY: NULL or NUL-terminated (caller's guarantee).
    let value = unsafe { optional_str(formatter, F, "formatter") };
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.timestamp_formatter = v) }
}

/// Sets the timestamp pattern (`partition.timestamp-pattern`): how the partition time string is
/// built from the keys, e.g. `$dt $hr:00:00`. NULL restores the table's option.
///
/// Ownership: the string is copied.
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_UTF8`. A pattern the library cannot use
/// is reported when the run starts (`INVALID_ARGUMENT`).
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `pattern` NULL or NUL-terminated; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_timestamp_pattern(
    config: *mut PaimonCleanupPartitionExpireConfig,
    pattern: *const c_char,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_timestamp_pattern";
    // SAFETY: NULL or NUL-terminated (caller's guarantee).
    let value = unsafe { optional_str(pattern, F, "pattern") };
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.timestamp_pattern = v) }
}

/// Sets the maximum number of partitions one run expires (`partition.expiration-max-num`).
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `max_expires` is not in
/// 1..=2147483647.
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_max_expires(
    config: *mut PaimonCleanupPartitionExpireConfig,
    max_expires: u64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_max_expires";
    let value = count(F, "max_expires", max_expires);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.max_expires = Some(v)) }
}

/// Sets how many partitions go into one commit (`partition.expiration-batch-size`); by default
/// all expired partitions are dropped in one commit.
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `batch_size` is not in
/// 1..=2147483647.
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_batch_size(
    config: *mut PaimonCleanupPartitionExpireConfig,
    batch_size: u64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_batch_size";
    let value = count(F, "batch_size", batch_size);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.batch_size = Some(v)) }
}

/// Sets dry-run mode: the run selects and reports the partitions it would drop and the files it
/// would mark deleted, and commits nothing.
///
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_dry_run(
    config: *mut PaimonCleanupPartitionExpireConfig,
    dry_run: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_dry_run";
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, Ok(dry_run), |s, v| s.dry_run = v) }
}

/// Sets the time expiry is measured from (milliseconds since the Unix epoch) instead of the wall
/// clock, e.g. to replay a schedule. It may not be in the future, so a clock or unit mistake
/// cannot expire recent partitions.
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `now_ms` is negative or
/// later than the wall clock.
/// Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_set_now_ms(
    config: *mut PaimonCleanupPartitionExpireConfig,
    now_ms: i64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_partition_expire_config_set_now_ms";
    let value = in_range(F, "now_ms", now_ms, 0..=now_millis());
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.now_millis = Some(v)) }
}

/// Frees a partition-expire config. NULL is accepted and ignored.
///
/// Ownership: takes back ownership of `config`. Free each config exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with any other use of the
/// same config.
///
/// # Safety
/// `config` must be NULL or a pointer from `paimon_cleanup_partition_expire_config_new` not yet
/// freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_partition_expire_config_free(
    config: *mut PaimonCleanupPartitionExpireConfig,
) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(config) }
}

/// Expires partitions: finds the partitions older than the expiration time (by the values in the
/// partition or by their last update) and drops them as `paimon_cleanup_drop_partitions` does
/// (OVERWRITE commits marking their files deleted; the files go with a later snapshot expiry).
///
/// `config`: may be NULL (every setting from the table's options; `partition.expiration-time`
/// must then be set). `run_options`: may be NULL.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_PARTITIONS`: the partitions, files / rows / bytes marked
/// deleted, the snapshots committed), owned by the caller and released with
/// `paimon_cleanup_report_free`; on failure `*out` is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `INVALID_ARGUMENT` when no
/// expiration time is set anywhere, for an unknown strategy or formatter, or an unpartitioned
/// table; otherwise as `paimon_cleanup_drop_partitions`. `*err` (when `err` is not NULL) is set to
/// NULL on success and to a new error object on failure.
///
/// # Safety
/// `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and
/// `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_partitions(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupPartitionExpireConfig,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_partitions";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call = unsafe { Call::new(F, context, executor, run_options, out) }?;
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { settings_or_default(config) };
        let report = call.run(|table, control| async move {
            expire_partitions(&table, &config, &control).await
        })?;
        call.deliver(PaimonCleanupReport::from_partitions(
            PaimonCleanupReportKind::ExpirePartitions,
            report,
        ));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}
