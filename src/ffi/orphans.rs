//! Orphan-file removal: the orphan-config handle (with the veto callback) and
//! `paimon_cleanup_remove_orphan_files`.

use std::ffi::{c_void, CString};
use std::os::raw::c_char;
use std::sync::{Arc, Mutex, PoisonError};

use crate::clean::orphans::VetoFn;
use crate::clean::{remove_orphan_files, OrphanConfig};
use crate::storage::Location;

use super::callback::CCallback;
use super::context::PaimonCleanupContext;
use super::control::PaimonCleanupRunOptions;
use super::executor::PaimonCleanupExecutor;
use super::handle::{
    free_handle, in_range, new_settings, set, settings_handle, settings_of, Settings,
};
use super::ops::Call;
use super::report::PaimonCleanupReport;
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};

/// Largest listing / deletion concurrency the orphan config accepts.
const MAX_CONCURRENCY: u32 = 4096;

/// Veto callback of an orphan-file removal: return true to KEEP a file the run would otherwise
/// delete (for example a file a writer outside Paimon's metadata still needs).
///
/// Arguments: the `user_data` given to `paimon_cleanup_orphan_config_set_veto`; `path`, the file,
/// relative to the table root when it lies under it (`f1=10/bucket-0/data-….orc`,
/// `manifest/manifest-…`), else its full URI (external data paths) — the same form as the
/// report's path listing. `path` is NUL-terminated UTF-8, borrowed for the duration of the call.
///
/// Thread rules: called once per file that would be deleted, after every reference has been read
/// and before anything is deleted (also in a dry run), on the thread that called the operation or
/// on one of the executor's worker threads, never after the operation has returned. Calls of one
/// run never overlap; two runs at once may call the same callback concurrently. It must not throw
/// a C++ exception or `longjmp` out and must not call a blocking operation of this library.
pub type PaimonCleanupVetoFn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, path: *const c_char) -> bool>;

type VetoCallback = CCallback<unsafe extern "C" fn(*mut c_void, *const c_char) -> bool>;

impl VetoCallback {
    fn keep(&self, path: &str) -> bool {
        let path = CString::new(path.replace('\0', "\u{FFFD}")).unwrap_or_default();
        // SAFETY: the host guarantees the callback may be called with its user data from any
        // thread while the operation runs; `path` outlives the call.
        unsafe { (self.function)(self.user_data, path.as_ptr()) }
    }
}

/// What an orphan config holds (the veto as the host gave it; see [`OrphanSettings::config`]).
#[derive(Clone, Default)]
pub(crate) struct OrphanSettings {
    older_than_ms: Option<i64>,
    dry_run: bool,
    no_writers_running: bool,
    list_concurrency: Option<usize>,
    delete_concurrency: Option<usize>,
    veto: Option<VetoCallback>,
    external_roots_owned: bool,
}

impl OrphanSettings {
    /// The Rust settings for a table rooted at `root`.
    fn config(&self, root: Location) -> OrphanConfig {
        let veto = self.veto.map(|callback| {
            let serial = Arc::new(Mutex::new(()));
            let veto: VetoFn = Arc::new(move |loc: &Location| {
                let _guard = serial.lock().unwrap_or_else(PoisonError::into_inner);
                let shown = loc.relative_to(&root).unwrap_or(loc.as_str());
                callback.keep(shown)
            });
            veto
        });
        OrphanConfig {
            older_than_ms: self.older_than_ms,
            dry_run: self.dry_run,
            no_writers_running: self.no_writers_running,
            list_concurrency: self.list_concurrency,
            delete_concurrency: self.delete_concurrency,
            veto,
            external_roots_owned: self.external_roots_owned,
        }
    }
}

/// Settings of an orphan-file removal (`paimon_cleanup_remove_orphan_files`).
///
/// | setter | default |
/// | --- | --- |
/// | `_set_older_than_ms` | now − 1 day: only files modified before the cut-off may be deleted |
/// | `_set_no_writers_running` | false: the cut-off must be at least 1 hour old |
/// | `_set_dry_run` | false |
/// | `_set_veto` | none |
/// | `_set_list_concurrency` / `_set_delete_concurrency` | the executor's I/O concurrency |
/// | `_set_external_roots_owned` | false: external data roots are neither listed nor cleaned |
///
/// Created by `paimon_cleanup_orphan_config_new`, owned by the caller, released with
/// `paimon_cleanup_orphan_config_free`. Thread-safe (`Send + Sync`): setters may be called while
/// other threads run with the same config; a run uses the values as they were when it started.
pub struct PaimonCleanupOrphanConfig(Settings<OrphanSettings>);

