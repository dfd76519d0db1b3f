//! A loopback HTTP/1.1 proxy in front of an S3 server that adds a fixed latency to every
//! request, counts requests by kind (LIST, GET, HEAD, PUT, DELETE, POST batch-delete) with the
//! most in flight at once, and can record the raw requests to replay them later one after the
//! other ([`replay`]).
//!
//! Standard library only (threads and blocking sockets), so that the `s3` integration tests
//! can include this file as it is. One thread per client connection; each connection carries
//! one request at a time (HTTP/1.1 without pipelining, as every S3 client does): the request
//! is read whole, held for the latency, forwarded on the connection's own upstream connection,
//! and the answer is read whole and passed back. Only 127.0.0.1 is used.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What an S3 request does, from its method and target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `GET` of a bucket (ListObjectsV2, one page).
    List,
    /// `GET` of an object.
    Get,
    /// `HEAD` of an object.
    Head,
    /// `PUT` of an object.
    Put,
    /// `DELETE` of one object.
    Delete,
    /// `POST ?delete` (DeleteObjects, up to 1,000 keys).
    BatchDelete,
    /// Anything else.
    Other,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 7] = [
        Kind::List,
        Kind::Get,
        Kind::Head,
        Kind::Put,
        Kind::Delete,
        Kind::BatchDelete,
        Kind::Other,
    ];

    /// The report name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::List => "LIST",
            Kind::Get => "GET",
            Kind::Head => "HEAD",
            Kind::Put => "PUT",
            Kind::Delete => "DELETE",
            Kind::BatchDelete => "POST batch-delete",
            Kind::Other => "other",
        }
    }

    /// The kind of a request (path-style targets: `/bucket/key?query`).
    pub fn of(method: &str, target: &str) -> Kind {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let has = |p: &str| {
            query
                .split('&')
                .any(|kv| kv == p || kv.starts_with(&format!("{p}=")))
        };
        // A bucket-level path: `/bucket` or `/bucket/`.
        let bucket_level = path.trim_matches('/').split('/').count() <= 1;
        match method {
            "GET" if has("list-type") || bucket_level => Kind::List,
            "GET" => Kind::Get,
            "HEAD" => Kind::Head,
            "PUT" => Kind::Put,
            "DELETE" => Kind::Delete,
            "POST" if has("delete") => Kind::BatchDelete,
            _ => Kind::Other,
        }
    }
}

/// Counters of one kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindStats {
    /// Requests answered.
    pub count: u64,
    /// Requests under way now (from read to answered).
    pub in_flight: u64,
    /// Most requests of this kind under way at once.
    pub max_in_flight: u64,
}

/// What the proxy saw since it started (or since [`LatencyProxy::reset`]).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Per kind.
    pub kinds: BTreeMap<Kind, KindStats>,
    /// Most requests (any kind) under way at once.
    pub max_in_flight: u64,
    /// Requests under way now.
    pub in_flight: u64,
    /// Keys in each batch delete, in the order they were answered.
    pub batch_keys: Vec<u64>,
    /// Answers by status code.
    pub statuses: BTreeMap<u16, u64>,
}

impl Stats {
    /// Requests of `kind` answered.
    pub fn count(&self, kind: Kind) -> u64 {
        self.kinds.get(&kind).map_or(0, |k| k.count)
    }

    /// Most requests of `kind` under way at once.
    pub fn max_in_flight(&self, kind: Kind) -> u64 {
        self.kinds.get(&kind).map_or(0, |k| k.max_in_flight)
    }

    /// Requests answered, all kinds.
    pub fn total(&self) -> u64 {
        self.kinds.values().map(|k| k.count).sum()
    }
}

/// One recorded request, byte for byte.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Its method (a `HEAD` answer has no body).
    pub method: String,
    /// Request line and headers, with the blank line.
    pub head: Vec<u8>,
    /// Body as sent (chunked framing kept).
    pub body: Vec<u8>,
}

struct Shared {
    upstream: SocketAddr,
    latency: Duration,
    stats: Mutex<Stats>,
    recording: AtomicBool,
    recorded: Mutex<Vec<Recorded>>,
    stop: AtomicBool,
}

impl Shared {
    fn begin(&self, kind: Kind) {
        let mut s = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        s.in_flight += 1;
        s.max_in_flight = s.max_in_flight.max(s.in_flight);
        let k = s.kinds.entry(kind).or_default();
        k.in_flight += 1;
        k.max_in_flight = k.max_in_flight.max(k.in_flight);
    }

