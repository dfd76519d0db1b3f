#!/usr/bin/env python3
"""A loopback HTTP proxy in front of the test S3 server (or Azurite) that injects faults
(stdlib only). Its counters understand both S3 (ListObjectsV2, DeleteObjects) and Azure Blob
(List Blobs markers, Blob Batch) requests.

    python tests/py/faulty_proxy.py --upstream 127.0.0.1:PORT [--seed N] [fault options]

Listens on 127.0.0.1 (a free port), prints `PORT <n>` on stdout, and runs until its
standard input reaches EOF (the test process holds the pipe). Every request is forwarded to
the upstream (loopback only) unless a fault is drawn for it. Faults, each drawn with its own
probability from one random generator seeded with --seed:

  --p-503 F          answer 503 SlowDown without forwarding (S3 throttling)
  --p-drop F         close the connection without forwarding and without an answer
  --p-lost F         forward (the server applies the request), then close the connection
                     without an answer: the client cannot know the request landed
  --p-503-after F    forward, then answer 503 InternalError instead of the real answer
  --p-delay F        wait --delay-ms before forwarding (then forward normally)
  --max-faults N     inject at most N faults in total (then forward everything)
  --only REGEX       draw faults only for requests whose "METHOD path?query" matches
  --skip N           let the first N requests (that --only matches) through fault-free
  --lose-cond-put REGEX
                     deterministic: the first conditional PUT (If-None-Match) whose path
                     matches REGEX is forwarded and its answer lost (connection closed)
  --hold-cond-put REGEX
                     deterministic: the first conditional PUT whose path matches REGEX waits
                     (stats "held" = 1) until POST /__proxy/release, then is forwarded

Requests to the proxy's own paths are not forwarded:
  GET  /__proxy/stats   JSON counters (see `Stats`)
  POST /__proxy/release lets a held request go on
  POST /__proxy/config  JSON object with any of p_503, p_drop, p_lost, p_503_after,
                        p_delay, delay_ms, max_faults, only (null = all), skip, to change the faults
                        of later requests; answers the new config.
"""

import argparse
import http.client
import http.server
import json
import random
import re
import socket
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
    "upgrade", "content-length",
}

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b'<Message>Please reduce your request rate.</Message></Error>')
INTERNAL = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
            b'<Message>We encountered an internal error. Please try again.</Message></Error>')


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.rng = random.Random(args.seed)
        self.upstream = args.upstream
        self.cfg = {
            "p_503": args.p_503, "p_drop": args.p_drop, "p_lost": args.p_lost,
            "p_503_after": args.p_503_after, "p_delay": args.p_delay,
            "delay_ms": args.delay_ms, "max_faults": args.max_faults, "only": args.only,
            "skip": args.skip,
        }
        self.matched = 0
        self.lose_cond_put = re.compile(args.lose_cond_put) if args.lose_cond_put else None
        self.lose_cond_put_done = False
        self.hold_cond_put = re.compile(args.hold_cond_put) if args.hold_cond_put else None
        self.hold_done = False
        self.released = threading.Event()
        self.stats = {
            "requests": 0,            # requests forwarded or faulted (not /__proxy/)
            "by_method": {},
            "faults": {"503": 0, "drop": 0, "lost": 0, "503_after": 0, "delay": 0,
                       "lost_cond_put": 0},
            "list_requests": 0,       # ListObjectsV2 requests
            "list_continuations": 0,  # ... of them carrying a continuation-token
            "list_truncated": 0,      # ... answered with IsTruncated=true
            "delete_batches": [],     # number of keys of each DeleteObjects request
            "cond_puts": 0,           # PUTs with If-None-Match
            "cond_put_status": {},    # their upstream statuses
            "upstream_errors": 0,
            "held": 0,                # requests held by --hold-cond-put so far
        }

    def draw(self, line):
        """The fault for one request: None, '503', 'drop', 'lost', '503_after' or 'delay'."""
        with self.lock:
            c = self.cfg
            faults = self.stats["faults"]
            injected = sum(faults.values()) - faults["delay"] - faults["lost_cond_put"]
            if c["max_faults"] is not None and injected >= c["max_faults"]:
                return None
            if c["only"] and not re.search(c["only"], line):
                return None
            self.matched += 1
            if self.matched <= (c["skip"] or 0):
                return None
            x = self.rng.random()
            for name, key in (("503", "p_503"), ("drop", "p_drop"), ("lost", "p_lost"),
                              ("503_after", "p_503_after"), ("delay", "p_delay")):
                p = c[key] or 0.0
                if x < p:
                    faults[name] += 1
                    return name
                x -= p
            return None


