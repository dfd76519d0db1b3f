//! Warehouses: `paimon_cleanup_warehouse_list_tables` and the table list it hands out.

use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr;

use crate::table::warehouse::find_tables;

use super::handle::{free_handle, hand_out};
use super::status::{
    boundary, boundary_infallible, FfiError, PaimonCleanupError, PaimonCleanupStatus,
};
use super::util::{out_arg, str_arg};

/// The tables of a warehouse, from `paimon_cleanup_warehouse_list_tables`: each table's
/// `db.table` name and its location (a local path, usable as a context's table location).
/// Opaque; read with `paimon_cleanup_table_list_count`, `_name` and `_location`, release with
/// `paimon_cleanup_table_list_free`. Immutable: any number of threads may read it at once.
pub struct PaimonCleanupTableList {
    tables: Vec<(CString, CString)>,
}

/// Lists the tables of the local filesystem-catalog warehouse `warehouse` (a path or a
/// `file://` URI: `<warehouse>/<db>.db/<table>/` directories holding a `schema/` directory)
/// that `pattern` names, sorted by name. `pattern` is `db.table` where either part may be or
/// hold `*` (`"db.*"`, `"*.*"`, `"db.t"`; `*` matches any run of characters), as Paimon Java's
/// procedures take a table. Read-only; lists directories on the calling thread (no executor).
///
/// Ownership: `warehouse` and `pattern` stay owned by the caller. On success `*out` receives a
/// new list owned by the caller, released with `paimon_cleanup_table_list_free`; on failure
/// `*out` is left untouched.
/// Thread-safety: any number of host threads may call it at once.
/// Errors: `NULL_POINTER` if `warehouse`, `pattern` or `out` is NULL; `INVALID_UTF8`;
/// `INVALID_ARGUMENT` for a pattern without `.`; `UNSUPPORTED` for an object-store URI (only
/// local warehouses are listed) and for a database or table directory the pattern takes whose
/// name is not UTF-8 (never skipped unseen); `STORAGE` when a directory cannot be listed;
/// `NOT_FOUND` when no table matches. `*err` (when `err` is not NULL) is set to NULL on success and to a new error
/// object on failure.
///
/// # Safety
/// `warehouse` and `pattern` must be NULL or NUL-terminated; `out` and `err` must be NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_warehouse_list_tables(
    warehouse: *const c_char,
    pattern: *const c_char,
    out: *mut *mut PaimonCleanupTableList,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_warehouse_list_tables";
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or NUL-terminated (caller's guarantee).
        let warehouse = unsafe { str_arg(warehouse, F, "warehouse") }?;
        // SAFETY: as above.
        let pattern = unsafe { str_arg(pattern, F, "pattern") }?;
        let out = out_arg(out, F, "out")?;
        let found = find_tables(warehouse, pattern)?;
        let mut tables = Vec::with_capacity(found.len());
        for t in found {
            let location = t.path.to_str().ok_or_else(|| {
                FfiError::new(
                    PaimonCleanupStatus::InvalidUtf8,
                    format!("{F}: table path {} is not UTF-8", t.path.display()),
                )
            })?;
            let text = |s: &str| {
                CString::new(s).map_err(|_| {
                    FfiError::invalid_argument(format!("{F}: a table name holds a NUL byte"))
                })
            };
            tables.push((text(&t.name)?, text(location)?));
        }
        // SAFETY: `out` is non-NULL and writable (caller's guarantee).
        unsafe { hand_out(out, PaimonCleanupTableList { tables }) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(F, err, body) }
}

/// Returns the number of tables in `list` (0 for NULL).
///
/// # Safety
/// `list` must be NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_table_list_count(
    list: *const PaimonCleanupTableList,
) -> usize {
    boundary_infallible(0, || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { list.as_ref() }.map_or(0, |l| l.tables.len())
    })
}

/// Returns the `db.table` name of table `index` (below `paimon_cleanup_table_list_count`), or
/// NULL when out of range or `list` is NULL.
///
/// Ownership: borrowed from the list; valid until the list is freed.
///
/// # Safety
/// `list` must be NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_table_list_name(
    list: *const PaimonCleanupTableList,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { table_text(list, index, |(name, _)| name) }
}

/// Returns the location (a local path) of table `index` (below
/// `paimon_cleanup_table_list_count`), or NULL when out of range or `list` is NULL: what
/// `paimon_cleanup_context_new` takes as the table location.
///
/// Ownership: borrowed from the list; valid until the list is freed.
///
/// # Safety
/// `list` must be NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_table_list_location(
    list: *const PaimonCleanupTableList,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { table_text(list, index, |(_, location)| location) }
}

/// A text (name or location, as `text` picks) of table `index` of `list` (NULL when out of
/// range or `list` is NULL), borrowed from the list.
///
/// # Safety
/// `list` must be NULL or a live list.
unsafe fn table_text(
    list: *const PaimonCleanupTableList,
    index: usize,
    text: fn(&(CString, CString)) -> &CString,
) -> *const c_char {
    boundary_infallible(ptr::null(), || {
        // SAFETY: NULL or live (caller's guarantee).
        unsafe { list.as_ref() }
            .and_then(|l| l.tables.get(index))
            .map_or(ptr::null(), |t| text(t).as_ptr())
    })
}

/// Releases a list from `paimon_cleanup_warehouse_list_tables`. NULL is accepted. The strings
/// borrowed from it become invalid.
///
/// # Safety
/// `list` must be NULL or a list not freed before; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_table_list_free(list: *mut PaimonCleanupTableList) {
    // SAFETY: NULL or a live list from `hand_out` (caller's guarantee).
    unsafe { free_handle(list) }
}
