//! Host log callback: the library's `tracing` events of one operation, handed to a C function.
//!
//! No global subscriber is ever installed. An operation whose run options carry a log callback
//! runs its future inside [`tracing::instrument::WithSubscriber`] with a [`Dispatch`] of its own
//! ([`HostLog`]); the storage layer carries the current dispatcher into its blocking I/O tasks.
//! Events of two operations with different callbacks therefore never cross, even when they run
//! at the same time on the same executor, and an operation without a callback emits nothing to
//! any host.

use std::ffi::{c_void, CString};
use std::fmt::Write as _;
use std::os::raw::c_char;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Level, Metadata, Subscriber};

use super::callback::CCallback;
use super::status::FfiError;

/// Severity of a log event passed to a `PaimonCleanupLogFn`, and the minimum severity given to
/// `paimon_cleanup_run_options_set_log`. Smaller numbers are more severe. The numbers are stable.
/// Functions take and pass these values as `int32_t`.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaimonCleanupLogLevel {
    /// Something failed (a run that returns an error also reports it through its status).
    Error = 1,
    /// Something was deliberately left alone, or a step had to fall back (a file that could not
    /// be deleted, a directory that could not be listed, a branch without schema).
    Warn = 2,
    /// One line per milestone of a run (candidates listed, snapshots expired, commit landed).
    Info = 3,
    /// Details such as every storage request (`get`, `list_dir`, `put`); voluminous.
    Debug = 4,
    /// Everything.
    Trace = 5,
}

impl PaimonCleanupLogLevel {
    fn from_i32(value: i32) -> Option<Self> {
        Some(match value {
            1 => Self::Error,
            2 => Self::Warn,
            3 => Self::Info,
            4 => Self::Debug,
            5 => Self::Trace,
            _ => return None,
        })
    }

    fn of(level: &Level) -> Self {
        match *level {
            Level::ERROR => Self::Error,
            Level::WARN => Self::Warn,
            Level::INFO => Self::Info,
            Level::DEBUG => Self::Debug,
            Level::TRACE => Self::Trace,
        }
    }

    fn tracing_level(self) -> Level {
        match self {
            Self::Error => Level::ERROR,
            Self::Warn => Level::WARN,
            Self::Info => Level::INFO,
            Self::Debug => Level::DEBUG,
            Self::Trace => Level::TRACE,
        }
    }
}

/// Log callback of an operation: receives the library's log events (its `tracing` events).
///
/// Arguments: the `user_data` given to `paimon_cleanup_run_options_set_log`; `level`, a
/// `PaimonCleanupLogLevel` value (1 = error ... 5 = trace); `target`, where the event comes from
/// (the Rust module path, e.g. `"paimon_cleanup::clean::orphans"`); `message`, the event's
/// text followed by its fields as ` key=value` pairs (e.g. `"orphan candidates listed files=12
/// candidates=3 cutoff=1700000000000"`). Both strings are NUL-terminated UTF-8, borrowed for the
/// duration of the call only: copy them to keep them.
///
/// Thread rules: called on the thread that called the operation or on one of the library's own
/// threads (executor workers, its blocking I/O threads), never after the operation has returned.
/// Calls belonging to one operation never overlap (the library serializes them); two operations
/// running at once may call the same callback at the same time, so shared state in `user_data`
/// needs its own locking. Only events of the operation run with these options reach the
/// callback. The callback must return quickly, must not throw a C++ exception or `longjmp` out,
/// and must not call any function of this library except `paimon_cleanup_cancel_token_cancel`.
pub type PaimonCleanupLogFn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        level: i32,
        target: *const c_char,
        message: *const c_char,
    ),
>;

type LogCallback = CCallback<unsafe extern "C" fn(*mut c_void, i32, *const c_char, *const c_char)>;