settings_handle!(PaimonCleanupOrphanConfig, OrphanSettings, "config");

impl PaimonCleanupOrphanConfig {
    /// The Rust settings for a table rooted at `root`, as a run starting now would use them
    /// (orphan removal as units, `units.rs`).
    pub(crate) fn orphan_config(&self, root: Location) -> OrphanConfig {
        self.0.get().config(root)
    }
}

/// A listing or deletion concurrency: 0 = the executor's I/O concurrency (`None`), else
/// 1..=[`MAX_CONCURRENCY`].
fn concurrency(function: &str, name: &str, value: u32) -> Result<Option<usize>, FfiError> {
    let value = in_range(function, name, value, 0..=MAX_CONCURRENCY)?;
    Ok((value > 0).then_some(value as usize))
}

/// Creates an orphan config with the defaults (cut-off now − 1 day, writers assumed running, no
/// veto, not a dry run).
///
/// Ownership: on success `*out` receives a new config owned by the caller, released with
/// `paimon_cleanup_orphan_config_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
/// success and to a new error object on failure.
///
/// # Safety
/// `out` and `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_new(
    out: *mut *mut PaimonCleanupOrphanConfig,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe { new_settings("paimon_cleanup_orphan_config_new", out, err) }
}

/// Sets the cut-off (milliseconds since the Unix epoch): only files last modified before it may be
/// deleted, so files of writes still in flight are never touched.
///
/// When the run starts, a cut-off in the future is refused (`INVALID_ARGUMENT`), and so is one
/// within the last hour unless `paimon_cleanup_orphan_config_set_no_writers_running` was set.
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `older_than_ms` < 0.
/// Thread-safety: see `PaimonCleanupOrphanConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_set_older_than_ms(
    config: *mut PaimonCleanupOrphanConfig,
    older_than_ms: i64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_config_set_older_than_ms";
    let value = in_range(F, "older_than_ms", older_than_ms, 0..);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.older_than_ms = Some(v)) }
}

/// Sets dry-run mode: the run lists, reads every reference, asks the veto and reports what it
/// would delete (counts and the path listing), but changes nothing at all.
///
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupOrphanConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_set_dry_run(
    config: *mut PaimonCleanupOrphanConfig,
    dry_run: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_config_set_dry_run";
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, Ok(dry_run), |s, v| s.dry_run = v) }
}

/// Declares that no writer (no job, engine or other process) writes or commits to the table while
/// the run lasts, which allows a cut-off within the last hour, up to now.
///
/// DANGER: a writer writes its data files and manifests before it commits the snapshot that
/// references them. Such files are indistinguishable from orphans; with a recent cut-off they are
/// deleted and the commit that follows publishes a snapshot whose files are gone (lost data).
/// Set this only when every writer of the table is stopped.
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupOrphanConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_set_no_writers_running(
    config: *mut PaimonCleanupOrphanConfig,
    no_writers_running: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_config_set_no_writers_running";
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, Ok(no_writers_running), |s, v| {
            s.no_writers_running = v
        })
    }
}

/// Declares that the table's external data roots (`data-file.external-paths`) belong to this
/// table alone, so orphan removal lists and cleans them. By default (false) they are neither
/// listed nor cleaned, and the report's warnings (`paimon_cleanup_report_warning`) name each
/// with the reason.
///
/// DANGER: Paimon writes external data files at `<root>/<partition>/bucket-N/` without the
/// table's name, so two tables configured with one root share those directories and each
/// table's live files are orphans to the other. Set this only when no other table writes under
/// any of this table's external roots.
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupOrphanConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_set_external_roots_owned(
    config: *mut PaimonCleanupOrphanConfig,
    external_roots_owned: bool,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_config_set_external_roots_owned";
    // SAFETY: forwarded caller guarantees.
    unsafe {
        set(F, config, err, Ok(external_roots_owned), |s, v| {
            s.external_roots_owned = v
        })
    }
}

