//! A C callback with its user data, as the callback setters store it (progress, log, veto).

use std::ffi::c_void;

/// A C function pointer plus the `user_data` the host gave with it. The host promises (see each
/// callback type's thread rules) that the function may be called with this user data from any
/// thread while an operation using it runs.
#[derive(Clone, Copy)]
pub(crate) struct CCallback<F> {
    pub(crate) function: F,
    pub(crate) user_data: *mut c_void,
}

impl<F> CCallback<F> {
    /// Pairs a host function with its user data; `None` when the host gave a NULL function.
    pub(crate) fn new(function: Option<F>, user_data: *mut c_void) -> Option<Self> {
        function.map(|function| CCallback {
            function,
            user_data,
        })
    }
}

// SAFETY: the documented contract of every callback setter is that the function and its user data
// may be used from any thread while a handle holding them is in use.
unsafe impl<F: Send> Send for CCallback<F> {}
// SAFETY: as above.
unsafe impl<F: Sync> Sync for CCallback<F> {}
