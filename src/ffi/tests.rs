//! Unit tests of the C boundary, driven from Rust through the exported functions.

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::ptr;

use super::status::{boundary, status_of, FfiError};
use super::*;
use crate::error::Error;

fn message(err: *const PaimonCleanupError) -> String {
    // SAFETY: the tests pass NULL or live error objects.
    unsafe { CStr::from_ptr(paimon_cleanup_error_message(err)) }
        .to_str()
        .expect("messages are UTF-8")
        .to_owned()
}

fn name(status: i32) -> String {
    // SAFETY: static NUL-terminated string.
    unsafe { CStr::from_ptr(paimon_cleanup_status_name(status)) }
        .to_str()
        .expect("names are ASCII")
        .to_owned()
}

#[test]
fn version_matches_the_crate() {
    // SAFETY: static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(paimon_cleanup_version()) };
    assert_eq!(version.to_str().ok(), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(paimon_cleanup_abi_version(), PAIMON_CLEANUP_ABI_VERSION);
}

#[test]
fn status_codes_are_stable() {
    let expected = [
        (PaimonCleanupStatus::Ok, 0, "ok"),
        (PaimonCleanupStatus::InvalidArgument, 1, "invalid_argument"),
        (PaimonCleanupStatus::NotFound, 2, "not_found"),
        (PaimonCleanupStatus::Malformed, 3, "malformed"),
        (PaimonCleanupStatus::Unsupported, 4, "unsupported"),
        (PaimonCleanupStatus::Storage, 5, "storage"),
        (PaimonCleanupStatus::PathRefused, 6, "path_refused"),
        (PaimonCleanupStatus::Cancelled, 7, "cancelled"),
        (PaimonCleanupStatus::Conflict, 8, "conflict"),
        (PaimonCleanupStatus::Internal, 9, "internal"),
        (PaimonCleanupStatus::NullPointer, 10, "null_pointer"),
        (PaimonCleanupStatus::InvalidUtf8, 11, "invalid_utf8"),
        (PaimonCleanupStatus::Panic, 12, "panic"),
    ];
    assert_eq!(expected.len(), PaimonCleanupStatus::ALL.len());
    for (status, code, text) in expected {
        assert_eq!(status as i32, code);
        assert_eq!(name(code), text);
    }
    assert_eq!(name(-1), "unknown");
    assert_eq!(name(13), "unknown");
}

#[test]
fn every_error_variant_has_its_own_code() {
    let cases = [
        (
            Error::InvalidArgument("x".into()),
            PaimonCleanupStatus::InvalidArgument,
        ),
        (
            Error::NotFound { path: "p".into() },
            PaimonCleanupStatus::NotFound,
        ),
        (
            Error::malformed("snapshot", "p", "bad"),
            PaimonCleanupStatus::Malformed,
        ),
        (
            Error::Unsupported("x".into()),
            PaimonCleanupStatus::Unsupported,
        ),
        (Error::storage("p", "io"), PaimonCleanupStatus::Storage),
        (
            Error::PathRefused {
                path: "p".into(),
                reason: "r".into(),
            },
            PaimonCleanupStatus::PathRefused,
        ),
        (Error::Cancelled, PaimonCleanupStatus::Cancelled),
        (Error::Conflict("c".into()), PaimonCleanupStatus::Conflict),
        (Error::Internal("i".into()), PaimonCleanupStatus::Internal),
    ];
    for (error, status) in cases {
        assert_eq!(status_of(&error), status);
        let text = error.to_string();
        let ffi = FfiError::from(error);
        assert_eq!(ffi.status, status);
        assert_eq!(ffi.message, text);
    }
}

#[test]
fn panics_become_a_status_and_a_message() {
    let mut err: *mut PaimonCleanupError = ptr::null_mut();
    // SAFETY: `err` is writable.
    let status = unsafe {
        boundary(
            "paimon_cleanup_test",
            &mut err,
            || -> Result<(), FfiError> { panic!("boom {}", 42) },
        )
    };
    assert_eq!(status, PaimonCleanupStatus::Panic);
    assert!(!err.is_null());
    // SAFETY: live error object.
    assert_eq!(
        unsafe { paimon_cleanup_error_status(err) },
        PaimonCleanupStatus::Panic
    );
    let text = message(err);
    assert!(
        text.contains("paimon_cleanup_test") && text.contains("boom 42"),
        "{text}"
    );
    // SAFETY: freed once.
    unsafe { paimon_cleanup_error_free(err) };

    // A NUL inside a message does not lose the message.
    let mut err: *mut PaimonCleanupError = ptr::null_mut();
    // SAFETY: `err` is writable.
    let status = unsafe { boundary("f", &mut err, || Err(FfiError::invalid_argument("a\0b"))) };
    assert_eq!(status, PaimonCleanupStatus::InvalidArgument);
    assert_eq!(message(err), "a\u{FFFD}b");
    // SAFETY: freed once.
    unsafe { paimon_cleanup_error_free(err) };
}

#[test]
fn null_error_object_accessors_are_neutral() {
    // SAFETY: NULL is accepted.
    unsafe {
        assert_eq!(
            paimon_cleanup_error_status(ptr::null()),
            PaimonCleanupStatus::Ok
        );
        paimon_cleanup_error_free(ptr::null_mut());
        paimon_cleanup_executor_free(ptr::null_mut());
        paimon_cleanup_context_free(ptr::null_mut());
        assert_eq!(paimon_cleanup_executor_worker_threads(ptr::null()), 0);
        assert_eq!(paimon_cleanup_executor_io_concurrency(ptr::null()), 0);
    }
    assert_eq!(message(ptr::null()), "");
}

#[test]
fn executor_lifecycle_and_ranges() {
    for threads in [1u32, 2, 8] {
        let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        // SAFETY: valid out-parameters.
        unsafe {
            assert_eq!(
                paimon_cleanup_executor_new(threads, &mut exec, &mut err),
                PaimonCleanupStatus::Ok
            );
            assert!(err.is_null());
            assert_eq!(paimon_cleanup_executor_worker_threads(exec), threads);
            assert_eq!(paimon_cleanup_executor_io_concurrency(exec), 0);
            assert_eq!((*exec).effective_io_concurrency("/tmp/t"), 8);
            assert_eq!((*exec).effective_io_concurrency("s3://b/t"), 64);
            assert_eq!(
                paimon_cleanup_executor_set_io_concurrency(exec, 16, &mut err),
                PaimonCleanupStatus::Ok
            );
            assert_eq!(paimon_cleanup_executor_io_concurrency(exec), 16);
            assert_eq!(
                paimon_cleanup_executor_set_io_concurrency(exec, 1_000_000, &mut err),
                PaimonCleanupStatus::InvalidArgument
            );
            assert!(message(err).contains("io_concurrency"));
            paimon_cleanup_error_free(err);
            paimon_cleanup_executor_free(exec);
        }
    }
    let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
    let mut err: *mut PaimonCleanupError = ptr::null_mut();
    // SAFETY: valid out-parameters.
    unsafe {
        assert_eq!(
            paimon_cleanup_executor_new(0, &mut exec, &mut err),
            PaimonCleanupStatus::Ok
        );
        assert!(paimon_cleanup_executor_worker_threads(exec) >= 1);
        paimon_cleanup_executor_free(exec);
        exec = ptr::null_mut();
        assert_eq!(
            paimon_cleanup_executor_new(100_000, &mut exec, &mut err),
            PaimonCleanupStatus::InvalidArgument
        );
        assert!(exec.is_null());
        assert!(message(err).contains("worker_threads"));
        paimon_cleanup_error_free(err);
        assert_eq!(
            paimon_cleanup_executor_new(1, ptr::null_mut(), ptr::null_mut()),
            PaimonCleanupStatus::NullPointer
        );
    }
}

#[test]
fn context_arguments_are_checked() {
    let uri = CString::new("/tmp/some/table").expect("no NUL");
    let k1 = CString::new("a").expect("no NUL");
    let v1 = CString::new("1").expect("no NUL");
    let bad: &[u8] = b"\xff\xfe\0";
    let keys = [k1.as_ptr(), k1.as_ptr()];
    let values = [v1.as_ptr(), v1.as_ptr()];
    let mut ctx: *mut PaimonCleanupContext = ptr::null_mut();
    let mut err: *mut PaimonCleanupError = ptr::null_mut();
    // SAFETY: every pointer below is valid for the call or NULL.
    unsafe {
        assert_eq!(
            paimon_cleanup_context_new(
                uri.as_ptr(),
                ptr::null(),
                ptr::null(),
                0,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::Ok
        );
        assert_eq!((*ctx).table_uri(), "/tmp/some/table");
        paimon_cleanup_context_free(ctx);

        assert_eq!(
            paimon_cleanup_context_new(
                uri.as_ptr(),
                keys.as_ptr(),
                values.as_ptr(),
                1,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::Ok
        );
        assert_eq!((*ctx).options().get("a").map(String::as_str), Some("1"));
        paimon_cleanup_context_free(ctx);

        // Duplicate key.
        assert_eq!(
            paimon_cleanup_context_new(
                uri.as_ptr(),
                keys.as_ptr(),
                values.as_ptr(),
                2,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::InvalidArgument
        );
        assert!(message(err).contains("more than once"));
        paimon_cleanup_error_free(err);

        // NULL uri, NULL arrays, NULL element.
        assert_eq!(
            paimon_cleanup_context_new(
                ptr::null(),
                ptr::null(),
                ptr::null(),
                0,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::NullPointer
        );
        assert!(message(err).contains("table_uri"));
        paimon_cleanup_error_free(err);
        assert_eq!(
            paimon_cleanup_context_new(
                uri.as_ptr(),
                ptr::null(),
                values.as_ptr(),
                1,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::NullPointer
        );
        assert!(message(err).contains("option_keys"));
        paimon_cleanup_error_free(err);
        let null_values: [*const c_char; 1] = [ptr::null()];
        assert_eq!(
            paimon_cleanup_context_new(
                uri.as_ptr(),
                keys.as_ptr(),
                null_values.as_ptr(),
                1,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::NullPointer
        );
        assert!(message(err).contains("option_values[0]"));
        paimon_cleanup_error_free(err);

        // Invalid UTF-8 in the uri and in a value.
        assert_eq!(
            paimon_cleanup_context_new(
                bad.as_ptr().cast(),
                ptr::null(),
                ptr::null(),
                0,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::InvalidUtf8
        );
        assert!(message(err).contains("UTF-8"));
        paimon_cleanup_error_free(err);
        let bad_values = [bad.as_ptr().cast::<c_char>()];
        assert_eq!(
            paimon_cleanup_context_new(
                uri.as_ptr(),
                keys.as_ptr(),
                bad_values.as_ptr(),
                1,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::InvalidUtf8
        );
        assert!(message(err).contains("option_values[0]"));
        paimon_cleanup_error_free(err);

        // Empty URI.
        let empty = CString::new("").expect("no NUL");
        assert_eq!(
            paimon_cleanup_context_new(
                empty.as_ptr(),
                ptr::null(),
                ptr::null(),
                0,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::InvalidArgument
        );
        paimon_cleanup_error_free(err);
    }
}

#[test]
fn summary_checks_its_arguments_and_reports_through_the_error_object() {
    let uri = CString::new("/nonexistent/paimon-cleanup/ffi-test-table").expect("no NUL");
    let mut ctx: *mut PaimonCleanupContext = ptr::null_mut();
    let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
    let mut err: *mut PaimonCleanupError = ptr::null_mut();
    let mut out = PaimonCleanupTableSummary::default();
    // SAFETY: every pointer below is valid for the call or NULL.
    unsafe {
        assert_eq!(
            paimon_cleanup_context_new(
                uri.as_ptr(),
                ptr::null(),
                ptr::null(),
                0,
                &mut ctx,
                &mut err
            ),
            PaimonCleanupStatus::Ok
        );
        assert_eq!(
            paimon_cleanup_executor_new(2, &mut exec, &mut err),
            PaimonCleanupStatus::Ok
        );
        for (c, e, o, arg) in [
            (
                ptr::null(),
                exec.cast_const(),
                &mut out as *mut _,
                "context",
            ),
            (
                ctx.cast_const(),
                ptr::null(),
                &mut out as *mut _,
                "executor",
            ),
            (ctx.cast_const(), exec.cast_const(), ptr::null_mut(), "out"),
        ] {
            assert_eq!(
                paimon_cleanup_table_summary(c, e, o, &mut err),
                PaimonCleanupStatus::NullPointer
            );
            assert!(message(err).contains(arg), "{}", message(err));
            paimon_cleanup_error_free(err);
        }
        // A table that does not exist is an error (whatever the table layer's state), and the
        // output is not written.
        out.snapshot_count = 777;
        let status = paimon_cleanup_table_summary(ctx, exec, &mut out, &mut err);
        assert_ne!(status, PaimonCleanupStatus::Ok);
        assert_eq!(paimon_cleanup_error_status(err), status);
        assert!(!message(err).is_empty());
        assert_eq!(out.snapshot_count, 777);
        paimon_cleanup_error_free(err);
        // Without an error object the status is still returned.
        assert_eq!(
            paimon_cleanup_table_summary(ctx, exec, &mut out, ptr::null_mut()),
            status
        );
        paimon_cleanup_context_free(ctx);
        paimon_cleanup_executor_free(exec);
    }
}

#[test]
fn summary_refuses_to_run_inside_an_async_runtime() {
    let uri = CString::new("/nonexistent/t").expect("no NUL");
    let mut ctx: *mut PaimonCleanupContext = ptr::null_mut();
    let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
    // SAFETY: valid out-parameters.
    unsafe {
        paimon_cleanup_context_new(
            uri.as_ptr(),
            ptr::null(),
            ptr::null(),
            0,
            &mut ctx,
            ptr::null_mut(),
        );
        paimon_cleanup_executor_new(1, &mut exec, ptr::null_mut());
    }
    let (ctx_addr, exec_addr) = (ctx as usize, exec as usize);
    let outer = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let status = outer.block_on(async move {
        let mut out = PaimonCleanupTableSummary::default();
        // SAFETY: live handles.
        unsafe {
            paimon_cleanup_table_summary(
                ctx_addr as *const PaimonCleanupContext,
                exec_addr as *const PaimonCleanupExecutor,
                &mut out,
                ptr::null_mut(),
            )
        }
    });
    assert_eq!(status, PaimonCleanupStatus::InvalidArgument);
    // SAFETY: freed once each.
    unsafe {
        paimon_cleanup_context_free(ctx);
        paimon_cleanup_executor_free(exec);
    }
}

#[test]
fn handles_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<PaimonCleanupExecutor>();
    check::<PaimonCleanupContext>();
    check::<PaimonCleanupError>();
}

#[test]
fn summary_struct_conversion() {
    // The layout is part of the ABI (also asserted by c_tests/test_handles.c).
    assert_eq!(std::mem::size_of::<PaimonCleanupTableSummary>(), 64);
    assert_eq!(std::mem::align_of::<PaimonCleanupTableSummary>(), 8);
    let empty = PaimonCleanupTableSummary::from(crate::table::TableSummary::default());
    assert!(!empty.has_snapshots);
    assert_eq!(empty.latest_snapshot_id, 0);
    let full = PaimonCleanupTableSummary::from(crate::table::TableSummary {
        earliest_snapshot_id: Some(3),
        latest_snapshot_id: Some(9),
        snapshot_count: 7,
        tag_count: 2,
        branch_count: 1,
        live_file_count: 11,
        live_file_bytes: 12345,
    });
    assert!(full.has_snapshots);
    assert_eq!((full.earliest_snapshot_id, full.latest_snapshot_id), (3, 9));
    assert_eq!(full.live_file_bytes, 12345);
}
