//! Procedure arguments as Paimon users type them, through the CLI binary on pypaimon-written
//! tables: `--older-than` as Java's timestamp (local time zone, or the zone the text ends with)
//! for snapshot, changelog, tag and orphan cut-offs; `delete-tag` with a comma-separated list;
//! `expire-tags` with time expiry enabled for the call (as Java's `expire_tags`) while
//! `maintain` follows `tag.time-expire-enabled`; `expire-changelogs` without arguments runs the
//! table's own changelog retention.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, FixedOffset, Local, TimeZone};
use serde_json::Value;

fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = std::process::Command::new(common::cli_bin());
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Runs the CLI, expects success and JSON on stdout.
fn cli_json(args: &[&str], env: &[(&str, &str)]) -> Value {
    let out = cli(args, env);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// Runs the CLI and expects exit code 2 (usage) with `needle` in the error.
fn cli_refused(args: &[&str], needle: &str) {
    let out = cli(args, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
}

fn version_time(table: &Path, dir: &str, id: i64) -> i64 {
    let v: Value =
        serde_json::from_slice(&std::fs::read(table.join(format!("{dir}/{dir}-{id}"))).unwrap())
            .unwrap();
    v["timeMillis"].as_i64().unwrap()
}

/// Java's `older_than` text (`yyyy-MM-dd HH:mm:ss.SSS`) of an instant on the wall clock of `tz`.
fn text_in<Tz: TimeZone>(ms: i64, tz: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    DateTime::from_timestamp_millis(ms)
        .unwrap()
        .with_timezone(tz)
        .format("%Y-%m-%d %H:%M:%S%.3f")
        .to_string()
}

fn local_text(ms: i64) -> String {
    text_in(ms, &Local)
}

fn now_ms() -> i64 {
    paimon_cleanup::clean::shared::clock::now_millis()
}

const DAY_MS: i64 = 86_400_000;

/// `expire-snapshots --older-than` reads Java's timestamp in the local time zone (`TZ`), or in
/// the zone it ends with; the snapshots older than it expire, the rest stay.
#[test]
fn expire_snapshots_takes_a_java_timestamp_in_the_local_zone_or_a_given_one() {
    let Some((_tmp, table, _)) = common::pypaimon_table("retention_opts") else {
        return;
    };
    let t = table.to_str().unwrap();
    let times: Vec<i64> = (1..=6)
        .map(|id| version_time(&table, "snapshot", id))
        .collect();
    for w in times.windows(2) {
        assert!(w[1] - w[0] >= 2, "snapshot times too close: {times:?}");
    }
    // As in Java, a snapshot expires when the next one is older than the cut too: a cut between
    // snapshots 3 and 4 expires 1 and 2. Written on Shanghai's wall clock, read with TZ so.
    let shanghai = FixedOffset::east_opt(8 * 3600).unwrap();
    let cut = text_in((times[2] + times[3]) / 2, &shanghai);
    let r = cli_json(
        &[
            "expire-snapshots",
            t,
            "--older-than",
            &cut,
            "--retain-min",
            "1",
            "--retain-max",
            "10",
            "--json",
        ],
        &[("TZ", "Asia/Shanghai")],
    );
    assert_eq!(
        (&r["first_expired"], &r["last_expired"]),
        (&Value::from(1), &Value::from(2)),
        "{cut}: {r}"
    );
    assert!(!table.join("snapshot/snapshot-2").exists());
    assert!(table.join("snapshot/snapshot-3").exists());
    // Between snapshots 4 and 5 in UTC, the zone given in the text (TZ says otherwise).
    let utc = FixedOffset::east_opt(0).unwrap();
    let cut = format!("{}Z", text_in((times[3] + times[4]) / 2, &utc));
    let r = cli_json(
        &[
            "expire-snapshots",
            t,
            "--older-than",
            &cut,
            "--retain-min",
            "1",
            "--retain-max",
            "10",
            "--json",
        ],
        &[("TZ", "America/New_York")],
    );
    assert_eq!(
        (&r["first_expired"], &r["last_expired"]),
        (&Value::from(3), &Value::from(3)),
        "{cut}: {r}"
    );
    assert!(table.join("snapshot/snapshot-4").exists());
    let views = common::all_versions(&table);
    for (k, v) in &views {
        assert!(v.get("error").is_none(), "{k} unreadable: {v}");
    }
    // A future cut-off, a bare number and conflicting cut-offs are refused.
    cli_refused(
        &["expire-snapshots", t, "--older-than", "2999-01-01 00:00:00"],
        "future",
    );
    cli_refused(
        &["expire-snapshots", t, "--older-than", "1700000000000"],
        "bare number",
    );
    cli_refused(
        &["expire-snapshots", t, "--older-than", "2024-01-01 25:00:00"],
        "neither",
    );
    let out = cli(
        &[
            "expire-snapshots",
            t,
            "--older-than",
            "1 d",
            "--time-retained",
            "1 d",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "clap refuses both");
    assert!(table.join("snapshot/snapshot-4").exists());
}

/// `expire-changelogs --older-than` takes Java's timestamp; without arguments it runs the
/// table's changelog retention (`changelog.*`), where Java's procedure would keep everything.
#[test]
fn expire_changelogs_takes_a_timestamp_and_without_arguments_follows_the_table_options() {
    let Some((_tmp, table, _)) = common::pypaimon_table("pk_changelog") else {
        return;
    };
    let t = table.to_str().unwrap();
    // Two more commits, so that changelogs remain between the first and the latest.
    let py = common::python().unwrap();
    for id in [100, 101] {
        let ops = serde_json::json!([{"op": "append", "table": table,
            "rows": [{"id": id, "v": "x", "d": "2024-03-01"}]}]);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), ops.to_string()).unwrap();
        common::run_py(
            &py,
            "partitions.py",
            &["run", file.path().to_str().unwrap()],
        )
        .unwrap_or_else(|e| panic!("partitions.py run failed: {e}"));
    }
    let ids = common::snapshot_ids(&table);
    let latest = *ids.iter().max().unwrap();
    assert!(latest >= 5, "{ids:?}");
    let times: Vec<i64> = (1..=latest)
        .map(|id| version_time(&table, "snapshot", id))
        .collect();
    assert!(times[1] - times[0] >= 2, "{times:?}");
    let before = common::all_versions(&table);
    // Decoupled: snapshots expire down to the latest, their changelogs stay.
    let r = cli_json(
        &[
            "expire-snapshots",
            t,
            "-o",
            "snapshot.num-retained.max=1",
            "-o",
            "snapshot.num-retained.min=1",
            "-o",
            "snapshot.time-retained=0s",
            "-o",
            "changelog.num-retained.max=100",
            "--json",
        ],
        &[],
    );
    assert_eq!(r["changelogs_written"], latest - 1, "{r}");
    assert!(table.join("changelog/changelog-1").exists());

    // Java's older_than: changelog 1 is older than the cut, changelog 2 is not.
    let cut = local_text((times[0] + times[1]) / 2);
    let r = cli_json(
        &[
            "expire-changelogs",
            t,
            "--older-than",
            &cut,
            "--retain-min",
            "1",
            "--json",
        ],
        &[],
    );
    assert_eq!(r["changelogs_expired"], 1, "{cut}: {r}");
    assert!(!table.join("changelog/changelog-1").exists());
    assert!(table.join("changelog/changelog-2").exists());

    // No arguments: the table's changelog options decide (here: keep one, no time window), so
    // every changelog but the latest goes (Java never expires the latest changelog this way).
    // Java's procedure, ignoring the options, would expire none.
    let r = cli_json(
        &[
            "expire-changelogs",
            t,
            "-o",
            "changelog.num-retained.max=1",
            "-o",
            "changelog.num-retained.min=1",
            "-o",
            "changelog.time-retained=0s",
            "--json",
        ],
        &[],
    );
    assert_eq!(r["changelogs_expired"], latest - 3, "{r}");
    for id in 1..latest - 1 {
        assert!(!table.join(format!("changelog/changelog-{id}")).exists());
    }
    assert!(table
        .join(format!("changelog/changelog-{}", latest - 1))
        .exists());
    let after = common::all_versions(&table);
    for (k, v) in &after {
        assert!(v.get("error").is_none(), "{k} unreadable: {v}");
        assert_eq!(v["row_digest"], before[k]["row_digest"], "{k}");
    }
}

/// Rewrites tag `name`'s creation time (Java's `[y, m, d, h, min]` form, local wall clock) and
/// retention (`None`: no retention).
fn set_tag_times(table: &Path, name: &str, created_ms: i64, retained_s: Option<f64>) {
    use chrono::{Datelike, Timelike};
    let file = table.join(format!("tag/tag-{name}"));
    let mut json: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let c = DateTime::from_timestamp_millis(created_ms)
        .unwrap()
        .with_timezone(&Local)
        .naive_local();
    json["tagCreateTime"] = serde_json::json!([c.year(), c.month(), c.day(), c.hour(), c.minute()]);
    match retained_s {
        Some(s) => json["tagTimeRetained"] = serde_json::json!(s),
        None => {
            if let Some(o) = json.as_object_mut() {
                o.remove("tagTimeRetained");
            }
        }
    }
    std::fs::write(&file, serde_json::to_vec(&json).unwrap()).unwrap();
}

/// `expire-tags` enables time expiry for the call, as Java's `expire_tags` procedure does, even
/// when the table turns it off; `maintain` follows the option. `--older-than` takes Java's
/// timestamp.
#[test]
fn expire_tags_enables_time_expiry_for_the_call_and_takes_a_timestamp() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let t = table.to_str().unwrap();
    let tag = table.join("tag/tag-t1");
    set_tag_times(&table, "t1", now_ms() - 2 * DAY_MS, Some(3600.0));
    let off = "tag.time-expire-enabled=false";
    let m = cli_json(&["maintain", t, "-o", off, "--dry-run", "--json"], &[]);
    assert_eq!(m["tags"]["tags_deleted"], serde_json::json!([]), "{m}");
    let m = cli_json(&["maintain", t, "--dry-run", "--json"], &[]);
    assert_eq!(m["tags"]["tags_deleted"], serde_json::json!(["t1"]), "{m}");
    let r = cli_json(&["expire-tags", t, "-o", off, "--dry-run", "--json"], &[]);
    assert_eq!(r["tags_deleted"], serde_json::json!(["t1"]), "{r}");
    assert!(tag.exists(), "a dry run deleted the tag");

    // Without retention the tag expires only by --older-than.
    set_tag_times(&table, "t1", now_ms() - 2 * DAY_MS, None);
    let r = cli_json(&["expire-tags", t, "--json"], &[]);
    assert_eq!(r["tags_deleted"], serde_json::json!([]), "{r}");
    let three_days = local_text(now_ms() - 3 * DAY_MS);
    let r = cli_json(
        &["expire-tags", t, "--older-than", &three_days, "--json"],
        &[],
    );
    assert_eq!(
        r["tags_deleted"],
        serde_json::json!([]),
        "{three_days}: {r}"
    );
    cli_refused(
        &["expire-tags", t, "--older-than", "2999-01-01 00:00:00"],
        "future",
    );
    cli_refused(
        &[
            "expire-tags",
            t,
            "--older-than-ms",
            &(now_ms() + DAY_MS).to_string(),
        ],
        "future",
    );
    assert!(tag.exists());
    let one_day = local_text(now_ms() - DAY_MS);
    let r = cli_json(&["expire-tags", t, "--older-than", &one_day, "--json"], &[]);
    assert_eq!(
        r["tags_deleted"],
        serde_json::json!(["t1"]),
        "{one_day}: {r}"
    );
    assert!(!tag.exists());
    let views = common::all_versions(&table);
    for (k, v) in &views {
        assert!(v.get("error").is_none(), "{k} unreadable: {v}");
    }
}

