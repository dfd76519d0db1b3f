//! The report as a whole: its JSON form and `paimon_cleanup_report_free`.

use std::ffi::CString;
use std::os::raw::c_char;

use super::base::*;
use super::text::c_text;
use crate::ffi::status::boundary_infallible;

impl PaimonCleanupReport {
    /// The full JSON value: the base with the path list and the steps put back.
    pub(super) fn json_value(&self) -> serde_json::Value {
        let mut value = self.json_base.clone();
        if let Some(deletion) = value.get_mut("deletion").and_then(|d| d.as_object_mut()) {
            let paths = self
                .paths
                .iter()
                .map(|(path, class)| {
                    serde_json::json!({
                        "class": class.name_nul().trim_end_matches('\0'),
                        "path": path,
                    })
                })
                .collect();
            deletion.insert("paths".to_owned(), serde_json::Value::Array(paths));
        }
        if let Some(object) = value.as_object_mut() {
            for (key, step) in &self.steps {
                object.insert((*key).to_owned(), step.json_value());
            }
        }
        value
    }

    pub(super) fn json_text(&self) -> &CString {
        self.json
            .get_or_init(|| c_text(self.json_value().to_string()))
    }
}

/// Returns the whole report as one JSON object, NUL-terminated UTF-8: the same document the CLI
/// prints with `--json` for the same operation (every field, including the kind-specific ones
/// that have no accessor, and the path listing). An empty string for NULL.
///
/// Built on the first call (memory proportional to the path listing) and cached.
/// Ownership: borrowed from the report; valid until the report is freed.
///
/// # Safety
/// `report` must be NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_json(
    report: *const PaimonCleanupReport,
) -> *const c_char {
    static EMPTY: &str = "\0";
    // SAFETY: NULL or live (caller's guarantee).
    unsafe { read(report, EMPTY.as_ptr().cast(), |r| r.json_text().as_ptr()) }
}

/// Frees a report and every string borrowed from it. NULL is accepted and ignored.
///
/// Ownership: takes back ownership of `report`. Free each report exactly once.
/// Thread-safety: may be called from any thread, but not while another thread still reads the
/// report.
///
/// # Safety
/// `report` must be NULL or a report handed out by this library and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn paimon_cleanup_report_free(report: *mut PaimonCleanupReport) {
    boundary_infallible((), || {
        if !report.is_null() {
            // SAFETY: created by `Box::into_raw` when the report was handed out.
            drop(unsafe { Box::from_raw(report) });
        }
    })
}
