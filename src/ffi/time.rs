//! Cut-offs as the Java procedures take them: `older_than` text to epoch milliseconds.

use std::os::raw::c_char;

use crate::spec::time_text::parse_older_than;

use super::status::{boundary, FfiError, PaimonCleanupError, PaimonCleanupStatus};
use super::util::{out_arg, str_arg};

/// Parses an `older_than` cut-off as Paimon Java's procedures take it (`expire_snapshots`,
/// `remove_orphan_files`) and the CLI's `--older-than`, into milliseconds since the Unix epoch,
/// for `paimon_cleanup_orphan_config_set_older_than_ms` and
/// `paimon_cleanup_expire_config_set_older_than_ms`.
///
/// `text` is a timestamp (`"2024-01-01 12:00:00"`, optional fraction; `T` accepted between
/// date and time; local time zone of the process unless it ends with `Z` or an offset such as
/// `+02:00`), or a Paimon duration counted back from `now_ms` (`"1 d"`, `"30 min"`, `"12h"`).
/// A bare number is refused (it could be a duration or an epoch time), and so is a cut-off
/// after `now_ms`. `now_ms` is the caller's "now" in epoch milliseconds (usually the current
/// time); only durations use it, and the future check.
///
/// Ownership: `text` is borrowed for the call; `*out_ms` is written only on success.
/// Thread-safety: may be called from any thread at any time; it touches no shared state.
/// Errors: `NULL_POINTER` if `text` or `out_ms` is NULL; `INVALID_UTF8` if `text` is not UTF-8;
/// `INVALID_ARGUMENT` if it is empty, a bare number, neither a timestamp nor a duration, an
/// invalid date, or after `now_ms`; `now_ms` < 0 is `INVALID_ARGUMENT`.
///
/// # Safety
/// `text` must be NULL or a NUL-terminated string; `out_ms` must be NULL or writable; `err`
/// must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_parse_older_than(
    text: *const c_char,
    now_ms: i64,
    out_ms: *mut i64,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    const F: &str = "paimon_cleanup_parse_older_than";
    let body = || {
        // SAFETY: `text` is NULL or NUL-terminated by the caller's guarantee.
        let text = unsafe { str_arg(text, F, "text") }?;
        let out = out_arg(out_ms, F, "out_ms")?;
        if now_ms < 0 {
            return Err(FfiError::invalid_argument(format!(
                "{F}: now_ms {now_ms} is before the Unix epoch"
            )));
        }
        let ms = parse_older_than(text, now_ms)?;
        // SAFETY: checked non-NULL above; writable by the caller's guarantee.
        unsafe { out.write(ms) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable by the caller's guarantee.
    unsafe { boundary(F, err, body) }
}
