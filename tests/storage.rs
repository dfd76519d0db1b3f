//! Storage layer against a real local directory (tempfile) and the in-memory object store.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use paimon_cleanup::storage::{Location, Storage};
use paimon_cleanup::Error;

/// A storage under test plus what keeps it alive.
struct Fixture {
    storage: Storage,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    fn root(&self) -> &Location {
        self.storage.root()
    }
    fn at(&self, rel: &str) -> Location {
        self.root().join(rel)
    }
}

fn local() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = Location::from_local_path(&dir.path().join("db.db").join("t")).unwrap();
    Fixture {
        storage: Storage::open(root.as_str(), &HashMap::new()).unwrap(),
        _dir: Some(dir),
    }
}

fn memory() -> Fixture {
    let root = format!("memory:///{}/db.db/t", uuid::Uuid::new_v4());
    Fixture {
        storage: Storage::open(&root, &HashMap::new()).unwrap(),
        _dir: None,
    }
}

fn both() -> Vec<(&'static str, Fixture)> {
    vec![("local", local()), ("memory", memory())]
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

async fn put(f: &Fixture, rel: &str, data: &str) -> Location {
    let l = f.at(rel);
    f.storage
        .put(&l, Bytes::copy_from_slice(data.as_bytes()))
        .await
        .unwrap();
    l
}

fn names(files: &[paimon_cleanup::storage::FileStatus]) -> Vec<String> {
    files
        .iter()
        .map(|f| f.location.name().to_string())
        .collect()
}

#[tokio::test]
async fn list_one_dir() {
    for (kind, f) in both() {
        put(&f, "snapshot/snapshot-1", "{}").await;
        put(&f, "snapshot/snapshot-2", "{}").await;
        put(&f, "snapshot/EARLIEST", "1").await;
        put(&f, "snapshot/.snapshot-3.0b1c.tmp", "x").await;
        put(&f, "snapshot/sub/inner", "x").await;
        let l = f.storage.list_dir(&f.at("snapshot")).await.unwrap();
        assert_eq!(
            names(&l.files),
            vec![
                ".snapshot-3.0b1c.tmp",
                "EARLIEST",
                "snapshot-1",
                "snapshot-2"
            ],
            "{kind}"
        );
        assert_eq!(l.dirs, vec![f.at("snapshot/sub")], "{kind}");
        assert_eq!(l.files[1].size, 1, "{kind}");
        assert_eq!(l.files[1].location, f.at("snapshot/EARLIEST"), "{kind}");
        // A missing directory lists as empty.
        let empty = f.storage.list_dir(&f.at("nope/nothing")).await.unwrap();
        assert!(empty.files.is_empty() && empty.dirs.is_empty(), "{kind}");
        // The table root lists its sub-directories.
        let top = f.storage.list_dir(f.root()).await.unwrap();
        assert_eq!(top.dirs, vec![f.at("snapshot")], "{kind}");
    }
}

#[tokio::test]
async fn list_tree_recursive() {
    for (kind, f) in both() {
        let want = [
            "dt=1/bucket-0/data-1.orc",
            "dt=1/bucket-0/data-2.orc",
            "dt=1/bucket-1/data-3.orc",
            "dt=2/bucket-0/data-4.orc",
            "dt=2/_SUCCESS",
            "manifest/manifest-x-0",
        ];
        for rel in want {
            put(&f, rel, "d").await;
        }
        let all = f.storage.list_tree(f.root()).await.unwrap();
        let got: Vec<Location> = all.iter().map(|s| s.location.clone()).collect();
        let mut expect: Vec<Location> = want.iter().map(|r| f.at(r)).collect();
        expect.sort();
        assert_eq!(got, expect, "{kind}");
        let sub = f.storage.list_tree(&f.at("dt=1")).await.unwrap();
        assert_eq!(sub.len(), 3, "{kind}");
        assert!(f
            .storage
            .list_tree(&f.at("missing"))
            .await
            .unwrap()
            .is_empty());
    }
}

#[tokio::test]
async fn list_many_dirs_in_parallel() {
    for (kind, f) in both() {
        let mut dirs = Vec::new();
        for i in 0..20 {
            for j in 0..=i % 3 {
                put(&f, &format!("p={i}/bucket-0/data-{j}"), "d").await;
            }
            dirs.push(f.at(&format!("p={i}/bucket-0")));
        }
        dirs.push(f.at("p=missing/bucket-0"));
        let listed = f.storage.list_dirs(&dirs, 4).await.unwrap();
        assert_eq!(listed.len(), 21, "{kind}");
        for (i, (d, l)) in listed.iter().enumerate() {
            assert_eq!(d, &dirs[i], "{kind}: order follows input");
            let want = if i == 20 { 0 } else { i % 3 + 1 };
            assert_eq!(l.files.len(), want, "{kind} {d}");
        }
        // Concurrency 0 is taken as 1.
        assert_eq!(f.storage.list_dirs(&dirs, 0).await.unwrap().len(), 21);
    }
}

#[tokio::test]
async fn head_exists_and_mtime() {
    for (kind, f) in both() {
        let before = now_ms();
        let l = put(&f, "schema/schema-0", "hello").await;
        let after = now_ms();
        let st = f.storage.head(&l).await.unwrap().expect("present");
        assert_eq!(st.size, 5, "{kind}");
        assert_eq!(st.location, l, "{kind}");
        assert!(
            st.last_modified_ms >= before - 2000 && st.last_modified_ms <= after + 2000,
            "{kind}: mtime {} not in [{before}, {after}]",
            st.last_modified_ms
        );
        assert!(f.storage.exists(&l).await.unwrap(), "{kind}");
        let missing = f.at("schema/schema-9");
        assert_eq!(f.storage.head(&missing).await.unwrap(), None, "{kind}");
        assert!(!f.storage.exists(&missing).await.unwrap(), "{kind}");
        // A directory is not a file.
        assert_eq!(
            f.storage.head(&f.at("schema")).await.unwrap(),
            None,
            "{kind}"
        );
    }
}

#[tokio::test]
async fn local_mtime_is_the_file_mtime() {
    let f = local();
    let l = put(&f, "manifest/manifest-old-0", "x").await;
    let old = UNIX_EPOCH + Duration::from_millis(1_600_000_000_123);
    std::fs::File::options()
        .write(true)
        .open(l.local_path().unwrap())
        .unwrap()
        .set_modified(old)
        .unwrap();
    let st = f.storage.head(&l).await.unwrap().unwrap();
    assert_eq!(st.last_modified_ms, 1_600_000_000_123);
    let listed = f.storage.list_dir(&f.at("manifest")).await.unwrap();
    assert_eq!(listed.files[0].last_modified_ms, 1_600_000_000_123);
}

#[tokio::test]
async fn get_and_not_found() {
    for (kind, f) in both() {
        let l = put(&f, "snapshot/LATEST", "7").await;
        assert_eq!(f.storage.get(&l).await.unwrap(), Bytes::from_static(b"7"));
        let err = f
            .storage
            .get(&f.at("snapshot/snapshot-404"))
            .await
            .unwrap_err();
        assert!(err.is_not_found(), "{kind}: {err}");
        // Under a missing directory too.
        let err = f.storage.get(&f.at("no/such/dir/x")).await.unwrap_err();
        assert!(err.is_not_found(), "{kind}: {err}");
    }
}

#[tokio::test]
async fn put_overwrites_atomically() {
    for (kind, f) in both() {
        let l = put(&f, "snapshot/LATEST", "1").await;
        put(&f, "snapshot/LATEST", "22").await;
        assert_eq!(f.storage.get(&l).await.unwrap(), Bytes::from_static(b"22"));
        // No temp file is left behind.
        let listing = f.storage.list_dir(&f.at("snapshot")).await.unwrap();
        assert_eq!(names(&listing.files), vec!["LATEST"], "{kind}");
    }
}

#[tokio::test]
async fn put_if_absent_twice() {
    for (kind, f) in both() {
        let l = f.at("snapshot/snapshot-1");
        assert!(f
            .storage
            .put_if_absent(&l, Bytes::from_static(b"first"))
            .await
            .unwrap());
        assert!(
            !f.storage
                .put_if_absent(&l, Bytes::from_static(b"second"))
                .await
                .unwrap(),
            "{kind}"
        );
        assert_eq!(
            f.storage.get(&l).await.unwrap(),
            Bytes::from_static(b"first")
        );
        let listing = f.storage.list_dir(&f.at("snapshot")).await.unwrap();
        assert_eq!(
            names(&listing.files),
            vec!["snapshot-1"],
            "{kind}: no temp left"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_put_if_absent_has_one_winner() {
    for (kind, f) in both() {
        let storage = Arc::new(f.storage);
        for round in 0..5 {
            let target = storage.root().join(&format!("snapshot/snapshot-{round}"));
            let tasks: Vec<_> = (0..8)
                .map(|i| {
                    let s = storage.clone();
                    let t = target.clone();
                    tokio::spawn(async move {
                        let won = s
                            .put_if_absent(&t, Bytes::from(format!("writer-{i}")))
                            .await
                            .unwrap();
                        (i, won)
                    })
                })
                .collect();
            let mut winners = Vec::new();
            for t in tasks {
                let (i, won) = t.await.unwrap();
                if won {
                    winners.push(i);
                }
            }
            assert_eq!(winners.len(), 1, "{kind} round {round}: {winners:?}");
            let content = storage.get(&target).await.unwrap();
            assert_eq!(
                content,
                Bytes::from(format!("writer-{}", winners[0])),
                "{kind}"
            );
        }
        let listing = storage
            .list_dir(&storage.root().join("snapshot"))
            .await
            .unwrap();
        assert_eq!(listing.files.len(), 5, "{kind}: no temp files left");
    }
}

#[tokio::test]
async fn batch_delete_is_idempotent_and_ordered() {
    for (kind, f) in both() {
        let a = put(&f, "dt=1/bucket-0/data-a.orc", "a").await;
        let b = put(&f, "dt=1/bucket-0/data-b.orc", "b").await;
        let c = put(&f, "manifest/manifest-c-0", "c").await;
        let missing = f.at("dt=1/bucket-0/data-gone.orc");
        let missing_dir = f.at("dt=9/bucket-0/data-gone.orc");
        let input = vec![
            a.clone(),
            missing.clone(),
            b.clone(),
            missing_dir.clone(),
            c.clone(),
        ];
        let res = f.storage.delete_files(input.clone(), 3).await;
        assert_eq!(res.len(), 5);
        for ((l, r), want) in res.iter().zip(&input) {
            assert_eq!(l, want, "{kind}: input order");
            assert!(r.is_ok(), "{kind}: {l}: {r:?}");
        }
        for l in [&a, &b, &c] {
            assert!(!f.storage.exists(l).await.unwrap(), "{kind}: {l}");
        }
        // Again: everything is already gone, still Ok.
        let res = f.storage.delete_files(input, 0).await;
        assert!(res.iter().all(|(_, r)| r.is_ok()), "{kind}");
        // Directories survive file deletion.
        assert!(f.storage.list_dir(&f.at("dt=1")).await.unwrap().dirs.len() <= 1);
        assert!(f.storage.delete_files(Vec::new(), 4).await.is_empty());
    }
}

#[tokio::test]
async fn batch_delete_many_objects_in_chunks() {
    let f = memory();
    let mut locs = Vec::new();
    for i in 0..2500 {
        locs.push(put(&f, &format!("manifest/manifest-{i}"), "m").await);
    }
    let keep = put(&f, "manifest-keep/x", "k").await;
    let res = f.storage.delete_files(locs.clone(), 4).await;
    assert_eq!(res.len(), 2500);
    assert!(res.iter().all(|(_, r)| r.is_ok()));
    for (i, (l, _)) in res.iter().enumerate() {
        assert_eq!(l, &locs[i]);
    }
    assert!(f
        .storage
        .list_dir(&f.at("manifest"))
        .await
        .unwrap()
        .files
        .is_empty());
    assert!(f.storage.exists(&keep).await.unwrap());
}

#[tokio::test]
async fn guard_refuses_before_deleting() {
    for (kind, f) in both() {
        let inside = put(&f, "dt=1/bucket-0/data-1.orc", "x").await;
        // A sibling table sharing the root's name as a prefix, and the parent directory.
        let sibling_root = f.root().parent().unwrap().join("t2");
        let sibling_storage = Storage::open(sibling_root.as_str(), &HashMap::new()).unwrap();
        let sibling = sibling_root.join("dt=1/bucket-0/data-1.orc");
        sibling_storage
            .put(&sibling, Bytes::from_static(b"s"))
            .await
            .unwrap();
        let prefix_sibling = Location::parse(&format!("{}x/data", f.root())).unwrap();
        let traversal = f.root().join("../t2/dt=1/bucket-0/data-1.orc");
        assert_eq!(traversal, sibling, "{kind}");
        let other_scheme = if f.root().is_local() {
            Location::parse(&format!("memory://{}", f.root().path()))
                .unwrap()
                .join("x")
        } else {
            Location::parse(&format!("file://{}", f.root().path()))
                .unwrap()
                .join("x")
        };
        let refused = vec![
            sibling.clone(),
            f.root().clone(),
            prefix_sibling,
            traversal,
            other_scheme,
            f.root().parent().unwrap(),
        ];
        let mut input = refused.clone();
        input.push(inside.clone());
        let res = f.storage.delete_files(input, 4).await;
        for (l, r) in &res[..refused.len()] {
            assert!(
                matches!(r, Err(Error::PathRefused { .. })),
                "{kind}: {l} gave {r:?}"
            );
        }
        assert!(res[refused.len()].1.is_ok(), "{kind}");
        assert!(!f.storage.exists(&inside).await.unwrap(), "{kind}");
        assert!(
            sibling_storage.exists(&sibling).await.unwrap(),
            "{kind}: sibling survived"
        );
        // Writes obey the same guard.
        let err = f
            .storage
            .put(&sibling, Bytes::from_static(b"evil"))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::PathRefused { .. }), "{kind}");
        let err = f
            .storage
            .put_if_absent(&f.root().join("../t3/x"), Bytes::new())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::PathRefused { .. }), "{kind}");
        // And directory removal.
        let err = f.storage.delete_dir_if_empty(f.root()).await.unwrap_err();
        assert!(matches!(err, Error::PathRefused { .. }), "{kind}");
        let err = f
            .storage
            .delete_dir_if_empty(&sibling_root.join("dt=1"))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::PathRefused { .. }), "{kind}");
    }
}

