#!/usr/bin/env python3
"""A loopback Azure Blob Storage server for the Rust tests: Azurite's blob service
(azurite@3.35.0, installed by scripts/setup-azurite.sh), in memory, on 127.0.0.1.

    python tests/py/azurite_server.py --azurite PATH/azurite-blob [--container NAME ...]

* Starts `azurite-blob --blobHost 127.0.0.1 --blobPort 0 --inMemoryPersistence` (the kernel
  picks a free port; Azurite prints it), creates the containers in the well-known emulator
  account `devstoreaccount1` (a Shared Key signed Create Container request, stdlib only),
  then prints one line `PORT <n>` on stdout.
* Runs until its standard input reaches EOF: the test process holds the write end of the
  pipe, so the server ends with the test process, however that one ends.
* Nothing is changed about Azurite's behaviour: no request goes through this script.
"""

import argparse
import base64
import email.utils
import hashlib
import hmac
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.request

ACCOUNT = "devstoreaccount1"
# Azurite's documented, public development key (not a secret).
KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
       "K1SZFPTOtr/KBHBeksoGMGw==")
VERSION = "2021-08-06"


def create_container(port, name):
    date = email.utils.formatdate(usegmt=True)
    path = f"/{ACCOUNT}/{name}"
    canonical_headers = f"x-ms-date:{date}\nx-ms-version:{VERSION}\n"
    # Path-style URL: the account appears twice (once as the resource owner, once in the path).
    canonical_resource = f"/{ACCOUNT}{path}\nrestype:container"
    # VERB, Content-Encoding, -Language, -Length (empty for 0), -MD5, -Type, Date,
    # If-Modified-Since, If-Match, If-None-Match, If-Unmodified-Since, Range.
    fields = ["PUT", "", "", "", "", "application/octet-stream", "", "", "", "", "", ""]
    string_to_sign = "\n".join(fields) + "\n" + canonical_headers + canonical_resource
    sig = base64.b64encode(hmac.new(base64.b64decode(KEY), string_to_sign.encode(),
                                    hashlib.sha256).digest()).decode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}?restype=container", method="PUT", data=b"",
        headers={"Content-Type": "application/octet-stream", "x-ms-date": date, "x-ms-version": VERSION,
                 "Authorization": f"SharedKey {ACCOUNT}:{sig}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--azurite", required=True)
    ap.add_argument("--container", action="append", default=[])
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    workdir = tempfile.mkdtemp(prefix="paimon-azurite-")
    cmd = [args.azurite, "--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence",
           "--disableTelemetry"]
    if args.verbose:
        cmd += ["--debug", os.path.join(tempfile.gettempdir(), f"azurite-debug-{os.getpid()}.log")]
    else:
        cmd.append("--silent")
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=sys.stderr,
                            stdin=subprocess.DEVNULL, text=True)
    port = None
    for line in proc.stdout:
        print(line.rstrip(), file=sys.stderr, flush=True)
        m = re.search(r"listens on http://127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        proc.wait()
        sys.exit(f"azurite did not start (exit {proc.returncode})")

    # Keep draining Azurite's output into our stderr.
    def drain():
        for line in proc.stdout:
            sys.stderr.write(line)
    threading.Thread(target=drain, daemon=True).start()

    try:
        for c in args.container:
            create_container(port, c)
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
        try:
            os.rmdir(workdir)
        except OSError:
            pass


if __name__ == "__main__":
    main()
