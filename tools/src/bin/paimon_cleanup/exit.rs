//! Exit codes, and how a failed command reports its error.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | failed (storage, not found, cancelled, memory limit, internal error); nothing was left half done |
//! | 2 | usage: a bad argument, option or option value |
//! | 3 | refused for safety: malformed metadata, a path outside the table, an unsupported feature, an invariant of the table that does not hold; nothing was deleted |
//! | 4 | partially done (reserved for sweeps over many tables) |

use std::io::Write;
use std::process::ExitCode;

use paimon_cleanup::Error;

/// Done.
pub const DONE: u8 = 0;
/// Failed.
pub const FAILED: u8 = 1;
/// Usage error.
pub const USAGE: u8 = 2;
/// Refused for safety.
pub const REFUSED: u8 = 3;
/// Partially done (reserved for sweeps).
pub const PARTIAL: u8 = 4;

/// The exit code of a failed command.
pub fn code_of(e: &Error) -> u8 {
    match e {
        Error::InvalidArgument(_) => USAGE,
        Error::Malformed { .. }
        | Error::PathRefused { .. }
        | Error::Unsupported(_)
        | Error::Conflict(_) => REFUSED,
        Error::NotFound { .. }
        | Error::Storage { .. }
        | Error::Cancelled
        | Error::Internal(_)
        | Error::MemoryLimit { .. }
        | Error::Panic(_) => FAILED,
    }
}

/// The stable name of an error's kind (the C ABI's status names).
pub fn name_of(e: &Error) -> &'static str {
    match e {
        Error::InvalidArgument(_) => "invalid_argument",
        Error::NotFound { .. } => "not_found",
        Error::Malformed { .. } => "malformed",
        Error::Unsupported(_) => "unsupported",
        Error::Storage { .. } => "storage",
        Error::PathRefused { .. } => "path_refused",
        Error::Cancelled => "cancelled",
        Error::Conflict(_) => "conflict",
        Error::Internal(_) => "internal",
        Error::MemoryLimit { .. } => "memory_limit",
        Error::Panic(_) => "panic",
    }
}

/// Prints an error (`error: …` on stderr, or with `json` the object
/// `{"error":{"code":…,"exit_code":…,"message":…}}` on stdout) and returns the exit code.
pub fn report(code: &str, exit: u8, message: &str, json: bool) -> ExitCode {
    if json {
        let v = serde_json::json!({
            "error": {"code": code, "exit_code": exit, "message": message}
        });
        crate::out::line(&v.to_string());
    } else {
        // A closed stderr leaves nothing to report to.
        let _ = writeln!(std::io::stderr(), "error: {message}");
    }
    ExitCode::from(exit)
}
