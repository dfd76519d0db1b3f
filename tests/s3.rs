//! The object-store path against a real S3-compatible server on loopback (moto, started by this
//! test binary through `tests/py/s3_server.py`; see `common::s3_server`), with a small
//! ListObjectsV2 page size so every listing paginates, and a fault-injecting proxy
//! (`tests/py/faulty_proxy.py`) in front of it.
//!
//! Tables written by pypaimon (and a Java fixture table) are uploaded to
//! `s3://paimon/wh/<name>-<id>`, then inspect, expire snapshots, remove orphan files and drop
//! partitions run through `s3://` URIs and must give the same reports and end states as the
//! same runs on a local copy; pypaimon reads the downloaded bucket prefix afterwards. Faults
//! (503 SlowDown, dropped connections, lost answers, delays) either get retried away or make
//! the run fail cleanly; nothing referenced is deleted and a rerun converges.

mod common;
// The benchmark's latency-injecting, request-counting proxy (standard library only).
#[allow(dead_code)]
#[path = "../tools/src/bin/paimon_bench/s3_proxy.rs"]
mod s3_proxy;

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

fn server() -> Option<&'static common::S3Server> {
    // Without pypaimon the tables cannot be made either: python() prints the SKIP itself.
    common::python()?;
    common::s3_server()
}

fn opts_for(endpoint: &str, extra: &[(&str, &str)]) -> Opts {
    let mut o = common::s3_options(endpoint);
    for (k, v) in extra {
        o.insert(k.to_string(), v.to_string());
    }
    o
}

