//! Microbenchmark of reading and decoding a table's metadata (issue 19): every snapshot, manifest
//! list, manifest and index manifest of the table at the given path, read through the crate's
//! storage (`Storage::get_many_then`) and decoded with the crate's decoders, one pass per step,
//! timed by the process's CPU time. Usage: `read_decode <table dir> [rounds] [threads]`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use paimon_cleanup::spec::manifest;
use paimon_cleanup::spec::snapshot::VersionRefs;
use paimon_cleanup::storage::{Location, Storage};

/// User plus system CPU seconds of the process so far (from /proc, 10 ms resolution).
fn cpu_s() -> f64 {
    let (u, s) = proc_times();
    u + s
}

fn proc_times() -> (f64, f64) {
    let t = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = t.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = 100.0;
    let ut: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    let st: f64 = f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    (ut / tick, st / tick)
}

type Decode = fn(&[u8], &str) -> u64;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let rounds: usize = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(3);
    let threads: usize = args.get(3).and_then(|v| v.parse().ok()).unwrap_or(2);
    let only: Option<&str> = args.get(4).map(String::as_str);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(threads)
        .enable_all()
        .build()
        .unwrap();
    let root = dir.canonicalize().unwrap();
    let storage = Storage::open(root.to_str().unwrap(), &HashMap::new()).unwrap();
    let mut groups: Vec<(&str, Vec<Location>, Decode)> = Vec::new();
    let names = |sub: &str, prefix: &str| -> Vec<Location> {
        let mut v: Vec<Location> = std::fs::read_dir(root.join(sub))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().into_string().unwrap())
            .filter(|n| n.starts_with(prefix))
            .map(|n| Location::parse(root.join(sub).join(n).to_str().unwrap()).unwrap())
            .collect();
        v.sort();
        v
    };
    let lists = names("manifest", "manifest-list-");
    let mut manifests = names("manifest", "manifest-");
    manifests.retain(|m| !m.as_str().contains("manifest-list-"));
    let index = names("manifest", "index-manifest-");
    let snapshots: Vec<Location> = names("snapshot", "snapshot-");
    groups.push(("snapshot refs", snapshots, |b, p| {
        VersionRefs::parse(b, p)
            .map(|r| r.manifest_lists().count() as u64)
            .unwrap_or(0)
    }));
    groups.push(("manifest lists", lists, |b, p| {
        manifest::decode_manifest_list(b, p).map_or(0, |v| v.len() as u64)
    }));
    groups.push(("manifests: locators", manifests.clone(), |b, p| {
        let mut n = 0;
        manifest::for_each_file_locator(b, p, |_| {
            n += 1;
            Ok(())
        })
        .map_or(0, |()| n)
    }));
    groups.push(("manifests: locating entries", manifests.clone(), |b, p| {
        let mut n = 0;
        manifest::for_each_manifest_file(b, p, |_| {
            n += 1;
            Ok(())
        })
        .map_or(0, |()| n)
    }));
    groups.push(("manifests: read only", manifests, |b, _| b.len() as u64));
    groups.push(("index manifests", index, |b, p| {
        manifest::decode_index_manifest(b, p).map_or(0, |v| v.len() as u64)
    }));
    for (name, locs, decode) in &groups {
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let mut best = f64::MAX;
        let mut wall_best = f64::MAX;
        let mut count = 0;
        for _ in 0..rounds {
            let total = Arc::new(AtomicU64::new(0));
            let t = total.clone();
            let decode = *decode;
            let c0 = cpu_s();
            let w0 = std::time::Instant::now();
            rt.block_on(async {
                let mut s = storage.get_many_then(locs, threads, move |i, bytes| {
                    let _ = i;
                    t.fetch_add(decode(&bytes, "x"), Ordering::Relaxed);
                    Ok(())
                });
                while let Some((_, r)) = s.next().await {
                    r.unwrap();
                }
            });
            best = best.min(cpu_s() - c0);
            wall_best = wall_best.min(w0.elapsed().as_secs_f64());
            count = total.load(Ordering::Relaxed);
        }
        println!(
            "{name:30} {:6} files {:9} items  cpu {:7.3} s  wall {:7.3} s  ({:.2} us cpu/file)",
            locs.len(),
            count,
            best,
            wall_best,
            best * 1e6 / locs.len() as f64
        );
    }
}
