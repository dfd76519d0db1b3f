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
        (PaimonCleanupStatus::MemoryLimit, 13, "memory_limit"),
    ];
    assert_eq!(expected.len(), PaimonCleanupStatus::ALL.len());
    for (status, code, text) in expected {
        assert_eq!(status as i32, code);
        assert_eq!(name(code), text);
    }
    assert_eq!(name(-1), "unknown");
    assert_eq!(name(14), "unknown");
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
        (Error::Panic("p".into()), PaimonCleanupStatus::Panic),
        (
            Error::MemoryLimit {
                limit: 1,
                message: "max_memory".into(),
            },
            PaimonCleanupStatus::MemoryLimit,
        ),
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
fn a_panic_inside_a_blocking_task_reaches_the_host_as_panic() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let at = crate::storage::Location::parse("/w/t/manifest/manifest-1").unwrap();
    let mut err: *mut PaimonCleanupError = ptr::null_mut();
    // SAFETY: `err` is writable.
    let status = unsafe {
        boundary(
            "paimon_cleanup_test",
            &mut err,
            || -> Result<(), FfiError> {
                let work = crate::storage::blocking(&at, || -> crate::Result<()> {
                    panic!("decoder bug")
                });
                Ok(runtime.block_on(work)?)
            },
        )
    };
    assert_eq!(status, PaimonCleanupStatus::Panic);
    let text = message(err);
    assert!(text.contains("decoder bug"), "{text}");
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

mod operations {
    use std::ffi::{c_void, CStr, CString};
    use std::os::raw::c_char;
    use std::ptr;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use super::message;
    use crate::clean::report::{Count, DeletedPath, DeletionReport, FailedDelete, FileClass};
    use crate::clean::{ConsumerReport, ExpireReport, MaintainReport, PartitionReport, TagReport};
    use crate::ffi::control::run_control;
    use crate::ffi::handle::SettingsHandle;
    use crate::ffi::report::PaimonCleanupReport;
    use crate::ffi::*;

    fn text(p: *const c_char) -> Option<String> {
        // SAFETY: the tests pass NULL or strings borrowed from live reports.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    fn deletion(paths: &[(FileClass, &str, u64)], failed: &[&str]) -> DeletionReport {
        let mut d = DeletionReport::default();
        for (class, path, bytes) in paths {
            let c = d.deleted.entry(*class).or_insert(Count::default());
            c.files += 1;
            c.bytes += bytes;
            d.paths.push(DeletedPath {
                class: *class,
                path: (*path).to_owned(),
            });
        }
        d.failed = failed
            .iter()
            .map(|p| FailedDelete {
                path: (*p).to_owned(),
                error: format!("cannot delete {p}"),
            })
            .collect();
        d
    }

    fn boxed(report: PaimonCleanupReport) -> *mut PaimonCleanupReport {
        Box::into_raw(Box::new(report))
    }

