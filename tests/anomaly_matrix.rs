//! The anomaly matrix: every path the table layout defines × every anomaly of that path ×
//! every CLI command (dry run and real), on a copy of a pypaimon-written table per case.
//!
//! Oracle, for each case: the command never hangs (60 s) and never crashes (signal, exit 101 =
//! panic); nothing outside the table changes; a dry run (and `inspect`) leaves the table tree
//! byte-identical; a failing real run leaves it byte-identical; a succeeding real run that
//! changed the tree leaves every version pypaimon read before readable with the same files and
//! rows, except the versions the command removes by design.
//!
//! By default one command per (state, anomaly) pair runs, chosen by a seeded generator
//! (`PAIMON_ANOMALY_SEED`, default 1), plus one absurd-value variant per pair;
//! `PAIMON_ANOMALY_FULL=1` runs every command and every variant. `PAIMON_ANOMALY_FILTER=text`
//! keeps the cases whose label contains the text. The summary at the end lists every failing
//! case as `state | anomaly | command | what the oracle saw`.

#[path = "common/anomaly.rs"]
mod anomaly;
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use anomaly::{copy_exact, diff, exact_tree, mkfifo, run_timeout, Ended, Rng};

const TIMEOUT: Duration = Duration::from_secs(60);

/// Which base table a state lives in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Base {
    /// append_unaware with tag t1, branch b1, consumer c1 and long-lived changelogs.
    Main,
    /// dv_table: index manifests and index files.
    Dv,
}

/// What kind of JSON (if any) a file state holds, for the absurd-value variants.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Doc {
    Dir,
    Version,
    Hint,
    Consumer,
    Schema,
    Binary,
}

struct State {
    name: &'static str,
    base: Base,
    doc: Doc,
    find: fn(&Path) -> Option<PathBuf>,
}

fn existing(p: PathBuf) -> Option<PathBuf> {
    std::fs::symlink_metadata(&p).ok().map(|_| p)
}

fn ids_in(dir: &Path, prefix: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

fn latest_snapshot(t: &Path) -> Option<PathBuf> {
    let id = *ids_in(&t.join("snapshot"), "snapshot-").last()?;
    existing(t.join(format!("snapshot/snapshot-{id}")))
}

fn latest_field(t: &Path, field: &str) -> Option<PathBuf> {
    let s: Value = serde_json::from_slice(&std::fs::read(latest_snapshot(t)?).ok()?).ok()?;
    existing(t.join("manifest").join(s[field].as_str()?))
}

fn first_manifest(t: &Path) -> Option<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir(t.join("manifest"))
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        .collect();
    names.sort();
    existing(t.join("manifest").join(names.first()?))
}

