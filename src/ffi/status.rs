//! Status codes, the error object handed to the caller, and the panic boundary every entry point
//! runs inside.

use std::any::Any;
use std::ffi::CString;
use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::error::Error;

/// Status code returned by every fallible call. `PAIMON_CLEANUP_STATUS_OK` (0) means success;
/// every other value names one kind of failure. The numbers are stable: a code never changes
/// meaning and new codes are only appended (this does not change the ABI version).
///
/// Codes 1-9 and 13 correspond one-to-one to the library's error kinds; 10-12 are raised by the
/// C boundary itself.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaimonCleanupStatus {
    /// Success.
    Ok = 0,
    /// A caller-supplied argument is unusable (bad option value, out-of-range count, duplicate
    /// option key, empty URI, ...).
    InvalidArgument = 1,
    /// A file or directory that must exist does not (e.g. the table has no schema).
    NotFound = 2,
    /// A metadata file could not be decoded (snapshot JSON, manifest, hint file, ...).
    Malformed = 3,
    /// The table uses a feature the library cannot handle safely, or the operation is not
    /// available in this build.
    Unsupported = 4,
    /// An I/O error from the file system or object store.
    Storage = 5,
    /// A path outside the table's roots was refused.
    PathRefused = 6,
    /// The operation was cancelled by the caller.
    Cancelled = 7,
    /// A commit lost its race too many times, or a table invariant does not hold.
    Conflict = 8,
    /// A bug inside the library.
    Internal = 9,
    /// A required pointer argument was NULL.
    NullPointer = 10,
    /// A string argument was not valid UTF-8.
    InvalidUtf8 = 11,
    /// The library panicked; the panic was caught at the boundary. Handles used by the failed
    /// call stay valid and may be freed, but a host may prefer to stop using them.
    Panic = 12,
    /// The run needed more memory than the bound set with
    /// `paimon_cleanup_run_options_set_max_memory`; the message names `max_memory`, the bound and
    /// what needed more. The run stopped while planning: nothing was deleted or committed.
    MemoryLimit = 13,
}

impl PaimonCleanupStatus {
    /// Short lower-case name of the status, NUL-terminated.
    fn name_nul(self) -> &'static str {
        match self {
            PaimonCleanupStatus::Ok => "ok\0",
            PaimonCleanupStatus::InvalidArgument => "invalid_argument\0",
            PaimonCleanupStatus::NotFound => "not_found\0",
            PaimonCleanupStatus::Malformed => "malformed\0",
            PaimonCleanupStatus::Unsupported => "unsupported\0",
            PaimonCleanupStatus::Storage => "storage\0",
            PaimonCleanupStatus::PathRefused => "path_refused\0",
            PaimonCleanupStatus::Cancelled => "cancelled\0",
            PaimonCleanupStatus::Conflict => "conflict\0",
            PaimonCleanupStatus::Internal => "internal\0",
            PaimonCleanupStatus::NullPointer => "null_pointer\0",
            PaimonCleanupStatus::InvalidUtf8 => "invalid_utf8\0",
            PaimonCleanupStatus::Panic => "panic\0",
            PaimonCleanupStatus::MemoryLimit => "memory_limit\0",
        }
    }

    /// Every status, in numeric order.
    pub(crate) const ALL: [PaimonCleanupStatus; 14] = [
        PaimonCleanupStatus::Ok,
        PaimonCleanupStatus::InvalidArgument,
        PaimonCleanupStatus::NotFound,
        PaimonCleanupStatus::Malformed,
        PaimonCleanupStatus::Unsupported,
        PaimonCleanupStatus::Storage,
        PaimonCleanupStatus::PathRefused,
        PaimonCleanupStatus::Cancelled,
        PaimonCleanupStatus::Conflict,
        PaimonCleanupStatus::Internal,
        PaimonCleanupStatus::NullPointer,
        PaimonCleanupStatus::InvalidUtf8,
        PaimonCleanupStatus::Panic,
        PaimonCleanupStatus::MemoryLimit,
    ];

    /// The status for a raw code, if the code is known.
    pub(crate) fn from_code(code: i32) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| *s as i32 == code)
    }
}

/// The status code for a library error. Exhaustive on purpose: a new error variant must get its
/// own stable code here.
pub(crate) fn status_of(error: &Error) -> PaimonCleanupStatus {
    match error {
        Error::InvalidArgument(_) => PaimonCleanupStatus::InvalidArgument,
        Error::NotFound { .. } => PaimonCleanupStatus::NotFound,
        Error::Malformed { .. } => PaimonCleanupStatus::Malformed,
        Error::Unsupported(_) => PaimonCleanupStatus::Unsupported,
        Error::Storage { .. } => PaimonCleanupStatus::Storage,
        Error::PathRefused { .. } => PaimonCleanupStatus::PathRefused,
        Error::Cancelled => PaimonCleanupStatus::Cancelled,
        Error::Conflict(_) => PaimonCleanupStatus::Conflict,
        Error::Internal(_) => PaimonCleanupStatus::Internal,
        Error::Panic(_) => PaimonCleanupStatus::Panic,
        Error::MemoryLimit { .. } => PaimonCleanupStatus::MemoryLimit,
    }
}

/// A failure on its way out of an entry point: a status and a readable message.
#[derive(Debug)]
pub(crate) struct FfiError {
    pub(crate) status: PaimonCleanupStatus,
    pub(crate) message: String,
}

impl FfiError {
    pub(crate) fn new(status: PaimonCleanupStatus, message: impl Into<String>) -> Self {
        FfiError {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(PaimonCleanupStatus::InvalidArgument, message)
    }

    pub(crate) fn null_pointer(function: &str, argument: &str) -> Self {
        Self::new(
            PaimonCleanupStatus::NullPointer,
            format!("{function}: argument `{argument}` must not be NULL"),
        )
    }

    fn panic(function: &str, payload: &(dyn Any + Send)) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_owned());
        Self::new(
            PaimonCleanupStatus::Panic,
            format!("{function}: panic caught at the C boundary: {what}"),
        )
    }
}