    fn end(&self, kind: Kind, status: Option<u16>, batch_keys: Option<u64>) {
        let mut s = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        s.in_flight = s.in_flight.saturating_sub(1);
        let k = s.kinds.entry(kind).or_default();
        k.in_flight = k.in_flight.saturating_sub(1);
        if let Some(status) = status {
            k.count += 1;
            *s.statuses.entry(status).or_default() += 1;
            if let Some(n) = batch_keys {
                s.batch_keys.push(n);
            }
        }
    }
}

/// The proxy: listens on 127.0.0.1 until dropped.
pub struct LatencyProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl LatencyProxy {
    /// Starts a proxy to `upstream` adding `latency` before each request is forwarded.
    pub fn start(upstream: SocketAddr, latency: Duration) -> io::Result<LatencyProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream,
            latency,
            stats: Mutex::new(Stats::default()),
            recording: AtomicBool::new(false),
            recorded: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let accept = shared.clone();
        std::thread::Builder::new()
            .name("latency-proxy".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if accept.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let shared = accept.clone();
                    let _ = std::thread::Builder::new()
                        .name("latency-proxy-conn".into())
                        .spawn(move || {
                            let _ = serve(conn, &shared);
                        });
                }
            })?;
        Ok(LatencyProxy { addr, shared })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.shared
            .stats
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Zeroes the counters (requests under way stay counted as under way).
    pub fn reset(&self) {
        let mut s = self.shared.stats.lock().unwrap_or_else(|p| p.into_inner());
        let in_flight = s.in_flight;
        let kinds: BTreeMap<Kind, KindStats> = s
            .kinds
            .iter()
            .map(|(k, v)| {
                (
                    *k,
                    KindStats {
                        in_flight: v.in_flight,
                        ..Default::default()
                    },
                )
            })
            .collect();
        *s = Stats {
            kinds,
            in_flight,
            ..Default::default()
        };
    }

    /// Starts (or stops) recording every request.
    pub fn record(&self, on: bool) {
        self.shared.recording.store(on, Ordering::SeqCst);
    }

    /// The requests recorded so far, in the order they were forwarded; clears the record.
    pub fn take_recorded(&self) -> Vec<Recorded> {
        std::mem::take(
            &mut *self
                .shared
                .recorded
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the stop flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// One HTTP message read whole.
struct Message {
    head: Vec<u8>,
    body: Vec<u8>,
    /// The first line's words (method, target / version, status).
    first: Vec<String>,
    /// The sender closes the connection after it.
    close: bool,
}

/// Reads a head (start line and headers, through the blank line); `None` on a clean EOF
/// before the first byte.
fn read_head(r: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line)? == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
        let blank = line == b"\r\n" || line == b"\n";
        if blank && head.is_empty() {
            continue; // a stray line break between messages
        }
        head.extend_from_slice(&line);
        if blank {
            return Ok(Some(head));
        }
    }
}

/// The value of header `name` (case-insensitive) in `head`.
fn header(head: &[u8], name: &str) -> Option<String> {
    String::from_utf8_lossy(head)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim().to_string())
}

/// A chunked body, framing kept.
fn read_chunked(r: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        body.extend_from_slice(&line);
        let text = String::from_utf8_lossy(&line);
        let size = text.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size.trim(), 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 {
            // Trailers through the blank line.
            loop {
                let mut t = Vec::new();
                if r.read_until(b'\n', &mut t)? == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                body.extend_from_slice(&t);
                if t == b"\r\n" || t == b"\n" {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size + 2, 0);
        r.read_exact(&mut body[start..])?;
    }
}

/// Reads one message; `no_body` for answers that never have one (to `HEAD`, 1xx, 204, 304);
/// `is_request`: a request without length has no body, an answer without one runs to EOF.
fn read_message(
    r: &mut impl BufRead,
    is_request: bool,
    no_body: impl Fn(&[String]) -> bool,
) -> io::Result<Option<Message>> {
    let Some(head) = read_head(r)? else {
        return Ok(None);
    };
    read_body(r, head, is_request, no_body).map(Some)
}

/// Reads a request for `client`: a request announcing `Expect: 100-continue` waits for the
/// interim answer before it sends its body (AWS SDK for Java's PUTs), so the proxy, which reads
/// the body before it forwards anything, gives that answer itself and forwards the request
/// without the header.
fn read_request(r: &mut impl BufRead, client: &mut impl Write) -> io::Result<Option<Message>> {
    let Some(mut head) = read_head(r)? else {
        return Ok(None);
    };
    if header(&head, "expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        client.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        client.flush()?;
        head = strip_header(&head, "expect");
    }
    read_body(r, head, true, |_| false).map(Some)
}

/// `head` without the lines of header `name` (case-insensitive).
fn strip_header(head: &[u8], name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len());
    for (i, line) in head.split_inclusive(|b| *b == b'\n').enumerate() {
        let is_named = i > 0
            && std::str::from_utf8(line)
                .ok()
                .and_then(|l| l.split_once(':'))
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(name));
        if !is_named {
            out.extend_from_slice(line);
        }
    }
    out
}

