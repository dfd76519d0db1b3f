#!/usr/bin/env bash
# Fetch (or reuse) the Flink class path of the Flink jobs (bindings/flink): the jars pinned in
# bindings/flink/pom.xml (Flink 2.0.0's DataStream API and local executor, log4j), copied from
# Maven Central by `mvn dependency:copy-dependencies` into a cache directory outside the
# repository (default ${XDG_CACHE_HOME:-~/.cache}/paimon-cleanup/flink-<pom hash>/jars). No Flink
# distribution: the jobs run in a local MiniCluster from a plain `java` command in the tests.
# With --paimon it also makes the class path of Paimon's own Flink actions for scripts/bench-flink.sh:
# Paimon's Flink jar (org.apache.paimon:paimon-flink-2.0:2.0.0, built for Flink 2.0.0) and the
# pom's profile paimon-action (Flink's Table API, Hadoop's classes) beside the same Flink jars.
#
# Checks that Java 11+ (javac included) and Maven are there. Idempotent: a quick no-op when the
# cache matches the pom. The first run downloads about 65 MB (with --paimon: about 160 MB more).
#
# Prints on stdout (logs go to stderr):
#   FLINK_JARS=<dir>          the jars to compile against and run with
#   PAIMON_ACTION_JARS=<dir>  with --paimon: the class path of Paimon's Flink actions
#
#   scripts/setup-flink.sh [--paimon]
#   PAIMON_FLINK_CACHE=/some/dir scripts/setup-flink.sh
set -euo pipefail

PAIMON_FLINK_ARTIFACT="org.apache.paimon:paimon-flink-2.0:2.0.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
POM="$ROOT/bindings/flink/pom.xml"
WITH_PAIMON=0
[ "${1:-}" = "--paimon" ] && WITH_PAIMON=1

log() { echo "setup-flink: $*" >&2; }

JAVA="java"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; fi
command -v "$JAVA" >/dev/null 2>&1 ||
  { log "java not found: Flink 2.0 needs Java 11 or later (apt-get install openjdk-17-jdk-headless)"; exit 1; }
java_version="$("$JAVA" -version 2>&1 | sed -nE 's/.*version "([0-9]+)(\.[^"]*)?".*/\1/p' | head -n 1)"
if [ -z "$java_version" ] || [ "$java_version" -lt 11 ]; then
  log "Flink 2.0 needs Java 11 or later; $JAVA is version '${java_version:-unknown}'"
  exit 1
fi
command -v javac >/dev/null 2>&1 || [ -x "${JAVA_HOME:-/nonexistent}/bin/javac" ] ||
  { log "javac not found: a JDK (not only a JRE) is needed to build bindings/flink"; exit 1; }
command -v mvn >/dev/null 2>&1 || { log "mvn not found (apt-get install maven)"; exit 1; }

hash="$(sha256sum "$POM" | cut -c1-12)"
CACHE="${PAIMON_FLINK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/paimon-cleanup/flink-$hash}"
JARS="$CACHE/jars"
PAIMON_JARS="$CACHE/paimon-action-jars"

report() {
  echo "FLINK_JARS=$JARS"
  if [ "$WITH_PAIMON" = 1 ]; then echo "PAIMON_ACTION_JARS=$PAIMON_JARS"; fi
}
ready() {
  [ -f "$CACHE/jars.done" ] && { [ "$WITH_PAIMON" = 0 ] || [ -f "$CACHE/paimon-action.done" ]; }
}
if ready; then
  report
  exit 0
fi

mkdir -p "$CACHE"
# Serialize concurrent first-time setups.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.lock"
  flock 9
  if ready; then
    report
    exit 0
  fi
fi

if [ ! -f "$CACHE/jars.done" ]; then
  log "copying the jars of $POM into $JARS (first time: ~65 MB from Maven Central)"
  start=$(date +%s)
  rm -rf "$JARS"
  mvn -q -B -f "$POM" dependency:copy-dependencies -DoutputDirectory="$JARS" >&2 ||
    { log "mvn dependency:copy-dependencies failed"; exit 1; }
  ls "$JARS"/flink-streaming-java-*.jar >/dev/null 2>&1 || { log "no Flink jars in $JARS"; exit 1; }
  touch "$CACHE/jars.done"
  log "jars copied in $(($(date +%s) - start)) s"
fi
if [ "$WITH_PAIMON" = 1 ] && [ ! -f "$CACHE/paimon-action.done" ]; then
  log "copying Paimon's Flink action class path into $PAIMON_JARS (~160 MB)"
  rm -rf "$PAIMON_JARS"
  mvn -q -B -f "$POM" -P paimon-action dependency:copy-dependencies \
    -DoutputDirectory="$PAIMON_JARS" >&2 || { log "mvn -P paimon-action failed"; exit 1; }
  # Paimon's Flink jar is a bundle whose parent POM is not published: fetched without its POM.
  mvn -q -B dependency:copy -Dartifact="$PAIMON_FLINK_ARTIFACT" -DoutputDirectory="$PAIMON_JARS" >&2 ||
    { log "mvn dependency:copy $PAIMON_FLINK_ARTIFACT failed"; exit 1; }
  touch "$CACHE/paimon-action.done"
fi
report