fn states() -> Vec<State> {
    macro_rules! dir {
        ($n:literal, $b:expr) => {
            State {
                name: concat!($n, "/"),
                base: $b,
                doc: Doc::Dir,
                find: |t| existing(t.join($n)),
            }
        };
    }
    vec![
        dir!("snapshot", Base::Main),
        dir!("tag", Base::Main),
        dir!("branch", Base::Main),
        dir!("changelog", Base::Main),
        dir!("consumer", Base::Main),
        dir!("schema", Base::Main),
        dir!("manifest", Base::Main),
        dir!("index", Base::Dv),
        dir!("statistics", Base::Main),
        State {
            name: "EARLIEST",
            base: Base::Main,
            doc: Doc::Hint,
            find: |t| existing(t.join("snapshot/EARLIEST")),
        },
        State {
            name: "LATEST",
            base: Base::Main,
            doc: Doc::Hint,
            find: |t| existing(t.join("snapshot/LATEST")),
        },
        State {
            name: "latest snapshot",
            base: Base::Main,
            doc: Doc::Version,
            find: latest_snapshot,
        },
        State {
            name: "earliest snapshot",
            base: Base::Main,
            doc: Doc::Version,
            find: |t| {
                let id = *ids_in(&t.join("snapshot"), "snapshot-").first()?;
                existing(t.join(format!("snapshot/snapshot-{id}")))
            },
        },
        State {
            name: "changelog file",
            base: Base::Main,
            doc: Doc::Version,
            find: |t| {
                let id = *ids_in(&t.join("changelog"), "changelog-").first()?;
                existing(t.join(format!("changelog/changelog-{id}")))
            },
        },
        State {
            name: "tag file",
            base: Base::Main,
            doc: Doc::Version,
            find: |t| existing(t.join("tag/tag-t1")),
        },
        State {
            name: "branch snapshot dir",
            base: Base::Main,
            doc: Doc::Dir,
            find: |t| existing(t.join("branch/branch-b1/snapshot")),
        },
        State {
            name: "manifest list",
            base: Base::Main,
            doc: Doc::Binary,
            find: |t| latest_field(t, "baseManifestList"),
        },
        State {
            name: "manifest",
            base: Base::Main,
            doc: Doc::Binary,
            find: first_manifest,
        },
        State {
            name: "index manifest",
            base: Base::Dv,
            doc: Doc::Binary,
            find: |t| latest_field(t, "indexManifest"),
        },
        State {
            name: "data file",
            base: Base::Main,
            doc: Doc::Binary,
            find: |t| {
                let f = common::data_files_on_disk(t).into_iter().next()?;
                existing(t.join(f))
            },
        },
        State {
            name: "consumer file",
            base: Base::Main,
            doc: Doc::Consumer,
            find: |t| existing(t.join("consumer/consumer-c1")),
        },
        State {
            name: "schema file",
            base: Base::Main,
            doc: Doc::Schema,
            find: |t| {
                let id = *ids_in(&t.join("schema"), "schema-").last()?;
                existing(t.join(format!("schema/schema-{id}")))
            },
        },
    ]
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Anomaly {
    Missing,
    Empty,
    Truncated,
    NotUtf8,
    Absurd(usize),
    DanglingLink,
    LinkOutside,
    Fifo,
    Swapped,
    NoPermission,
}

impl Anomaly {
    fn label(&self) -> String {
        match self {
            Anomaly::Absurd(v) => format!("absurd#{v}"),
            a => format!("{a:?}"),
        }
    }
}

/// How a version document (snapshot, tag, changelog) is made absurd, by variant.
fn absurd_version(v: &mut Value, variant: usize) -> usize {
    let long = "x".repeat(4200);
    let muts: Vec<(&str, Value)> = vec![
        ("id", json!(i64::MAX)),
        ("id", json!(i64::MIN)),
        ("baseManifestList", json!("../snapshot/snapshot-1")),
        ("deltaManifestList", json!(long)),
        ("baseManifestList", json!("manifest-list\u{0}x")),
        ("totalRecordCount", json!(-1)),
        ("baseManifestList", json!("/etc/passwd")),
        ("schemaId", json!(9_999_999_999i64)),
        ("deltaManifestList", json!("a/../../b")),
        ("indexManifest", json!("../tag/tag-t1")),
        ("baseManifestListSize", json!(-5)),
        ("timeMillis", json!(i64::MIN)),
    ];
    let (k, val) = muts[variant % muts.len()].clone();
    v[k] = val;
    muts.len()
}

fn absurd_consumer(variant: usize) -> (Vec<u8>, usize) {
    let docs = [
        json!({"nextSnapshot": i64::MAX}),
        json!({"nextSnapshot": i64::MIN}),
        json!({"nextSnapshot": -5}),
        json!({"nextSnapshot": "../snapshot/snapshot-1"}),
    ];
    (
        docs[variant % docs.len()].to_string().into_bytes(),
        docs.len(),
    )
}

fn absurd_hint(variant: usize) -> (Vec<u8>, usize) {
    let texts = [
        i64::MAX.to_string(),
        i64::MIN.to_string(),
        "-1".to_string(),
        "0".to_string(),
        "99999999999".to_string(),
    ];
    (
        texts[variant % texts.len()].clone().into_bytes(),
        texts.len(),
    )
}

fn absurd_schema(v: &mut Value, variant: usize) -> usize {
    let n = 4;
    match variant % n {
        0 => v["id"] = json!(i64::MAX),
        1 => v["partitionKeys"] = json!(["../x", "a/b"]),
        2 => v["options"]["bucket"] = json!("-99999999999"),
        _ => {
            if let Some(f) = v["fields"].get_mut(0) {
                f["name"] = json!("y".repeat(4200))
            }
        }
    }
    n
}

/// The names of absurd entries added to a directory state.
fn absurd_entry(dir_name: &str, variant: usize) -> (String, usize) {
    let long = "z".repeat(240);
    let base = match dir_name {
        "snapshot" => vec![
            format!("snapshot-{}", i64::MAX),
            "snapshot--1".into(),
            "snapshot-0".into(),
        ],
        "changelog" => vec![format!("changelog-{}", i64::MAX), "changelog--1".into()],
        "tag" => vec![
            format!("tag-{long}"),
            "tag-..".into(),
            "tag-%2F..%2Fx".into(),
        ],
        "branch" => vec![format!("branch-{long}"), "branch-..".into()],
        "consumer" => vec![format!("consumer-{long}"), "consumer-..".into()],
        "schema" => vec![format!("schema-{}", i64::MAX), "schema--1".into()],
        _ => vec![format!("manifest-{long}"), "index-..".into()],
    };
    let n = base.len();
    (base[variant % n].clone(), n)
}

/// How many absurd variants a state has.
fn variants(state: &State, table: &Path, target: &Path) -> usize {
    let mut scratch = Value::Null;
    match state.doc {
        Doc::Version => absurd_version(&mut scratch, 0),
        Doc::Hint => absurd_hint(0).1,
        Doc::Consumer => absurd_consumer(0).1,
        Doc::Schema => absurd_schema(&mut json!({"options": {}}), 0),
        Doc::Binary => 1,
        Doc::Dir => {
            let name = target
                .strip_prefix(table)
                .ok()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .unwrap_or("");
            absurd_entry(name, 0).1
        }
    }
}

/// Applies `a` to `target`; `outside` is a directory beside the table. `Err` when the anomaly
/// does not apply to this state.
fn apply(
    a: Anomaly,
    state: &State,
    target: &Path,
    outside: &Path,
    no_perm_user: bool,
) -> Result<(), String> {
    let is_dir = std::fs::symlink_metadata(target)
        .map(|m| m.is_dir())
        .unwrap_or(false);
    let remove = |p: &Path| {
        if is_dir {
            std::fs::remove_dir_all(p).unwrap()
        } else {
            std::fs::remove_file(p).unwrap()
        }
    };
    match a {
        Anomaly::Missing => remove(target),
        Anomaly::Empty => {
            if is_dir {
                std::fs::remove_dir_all(target).unwrap();
                std::fs::create_dir(target).unwrap();
            } else {
                std::fs::write(target, b"").unwrap();
            }
        }
        Anomaly::Truncated => {
            if is_dir {
                return Err("a directory cannot be truncated".into());
            }
            let b = std::fs::read(target).unwrap();
            std::fs::write(target, &b[..b.len() / 2]).unwrap();
        }
        Anomaly::NotUtf8 => {
            if is_dir {
                // An entry whose name is not UTF-8, named like the directory's files.
                use std::os::unix::ffi::OsStrExt;
                let name = std::ffi::OsStr::from_bytes(b"snapshot-\xff\xfe");
                std::fs::write(target.join(name), b"{}").unwrap();
            } else {
                let mut b = std::fs::read(target).unwrap();
                let at = b.len() / 3;
                b.splice(at..at, [0xff, 0xfe, 0xc0]);
                std::fs::write(target, b).unwrap();
            }
        }
        Anomaly::Absurd(v) => match state.doc {
            Doc::Dir => {
                let name = target.file_name().unwrap().to_str().unwrap().to_string();
                let (entry, _) = absurd_entry(&name, v);
                let content = std::fs::read_dir(target)
                    .unwrap()
                    .flatten()
                    .filter(|e| e.path().is_file())
                    .map(|e| std::fs::read(e.path()).unwrap())
                    .next()
                    .unwrap_or_else(|| b"{}".to_vec());
                let p = target.join(entry);
                if name == "branch" {
                    std::fs::create_dir_all(p.join("snapshot")).unwrap();
                } else {
                    std::fs::write(p, content).unwrap();
                }
            }
            Doc::Version => {
                let mut j: Value = serde_json::from_slice(&std::fs::read(target).unwrap())
                    .map_err(|e| e.to_string())?;
                absurd_version(&mut j, v);
                std::fs::write(target, j.to_string()).unwrap();
            }
            Doc::Hint => std::fs::write(target, absurd_hint(v).0).unwrap(),
            Doc::Consumer => std::fs::write(target, absurd_consumer(v).0).unwrap(),
            Doc::Schema => {
                let mut j: Value = serde_json::from_slice(&std::fs::read(target).unwrap())
                    .map_err(|e| e.to_string())?;
                absurd_schema(&mut j, v);
                std::fs::write(target, j.to_string()).unwrap();
            }
            Doc::Binary => {
                std::fs::write(target, json!({"id": i64::MAX, "size": -1}).to_string()).unwrap()
            }
        },
        Anomaly::DanglingLink => {
            remove(target);
            std::os::unix::fs::symlink(outside.join("does-not-exist"), target).unwrap();
        }
        Anomaly::LinkOutside => {
            let name = target.file_name().unwrap();
            let moved = outside.join(name);
            if is_dir {
                copy_exact(target, &moved, false);
            } else {
                std::fs::copy(target, &moved).unwrap();
            }
            remove(target);
            std::os::unix::fs::symlink(&moved, target).unwrap();
        }
        Anomaly::Fifo => {
            if is_dir {
                // A pipe named like one of the directory's entries.
                let name = match target.file_name().and_then(|n| n.to_str()) {
                    Some("snapshot") => "snapshot-999".to_string(),
                    Some("changelog") => "changelog-999".to_string(),
                    Some(d) => format!("{}-fifo", d.trim_end_matches('s')),
                    None => "fifo".into(),
                };
                mkfifo(&target.join(name));
            } else {
                remove(target);
                mkfifo(target);
            }
        }
        Anomaly::Swapped => {
            remove(target);
            if is_dir {
                std::fs::write(target, b"not a directory").unwrap();
            } else {
                std::fs::create_dir(target).unwrap();
            }
        }
        Anomaly::NoPermission => {
            if !no_perm_user {
                return Err("needs a non-root user".into());
            }
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(target, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
    }
    Ok(())
}

/// A command that changes the table: name, arguments, version keys it may remove.
type RealOp = (&'static str, fn() -> Vec<String>, &'static [&'static str]);

/// An operation through the C ABI: name, runner (table, dry run → status), removable keys.
type AbiOp = (
    &'static str,
    fn(&Path, bool) -> i32,
    &'static [&'static str],
);

struct Op {
    name: &'static str,
    args: fn() -> Vec<String>,
    /// Runs the operation through the C ABI instead of the CLI (table, dry run) → status.
    abi: Option<fn(&Path, bool) -> i32>,
    dry: bool,
    /// Prefixes of live_files.py version keys the command may remove.
    removes: &'static [&'static str],
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn ops() -> Vec<Op> {
    let mut out = vec![Op {
        name: "inspect",
        args: Vec::new,
        abi: None,
        dry: true,
        removes: &[],
    }];
    let real: Vec<RealOp> = vec![
        (
            "expire-snapshots",
            || s(&["--retain-min", "1", "--retain-max", "1"]),
            &["snapshot:"],
        ),
        (
            "expire-changelogs",
            || s(&["--retain-min", "1", "--retain-max", "1"]),
            &[],
        ),
        ("delete-tag", || s(&["t1"]), &["tag:t1"]),
        ("expire-tags", || s(&["--older-than", "1 s"]), &["tag:"]),
        (
            "expire-consumers",
            || s(&["--expiration-time", "1 ms"]),
            &[],
        ),
        (
            "remove-orphan-files",
            || {
                vec![
                    "--older-than-ms".into(),
                    (now_ms() - 1000).to_string(),
                    "--no-writers-running".into(),
                ]
            },
            &[],
        ),
        (
            "drop-partitions",
            || s(&["--partition", "dt=2024-01-01"]),
            &[],
        ),
        (
            "expire-partitions",
            || s(&["--strategy", "update-time", "--expiration-time", "1 ms"]),
            &[],
        ),
        (
            "maintain",
            || {
                s(&[
                    "-o",
                    "snapshot.num-retained.min=1",
                    "-o",
                    "snapshot.num-retained.max=1",
                    "-o",
                    "tag.time-expire-enabled=true",
                ])
            },
            &["snapshot:", "tag:"],
        ),
    ];
    for (name, args, removes) in real {
        for dry in [true, false] {
            out.push(Op {
                name,
                args,
                abi: None,
                dry,
                removes,
            });
        }
    }
    let through_abi: Vec<AbiOp> = vec![
        ("c:expire_snapshots", abi::expire_snapshots, &["snapshot:"]),
        ("c:delete_tag", abi::delete_tag, &["tag:t1"]),
        ("c:remove_orphan_files", abi::remove_orphan_files, &[]),
    ];
    for (name, f, removes) in through_abi {
        for dry in [true, false] {
            out.push(Op {
                name,
                args: Vec::new,
                abi: Some(f),
                dry,
                removes,
            });
        }
    }
    out
}

/// A subset of the operations through the crate's `extern "C"` functions, as a host calls
/// them: context, executor, config, call, report and error freed.
mod abi {
    use std::ffi::CString;
    use std::path::Path;
    use std::ptr;

    use paimon_cleanup::ffi::*;

    type Body<'a> = dyn Fn(
            *const PaimonCleanupContext,
            *const PaimonCleanupExecutor,
            *mut *mut PaimonCleanupReport,
            *mut *mut PaimonCleanupError,
        ) -> PaimonCleanupStatus
        + 'a;

    fn with_table(table: &Path, body: &Body<'_>) -> i32 {
        let uri = CString::new(table.to_str().unwrap()).unwrap();
        let mut ctx: *mut PaimonCleanupContext = ptr::null_mut();
        let mut exec: *mut PaimonCleanupExecutor = ptr::null_mut();
        let mut err: *mut PaimonCleanupError = ptr::null_mut();
        let mut report: *mut PaimonCleanupReport = ptr::null_mut();
        // SAFETY: every pointer is valid for its call or NULL; every handle is freed once.
        unsafe {
            let st = paimon_cleanup_context_new(
                uri.as_ptr(),
                ptr::null(),
                ptr::null(),
                0,
                &mut ctx,
                &mut err,
            );
            if st != PaimonCleanupStatus::Ok {
                paimon_cleanup_error_free(err);
                return st as i32;
            }
            let st = paimon_cleanup_executor_new(2, &mut exec, &mut err);
            if st != PaimonCleanupStatus::Ok {
                paimon_cleanup_error_free(err);
                paimon_cleanup_context_free(ctx);
                return st as i32;
            }
            let st = body(ctx, exec, &mut report, &mut err);
            paimon_cleanup_error_free(err);
            paimon_cleanup_report_free(report);
            paimon_cleanup_executor_free(exec);
            paimon_cleanup_context_free(ctx);
            st as i32
        }
    }

    pub fn expire_snapshots(table: &Path, dry: bool) -> i32 {
        with_table(table, &|ctx, exec, out, err| {
            // SAFETY: as in `with_table`; the config is freed before returning.
            unsafe {
                let mut cfg: *mut PaimonCleanupExpireConfig = ptr::null_mut();
                let st = paimon_cleanup_expire_config_new(&mut cfg, err);
                if st != PaimonCleanupStatus::Ok {
                    return st;
                }
                paimon_cleanup_expire_config_set_retain_min(cfg, 1, ptr::null_mut());
                paimon_cleanup_expire_config_set_retain_max(cfg, 1, ptr::null_mut());
                paimon_cleanup_expire_config_set_dry_run(cfg, dry, ptr::null_mut());
                let st = paimon_cleanup_expire_snapshots(ctx, exec, cfg, ptr::null(), out, err);
                paimon_cleanup_expire_config_free(cfg);
                st
            }
        })
    }

    pub fn delete_tag(table: &Path, dry: bool) -> i32 {
        let tag = CString::new("t1").unwrap();
        with_table(table, &|ctx, exec, out, err| {
            // SAFETY: as in `with_table`; `tag` outlives the call.
            unsafe {
                paimon_cleanup_delete_tag(ctx, exec, tag.as_ptr(), dry, ptr::null(), out, err)
            }
        })
    }

    pub fn remove_orphan_files(table: &Path, dry: bool) -> i32 {
        with_table(table, &|ctx, exec, out, err| {
            // SAFETY: as in `with_table`; the config is freed before returning.
            unsafe {
                let mut cfg: *mut PaimonCleanupOrphanConfig = ptr::null_mut();
                let st = paimon_cleanup_orphan_config_new(&mut cfg, err);
                if st != PaimonCleanupStatus::Ok {
                    return st;
                }
                paimon_cleanup_orphan_config_set_older_than_ms(
                    cfg,
                    super::now_ms() - 1000,
                    ptr::null_mut(),
                );
                paimon_cleanup_orphan_config_set_no_writers_running(cfg, true, ptr::null_mut());
                paimon_cleanup_orphan_config_set_dry_run(cfg, dry, ptr::null_mut());
                let st = paimon_cleanup_remove_orphan_files(ctx, exec, cfg, ptr::null(), out, err);
                paimon_cleanup_orphan_config_free(cfg);
                st
            }
        })
    }

    /// The status a panic is reported with.
    pub const PANIC: i32 = PaimonCleanupStatus::Panic as i32;
    /// The status of an internal error (a bug).
    pub const INTERNAL: i32 = PaimonCleanupStatus::Internal as i32;
}

struct Case {
    state: usize,
    anomaly: Anomaly,
    op: usize,
}

struct Pending {
    label: String,
    before: PathBuf,
    after: PathBuf,
    removes: &'static [&'static str],
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(true)
}

/// The base tables, built once: append_unaware with long-lived changelogs made by a decoupled
/// snapshot expiry, and dv_table.
fn bases() -> Option<(tempfile::TempDir, PathBuf, tempfile::TempDir, PathBuf)> {
    let (tm, main, _) = common::pypaimon_table("append_unaware")?;
    let (ended, out, err) = run_timeout(
        Command::new(common::cli_bin()).args([
            "expire-snapshots",
            main.to_str().unwrap(),
            "--retain-min",
            "3",
            "--retain-max",
            "3",
            "-o",
            "changelog.num-retained.min=50",
            "-o",
            "changelog.num-retained.max=50",
        ]),
        TIMEOUT,
    );
    assert_eq!(ended, Ended::Code(0), "{out}{err}");
    let (td, dv, _) = common::pypaimon_table("dv_table")?;
    Some((tm, main, td, dv))
}

fn run_case(
    root: &Path,
    base: &Path,
    state: &State,
    a: Anomaly,
    op: &Op,
    no_perm_user: bool,
    pending: &mut Vec<Pending>,
) -> Result<Option<String>, String> {
    let table = root.join("t");
    let outside = root.join("outside");
    copy_exact(base, &table, false);
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep"), b"outside the table").unwrap();
    let target = (state.find)(&table).ok_or("no such path in the table")?;
    if a == Anomaly::NoPermission && op.abi.is_some() {
        return Err("the C ABI runs in this (root) process".into());
    }
    apply(
        a,
        state,
        &target,
        &outside,
        no_perm_user || setpriv().is_some(),
    )?;
    let tree_before = exact_tree(&table);
    let outside_before = exact_tree(&outside);
    let before_copy = root.join("before/t");
    if !op.dry {
        copy_exact(&table, &before_copy, true);
    }
    let started = Instant::now();
    let (ended, err) = if let Some(f) = op.abi {
        if a == Anomaly::NoPermission {
            return Err("the C ABI runs in this (root) process".into());
        }
        run_abi(f, &table, op.dry)
    } else {
        let mut cmd = if a == Anomaly::NoPermission && !no_perm_user {
            as_nobody(root)?
        } else {
            Command::new(common::cli_bin())
        };
        cmd.arg(op.name).arg(&table).args((op.args)());
        if op.dry && op.name != "inspect" {
            cmd.arg("--dry-run");
        }
        let (ended, _out, err) = run_timeout(&mut cmd, TIMEOUT);
        (ended, err)
    };
    let took = started.elapsed();
    let err_line = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(300)
        .collect::<String>();
    let mut problems = Vec::new();
    match &ended {
        Ended::TimedOut => problems.push(format!("hung (killed after {took:?})")),
        Ended::Signal(s) => problems.push(format!("killed by signal {s}: {err_line}")),
        Ended::Code(101) => problems.push(format!("panicked: {err_line}")),
        _ => {}
    }
    let outside_diff = diff(&outside_before, &exact_tree(&outside));
    if !outside_diff.is_empty() {
        problems.push(format!("changed outside the table: {outside_diff:?}"));
    }
    let tree_after = exact_tree(&table);
    let table_diff = diff(&tree_before, &tree_after);
    let ok = ended == Ended::Code(0);
    if !table_diff.is_empty() {
        if op.dry {
            problems.push(format!("a dry run changed the table: {table_diff:?}"));
        } else if !ok {
            problems.push(format!(
                "failed ({ended:?}: {err_line}) after changing the table: {table_diff:?}"
            ));
        } else {
            let after_copy = root.join("after/t");
            copy_exact(&table, &after_copy, true);
            pending.push(Pending {
                label: String::new(),
                before: before_copy,
                after: after_copy,
                removes: op.removes,
            });
        }
    }
    if problems.is_empty() {
        Ok(None)
    } else {
        Ok(Some(problems.join("; ")))
    }
}

/// `setpriv`, to run the CLI as `nobody` when the test runs as root.
fn setpriv() -> Option<PathBuf> {
    ["/usr/bin/setpriv", "/bin/setpriv"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// A command that runs the CLI as `nobody` (uid/gid 65534) on the case under `root`, which
/// is handed over to that user (with every directory above it made traversable).
fn as_nobody(root: &Path) -> Result<Command, String> {
    let setpriv = setpriv().ok_or("needs a non-root user or setpriv")?;
    let st = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(root)
        .status()
        .map_err(|e| e.to_string())?;
    if !st.success() {
        return Err("chown failed".into());
    }
    use std::os::unix::fs::PermissionsExt;
    for dir in root.ancestors().skip(1) {
        let Ok(md) = std::fs::metadata(dir) else {
            continue;
        };
        let mode = md.permissions().mode();
        if mode & 0o001 == 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o011))
                .map_err(|e| e.to_string())?;
        }
    }
    let mut c = Command::new(setpriv);
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        common::cli_bin(),
    ]);
    Ok(c)
}

