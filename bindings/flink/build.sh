#!/usr/bin/env bash
# Builds the Flink jobs (bindings/flink) with javac, no Maven build and no Flink distribution:
#   paimon-cleanup-flink.jar        org.apache.paimon.cleanup.flink.RemoveOrphanFiles (the jar's
#                                   main class) and ...ExpireSnapshots, Java 11 bytecode
#   paimon-cleanup-flink-tests.jar  the argument tests (JobArgsTest, plain java)
# against Flink's jars (scripts/setup-flink.sh copies the pinned ones of bindings/flink/pom.xml
# from Maven Central into a cache directory and prints it as FLINK_JARS=) and the Java binding's
# paimon-cleanup-java.jar (cmake --build <dir> --target paimon_cleanup_java).
#
#   bindings/flink/build.sh FLINK_JARS_DIR PAIMON_CLEANUP_JAVA_JAR OUT_DIR
#
# Rebuilds only when a source, the binding's jar or this script is newer than the jars.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 FLINK_JARS_DIR PAIMON_CLEANUP_JAVA_JAR OUT_DIR" >&2
  exit 2
fi
FLINK_JARS="$1"
JAVA_JAR="$2"
OUT="$3"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ls "$FLINK_JARS"/flink-streaming-java-*.jar >/dev/null 2>&1 ||
  { echo "build.sh: $FLINK_JARS holds no Flink jars (scripts/setup-flink.sh)" >&2; exit 1; }
[ -f "$JAVA_JAR" ] || { echo "build.sh: $JAVA_JAR not found" >&2; exit 1; }
command -v javac >/dev/null 2>&1 || { echo "build.sh: javac not found (a JDK 11+)" >&2; exit 1; }

mkdir -p "$OUT"
JOB_JAR="$OUT/paimon-cleanup-flink.jar"
TEST_JAR="$OUT/paimon-cleanup-flink-tests.jar"
if [ -f "$JOB_JAR" ] && [ -f "$TEST_JAR" ] &&
  [ -z "$(find "$HERE/src" "$JAVA_JAR" "$HERE/build.sh" -newer "$JOB_JAR" -type f | head -n 1)" ]; then
  exit 0
fi

# -path: some jars name absent jars in their manifest Class-Path; -try: Flink's CloseableIterator.
FLAGS=(--release 11 -encoding UTF-8 -Xlint:all,-options,-serial,-path,-try -Werror)
CLASSES="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-flink-classes.XXXXXX")"
trap 'rm -rf "$CLASSES"' EXIT
mkdir -p "$CLASSES/main" "$CLASSES/test"
javac "${FLAGS[@]}" -cp "$JAVA_JAR:$FLINK_JARS/*" -d "$CLASSES/main" \
  "$HERE"/src/main/java/org/apache/paimon/cleanup/flink/*.java
jar --create --file "$JOB_JAR.tmp" \
  --main-class org.apache.paimon.cleanup.flink.RemoveOrphanFiles -C "$CLASSES/main" .
javac "${FLAGS[@]}" -cp "$CLASSES/main:$JAVA_JAR:$FLINK_JARS/*" -d "$CLASSES/test" \
  "$HERE"/src/test/java/org/apache/paimon/cleanup/flink/*.java
jar --create --file "$TEST_JAR" -C "$CLASSES/test" .
mv "$JOB_JAR.tmp" "$JOB_JAR"
echo "built $JOB_JAR and $TEST_JAR"