    #[test]
    fn handles_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<PaimonCleanupRunOptions>();
        check::<PaimonCleanupCancelToken>();
        check::<PaimonCleanupExpireConfig>();
        check::<PaimonCleanupOrphanConfig>();
        check::<PaimonCleanupPartitionExpireConfig>();
        check::<PaimonCleanupMaintainConfig>();
        check::<PaimonCleanupReport>();
    }

    #[test]
    fn expire_config_setters_check_ranges_and_the_last_cut_off_wins() {
        let mut cfg: *mut PaimonCleanupExpireConfig = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        // SAFETY: valid out-parameters and a live config.
        unsafe {
            assert_eq!(
                paimon_cleanup_expire_config_new(&mut cfg, &mut err),
                PaimonCleanupStatus::Ok
            );
            type Setter = unsafe extern "C" fn(
                *mut PaimonCleanupExpireConfig,
                i64,
                *mut *mut PaimonCleanupError,
            ) -> PaimonCleanupStatus;
            let cases: [(Setter, i64, &str); 4] = [
                (
                    paimon_cleanup_expire_config_set_retain_min,
                    0,
                    "retain_min = 0",
                ),
                (paimon_cleanup_expire_config_set_retain_max, 0, "retain_max"),
                (
                    paimon_cleanup_expire_config_set_max_expires,
                    -1,
                    "max_expires",
                ),
                (
                    paimon_cleanup_expire_config_set_older_than_ms,
                    -5,
                    "older_than_ms",
                ),
            ];
            for (setter, value, needle) in cases {
                assert_eq!(
                    setter(cfg, value, &mut err),
                    PaimonCleanupStatus::InvalidArgument
                );
                assert!(message(err).contains(needle), "{}", message(err));
                paimon_cleanup_error_free(err);
            }
            assert_eq!(
                paimon_cleanup_expire_config_set_retain_min(ptr::null_mut(), 1, &mut err),
                PaimonCleanupStatus::NullPointer
            );
            assert!(message(err).contains("config"));
            paimon_cleanup_error_free(err);
            assert_eq!(
                paimon_cleanup_expire_config_set_retain_min(cfg, 3, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            paimon_cleanup_expire_config_set_older_than_ms(cfg, 1000, ptr::null_mut());
            paimon_cleanup_expire_config_set_clean_empty_dirs(cfg, true, ptr::null_mut());
            paimon_cleanup_expire_config_set_refuse_if_tags_pin(cfg, true, ptr::null_mut());
            paimon_cleanup_expire_config_set_delete_all_changelogs(cfg, true, ptr::null_mut());
            paimon_cleanup_expire_config_set_dry_run(cfg, true, ptr::null_mut());
            let s = (*cfg).settings().get();
            let snap = s.snapshots();
            assert_eq!(snap.retention.retain_min, Some(3));
            assert_eq!(snap.retention.older_than_ms, Some(1000));
            assert_eq!(snap.retention.time_retained, None);
            assert_eq!(snap.clean_empty_dirs, Some(true));
            assert!(snap.refuse_if_tags_pin_expired && snap.dry_run);
            let cl = s.changelogs();
            assert!(cl.delete_all && cl.dry_run);
            assert_eq!(cl.retention.retain_min, Some(3));
            // The later of the two cut-off setters wins.
            paimon_cleanup_expire_config_set_time_retained_ms(cfg, 5000, ptr::null_mut());
            let snap = (*cfg).settings().get().snapshots();
            assert_eq!(snap.retention.older_than_ms, None);
            assert_eq!(
                snap.retention.time_retained,
                Some(Duration::from_millis(5000))
            );
            paimon_cleanup_expire_config_free(cfg);
            paimon_cleanup_expire_config_free(ptr::null_mut());
        }
    }

    unsafe extern "C" fn count_progress(
        user_data: *mut c_void,
        phase: *const c_char,
        done: u64,
        _total: u64,
        bytes: u64,
    ) {
        // SAFETY: the test passes a live AtomicU64 and a NUL-terminated phase.
        let counter = unsafe { &*(user_data as *const AtomicU64) };
        // SAFETY: as above.
        let phase = unsafe { CStr::from_ptr(phase) };
        assert_eq!(phase.to_str().ok(), Some("phase x"));
        counter.fetch_add(done + bytes, Ordering::SeqCst);
    }

    /// What `slow_progress` records: that a call started, and `done` of the last call once it
    /// returns (after a pause).
    #[derive(Default)]
    struct SlowCalls {
        started: std::sync::atomic::AtomicBool,
        done: AtomicU64,
    }

    unsafe extern "C" fn slow_progress(
        user_data: *mut c_void,
        _phase: *const c_char,
        done: u64,
        _total: u64,
        _bytes: u64,
    ) {
        // SAFETY: the test passes a live SlowCalls.
        let calls = unsafe { &*(user_data as *const SlowCalls) };
        calls.started.store(true, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(200));
        calls.done.store(done, Ordering::SeqCst);
    }

    #[test]
    fn closing_the_progress_waits_for_a_call_in_flight_and_stops_later_ones() {
        let calls = SlowCalls::default();
        let mut opts: *mut PaimonCleanupRunOptions = ptr::null_mut();
        // SAFETY: valid out-parameters, live handles; `calls` outlives the options' use.
        unsafe {
            assert_eq!(
                paimon_cleanup_run_options_new(&mut opts, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            paimon_cleanup_run_options_set_progress(
                opts,
                Some(slow_progress),
                &calls as *const SlowCalls as *mut c_void,
                ptr::null_mut(),
            );
            let (ctl, close) = run_control(opts.as_ref(), 1);
            // A task of the run still reporting on another thread when the operation returns.
            let task = ctl.clone();
            let worker = std::thread::spawn(move || task.progress("phase", 7, 0, 0));
            while !calls.started.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            drop(close);
            // The call in flight returned before the close did.
            assert_eq!(calls.done.load(Ordering::SeqCst), 7);
            ctl.progress("phase", 9, 0, 0);
            assert_eq!(calls.done.load(Ordering::SeqCst), 7);
            worker.join().expect("worker");
            paimon_cleanup_run_options_free(opts);
        }
    }

    #[test]
    fn settings_setters_check_the_handle_first_then_the_range() {
        use PaimonCleanupStatus::{InvalidArgument, NullPointer, Ok as Done};
        // SAFETY: every handle is NULL or live and freed once; `err` is NULL.
        unsafe {
            let mut orphan = ptr::null_mut();
            let mut part = ptr::null_mut();
            let mut maintain = ptr::null_mut();
            let mut options = ptr::null_mut();
            assert_eq!(
                paimon_cleanup_orphan_config_new(&mut orphan, ptr::null_mut()),
                Done
            );
            assert_eq!(
                paimon_cleanup_partition_expire_config_new(&mut part, ptr::null_mut()),
                Done
            );
            assert_eq!(
                paimon_cleanup_maintain_config_new(&mut maintain, ptr::null_mut()),
                Done
            );
            assert_eq!(
                paimon_cleanup_run_options_new(&mut options, ptr::null_mut()),
                Done
            );
            let orphan_cases: [(i64, u32, PaimonCleanupStatus); 4] = [
                (0, 0, Done),
                (0, 4096, Done),
                (-1, 1, InvalidArgument),
                (1, 4097, InvalidArgument),
            ];
            for (older, conc, expected) in orphan_cases {
                let set_older = paimon_cleanup_orphan_config_set_older_than_ms;
                let set_list = paimon_cleanup_orphan_config_set_list_concurrency;
                let set_delete = paimon_cleanup_orphan_config_set_delete_concurrency;
                assert_eq!(
                    set_older(ptr::null_mut(), older, ptr::null_mut()),
                    NullPointer
                );
                assert_eq!(
                    set_list(ptr::null_mut(), conc, ptr::null_mut()),
                    NullPointer
                );
                let got = [
                    set_older(orphan, older, ptr::null_mut()),
                    set_list(orphan, conc, ptr::null_mut()),
                    set_delete(orphan, conc, ptr::null_mut()),
                ];
                assert!(got.contains(&expected), "{older} {conc}: {got:?}");
            }
            for (value, expected) in [
                (0u64, InvalidArgument),
                (1, Done),
                (i32::MAX as u64, Done),
                (u64::MAX, InvalidArgument),
            ] {
                let setters = [
                    paimon_cleanup_partition_expire_config_set_expiration_time_ms,
                    paimon_cleanup_partition_expire_config_set_max_expires,
                    paimon_cleanup_partition_expire_config_set_batch_size,
                ];
                for setter in setters {
                    assert_eq!(setter(ptr::null_mut(), value, ptr::null_mut()), NullPointer);
                    assert_eq!(setter(part, value, ptr::null_mut()), expected, "{value}");
                }
            }
            let set_now = paimon_cleanup_partition_expire_config_set_now_ms;
            assert_eq!(set_now(part, -1, ptr::null_mut()), InvalidArgument);
            assert_eq!(set_now(part, i64::MAX, ptr::null_mut()), InvalidArgument);
            assert_eq!(set_now(part, 0, ptr::null_mut()), Done);
            let set_strategy = paimon_cleanup_partition_expire_config_set_strategy;
            assert_eq!(set_strategy(part, 2, ptr::null_mut()), InvalidArgument);
            assert_eq!(
                set_strategy(ptr::null_mut(), 2, ptr::null_mut()),
                NullPointer
            );
            assert_eq!(set_strategy(part, 1, ptr::null_mut()), Done);
            let s = (*part).settings().get();
            assert_eq!(s.now_millis, Some(0));
            assert_eq!(s.batch_size, Some(i32::MAX as usize));
            assert_eq!(
                paimon_cleanup_maintain_config_set_dry_run(ptr::null_mut(), true, ptr::null_mut()),
                NullPointer
            );
            assert_eq!(
                paimon_cleanup_maintain_config_set_dry_run(maintain, true, ptr::null_mut()),
                Done
            );
            assert!((*maintain).settings().get().dry_run);
            let set_log = paimon_cleanup_run_options_set_log;
            assert_eq!(
                set_log(ptr::null_mut(), None, 9, ptr::null_mut(), ptr::null_mut()),
                NullPointer
            );
            assert_eq!(
                set_log(options, None, 9, ptr::null_mut(), ptr::null_mut()),
                Done
            );
            paimon_cleanup_orphan_config_free(orphan);
            paimon_cleanup_partition_expire_config_free(part);
            paimon_cleanup_maintain_config_free(maintain);
            paimon_cleanup_run_options_free(options);
        }
    }

    #[test]
    fn run_options_map_onto_the_run_control() {
        let counter = AtomicU64::new(0);
        let mut opts: *mut PaimonCleanupRunOptions = ptr::null_mut();
        let mut token: *mut PaimonCleanupCancelToken = ptr::null_mut();
        // SAFETY: valid out-parameters, live handles.
        unsafe {
            assert_eq!(
                paimon_cleanup_run_options_new(&mut opts, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            assert_eq!(
                paimon_cleanup_cancel_token_new(&mut token, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            let (ctl, _close) = run_control(opts.as_ref(), 0);
            assert!(ctl.progress.is_none());
            assert_eq!(ctl.io_concurrency, 1);
            assert_eq!(ctl.max_memory, None);
            // The memory bound: set, kept by a control made before a change, removed with 0.
            assert_eq!(
                paimon_cleanup_run_options_set_max_memory(opts, 4096, ptr::null_mut()),
                PaimonCleanupStatus::Ok
            );
            let (bounded, _close) = run_control(opts.as_ref(), 1);
            assert_eq!(bounded.max_memory, Some(4096));
            assert_eq!(bounded.memory_budget().limit(), Some(4096));
            paimon_cleanup_run_options_set_max_memory(opts, 0, ptr::null_mut());
            assert_eq!(bounded.max_memory, Some(4096));
            assert_eq!(run_control(opts.as_ref(), 1).0.max_memory, None);
            let mut err: *mut PaimonCleanupError = ptr::null_mut();
            assert_eq!(
                paimon_cleanup_run_options_set_max_memory(ptr::null_mut(), 1, &mut err),
                PaimonCleanupStatus::NullPointer
            );
            assert!(!err.is_null());
            paimon_cleanup_error_free(err);
            paimon_cleanup_run_options_set_progress(
                opts,
                Some(count_progress),
                &counter as *const AtomicU64 as *mut c_void,
                ptr::null_mut(),
            );
            paimon_cleanup_run_options_set_cancel_token(opts, token, ptr::null_mut());
            let (ctl, close) = run_control(opts.as_ref(), 16);
            assert_eq!(ctl.io_concurrency, 16);
            ctl.progress("phase x", 2, 3, 40);
            assert_eq!(counter.load(Ordering::SeqCst), 42);
            // Once the operation returned (its close dropped) the callback is not called.
            let late = ctl.clone();
            drop(close);
            late.progress("phase x", 1, 1, 1);
            assert_eq!(counter.load(Ordering::SeqCst), 42);
            assert!(ctl.cancel.check().is_ok());
            // Cancelled from another thread; the handle can then go, the control keeps the flag.
            let addr = token as usize;
            std::thread::spawn(move || {
                paimon_cleanup_cancel_token_cancel(addr as *const PaimonCleanupCancelToken)
            })
            .join()
            .expect("thread");
            assert!(paimon_cleanup_cancel_token_is_cancelled(token));
            paimon_cleanup_cancel_token_free(token);
            assert!(ctl.cancel.check().is_err());
            assert!(run_control(opts.as_ref(), 1).0.cancel.is_cancelled());
            // Clearing both.
            paimon_cleanup_run_options_set_progress(opts, None, ptr::null_mut(), ptr::null_mut());
            paimon_cleanup_run_options_set_cancel_token(opts, ptr::null(), ptr::null_mut());
            let (ctl, _close) = run_control(opts.as_ref(), 1);
            assert!(ctl.progress.is_none() && !ctl.cancel.is_cancelled());
            paimon_cleanup_run_options_free(opts);
            assert!(!paimon_cleanup_cancel_token_is_cancelled(ptr::null()));
        }
    }

    #[test]
    fn expire_report_accessors_and_json() {
        let mut report = ExpireReport {
            snapshots_expired: 3,
            first_expired: Some(4),
            last_expired: Some(6),
            earliest_after: Some(7),
            changelogs_written: 0,
            kept_by: None,
            deletion: deletion(
                &[
                    (FileClass::Data, "p=1/bucket-0/data-a.orc", 100),
                    (FileClass::Data, "p=1/bucket-0/data-b.orc", 50),
                    (FileClass::SnapshotMeta, "snapshot/snapshot-4", 7),
                ],
                &["manifest/manifest-x"],
            ),
            elapsed_ms: 12,
        };
        report.deletion.dirs_removed = 2;
        let expected_json = serde_json::to_value(&report).expect("json");
        let r = boxed(PaimonCleanupReport::from_expire_snapshots(report));
        // SAFETY: a live report, freed once at the end.
        unsafe {
            assert_eq!(
                paimon_cleanup_report_kind(r),
                PaimonCleanupReportKind::ExpireSnapshots
            );
            assert_eq!(
                text(paimon_cleanup_report_kind_name(
                    paimon_cleanup_report_kind(r) as i32
                )),
                Some("expire_snapshots".into())
            );
            assert_eq!(paimon_cleanup_report_expired_count(r), 3);
            assert!(paimon_cleanup_report_has_expired_range(r));
            assert_eq!(paimon_cleanup_report_first_expired_id(r), 4);
            assert_eq!(paimon_cleanup_report_last_expired_id(r), 6);
            assert!(paimon_cleanup_report_has_earliest_after(r));
            assert_eq!(paimon_cleanup_report_earliest_after_id(r), 7);
            let data = PaimonCleanupFileClass::Data as i32;
            assert_eq!(paimon_cleanup_report_files(r, data), 2);
            assert_eq!(paimon_cleanup_report_bytes(r, data), 150);
            assert_eq!(paimon_cleanup_report_files(r, 99), 0);
            assert_eq!(paimon_cleanup_report_files(r, -1), 0);
            assert_eq!(paimon_cleanup_report_total_files(r), 3);
            assert_eq!(paimon_cleanup_report_total_bytes(r), 157);
            assert_eq!(paimon_cleanup_report_failed_count(r), 1);
            assert_eq!(
                text(paimon_cleanup_report_failed_path(r, 0)),
                Some("manifest/manifest-x".into())
            );
            assert!(text(paimon_cleanup_report_failed_error(r, 0))
                .is_some_and(|e| e.contains("cannot delete")));
            assert!(paimon_cleanup_report_failed_path(r, 1).is_null());
            assert_eq!(paimon_cleanup_report_path_count(r), 3);
            assert_eq!(
                text(paimon_cleanup_report_path(r, 2)),
                Some("snapshot/snapshot-4".into())
            );
            assert_eq!(
                paimon_cleanup_report_path_class(r, 2),
                PaimonCleanupFileClass::SnapshotMeta
            );
            assert_eq!(
                paimon_cleanup_report_path_class(r, 3),
                PaimonCleanupFileClass::Other
            );
            assert!(paimon_cleanup_report_path(r, 3).is_null());
            assert_eq!(paimon_cleanup_report_dirs_removed(r), 2);
            assert_eq!(paimon_cleanup_report_elapsed_ms(r), 12);
            assert_eq!(paimon_cleanup_report_step_count(r), 0);
            assert!(paimon_cleanup_report_step(r, 0).is_null());
            // The JSON is the Rust report's, paths included.
            let json: serde_json::Value =
                serde_json::from_str(&text(paimon_cleanup_report_json(r)).expect("json"))
                    .expect("valid JSON");
            assert_eq!(json, expected_json);
            // Cached: the same pointer twice.
            assert_eq!(paimon_cleanup_report_json(r), paimon_cleanup_report_json(r));
            paimon_cleanup_report_free(r);
            assert_eq!(
                text(paimon_cleanup_report_json(ptr::null())),
                Some(String::new())
            );
        }
    }

    /// A report whose paths went to the tasks says so through its accessor (and a maintain
    /// report through its step); a one-call report, every other report and NULL say false.
    #[test]
    fn paths_elsewhere_is_reported_per_report_and_through_steps() {
        let sample = |elsewhere: bool| {
            let mut d = deletion(&[(FileClass::Data, "p=1/bucket-0/data-a.orc", 10)], &[]);
            d.paths_elsewhere = elsewhere;
            ExpireReport {
                snapshots_expired: 1,
                deletion: d,
                ..Default::default()
            }
        };
        let sampled = boxed(PaimonCleanupReport::from_expire_snapshots(sample(true)));
        let whole = boxed(PaimonCleanupReport::from_expire_snapshots(sample(false)));
        let maintain = boxed(PaimonCleanupReport::from_maintain(MaintainReport {
            tags: None,
            partitions: None,
            consumers: None,
            snapshots: Some(sample(true)),
            changelogs: None,
            elapsed_ms: 1,
        }));
        // SAFETY: live reports, each freed once at the end; NULL is allowed.
        unsafe {
            assert!(paimon_cleanup_report_paths_elsewhere(sampled));
            assert!(!paimon_cleanup_report_paths_elsewhere(whole));
            assert!(paimon_cleanup_report_paths_elsewhere(maintain));
            assert!(paimon_cleanup_report_paths_elsewhere(
                paimon_cleanup_report_step(maintain, 0)
            ));
            assert!(!paimon_cleanup_report_paths_elsewhere(ptr::null()));
            // The same answer as the JSON's.
            let json: serde_json::Value =
                serde_json::from_str(&text(paimon_cleanup_report_json(sampled)).expect("json"))
                    .expect("valid JSON");
            assert_eq!(json["deletion"]["paths_elsewhere"], serde_json::json!(true));
            paimon_cleanup_report_free(sampled);
            paimon_cleanup_report_free(whole);
            paimon_cleanup_report_free(maintain);
        }
    }

    #[test]
    fn file_class_numbers_and_names_are_stable() {
        let expected = [
            (FileClass::Data, 0, "data"),
            (FileClass::ChangelogData, 1, "changelog_data"),
            (FileClass::Manifest, 2, "manifest"),
            (FileClass::ManifestList, 3, "manifest_list"),
            (FileClass::IndexManifest, 4, "index_manifest"),
            (FileClass::Index, 5, "index"),
            (FileClass::Statistics, 6, "statistics"),
            (FileClass::SnapshotMeta, 7, "snapshot_meta"),
            (FileClass::ChangelogMeta, 8, "changelog_meta"),
            (FileClass::TagMeta, 9, "tag_meta"),
            (FileClass::ConsumerMeta, 10, "consumer_meta"),
            (FileClass::Other, 11, "other"),
        ];
        assert_eq!(expected.len(), PAIMON_CLEANUP_FILE_CLASS_COUNT as usize);
        assert_eq!(expected.len(), FileClass::ALL.len());
        for (class, code, name) in expected {
            assert_eq!(PaimonCleanupFileClass::from(class) as i32, code);
            // The C name is the serde name the CLI's JSON uses.
            assert_eq!(
                serde_json::to_value(class).expect("json"),
                serde_json::Value::String(name.into())
            );
            assert_eq!(
                text(paimon_cleanup_file_class_name(code)),
                Some(name.into())
            );
        }
        assert_eq!(
            text(paimon_cleanup_file_class_name(12)),
            Some("unknown".into())
        );
        assert_eq!(
            text(paimon_cleanup_report_kind_name(99)),
            Some("unknown".into())
        );
    }

    #[test]
    fn maintain_report_aggregates_its_steps() {
        let tags = TagReport {
            tags_deleted: vec!["t1".into()],
            tags_not_found: vec![],
            deletion: deletion(&[(FileClass::TagMeta, "tag/tag-t1", 5)], &[]),
            elapsed_ms: 1,
        };
        let consumers = ConsumerReport {
            expired: vec!["c1".into(), "c2".into()],
            deletion: deletion(
                &[
                    (FileClass::ConsumerMeta, "consumer/consumer-c1", 3),
                    (FileClass::ConsumerMeta, "consumer/consumer-c2", 3),
                ],
                &["consumer/consumer-c3"],
            ),
            elapsed_ms: 1,
        };
        let snapshots = ExpireReport {
            snapshots_expired: 1,
            first_expired: Some(1),
            last_expired: Some(1),
            earliest_after: Some(2),
            deletion: deletion(&[(FileClass::SnapshotMeta, "snapshot/snapshot-1", 9)], &[]),
            ..Default::default()
        };
        let report = MaintainReport {
            tags: Some(tags),
            partitions: None,
            consumers: Some(consumers),
            snapshots: Some(snapshots),
            changelogs: None,
            elapsed_ms: 9,
        };
        let expected_json = serde_json::to_value(&report).expect("json");
        let r = boxed(PaimonCleanupReport::from_maintain(report));
        // SAFETY: a live report, freed once at the end.
        unsafe {
            assert_eq!(
                paimon_cleanup_report_kind(r),
                PaimonCleanupReportKind::Maintain
            );
            assert_eq!(paimon_cleanup_report_step_count(r), 3);
            let kinds: Vec<PaimonCleanupReportKind> = (0..3)
                .map(|i| paimon_cleanup_report_kind(paimon_cleanup_report_step(r, i)))
                .collect();
            assert_eq!(
                kinds,
                [
                    PaimonCleanupReportKind::ExpireTags,
                    PaimonCleanupReportKind::ExpireConsumers,
                    PaimonCleanupReportKind::ExpireSnapshots
                ]
            );
            assert_eq!(paimon_cleanup_report_total_files(r), 4);
            assert_eq!(paimon_cleanup_report_total_bytes(r), 20);
            assert_eq!(paimon_cleanup_report_path_count(r), 4);
            let paths: Vec<Option<String>> = (0..5)
                .map(|i| text(paimon_cleanup_report_path(r, i)))
                .collect();
            assert_eq!(
                paths,
                [
                    Some("tag/tag-t1".into()),
                    Some("consumer/consumer-c1".into()),
                    Some("consumer/consumer-c2".into()),
                    Some("snapshot/snapshot-1".into()),
                    None
                ]
            );
            assert_eq!(paimon_cleanup_report_failed_count(r), 1);
            assert_eq!(
                text(paimon_cleanup_report_failed_path(r, 0)),
                Some("consumer/consumer-c3".into())
            );
            let consumers = paimon_cleanup_report_step(r, 1);
            assert_eq!(paimon_cleanup_report_name_count(consumers), 2);
            assert_eq!(
                text(paimon_cleanup_report_name(consumers, 1)),
                Some("c2".into())
            );
            assert_eq!(paimon_cleanup_report_expired_count(consumers), 2);
            let json: serde_json::Value =
                serde_json::from_str(&text(paimon_cleanup_report_json(r)).expect("json"))
                    .expect("valid JSON");
            assert_eq!(json, expected_json);
            paimon_cleanup_report_free(r);
        }
    }

    /// A report of more paths than it keeps on the heap gives every path back, in
    /// deletion order and with its class, through the per-index accessors; each returned
    /// pointer stays valid (same text) until the report is freed, in any reading order.
    #[test]
    fn a_large_path_listing_reads_back_in_order_with_stable_pointers() {
        let n = crate::ffi::report::PATHS_ON_HEAP * 3 + 123;
        let expected: Vec<(FileClass, String)> = (0..n)
            .map(|i| {
                let class = FileClass::ALL[i % FileClass::ALL.len()];
                let path = if i == n - 7 {
                    "odd\0name".to_owned() // an interior NUL is replaced, as on the heap
                } else {
                    format!("dt=2024-01-{:02}/bucket-{}/data-{i}-é.orc", i % 28, i % 5)
                };
                (class, path)
            })
            .collect();
        let mut snapshots = ExpireReport::default();
        for (class, path) in &expected {
            snapshots.deletion.paths.push(DeletedPath {
                class: *class,
                path: path.clone(),
            });
        }
        let tags = TagReport {
            tags_deleted: vec!["t1".into()],
            tags_not_found: vec![],
            deletion: deletion(&[(FileClass::TagMeta, "tag/tag-t1", 5)], &[]),
            elapsed_ms: 1,
        };
        let report = MaintainReport {
            tags: Some(tags),
            partitions: None,
            consumers: None,
            snapshots: Some(snapshots),
            changelogs: None,
            elapsed_ms: 9,
        };
        let mut all: Vec<(FileClass, String)> = vec![(FileClass::TagMeta, "tag/tag-t1".into())];
        all.extend(
            expected
                .iter()
                .map(|(c, p)| (*c, p.replace('\0', "\u{FFFD}"))),
        );
        let r = boxed(PaimonCleanupReport::from_maintain(report));
        // SAFETY: a live report, freed once at the end; the pointers are read before that.
        unsafe {
            assert_eq!(paimon_cleanup_report_path_count(r), all.len());
            let step = paimon_cleanup_report_step(r, 1);
            assert_eq!(paimon_cleanup_report_path_count(step), n);
            // Backwards first, keeping every pointer, then forwards: same pointer, same text.
            let mut pointers = vec![ptr::null(); all.len()];
            for i in (0..all.len()).rev() {
                pointers[i] = paimon_cleanup_report_path(r, i);
            }
            for (i, (class, path)) in all.iter().enumerate() {
                let p = paimon_cleanup_report_path(r, i);
                assert_eq!(p, pointers[i], "path {i} moved");
                assert_eq!(text(p).as_deref(), Some(path.as_str()), "path {i}");
                assert_eq!(
                    paimon_cleanup_report_path_class(r, i),
                    PaimonCleanupFileClass::from(*class),
                    "class of {i}"
                );
            }
            for (i, (_, path)) in expected.iter().enumerate().step_by(977) {
                assert_eq!(
                    text(paimon_cleanup_report_path(step, i)),
                    Some(path.clone())
                );
            }
            assert!(paimon_cleanup_report_path(r, all.len()).is_null());
            assert!(paimon_cleanup_report_path(step, n).is_null());
            assert_eq!(
                paimon_cleanup_report_path_class(r, all.len()),
                PaimonCleanupFileClass::Other
            );
            // The JSON listing (read sequentially) agrees with the per-index one.
            let json: serde_json::Value =
                serde_json::from_str(&text(paimon_cleanup_report_json(r)).expect("json"))
                    .expect("valid JSON");
            let listed = json["snapshots"]["deletion"]["paths"]
                .as_array()
                .expect("paths");
            assert_eq!(listed.len(), n);
            for (i, p) in listed.iter().enumerate() {
                assert_eq!(p["path"], all[i + 1].1.as_str(), "JSON path {i}");
            }
            // Every pointer taken first still reads the same text.
            for (i, (_, path)) in all.iter().enumerate() {
                assert_eq!(text(pointers[i]).as_deref(), Some(path.as_str()));
            }
            paimon_cleanup_report_free(r);
        }
    }

    #[test]
    fn partition_report_accessors() {
        let mut p1 = std::collections::BTreeMap::new();
        p1.insert("dt".to_string(), "2024-01-01".to_string());
        p1.insert("hr".to_string(), "10".to_string());
        let mut p2 = p1.clone();
        p2.insert("dt".to_string(), String::new());
        let report = PartitionReport {
            dry_run: false,
            partitions: vec![p1, p2],
            names: vec!["dt=2024-01-01/hr=10".into(), "dt=''/hr=10".into()],
            files_marked_deleted: 4,
            rows_marked_deleted: 40,
            bytes_marked_deleted: 400,
            index_entries_removed: 1,
            snapshot_ids: vec![9],
            retries: 0,
            iceberg: Vec::new(),
            elapsed_ms: 3,
        };
        let r = boxed(PaimonCleanupReport::from_partitions(
            PaimonCleanupReportKind::DropPartitions,
            report,
        ));
        // SAFETY: a live report, freed once at the end.
        unsafe {
            assert_eq!(paimon_cleanup_report_expired_count(r), 2);
            assert_eq!(
                text(paimon_cleanup_report_name(r, 0)),
                Some("dt=2024-01-01/hr=10".into())
            );
            // The empty string is reported as itself: a value, not a missing one.
            assert_eq!(
                text(paimon_cleanup_report_name(r, 1)),
                Some("dt=''/hr=10".into())
            );
            assert_eq!(
                text(paimon_cleanup_report_partition_value(r, 1, 0)),
                Some(String::new())
            );
            assert_eq!(paimon_cleanup_report_partition_field_count(r, 0), 2);
            assert_eq!(paimon_cleanup_report_partition_field_count(r, 2), 0);
            assert_eq!(
                text(paimon_cleanup_report_partition_key(r, 0, 1)),
                Some("hr".into())
            );
            assert_eq!(
                text(paimon_cleanup_report_partition_value(r, 0, 1)),
                Some("10".into())
            );
            assert!(paimon_cleanup_report_partition_key(r, 0, 2).is_null());
            assert_eq!(paimon_cleanup_report_files_marked_deleted(r), 4);
            assert_eq!(paimon_cleanup_report_rows_marked_deleted(r), 40);
            assert_eq!(paimon_cleanup_report_bytes_marked_deleted(r), 400);
            assert_eq!(paimon_cleanup_report_committed_snapshot_count(r), 1);
            assert_eq!(paimon_cleanup_report_committed_snapshot_id(r, 0), 9);
            assert_eq!(paimon_cleanup_report_committed_snapshot_id(r, 1), 0);
            assert_eq!(paimon_cleanup_report_path_count(r), 0);
            assert!(text(paimon_cleanup_report_json(r))
                .is_some_and(|j| j.contains("\"index_entries_removed\":1")));
            paimon_cleanup_report_free(r);
        }
    }

    /// A copy of the Java fixture table at `relative` (below `PAIMON_FIXTURES` or the shared
    /// fixture directory), or None when the fixtures are absent (a panic with
    /// `PAIMON_REQUIRE_FIXTURES=1`).
    fn java_fixture_copy(relative: &str) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
        let root = [
            std::env::var("PAIMON_FIXTURES")
                .ok()
                .map(std::path::PathBuf::from),
            Some(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../shared/fixtures/java-written-tables"),
            ),
        ]
        .into_iter()
        .flatten()
        .find(|c| c.join("INDEX.md").exists());
        let Some(root) = root else {
            assert_ne!(
                std::env::var("PAIMON_REQUIRE_FIXTURES").as_deref(),
                Ok("1"),
                "PAIMON_REQUIRE_FIXTURES=1 but the Java fixture tables were not found"
            );
            eprintln!("SKIP: Java fixture tables not found (set PAIMON_FIXTURES)");
            return None;
        };
        fn copy(src: &std::path::Path, dst: &std::path::Path) {
            std::fs::create_dir_all(dst).expect("mkdir");
            for e in std::fs::read_dir(src).expect("read_dir").flatten() {
                let to = dst.join(e.file_name());
                if e.file_type().expect("file type").is_dir() {
                    copy(&e.path(), &to);
                } else {
                    std::fs::copy(e.path(), &to).expect("copy");
                }
            }
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let table = tmp.path().join("t");
        copy(&root.join(relative), &table);
        Some((tmp, table))
    }

    /// The Java fixture holds a NULL row, two '' rows and a ' ' row, all in the directory
    /// `f0=__DEFAULT_PARTITION__`: a NULL value pointer (or the default name) names the NULL
    /// row only, `""` the empty strings only, `" "` the blank one, and the report tells them
    /// apart.
    #[test]
    fn a_null_value_pointer_and_an_empty_string_name_different_partitions() {
        let Some((_tmp, table)) = java_fixture_copy(
            "parquet/append_with_empty_partition_with_empty_value.db/\
             append_with_empty_partition_with_empty_value",
        ) else {
            return;
        };
        assert!(table.join("f0=__DEFAULT_PARTITION__").is_dir());
        let uri = CString::new(table.to_str().expect("utf-8")).expect("no NUL");
        let key = CString::new("f0").expect("no NUL");
        let empty = CString::new("").expect("no NUL");
        let space = CString::new(" ").expect("no NUL");
        let default_name = CString::new("__DEFAULT_PARTITION__").expect("no NUL");
        let mut ctx: *mut PaimonCleanupContext = ptr::null_mut();
        let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        // SAFETY: every pointer is valid for the call or NULL; reports are freed once.
        unsafe {
            assert_eq!(
                paimon_cleanup_executor_new(2, &mut exec, &mut err),
                PaimonCleanupStatus::Ok
            );
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
            for (value, rows, name, reported) in [
                (ptr::null(), 1, "f0=NULL", "__DEFAULT_PARTITION__"),
                (default_name.as_ptr(), 1, "f0=NULL", "__DEFAULT_PARTITION__"),
                (empty.as_ptr(), 2, "f0=''", ""),
                (space.as_ptr(), 1, "f0=' '", " "),
            ] {
                let keys = [key.as_ptr()];
                let values: [*const c_char; 1] = [value];
                let spec = PaimonCleanupPartitionSpec {
                    keys: keys.as_ptr(),
                    values: values.as_ptr(),
                    field_count: 1,
                };
                let mut out: *mut PaimonCleanupReport = ptr::null_mut();
                let status = paimon_cleanup_preview_drop_partitions(
                    ctx,
                    exec,
                    &spec,
                    1,
                    ptr::null(),
                    &mut out,
                    &mut err,
                );
                assert_eq!(status, PaimonCleanupStatus::Ok, "{name}: {}", message(err));
                assert_eq!(
                    paimon_cleanup_report_rows_marked_deleted(out),
                    rows,
                    "{name}"
                );
                assert_eq!(paimon_cleanup_report_name_count(out), 1, "{name}");
                assert_eq!(text(paimon_cleanup_report_name(out, 0)), Some(name.into()));
                assert_eq!(
                    text(paimon_cleanup_report_partition_value(out, 0, 0)),
                    Some(reported.into())
                );
                paimon_cleanup_report_free(out);
            }
            paimon_cleanup_context_free(ctx);
            paimon_cleanup_executor_free(exec);
        }
    }

    /// A context on a table location that does not exist (no options) and a one-thread
    /// executor, both to be freed by the caller.
    ///
    /// # Safety
    /// Calls the C ABI; the handles returned must be freed once.
    unsafe fn missing_table(name: &str) -> (*mut PaimonCleanupContext, *mut PaimonCleanupExecutor) {
        let uri = CString::new(format!("/nonexistent/paimon-cleanup/{name}")).expect("no NUL");
        let mut ctx: *mut PaimonCleanupContext = ptr::null_mut();
        let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        // SAFETY: every pointer is valid for the call or NULL.
        unsafe {
            let status = paimon_cleanup_context_new(
                uri.as_ptr(),
                ptr::null(),
                ptr::null(),
                0,
                &mut ctx,
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::Ok, "{}", message(err));
            let status = paimon_cleanup_executor_new(1, &mut exec, &mut err);
            assert_eq!(status, PaimonCleanupStatus::Ok, "{}", message(err));
        }
        (ctx, exec)
    }

    #[test]
    fn operations_check_their_arguments() {
        let mut cfg: *mut PaimonCleanupExpireConfig = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        let mut out: *mut PaimonCleanupReport = ptr::null_mut();
        // SAFETY: every pointer is valid for the call or NULL.
        unsafe {
            let (ctx, exec) = missing_table("ffi-ops-table");
            paimon_cleanup_expire_config_new(&mut cfg, &mut err);
            let status = paimon_cleanup_expire_snapshots(
                ctx,
                exec,
                ptr::null(),
                ptr::null(),
                &mut out,
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::NullPointer);
            assert!(message(err).contains("config"));
            paimon_cleanup_error_free(err);
            let status = paimon_cleanup_expire_changelogs(
                ctx,
                exec,
                cfg,
                ptr::null(),
                ptr::null_mut(),
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::NullPointer);
            assert!(message(err).contains("out"));
            paimon_cleanup_error_free(err);
            let status = paimon_cleanup_delete_tag(
                ctx,
                exec,
                ptr::null(),
                false,
                ptr::null(),
                &mut out,
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::NullPointer);
            assert!(message(err).contains("tag"));
            paimon_cleanup_error_free(err);
            for bad in ["", " ", "../tag-t1", "a\\b", ".."] {
                let bad = CString::new(bad).expect("no NUL");
                let status = paimon_cleanup_delete_tag(
                    ctx,
                    exec,
                    bad.as_ptr(),
                    false,
                    ptr::null(),
                    &mut out,
                    &mut err,
                );
                assert_eq!(status, PaimonCleanupStatus::InvalidArgument);
                assert!(message(err).contains("not a tag name"));
                paimon_cleanup_error_free(err);
            }
            let status =
                paimon_cleanup_expire_tags(ctx, exec, -1, false, ptr::null(), &mut out, &mut err);
            assert_eq!(status, PaimonCleanupStatus::InvalidArgument);
            paimon_cleanup_error_free(err);
            let status = paimon_cleanup_expire_tags(
                ctx,
                exec,
                i64::MAX,
                false,
                ptr::null(),
                &mut out,
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::InvalidArgument);
            paimon_cleanup_error_free(err);
            let status = paimon_cleanup_drop_partitions(
                ctx,
                exec,
                ptr::null(),
                0,
                ptr::null(),
                &mut out,
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::InvalidArgument);
            paimon_cleanup_error_free(err);
            let status = paimon_cleanup_drop_partitions(
                ctx,
                exec,
                ptr::null(),
                1,
                ptr::null(),
                &mut out,
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::NullPointer);
            assert!(message(err).contains("specs"));
            paimon_cleanup_error_free(err);
            let key = CString::new("dt").expect("no NUL");
            let keys = [key.as_ptr(), key.as_ptr()];
            let values: [*const c_char; 2] = [ptr::null(), ptr::null()];
            let spec = PaimonCleanupPartitionSpec {
                keys: keys.as_ptr(),
                values: values.as_ptr(),
                field_count: 2,
            };
            let status = paimon_cleanup_drop_partitions(
                ctx,
                exec,
                &spec,
                1,
                ptr::null(),
                &mut out,
                &mut err,
            );
            assert_eq!(status, PaimonCleanupStatus::InvalidArgument);
            assert!(message(err).contains("more than once"), "{}", message(err));
            paimon_cleanup_error_free(err);
            // Every operation on a missing table: NOT_FOUND, nothing handed out.
            let status =
                paimon_cleanup_maintain(ctx, exec, ptr::null(), ptr::null(), &mut out, &mut err);
            assert_eq!(status, PaimonCleanupStatus::NotFound, "{}", message(err));
            assert!(out.is_null());
            paimon_cleanup_error_free(err);
            paimon_cleanup_expire_config_free(cfg);
            paimon_cleanup_context_free(ctx);
            paimon_cleanup_executor_free(exec);
        }
    }

    #[test]
    fn a_cancelled_token_stops_an_operation_before_it_reads_anything() {
        let mut opts: *mut PaimonCleanupRunOptions = ptr::null_mut();
        let mut token: *mut PaimonCleanupCancelToken = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        let mut out: *mut PaimonCleanupReport = ptr::null_mut();
        // SAFETY: every pointer is valid for the call or NULL.
        unsafe {
            let (ctx, exec) = missing_table("ffi-cancel-table");
            paimon_cleanup_run_options_new(&mut opts, &mut err);
            paimon_cleanup_cancel_token_new(&mut token, &mut err);
            paimon_cleanup_run_options_set_cancel_token(opts, token, &mut err);
            paimon_cleanup_cancel_token_cancel(token);
            // The table does not exist, but the cancellation is seen first.
            let status = paimon_cleanup_maintain(ctx, exec, ptr::null(), opts, &mut out, &mut err);
            assert_eq!(status, PaimonCleanupStatus::Cancelled);
            assert!(out.is_null());
            paimon_cleanup_error_free(err);
            paimon_cleanup_cancel_token_free(token);
            paimon_cleanup_run_options_free(opts);
            paimon_cleanup_context_free(ctx);
            paimon_cleanup_executor_free(exec);
        }
    }

    /// Cancelling through the C ABI returns promptly while a read is stuck
    /// (an S3 endpoint that accepts connections and never answers), long before the request
    /// would time out.
    #[test]
    fn cancel_returns_promptly_while_a_read_is_stuck() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for c in listener.incoming().flatten() {
                held.push(c);
            }
        });
        let endpoint = format!("http://127.0.0.1:{port}");
        let pairs = [
            ("s3.endpoint", endpoint.as_str()),
            ("s3.region", "us-east-1"),
            ("s3.access-key", "test"),
            ("s3.secret-key", "test"),
            ("s3.path-style-access", "true"),
            ("s3.allow-http", "true"),
            ("storage.retry.max-retries", "0"),
        ];
        let keys: Vec<CString> = pairs
            .iter()
            .map(|(k, _)| CString::new(*k).expect("k"))
            .collect();
        let vals: Vec<CString> = pairs
            .iter()
            .map(|(_, v)| CString::new(*v).expect("v"))
            .collect();
        let kp: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr()).collect();
        let vp: Vec<*const c_char> = vals.iter().map(|v| v.as_ptr()).collect();
        let uri = CString::new("s3://paimon/stuck/t").expect("no NUL");
        let mut ctx: *mut PaimonCleanupContext = ptr::null_mut();
        let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
        let mut opts: *mut PaimonCleanupRunOptions = ptr::null_mut();
        let mut token: *mut PaimonCleanupCancelToken = ptr::null_mut();
        let mut config: *mut PaimonCleanupExpireConfig = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        // SAFETY: every pointer is valid for the call or NULL.
        unsafe {
            assert_eq!(
                paimon_cleanup_context_new(
                    uri.as_ptr(),
                    kp.as_ptr(),
                    vp.as_ptr(),
                    pairs.len(),
                    &mut ctx,
                    &mut err,
                ),
                PaimonCleanupStatus::Ok,
                "{}",
                message(err)
            );
            paimon_cleanup_executor_new(2, &mut exec, &mut err);
            paimon_cleanup_run_options_new(&mut opts, &mut err);
            paimon_cleanup_cancel_token_new(&mut token, &mut err);
            paimon_cleanup_run_options_set_cancel_token(opts, token, &mut err);
            paimon_cleanup_expire_config_new(&mut config, &mut err);
        }
        let addr = token as usize;
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            // SAFETY: the token outlives this thread (joined before it is freed).
            unsafe { paimon_cleanup_cancel_token_cancel(addr as *const PaimonCleanupCancelToken) };
            std::time::Instant::now()
        });
        let mut out: *mut PaimonCleanupReport = ptr::null_mut();
        // SAFETY: live handles, writable outs.
        let status =
            unsafe { paimon_cleanup_expire_snapshots(ctx, exec, config, opts, &mut out, &mut err) };
        let returned = std::time::Instant::now();
        let cancelled_at = canceller.join().expect("canceller");
        assert_eq!(status, PaimonCleanupStatus::Cancelled, "{}", message(err));
        let latency = returned.saturating_duration_since(cancelled_at);
        assert!(latency < std::time::Duration::from_secs(1), "{latency:?}");
        assert!(out.is_null());
        // SAFETY: handles created above, freed once.
        unsafe {
            paimon_cleanup_error_free(err);
            paimon_cleanup_expire_config_free(config);
            paimon_cleanup_cancel_token_free(token);
            paimon_cleanup_run_options_free(opts);
            paimon_cleanup_context_free(ctx);
            paimon_cleanup_executor_free(exec);
        }
    }
}

#[test]
fn older_than_text_is_parsed_as_the_procedures_take_it() {
    let parse = |text: Option<&str>, now: i64, out: bool| {
        let text = text.map(|t| CString::new(t).expect("no NUL"));
        let (mut ms, mut err) = (-7i64, ptr::null_mut());
        let out_ptr = if out {
            &mut ms as *mut i64
        } else {
            ptr::null_mut()
        };
        // SAFETY: NULL or live arguments.
        let status = unsafe {
            paimon_cleanup_parse_older_than(
                text.as_ref().map_or(ptr::null(), |t| t.as_ptr()),
                now,
                out_ptr,
                &mut err,
            )
        };
        let text = if err.is_null() {
            String::new()
        } else {
            message(err)
        };
        // SAFETY: NULL or the error this call created.
        unsafe { paimon_cleanup_error_free(err) };
        (status, ms, text)
    };
    let now = 1_700_000_000_000;
    assert_eq!(
        parse(Some("1 d"), now, true),
        (PaimonCleanupStatus::Ok, now - 86_400_000, String::new())
    );
    assert_eq!(
        parse(Some("2023-11-01 00:00:00Z"), now, true).1,
        1_698_796_800_000
    );
    for bad in [
        "",
        "12345",
        "yesterday",
        "2023-13-01 00:00:00",
        "2030-01-01 00:00:00Z",
    ] {
        let (status, ms, text) = parse(Some(bad), now, true);
        assert_eq!(
            status,
            PaimonCleanupStatus::InvalidArgument,
            "{bad}: {text}"
        );
        assert_eq!(
            ms, -7,
            "{bad}: the out-parameter is written only on success"
        );
        assert!(text.contains("older-than"), "{bad}: {text}");
    }
    assert_eq!(
        parse(Some("1 d"), -1, true).0,
        PaimonCleanupStatus::InvalidArgument
    );
    assert_eq!(parse(None, now, true).0, PaimonCleanupStatus::NullPointer);
    assert_eq!(
        parse(Some("1 d"), now, false).0,
        PaimonCleanupStatus::NullPointer
    );
    let invalid = [0xffu8, 0];
    let mut ms = 0i64;
    // SAFETY: a NUL-terminated byte string; NULL error slot.
    let status = unsafe {
        paimon_cleanup_parse_older_than(invalid.as_ptr().cast(), now, &mut ms, ptr::null_mut())
    };
    assert_eq!(status, PaimonCleanupStatus::InvalidUtf8);
}