/// The body of the message whose head is `head` (see [`read_message`]).
fn read_body(
    r: &mut impl BufRead,
    head: Vec<u8>,
    is_request: bool,
    no_body: impl Fn(&[String]) -> bool,
) -> io::Result<Message> {
    let first: Vec<String> = String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let mut close = header(&head, "connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
    let body = if no_body(&first) {
        Vec::new()
    } else if header(&head, "transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        read_chunked(r)?
    } else if let Some(n) = header(&head, "content-length") {
        let n: usize = n
            .parse()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad content-length"))?;
        let mut b = vec![0; n];
        r.read_exact(&mut b)?;
        b
    } else if is_request {
        Vec::new()
    } else {
        close = true;
        let mut b = Vec::new();
        r.read_to_end(&mut b)?;
        b
    };
    Ok(Message {
        head,
        body,
        first,
        close,
    })
}

/// Reads an answer to a request with `method`, skipping (and returning) interim 1xx answers.
fn read_answer(r: &mut impl BufRead, method: &str) -> io::Result<(Vec<Message>, u16)> {
    let mut out = Vec::new();
    loop {
        let head_req = method == "HEAD";
        let m = read_message(r, false, |first| {
            let status: u16 = first.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            head_req || (100..200).contains(&status) || status == 204 || status == 304
        })?
        .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let status: u16 = m.first.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        out.push(m);
        if !(100..200).contains(&status) {
            return Ok((out, status));
        }
    }
}

fn connect(addr: SocketAddr) -> io::Result<(BufReader<TcpStream>, TcpStream)> {
    let s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    Ok((BufReader::new(s.try_clone()?), s))
}

/// Keys named in a DeleteObjects body.
fn keys_in(body: &[u8]) -> u64 {
    body.windows(5).filter(|w| w == b"<Key>").count() as u64
}

/// Serves one client connection until it closes.
fn serve(client: TcpStream, shared: &Shared) -> io::Result<()> {
    client.set_nodelay(true)?;
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    let mut upstream: Option<(BufReader<TcpStream>, TcpStream)> = None;
    loop {
        let Some(req) = read_request(&mut from_client, &mut to_client)? else {
            return Ok(());
        };
        let method = req.first.first().cloned().unwrap_or_default();
        let target = req.first.get(1).cloned().unwrap_or_default();
        let kind = Kind::of(&method, &target);
        shared.begin(kind);
        if shared.recording.load(Ordering::SeqCst) {
            shared
                .recorded
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Recorded {
                    method: method.clone(),
                    head: req.head.clone(),
                    body: req.body.clone(),
                });
        }
        std::thread::sleep(shared.latency);
        // The request ends when the server's answer is read, before a byte of it reaches the
        // client: a client can send its next request (a listing's next page) only after it has
        // the answer, so counting the end after forwarding would let two requests of one
        // listing overlap in `in_flight`.
        let answered = (|| -> io::Result<(Vec<Message>, u16)> {
            let up = match upstream.as_mut() {
                Some(u) => u,
                None => upstream.insert(connect(shared.upstream)?),
            };
            up.1.write_all(&req.head)?;
            up.1.write_all(&req.body)?;
            up.1.flush()?;
            read_answer(&mut up.0, &method)
        })();
        let batch = (kind == Kind::BatchDelete).then(|| keys_in(&req.body));
        let (msgs, status) = match answered {
            Ok(answer) => answer,
            Err(e) => {
                shared.end(kind, None, None);
                let _ = to_client.shutdown(Shutdown::Both);
                return Err(e);
            }
        };
        shared.end(kind, Some(status), batch);
        let mut close = req.close;
        let forwarded = (|| -> io::Result<()> {
            for m in &msgs {
                to_client.write_all(&m.head)?;
                to_client.write_all(&m.body)?;
                close |= m.close;
            }
            to_client.flush()
        })();
        if let Err(e) = forwarded {
            let _ = to_client.shutdown(Shutdown::Both);
            return Err(e);
        }
        if close {
            let _ = to_client.shutdown(Shutdown::Both);
            return Ok(());
        }
    }
}