def make_handler(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def setup(self):
            super().setup()
            # Headers and body go out in separate writes: without TCP_NODELAY each answer on
            # a kept-alive connection can wait for a delayed ACK (40 ms).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _body(self):
            n = self.headers.get("Content-Length")
            if n is not None:
                return self.rfile.read(int(n))
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                out = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return b""

        def _reply(self, status, body, headers=(), head=False):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _drop(self):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def _control(self, body):
            if self.command == "GET" and self.path.startswith("/__proxy/stats"):
                with state.lock:
                    out = json.dumps(state.stats).encode()
                return self._reply(200, out, [("Content-Type", "application/json")])
            if self.command == "POST" and self.path.startswith("/__proxy/release"):
                state.released.set()
                return self._reply(200, b"released")
            if self.command == "POST" and self.path.startswith("/__proxy/config"):
                new = json.loads(body or b"{}")
                with state.lock:
                    for k, v in new.items():
                        if k not in state.cfg:
                            return self._reply(400, f"unknown key {k}".encode())
                        state.cfg[k] = v
                    out = json.dumps(state.cfg).encode()
                return self._reply(200, out, [("Content-Type", "application/json")])
            return self._reply(404, b"")

        def _handle(self):
            body = self._body()
            if self.path.startswith("/__proxy/"):
                return self._control(body)
            line = f"{self.command} {self.path}"
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            cond_put = self.command == "PUT" and "If-None-Match" in self.headers
            with state.lock:
                s = state.stats
                s["requests"] += 1
                s["by_method"][self.command] = s["by_method"].get(self.command, 0) + 1
                if self.command == "GET" and query.get("list-type") == ["2"]:
                    s["list_requests"] += 1
                    if "continuation-token" in query:
                        s["list_continuations"] += 1
                if self.command == "POST" and "delete" in query:
                    s["delete_batches"].append(body.count(b"<Key>"))
                # Azure Blob: List Blobs pages (marker = next page), Blob Batch deletes.
                if self.command == "GET" and query.get("comp") == ["list"]:
                    s["list_requests"] += 1
                    if query.get("marker", [""])[0]:
                        s["list_continuations"] += 1
                if self.command == "POST" and query.get("comp") == ["batch"]:
                    s["delete_batches"].append(body.count(b"\nDELETE /"))
                if cond_put:
                    s["cond_puts"] += 1
                lose = (cond_put and state.lose_cond_put is not None
                        and not state.lose_cond_put_done
                        and state.lose_cond_put.search(url.path) is not None)
                if lose:
                    state.lose_cond_put_done = True
                    s["faults"]["lost_cond_put"] += 1
                hold = (cond_put and state.hold_cond_put is not None and not state.hold_done
                        and state.hold_cond_put.search(url.path) is not None)
                if hold:
                    state.hold_done = True
                    s["held"] += 1
            if hold:
                state.released.wait(120)

            fault = None if lose else state.draw(line)
            if fault == "503":
                return self._reply(503, SLOW_DOWN, [("Content-Type", "application/xml")],
                                   head=self.command == "HEAD")
            if fault == "drop":
                return self._drop()
            if fault == "delay":
                time.sleep(state.cfg["delay_ms"] / 1000.0)

            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Content-Length"] = str(len(body))
            host, port = state.upstream.rsplit(":", 1)
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except OSError:
                with state.lock:
                    state.stats["upstream_errors"] += 1
                return self._reply(502, b"upstream failed")
            finally:
                conn.close()

            with state.lock:
                s = state.stats
                if cond_put:
                    k = str(resp.status)
                    s["cond_put_status"][k] = s["cond_put_status"].get(k, 0) + 1
                if (self.command == "GET" and query.get("list-type") == ["2"]
                        and b"<IsTruncated>true</IsTruncated>" in data):
                    s["list_truncated"] += 1
            if lose or fault == "lost":
                return self._drop()
            if fault == "503_after":
                return self._reply(503, INTERNAL, [("Content-Type", "application/xml")],
                                   head=self.command == "HEAD")
            out_headers = [(k, v) for k, v in resp.getheaders()
                           if k.lower() not in HOP_BY_HOP]
            if self.command == "HEAD":
                # Keep the object's length; send no body.
                self.send_response(resp.status)
                for k, v in out_headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", resp.getheader("Content-Length") or "0")
                self.end_headers()
                return
            self._reply(resp.status, data, out_headers)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True, help="host:port of the S3 server (loopback)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--p-503", type=float, default=0.0)
    ap.add_argument("--p-drop", type=float, default=0.0)
    ap.add_argument("--p-lost", type=float, default=0.0)
    ap.add_argument("--p-503-after", type=float, default=0.0)
    ap.add_argument("--p-delay", type=float, default=0.0)
    ap.add_argument("--delay-ms", type=int, default=200)
    ap.add_argument("--max-faults", type=int, default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--lose-cond-put", default=None)
    ap.add_argument("--hold-cond-put", default=None)
    args = ap.parse_args()
    host = args.upstream.rsplit(":", 1)[0]
    if host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("127."):
        sys.exit(f"refusing a non-loopback upstream {args.upstream}")

    state = State(args)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (KeyboardInterrupt, OSError):
        pass
    server.shutdown()


if __name__ == "__main__":
    main()