fn local_uri(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

async fn open(uri: &str, opts: &Opts) -> paimon_cleanup::Result<Table> {
    let storage = Arc::new(Storage::open(uri, opts)?);
    Table::open(storage, &HashMap::new()).await
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

/// What must agree between two expiry runs on different stores (not timings, not empty
/// directories: object stores have none).
fn expire_summary(r: &ExpireReport) -> String {
    let mut paths: Vec<String> = r
        .deletion
        .paths
        .iter()
        .map(|p| format!("{:?} {}", p.class, p.path))
        .collect();
    paths.sort();
    format!(
        "expired={} first={:?} last={:?} earliest={:?} changelogs={} deleted={:?} failed={:?}\n{}",
        r.snapshots_expired,
        r.first_expired,
        r.last_expired,
        r.earliest_after,
        r.changelogs_written,
        r.deletion.deleted,
        r.deletion.failed,
        paths.join("\n")
    )
}

fn deleted_paths(r: &paimon_cleanup::clean::DeletionReport) -> BTreeSet<String> {
    r.paths.iter().map(|p| p.path.clone()).collect()
}

/// A pypaimon table copied to a temp dir and uploaded under a fresh S3 prefix.
struct Pair {
    _tmp: tempfile::TempDir,
    /// A local copy (runs on it are the reference).
    local: PathBuf,
    /// The table it was copied from, never touched (pypaimon's "before").
    original: PathBuf,
    uri: String,
}

fn pair_from(rt: &tokio::runtime::Runtime, src: &Path, name: &str, opts: &Opts) -> Pair {
    let (tmp, local) = common::copy_table(src);
    let uri = common::s3_table_uri(name);
    common::s3_upload(rt, &local, &uri, opts);
    Pair {
        _tmp: tmp,
        local,
        original: src.to_path_buf(),
        uri,
    }
}

fn pypaimon_pair(rt: &tokio::runtime::Runtime, name: &str, opts: &Opts) -> Pair {
    let (tmp, local, entry) = common::pypaimon_table(name).expect("pypaimon table");
    let uri = common::s3_table_uri(name);
    common::s3_upload(rt, &local, &uri, opts);
    Pair {
        _tmp: tmp,
        local,
        original: PathBuf::from(entry["path"].as_str().unwrap()),
        uri,
    }
}

/// A Java-written fixture table (relative to the fixtures dir), or None when absent.
fn java_fixture(rel: &str) -> Option<PathBuf> {
    let dir = common::fixtures_dir()?.join(rel);
    assert!(dir.join("schema").is_dir(), "fixture {rel} missing");
    Some(dir)
}

/// Every version that was readable before reads the same rows after, unless it is expired
/// (`expired(key)`: then it must be gone, or with `mid_way` it is not looked at, since a run
/// stopped half-way may have deleted some of its files already); versions present after were
/// all present before.
fn assert_versions_kept(
    label: &str,
    before: &serde_json::Map<String, serde_json::Value>,
    after: &serde_json::Map<String, serde_json::Value>,
    expired: impl Fn(&str) -> bool,
    mid_way: bool,
) {
    for (key, b) in before {
        if b.get("error").is_some() {
            continue;
        }
        if expired(key) {
            assert!(
                mid_way || !after.contains_key(key),
                "{label}: {key} should be gone"
            );
            continue;
        }
        let a = after
            .get(key)
            .unwrap_or_else(|| panic!("{label}: {key} disappeared"));
        assert!(a.get("error").is_none(), "{label}: {key} unreadable: {a}");
        assert_eq!(
            a["row_digest"], b["row_digest"],
            "{label}: {key} rows differ"
        );
        assert_eq!(
            a["live_files"], b["live_files"],
            "{label}: {key} files differ"
        );
    }
    for key in after.keys() {
        assert!(
            before.contains_key(key),
            "{label}: unexpected version {key}"
        );
    }
}

/// True for `snapshot:<id>` keys of main with `first <= id <= last`.
fn expired_key(key: &str, r: &ExpireReport) -> bool {
    match key.strip_prefix("snapshot:").map(str::parse::<i64>) {
        Some(Ok(id)) => {
            r.first_expired.is_some_and(|a| id >= a) && r.last_expired.is_some_and(|b| id <= b)
        }
        _ => false,
    }
}

fn stat_u64(stats: &serde_json::Value, key: &str) -> u64 {
    stats[key].as_u64().unwrap_or(0)
}

fn total_faults(stats: &serde_json::Value) -> u64 {
    stats["faults"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.as_str() != "delay")
        .map(|(_, v)| v.as_u64().unwrap())
        .sum()
}

// ---------------------------------------------------------------------------------------------

/// The request behaviour of the object-store path, seen at the HTTP level through a proxy that
/// adds 20 ms to every request and counts requests by kind with the most in flight at once:
/// listing many prefixes runs `concurrency` listings at once (each paginating on its own) and
/// never more; deleting 2,520 keys takes three DeleteObjects requests (1,000 + 1,000 + 520
/// keys), never a single-key DELETE, with at most `concurrency` in flight, and two at once
/// when two are allowed.
#[test]
fn object_store_lists_per_prefix_in_parallel_and_deletes_in_bounded_batches() {
    use s3_proxy::{Kind, LatencyProxy};
    let Some(srv) = server() else { return };
    let proxy = LatencyProxy::start(
        std::net::SocketAddr::from(([127, 0, 0, 1], srv.port)),
        Duration::from_millis(20),
    )
    .unwrap();
    let rt = common::rt();
    let uri = common::s3_table_uri("requests");
    let storage = Storage::open(&uri, &common::s3_options(&proxy.endpoint())).unwrap();
    let uploader = Storage::open(&uri, &common::s3_options(&srv.endpoint)).unwrap();
    let root = storage.root().clone();
    const PREFIXES: usize = 12;
    const PER: usize = 210;
    rt.block_on(async {
        use futures::StreamExt;
        let names: Vec<String> = (0..PREFIXES)
            .flat_map(|p| (0..PER).map(move |i| format!("p-{p:02}/f-{i:04}")))
            .collect();
        let puts: Vec<_> = futures::stream::iter(names)
            .map(|n| {
                let (storage, root) = (&uploader, &root);
                async move {
                    storage
                        .put(&root.join(&n), bytes::Bytes::from(n.clone()))
                        .await
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        assert!(puts.iter().all(|r| r.is_ok()));
        assert_eq!(
            proxy.stats().total(),
            0,
            "the upload went straight to the server"
        );

        // Per-prefix listings, four at a time: every page is one LIST request.
        let dirs: Vec<Location> = (0..PREFIXES)
            .map(|p| root.join(&format!("p-{p:02}")))
            .collect();
        let listed = storage.list_dirs(&dirs, 4).await.unwrap();
        let files: Vec<Location> = listed
            .iter()
            .flat_map(|(_, l)| l.files.iter().map(|f| f.location.clone()))
            .collect();
        assert_eq!(files.len(), PREFIXES * PER);
        let s = proxy.stats();
        let pages = (PREFIXES * PER.div_ceil(common::S3_PAGE_SIZE)) as u64;
        assert!(s.count(Kind::List) >= pages, "{s:?}");
        assert_eq!(s.total(), s.count(Kind::List), "{s:?}");
        assert_eq!(s.max_in_flight(Kind::List), 4, "{s:?}");

        // Batched deletes, two requests at a time.
        proxy.reset();
        let results = storage.delete_files(files, 2).await;
        assert!(results.iter().all(|(_, r)| r.is_ok()));
        let s = proxy.stats();
        assert_eq!(s.count(Kind::BatchDelete), 3, "{s:?}");
        assert_eq!(s.count(Kind::Delete), 0, "{s:?}");
        assert_eq!(s.total(), 3, "{s:?}");
        let mut keys = s.batch_keys.clone();
        keys.sort_unstable();
        assert_eq!(keys, vec![520, 1000, 1000]);
        assert_eq!(s.max_in_flight(Kind::BatchDelete), 2, "{s:?}");

        // One at a time when so bounded.
        let more: Vec<Location> = (0..2500)
            .map(|i| root.join(&format!("absent/f-{i:04}")))
            .collect();
        proxy.reset();
        let results = storage.delete_files(more, 1).await;
        assert!(results.iter().all(|(_, r)| r.is_ok()));
        let s = proxy.stats();
        assert_eq!(s.count(Kind::BatchDelete), 3, "{s:?}");
        assert_eq!(s.max_in_flight(Kind::BatchDelete), 1, "{s:?}");
        assert!(storage.list_tree(&root).await.unwrap().is_empty());
    });
}

/// The storage layer on the real server: listings that span many pages (files and common
/// prefixes), batched deletes of more than 1000 keys in requests of at most 1000, conditional
/// create with exactly one winner among racing writers, and names that need escaping.
#[test]
fn storage_paginates_batches_deletes_and_creates_exclusively() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::start(srv, &[]);
    let opts = opts_for(&proxy.endpoint, &[]);
    let rt = common::rt();
    let uri = common::s3_table_uri("storage");
    let storage = Storage::open(&uri, &opts).unwrap();
    let uploader = Storage::open(&uri, &common::s3_options(&srv.endpoint)).unwrap();
    let root = storage.root().clone();
    const MANY: usize = 1010;
    rt.block_on(async {
        use futures::StreamExt;
        let names: Vec<String> = (0..MANY)
            .map(|i| format!("bucket-0/data-{i:05}.parquet"))
            .chain((0..20).map(|i| format!("sub-{i:02}/x")))
            .collect();
        let puts: Vec<_> = futures::stream::iter(names.clone())
            .map(|n| {
                let storage = &uploader;
                let root = &root;
                async move {
                    storage
                        .put(&root.join(&n), bytes::Bytes::from(n.clone()))
                        .await
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        assert!(puts.iter().all(|r| r.is_ok()));

        // One directory of MANY files: ~MANY/7 pages.
        let l = storage.list_dir(&root.join("bucket-0")).await.unwrap();
        assert_eq!(l.files.len(), MANY);
        assert!(l.dirs.is_empty());
        assert_eq!(l.files[17].size, "bucket-0/data-00017.parquet".len() as u64);
        // Modification times are the server's (whole seconds), never in the future and never
        // "ancient": age-based orphan cleanup depends on them.
        let now = chrono::Utc::now().timestamp_millis();
        for f in &l.files {
            assert!(
                f.last_modified_ms <= now && f.last_modified_ms > now - 300_000,
                "{f:?} (now {now})"
            );
        }
        // Common prefixes over several pages too.
        let top = storage.list_dir(&root).await.unwrap();
        assert_eq!(top.dirs.len(), 21, "{:?}", top.dirs);
        assert!(top.files.is_empty());
        assert_eq!(storage.list_tree(&root).await.unwrap().len(), MANY + 20);
        let stats = proxy.stats();
        assert!(
            stat_u64(&stats, "list_continuations") >= (2 * MANY / common::S3_PAGE_SIZE) as u64,
            "listings did not paginate: {stats}"
        );

        // Batched deletes: MANY keys in DeleteObjects requests of at most 1000 keys.
        let locs: Vec<Location> = l.files.iter().map(|f| f.location.clone()).collect();
        let before = proxy.stats()["delete_batches"].as_array().unwrap().len();
        let results = storage.delete_files(locs.clone(), 4).await;
        assert!(results.iter().all(|(_, r)| r.is_ok()));
        let batches: Vec<u64> = proxy.stats()["delete_batches"].as_array().unwrap()[before..]
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert!(batches.len() >= 2, "{batches:?}");
        assert!(batches.iter().all(|n| *n <= 1000), "{batches:?}");
        assert_eq!(batches.iter().sum::<u64>(), MANY as u64, "{batches:?}");
        assert!(storage
            .list_dir(&root.join("bucket-0"))
            .await
            .unwrap()
            .files
            .is_empty());
        // Idempotent: deleting absent keys succeeds.
        let again = storage.delete_files(locs[..3].to_vec(), 1).await;
        assert!(again.iter().all(|(_, r)| r.is_ok()));

        // Conditional create (If-None-Match: *): the server refuses the second with 412.
        let target = root.join("snapshot/snapshot-1");
        assert!(storage
            .put_if_absent(&target, bytes::Bytes::from_static(b"first"))
            .await
            .unwrap());
        assert!(!storage
            .put_if_absent(&target, bytes::Bytes::from_static(b"second"))
            .await
            .unwrap());
        assert_eq!(&storage.get(&target).await.unwrap()[..], b"first");
        let stats = proxy.stats();
        assert_eq!(stats["cond_put_status"]["412"], 1, "{stats}");
        // Racing writers through separate clients: exactly one wins.
        let target = root.join("snapshot/snapshot-2");
        let racers: Vec<Storage> = (0..8)
            .map(|_| Storage::open(&uri, &opts).unwrap())
            .collect();
        let wins = futures::future::join_all(racers.iter().enumerate().map(|(i, s)| {
            let target = target.clone();
            async move {
                s.put_if_absent(&target, bytes::Bytes::from(format!("writer {i}")))
                    .await
                    .unwrap()
                    .then_some(i)
            }
        }))
        .await;
        let winners: Vec<usize> = wins.into_iter().flatten().collect();
        assert_eq!(winners.len(), 1, "{winners:?}");
        assert_eq!(
            storage.get(&target).await.unwrap(),
            bytes::Bytes::from(format!("writer {}", winners[0]))
        );

        // Names as Paimon writes them: escaped partition values, spaces, non-ASCII.
        for name in [
            "dt=a%2Fb/hr=0/bucket-0/f",
            "dt=%2541/bucket-0/f",
            "dt=has space/bucket-0/f",
            "dt=ü日/bucket-0/f",
        ] {
            let loc = root.join(name);
            storage
                .put(&loc, bytes::Bytes::from(name.to_string()))
                .await
                .unwrap();
            assert_eq!(storage.get(&loc).await.unwrap(), name.as_bytes());
            let parent = storage.list_dir(&loc.parent().unwrap()).await.unwrap();
            assert_eq!(parent.files.len(), 1);
            assert_eq!(parent.files[0].location, loc, "{name}");
        }
        assert!(storage
            .head(&root.join("dt=a%2Fb/hr=0/bucket-0/g"))
            .await
            .unwrap()
            .is_none());
        assert!(matches!(
            storage.get(&root.join("nope")).await,
            Err(paimon_cleanup::Error::NotFound { .. })
        ));
    });
}

/// `inspect` through `s3://` reports exactly what it reports for the same table on disk, for
/// every pypaimon table and two Java-written tables (one with a branch).
#[test]
fn inspect_on_s3_matches_local() {
    let Some(srv) = server() else { return };
    let opts = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let mut pairs: Vec<(String, Pair)> = [
        "append_unaware",
        "append_fixed_bucket",
        "pk_fixed",
        "pk_dynamic",
        "pk_changelog",
        "dv_table",
        "retention_opts",
    ]
    .iter()
    .map(|n| (n.to_string(), pypaimon_pair(&rt, n, &opts)))
    .collect();
    for rel in [
        "parquet/pk_09.db/pk_09",
        "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
    ] {
        if let Some(src) = java_fixture(rel) {
            pairs.push((rel.to_string(), pair_from(&rt, &src, "java", &opts)));
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
            .unwrap_or_else(|e| panic!("{name}: s3 inspect: {e}"));
        assert_eq!(remote.table, Location::parse(&p.uri).unwrap().as_str());
        remote.table = local.table.clone();
        assert_eq!(remote, local, "{name}: inspect differs on s3");
        assert!(!local.snapshots.is_empty(), "{name}");
    }
}

/// Snapshot expiry through `s3://` gives the same report as the same run on a local copy and
/// leaves exactly the same objects; the downloaded prefix reads, in pypaimon, the same rows at
/// every remaining version; a second run deletes nothing. Listings paginate.
#[test]
fn expire_snapshots_on_s3_matches_local_and_pypaimon() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::start(srv, &[]);
    let opts = common::s3_options(&proxy.endpoint);
    let rt = common::rt();
    let mut pairs: Vec<(String, Pair)> =
        ["append_unaware", "pk_changelog", "dv_table", "pk_dynamic"]
            .iter()
            .map(|n| (n.to_string(), pypaimon_pair(&rt, n, &opts)))
            .collect();
    if let Some(src) = java_fixture("parquet/pk_09.db/pk_09") {
        pairs.push(("java pk_09".into(), pair_from(&rt, &src, "pk_09", &opts)));
    }

    let mut downloads = Vec::new();
    let mut reports = Vec::new();
    for (name, p) in &pairs {
        let local = expire(&rt, &local_uri(&p.local), &HashMap::new())
            .unwrap_or_else(|e| panic!("{name}: local expire: {e}"));
        let remote =
            expire(&rt, &p.uri, &opts).unwrap_or_else(|e| panic!("{name}: s3 expire: {e}"));
        assert!(local.snapshots_expired > 0, "{name}: nothing expired");
        assert_eq!(
            expire_summary(&remote),
            expire_summary(&local),
            "{name}: reports differ"
        );
        assert_eq!(
            common::s3_tree(&rt, &p.uri, &opts),
            common::tree(&p.local),
            "{name}: objects left on s3 differ from files left on disk"
        );
        let again = expire(&rt, &p.uri, &opts).unwrap();
        assert_eq!(
            again.deletion.total_files(),
            0,
            "{name}: second run deleted"
        );
        downloads.push(common::s3_download(&rt, &p.uri, &opts));
        reports.push(remote);
    }
    let stats = proxy.stats();
    assert!(stat_u64(&stats, "list_continuations") > 0, "{stats}");
    assert!(!stats["delete_batches"].as_array().unwrap().is_empty());

    // pypaimon, in one interpreter: the untouched originals and the downloaded prefixes.
    let mut dirs: Vec<&Path> = pairs.iter().map(|(_, p)| p.original.as_path()).collect();
    dirs.extend(downloads.iter().map(|(_, d)| d.as_path()));
    let views = common::all_versions_many(&dirs);
    let (before, after) = (&views, &views);
    for (((name, p), (_, d)), r) in pairs.iter().zip(&downloads).zip(&reports) {
        assert_versions_kept(
            name,
            &before[&p.original],
            &after[d],
            |k| expired_key(k, r),
            false,
        );
        eprintln!("{name}: {}", expire_summary(r).lines().next().unwrap());
    }
}

/// Orphan removal through `s3://`: more than 1000 orphans in one bucket directory (listed
/// over many pages, deleted in batches of at most 1000), orphan manifests and a temp snapshot
/// file go, and nothing else; the same run on a local copy deletes the same files; pypaimon
/// reads every version of the downloaded prefix like the original table.
#[test]
fn remove_orphan_files_on_s3() {
    let Some(srv) = server() else { return };
    let direct = common::s3_options(&srv.endpoint);
    let proxy = common::FaultyProxy::start(srv, &[]);
    let opts = common::s3_options(&proxy.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "pk_fixed", &direct);
    let bucket_dir = "d=19723/bucket-0";
    assert!(p.local.join(bucket_dir).is_dir());
    const ORPHANS: usize = 1100;
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
    // Plant on disk, then upload only the planted files.
    let stage = tempfile::tempdir().unwrap();
    for rel in planted.iter().map(String::as_str).chain(kept_junk) {
        for dir in [p.local.as_path(), stage.path()] {
            let f = dir.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, rel.as_bytes()).unwrap();
        }
    }
    common::s3_upload(&rt, stage.path(), &p.uri, &direct);

    let run = |uri: &str, o: &Opts, cfg: &OrphanConfig| -> OrphanReport {
        rt.block_on(async {
            let t = open(uri, o).await?;
            remove_orphan_files(&t, cfg, &RunControl::default()).await
        })
        .unwrap_or_else(|e| panic!("{uri}: {e}"))
    };
    // Object stores have no mtime control: cut off at "now" with no writer running (S3
    // reports whole seconds, so wait past the uploads' second).
    std::thread::sleep(Duration::from_millis(1100));
    let now = chrono::Utc::now().timestamp_millis();
    let cfg = OrphanConfig {
        older_than_ms: Some(now),
        no_writers_running: true,
        ..Default::default()
    };
    let remote = run(&p.uri, &opts, &cfg);
    let local = run(&local_uri(&p.local), &HashMap::new(), &cfg);
    assert!(
        remote.deletion.failed.is_empty(),
        "{:?}",
        remote.deletion.failed
    );
    assert_eq!(deleted_paths(&remote.deletion), planted, "s3 run");
    assert_eq!(deleted_paths(&local.deletion), planted, "local run");
    assert_eq!(remote.deletion.deleted, local.deletion.deleted);
    assert_eq!(remote.candidates, local.candidates);
    assert_eq!(remote.referenced, local.referenced);
    let stats = proxy.stats();
    let batches: Vec<u64> = stats["delete_batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(batches.len() >= 2, "{batches:?}");
    assert!(batches.iter().all(|n| *n <= 1000), "{batches:?}");
    assert_eq!(
        batches.iter().sum::<u64>(),
        planted.len() as u64,
        "{batches:?}"
    );
    assert!(
        stat_u64(&stats, "list_continuations") >= (ORPHANS / common::S3_PAGE_SIZE) as u64,
        "{stats}"
    );
    let tree = common::s3_tree(&rt, &p.uri, &direct);
    assert_eq!(
        tree,
        common::tree(&p.local),
        "s3 and local end states differ"
    );
    for j in kept_junk {
        assert!(tree.contains_key(j), "{j} deleted");
    }
    // A second run finds nothing.
    let again = run(&p.uri, &direct, &cfg);
    assert_eq!(again.deletion.total_files(), 0);
    let (_dl, dir) = common::s3_download(&rt, &p.uri, &direct);
    let v = common::all_versions_many(&[p.original.as_path(), dir.as_path()]);
    assert_versions_kept("pk_fixed", &v[&p.original], &v[&dir], |_| false, false);
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

/// Drop partitions through `s3://`: the OVERWRITE commit is published with a conditional put,
/// reports the same as on a local copy, and pypaimon reads the new snapshot like the local one.
#[test]
fn drop_partitions_on_s3_matches_local() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::start(srv, &[]);
    let opts = common::s3_options(&proxy.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "pk_dynamic", &opts);
    let specs = [spec("p", "0")];
    let local = drop_on(&rt, &local_uri(&p.local), &HashMap::new(), &specs).unwrap();
    let remote = drop_on(&rt, &p.uri, &opts, &specs).unwrap();
    assert!(local.files_marked_deleted > 0);
    for (a, b) in [
        (local.files_marked_deleted, remote.files_marked_deleted),
        (local.rows_marked_deleted, remote.rows_marked_deleted),
        (local.bytes_marked_deleted, remote.bytes_marked_deleted),
        (local.index_entries_removed, remote.index_entries_removed),
        (local.retries, remote.retries),
    ] {
        assert_eq!(a, b, "{local:?} vs {remote:?}");
    }
    assert_eq!(local.partitions, remote.partitions);
    assert_eq!(local.snapshot_ids, remote.snapshot_ids);
    let stats = proxy.stats();
    // Manifests, both manifest lists, the index manifest and the snapshot: conditional puts.
    assert!(stat_u64(&stats, "cond_puts") >= 4, "{stats}");
    assert_eq!(
        stats["cond_put_status"]["200"].as_u64(),
        Some(stat_u64(&stats, "cond_puts")),
        "{stats}"
    );
    let (_dl, dir) = common::s3_download(&rt, &p.uri, &opts);
    let views = common::all_versions_many(&[p.local.as_path(), dir.as_path()]);
    let (l, r) = (&views[&p.local], &views[&dir]);
    assert_eq!(l.keys().collect::<Vec<_>>(), r.keys().collect::<Vec<_>>());
    for (k, v) in l {
        assert!(v.get("error").is_none(), "{k}: {v}");
        assert_eq!(v["row_digest"], r[k]["row_digest"], "{k}");
        assert_eq!(v["live_files"], r[k]["live_files"], "{k}");
    }
    let latest = format!("snapshot:{}", remote.snapshot_ids[0]);
    assert!(r[&latest]["live_files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| !f.as_str().unwrap().starts_with("p=0/")));
}

/// Two committers on S3: A reads snapshot N and is held just before publishing N+1 (the proxy
/// holds its conditional PUT); B publishes N+1 meanwhile; A's put-if-absent then gets 412,
/// A discards its attempt's files and retries from N+1, publishing N+2. Both drops are in the
/// final table and no file of A's losing attempt is left behind.
#[test]
fn concurrent_committer_on_s3_loses_the_race_and_retries() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::start(srv, &["--hold-cond-put", r"/snapshot/snapshot-\d+$"]);
    let held_opts = common::s3_options(&proxy.endpoint);
    let direct = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "append_unaware", &direct);
    let latest_before = *common::s3_tree(&rt, &p.uri, &direct)
        .keys()
        .filter_map(|k| k.strip_prefix("snapshot/snapshot-"))
        .map(|n| n.parse::<i64>().unwrap())
        .collect::<Vec<_>>()
        .iter()
        .max()
        .unwrap();
    let manifests_before: BTreeSet<String> = common::s3_tree(&rt, &p.uri, &direct)
        .into_keys()
        .filter(|k| k.starts_with("manifest/"))
        .collect();

    let uri_a = p.uri.clone();
    let a = std::thread::spawn(move || {
        let rt = common::rt();
        drop_on(&rt, &uri_a, &held_opts, &[spec("dt", "2024-01-01")])
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while stat_u64(&proxy.stats(), "held") == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "A never reached its publish"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let b = drop_on(&rt, &p.uri, &direct, &[spec("dt", "2024-01-02")]).unwrap();
    assert_eq!(b.snapshot_ids, vec![latest_before + 1]);
    common::http_request(proxy.port, "POST", "/__proxy/release", b"").unwrap();
    let a = a.join().unwrap().unwrap();
    assert_eq!(a.snapshot_ids, vec![latest_before + 2], "{a:?}");
    assert_eq!(a.retries, 1, "{a:?}");
    let stats = proxy.stats();
    assert_eq!(stats["cond_put_status"]["412"], 1, "{stats}");

    let (_dl, dir) = common::s3_download(&rt, &p.uri, &direct);
    let latest = common::pypaimon_view(&dir, &[]);
    assert!(latest.get("error").is_none(), "{latest}");
    assert_eq!(latest["snapshot_id"], latest_before + 2);
    for f in latest["live_files"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        assert!(
            !f.starts_with("dt=2024-01-01/") && !f.starts_with("dt=2024-01-02/"),
            "{f} still live"
        );
    }
    // Every manifest file written since is referenced by a version: A's losing attempt left
    // nothing behind.
    let refs = common::referenced_files(&[dir.as_path()]);
    let referenced: BTreeSet<String> = refs[&dir]["manifest_dir"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("manifest/{}", s.as_str().unwrap()))
        .collect();
    let new: BTreeSet<String> = common::tree(&dir)
        .into_keys()
        .filter(|k| k.starts_with("manifest/") && !manifests_before.contains(k))
        .collect();
    assert!(!new.is_empty());
    let leftover: Vec<&String> = new.difference(&referenced).collect();
    assert!(
        leftover.is_empty(),
        "files of the losing attempt left: {leftover:?}"
    );
}

/// Several committers racing for real (no hold): each commit lands exactly once, on distinct
/// consecutive snapshots, and every 412 answer the server gave is a lost race the library
/// reports (it also finds lost races without a 412: by listing `snapshot/` again right before
/// publishing, where a newer id means the race is lost before any conditional put).
#[test]
fn racing_committers_on_s3_each_land_once() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::start(srv, &[]);
    let opts = common::s3_options(&proxy.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "append_unaware", &opts);
    let parts = ["2024-01-01", "a/b", "ü日"];
    let reports: Vec<PartitionReport> = rt.block_on(async {
        let runs = parts.iter().map(|v| {
            let uri = p.uri.clone();
            let opts = opts.clone();
            async move {
                let t = open(&uri, &opts).await?;
                drop_partitions(&t, &[spec("dt", v)], None, None, &RunControl::default()).await
            }
        });
        futures::future::join_all(runs)
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect()
    });
    let mut ids: Vec<i64> = reports
        .iter()
        .flat_map(|r| r.snapshot_ids.clone())
        .collect();
    ids.sort();
    assert_eq!(ids, vec![ids[0], ids[0] + 1, ids[0] + 2], "{reports:?}");
    let retries: u64 = reports.iter().map(|r| r.retries).sum();
    let stats = proxy.stats();
    let refused = stats["cond_put_status"]["412"].as_u64().unwrap_or(0);
    assert!(
        retries >= refused,
        "{retries} retries reported, {refused} conditional puts refused: {stats}"
    );
    let inspection = rt
        .block_on(inspect(
            Arc::new(Storage::open(&p.uri, &opts).unwrap()),
            &HashMap::new(),
        ))
        .unwrap();
    assert_eq!(inspection.latest_snapshot_id, Some(ids[2]));
    for f in &inspection.live_files {
        assert!(
            !f.starts_with("dt=2024-01-01/")
                && !f.starts_with("dt=a%2Fb/")
                && !f.starts_with("dt=ü日/"),
            "{f} still live"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Fault injection

/// Expiry through a proxy that answers some requests with 503 SlowDown, drops connections,
/// loses answers of requests the server applied, answers 503 after applying, and delays: with
/// object_store retries (storage.retry.*) the run succeeds and ends exactly where a fault-free
/// run ends, with the same report; pypaimon reads every remaining version the same.
#[test]
fn expire_through_faults_is_retried_to_the_fault_free_end_state() {
    let Some(srv) = server() else { return };
    let direct = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let reference = pypaimon_pair(&rt, "append_unaware", &direct);
    let faulty = pair_from(&rt, &reference.original, "append_unaware", &direct);
    let clean = expire(&rt, &reference.uri, &direct).unwrap();
    let end_state = common::s3_tree(&rt, &reference.uri, &direct);

    let proxy = common::FaultyProxy::start(
        srv,
        &[
            "--seed",
            "7",
            "--p-503",
            "0.08",
            "--p-drop",
            "0.04",
            "--p-lost",
            "0.04",
            "--p-503-after",
            "0.04",
            "--p-delay",
            "0.04",
            "--delay-ms",
            "50",
        ],
    );
    let opts = opts_for(
        &proxy.endpoint,
        &[
            ("storage.retry.max-retries", "10"),
            ("storage.retry.timeout", "60 s"),
        ],
    );
    let report = expire(&rt, &faulty.uri, &opts).expect("expire with retries");
    let stats = proxy.stats();
    eprintln!("faults injected: {}", stats["faults"]);
    assert!(
        total_faults(&stats) >= 3,
        "too few faults injected: {stats}"
    );
    assert_eq!(expire_summary(&report), expire_summary(&clean));
    assert_eq!(common::s3_tree(&rt, &faulty.uri, &direct), end_state);
    let again = expire(&rt, &faulty.uri, &opts).unwrap();
    assert_eq!(again.deletion.total_files(), 0);
    let (_dl, dir) = common::s3_download(&rt, &faulty.uri, &direct);
    let v = common::all_versions_many(&[reference.original.as_path(), dir.as_path()]);
    let expired = |k: &str| expired_key(k, &clean);
    assert_versions_kept("faulty", &v[&reference.original], &v[&dir], expired, false);
}

/// Expiry through faults with retries switched off: runs fail (cleanly: an error, never a
/// deletion of anything a remaining version needs), and rerunning until one succeeds ends
/// exactly where a fault-free run ends. Checked for several fault sequences.
#[test]
fn expire_through_faults_without_retries_fails_cleanly_and_converges() {
    let Some(srv) = server() else { return };
    let direct = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let reference = pypaimon_pair(&rt, "pk_changelog", &direct);
    let clean = expire(&rt, &reference.uri, &direct).unwrap();
    assert!(clean.deletion.total_files() > 5);
    let end_state = common::s3_tree(&rt, &reference.uri, &direct);
    let mut failures_total = 0;
    for seed in [1, 2] {
        let faulty = pair_from(&rt, &reference.original, "pk_changelog", &direct);
        let proxy = common::FaultyProxy::start(
            srv,
            &[
                "--seed",
                &seed.to_string(),
                "--p-503",
                "0.05",
                "--p-drop",
                "0.03",
                "--p-lost",
                "0.03",
                "--p-503-after",
                "0.03",
                "--max-faults",
                "6",
            ],
        );
        let opts = opts_for(&proxy.endpoint, &[("storage.retry.max-retries", "0")]);
        let mut failures = 0;
        let mut done = false;
        for _ in 0..20 {
            let r = expire(&rt, &faulty.uri, &opts);
            // Whatever happened, nothing the fault-free end state keeps is gone.
            let now = common::s3_tree(&rt, &faulty.uri, &direct);
            for k in end_state.keys().filter(|k| !k.ends_with("EARLIEST")) {
                assert!(now.contains_key(k), "seed {seed}: {k} deleted ({r:?})");
            }
            match r {
                Ok(rep) if rep.deletion.failed.is_empty() => {
                    done = true;
                    break;
                }
                Ok(rep) => {
                    failures += 1;
                    eprintln!(
                        "seed {seed}: run ok with failed deletes {:?}",
                        rep.deletion.failed
                    );
                }
                Err(e) => {
                    failures += 1;
                    eprintln!("seed {seed}: run failed: {e}");
                }
            }
        }
        assert!(done, "seed {seed}: no run succeeded");
        failures_total += failures;
        assert_eq!(
            common::s3_tree(&rt, &faulty.uri, &direct),
            end_state,
            "seed {seed}: reruns did not converge to the fault-free end state"
        );
        eprintln!(
            "seed {seed}: {failures} failed runs, faults {}",
            proxy.stats()["faults"]
        );
    }
    assert!(failures_total > 0, "no run failed: the faults did not bite");
}

/// A commit whose conditional PUT lands on the server but whose answer is lost (connection
/// closed): object_store retries the PUT, which now gets 412. The commit must not take its own
/// landed snapshot (or manifest) for a lost race: the table stays readable and the drop is in.
#[test]
fn commit_survives_a_lost_answer_to_its_conditional_put() {
    let Some(srv) = server() else { return };
    let direct = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    for target in [r"/snapshot/snapshot-\d+$", r"/manifest/manifest-list-"] {
        let p = pypaimon_pair(&rt, "pk_dynamic", &direct);
        let proxy = common::FaultyProxy::start(srv, &["--lose-cond-put", target]);
        let opts = common::s3_options(&proxy.endpoint);
        let r = drop_on(&rt, &p.uri, &opts, &[spec("p", "1")])
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let stats = proxy.stats();
        assert_eq!(stats["faults"]["lost_cond_put"], 1, "{target}: {stats}");
        let (_dl, dir) = common::s3_download(&rt, &p.uri, &direct);
        let latest = common::pypaimon_view(&dir, &[]);
        assert!(
            latest.get("error").is_none(),
            "{target}: table broken: {latest}"
        );
        assert_eq!(latest["snapshot_id"], r.snapshot_ids[0], "{target}: {r:?}");
        assert!(
            latest["live_files"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| !f.as_str().unwrap().starts_with("p=1/")),
            "{target}: {latest}"
        );
    }
}

/// The k-th batched delete (DeleteObjects) of an expiry fails, for every k, with no retries:
/// the run must not go on to delete the metadata (manifests, lists, snapshot files) through
/// which a rerun finds the files that were not deleted, so a rerun ends exactly where a
/// fault-free run ends (no file leaked for good), and nothing a remaining version needs is
/// ever gone.
#[test]
fn expire_with_a_failed_batched_delete_converges_on_rerun() {
    let Some(srv) = server() else { return };
    let direct = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let reference = pypaimon_pair(&rt, "pk_changelog", &direct);
    let counter = common::FaultyProxy::start(srv, &[]);
    let clean = expire(&rt, &reference.uri, &common::s3_options(&counter.endpoint)).unwrap();
    let batches = counter.stats()["delete_batches"].as_array().unwrap().len();
    assert!(batches >= 3, "{batches} delete requests");
    let end_state = common::s3_tree(&rt, &reference.uri, &direct);
    for k in 0..batches {
        let faulty = pair_from(&rt, &reference.original, "pk_changelog", &direct);
        let skip = k.to_string();
        let proxy = common::FaultyProxy::start(
            srv,
            &[
                "--only",
                r"^POST .*[?&]delete",
                "--skip",
                &skip,
                "--p-503",
                "1",
                "--max-faults",
                "1",
            ],
        );
        let opts = opts_for(&proxy.endpoint, &[("storage.retry.max-retries", "0")]);
        let first = expire(&rt, &faulty.uri, &opts);
        assert_eq!(proxy.stats()["faults"]["503"], 1, "k={k}");
        let now = common::s3_tree(&rt, &faulty.uri, &direct);
        for f in end_state.keys().filter(|f| !f.ends_with("EARLIEST")) {
            assert!(now.contains_key(f), "k={k}: {f} deleted ({first:?})");
        }
        let ok_first = matches!(&first, Ok(r) if r.deletion.failed.is_empty());
        assert!(
            !ok_first,
            "k={k}: a failed delete was not reported: {first:?}"
        );
        if k == 0 {
            // Stopped after deleting data files: every version not being expired reads as
            // before (pypaimon on the downloaded prefix).
            let (_dl, dir) = common::s3_download(&rt, &faulty.uri, &direct);
            let v = common::all_versions_many(&[reference.original.as_path(), dir.as_path()]);
            let expired = |key: &str| expired_key(key, &clean);
            assert_versions_kept("mid-way", &v[&reference.original], &v[&dir], expired, true);
        }
        let second = expire(&rt, &faulty.uri, &opts);
        assert!(second.is_ok(), "k={k}: rerun: {second:?}");
        assert_eq!(
            common::s3_tree(&rt, &faulty.uri, &direct),
            end_state,
            "k={k}: the rerun did not converge (first run: {first:?})"
        );
    }
}

/// A manifest that a kept version needs, missing on the object store, while the expired
/// versions leave data files to check (a primary-key table with compactions): protectors'
/// manifests are fetched ahead while the candidates are read, and an absent one must still
/// stop the run with an error and nothing deleted, as on a local disk.
#[test]
fn expire_with_a_kept_versions_manifest_missing_on_s3_deletes_nothing() {
    let Some(srv) = server() else { return };
    let opts = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "pk_changelog", &opts);
    let storage = Storage::open(&p.uri, &opts).unwrap();
    let manifest = rt.block_on(async {
        let t = open(&p.uri, &opts).await.unwrap();
        let latest = t.all_snapshots().await.unwrap().pop().expect("a snapshot");
        let metas = t
            .reader()
            .manifest_list(t.paths(), &latest.base_manifest_list)
            .await
            .unwrap();
        t.paths()
            .manifest(&metas.first().expect("a base manifest").file_name)
            .unwrap()
    });
    let removed = rt.block_on(storage.delete_files(vec![manifest.clone()], 1));
    assert!(removed.iter().all(|(_, r)| r.is_ok()), "{removed:?}");
    let before = common::s3_tree(&rt, &p.uri, &opts);

    let err = expire(&rt, &p.uri, &opts).expect_err("a kept version's manifest is missing");
    assert!(
        err.to_string().contains(manifest.name()),
        "the error names the missing manifest: {err}"
    );
    assert_eq!(
        common::s3_tree(&rt, &p.uri, &opts),
        before,
        "nothing may be deleted"
    );
}

/// A store that cannot create exclusively is refused for commits: with object_store's
/// conditional put switched off (`aws_conditional_put = disabled`, what an S3-compatible
/// service without `If-None-Match` support needs), drop partition fails with `Unsupported` on
/// its first exclusive create and leaves the table exactly as it was; reads still work.
#[test]
fn commit_is_refused_on_a_store_without_exclusive_create() {
    let Some(srv) = server() else { return };
    let direct = common::s3_options(&srv.endpoint);
    let no_create = opts_for(&srv.endpoint, &[("aws_conditional_put", "disabled")]);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "pk_dynamic", &direct);
    let before = common::s3_tree(&rt, &p.uri, &direct);
    let r = drop_on(&rt, &p.uri, &no_create, &[spec("p", "0")]);
    assert!(
        matches!(r, Err(paimon_cleanup::Error::Unsupported(_))),
        "{r:?}"
    );
    assert_eq!(common::s3_tree(&rt, &p.uri, &direct), before);
    let inspected = rt
        .block_on(inspect(
            Arc::new(Storage::open(&p.uri, &no_create).unwrap()),
            &HashMap::new(),
        ))
        .unwrap();
    assert!(!inspected.snapshots.is_empty());
}

/// The option names users already have: the same table, uploaded once, inspected through
/// `s3a://` with Hadoop S3A keys (`fs.s3a.endpoint` without a scheme plus
/// `fs.s3a.connection.ssl.enabled=false`, `fs.s3a.access.key`, `fs.s3a.secret.key`,
/// `fs.s3a.endpoint.region`, `fs.s3a.path.style.access`) and through `oss://` with Paimon's OSS
/// keys (`fs.oss.endpoint`, `fs.oss.accessKeyId`, `fs.oss.accessKeySecret`; path style, since
/// the loopback server cannot serve virtual-hosted names), reports what the local copy reports.
#[test]
fn hadoop_and_oss_option_keys_reach_the_s3_server() {
    let Some(srv) = server() else { return };
    let direct = common::s3_options(&srv.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "pk_fixed", &direct);
    let key = p.uri.strip_prefix("s3://").unwrap();
    let host = srv.endpoint.strip_prefix("http://").unwrap();
    let keys = |kv: &[(&str, &str)]| -> Opts {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let s3a = keys(&[
        ("fs.s3a.endpoint", host),
        ("fs.s3a.connection.ssl.enabled", "false"),
        ("fs.s3a.endpoint.region", "us-east-1"),
        ("fs.s3a.access.key", "test"),
        ("fs.s3a.secret.key", "test"),
        ("fs.s3a.path.style.access", "true"),
    ]);
    let oss = keys(&[
        ("fs.oss.endpoint", &srv.endpoint),
        ("fs.oss.accessKeyId", "test"),
        ("fs.oss.accessKeySecret", "test"),
        ("fs.oss.region", "us-east-1"),
        ("fs.s3a.path.style.access", "true"),
    ]);
    let local = rt
        .block_on(inspect(
            Arc::new(Storage::open(&local_uri(&p.local), &HashMap::new()).unwrap()),
            &HashMap::new(),
        ))
        .unwrap();
    for (uri, opts) in [
        (format!("s3a://{key}"), &s3a),
        (format!("oss://{key}"), &oss),
    ] {
        let mut remote = rt
            .block_on(inspect(
                Arc::new(Storage::open(&uri, opts).unwrap()),
                &HashMap::new(),
            ))
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        remote.table = local.table.clone();
        assert_eq!(remote, local, "{uri}");
    }
    // moto checks no signatures: what these runs prove is that the endpoint, region and
    // path-style keys were honoured (without them the client would go to AWS and fail).
}
