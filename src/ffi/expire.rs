//! Snapshot and changelog expiry: the expire-config handle, `paimon_cleanup_expire_snapshots`
//! and `paimon_cleanup_expire_changelogs`.

use std::time::Duration;

use crate::clean::{expire_changelogs, expire_snapshots, ChangelogExpireConfig, ExpireConfig};

use super::context::PaimonCleanupContext;
use super::control::PaimonCleanupRunOptions;
use super::executor::PaimonCleanupExecutor;
use super::handle::{
    free_handle, in_range, new_settings, set, settings_handle, settings_of, Settings, MAX_COUNT,
    MAX_DURATION_MS,
};
use super::ops::Call;
use super::report::PaimonCleanupReport;
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};

/// Settings of a snapshot expiry (`paimon_cleanup_expire_snapshots`) or of a long-lived
/// changelog expiry (`paimon_cleanup_expire_changelogs`).
///
/// Every field starts unset; an unset field takes the table's option (the schema's options,
/// overridden by the context's options), then Paimon's default. For a changelog expiry the
/// retention fields fall back to `changelog.num-retained.min/max` and `changelog.time-retained`
/// first, then to the snapshot options below.
///
/// | setter | table option | default | used by |
/// | --- | --- | --- | --- |
/// | `_set_retain_min` | `snapshot.num-retained.min` | 10 | both |
/// | `_set_retain_max` | `snapshot.num-retained.max` | 2147483647 | both |
/// | `_set_time_retained_ms` / `_set_older_than_ms` | `snapshot.time-retained` | 1 hour | both |
/// | `_set_max_expires` | `snapshot.expire.limit` | 50 | both |
/// | `_set_dry_run` | (none) | false | both |
/// | `_set_clean_empty_dirs` | `snapshot.clean-empty-directories` | false | snapshots |
/// | `_set_refuse_if_tags_pin` | (none) | false | snapshots |
/// | `_set_delete_all_changelogs` | (none) | false | changelogs |
///
/// Created by `paimon_cleanup_expire_config_new`, owned by the caller, released with
/// `paimon_cleanup_expire_config_free`. Thread-safe (`Send + Sync`): setters may be called while
/// other threads run operations with the same config; an operation uses the values as they were
/// when it started.
pub struct PaimonCleanupExpireConfig(Settings<ExpireSettings>);

settings_handle!(PaimonCleanupExpireConfig, ExpireSettings, "config");

/// Everything an expire config holds: the snapshot settings plus the changelog-only ones.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExpireSettings {
    snapshots: ExpireConfig,
    delete_all_changelogs: bool,
}

impl ExpireSettings {
    /// The settings of a snapshot expiry.
    pub(crate) fn snapshots(&self) -> ExpireConfig {
        self.snapshots.clone()
    }

    /// The settings of a changelog expiry.
    pub(crate) fn changelogs(&self) -> ChangelogExpireConfig {
        ChangelogExpireConfig {
            retention: self.snapshots.retention.clone(),
            delete_all: self.delete_all_changelogs,
            dry_run: self.snapshots.dry_run,
            assume_removed: Default::default(),
        }
    }
}

/// Creates an expire config with every field unset (table options, then Paimon's defaults).
///
/// Ownership: on success `*out` receives a new config owned by the caller, released with
/// `paimon_cleanup_expire_config_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
/// success and to a new error object on failure.
///
/// # Safety
/// `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_new(
    out: *mut *mut PaimonCleanupExpireConfig,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe { new_settings("paimon_cleanup_expire_config_new", out, err) }
}

/// Sets the minimum number of snapshots kept, whatever their age (`snapshot.num-retained.min`).
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `retain_min` is not in
/// 1..=2147483647 (the config is then unchanged). Whether it exceeds the maximum is checked when an operation runs.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_retain_min(
    config: *mut PaimonCleanupExpireConfig,
    retain_min: i64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_retain_min";
    let value = in_range(F, "retain_min", retain_min, 1..=MAX_COUNT);
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, value, |s, v| {
            s.snapshots.retention.retain_min = Some(v)
        })
    }
}

