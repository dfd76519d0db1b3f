//! The Azure Blob Storage path against Azurite (the Azure Storage emulator, azurite@3.35.0,
//! installed by scripts/setup-azurite.sh and started once by this test binary through
//! `tests/py/azurite_server.py`; see `common::azurite_server`), on loopback.
//!
//! Tables are uploaded under `abfss://paimon@devstoreaccount1.dfs.core.windows.net/wh/...`
//! (Hadoop ABFS location and `fs.azure.account.key.<account>.dfs.core.windows.net`) or
//! `az://paimon/wh/...` (object_store's keys); inspect, snapshot expiry, orphan removal and
//! drop partition run there and must report the same as, and leave exactly the files of, the
//! same runs on a local copy. A counting proxy (`tests/py/faulty_proxy.py`, no faults) in front
//! of Azurite shows the List Blobs pages (markers), the Blob Batch deletes and the conditional
//! creates (`If-None-Match: *`).

// Built only with the `azure` feature (in the default set).
#![cfg(feature = "azure")]

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

/// Azure's List Blobs page size when the client sends no `maxresults` (object_store sends none).
const AZURE_PAGE: usize = 5000;
/// Blobs per Blob Batch request (the service limit; object_store chunks to it).
const AZURE_BATCH: u64 = 256;

fn server() -> Option<&'static common::LoopbackServer> {
    common::python()?;
    common::azurite_server()
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

/// What must agree between two expiry runs on different stores.
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

/// A table copied to a temp dir and uploaded under a fresh Azure prefix.
struct Pair {
    _tmp: tempfile::TempDir,
    local: PathBuf,
    uri: String,
}

fn upload(rt: &tokio::runtime::Runtime, local: &Path, uri: &str, opts: &Opts) {
    common::s3_upload(rt, local, uri, opts);
}

fn pypaimon_pair(rt: &tokio::runtime::Runtime, name: &str, uri: String, opts: &Opts) -> Pair {
    let (tmp, local, _) = common::pypaimon_table(name).expect("pypaimon table");
    upload(rt, &local, &uri, opts);
    Pair {
        _tmp: tmp,
        local,
        uri,
    }
}

fn java_pair(rt: &tokio::runtime::Runtime, rel: &str, uri: String, opts: &Opts) -> Option<Pair> {
    let src = common::fixtures_dir()?.join(rel);
    assert!(src.join("schema").is_dir(), "fixture {rel} missing");
    let (tmp, local) = common::copy_table(&src);
    upload(rt, &local, &uri, opts);
    Some(Pair {
        _tmp: tmp,
        local,
        uri,
    })
}