/// Runs a C ABI operation on its own thread with the timeout; a panic or internal status
/// counts as a crash (exit 101).
fn run_abi(f: fn(&Path, bool) -> i32, table: &Path, dry: bool) -> (Ended, String) {
    let (tx, rx) = std::sync::mpsc::channel();
    let t = table.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(f(&t, dry));
    });
    match rx.recv_timeout(TIMEOUT) {
        Ok(0) => (Ended::Code(0), String::new()),
        Ok(st) if st == abi::PANIC || st == abi::INTERNAL => {
            (Ended::Code(101), format!("status {st}"))
        }
        Ok(st) => (Ended::Code(1), format!("status {st}")),
        Err(_) => (Ended::TimedOut, String::new()),
    }
}

/// pypaimon's view of several tables, `None` for a table it could not list at all.
fn views(dirs: &[&Path]) -> BTreeMap<PathBuf, Option<serde_json::Map<String, Value>>> {
    let py = common::python().unwrap();
    let mut args: Vec<String> = vec![Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py/live_files.py")
        .to_string_lossy()
        .into_owned()];
    args.extend(dirs.iter().map(|d| d.to_string_lossy().into_owned()));
    args.push("--all-versions".into());
    let (ended, out, _) = run_timeout(Command::new(&py).args(&args), Duration::from_secs(300));
    let parsed: Option<Value> = (ended != Ended::TimedOut)
        .then(|| serde_json::from_str(&out).ok())
        .flatten();
    dirs.iter()
        .map(|d| {
            let one = parsed.as_ref().and_then(|v| {
                if dirs.len() == 1 {
                    v.as_object().cloned()
                } else {
                    v[d.to_str().unwrap()].as_object().cloned()
                }
            });
            (d.to_path_buf(), one)
        })
        .collect()
}