#[tokio::test]
async fn delete_never_removes_a_directory() {
    let f = local();
    put(&f, "dt=1/bucket-0/data-1.orc", "x").await;
    let dir = f.at("dt=1/bucket-0");
    let res = f.storage.delete_files(vec![dir.clone()], 1).await;
    assert!(res[0].1.is_err());
    assert!(dir.local_path().unwrap().is_dir());
}

#[tokio::test]
async fn delete_dir_if_empty_local() {
    let f = local();
    let file = put(&f, "dt=1/bucket-0/data-1.orc", "x").await;
    let bucket = f.at("dt=1/bucket-0");
    let partition = f.at("dt=1");
    assert!(!f.storage.delete_dir_if_empty(&bucket).await.unwrap());
    assert!(!f.storage.delete_dir_if_empty(&partition).await.unwrap());
    let res = f.storage.delete_files(vec![file], 1).await;
    assert!(res[0].1.is_ok());
    assert!(f.storage.delete_dir_if_empty(&bucket).await.unwrap());
    assert!(!bucket.local_path().unwrap().exists());
    assert!(f.storage.delete_dir_if_empty(&partition).await.unwrap());
    // Already gone.
    assert!(!f.storage.delete_dir_if_empty(&partition).await.unwrap());
    // The table root itself is never removed, even when empty.
    assert!(f.root().local_path().unwrap().is_dir());
    assert!(matches!(
        f.storage.delete_dir_if_empty(f.root()).await,
        Err(Error::PathRefused { .. })
    ));
    // A file is not a directory.
    let file = put(&f, "x/file", "x").await;
    assert!(f.storage.delete_dir_if_empty(&file).await.is_err());
    assert!(file.local_path().unwrap().exists());
}