/// `delete-tag` takes a comma-separated list (names trimmed), as Java's `delete_tag` does;
/// missing tags are reported, the others deleted, the rest of the table untouched.
#[test]
fn delete_tag_takes_a_comma_separated_list() {
    let Some((_tmp, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let t = table.to_str().unwrap();
    for copy in ["t2", "t3"] {
        std::fs::copy(
            table.join("tag/tag-t1"),
            table.join(format!("tag/tag-{copy}")),
        )
        .unwrap();
    }
    let files_before = common::data_files_on_disk(&table);
    let r = cli_json(&["delete-tag", t, " t2 , t3,nope,t2", "--json"], &[]);
    assert_eq!(r["tags_deleted"], serde_json::json!(["t2", "t3"]), "{r}");
    assert_eq!(r["tags_not_found"], serde_json::json!(["nope"]), "{r}");
    assert!(table.join("tag/tag-t1").exists());
    assert!(!table.join("tag/tag-t2").exists());
    assert!(!table.join("tag/tag-t3").exists());
    // t1 still holds the same snapshot: nothing else goes.
    assert_eq!(common::data_files_on_disk(&table), files_before);
}

/// `remove-orphan-files --older-than` takes Java's timestamp beside a duration; a bare number
/// is refused.
#[test]
fn remove_orphan_files_takes_a_java_timestamp() {
    let Some((_tmp, table, _)) = common::pypaimon_table("retention_opts") else {
        return;
    };
    let t = table.to_str().unwrap();
    let stray = format!(
        "dt=2024-02-01/bucket-0/data-{}-0.parquet",
        uuid::Uuid::new_v4()
    );
    std::fs::write(table.join(&stray), b"stray").unwrap();
    common::set_tree_mtime(&table, SystemTime::now() - Duration::from_secs(2 * 86_400));
    let three_days = local_text(now_ms() - 3 * DAY_MS);
    let r = cli_json(
        &[
            "remove-orphan-files",
            t,
            "--older-than",
            &three_days,
            "--dry-run",
            "--json",
        ],
        &[],
    );
    assert_eq!(r["deletion"]["paths"], serde_json::json!([]), "{r}");
    cli_refused(
        &["remove-orphan-files", t, "--older-than", "86400000"],
        "bare number",
    );
    let one_day = local_text(now_ms() - DAY_MS);
    let r = cli_json(
        &["remove-orphan-files", t, "--older-than", &one_day, "--json"],
        &[],
    );
    assert_eq!(r["deletion"]["paths"][0]["path"], stray.as_str(), "{r}");
    assert!(!table.join(&stray).exists());
}
