#!/usr/bin/env python3
"""A loopback Google Cloud Storage emulator for the Rust tests: gcp-storage-emulator
(pinned by scripts/setup-python.sh), in memory, on 127.0.0.1.

    python tests/py/gcs_server.py [--bucket NAME ...]

* Binds 127.0.0.1 only, port 0 (a free port chosen by the kernel), creates the buckets, then
  prints one line `PORT <n>` on stdout.
* Runs until its standard input reaches EOF (the test process holds the pipe).
* Nothing is changed about the emulator's behaviour. It serves the GCS JSON API; of the XML
  API that object_store's GCS client speaks it serves only PUT and GET of an object (see
  tests/gcs.rs and docs/storage.md for exactly what that leaves untested).
"""

import argparse
import logging
import sys
import urllib.request


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bucket", action="append", default=[])
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        stream=sys.stderr)

    from gcp_storage_emulator.server import create_server
    from gcp_storage_emulator.handlers import buckets

    server = create_server("127.0.0.1", 0, in_memory=True)
    server.start()
    port = server._api._httpd.server_address[1]
    for b in args.bucket:
        buckets.create_bucket(b, server._storage)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as r:  # health check
        r.read()
    print(f"PORT {port}", flush=True)
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (KeyboardInterrupt, OSError):
        pass
    server.stop()


if __name__ == "__main__":
    main()
