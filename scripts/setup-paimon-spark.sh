#!/usr/bin/env bash
# Create (or reuse) Paimon's own Spark runtime beside ours: a pyspark venv with the Spark release
# that Paimon's Spark jar is built for, and that jar, both in a cache directory outside the
# repository (default ${XDG_CACHE_HOME:-~/.cache}/paimon-cleanup/paimon-spark). Our Spark job
# (bindings/spark) stays on its own pyspark (scripts/setup-spark.sh); this runtime only runs
# Paimon's procedures (`CALL sys.remove_orphan_files`, `CALL sys.expire_snapshots`) and reads
# tables through Paimon's Spark catalog in scripts/test-paimon-spark.sh and
# scripts/bench-paimon-spark.sh.
#
# The pair: org.apache.paimon:paimon-spark-3.5:0.9.0 (built against Spark 3.5.2, Scala 2.12) with
# pyspark==3.5.2. It is the newest Paimon Spark runtime the Maven repository of this machine
# serves: `paimon-spark-3.5`'s maven-metadata.xml lists 0.7.0-incubating, 0.8.2 and 0.9.0;
# `paimon-spark-4.0`, `paimon-spark-4.1`, `paimon-spark-3.5_2.12`, `paimon-spark-4.0_2.13` and
# `paimon-spark-4.1_2.13` at 1.4.2 (the version of tests/java-reference/pom.xml) are refused:
# "Could not find artifact org.apache.paimon:paimon-spark-4.0:jar:1.4.2 in central" (their
# maven-metadata.xml is 404). Paimon 0.9.0's `remove_orphan_files` takes `table`, `older_than`
# and `dry_run` (no `mode`: it cleans in the driver with a thread pool; the distributed mode came
# with a later release).
#
# Needs Java 17 (Spark 3.5 runs on it), Maven and python3. Idempotent: a quick no-op when both
# are there. The first run downloads about 317 MB (pyspark, cached by pip) and 42 MB (the jar,
# cached in ~/.m2).
#
# Prints on stdout (logs go to stderr):
#   PAIMON_SPARK_PYTHON=<file>   the venv's python (pyspark 3.5.2 importable)
#   PAIMON_SPARK_HOME=<dir>      the pyspark package directory (bin/, jars/)
#   PAIMON_SPARK_SUBMIT=<file>   <PAIMON_SPARK_HOME>/bin/spark-submit
#   PAIMON_SPARK_JAR=<file>      paimon-spark-3.5-0.9.0.jar (catalog, procedures, Paimon core)
#
#   scripts/setup-paimon-spark.sh
#   PAIMON_SPARK_CACHE=/some/dir scripts/setup-paimon-spark.sh
set -euo pipefail

PAIMON_SPARK_GROUP="org.apache.paimon"
PAIMON_SPARK_ARTIFACT="paimon-spark-3.5"
PAIMON_SPARK_VERSION="0.9.0"
PYSPARK_VERSION="3.5.2"
CACHE="${PAIMON_SPARK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/paimon-cleanup/paimon-spark}"
VENV="$CACHE/venv-pyspark-$PYSPARK_VERSION"
PY="$VENV/bin/python"
JAR="$CACHE/jars/$PAIMON_SPARK_ARTIFACT-$PAIMON_SPARK_VERSION.jar"

log() { echo "setup-paimon-spark: $*" >&2; }

JAVA="java"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; fi
command -v "$JAVA" >/dev/null 2>&1 ||
  { log "java not found: Spark $PYSPARK_VERSION needs Java 8, 11 or 17"; exit 1; }
command -v mvn >/dev/null 2>&1 || { log "mvn not found (apt-get install maven)"; exit 1; }

spark_home() {
  [ -x "$PY" ] || return 1
  "$PY" - "$PYSPARK_VERSION" <<'EOF' 2>/dev/null
import os, sys
from importlib.metadata import version
from importlib.util import find_spec
if version("pyspark") != sys.argv[1]:
    sys.exit(1)
home = os.path.dirname(find_spec("pyspark").origin)
if not os.path.isfile(os.path.join(home, "bin", "spark-submit")):
    sys.exit(1)
print(home)
EOF
}

report() {
  echo "PAIMON_SPARK_PYTHON=$PY"
  echo "PAIMON_SPARK_HOME=$1"
  echo "PAIMON_SPARK_SUBMIT=$1/bin/spark-submit"
  echo "PAIMON_SPARK_JAR=$JAR"
}

if home="$(spark_home)" && [ -s "$JAR" ]; then
  report "$home"
  exit 0
fi

mkdir -p "$CACHE"
# Serialize concurrent first-time setups.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.lock"
  flock 9
  if home="$(spark_home)" && [ -s "$JAR" ]; then
    report "$home"
    exit 0
  fi
fi

if [ ! -s "$JAR" ]; then
  log "copying $PAIMON_SPARK_GROUP:$PAIMON_SPARK_ARTIFACT:$PAIMON_SPARK_VERSION into $CACHE/jars"
  mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
    "-Dartifact=$PAIMON_SPARK_GROUP:$PAIMON_SPARK_ARTIFACT:$PAIMON_SPARK_VERSION" \
    "-DoutputDirectory=$CACHE/jars" >&2 ||
    { log "Maven could not resolve $PAIMON_SPARK_ARTIFACT:$PAIMON_SPARK_VERSION"; exit 1; }
  [ -s "$JAR" ] || { log "no $JAR after mvn dependency:copy"; exit 1; }
fi

if ! home="$(spark_home)"; then
  PYTHON3="${PYTHON3:-python3}"
  command -v "$PYTHON3" >/dev/null 2>&1 || { log "python3 not found"; exit 1; }
  if [ -e "$VENV" ] && ! "$PY" -c 'import sys' >/dev/null 2>&1; then
    [ -f "$VENV/pyvenv.cfg" ] || { log "$VENV exists and is not a venv; not touching it"; exit 1; }
    log "removing broken venv $VENV"
    rm -rf "$VENV"
  fi
  if [ ! -x "$PY" ]; then
    log "creating venv $VENV"
    "$PYTHON3" -m venv "$VENV" >&2 || { log "python3 cannot make a venv (apt-get install python3-venv)"; exit 1; }
  fi
  log "installing pyspark==$PYSPARK_VERSION (first time: ~317 MB download, cached by pip)"
  start=$(date +%s)
  "$PY" -m pip install --disable-pip-version-check --no-input -q "pyspark==$PYSPARK_VERSION" >&2
  log "pyspark installed in $(($(date +%s) - start)) s"
  home="$(spark_home)" || { log "pyspark==$PYSPARK_VERSION installed but bin/spark-submit is missing"; exit 1; }
  chmod +x "$home"/bin/* 2>/dev/null || true
fi
report "$home"