/// A log callback with the least severe level it wants (as stored in run options).
#[derive(Clone, Copy)]
pub(crate) struct LogSettings {
    callback: LogCallback,
    max_level: PaimonCleanupLogLevel,
}

impl LogSettings {
    /// Checks a setter's arguments: `None` when `callback` is NULL (logging off).
    pub(crate) fn new(
        function: &str,
        callback: PaimonCleanupLogFn,
        min_level: i32,
        user_data: *mut c_void,
    ) -> Result<Option<LogSettings>, FfiError> {
        let Some(function_ptr) = callback else {
            return Ok(None);
        };
        let max_level = PaimonCleanupLogLevel::from_i32(min_level).ok_or_else(|| {
            FfiError::invalid_argument(format!(
                "{function}: min_level = {min_level} is not a PaimonCleanupLogLevel (1 = error \
                 ... 5 = trace)"
            ))
        })?;
        Ok(Some(LogSettings {
            callback: CCallback {
                function: function_ptr,
                user_data,
            },
            max_level,
        }))
    }
}

/// The subscriber of one operation: formats its events and calls the host's callback.
struct HostLog {
    callback: LogCallback,
    max_level: Level,
    /// Serializes the calls and says whether calls are still allowed (false once the operation
    /// returned: a blocking I/O task abandoned by a failed run may outlive it).
    open: Mutex<bool>,
    next_span: AtomicU64,
}

impl HostLog {
    fn call(&self, level: &Level, target: &str, message: &str) {
        let target = CString::new(target.replace('\0', "\u{FFFD}")).unwrap_or_default();
        let message = CString::new(message.replace('\0', "\u{FFFD}")).unwrap_or_default();
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if !*open {
            return;
        }
        let level = PaimonCleanupLogLevel::of(level) as i32;
        // SAFETY: the host guarantees the callback may be called with its user data from any
        // thread until the operation returns; `open` is true, so it has not returned yet. Both
        // strings outlive the call.
        unsafe {
            (self.callback.function)(
                self.callback.user_data,
                level,
                target.as_ptr(),
                message.as_ptr(),
            )
        }
    }
}

impl Subscriber for HostLog {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if self.enabled(metadata) {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // In `tracing`, more verbose levels compare greater.
        *metadata.level() <= self.max_level
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::from_level(
            self.max_level,
        ))
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        // Spans are not reported; ids only need to be non-zero and unique.
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed).max(1))
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let mut text = Text::default();
        event.record(&mut text);
        self.call(metadata.level(), metadata.target(), &text.finish());
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// Formats an event: the message, then ` key=value` per other field.
#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Text {
    fn finish(self) -> String {
        let mut out = self.message;
        if out.is_empty() {
            out.push_str(self.fields.trim_start());
        } else {
            out.push_str(&self.fields);
        }
        out
    }
}

impl Visit for Text {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={}", field.name(), value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={:?}", field.name(), value);
        }
    }
}

/// The dispatcher of one operation, and the switch that stops its callback when the operation
/// returns.
pub(crate) struct RunLog {
    dispatch: Dispatch,
    host: Arc<HostLog>,
}

impl RunLog {
    /// A fresh dispatcher for one operation with `settings`.
    pub(crate) fn new(settings: LogSettings) -> RunLog {
        let host = Arc::new(HostLog {
            callback: settings.callback,
            max_level: settings.max_level.tracing_level(),
            open: Mutex::new(true),
            next_span: AtomicU64::new(1),
        });
        RunLog {
            // tracing implements `Subscriber` for `Arc<S>`.
            dispatch: Dispatch::new(Arc::clone(&host)),
            host,
        }
    }

    /// The dispatcher to run the operation's future with.
    pub(crate) fn dispatch(&self) -> Dispatch {
        self.dispatch.clone()
    }
}

impl Drop for RunLog {
    /// Closes the callback: waits for a call in progress, then no call starts any more.
    fn drop(&mut self) {
        *self
            .host
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = false;
    }
}