#[tokio::test]
async fn delete_dir_if_empty_object_store() {
    let f = memory();
    put(&f, "dt=1/bucket-0/data-1.orc", "x").await;
    assert!(!f
        .storage
        .delete_dir_if_empty(&f.at("dt=1/bucket-0"))
        .await
        .unwrap());
    assert!(!f.storage.delete_dir_if_empty(&f.at("empty")).await.unwrap());
    assert!(f.storage.delete_dir_if_empty(f.root()).await.is_err());
}

#[tokio::test]
async fn special_names_round_trip() {
    let rels = [
        "dt=a%2Fb/bucket-0/data-1.orc",
        "dt=__DEFAULT_PARTITION__/bucket-0/data 2.orc",
        "k=v w/bucket-0/dätä-ü-雪.parquet",
        "k=%25%3D/bucket-0/.data-3.orc.index",
        "tag/tag-2024-01-01 10",
    ];
    for (kind, f) in both() {
        for rel in rels {
            let l = put(&f, rel, rel).await;
            assert_eq!(l.as_str(), format!("{}/{rel}", f.root()), "{kind}");
            let parent = l.parent().unwrap();
            let listing = f.storage.list_dir(&parent).await.unwrap();
            let names = names(&listing.files);
            assert!(names.contains(&l.name().to_string()), "{kind}: {names:?}");
            assert_eq!(f.storage.get(&l).await.unwrap(), Bytes::from(rel), "{kind}");
        }
        let top: HashSet<String> = f
            .storage
            .list_dir(f.root())
            .await
            .unwrap()
            .dirs
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        let want: HashSet<String> = [
            "dt=a%2Fb",
            "dt=__DEFAULT_PARTITION__",
            "k=v w",
            "k=%25%3D",
            "tag",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(top, want, "{kind}");
        let tree = f.storage.list_tree(f.root()).await.unwrap();
        assert_eq!(tree.len(), rels.len(), "{kind}");
        let res = f
            .storage
            .delete_files(tree.into_iter().map(|s| s.location).collect(), 2)
            .await;
        assert!(res.iter().all(|(_, r)| r.is_ok()), "{kind}: {res:?}");
        assert!(
            f.storage.list_tree(f.root()).await.unwrap().is_empty(),
            "{kind}"
        );
    }
}

#[tokio::test]
async fn local_names_are_not_encoded_on_disk() {
    let f = local();
    put(&f, "dt=a%2Fb/bucket-0/data 1 ü.orc", "x").await;
    let on_disk = f
        .root()
        .local_path()
        .unwrap()
        .join("dt=a%2Fb")
        .join("bucket-0")
        .join("data 1 ü.orc");
    assert!(on_disk.is_file());
    // Files created outside the library are listed exactly, hidden ones included.
    let dir = f.root().local_path().unwrap().join("snapshot");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".snapshot-7.3f2a-b1.tmp"), "t").unwrap();
    std::fs::write(dir.join("snap%20shot"), "t").unwrap();
    let l = f.storage.list_dir(&f.at("snapshot")).await.unwrap();
    assert_eq!(
        names(&l.files),
        vec![".snapshot-7.3f2a-b1.tmp", "snap%20shot"]
    );
}

