//! `paimon_cleanup_maintain` and its config handle.

use crate::clean::{maintain, MaintainConfig};

use super::context::PaimonCleanupContext;
use super::control::PaimonCleanupRunOptions;
use super::executor::PaimonCleanupExecutor;
use super::handle::{
    free_handle, new_settings, set, settings_handle, settings_or_default, Settings,
};
use super::ops::Call;
use super::report::PaimonCleanupReport;
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};

/// Settings of `paimon_cleanup_maintain`. Everything else comes from the table's options.
///
/// Created by `paimon_cleanup_maintain_config_new`, owned by the caller, released with
/// `paimon_cleanup_maintain_config_free`. Thread-safe (`Send + Sync`): setters may be called
/// while other threads run with the same config; a run uses the values as they were when it
/// started.
pub struct PaimonCleanupMaintainConfig(Settings<MaintainConfig>);

settings_handle!(PaimonCleanupMaintainConfig, MaintainConfig, "config");

/// Creates a maintain config with the defaults (not a dry run).
///
/// Ownership: on success `*out` receives a new config owned by the caller, released with
/// `paimon_cleanup_maintain_config_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
/// success and to a new error object on failure.
///
/// # Safety
/// `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_maintain_config_new(
    out: *mut *mut PaimonCleanupMaintainConfig,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe { new_settings("paimon_cleanup_maintain_config_new", out, err) }
}

/// Sets dry-run mode: every step computes and reports what it would do, nothing is changed.
///
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupMaintainConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_maintain_config_set_dry_run(
    config: *mut PaimonCleanupMaintainConfig,
    dry_run: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_maintain_config_set_dry_run";
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, Ok(dry_run), |s, v| s.dry_run = v) }
}

/// Frees a maintain config. NULL is accepted and ignored.
///
/// Ownership: takes back ownership of `config`. Free each config exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with any other use of the
/// same config.
///
/// # Safety
/// `config` must be NULL or a pointer from `paimon_cleanup_maintain_config_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_maintain_config_free(
    config: *mut PaimonCleanupMaintainConfig,
) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(config) }
}

/// Runs the maintenance the table's own options ask for, in Paimon's order: tag expiry (tags
/// whose retention passed), consumer expiry (when `consumer.expiration-time` is set), snapshot
/// expiry (`snapshot.*` retention), changelog expiry (when the changelog lifecycle is decoupled).
/// The natural single call for an engine after each commit or on a schedule.
///
/// `config`: may be NULL (the defaults: not a dry run). `run_options`: may be NULL; its progress
/// callback and cancellation token serve every step.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
/// A failing step stops the run with its error; the steps before it keep their effect.
///
/// Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_MAINTAIN`; one sub-report per step that ran, see
/// `paimon_cleanup_report_step`), owned by the caller and released with
/// `paimon_cleanup_report_free`; on failure `*out` is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; otherwise the errors of the
/// steps (see `paimon_cleanup_expire_snapshots`). `*err` (when `err` is not NULL) is set to NULL
/// on success and to a new error object on failure.
///
/// # Safety
/// `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and
/// `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_maintain(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupMaintainConfig,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_maintain";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call = unsafe { Call::new(F, context, executor, run_options, out) }?;
        // SAFETY: NULL or live (caller's guarantee).
        let config = unsafe { settings_or_default(config) };
        let report =
            call.run(|table, control| async move { maintain(&table, &config, &control).await })?;
        call.deliver(PaimonCleanupReport::from_maintain(report));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}
