//! One way to write a handle: hand a new one out through `*out`, free it, and — for the settings
//! handles (the expire, orphan, partition-expire and maintain configs, the run options) — change
//! and read the settings it guards. Every `extern "C"` constructor, setter and `_free` of those
//! handles is one call into this module, so NULL checks, locking, validation order and error
//! reporting are written once.

use std::fmt::Debug;
use std::ops::RangeBounds;
use std::sync::{Mutex, PoisonError};

use super::status::{
    boundary, boundary_infallible, FfiError, PaimonCleanupError, PaimonCleanupStatus,
};
use super::util::{handle_ref, out_arg};

/// Settings behind a handle: setters change them under a lock, an operation copies them when it
/// starts (so a setter called during a run does not affect it).
#[derive(Default)]
pub(crate) struct Settings<T>(Mutex<T>);

impl<T: Clone> Settings<T> {
    /// A copy of the current settings.
    pub(crate) fn get(&self) -> T {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn change(&self, change: impl FnOnce(&mut T)) {
        change(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// An opaque C handle that owns [`Settings`] of type `Self::Settings`.
pub(crate) trait SettingsHandle: Sized {
    /// What the handle holds; a new handle holds the default.
    type Settings: Clone + Default;
    /// The name of the handle parameter in the setters (`config`, `options`), for error messages.
    const ARGUMENT: &'static str;
    /// A handle around `settings`.
    fn wrap(settings: Settings<Self::Settings>) -> Self;
    /// The settings the handle owns.
    fn settings(&self) -> &Settings<Self::Settings>;
}

/// Implements [`SettingsHandle`] for a handle struct whose one field is `Settings<$settings>`.
/// (The struct itself stays written out, so that cbindgen sees it and its documentation.)
macro_rules! settings_handle {
    ($handle:ident, $settings:ty, $argument:literal) => {
        impl $crate::ffi::handle::SettingsHandle for $handle {
            type Settings = $settings;
            const ARGUMENT: &'static str = $argument;
            fn wrap(settings: $crate::ffi::handle::Settings<$settings>) -> Self {
                $handle(settings)
            }
            fn settings(&self) -> &$crate::ffi::handle::Settings<$settings> {
                &self.0
            }
        }
    };
}
pub(crate) use settings_handle;

/// The body of a constructor: checks `out`, then makes the object and writes a pointer to it to
/// `*out` (left untouched on failure). The caller owns the object and frees it with
/// [`free_handle`].
///
/// # Safety
/// `out` and `err` must be NULL or writable.
pub(crate) unsafe fn new_handle<H>(
    function: &'static str,
    out: *mut *mut H,
    err: *mut *mut PaimonCleanupError,
    make: impl FnOnce() -> Result<H, FfiError>,
) -> PaimonCleanupStatus {
    let body = || -> Result<(), FfiError> {
        let out = out_arg(out, function, "out")?;
        let handle = make()?;
        // SAFETY: `out` is non-NULL and writable (caller's guarantee).
        unsafe { hand_out(out, handle) };
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(function, err, body) }
}

/// Hands `object` to the caller: writes a pointer to it, on the heap, to `*out`. The caller owns
/// it and frees it with [`free_handle`].
///
/// # Safety
/// `out` must be non-NULL (checked with `out_arg`) and writable.
pub(crate) unsafe fn hand_out<H>(out: *mut *mut H, object: H) {
    // SAFETY: non-NULL and writable (caller's guarantee).
    unsafe { out.write(Box::into_raw(Box::new(object))) };
}

/// The body of a settings handle's `_new`: a handle with the default settings.
///
/// # Safety
/// `out` and `err` must be NULL or writable.
pub(crate) unsafe fn new_settings<H: SettingsHandle>(
    function: &'static str,
    out: *mut *mut H,
    err: *mut *mut PaimonCleanupError,
) -> PaimonCleanupStatus {
    // SAFETY: forwarded caller guarantees.
    unsafe { new_handle(function, out, err, || Ok(H::wrap(Settings::default()))) }
}

/// The body of a `_free`: drops the object behind `handle`; NULL is ignored.
///
/// # Safety
/// `handle` must be NULL or a pointer from [`new_handle`] or [`hand_out`] not yet freed.
pub(crate) unsafe fn free_handle<H>(handle: *mut H) {
    boundary_infallible((), || {
        if !handle.is_null() {
            // SAFETY: created by `Box::into_raw` in `hand_out` (caller's guarantee).
            drop(unsafe { Box::from_raw(handle) });
        }
    })
}

/// The body of a setter: `NULL_POINTER` when `handle` is NULL, else the error of `value` (the
/// checked argument; the settings are then unchanged), else `apply(settings, value)` under the
/// handle's lock.
///
/// # Safety
/// `handle` must be NULL or live; `err` must be NULL or writable.
pub(crate) unsafe fn set<H: SettingsHandle, V>(
    function: &'static str,
    handle: *mut H,
    err: *mut *mut PaimonCleanupError,
    value: Result<V, FfiError>,
    apply: impl FnOnce(&mut H::Settings, V),
) -> PaimonCleanupStatus {
    let body = || -> Result<(), FfiError> {
        // SAFETY: NULL or live (caller's guarantee).
        let handle = unsafe { handle_ref(handle.cast_const(), function, H::ARGUMENT) }?;
        let value = value?;
        handle.settings().change(|settings| apply(settings, value));
        Ok(())
    };
    // SAFETY: `err` is NULL or writable (caller's guarantee).
    unsafe { boundary(function, err, body) }
}

/// A copy of the settings of a required handle argument, or `NULL_POINTER`.
///
/// # Safety
/// `handle` must be NULL or live.
pub(crate) unsafe fn settings_of<H: SettingsHandle>(
    handle: *const H,
    function: &str,
) -> Result<H::Settings, FfiError> {
    // SAFETY: NULL or live (caller's guarantee).
    Ok(unsafe { handle_ref(handle, function, H::ARGUMENT) }?
        .settings()
        .get())
}

/// A copy of the settings of an optional handle argument; the defaults when it is NULL.
///
/// # Safety
/// `handle` must be NULL or live.
pub(crate) unsafe fn settings_or_default<H: SettingsHandle>(handle: *const H) -> H::Settings {
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { handle.as_ref() }
        .map(|h| h.settings().get())
        .unwrap_or_default()
}

/// `value` when it lies in `range`, else `INVALID_ARGUMENT` naming the function, the argument,
/// the value and the range (`1..`, `0..=4096`). The one range check of every setter.
/// Largest count a setter accepts (retained snapshots, snapshots or partitions per run,
/// partitions per commit): Java's `int`, the type of the table options they override.
pub(crate) const MAX_COUNT: i64 = i32::MAX as i64;
/// Largest duration in milliseconds a setter accepts: durations are compared with epoch-ms
/// times, which are `int64`.
pub(crate) const MAX_DURATION_MS: u64 = i64::MAX as u64;

pub(crate) fn in_range<T, R>(function: &str, name: &str, value: T, range: R) -> Result<T, FfiError>
where
    T: PartialOrd + Debug,
    R: RangeBounds<T> + Debug,
{
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(FfiError::invalid_argument(format!(
            "{function}: {name} = {value:?} is out of range ({range:?})"
        )))
    }
}
