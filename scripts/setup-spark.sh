#!/usr/bin/env bash
# Create (or reuse) the Spark runtime of the Spark job's tests (bindings/spark): a dedicated venv
# (default <repo>/.venv-spark) with exactly pyspark==4.3.0 from PyPI. The pyspark package bundles
# a whole Spark distribution: its jars/ directory is the class path the Spark job is compiled
# against (no Maven) and its bin/spark-submit runs the job. Checks that Java 17+ is the `java`
# on PATH (or JAVA_HOME), which Spark 4 requires.
#
# Idempotent: a quick no-op when the venv already has pyspark 4.3.0. The first run downloads the
# pyspark source archive (about 455 MB; ~25 s here) and pip turns it into a wheel (~1 min); pip's
# cache keeps both, so a rebuilt venv does not download again.
#
# Prints three lines on stdout (logs go to stderr):
#   SPARK_HOME=<dir>          the pyspark package directory (has bin/ and jars/)
#   SPARK_JARS=<dir>          <SPARK_HOME>/jars
#   SPARK_SUBMIT=<file>       <SPARK_HOME>/bin/spark-submit
#
#   scripts/setup-spark.sh
#   PAIMON_SPARK_VENV=/some/dir scripts/setup-spark.sh
set -euo pipefail

PYSPARK_VERSION="4.3.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PAIMON_SPARK_VENV:-$ROOT/.venv-spark}"
PY="$VENV/bin/python"

log() { echo "setup-spark: $*" >&2; }

# --- Java 17+ -----------------------------------------------------------------------------------
JAVA="java"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; fi
if ! command -v "$JAVA" >/dev/null 2>&1; then
  log "java not found: Spark $PYSPARK_VERSION needs Java 17 or later (apt-get install openjdk-17-jdk-headless)"
  exit 1
fi
java_version="$("$JAVA" -version 2>&1 | sed -nE 's/.*version "([0-9]+)(\.[^"]*)?".*/\1/p' | head -n 1)"
if [ -z "$java_version" ] || [ "$java_version" -lt 17 ]; then
  log "Spark $PYSPARK_VERSION needs Java 17 or later; $JAVA is version '${java_version:-unknown}'"
  exit 1
fi
if ! command -v javac >/dev/null 2>&1 && ! [ -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]; then
  log "javac not found: a JDK (not only a JRE) is needed to build bindings/spark"
  exit 1
fi

# --- pyspark ------------------------------------------------------------------------------------
spark_home() {
  [ -x "$PY" ] || return 1
  "$PY" - "$PYSPARK_VERSION" <<'EOF' 2>/dev/null
import os, sys
from importlib.metadata import version
from importlib.util import find_spec
if version("pyspark") != sys.argv[1]:
    sys.exit(1)
spec = find_spec("pyspark")
home = os.path.dirname(spec.origin)
if not (os.path.isdir(os.path.join(home, "jars"))
        and os.path.isfile(os.path.join(home, "bin", "spark-submit"))):
    sys.exit(1)
print(home)
EOF
}

report() {
  echo "SPARK_HOME=$1"
  echo "SPARK_JARS=$1/jars"
  echo "SPARK_SUBMIT=$1/bin/spark-submit"
}

if home="$(spark_home)"; then
  report "$home"
  exit 0
fi

# Serialize concurrent first-time setups.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/paimon-cleanup-setup-spark.lock"
  flock 9
  if home="$(spark_home)"; then
    report "$home"
    exit 0
  fi
fi

PYTHON3="${PYTHON3:-python3}"
command -v "$PYTHON3" >/dev/null 2>&1 || { log "python3 not found"; exit 1; }
# Only a directory that really is a venv (has pyvenv.cfg) is ever removed.
if [ -e "$VENV" ] && ! "$PY" -c 'import sys' >/dev/null 2>&1; then
  if [ -f "$VENV/pyvenv.cfg" ]; then
    log "removing broken venv $VENV"
    rm -rf "$VENV"
  elif [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    log "$VENV exists, is not empty and is not a venv; not touching it"
    exit 1
  fi
fi
if [ ! -x "$PY" ]; then
  log "creating venv $VENV"
  "$PYTHON3" -m venv "$VENV" >&2 || {
    log "python3 cannot make a venv (Debian: apt-get install python3-venv)"
    exit 1
  }
fi

log "installing pyspark==$PYSPARK_VERSION (first time: ~455 MB download, cached by pip)"
start=$(date +%s)
"$PY" -m pip install --disable-pip-version-check --no-input -q "pyspark==$PYSPARK_VERSION" >&2
log "pyspark installed in $(($(date +%s) - start)) s"

if ! home="$(spark_home)"; then
  log "pyspark==$PYSPARK_VERSION installed but its jars/ or bin/spark-submit is missing"
  exit 1
fi
chmod +x "$home"/bin/* 2>/dev/null || true
report "$home"