/// Compares pypaimon's views before and after a succeeding run.
fn check_versions(
    p: &Pending,
    before: &Option<serde_json::Map<String, Value>>,
    after: &Option<serde_json::Map<String, Value>>,
) -> Option<String> {
    let Some(before) = before else {
        // pypaimon could not list the versions before: nothing it read to keep.
        return None;
    };
    let Some(after) = after else {
        return Some("pypaimon could list the versions before, not after".into());
    };
    let mut bad = Vec::new();
    for (k, v) in before {
        if v.get("error").is_some() {
            continue;
        }
        match after.get(k) {
            None if p.removes.iter().any(|r| k.starts_with(r)) => {}
            None => bad.push(format!("{k} vanished")),
            Some(w) if w.get("error").is_some() => {
                bad.push(format!("{k} unreadable: {}", w["error"]))
            }
            Some(w) if w.get("row_digest") != v.get("row_digest") => {
                bad.push(format!("{k} reads other rows"))
            }
            Some(_) => {}
        }
    }
    (!bad.is_empty()).then(|| bad.join(", "))
}

#[test]
fn anomaly_matrix() {
    let Some((_tm, main, _td, dv)) = bases() else {
        return;
    };
    let full = std::env::var("PAIMON_ANOMALY_FULL").as_deref() == Ok("1");
    let seed: u64 = std::env::var("PAIMON_ANOMALY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let filter = std::env::var("PAIMON_ANOMALY_FILTER").ok();
    let no_perm_user = !is_root();
    let states = states();
    let ops = ops();
    let mut rng = Rng::new(seed);
    let mut cases = Vec::new();
    let mut not_applicable: Vec<String> = Vec::new();
    for (si, st) in states.iter().enumerate() {
        let base = if st.base == Base::Main { &main } else { &dv };
        let Some(target) = (st.find)(base) else {
            not_applicable.push(format!("{}: not in the base table", st.name));
            continue;
        };
        let n_abs = variants(st, base, &target);
        let mut anomalies = vec![
            Anomaly::Missing,
            Anomaly::Empty,
            Anomaly::Truncated,
            Anomaly::NotUtf8,
            Anomaly::DanglingLink,
            Anomaly::LinkOutside,
            Anomaly::Fifo,
            Anomaly::Swapped,
            Anomaly::NoPermission,
        ];
        if full {
            anomalies.extend((0..n_abs).map(Anomaly::Absurd));
        } else {
            anomalies.push(Anomaly::Absurd(rng.below(n_abs)));
        }
        for a in anomalies {
            if full {
                cases.extend((0..ops.len()).map(|op| Case {
                    state: si,
                    anomaly: a,
                    op,
                }));
            } else {
                cases.push(Case {
                    state: si,
                    anomaly: a,
                    op: rng.below(ops.len()),
                });
            }
        }
    }
    let label = |c: &Case| {
        let op = &ops[c.op];
        format!(
            "{} | {} | {}{}",
            states[c.state].name,
            c.anomaly.label(),
            op.name,
            if op.dry && op.name != "inspect" {
                " --dry-run"
            } else {
                ""
            }
        )
    };
    if let Some(f) = &filter {
        cases.retain(|c| label(c).contains(f.as_str()));
    }
    let started = Instant::now();
    let work = tempfile::tempdir().unwrap();
    let mut failures: Vec<String> = Vec::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut ran = 0;
    for (i, c) in cases.iter().enumerate() {
        let st = &states[c.state];
        let base = if st.base == Base::Main { &main } else { &dv };
        let root = work.path().join(format!("case-{i}"));
        let before = pending.len();
        match run_case(
            &root,
            base,
            st,
            c.anomaly,
            &ops[c.op],
            no_perm_user,
            &mut pending,
        ) {
            Err(why) => {
                *skipped
                    .entry(format!("{} ({why})", c.anomaly.label()))
                    .or_default() += 1;
                let _ = std::fs::remove_dir_all(&root);
                continue;
            }
            Ok(Some(problem)) => failures.push(format!("{} | {problem}", label(c))),
            Ok(None) => {}
        }
        ran += 1;
        if pending.len() > before {
            if let Some(p) = pending.last_mut() {
                p.label = label(c);
            }
        } else {
            let _ = std::fs::remove_dir_all(&root);
        }
    }
    let runs_took = started.elapsed();
    let mut compared = 0;
    for chunk in pending.chunks(6) {
        let dirs: Vec<&Path> = chunk
            .iter()
            .flat_map(|p| [p.before.as_path(), p.after.as_path()])
            .collect();
        let mut v = views(&dirs);
        if v.values().all(Option::is_none) && chunk.len() > 1 {
            // One table broke the batch: ask per table.
            v = dirs.iter().flat_map(|d| views(&[d])).collect();
        }
        for p in chunk {
            if v[&p.before].is_some() {
                compared += 1;
            }
            if let Some(problem) = check_versions(p, &v[&p.before], &v[&p.after]) {
                failures.push(format!("{} | succeeded but {problem}", p.label));
            }
        }
    }
    eprintln!(
        "anomaly matrix: {ran} cases run ({} succeeded and changed the table, checked by \
         pypaimon) in {:?} + {:?}; {} skipped: {skipped:?}; not applicable: {not_applicable:?}",
        pending.len(),
        runs_took,
        started.elapsed() - runs_took,
        skipped.values().sum::<usize>(),
    );
    eprintln!(
        "anomaly matrix: pypaimon listed the versions before the run in {compared} of {} \
         checked cases",
        pending.len()
    );
    if compared == 0 && !pending.is_empty() {
        failures
            .push("the oracle: pypaimon listed no table's versions (live_files.py broken?)".into());
    }
    eprintln!("anomaly matrix: {} failing cases", failures.len());
    for f in &failures {
        eprintln!("ANOMALY FAIL: {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} anomaly cases failed (see ANOMALY FAIL lines)",
        failures.len()
    );
}