fn batches(stats: &serde_json::Value) -> Vec<u64> {
    stats["delete_batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------

/// The storage layer on Azurite: a listing that spans two List Blobs pages (more than 5000
/// blobs in one directory, and common prefixes), batched deletes in Blob Batch requests of at
/// most 256 (600 blobs), conditional create (`If-None-Match: *`) with one winner among racing writers,
/// names that need escaping.
#[test]
fn storage_on_azurite_paginates_batches_deletes_and_creates_exclusively() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let opts = common::azure_hadoop_options(&proxy.endpoint);
    let direct = common::azure_hadoop_options(&srv.endpoint);
    let rt = common::rt();
    let uri = common::abfss_table_uri("storage");
    let storage = Storage::open(&uri, &opts).unwrap();
    let uploader = Storage::open(&uri, &direct).unwrap();
    let root = storage.root().clone();
    const MANY: usize = AZURE_PAGE + 10;
    let t0 = std::time::Instant::now();
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
            .buffer_unordered(32)
            .collect()
            .await;
        for p in &puts {
            p.as_ref().unwrap();
        }
        eprintln!("uploaded {} blobs in {:?}", names.len(), t0.elapsed());

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
        let top = storage.list_dir(&root).await.unwrap();
        assert_eq!(top.dirs.len(), 21, "{:?}", top.dirs);
        assert!(top.files.is_empty());
        assert_eq!(storage.list_tree(&root).await.unwrap().len(), MANY + 20);
        let stats = proxy.stats();
        assert!(
            stats["list_continuations"].as_u64().unwrap() >= 2,
            "listings did not paginate: {stats}"
        );

        // Blob Batch deletes: Azurite takes ~20 ms per deleted blob on a loaded machine, so
        // 600 of them (3 batches) rather than all; the rest stay in the in-memory server.
        const DELETED: usize = 600;
        let locs: Vec<Location> = l.files[..DELETED]
            .iter()
            .map(|f| f.location.clone())
            .collect();
        let before = batches(&proxy.stats()).len();
        let t1 = std::time::Instant::now();
        let results = storage.delete_files(locs.clone(), 4).await;
        eprintln!("deleted {} blobs in {:?}", locs.len(), t1.elapsed());
        for (l, r) in &results {
            assert!(r.is_ok(), "{l}: {r:?}");
        }
        let sent: Vec<u64> = batches(&proxy.stats())[before..].to_vec();
        assert_eq!(
            sent.len(),
            DELETED.div_ceil(AZURE_BATCH as usize),
            "{sent:?}"
        );
        assert!(sent.iter().all(|n| *n <= AZURE_BATCH), "{sent:?}");
        assert_eq!(sent.iter().sum::<u64>(), DELETED as u64, "{sent:?}");
        let left = storage.list_dir(&root.join("bucket-0")).await.unwrap();
        assert_eq!(left.files.len(), MANY - DELETED);
        assert!(left.files.iter().all(|f| !locs.contains(&f.location)));
        let again = storage.delete_files(locs[..3].to_vec(), 1).await;
        assert!(again.iter().all(|(_, r)| r.is_ok()), "{again:?}");

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
        assert_eq!(stats["cond_put_status"]["409"], 1, "{stats}");
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

/// `inspect` through `abfss://` (Hadoop keys) and `az://` (object_store keys) reports exactly
/// what it reports for the same table on disk.
#[test]
fn inspect_on_azure_matches_local() {
    let Some(srv) = server() else { return };
    let hadoop = common::azure_hadoop_options(&srv.endpoint);
    let native = common::azure_native_options(&srv.endpoint);
    let rt = common::rt();
    let mut pairs: Vec<(String, Pair, &Opts)> = vec![
        (
            "pk_changelog".into(),
            pypaimon_pair(&rt, "pk_changelog", common::abfss_table_uri("i"), &hadoop),
            &hadoop,
        ),
        (
            "dv_table".into(),
            pypaimon_pair(&rt, "dv_table", common::az_table_uri("i"), &native),
            &native,
        ),
    ];
    if let Some(p) = java_pair(
        &rt,
        "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
        common::abfss_table_uri("java"),
        &hadoop,
    ) {
        pairs.push(("java branch table".into(), p, &hadoop));
    }
    for (name, p, opts) in &pairs {
        let local = rt
            .block_on(inspect(
                Arc::new(Storage::open(&local_uri(&p.local), &HashMap::new()).unwrap()),
                &HashMap::new(),
            ))
            .unwrap_or_else(|e| panic!("{name}: local inspect: {e}"));
        let mut remote = rt
            .block_on(inspect(
                Arc::new(Storage::open(&p.uri, opts).unwrap()),
                &HashMap::new(),
            ))
            .unwrap_or_else(|e| panic!("{name}: azure inspect: {e}"));
        assert_eq!(remote.table, Location::parse(&p.uri).unwrap().as_str());
        remote.table = local.table.clone();
        assert_eq!(remote, local, "{name}: inspect differs on azure");
        assert!(!local.snapshots.is_empty(), "{name}");
    }
}

/// Snapshot expiry through `abfss://` gives the same report as the same run on a local copy
/// and leaves exactly the same files; a second run deletes nothing.
#[test]
fn expire_snapshots_on_azure_matches_local() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let opts = common::azure_hadoop_options(&proxy.endpoint);
    let rt = common::rt();
    let mut pairs: Vec<(String, Pair)> = ["append_unaware", "pk_changelog", "dv_table"]
        .iter()
        .map(|n| {
            (
                n.to_string(),
                pypaimon_pair(&rt, n, common::abfss_table_uri(n), &opts),
            )
        })
        .collect();
    if let Some(p) = java_pair(
        &rt,
        "parquet/pk_09.db/pk_09",
        common::abfss_table_uri("pk_09"),
        &opts,
    ) {
        pairs.push(("java pk_09".into(), p));
    }
    for (name, p) in &pairs {
        let local = expire(&rt, &local_uri(&p.local), &HashMap::new())
            .unwrap_or_else(|e| panic!("{name}: local expire: {e}"));
        let remote =
            expire(&rt, &p.uri, &opts).unwrap_or_else(|e| panic!("{name}: azure expire: {e}"));
        assert!(local.snapshots_expired > 0, "{name}: nothing expired");
        assert_eq!(
            expire_summary(&remote),
            expire_summary(&local),
            "{name}: reports differ"
        );
        assert_eq!(
            common::s3_tree(&rt, &p.uri, &opts),
            common::tree(&p.local),
            "{name}: blobs left on azure differ from files left on disk"
        );
        let again = expire(&rt, &p.uri, &opts).unwrap();
        assert_eq!(
            again.deletion.total_files(),
            0,
            "{name}: second run deleted"
        );
    }
    let stats = proxy.stats();
    assert!(!batches(&stats).is_empty(), "{stats}");
}

/// Orphan removal through `az://`: 300 orphans in one bucket directory (deleted in Blob Batch
/// requests of at most 256), orphan manifests and a temp snapshot go, and nothing else; the
/// same run on a local copy deletes the same files and leaves the same tree.
#[test]
fn remove_orphan_files_on_azure_matches_local() {
    let Some(srv) = server() else { return };
    let direct = common::azure_native_options(&srv.endpoint);
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let opts = common::azure_native_options(&proxy.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "pk_fixed", common::az_table_uri("orphans"), &direct);
    let bucket_dir = "d=19723/bucket-0";
    assert!(p.local.join(bucket_dir).is_dir());
    const ORPHANS: usize = 300;
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
    upload(&rt, stage.path(), &p.uri, &direct);

    let run = |uri: &str, o: &Opts, cfg: &OrphanConfig| -> OrphanReport {
        rt.block_on(async {
            let t = open(uri, o).await?;
            remove_orphan_files(&t, cfg, &RunControl::default()).await
        })
        .unwrap_or_else(|e| panic!("{uri}: {e}"))
    };
    // Blob times are whole seconds: cut off past the uploads' second.
    std::thread::sleep(Duration::from_millis(1100));
    let cfg = OrphanConfig {
        older_than_ms: Some(chrono::Utc::now().timestamp_millis()),
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
    assert_eq!(deleted_paths(&remote.deletion), planted, "azure run");
    assert_eq!(deleted_paths(&local.deletion), planted, "local run");
    assert_eq!(remote.candidates, local.candidates);
    assert_eq!(remote.referenced, local.referenced);
    let sent = batches(&proxy.stats());
    assert!(sent.len() >= 2, "{sent:?}");
    assert!(sent.iter().all(|n| *n <= AZURE_BATCH), "{sent:?}");
    assert_eq!(sent.iter().sum::<u64>(), planted.len() as u64, "{sent:?}");
    let tree = common::s3_tree(&rt, &p.uri, &direct);
    assert_eq!(
        tree,
        common::tree(&p.local),
        "azure and local end states differ"
    );
    for j in kept_junk {
        assert!(tree.contains_key(j), "{j} deleted");
    }
    assert_eq!(run(&p.uri, &direct, &cfg).deletion.total_files(), 0);
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

/// Drop partition through `abfss://`: the OVERWRITE commit is published with conditional
/// creates (`If-None-Match: *`), reports the same as on a local copy, and leaves the same
/// files (names of new metadata files are random, so they are compared by directory and
/// count); pypaimon reads the same rows at every version of the downloaded prefix.
#[test]
fn drop_partitions_on_azure_matches_local() {
    let Some(srv) = server() else { return };
    let proxy = common::FaultyProxy::in_front_of(srv, &[]);
    let opts = common::azure_hadoop_options(&proxy.endpoint);
    let rt = common::rt();
    let p = pypaimon_pair(&rt, "pk_dynamic", common::abfss_table_uri("drop"), &opts);
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
    assert!(stats["cond_puts"].as_u64().unwrap() >= 4, "{stats}");
    assert_eq!(
        stats["cond_put_status"]["201"].as_u64(),
        stats["cond_puts"].as_u64(),
        "{stats}"
    );
    let shape = |t: BTreeMap<String, u64>| -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for k in t.keys() {
            let dir = k.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            *m.entry(dir).or_insert(0) += 1;
        }
        m
    };
    let remote_tree = common::s3_tree(&rt, &p.uri, &opts);
    let local_tree = common::tree(&p.local);
    assert_eq!(shape(remote_tree.clone()), shape(local_tree.clone()));
    let data = |t: &BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        t.iter()
            .filter(|(k, _)| {
                !k.starts_with("manifest/")
                    && !k.starts_with("snapshot/")
                    && !k.starts_with("index/")
            })
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    assert_eq!(data(&remote_tree), data(&local_tree));
    let (_dl, dir) = common::s3_download(&rt, &p.uri, &opts);
    let views = common::all_versions_many(&[p.local.as_path(), dir.as_path()]);
    let (l, r) = (&views[&p.local], &views[&dir]);
    assert_eq!(l.keys().collect::<Vec<_>>(), r.keys().collect::<Vec<_>>());
    for (k, v) in l {
        assert!(v.get("error").is_none(), "{k}: {v}");
        assert_eq!(v["row_digest"], r[k]["row_digest"], "{k}");
        assert_eq!(v["live_files"], r[k]["live_files"], "{k}");
    }
}
