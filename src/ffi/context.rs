//! The context handle: which table, and with which options.

use std::collections::HashMap;
use std::os::raw::c_char;

use super::handle::free_handle;
use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};
use super::util::{array_str, out_arg, str_arg};
use crate::table::{resolve_with_options, TableRef};

/// Largest number of options `paimon_cleanup_context_new` and
/// `paimon_cleanup_orphan_unit_execute` accept.
pub(crate) const MAX_OPTIONS: usize = 65_536;

/// A table context: the table location plus the options used to reach and read it.
///
/// The options are one map of Paimon option names: storage options (credentials, endpoint,
/// region, ...) are read by the storage layer, and every option also overrides the table option
/// of the same name stored in the table schema (keys a layer does not know are ignored by it).
/// The option `branch` selects the branch every call works on (default `main`), as Paimon
/// Java's `branch` table option does.
///
/// Created by `paimon_cleanup_context_new`, owned by the caller, released with
/// `paimon_cleanup_context_free`. Immutable and thread-safe (`Send + Sync`): one context may be
/// used by any number of calls from any number of host threads at once, with any executor.
pub struct PaimonCleanupContext {
    table_uri: String,
    options: HashMap<String, String>,
    table_ref: TableRef,
}

impl PaimonCleanupContext {
    /// The table location as given by the caller.
    pub fn table_uri(&self) -> &str {
        &self.table_uri
    }

    /// The options (storage options and table-option overrides).
    pub fn options(&self) -> &HashMap<String, String> {
        &self.options
    }

    /// The table root (the URI without a `$branch_<name>` suffix) and the branch to work on.
    pub fn table_ref(&self) -> &TableRef {
        &self.table_ref
    }
}

/// Creates a context for the table at `table_uri` with `option_count` options given as parallel
/// arrays of keys and values.
///
/// `table_uri`: the table directory, as a local path (`/data/wh/db.db/t`), a `file://` URL or an
/// object-store URL (`s3://bucket/wh/db.db/t`); must not be empty.
/// `option_keys` / `option_values`: `option_count` NUL-terminated UTF-8 strings each; key `i`
/// goes with value `i`. Both may be NULL when `option_count` is 0. Keys must be non-empty and
/// unique. Examples: `"s3.endpoint"`, `"s3.access-key"`, `"snapshot.num-retained.min"`.
///
/// Branch: the option key `"branch"` (value: a branch name, default `"main"`) makes every call
/// on this context work on that branch, as Paimon Java's `branch` table option does: expiry,
/// tags, consumers and partitions then change only that branch's snapshots, changelogs, tags
/// and consumers, and keep every file any version of any branch reads; orphan removal is
/// table-wide whatever the branch. A `table_uri` whose last segment is `<table>$branch_<name>`
/// names the branch too (the table root is then the URI without the suffix); if both name
/// one, they must agree. The branch's existence is checked by the calls (`NOT_FOUND`).
///
/// The table itself is not opened here: a missing or unreadable table is reported by the calls
/// that use the context.
///
/// Ownership: the strings are copied; the caller keeps ownership of all of its arguments. On
/// success `*out` receives a new context owned by the caller, released with
/// `paimon_cleanup_context_free`; on failure `*out` is left untouched.
/// Thread-safety: may be called from any thread.
/// Errors: `NULL_POINTER` if `table_uri` or `out` is NULL, or if `option_count > 0` and an array
/// or one of its elements is NULL; `INVALID_UTF8` if a string is not UTF-8; `INVALID_ARGUMENT`
/// for an empty URI, an empty or duplicate key, more than 65536 options, an empty or
/// path-like branch name (`/`, `\\`, `.`, `..`), or a `$branch_` suffix and a `branch` option
/// that disagree. `*err` (when `err`
/// is not NULL) is set to NULL on success and to a new error object on failure.
///
/// # Safety
/// `table_uri` must be NULL or NUL-terminated. When `option_count > 0`, each array must be NULL or
/// hold `option_count` readable pointers, each NULL or NUL-terminated. `out` and `err` must be
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_context_new(
    table_uri: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    out: *mut *mut PaimonCleanupContext,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_context_new";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or NUL-terminated (caller's guarantee).
        let uri = unsafe { str_arg(table_uri, F, "table_uri") }?;
        let out = out_arg(out, F, "out")?;
        if uri.trim().is_empty() {
            return Err(FfiError::invalid_argument(format!(
                "{F}: argument `table_uri` must not be empty"
            )));
        }
        // SAFETY: as documented.
        let options = unsafe { options_arg(F, option_keys, option_values, option_count) }?;
        let table_ref = resolve_with_options(uri, &options)
            .map_err(|e| FfiError::invalid_argument(format!("{F}: {e}")))?;
        let context = Box::new(PaimonCleanupContext {
            table_uri: uri.to_owned(),
            options,
            table_ref,
        });
        // SAFETY: `out` is non-NULL and writable.
        unsafe { out.write(Box::into_raw(context)) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Options given as parallel arrays of `count` keys and values: at most [`MAX_OPTIONS`], both
/// arrays non-NULL unless `count` is 0, keys non-empty and unique, every string UTF-8.
///
/// # Safety
/// When `count > 0`, each array must be NULL or hold `count` readable pointers, each NULL or
/// NUL-terminated.
pub(crate) unsafe fn options_arg(
    function: &str,
    keys: *const *const c_char,
    values: *const *const c_char,
    count: usize,
) -> Result<HashMap<String, String>, FfiError> {
    if count > MAX_OPTIONS {
        return Err(FfiError::invalid_argument(format!(
            "{function}: option_count = {count} is out of range (at most {MAX_OPTIONS})"
        )));
    }
    let mut options = HashMap::with_capacity(count);
    if count == 0 {
        return Ok(options);
    }
    if keys.is_null() {
        return Err(FfiError::null_pointer(function, "option_keys"));
    }
    if values.is_null() {
        return Err(FfiError::null_pointer(function, "option_values"));
    }
    for i in 0..count {
        // SAFETY: both arrays hold `count` pointers (caller's guarantee).
        let key = unsafe { array_str(keys, i, function, "option_keys") }?;
        // SAFETY: as above.
        let value = unsafe { array_str(values, i, function, "option_values") }?;
        if key.is_empty() {
            return Err(FfiError::invalid_argument(format!(
                "{function}: option_keys[{i}] is empty"
            )));
        }
        if options.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(FfiError::invalid_argument(format!(
                "{function}: option key `{key}` is given more than once"
            )));
        }
    }
    Ok(options)
}

/// Frees a context. NULL is accepted and ignored.
///
/// Every call that uses the context must have returned before it is freed.
/// Ownership: takes back ownership of `context`. Free each context exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with any other use of the
/// same context.
///
/// # Safety
/// `context` must be NULL or a pointer from `paimon_cleanup_context_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_context_free(context: *mut PaimonCleanupContext) {
    // SAFETY: forwarded caller guarantee.
    unsafe { free_handle(context) }
}
