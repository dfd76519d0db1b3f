#!/usr/bin/env bash
# Create (or reuse) the venv with which tests/java_reference.rs reads Paimon's Iceberg-compatible
# metadata after our run: exactly pyiceberg==0.12.0 with its pyarrow and snappy extras, in <repo>/.venv-iceberg
# (PAIMON_ICEBERG_VENV elsewhere). Idempotent: a quick no-op when it is already there. Prints
# the venv python path as the last line of stdout.
set -euo pipefail

PYICEBERG_VERSION="0.12.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PAIMON_ICEBERG_VENV:-$ROOT/.venv-iceberg}"
PY="$VENV/bin/python"

have() {
  [ -x "$PY" ] && "$PY" - "$PYICEBERG_VERSION" <<'PYEOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
import pyarrow  # noqa: F401
import snappy  # noqa: F401  (Paimon writes its Iceberg manifests with the snappy codec)
import pyiceberg.table  # noqa: F401
sys.exit(0 if version("pyiceberg") == sys.argv[1] else 1)
PYEOF
}

if ! have; then
  echo "setup-pyiceberg: installing pyiceberg==$PYICEBERG_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$PY" -m pip install --quiet --disable-pip-version-check \
    "pyiceberg[pyarrow,snappy]==$PYICEBERG_VERSION" >&2
  have || { echo "setup-pyiceberg: pyiceberg not importable after install" >&2; exit 1; }
fi
echo "$PY"