#[tokio::test]
async fn memory_keys_keep_percent_exactly() {
    use object_store::path::Path;
    use object_store::ObjectStore;
    let store = Arc::new(object_store::memory::InMemory::new());
    let root = format!("memory://pct-{}/w/t", uuid::Uuid::new_v4().simple());
    let storage = Storage::open(&root, &HashMap::new()).unwrap();
    storage
        .set_object_store(storage.root(), store.clone())
        .unwrap();
    let l = storage.root().join("dt=a%2Fb/bucket-0/data-1.orc");
    storage.put(&l, Bytes::from_static(b"x")).await.unwrap();
    // Stored under the raw key, not the percent-encoded one.
    store
        .head(&Path::parse("w/t/dt=a%2Fb/bucket-0/data-1.orc").unwrap())
        .await
        .unwrap();
    assert!(store
        .head(&Path::parse("w/t/dt=a%252Fb/bucket-0/data-1.orc").unwrap())
        .await
        .is_err());
    // An object written by someone else under a raw '%' key is listed exactly.
    store
        .put(&Path::parse("w/t/dt=%25/x y").unwrap(), "y".into())
        .await
        .unwrap();
    let listing = storage
        .list_dir(&storage.root().join("dt=%25"))
        .await
        .unwrap();
    assert_eq!(listing.files[0].location, storage.root().join("dt=%25/x y"));
    assert!(storage
        .set_object_store(&Location::parse("/x").unwrap(), store)
        .is_err());
}

