//! The GCS path against gcp-storage-emulator (pinned by scripts/setup-python.sh, started once by
//! this test binary through `tests/py/gcs_server.py`; see `common::gcs_server`), on loopback,
//! reached through `gs://` with the Hadoop key `fs.gs.auth.service.account.json.keyfile` (a
//! service-account file carrying `gcs_base_url` and `disable_oauth`, object_store's way to a
//! custom GCS endpoint).
//!
//! object_store's GCS client speaks the GCS **XML** API. The emulator serves the JSON API and,
//! of the XML API, only object PUT and GET, and even those answer without the `ETag` (and GET
//! without `Last-Modified`) that object_store requires of every GCS answer. So no table
//! operation can run against it. What runs here: the client is built from the Hadoop keys and
//! its PUT reaches the emulator with the right bucket, name and bytes (read back with a plain
//! HTTP GET) before failing on the missing ETag; and a probe that pins down, with plain HTTP
//! requests shaped like object_store's, exactly what the emulator lacks. If a later emulator
//! closes a gap the probe fails, and the table operations can be added here like in
//! tests/azure.rs. docs/storage.md records the gap.

// Built only with the `gcs` feature (in the default set).
#![cfg(feature = "gcs")]

mod common;

use std::collections::HashMap;

use paimon_cleanup::storage::Storage;

fn server() -> Option<&'static common::LoopbackServer> {
    common::python()?;
    common::gcs_server()
}

fn uri(name: &str) -> String {
    format!(
        "gs://{}/wh/{name}-{}",
        common::GCS_BUCKET,
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// One plain HTTP/1.1 request to the emulator: (status, lower-cased header names, body).
fn raw(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<String>, Vec<u8>) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
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
    let names = head
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, _)| k.trim().to_ascii_lowercase())
        })
        .collect();
    let body = out.get(split + 4..).unwrap_or_default().to_vec();
    (status, names, body)
}

/// The `gs://` client is built from the Hadoop keyfile option (the service-account file's
/// `gcs_base_url` and `disable_oauth`) and reaches the emulator: its PUT lands under the right
/// bucket and object name, byte-exact (read back with a plain GET), escaped partition values
/// and non-ASCII names included. The client then fails the call, because the emulator's answer
/// carries no ETag, which object_store requires: the error says so.
#[test]
fn gcs_client_from_hadoop_keys_reaches_the_emulator() {
    let Some(srv) = server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let opts = common::gcs_options(&srv.endpoint, dir.path());
    let table = uri("rt");
    let storage = Storage::open(&table, &opts).unwrap();
    let root = storage.root().clone();
    let rt = common::rt();
    for name in [
        "snapshot/snapshot-1",
        "dt=a%2Fb/bucket-0/f",
        "dt=ü日/bucket-0/f",
    ] {
        let loc = root.join(name);
        let r = rt.block_on(storage.put(&loc, bytes::Bytes::from(name.to_string())));
        let e = r.expect_err("the emulator now answers PUT with an ETag: extend this suite");
        assert!(e.to_string().contains("ETag"), "{name}: {e}");
        // The object is there, under the encoded key object_store sent.
        let key: String = loc
            .key()
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (status, _, body) = raw(
            srv.port,
            "GET",
            &format!("/{}/{key}", common::GCS_BUCKET),
            &[],
            b"",
        );
        assert_eq!(status, 200, "{name}");
        assert_eq!(body, name.as_bytes(), "{name}");
    }
}

/// Exactly what gcp-storage-emulator lacks of what object_store's GCS client needs, with plain
/// HTTP requests shaped like the client's: PUT and GET answer without `ETag` (GET also without
/// `Last-Modified`); HEAD, the XML listing (`GET /<bucket>?list-type=2&delimiter=/`) and DELETE
/// answer 501; `x-goog-if-generation-match: 0` on an existing object is ignored (200, the
/// object is overwritten). Real GCS does all of these.
#[test]
fn gcs_emulator_gaps_are_exactly_these() {
    let Some(srv) = server() else { return };
    let b = common::GCS_BUCKET;
    let key = format!("gaps-{}/bucket-0/f", uuid::Uuid::new_v4().simple());
    let obj = format!("/{b}/{key}");
    let (status, names, _) = raw(srv.port, "PUT", &obj, &[], b"first");
    assert_eq!(status, 200);
    assert!(!names.contains(&"etag".to_string()), "PUT now has an ETag");
    let (status, names, body) = raw(srv.port, "GET", &obj, &[], b"");
    assert_eq!((status, &body[..]), (200, &b"first"[..]));
    assert!(!names.contains(&"etag".to_string()), "GET now has an ETag");
    assert!(
        !names.contains(&"last-modified".to_string()),
        "GET now has Last-Modified"
    );
    assert_eq!(raw(srv.port, "HEAD", &obj, &[], b"").0, 501, "HEAD");
    let prefix = key.rsplit_once('/').unwrap().0;
    let list = format!("/{b}?list-type=2&prefix={prefix}/&delimiter=/");
    assert_eq!(raw(srv.port, "GET", &list, &[], b"").0, 501, "XML listing");
    let (status, _, _) = raw(
        srv.port,
        "PUT",
        &obj,
        &[("x-goog-if-generation-match", "0")],
        b"second",
    );
    assert_eq!(status, 200, "ifGenerationMatch=0 is now enforced");
    assert_eq!(raw(srv.port, "GET", &obj, &[], b"").2, b"second");
    assert_eq!(raw(srv.port, "DELETE", &obj, &[], b"").0, 501, "DELETE");
    assert_eq!(raw(srv.port, "GET", &obj, &[], b"").0, 200);
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
    let r = Storage::open(&uri("root-url"), &opts);
    assert!(
        matches!(r, Err(paimon_cleanup::Error::Unsupported(ref m)) if m.contains("gcs_base_url")),
        "{:?}",
        r.err()
    );
}