/// Sets the maximum number of snapshots kept, whatever their age (`snapshot.num-retained.max`):
/// older ones expire even when they are younger than the time retained.
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `retain_max` is not in
/// 1..=2147483647. Whether it
/// is at least the minimum is checked when an operation runs (`INVALID_ARGUMENT` then).
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_retain_max(
    config: *mut PaimonCleanupExpireConfig,
    retain_max: i64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_retain_max";
    let value = in_range(F, "retain_max", retain_max, 1..=MAX_COUNT);
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, value, |s, v| {
            s.snapshots.retention.retain_max = Some(v)
        })
    }
}

/// Sets how long snapshots are kept, in milliseconds (`snapshot.time-retained`): snapshots
/// committed less than `time_retained_ms` before the run starts are kept. 0 means no age
/// protection (only the minimum count protects).
///
/// The cut-off can be given either as this duration or as an absolute time
/// (`paimon_cleanup_expire_config_set_older_than_ms`); the setter called last wins.
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `time_retained_ms` is
/// above 2^63-1.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_time_retained_ms(
    config: *mut PaimonCleanupExpireConfig,
    time_retained_ms: u64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_time_retained_ms";
    let value = in_range(F, "time_retained_ms", time_retained_ms, 0..=MAX_DURATION_MS)
        .map(Duration::from_millis);
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, value, |s, v| {
            s.snapshots.retention.time_retained = Some(v);
            s.snapshots.retention.older_than_ms = None;
        })
    }
}

/// Sets an absolute cut-off instead of a duration: snapshots committed at or after
/// `older_than_ms` (milliseconds since the Unix epoch, UTC) are kept.
///
/// The setter called last of this one and `paimon_cleanup_expire_config_set_time_retained_ms`
/// wins. A cut-off in the future is refused when the operation runs (`INVALID_ARGUMENT`), so that
/// a clock or unit mistake cannot expire everything.
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `older_than_ms` < 0.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_older_than_ms(
    config: *mut PaimonCleanupExpireConfig,
    older_than_ms: i64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_older_than_ms";
    let value = in_range(F, "older_than_ms", older_than_ms, 0..);
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, value, |s, v| {
            s.snapshots.retention.older_than_ms = Some(v);
            s.snapshots.retention.time_retained = None;
        })
    }
}

/// Sets the maximum number of snapshots one run expires (`snapshot.expire.limit`); a later run
/// continues where this one stopped.
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `max_expires` is not in
/// 1..=2147483647.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_max_expires(
    config: *mut PaimonCleanupExpireConfig,
    max_expires: i64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_max_expires";
    let value = in_range(F, "max_expires", max_expires, 1..=MAX_COUNT);
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, value, |s, v| {
            s.snapshots.retention.limit = Some(v)
        })
    }
}

/// Sets whether bucket and partition directories left empty by the run are removed
/// (`snapshot.clean-empty-directories`). Never above the table's data root; never in a dry run.
///
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_clean_empty_dirs(
    config: *mut PaimonCleanupExpireConfig,
    clean_empty_dirs: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_clean_empty_dirs";
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, Ok(clean_empty_dirs), |s, v| {
            s.snapshots.clean_empty_dirs = Some(v)
        })
    }
}

/// Sets dry-run mode: the run computes everything and reports what it would delete (counts and
/// the path listing) but changes nothing at all, not even hint files.
///
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_dry_run(
    config: *mut PaimonCleanupExpireConfig,
    dry_run: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_dry_run";
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, Ok(dry_run), |s, v| s.snapshots.dry_run = v) }
}

/// Sets whether the run refuses to start (`CONFLICT`, naming the tags, nothing deleted) when a
/// tag pins a snapshot that would otherwise expire. When false (the default, as in Paimon) the
/// snapshot expires and the tag keeps the files it needs.
///
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_refuse_if_tags_pin(
    config: *mut PaimonCleanupExpireConfig,
    refuse: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_refuse_if_tags_pin";
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, Ok(refuse), |s, v| {
            s.snapshots.refuse_if_tags_pin_expired = v
        })
    }
}

/// Sets whether a changelog expiry removes every long-lived changelog older than the earliest
/// snapshot, whatever the retention (for a table whose changelog lifecycle was decoupled and no
/// longer is). Refused with `CONFLICT` when a changelog is not older than the earliest snapshot.
/// Ignored by snapshot expiry.
///
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupExpireConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_set_delete_all_changelogs(
    config: *mut PaimonCleanupExpireConfig,
    delete_all: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_config_set_delete_all_changelogs";
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, Ok(delete_all), |s, v| {
            s.delete_all_changelogs = v
        })
    }
}