impl From<Error> for FfiError {
    fn from(error: Error) -> Self {
        FfiError::new(status_of(&error), error.to_string())
    }
}

/// An error reported by a failed call: a status code and a readable message.
///
/// Created by the library and handed to the caller through a `PaimonCleanupError **err`
/// out-parameter; the caller owns it and releases it with `paimon_cleanup_error_free`.
/// Immutable, so it may be read from any thread.
#[derive(Debug)]
pub struct PaimonCleanupError {
    status: PaimonCleanupStatus,
    message: CString,
}

impl PaimonCleanupError {
    fn from_ffi(error: FfiError) -> Self {
        // A message never contains NUL in practice; replace it rather than lose the message.
        let text = error.message.replace('\0', "\u{FFFD}");
        PaimonCleanupError {
            status: error.status,
            message: CString::new(text).unwrap_or_default(),
        }
    }

    /// The status of this error.
    pub(crate) fn status(&self) -> PaimonCleanupStatus {
        self.status
    }

    /// The message of this error.
    pub(crate) fn message(&self) -> &std::ffi::CStr {
        &self.message
    }
}

/// Runs the body of a fallible entry point: clears `*err`, catches panics, converts failures into
/// a status and (when `err` is not NULL) a freshly allocated error object.
///
/// # Safety
/// `err` must be NULL or valid for writing one pointer.
pub(crate) unsafe fn boundary<F>(
    function: &'static str,
    err: *mut *mut PaimonCleanupError,
    body: F,
) -> PaimonCleanupStatus
where
    F: FnOnce() -> Result<(), FfiError>,
{
    if !err.is_null() {
        // SAFETY: the caller guarantees `err` is NULL or writable.
        unsafe { err.write(ptr::null_mut()) };
    }
    let outcome = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => Err(FfiError::panic(function, payload.as_ref())),
    };
    match outcome {
        Ok(()) => PaimonCleanupStatus::Ok,
        Err(error) => {
            let status = error.status;
            if !err.is_null() {
                let boxed = Box::new(PaimonCleanupError::from_ffi(error));
                // SAFETY: as above.
                unsafe { err.write(Box::into_raw(boxed)) };
            }
            status
        }
    }
}

/// Runs the body of an infallible entry point (`..._free`, getters), returning `fallback` if it
/// panics. The panic is swallowed: such calls have no way to report it.
pub(crate) fn boundary_infallible<T, F>(fallback: T, body: F) -> T
where
    F: FnOnce() -> T,
{
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Returns a short, static, lower-case name for a status code (`"ok"`, `"invalid_argument"`,
/// `"not_found"`, `"malformed"`, ...), or `"unknown"` for a number that is not a known code.
///
/// Ownership: the string is static; never free it.
/// Thread-safety: may be called from any thread at any time. Errors: none; never returns NULL.
#[no_mangle]
pub extern "C" fn paimon_cleanup_status_name(status: i32) -> *const c_char {
    let name = PaimonCleanupStatus::from_code(status)
        .map(PaimonCleanupStatus::name_nul)
        .unwrap_or("unknown\0");
    name.as_ptr().cast()
}

/// Returns the status code carried by `error`, or `PAIMON_CLEANUP_STATUS_OK` when `error` is NULL
/// (no error object means no error).
///
/// Ownership: `error` stays owned by the caller.
/// Thread-safety: the error object is immutable; any thread may read it until it is freed.
///
/// # Safety
/// `error` must be NULL or a pointer obtained from this library and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_error_status(
    error: *const PaimonCleanupError,
) -> PaimonCleanupStatus {
    boundary_infallible(PaimonCleanupStatus::Internal, || {
        // SAFETY: the caller guarantees `error` is NULL or a live error object.
        match unsafe { error.as_ref() } {
            Some(error) => error.status(),
            None => PaimonCleanupStatus::Ok,
        }
    })
}

/// Returns the readable, NUL-terminated, UTF-8 message of `error` (for example
/// `"malformed snapshot file /t/snapshot/snapshot-5: expected value at line 1 column 1"`), or an
/// empty string when `error` is NULL.
///
/// Ownership: the string belongs to `error` (borrowed); it stays valid until
/// `paimon_cleanup_error_free(error)` and must not be freed on its own. Copy it to keep it longer.
/// Thread-safety: any thread may read it until the error is freed.
///
/// # Safety
/// `error` must be NULL or a pointer obtained from this library and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_error_message(
    error: *const PaimonCleanupError,
) -> *const c_char {
    static EMPTY: &str = "\0";
    boundary_infallible(EMPTY.as_ptr().cast(), || {
        // SAFETY: the caller guarantees `error` is NULL or a live error object.
        match unsafe { error.as_ref() } {
            Some(error) => error.message().as_ptr(),
            None => EMPTY.as_ptr().cast(),
        }
    })
}

/// Frees an error object and its message. NULL is accepted and ignored.
///
/// Ownership: takes back ownership of `error`; the pointer (and any message pointer obtained from
/// it) is invalid afterwards. Free each error exactly once.
/// Thread-safety: may be called from any thread, but not concurrently with another use of the
/// same error object.
///
/// # Safety
/// `error` must be NULL or a pointer obtained from this library and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_error_free(error: *mut PaimonCleanupError) {
    boundary_infallible((), || {
        if !error.is_null() {
            // SAFETY: the caller hands back a pointer created by `Box::into_raw` in `boundary`.
            drop(unsafe { Box::from_raw(error) });
        }
    })
}
