#!/usr/bin/env bash
# Benchmark of the Flink job (bindings/flink, RemoveOrphanFiles) beside Paimon's own Flink action
# (org.apache.paimon:paimon-flink-2.0:2.0.0, `remove_orphan_files`, on the same Flink 2.0.0 jars)
# and the single-process CLI: one paimon-gen table (--size small|medium|large, default medium,
# --orphans 1000) at <dir>/wh/db.db/t (Paimon's action opens it through a filesystem catalog),
# every file made 3 days old, copied three times; then each of the three removes the orphans of
# its copy for real with the same cut-off (2 days back, as text: each reads it itself). The
# three copies must hold the same files afterwards. Both Flink runs are a local MiniCluster in
# one plain JVM (parallelism --parallelism, default 2), so "peak RSS" is the whole Flink cluster
# (through getrusage, /usr/bin/time); both get the same heap (--xmx, default 2g). Not part of
# the test command.
#
#   scripts/bench-flink.sh [--size medium] [--parallelism 2] [--xmx 2g] [--dir /tmp/paimon-bench-flink]
#
# Needs what scripts/test-flink.sh builds (it runs the same build steps).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SIZE=medium
PARALLELISM=2
XMX=2g
DIR="${TMPDIR:-/tmp}/paimon-bench-flink"
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE="$2"; shift 2 ;;
    --parallelism) PARALLELISM="$2"; shift 2 ;;
    --xmx) XMX="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
BUILD_DIR="${PAIMON_CLEANUP_BUILD_DIR:-$ROOT/build/c-abi}"
out="$(bash scripts/setup-flink.sh --paimon)"
FLINK_JARS="$(sed -n 's/^FLINK_JARS=//p' <<<"$out")"
PAIMON_JARS="$(sed -n 's/^PAIMON_ACTION_JARS=//p' <<<"$out")"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_DEFAULT_FEATURES=ON >/dev/null
cmake --build "$BUILD_DIR" --target paimon_cleanup_jni paimon_cleanup_java >/dev/null
JNI="$BUILD_DIR/bindings/java/libpaimon_cleanup_jni.so"
JAVA_JAR="$BUILD_DIR/bindings/java/paimon-cleanup-java.jar"
bash bindings/flink/build.sh "$FLINK_JARS" "$JAVA_JAR" "$BUILD_DIR/bindings/flink" >/dev/null
FLINK_JAR="$BUILD_DIR/bindings/flink/paimon-cleanup-flink.jar"
cargo build --release --bin paimon-cleanup --bin paimon-gen 2>/dev/null
CLI="$ROOT/target/release/paimon-cleanup"

rm -rf "$DIR"
mkdir -p "$DIR/base/db.db"
T="$DIR/base/db.db/t"
start=$(date +%s.%N)
"$ROOT/target/release/paimon-gen" "$T" --size "$SIZE" --orphans 1000 >/dev/null
find "$T" -exec touch -h -d "@$(($(date +%s) - 3 * 24 * 3600))" {} +
echo "paimon-gen --size $SIZE --orphans 1000: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s, $(find "$T" -type f | wc -l) files, all 3 days old"
for c in cli flink paimon; do
  mkdir -p "$DIR/$c" && cp -a "$DIR/base/db.db" "$DIR/$c/"
done
CUTOFF_TEXT="$(date -d '2 days ago' '+%Y-%m-%d %H:%M:%S')"

# measure <name> <command...>: wall time and peak RSS (getrusage of the process).
measure() {
  local name="$1" wall
  shift
  start=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$DIR/$name.maxrss" "$@" >"$DIR/$name.out" 2>"$DIR/$name.err" ||
    { echo "$name failed:" >&2; tail -n 20 "$DIR/$name.err" >&2; return 1; }
  wall="$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
  printf '%-8s wall %6.1f s; peak RSS %5d MiB\n' "$name" "$wall" "$(($(tail -n 1 "$DIR/$name.maxrss") / 1024))"
}

measure cli "$CLI" remove-orphan-files "$DIR/cli/db.db/t" --older-than "$CUTOFF_TEXT" --json
measure flink java "-Xmx$XMX" -cp "$FLINK_JAR:$JAVA_JAR:$FLINK_JARS/*" \
  org.apache.paimon.cleanup.flink.RemoveOrphanFiles "$DIR/flink/db.db/t" \
  --older-than "$CUTOFF_TEXT" --parallelism "$PARALLELISM" --native-library "$JNI" --json
grep -E '^remove-orphan-files:' "$DIR/flink.err" || true
measure paimon java "-Xmx$XMX" -cp "$PAIMON_JARS/*" org.apache.paimon.flink.action.FlinkActions \
  remove_orphan_files --warehouse "$DIR/paimon" --database db --table t \
  --older_than "$CUTOFF_TEXT" --parallelism "$PARALLELISM"

files() { (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }
files "$DIR/base/db.db/t" >"$DIR/base.files"
for c in cli flink paimon; do
  files "$DIR/$c/db.db/t" >"$DIR/$c.files"
  comm -23 "$DIR/base.files" "$DIR/$c.files" >"$DIR/$c.deleted"
done
echo "deleted: CLI $(wc -l <"$DIR/cli.deleted"), Flink job $(wc -l <"$DIR/flink.deleted"), Paimon's action $(wc -l <"$DIR/paimon.deleted") files"
same=1
for c in flink paimon; do
  if ! cmp -s "$DIR/cli.deleted" "$DIR/$c.deleted"; then
    same=0
    echo "$c deleted other files than the CLI:"
    diff "$DIR/cli.deleted" "$DIR/$c.deleted" | head -n 20
  fi
done
[ "$same" = 1 ] && echo "the same deleted set in all three"
[ "$same" = 1 ]
