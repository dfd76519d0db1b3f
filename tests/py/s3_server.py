#!/usr/bin/env python3
"""A loopback S3-compatible server for the Rust tests: moto's S3 (moto[server], installed
into the venv by scripts/setup-python.sh), in memory, on 127.0.0.1.

    python tests/py/s3_server.py [--port 0] [--bucket NAME ...] [--page-size N]

* Binds 127.0.0.1 only (port 0 = a free port chosen by the kernel), creates the buckets,
  checks that the server answers, then prints one line `PORT <n>` on stdout.
* Runs until its standard input reaches EOF: the test process holds the write end of the
  pipe, so the server ends with the test process, however that one ends.
* --page-size sets the server's default ListObjectsV2 page size (moto's
  MOTO_S3_DEFAULT_MAX_KEYS; real S3 uses 1000). object_store sends no max-keys, so a small
  value forces every listing of more than N entries through continuation tokens.
* Conditional writes are made atomic: moto checks `If-None-Match: *` and then stores the
  object in two steps, and its server is threaded, so two racing conditional PUTs could both
  succeed. Real S3 guarantees exactly one winner; every mutating request (PUT, POST, DELETE)
  is therefore serialized here with one lock, so the server behaves like S3 on that point.
  Listings take the same lock: moto iterates the bucket's keys without one, and a delete
  during that iteration fails the listing with a 500 (KeyError) that real S3 never gives.
* Request logs go to stderr only with --verbose.
"""

import argparse
import os
import socket
import sys
import threading
import urllib.request


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bucket", action="append", default=[])
    ap.add_argument("--page-size", type=int, default=1000)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    # Must be set before moto reads its settings.
    os.environ["MOTO_S3_DEFAULT_MAX_KEYS"] = str(args.page_size)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")

    from werkzeug.serving import make_server
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )

    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def is_listing(environ):
        # A GET of the bucket itself (path style: `/bucket` or `/bucket/`), ListObjects(V2).
        return (environ.get("REQUEST_METHOD") == "GET"
                and len(environ.get("PATH_INFO", "").strip("/").split("/")) <= 1
                and environ.get("PATH_INFO", "").strip("/") != "")

    def serialized(environ, start_response):
        if environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE") or is_listing(environ):
            with lock:
                # Materialize the response inside the lock: check and store happen there.
                return [b"".join(app(environ, start_response))]
        return app(environ, start_response)

    class Handler(MotoRequestHandler):
        def setup(self):
            super().setup()
            # The server writes headers and body separately: without TCP_NODELAY each answer
            # on a kept-alive connection can wait for a delayed ACK (40 ms).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_request(self, *a, **k):
            if args.verbose:
                super().log_request(*a, **k)

    server = make_server("127.0.0.1", args.port, serialized, threaded=True,
                         request_handler=Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()

    base = f"http://127.0.0.1:{port}"
    for b in args.bucket:
        req = urllib.request.Request(f"{base}/{b}", method="PUT", data=b"")
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
    with urllib.request.urlopen(f"{base}/", timeout=30) as r:  # ListBuckets: it answers
        r.read()

    print(f"PORT {port}", flush=True)
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (KeyboardInterrupt, OSError):
        pass
    server.shutdown()


if __name__ == "__main__":
    main()
