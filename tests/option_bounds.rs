//! Every numeric option is bounded, and a value out of bounds is a clear invalid-argument error,
//! never a crash or a silent wrap: the CLI refuses it as a usage error (exit 2) on every
//! command alike, the C ABI setters with `INVALID_ARGUMENT` (the handle unchanged).

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::ptr;

use paimon_cleanup::ffi::*;

fn cli(args: &[&str]) -> Output {
    Command::new(common::cli_bin())
        .args(args)
        .env("PAIMON_CLEANUP_LOG", "warn")
        .output()
        .unwrap()
}

/// A copy of a partitioned Java fixture table (key `f1`).
fn table() -> Option<(tempfile::TempDir, PathBuf)> {
    let root = common::fixtures_dir()?;
    Some(common::copy_table(&root.join("orc/append_09.db/append_09")))
}

/// Every command, as a dry run on `t` where it has one.
fn commands(t: &str) -> Vec<Vec<String>> {
    let c = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        c(&["inspect", t]),
        c(&["remove-orphan-files", t, "--dry-run"]),
        c(&["expire-snapshots", t, "--dry-run"]),
        c(&["expire-changelogs", t, "--dry-run"]),
        c(&["delete-tag", t, "no-such-tag", "--dry-run"]),
        c(&["expire-tags", t, "--dry-run"]),
        c(&[
            "expire-consumers",
            t,
            "--dry-run",
            "--expiration-time",
            "1 d",
        ]),
        c(&["drop-partitions", t, "--partition", "f1=1", "--dry-run"]),
        c(&[
            "expire-partitions",
            t,
            "--dry-run",
            "--expiration-time",
            "1 d",
        ]),
        c(&["maintain", t, "--dry-run"]),
    ]
}

fn run_with(base: &[String], extra: &[&str]) -> Output {
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend_from_slice(extra);
    cli(&args)
}

fn assert_usage_error(out: &Output, what: &str, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains(needle), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn common_options_are_validated_the_same_way_on_every_command() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let t = table.to_str().unwrap();
    let bad_memory = [
        "abc",
        "0",
        "",
        "NaN",
        "1e9",
        "2^64",
        "1 GiB GiB",
        "0x100",
        "-1",
        "18446744073709551616",
    ];
    let bad_threads = ["0", "20000", "1025", "-1", "abc", "", "1e3", "4294967297"];
    for base in commands(t) {
        let what = base[0].clone();
        // A valid value of each passes on every command.
        let out = run_with(&base, &["--threads", "2", "--max-memory", "1GiB"]);
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for bad in bad_memory {
            let out = run_with(&base, &[&format!("--max-memory={bad}")]);
            assert_usage_error(
                &out,
                &format!("{what} --max-memory {bad:?}"),
                "--max-memory",
            );
        }
        for bad in bad_threads {
            let out = run_with(&base, &[&format!("--threads={bad}")]);
            assert_usage_error(&out, &format!("{what} --threads {bad:?}"), "--threads");
        }
    }
}

