//! Plan, review, apply: `--plan-out FILE` writes a dry run's exact plan and changes nothing;
//! `apply FILE` deletes exactly the planned files, keeps (and reports) those a version made
//! since references, and refuses (exit 3, nothing deleted) a plan whose table was replaced,
//! which is too old, whose retention no longer holds, or which was tampered with.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn cli(args: &[&str]) -> Output {
    Command::new(common::cli_bin())
        .args(args)
        .env_remove("PAIMON_CLEANUP_LOG")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// pypaimon's `append_unaware` table (6 snapshots with an OVERWRITE and a dropped partition,
/// tag t1 on snapshot 2, branch b1) without its consumer, so that expiry reaches the
/// snapshots whose deltas delete data files. Returns (guard, table, plan file path).
fn table() -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let (guard, t, _) = common::pypaimon_table("append_unaware")?;
    std::fs::remove_file(t.join("consumer/consumer-c1")).unwrap();
    let plan = guard.path().join("plan.json");
    Some((guard, t, plan))
}

/// Plans `expire-snapshots --retain-min 1 --time-retained 0s` into `plan`, checks that
/// nothing changed, and returns the plan document.
fn plan_expiry(t: &Path, plan: &Path) -> Value {
    let before = common::tree(t);
    let o = cli(&[
        "expire-snapshots",
        t.to_str().unwrap(),
        "--retain-min",
        "1",
        "--time-retained",
        "0s",
        "--plan-out",
        plan.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("plan written to"), "{}", text(&o));
    assert_eq!(common::tree(t), before, "--plan-out changed the table");
    serde_json::from_slice(&std::fs::read(plan).unwrap()).unwrap()
}

fn planned_paths(plan: &Value) -> BTreeSet<String> {
    plan["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

fn apply(plan: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["apply", plan.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    cli(&args)
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// Every version pypaimon can read, by name; panics on a version it cannot read.
fn readable_versions(t: &Path) -> BTreeMap<String, Value> {
    let all = common::all_versions(t);
    for (name, v) in &all {
        assert!(v.get("error").is_none(), "{name} unreadable: {v}");
    }
    all.into_iter().collect()
}

fn keys(tree: &BTreeMap<String, u64>) -> BTreeSet<String> {
    tree.keys().cloned().collect()
}

#[test]
fn plan_then_apply_deletes_exactly_the_planned_set() {
    let Some((_g, t, plan_file)) = table() else {
        return;
    };
    let plan = plan_expiry(&t, &plan_file);
    assert_eq!(plan["format"], "paimon-cleanup-plan");
    assert_eq!(plan["version"], 1);
    assert_eq!(plan["command"], "expire-snapshots");
    assert_eq!(plan["branch"], "main");
    assert_eq!(plan["identity"]["schema_file"], "schema/schema-0");
    assert!(plan["created_ms"].as_i64().unwrap() > 0);
    assert!(plan["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "--retain-min"));
    let main = &plan["branches"].as_array().unwrap()[0];
    assert_eq!(main["name"], "main");
    assert_eq!(main["latest_snapshot"], 6);
    assert!(plan["branches"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["name"] == "b1"));
    let planned = planned_paths(&plan);
    let kinds: BTreeSet<&str> = plan["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains("data"), "{kinds:?}");
    assert!(kinds.contains("snapshot_meta"), "{kinds:?}");
    for f in plan["files"].as_array().unwrap() {
        assert!(f["bytes"].as_u64().unwrap() > 0, "{f}");
    }
    let rows_before = readable_versions(&t);

    let before = common::tree(&t);
    let o = apply(&plan_file, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let r = json(&o);
    assert_eq!(r["skipped"].as_array().unwrap().len(), 0, "{r}");
    assert_eq!(
        r["deletion"]["paths"].as_array().map(Vec::len),
        Some(planned.len())
    );
    let after = common::tree(&t);
    let gone: BTreeSet<String> = keys(&before).difference(&keys(&after)).cloned().collect();
    assert_eq!(gone, planned, "apply deleted other files than the plan's");
    // Nothing appeared but the EARLIEST hint, moved past the deleted snapshots.
    let mut appeared: BTreeSet<String> = keys(&after).difference(&keys(&before)).cloned().collect();
    appeared.remove("snapshot/EARLIEST");
    assert!(appeared.is_empty(), "{appeared:?}");
    assert_eq!(
        std::fs::read_to_string(t.join("snapshot/EARLIEST")).unwrap(),
        "6"
    );
    // The versions left read the same rows.
    let rows_after = readable_versions(&t);
    for (name, v) in &rows_after {
        assert_eq!(rows_before[name]["row_digest"], v["row_digest"], "{name}");
    }
    // A second apply finds everything gone and deletes nothing.
    let o = apply(&plan_file, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let r = json(&o);
    assert_eq!(r["already_gone"].as_u64(), Some(planned.len() as u64));
    assert_eq!(common::tree(&t), after);
}

#[test]
fn an_orphan_plan_applies_to_exactly_the_orphans() {
    let Some((g, t, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let py = common::python().unwrap();
    let out = common::run_py(
        &py,
        "uncommitted_write.py",
        &[
            t.to_str().unwrap(),
            r#"[{"id": 900, "v": "x", "dt": "orphan", "hr": 7}]"#,
        ],
    )
    .unwrap();
    let orphans: BTreeSet<String> = serde_json::from_str(&out).unwrap();
    assert!(!orphans.is_empty());
    let plan_file = g.path().join("orphans.json");
    let before = common::tree(&t);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string();
    let o = cli(&[
        "remove-orphan-files",
        t.to_str().unwrap(),
        "--older-than-ms",
        &now,
        "--no-writers-running",
        "--plan-out",
        plan_file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(common::tree(&t), before);
    let plan: Value = serde_json::from_slice(&std::fs::read(&plan_file).unwrap()).unwrap();
    assert_eq!(plan["command"], "remove-orphan-files");
    assert_eq!(planned_paths(&plan), orphans);
    let o = apply(&plan_file, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let gone: BTreeSet<String> = keys(&before)
        .difference(&keys(&common::tree(&t)))
        .cloned()
        .collect();
    assert_eq!(gone, orphans);
    readable_versions(&t);
}

#[test]
fn apply_keeps_what_a_tag_created_after_the_plan_references() {
    let Some((_g, t, plan_file)) = table() else {
        return;
    };
    let plan = plan_expiry(&t, &plan_file);
    let planned = planned_paths(&plan);
    // Meanwhile a user tags snapshot 3, which the plan expires: the tag reads its data files
    // (among them some the plan deletes: snapshot 3 wrote dt=2024-01-02/hr=0, which the drop
    // in snapshot 5 deleted) and its manifest lists.
    let py = common::python().unwrap();
    common::run_py(&py, "create_tag.py", &[t.to_str().unwrap(), "late", "3"]).unwrap();
    let tag_view = common::pypaimon_view(&t, &["--tag", "late"]);
    let tag_files: BTreeSet<String> = tag_view["live_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let needed: BTreeSet<&String> = planned.iter().filter(|p| tag_files.contains(*p)).collect();
    assert!(
        !needed.is_empty(),
        "the new tag reads none of the planned files"
    );

    let before = common::tree(&t);
    let o = apply(&plan_file, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let r = json(&o);
    let skipped: BTreeSet<String> = r["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["reason"], "a version present now references it", "{s}");
            s["path"].as_str().unwrap().to_string()
        })
        .collect();
    for p in &needed {
        assert!(skipped.contains(*p), "{p} not kept: {r}");
        assert!(t.join(p).exists(), "{p} deleted");
    }
    assert!(
        skipped
            .iter()
            .any(|p| p.starts_with("manifest/manifest-list-")),
        "{skipped:?}"
    );
    // Everything else planned went, nothing unplanned did.
    let after = common::tree(&t);
    let gone: BTreeSet<String> = keys(&before).difference(&keys(&after)).cloned().collect();
    let expected: BTreeSet<String> = planned.difference(&skipped).cloned().collect();
    assert_eq!(gone, expected);
    // The tag reads as it did.
    let versions = readable_versions(&t);
    assert_eq!(versions["tag:late"]["row_digest"], tag_view["row_digest"]);
}

#[test]
fn a_replaced_table_is_refused_and_nothing_is_deleted() {
    let Some((_g, t, plan_file)) = table() else {
        return;
    };
    plan_expiry(&t, &plan_file);
    // Dropped and created again at the same place (another table's files and schema).
    let (_g2, other, _) = common::pypaimon_table("append_unaware").unwrap();
    std::fs::remove_dir_all(&t).unwrap();
    common::copy_dir(&other, &t);
    std::fs::remove_file(t.join("consumer/consumer-c1")).unwrap();
    let schema = t.join("schema/schema-0");
    let mut s: Value = serde_json::from_slice(&std::fs::read(&schema).unwrap()).unwrap();
    s["timeMillis"] = Value::from(s["timeMillis"].as_i64().unwrap_or(0) + 1);
    std::fs::write(&schema, serde_json::to_vec(&s).unwrap()).unwrap();
    let before = common::tree(&t);
    let o = apply(&plan_file, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("replaced"), "{}", text(&o));
    assert_eq!(common::tree(&t), before);
    // A table that is gone altogether too.
    std::fs::remove_dir_all(&t).unwrap();
    std::fs::create_dir_all(&t).unwrap();
    let o = apply(&plan_file, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

#[test]
fn a_plan_older_than_the_bound_is_refused() {
    let Some((_g, t, plan_file)) = table() else {
        return;
    };
    plan_expiry(&t, &plan_file);
    let before = common::tree(&t);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let o = apply(&plan_file, &["--max-plan-age", "1 ms"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("old"), "{}", text(&o));
    // A plan of 25 hours ago, with the default bound of 24 hours.
    let mut plan: Value = serde_json::from_slice(&std::fs::read(&plan_file).unwrap()).unwrap();
    plan["created_ms"] = Value::from(plan["created_ms"].as_i64().unwrap() - 25 * 3_600_000);
    std::fs::write(&plan_file, serde_json::to_vec(&plan).unwrap()).unwrap();
    let o = apply(&plan_file, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    // The bound itself is bounded.
    let o = apply(&plan_file, &["--max-plan-age", "31 d"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(common::tree(&t), before);
    // Within a longer bound it applies.
    let o = apply(&plan_file, &["--max-plan-age", "2 d"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_tampered_plan_is_refused_with_nothing_deleted() {
    let Some((g, t, plan_file)) = table() else {
        return;
    };
    let plan = plan_expiry(&t, &plan_file);
    let outside = g.path().join("outside.txt");
    std::fs::write(&outside, "not the table's").unwrap();
    let before = common::tree(&t);
    let latest = std::fs::read(t.join("snapshot/snapshot-6")).unwrap();
    let outside_uri = format!("file://{}", outside.display());
    let cases: Vec<(&str, Value)> = vec![
        (
            "a path escaping the root",
            serde_json::json!({"path": "../outside.txt", "kind": "data", "bytes": 15}),
        ),
        (
            "an absolute path outside the table",
            serde_json::json!({"path": outside_uri, "kind": "data", "bytes": 15}),
        ),
        (
            "a schema file listed as data",
            serde_json::json!({"path": "schema/schema-0", "kind": "data"}),
        ),
        (
            "a schema file listed as a manifest",
            serde_json::json!({"path": "schema/schema-0", "kind": "manifest"}),
        ),
        (
            "a kind that does not exist",
            serde_json::json!({"path": "schema/schema-0", "kind": "schema"}),
        ),
        (
            "the latest snapshot listed as expired",
            serde_json::json!({"path": "snapshot/snapshot-6", "kind": "snapshot_meta",
                               "bytes": latest.len(),
                               "fingerprint": "0000000000000000-0"}),
        ),
    ];
    for (what, extra) in cases {
        let mut p = plan.clone();
        p["files"].as_array_mut().unwrap().push(extra);
        let file = g.path().join("tampered.json");
        std::fs::write(&file, serde_json::to_vec(&p).unwrap()).unwrap();
        let o = apply(&file, &[]);
        assert_eq!(o.status.code(), Some(3), "{what}: {}", text(&o));
        assert_eq!(common::tree(&t), before, "{what}: something was deleted");
        assert!(outside.exists());
    }
    // A schema file as data names the rule.
    let mut p = plan.clone();
    p["files"].as_array_mut().unwrap().insert(
        0,
        serde_json::json!({"path": "schema/schema-0", "kind": "data"}),
    );
    std::fs::write(&plan_file, serde_json::to_vec(&p).unwrap()).unwrap();
    let o = cli(&["apply", plan_file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o).contains("schema/schema-0"), "{}", text(&o));
    // Not a plan at all: a usage error.
    std::fs::write(&plan_file, "{\"format\": \"something else\"}").unwrap();
    assert_eq!(apply(&plan_file, &[]).status.code(), Some(2));
    assert_eq!(common::tree(&t), before);
}

#[test]
fn a_consumer_registered_after_the_plan_refuses_it() {
    let Some((_g, t, plan_file)) = table() else {
        return;
    };
    plan_expiry(&t, &plan_file);
    // A streaming reader starts at snapshot 2, which the plan expires.
    std::fs::write(t.join("consumer/consumer-reader"), r#"{"nextSnapshot":2}"#).unwrap();
    let before = common::tree(&t);
    let o = apply(&plan_file, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("consumer reader"), "{}", text(&o));
    assert_eq!(common::tree(&t), before);
}

#[test]
fn a_changed_snapshot_file_refuses_the_plan() {
    let Some((_g, t, plan_file)) = table() else {
        return;
    };
    plan_expiry(&t, &plan_file);
    let snap = t.join("snapshot/snapshot-3");
    let mut s: Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    s["timeMillis"] = Value::from(s["timeMillis"].as_i64().unwrap() + 1);
    std::fs::write(&snap, serde_json::to_vec(&s).unwrap()).unwrap();
    let before = common::tree(&t);
    let o = apply(&plan_file, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("snapshot/snapshot-3"), "{}", text(&o));
    assert_eq!(common::tree(&t), before);
}

#[test]
fn a_dry_run_apply_reports_and_changes_nothing() {
    let Some((_g, t, plan_file)) = table() else {
        return;
    };
    let plan = plan_expiry(&t, &plan_file);
    let before = common::tree(&t);
    let o = apply(&plan_file, &["--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let r = json(&o);
    assert_eq!(r["deletion"]["dry_run"], true);
    let listed: BTreeSet<String> = r["deletion"]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, planned_paths(&plan));
    assert_eq!(common::tree(&t), before);
    // The text form says what would go.
    let o = cli(&["apply", plan_file.to_str().unwrap(), "--dry-run"]);
    assert!(text(&o).contains("would delete"), "{}", text(&o));
    assert_eq!(common::tree(&t), before);
}

#[test]
fn plan_out_is_for_deleting_commands_and_every_one_writes_a_plan() {
    let Some((g, t, plan_file)) = table() else {
        return;
    };
    let o = cli(&[
        "drop-partitions",
        t.to_str().unwrap(),
        "--partition",
        "dt=x",
        "--plan-out",
        plan_file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let before = common::tree(&t);
    let ts = t.to_str().unwrap();
    let runs: Vec<Vec<&str>> = vec![
        vec!["delete-tag", ts, "t1"],
        vec!["expire-tags", ts, "--older-than", "1 ms"],
        vec!["expire-consumers", ts, "--expiration-time", "1 ms"],
        vec!["expire-changelogs", ts],
        vec!["maintain", ts],
    ];
    for args in runs {
        let file = g.path().join(format!("{}.json", args[0]));
        let mut all = args.clone();
        all.extend(["--plan-out", file.to_str().unwrap()]);
        let o = cli(&all);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let plan: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(plan["command"], args[0]);
        assert_eq!(common::tree(&t), before, "{args:?} changed the table");
    }
    // delete-tag's plan deletes the tag and what only it kept; applied, the tag is gone.
    let o = apply(&g.path().join("delete-tag.json"), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!t.join("tag/tag-t1").exists());
    readable_versions(&t);
}