#[tokio::test]
async fn memory_stores_are_shared_between_opens() {
    let root = format!("memory:///shared-{}/t", uuid::Uuid::new_v4());
    let a = Storage::open(&root, &HashMap::new()).unwrap();
    let b = Storage::open(&root, &HashMap::new()).unwrap();
    let l = a.root().join("snapshot/LATEST");
    a.put(&l, Bytes::from_static(b"3")).await.unwrap();
    assert_eq!(b.get(&l).await.unwrap(), Bytes::from_static(b"3"));
}

#[tokio::test]
async fn external_roots_on_another_store() {
    // Local table with external data on another local directory, written as Paimon does.
    let f = local();
    let ext_dir = tempfile::tempdir().unwrap();
    let ext_path = ext_dir.path().join("external");
    let ext_file = Location::parse(&format!(
        "FILE:{}/f1=10/bucket-0/data-x.parquet",
        ext_path.display()
    ))
    .unwrap();
    std::fs::create_dir_all(ext_file.parent().unwrap().local_path().unwrap()).unwrap();
    std::fs::write(ext_file.local_path().unwrap(), "d").unwrap();
    let res = f.storage.delete_files(vec![ext_file.clone()], 1).await;
    assert!(matches!(res[0].1, Err(Error::PathRefused { .. })));
    assert!(ext_file.local_path().unwrap().exists());

    let mut storage = f.storage;
    storage.add_delete_root(Location::from_local_path(&ext_path).unwrap());
    let res = storage.delete_files(vec![ext_file.clone()], 1).await;
    assert!(res[0].1.is_ok(), "{:?}", res[0].1);
    assert!(!ext_file.local_path().unwrap().exists());

    // Memory table with external data on another memory "bucket" (a lazily opened store).
    let id = uuid::Uuid::new_v4().simple().to_string();
    let mut m = Storage::open(&format!("memory://{id}-a/w/t"), &HashMap::new()).unwrap();
    let ext_root = Location::parse(&format!("memory://{id}-b/ext")).unwrap();
    let data = ext_root.join("f1=10/bucket-0/data-y.parquet");
    m.add_delete_root(ext_root.clone());
    m.put(&data, Bytes::from_static(b"y")).await.unwrap();
    assert_eq!(
        m.list_dir(&data.parent().unwrap())
            .await
            .unwrap()
            .files
            .len(),
        1
    );
    // Same key on the table's own store is a different object.
    let same_key_other_store = Location::parse(&format!(
        "memory://{id}-a/ext/f1=10/bucket-0/data-y.parquet"
    ))
    .unwrap();
    assert!(!m.exists(&same_key_other_store).await.unwrap());
    let res = m.delete_files(vec![data.clone()], 1).await;
    assert!(res[0].1.is_ok());
    assert!(!m.exists(&data).await.unwrap());
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_cannot_lead_deletes_outside() {
    let f = local();
    put(&f, "dt=1/bucket-0/data-1.orc", "x").await;
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::create_dir(outside.path().join("emptydir")).unwrap();
    let root_path = f.root().local_path().unwrap().to_path_buf();
    std::os::unix::fs::symlink(outside.path(), root_path.join("link")).unwrap();
    std::os::unix::fs::symlink(&victim, root_path.join("dt=1/bucket-0/file-link")).unwrap();

    // The symlinked directory is not listed (so never walked); a file symlink is.
    let top = f.storage.list_dir(f.root()).await.unwrap();
    assert_eq!(top.dirs, vec![f.at("dt=1")]);
    let tree = f.storage.list_tree(f.root()).await.unwrap();
    assert_eq!(names(&tree), vec!["data-1.orc", "file-link"]);

    // Deleting through the directory symlink is refused.
    let res = f.storage.delete_files(vec![f.at("link/victim")], 1).await;
    assert!(
        matches!(res[0].1, Err(Error::PathRefused { .. })),
        "{:?}",
        res[0].1
    );
    assert!(victim.exists());
    assert!(matches!(
        f.storage.delete_dir_if_empty(&f.at("link/emptydir")).await,
        Err(Error::PathRefused { .. })
    ));
    assert!(outside.path().join("emptydir").exists());
    // In one batch (one group), each file is judged by its own directory: the file behind the
    // symlink is refused, the plain one goes, one in a missing directory counts as deleted.
    let res = f
        .storage
        .delete_files(
            vec![
                f.at("link/victim"),
                f.at("dt=1/bucket-0/data-1.orc"),
                f.at("dt=2/bucket-0/data-9.orc"),
            ],
            1,
        )
        .await;
    assert!(
        matches!(res[0].1, Err(Error::PathRefused { .. })),
        "{:?}",
        res[0].1
    );
    assert!(res[1].1.is_ok() && res[2].1.is_ok(), "{res:?}");
    assert!(victim.exists());
    assert!(!root_path.join("dt=1/bucket-0/data-1.orc").exists());
    // Deleting a file symlink removes the link only.
    let res = f
        .storage
        .delete_files(vec![f.at("dt=1/bucket-0/file-link")], 1)
        .await;
    assert!(res[0].1.is_ok());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}