/// What [`replay`] did.
#[derive(Clone, Debug, Default)]
pub struct Replayed {
    /// Requests sent and answered.
    pub requests: u64,
    /// Answers by status code.
    pub statuses: BTreeMap<u16, u64>,
}

/// Sends `requests` to `addr` one after the other on one connection (a new one when the
/// server closes it), each answer read whole before the next request: the plain floor.
pub fn replay(addr: SocketAddr, requests: &[Recorded]) -> io::Result<Replayed> {
    let mut out = Replayed::default();
    let mut conn: Option<(BufReader<TcpStream>, TcpStream)> = None;
    for r in requests {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => conn.insert(connect(addr)?),
        };
        c.1.write_all(&r.head)?;
        c.1.write_all(&r.body)?;
        c.1.flush()?;
        let (msgs, status) = read_answer(&mut c.0, &r.method)?;
        out.requests += 1;
        *out.statuses.entry(status).or_default() += 1;
        if msgs.iter().any(|m| m.close) {
            conn = None;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(
            Kind::of("GET", "/paimon?list-type=2&prefix=a%2F"),
            Kind::List
        );
        assert_eq!(Kind::of("GET", "/paimon"), Kind::List);
        assert_eq!(Kind::of("GET", "/paimon/t/snapshot/LATEST"), Kind::Get);
        assert_eq!(Kind::of("HEAD", "/paimon/t/x"), Kind::Head);
        assert_eq!(Kind::of("PUT", "/paimon/t/x"), Kind::Put);
        assert_eq!(Kind::of("DELETE", "/paimon/t/x"), Kind::Delete);
        assert_eq!(Kind::of("POST", "/paimon?delete"), Kind::BatchDelete);
        assert_eq!(Kind::of("POST", "/paimon?delete="), Kind::BatchDelete);
        assert_eq!(Kind::of("POST", "/paimon/t/x?uploads"), Kind::Other);
    }

    #[test]
    fn expect_continue_answered_by_the_proxy() {
        let raw =
            b"PUT /b/k HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc";
        let mut r = BufReader::new(&raw[..]);
        let mut client = Vec::new();
        let m = read_request(&mut r, &mut client).unwrap().unwrap();
        assert_eq!(client, b"HTTP/1.1 100 Continue\r\n\r\n");
        assert_eq!(m.body, b"abc");
        assert_eq!(
            m.head,
            b"PUT /b/k HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n"
        );
        let raw = b"GET /b/k HTTP/1.1\r\nHost: x\r\n\r\n";
        let mut client = Vec::new();
        let m = read_request(&mut BufReader::new(&raw[..]), &mut client)
            .unwrap()
            .unwrap();
        assert!(client.is_empty());
        assert_eq!(m.head, raw);
    }

    #[test]
    fn chunked_and_sized_bodies() {
        let raw = b"PUT /b/k HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /b/k HTTP/1.1\r\nContent-Length: 2\r\n\r\nxyHEAD /b/k HTTP/1.1\r\n\r\n";
        let mut r = BufReader::new(&raw[..]);
        let m = read_message(&mut r, true, |_| false).unwrap().unwrap();
        assert_eq!(m.body, b"3\r\nabc\r\n0\r\n\r\n");
        let m = read_message(&mut r, true, |_| false).unwrap().unwrap();
        assert_eq!(m.body, b"xy");
        let m = read_message(&mut r, true, |_| false).unwrap().unwrap();
        assert_eq!(m.first[0], "HEAD");
        assert!(m.body.is_empty());
        assert!(read_message(&mut r, true, |_| false).unwrap().is_none());
    }
}
