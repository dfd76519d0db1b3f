//! Checked conversions of raw C arguments: handles, strings and out-parameters.

use std::ffi::CStr;
use std::os::raw::c_char;

use super::status::{FfiError, PaimonCleanupStatus};

/// Borrows the object behind a handle pointer, or reports `NullPointer`.
///
/// # Safety
/// `ptr` must be NULL or point to a live object of type `T` that outlives `'a`.
pub(crate) unsafe fn handle_ref<'a, T>(
    ptr: *const T,
    function: &str,
    argument: &str,
) -> Result<&'a T, FfiError> {
    // SAFETY: guaranteed by the caller.
    unsafe { ptr.as_ref() }.ok_or_else(|| FfiError::null_pointer(function, argument))
}

/// Reads a NUL-terminated UTF-8 string argument, reporting `NullPointer` / `InvalidUtf8`.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn str_arg<'a>(
    ptr: *const c_char,
    function: &str,
    argument: &str,
) -> Result<&'a str, FfiError> {
    if ptr.is_null() {
        return Err(FfiError::null_pointer(function, argument));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's guarantee.
    let raw = unsafe { CStr::from_ptr(ptr) };
    raw.to_str().map_err(|e| {
        FfiError::new(
            PaimonCleanupStatus::InvalidUtf8,
            format!(
                "{function}: argument `{argument}` is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// Checks that an out-parameter is not NULL.
pub(crate) fn out_arg<T>(ptr: *mut T, function: &str, argument: &str) -> Result<*mut T, FfiError> {
    if ptr.is_null() {
        Err(FfiError::null_pointer(function, argument))
    } else {
        Ok(ptr)
    }
}

/// Reads element `index` of a `const char *const *` array argument.
///
/// # Safety
/// `array` must point to at least `index + 1` readable pointers.
pub(crate) unsafe fn array_str<'a>(
    array: *const *const c_char,
    index: usize,
    function: &str,
    argument: &str,
) -> Result<&'a str, FfiError> {
    // SAFETY: in bounds by the caller's guarantee.
    let element = unsafe { array.add(index).read() };
    // SAFETY: each element is NULL or a NUL-terminated string (caller's guarantee).
    unsafe { str_arg(element, function, &format!("{argument}[{index}]")) }
}

/// Reads an optional string argument: `None` for NULL, else as [`str_arg`] (copied).
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string.
pub(crate) unsafe fn optional_str(
    ptr: *const c_char,
    function: &str,
    argument: &str,
) -> Result<Option<String>, FfiError> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and NUL-terminated (caller's guarantee).
    Ok(Some(
        unsafe { str_arg(ptr, function, argument) }?.to_owned(),
    ))
}
