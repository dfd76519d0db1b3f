//! The crate's error type. Every failure names what failed and, where there is one, the file.

use thiserror::Error;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error the library reports. Each variant maps to one stable C status code (see `ffi`).
#[derive(Debug, Error)]
pub enum Error {
    /// A caller-supplied argument is unusable (bad option value, bad duration, NULL pointer, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A file or directory that must exist does not.
    #[error("not found: {path}")]
    NotFound {
        /// The location that was looked up.
        path: String,
    },

    /// A metadata file could not be decoded (JSON, Avro, ORC, Parquet, BinaryRow, hint ...).
    #[error("malformed {kind} file {path}: {message}")]
    Malformed {
        /// What kind of document it was meant to be ("snapshot", "manifest", ...).
        kind: &'static str,
        /// Location of the offending file.
        path: String,
        /// What is wrong with it.
        message: String,
    },

    /// The table uses a feature this library cannot handle safely.
    #[error("unsupported: {0}")]
    Unsupported(String),

    /// An I/O error from the storage layer.
    #[error("storage error on {path}: {message}")]
    Storage {
        /// Location the operation was about.
        path: String,
        /// The underlying error, rendered.
        message: String,
    },

    /// A deletion (or write) was refused because the path lies outside the table's roots.
    #[error("refused to touch {path}: {reason}")]
    PathRefused {
        /// The refused location.
        path: String,
        /// Why it was refused.
        reason: String,
    },

    /// The operation was cancelled by the caller.
    #[error("operation cancelled")]
    Cancelled,

    /// A commit lost its race too many times, or an invariant of the table does not hold.
    #[error("conflict: {0}")]
    Conflict(String),

    /// A bug caught at the boundary (a broken invariant, a task the runtime cancelled).
    #[error("internal error: {0}")]
    Internal(String),

    /// The run needs more memory than the bound its caller set
    /// ([`crate::clean::RunControl::max_memory`]). Raised while the run plans, before its first
    /// deletion or commit, so nothing was changed; the C ABI reports it as `MEMORY_LIMIT`.
    #[error("memory limit: {message}")]
    MemoryLimit {
        /// The bound, in bytes.
        limit: u64,
        /// What needed more (names `max_memory`, the bound and the structure being built).
        message: String,
    },

    /// A panic inside a spawned or blocking task of the library (a bug), caught before it
    /// reached the caller; the C ABI reports it as `PANIC`.
    #[error("panic: {0}")]
    Panic(String),
}

impl Error {
    /// Shorthand for [`Error::Malformed`].
    pub fn malformed(kind: &'static str, path: impl Into<String>, message: impl ToString) -> Self {
        Error::Malformed {
            kind,
            path: path.into(),
            message: message.to_string(),
        }
    }

    /// Shorthand for [`Error::Storage`].
    pub fn storage(path: impl Into<String>, message: impl ToString) -> Self {
        Error::Storage {
            path: path.into(),
            message: message.to_string(),
        }
    }

    /// True for [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }
}
