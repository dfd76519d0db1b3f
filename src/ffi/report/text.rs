//! Rust text as C strings for the reports' accessors.

use std::ffi::CString;

/// A C string from report text; an interior NUL (never expected) is replaced, not dropped.
pub(super) fn c_text(text: String) -> CString {
    CString::new(text).unwrap_or_else(|e| {
        let text = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{FFFD}");
        CString::new(text).unwrap_or_default()
    })
}

/// [`c_text`] of each.
pub(super) fn c_texts(texts: Vec<String>) -> Vec<CString> {
    texts.into_iter().map(c_text).collect()
}