#[test]
fn too_many_threads_is_an_error_not_an_abort() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let out = cli(&["inspect", table.to_str().unwrap(), "--threads", "20000"]);
    assert_usage_error(&out, "--threads 20000", "must be 1 to 1024");
    let out = cli(&["inspect", table.to_str().unwrap(), "--threads", "1024"]);
    // 1024 threads either start or are refused by the system: an error, never an abort.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn command_specific_numbers_are_bounded() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let t = table.to_str().unwrap();
    let cases: &[(&[&str], &str, &[&str])] = &[
        (
            &["expire-snapshots", t, "--dry-run"],
            "--retain-min",
            &["0", "-1", "2147483648", "1.5", "1e3", "abc", ""],
        ),
        (
            &["expire-snapshots", t, "--dry-run"],
            "--retain-max",
            &["0", "9223372036854775808", "x"],
        ),
        (
            &["expire-snapshots", t, "--dry-run"],
            "--max-deletes",
            &["0", "2147483648", "0x10"],
        ),
        (
            &["expire-changelogs", t, "--dry-run"],
            "--retain-min",
            &["0", "2147483648"],
        ),
        (
            &["expire-snapshots", t, "--dry-run"],
            "--time-retained",
            &["abc", "1 fortnight", "106751991167301 d", "-1 d"],
        ),
        (
            &["expire-snapshots", t, "--dry-run"],
            "--older-than-ms",
            &["-1", "9223372036854775808", "1e12", "abc"],
        ),
        (
            &["remove-orphan-files", t, "--dry-run"],
            "--older-than-ms",
            &["-5", "99999999999999999999"],
        ),
        (
            &["expire-tags", t, "--dry-run"],
            "--older-than-ms",
            &["-5", "x"],
        ),
        (
            &["expire-consumers", t, "--dry-run"],
            "--expiration-time",
            &["0 s", "0", "abc", "106751991167301 d"],
        ),
        (
            &["expire-partitions", t, "--dry-run"],
            "--expiration-time",
            &["0 ms", "x"],
        ),
        (
            &[
                "expire-partitions",
                t,
                "--dry-run",
                "--expiration-time",
                "1 d",
            ],
            "--max-num",
            &["0", "2147483648", "-1"],
        ),
        (
            &[
                "expire-partitions",
                t,
                "--dry-run",
                "--expiration-time",
                "1 d",
            ],
            "--batch-size",
            &["0", "18446744073709551616"],
        ),
    ];
    for (base, flag, bads) in cases {
        let base: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        for bad in *bads {
            // `--flag=value`, so that a leading '-' is a value, not a flag.
            let arg = format!("{flag}={bad}");
            let out = run_with(&base, &[&arg]);
            assert_usage_error(&out, &format!("{} {arg}", base[0]), flag);
        }
    }
    // Values at the bounds pass.
    let out = cli(&[
        "expire-snapshots",
        t,
        "--dry-run",
        "--retain-min",
        "2147483647",
        "--retain-max",
        "2147483647",
        "--max-deletes",
        "2147483647",
        "--older-than-ms",
        "0",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn storage_options_are_bounded() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let t = table.to_str().unwrap();
    for opt in [
        "storage.retry.max-retries=1001",
        "storage.retry.max-retries=18446744073709551616",
        "storage.request-timeout=106751991167 d",
        "storage.retry.timeout=8 d",
    ] {
        let out = cli(&["inspect", "memory://bounds/t", "-o", opt]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opt}: {err}");
        assert!(err.contains(opt.split('=').next().unwrap()), "{opt}: {err}");
    }
    assert!(cli(&["inspect", t, "-o", "storage.retry.max-retries=1000"])
        .status
        .success());
}

unsafe fn status_name(err: *mut PaimonCleanupError) -> String {
    let msg = unsafe { std::ffi::CStr::from_ptr(paimon_cleanup_error_message(err)) }
        .to_string_lossy()
        .into_owned();
    unsafe { paimon_cleanup_error_free(err) };
    msg
}

/// `setter(value)` is refused with INVALID_ARGUMENT naming `name`.
fn refused(name: &str, call: impl FnOnce(*mut *mut PaimonCleanupError) -> PaimonCleanupStatus) {
    let mut err = ptr::null_mut();
    let status = call(&mut err);
    assert_eq!(status, PaimonCleanupStatus::InvalidArgument, "{name}");
    assert!(!err.is_null(), "{name}");
    let msg = unsafe { status_name(err) };
    assert!(msg.contains(name), "{name}: {msg}");
}

fn accepted(name: &str, call: impl FnOnce(*mut *mut PaimonCleanupError) -> PaimonCleanupStatus) {
    let mut err = ptr::null_mut();
    assert_eq!(call(&mut err), PaimonCleanupStatus::Ok, "{name}");
}

#[test]
fn c_abi_setters_refuse_out_of_range_counts_and_durations() {
    unsafe {
        let mut ec = ptr::null_mut();
        accepted("expire_config_new", |e| {
            paimon_cleanup_expire_config_new(&mut ec, e)
        });
        let big = i32::MAX as i64 + 1;
        refused("retain_min", |e| {
            paimon_cleanup_expire_config_set_retain_min(ec, big, e)
        });
        refused("retain_max", |e| {
            paimon_cleanup_expire_config_set_retain_max(ec, i64::MAX, e)
        });
        refused("max_expires", |e| {
            paimon_cleanup_expire_config_set_max_expires(ec, big, e)
        });
        refused("time_retained_ms", |e| {
            paimon_cleanup_expire_config_set_time_retained_ms(ec, u64::MAX, e)
        });
        accepted("retain_min", |e| {
            paimon_cleanup_expire_config_set_retain_min(ec, i32::MAX as i64, e)
        });
        accepted("time_retained_ms", |e| {
            paimon_cleanup_expire_config_set_time_retained_ms(ec, i64::MAX as u64, e)
        });
        paimon_cleanup_expire_config_free(ec);

        let mut pc = ptr::null_mut();
        accepted("partition_expire_config_new", |e| {
            paimon_cleanup_partition_expire_config_new(&mut pc, e)
        });
        refused("expiration_time_ms", |e| {
            paimon_cleanup_partition_expire_config_set_expiration_time_ms(pc, u64::MAX, e)
        });
        refused("max_expires", |e| {
            paimon_cleanup_partition_expire_config_set_max_expires(pc, u64::MAX, e)
        });
        refused("batch_size", |e| {
            paimon_cleanup_partition_expire_config_set_batch_size(pc, big as u64, e)
        });
        accepted("batch_size", |e| {
            paimon_cleanup_partition_expire_config_set_batch_size(pc, i32::MAX as u64, e)
        });
        paimon_cleanup_partition_expire_config_free(pc);
    }
}

#[test]
fn c_abi_consumer_expiration_is_bounded() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let uri = std::ffi::CString::new(table.to_str().unwrap()).unwrap();
    unsafe {
        let mut ctx = ptr::null_mut();
        accepted("context_new", |e| {
            paimon_cleanup_context_new(uri.as_ptr(), ptr::null(), ptr::null(), 0, &mut ctx, e)
        });
        let mut ex = ptr::null_mut();
        accepted("executor_new", |e| {
            paimon_cleanup_executor_new(1, &mut ex, e)
        });
        refused("executor_new", |e| {
            let mut other = ptr::null_mut();
            paimon_cleanup_executor_new(20_000, &mut other, e)
        });
        let mut report = ptr::null_mut();
        refused("expiration_ms", |e| {
            paimon_cleanup_expire_consumers(ctx, ex, u64::MAX, true, ptr::null(), &mut report, e)
        });
        assert!(report.is_null());
        accepted("expire_consumers", |e| {
            paimon_cleanup_expire_consumers(ctx, ex, 86_400_000, true, ptr::null(), &mut report, e)
        });
        paimon_cleanup_report_free(report);
        paimon_cleanup_executor_free(ex);
        paimon_cleanup_context_free(ctx);
    }
}
