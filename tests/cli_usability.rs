//! The CLI for a person at a terminal or a script: exit codes by kind of failure, JSON errors,
//! readable times, flag names in errors, no colour in pipes, `..` in local paths, a closed
//! pipe, and a hint when an object store has no credentials.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn exe() -> Command {
    let mut c = Command::new(common::cli_bin());
    c.env_remove("PAIMON_CLEANUP_LOG").env_remove("NO_COLOR");
    c
}

fn cli(args: &[&str]) -> Output {
    exe().args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn table() -> Option<(tempfile::TempDir, PathBuf)> {
    let root = common::fixtures_dir()?;
    Some(common::copy_table(&root.join("orc/append_09.db/append_09")))
}

/// The JSON error object a failed `--json` run prints on stdout.
fn json_error(o: &Output) -> Value {
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON: {e}: {}", String::from_utf8_lossy(&o.stdout)));
    assert!(v["error"]["message"].is_string(), "{v}");
    v["error"].clone()
}

#[test]
fn exit_codes_tell_usage_failure_and_safety_refusal_apart() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let t = table.to_str().unwrap();
    // 0: done.
    assert_eq!(cli(&["inspect", t]).status.code(), Some(0));
    // 2: usage, from clap and from the library's invalid arguments alike.
    let o = cli(&["inspect", t, "--no-such-flag"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = cli(&["expire-snapshots", t, "--older-than", "2999-01-01 00:00:00"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = cli(&[
        "expire-snapshots",
        t,
        "--retain-min",
        "5",
        "--retain-max",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = json_error(&o);
    assert_eq!(e["code"], "invalid_argument");
    assert_eq!(e["exit_code"], 2);
    // 1: failed (the table is not there).
    let o = cli(&["inspect", &format!("{t}-missing"), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(json_error(&o)["code"], "not_found");
    // A usage error with --json is a JSON object too.
    let o = cli(&["inspect", t, "--threads", "0", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let e = json_error(&o);
    assert!(e["message"].as_str().unwrap().contains("--threads"), "{e}");
    // 3: refused for safety: a snapshot that cannot be read stops the run before it deletes.
    let snap = common::snapshot_ids(&table);
    let first = table.join(format!("snapshot/snapshot-{}", snap[0]));
    std::fs::write(&first, b"{ not json").unwrap();
    let before = common::tree(&table);
    let o = cli(&["expire-snapshots", t, "--retain-min", "1", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(json_error(&o)["code"], "malformed");
    assert_eq!(
        common::tree(&table),
        before,
        "a refused run changed the table"
    );
    let o = cli(&["expire-snapshots", t, "--retain-min", "1"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).starts_with("error: malformed"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn times_are_readable_with_their_zone_and_json_keeps_milliseconds() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let t = table.to_str().unwrap();
    let o = exe()
        .args(["remove-orphan-files", t, "--dry-run", "--older-than", "2 d"])
        .env("TZ", "Asia/Shanghai")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().next().unwrap();
    // `older than 2024-05-01 10:00:00.000 +08:00 (1714528800000 ms)`
    let re_like = line
        .split("older than ")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"));
    assert!(re_like.contains(" +08:00 ("), "{line}");
    assert_eq!(&re_like[4..5], "-", "{line}");
    assert!(re_like.trim_end().ends_with(" ms)"), "{line}");
    let o = cli(&[
        "remove-orphan-files",
        t,
        "--dry-run",
        "--older-than",
        "2 d",
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["older_than_ms"].is_i64(), "{v}");
    // An error about a time shows it readable too.
    let o = exe()
        .args(["expire-tags", t, "--older-than-ms", "99999999999999"])
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("5138-11-16 09:46:39.999 +00:00"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_window_error_names_the_flag() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let o = cli(&[
        "remove-orphan-files",
        table.to_str().unwrap(),
        "--older-than",
        "10 min",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--no-writers-running"), "{err}");
    assert!(!err.contains("no_writers_running"), "{err}");
    let o = cli(&[
        "remove-orphan-files",
        table.to_str().unwrap(),
        "--older-than",
        "10 min",
        "--dry-run",
        "--no-writers-running",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn logs_have_no_colour_codes_in_a_pipe() {
    let Some((_guard, table)) = table() else {
        return;
    };
    let o = exe()
        .args(["expire-snapshots", table.to_str().unwrap(), "--dry-run"])
        .env("PAIMON_CLEANUP_LOG", "debug")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("DEBUG"), "no log lines to check: {err}");
    assert!(!err.contains('\u{1b}'), "ANSI escape in a pipe: {err:?}");
}

#[test]
fn help_documents_logging_exit_codes_and_credentials() {
    let o = cli(&["--help"]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "PAIMON_CLEANUP_LOG",
        "Exit codes",
        "3 refused for safety",
        "--options-file",
        "AWS_SECRET_ACCESS_KEY",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
    let o = cli(&["inspect", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("1 to 1024") && help.contains("@FILE"),
        "{help}"
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.contains("PAIMON_CLEANUP_LOG"));
}

#[test]
fn local_paths_with_dot_dot_are_resolved_once() {
    let Some((guard, table)) = table() else {
        return;
    };
    let name = table.file_name().unwrap().to_str().unwrap().to_string();
    let parent = table.parent().unwrap();
    let sub = parent.join("elsewhere");
    std::fs::create_dir_all(&sub).unwrap();
    // Relative, from a sibling directory.
    let o = exe()
        .args(["inspect", &format!("../{name}"), "--json"])
        .current_dir(&sub)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let canonical = std::fs::canonicalize(&table).unwrap();
    let shown = v["table"].as_str().unwrap();
    assert_eq!(
        shown
            .strip_prefix("file://")
            .unwrap_or(shown)
            .trim_end_matches('/'),
        canonical.to_str().unwrap()
    );
    // Absolute, through the sibling.
    let dotted = format!("{}/../{name}", sub.display());
    let o = cli(&["expire-snapshots", &dotted, "--dry-run", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    drop(guard);
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    let Some((_guard, table)) = table() else {
        return;
    };
    for args in [
        vec![
            "expire-snapshots",
            table.to_str().unwrap(),
            "--dry-run",
            "--retain-min",
            "1",
        ],
        vec!["inspect", table.to_str().unwrap(), "--json"],
    ] {
        let mut child = exe()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the program writes anything.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{err}"
        );
    }
}

#[test]
fn an_object_store_without_credentials_gets_a_hint() {
    // The credential chain ends at the instance metadata endpoint: here a closed local port,
    // so the run fails at once instead of waiting for 169.254.169.254.
    let o = exe()
        .args([
            "inspect",
            "s3://bucket/wh/t",
            "-o",
            "s3.endpoint=http://127.0.0.1:9",
            "-o",
            "s3.region=us-east-1",
            "-o",
            "aws_metadata_endpoint=http://127.0.0.1:9",
            "-o",
            "storage.retry.max-retries=0",
        ])
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_WEB_IDENTITY_TOKEN_FILE")
        .env_remove("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        .env_remove("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("AWS_CONFIG_FILE", "/nonexistent")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("hint:"), "{err}");
    for needle in [
        "-o s3.access-key",
        "--options-file",
        "AWS_SECRET_ACCESS_KEY",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    // With credentials in the environment the failure is something else: no hint.
    let o = exe()
        .args([
            "inspect",
            "s3://bucket/wh/t",
            "-o",
            "s3.endpoint=http://127.0.0.1:9",
            "-o",
            "s3.region=us-east-1",
            "-o",
            "storage.retry.max-retries=0",
        ])
        .env("AWS_ACCESS_KEY_ID", "id")
        .env("AWS_SECRET_ACCESS_KEY", "key")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("hint:"), "{err}");
}

/// `delete-tag` takes its tag names as the second argument or as `--tag` (a sweep has no table
/// argument); neither is a usage error, both at once too. Every form parses without the
/// argument parser's own assertion failing (a debug build panicked on any `delete-tag`).
#[test]
fn delete_tag_takes_names_as_argument_or_option() {
    let Some((_tmp, t)) = table() else {
        return;
    };
    let t = t.to_str().unwrap();
    for args in [
        vec!["delete-tag", t, "no-such-tag", "--dry-run", "--json"],
        vec![
            "delete-tag",
            t,
            "--tag",
            "no-such-tag",
            "--dry-run",
            "--json",
        ],
    ] {
        let o = cli(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v.to_string().contains("no-such-tag"), "{args:?}: {v}");
    }
    for args in [
        vec!["delete-tag", t],
        vec!["delete-tag", t, "a", "--tag", "b"],
    ] {
        let o = cli(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}