/// Sets (or, with `veto` NULL, removes) the veto callback: it is asked about every file the run
/// would delete and keeps the file by returning true. See `PaimonCleanupVetoFn` for the path form
/// and the thread rules. A run counts vetoed files in `paimon_cleanup_report_vetoed`.
///
/// `user_data` is passed back unchanged; the library never reads, writes or frees it. It must stay
/// valid, and usable from the library's threads, until every run started with this config has
/// returned.
/// Errors: `NULL_POINTER` if `config` is NULL.
/// Thread-safety: see `PaimonCleanupOrphanConfig`.
///
/// # Safety
/// `config` must be NULL or live; `veto` must be NULL or a function with the signature of
/// `PaimonCleanupVetoFn` that follows its thread rules; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_set_veto(
    config: *mut PaimonCleanupOrphanConfig,
    veto: PaimonCleanupVetoFn,
    user_data: *mut c_void,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_config_set_veto";
    let value = Ok(CCallback::new(veto, user_data));
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.veto = v) }
}

/// Sets how many directory listings the run keeps in flight; 0 (the default) uses the executor's
/// I/O concurrency. Otherwise 1..=4096.
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if out of range.
/// Thread-safety: see `PaimonCleanupOrphanConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_set_list_concurrency(
    config: *mut PaimonCleanupOrphanConfig,
    list_concurrency: u32,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_config_set_list_concurrency";
    let value = concurrency(F, "list_concurrency", list_concurrency);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.list_concurrency = v) }
}

/// Sets how many deletions the run keeps in flight; 0 (the default) uses the executor's I/O
/// concurrency. Otherwise 1..=4096. Metadata reads always use the executor's I/O concurrency.
///
/// Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if out of range.
/// Thread-safety: see `PaimonCleanupOrphanConfig`.
///
/// # Safety
/// `config` must be NULL or live; `err` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_set_delete_concurrency(
    config: *mut PaimonCleanupOrphanConfig,
    delete_concurrency: u32,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_orphan_config_set_delete_concurrency";
    let value = concurrency(F, "delete_concurrency", delete_concurrency);
    // SAFETY: forwarded caller guarantees.
    unsafe { set(F, config, err, value, |s, v| s.delete_concurrency = v) }
}

/// Frees an orphan config. NULL is accepted and ignored. The veto's `user_data` is not touched.
///
/// Ownership: takes back ownership of `config`. Free each config exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with any other use of the
/// same config.
///
/// # Safety
/// `config` must be NULL or a pointer from `paimon_cleanup_orphan_config_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_orphan_config_free(config: *mut PaimonCleanupOrphanConfig) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(config) }
}

/// Removes orphan files: files older than the cut-off in the table's own directories (manifest,
/// index, statistics, bucket directories of the data root and of the external data roots, temp
/// files in snapshot/changelog directories of every branch) that no snapshot, tag or long-lived
/// changelog of ANY branch references. Candidates are listed before references are read; metadata
/// that cannot be read aborts the run before anything is deleted. Bucket and partition
/// directories left empty are removed. The context may name the table's root (main branch).
///
/// `config`: required (see `PaimonCleanupOrphanConfig`). `run_options`: may be NULL.
/// Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
///
/// Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
/// (`PAIMON_CLEANUP_REPORT_KIND_REMOVE_ORPHAN_FILES`: files and bytes per class, the path listing,
/// candidates / referenced / vetoed counts, the cut-off used, warnings), owned by the caller and
/// released with `paimon_cleanup_report_free`; on failure `*out` is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `context`, `executor`, `config` or `out` is NULL; `INVALID_ARGUMENT`
/// for a cut-off in the future, or within the last hour without no-writers-running; `NOT_FOUND`
/// if the table does not exist; `MALFORMED` / `NOT_FOUND` / `STORAGE` when metadata a version
/// needs cannot be read (nothing deleted, the message names the file); `CANCELLED`;
/// `PATH_REFUSED`; `INTERNAL` if the veto callback could not be called. `*err` (when `err` is not
/// NULL) is set to NULL on success and to a new error object on failure.
///
/// # Safety
/// `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and `err`
/// must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_remove_orphan_files(
    context: *const PaimonCleanupContext,
    executor: *const PaimonCleanupExecutor,
    config: *const PaimonCleanupOrphanConfig,
    run_options: *const PaimonCleanupRunOptions,
    out: *mut *mut PaimonCleanupReport,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_remove_orphan_files";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live handles, `out` NULL or writable (caller's guarantee).
        let call =
            unsafe { Call::new(F, context, executor, run_options, out) }?.reads_stop_on_cancel();
        // SAFETY: NULL or live (caller's guarantee).
        let settings = unsafe { settings_of(config, F) }?;
        let report = call.run(|table, control| async move {
            let config = settings.config(table.root().clone());
            remove_orphan_files(&table, &config, &control).await
        })?;
        call.deliver(PaimonCleanupReport::from_orphans(report));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}
