//! No log, error or report prints a secret. Every CLI command runs against the loopback S3
//! server with a marked secret key and session token, passed each way the CLI takes them
//! (environment, options file, `-o key=@FILE`, `-o key=@-`, `--options-file -`, plain `-o`),
//! with `PAIMON_CLEANUP_LOG=trace` and `--json`, both against the server and against a wrong
//! endpoint (the run fails); the marker must appear in no stdout or stderr. A secret typed as a
//! plain `-o` value draws a warning.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const MARK: &str = "SECRET-MARK-93f1c0de";
const TOKEN_MARK: &str = "SECRET-MARK-93f1-token";

/// How the secrets reach the CLI.
#[derive(Clone, Copy, Debug)]
enum Way {
    Environment,
    OptionsFile,
    ValueFile,
    ValueStdin,
    OptionsStdin,
    CommandLine,
}

const WAYS: [Way; 6] = [
    Way::Environment,
    Way::OptionsFile,
    Way::ValueFile,
    Way::ValueStdin,
    Way::OptionsStdin,
    Way::CommandLine,
];

/// Runs `paimon-cleanup <command> <table> <extra> --json` with the endpoint options `plain`
/// and the secrets passed `way`.
fn run(dir: &Path, way: Way, command: &[&str], plain: &HashMap<String, String>) -> Output {
    let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    args.push("--json".into());
    for (k, v) in plain {
        args.push("-o".into());
        args.push(format!("{k}={v}"));
    }
    let mut cmd = Command::new(common::cli_bin());
    cmd.env("PAIMON_CLEANUP_LOG", "trace")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env("AWS_EC2_METADATA_DISABLED", "true");
    let secret_file = dir.join("secret");
    let token_file = dir.join("token");
    let options_file = dir.join("options");
    std::fs::write(&secret_file, format!("{MARK}\n")).unwrap();
    std::fs::write(&token_file, TOKEN_MARK).unwrap();
    let options_text = format!(
        "# credentials\ns3.access-key = test\ns3.secret-key = {MARK}\ns3.session-token={TOKEN_MARK}\n"
    );
    std::fs::write(&options_file, &options_text).unwrap();
    let mut stdin: Option<String> = None;
    match way {
        Way::Environment => {
            cmd.env("AWS_ACCESS_KEY_ID", "test")
                .env("AWS_SECRET_ACCESS_KEY", MARK)
                .env("AWS_SESSION_TOKEN", TOKEN_MARK);
        }
        Way::OptionsFile => {
            args.push("--options-file".into());
            args.push(options_file.to_str().unwrap().into());
        }
        Way::ValueFile => {
            args.extend([
                "-o".into(),
                "s3.access-key=test".into(),
                "-o".into(),
                format!("s3.secret-key=@{}", secret_file.display()),
                "-o".into(),
                format!("s3.session-token=@{}", token_file.display()),
            ]);
        }
        Way::ValueStdin => {
            args.extend([
                "-o".into(),
                "s3.access-key=test".into(),
                "-o".into(),
                "s3.secret-key=@-".into(),
                "-o".into(),
                format!("s3.session-token=@{}", token_file.display()),
            ]);
            stdin = Some(format!("{MARK}\n"));
        }
        Way::OptionsStdin => {
            args.extend(["--options-file".into(), "-".into()]);
            stdin = Some(options_text.clone());
        }
        Way::CommandLine => {
            args.extend([
                "-o".into(),
                "s3.access-key=test".into(),
                "-o".into(),
                format!("s3.secret-key={MARK}"),
                "-o".into(),
                format!("s3.session-token={TOKEN_MARK}"),
            ]);
        }
    }
    cmd.args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn assert_no_secret(out: &Output, what: &str) {
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        for mark in [MARK, TOKEN_MARK, "SECRET-MARK"] {
            assert!(
                !text.contains(mark),
                "{what}: {name} shows the secret:\n{}",
                text.lines()
                    .filter(|l| l.contains(mark))
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}

#[test]
fn no_command_prints_a_secret_whichever_way_it_is_passed() {
    let Some(server) = common::s3_server() else {
        return;
    };
    let Some(fixtures) = common::fixtures_dir() else {
        return;
    };
    let rt = common::rt();
    let (_local, table) = common::copy_table(
        &fixtures
            .join("orc/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch"),
    );
    let uri = common::s3_table_uri("secrets");
    common::s3_upload(&rt, &table, &uri, &common::s3_options(&server.endpoint));
    let dir = tempfile::tempdir().unwrap();

    let plain = |endpoint: &str| -> HashMap<String, String> {
        common::s3_options(endpoint)
            .into_iter()
            .filter(|(k, _)| !k.contains("key"))
            .chain([
                ("storage.retry.max-retries".to_string(), "0".to_string()),
                ("storage.connect-timeout".to_string(), "2 s".to_string()),
            ])
            .collect()
    };
    let good = plain(&server.endpoint);
    let wrong = plain("http://127.0.0.1:9");
    let u = uri.as_str();
    let commands: Vec<Vec<&str>> = vec![
        vec!["inspect", u],
        vec!["remove-orphan-files", u, "--dry-run"],
        vec!["expire-snapshots", u, "--dry-run"],
        vec!["expire-changelogs", u, "--dry-run"],
        vec!["delete-tag", u, "no-such-tag", "--dry-run"],
        vec!["expire-tags", u, "--dry-run"],
        vec![
            "expire-consumers",
            u,
            "--dry-run",
            "--expiration-time",
            "1 d",
        ],
        vec!["drop-partitions", u, "--partition", "pt=1", "--dry-run"],
        vec![
            "expire-partitions",
            u,
            "--dry-run",
            "--expiration-time",
            "1 d",
        ],
        vec!["maintain", u, "--dry-run"],
        // Runs that change the table (commits, deletions, their reports).
        vec!["expire-snapshots", u, "--retain-min", "1"],
        vec!["drop-partitions", u, "--partition", "pt=1"],
    ];
    for way in WAYS {
        for command in &commands {
            let what = format!("{way:?} {}", command.join(" "));
            let out = run(dir.path(), way, command, &good);
            assert_no_secret(&out, &what);
            assert!(
                out.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            serde_json::from_slice::<serde_json::Value>(&out.stdout)
                .unwrap_or_else(|e| panic!("{what}: report is not JSON: {e}"));
            let stderr = String::from_utf8_lossy(&out.stderr);
            let warned = stderr.contains("typed on the command line");
            assert_eq!(
                warned,
                matches!(way, Way::CommandLine),
                "{what}: warning: {stderr}"
            );
            // The trace log is on: it shows the requests, and no secret in them.
            assert!(
                stderr.contains("TRACE") || stderr.contains("DEBUG"),
                "{what}"
            );

            let what = format!("{what} (wrong endpoint)");
            let out = run(dir.path(), way, command, &wrong);
            assert_no_secret(&out, &what);
            assert!(!out.status.success(), "{what}");
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{what}: error is not JSON: {e}"));
            assert!(v["error"]["message"].is_string(), "{what}: {v}");
        }
    }
}
