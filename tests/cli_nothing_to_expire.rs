//! `expire-snapshots` that expires nothing (or stops early) says which bound held —
//! retain-min, a consumer at snapshot N, the time rule, the limit — in text and JSON
//! (`kept_by`).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn cli(args: &[&str]) -> Output {
    Command::new(common::cli_bin())
        .args(args)
        .env_remove("PAIMON_CLEANUP_LOG")
        .env("TZ", "UTC")
        .output()
        .unwrap()
}

fn expire(t: &Path, extra: &[&str]) -> (String, Value) {
    let mut args = vec!["expire-snapshots", t.to_str().unwrap(), "--dry-run"];
    args.extend_from_slice(extra);
    let o = cli(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    args.push("--json");
    let o = cli(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (text, serde_json::from_slice(&o.stdout).unwrap())
}

#[test]
fn a_dry_run_that_expires_nothing_says_which_bound_held() {
    // append_unaware: snapshots 1..=6, tag t1 on 2, consumer c1 at 3.
    let Some((_g, t, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let before = common::tree(&t);

    // The default retain-min (10) keeps all six.
    let (text, json) = expire(&t, &[]);
    assert!(
        text.starts_with("nothing to expire: retain-min: the latest 10 snapshots are kept"),
        "{text}"
    );
    assert_eq!(json["kept_by"]["bound"], "retain_min");
    assert_eq!(json["kept_by"]["retain_min"], 10);
    assert_eq!(json["kept_by"]["latest"], 6);
    assert_eq!(json["snapshots_expired"], 0);

    // A consumer at snapshot 1 holds everything.
    std::fs::write(t.join("consumer/consumer-c1"), r#"{"nextSnapshot":1}"#).unwrap();
    let (text, json) = expire(&t, &["--retain-min", "1", "--time-retained", "0s"]);
    assert!(
        text.starts_with("nothing to expire: consumer c1 reads from snapshot 1 on"),
        "{text}"
    );
    assert_eq!(json["kept_by"]["bound"], "consumer");
    assert_eq!(json["kept_by"]["consumer"], "c1");
    assert_eq!(json["kept_by"]["next_snapshot"], 1);

    // At snapshot 3 it lets 1 and 2 go and names itself as what kept the rest.
    std::fs::write(t.join("consumer/consumer-c1"), r#"{"nextSnapshot":3}"#).unwrap();
    let (text, json) = expire(&t, &["--retain-min", "1", "--time-retained", "0s"]);
    assert!(
        text.starts_with("would expire 2 snapshots (1..=2)"),
        "{text}"
    );
    assert!(
        text.contains("kept from snapshot 3 on: consumer c1 reads from snapshot 3 on"),
        "{text}"
    );
    assert_eq!(json["kept_by"]["bound"], "consumer");

    // Without the consumer, the time rule: every snapshot is younger than a day.
    std::fs::remove_file(t.join("consumer/consumer-c1")).unwrap();
    let (text, json) = expire(&t, &["--retain-min", "1", "--time-retained", "1 d"]);
    assert!(
        text.starts_with("nothing to expire: time: snapshot 2 was committed at "),
        "{text}"
    );
    assert!(text.contains("not before the cut-off"), "{text}");
    assert!(text.contains("+00:00"), "times are readable: {text}");
    assert_eq!(json["kept_by"]["bound"], "time");
    assert_eq!(json["kept_by"]["snapshot"], 2);
    assert!(
        json["kept_by"]["time_millis"].as_i64().unwrap()
            >= json["kept_by"]["older_than_ms"].as_i64().unwrap()
    );

    // The limit.
    let (text, json) = expire(
        &t,
        &[
            "--retain-min",
            "1",
            "--time-retained",
            "0s",
            "--max-deletes",
            "2",
        ],
    );
    assert!(
        text.contains("kept from snapshot 3 on: the limit: at most 2"),
        "{text}"
    );
    assert_eq!(json["kept_by"]["bound"], "limit");
    assert_eq!(json["kept_by"]["limit"], 2);

    // Dry runs all: nothing changed.
    let mut after = common::tree(&t);
    after.remove("consumer/consumer-c1");
    let mut expected = before;
    expected.remove("consumer/consumer-c1");
    assert_eq!(after, expected);
}