/// Frees an expire config. NULL is accepted and ignored.
///
/// Operations that already started with the config are not affected (they copied it).
/// Ownership: takes back ownership of `config`. Free each config exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with any other use of the
/// same config.
///
/// # Safety
/// `config` must be NULL or a pointer from `paimon_cleanup_expire_config_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_config_free(config: *mut PaimonCleanupExpireConfig) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(config) }
}

/// Expires old snapshots of the context's branch (its `branch` option, default `main`) and
/// deletes every file only they referenced (data, changelog, manifest, manifest-list, index and
/// statistics files, then the snapshot files), in crash-safe order. A file still needed by a retained snapshot, a tag, a branch, a
/// long-lived changelog or a consumer is never deleted.
///
/// `config`: required; unset fields take the table's options (see `PaimonCleanupExpireConfig`).
/// `run_options`: may be NULL (no progress callback, no cancellation).
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS`), owned by the caller and released with
/// `paimon_cleanup_report_free`; on failure `*out` is left untouched.
/// Thread-safety: any number of host threads may call it at once with the same executor and
/// configs; two runs on the same table at once are safe for the table but the second may find
/// files already gone (they are then not counted).
/// Errors: `NULL_POINTER` if `context`, `executor`, `config` or `out` is NULL; `INVALID_ARGUMENT`
/// for an invalid combination of settings (retain max < retain min, a cut-off in the future, a bad
/// table option) or when called from a thread running an async runtime; `NOT_FOUND` if the table
/// does not exist; `CANCELLED` when the run options' token is cancelled (before the call: nothing
/// is read or deleted; during the run: it stops at its next read or delete batch, and a read
/// stuck in I/O — a hung mount, a server that does not answer — is abandoned within about 20 ms,
/// its blocked thread, if any, left to finish on its own); `CONFLICT` when `refuse_if_tags_pin` is set and a tag pins an expiring
/// snapshot, or when the snapshot to keep is missing; `MALFORMED`, `STORAGE`, `PATH_REFUSED`,
/// `UNSUPPORTED` as their names say. Individual failed deletions are not errors: they are listed
/// in the report. `*err` (when `err` is not NULL) is set to NULL on success and to a new error
/// object on failure.
///
/// # Safety
/// `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and `err`
/// must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_snapshots(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupExpireConfig,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_snapshots";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call =
            unsafe { Call::new(F, context, executor, run_options, out) }?.reads_stop_on_cancel();
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { settings_of(config, F) }?.snapshots();
        let report =
            call.run(
                |table, control| async move { expire_snapshots(&table, &config, &control).await },
            )?;
        call.deliver(PaimonCleanupReport::from_expire_snapshots(report));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Expires long-lived changelogs of the context's branch (its `branch` option, default `main`;
/// tables whose changelog lifecycle is decoupled from snapshots: `changelog.num-retained.*` /
/// `changelog.time-retained` above the snapshot values) and deletes the changelog files only they referenced. A file still needed by
/// a snapshot, a tag, a branch or a retained changelog is never deleted. On a table without
/// long-lived changelogs it succeeds with nothing expired.
///
/// `config`: required; retention fields unset take `changelog.*`, then the snapshot options (see
/// `PaimonCleanupExpireConfig`); `_set_delete_all_changelogs` removes every changelog older than
/// the earliest snapshot. `run_options`: may be NULL.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CHANGELOGS`), owned by the caller and released with
/// `paimon_cleanup_report_free`; on failure `*out` is left untouched.
/// Thread-safety: as `paimon_cleanup_expire_snapshots`.
/// Errors: as `paimon_cleanup_expire_snapshots`; `CONFLICT` also when delete-all is set and a
/// changelog is not older than the earliest snapshot. `*err` (when `err` is not NULL) is set to
/// NULL on success and to a new error object on failure.
///
/// # Safety
/// `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and `err`
/// must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_expire_changelogs(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupExpireConfig,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_expire_changelogs";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call =
            unsafe { Call::new(F, context, executor, run_options, out) }?.reads_stop_on_cancel();
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { settings_of(config, F) }?.changelogs();
        let report = call.run(|table, control| async move {
            expire_changelogs(&table, &config, &control).await
        })?;
        call.deliver(PaimonCleanupReport::from_expire_changelogs(report));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}
