#!/usr/bin/env bash
# Benchmark of the Spark job (bindings/spark) against the single-process CLI: remove-orphan-files
# on one paimon-gen table (--size small|medium|large, default medium), both with
# --no-writers-running and the same --older-than-ms cut-off taken after the table was written.
# Both are dry runs (every run sees the same table; the deletions of 1,000 orphans would add
# little) and must name the same files. Reports wall time and the peak RSS of every
# process: the CLI; the spark-submit JVMs (with `local[N]` the driver runs the executor threads;
# with `local-cluster[W,C,MB]` the executors are separate JVMs, sampled every 0.2 s from /proc).
#
#   scripts/bench-spark.sh [--size medium] [--master 'local[2]'] [--dir /tmp/paimon-bench-spark]
#
# Needs what scripts/test-spark.sh builds (it runs the same cmake / cargo build steps).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SIZE=medium
MASTER='local[2]'
DIR="${TMPDIR:-/tmp}/paimon-bench-spark"
PARALLELISM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE="$2"; shift 2 ;;
    --master) MASTER="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --parallelism) PARALLELISM="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
BUILD_DIR="${PAIMON_CLEANUP_BUILD_DIR:-$ROOT/build/c-abi}"
out="$(bash scripts/setup-spark.sh)"
SPARK_JARS="$(sed -n 's/^SPARK_JARS=//p' <<<"$out")"
SPARK_SUBMIT="$(sed -n 's/^SPARK_SUBMIT=//p' <<<"$out")"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_DEFAULT_FEATURES=ON \
  "-DPAIMON_CLEANUP_SPARK_JARS=$SPARK_JARS" >/dev/null
cmake --build "$BUILD_DIR" --target paimon_cleanup_jni paimon_cleanup_java paimon_cleanup_spark >/dev/null
cargo build --release --bin paimon-cleanup --bin paimon-gen 2>/dev/null
CLI="$ROOT/target/release/paimon-cleanup"
JNI="$BUILD_DIR/bindings/java/libpaimon_cleanup_jni.so"
JAVA_JAR="$BUILD_DIR/bindings/java/paimon-cleanup-java.jar"
SPARK_JAR="$BUILD_DIR/bindings/spark/paimon-cleanup-spark.jar"

rm -rf "$DIR"
mkdir -p "$DIR"
T="$DIR/t"
start=$(date +%s.%N)
"$ROOT/target/release/paimon-gen" "$T" --size "$SIZE" --orphans 1000 >/dev/null
echo "paimon-gen --size $SIZE --orphans 1000: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s, $(find "$T" -type f | wc -l) files"
sleep 1
CUTOFF="$(date +%s%3N)"
sleep 1

# measure <name> <command...>: wall time, the peak RSS of the command's main process (getrusage,
# through /usr/bin/time: spark-submit execs the driver JVM) and of every other process of its
# tree (sampled from /proc every 0.2 s; JVMs named by their main class).
measure() {
  local name="$1" pid wall
  shift
  local samples="$DIR/$name.rss"
  : >"$samples"
  start=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$DIR/$name.maxrss" "$@" >"$DIR/$name.out" 2>"$DIR/$name.err" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for p in $(pgrep -g "$(ps -o pgid= "$pid" | tr -d ' ')" 2>/dev/null || true); do
      [ "$p" = "$pid" ] && continue
      rss="$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || true)"
      [ -n "$rss" ] || continue
      cmd="$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -oE 'org\.apache\.spark\.[A-Za-z.]+' | head -n 1 || true)"
      [ -n "$cmd" ] && echo "$p $cmd $rss" >>"$samples"
    done
    sleep 0.2
  done
  wait "$pid" || { echo "$name failed:" >&2; tail -n 20 "$DIR/$name.err" >&2; return 1; }
  wall="$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
  printf '%-10s wall %6.1f s; peak RSS: main process %d MiB' "$name" "$wall" \
    "$(($(tail -n 1 "$DIR/$name.maxrss") / 1024))"
  awk '{ if ($3 > m[$1 " " $2]) m[$1 " " $2] = $3 } END { for (k in m) { split(k, a, " "); printf "; %s (pid %s) %d MiB", a[2], a[1], m[k] / 1024 } }' "$samples"
  echo
}

set -m # the measured commands in their own process groups
SPARK=("$SPARK_SUBMIT" --master "$MASTER" --conf spark.ui.enabled=false --conf spark.log.level=WARN
  --driver-memory 4g --jars "$JAVA_JAR" --files "$JNI"
  --class org.apache.paimon.cleanup.spark.RemoveOrphanFiles "$SPARK_JAR")
ARGS=(--no-writers-running --older-than-ms "$CUTOFF" --json)
measure cli-dry "$CLI" remove-orphan-files "$T" "${ARGS[@]}" --dry-run
measure spark-dry "${SPARK[@]}" "$T" "${ARGS[@]}" --dry-run ${PARALLELISM:+--parallelism "$PARALLELISM"}
grep -E '^remove-orphan-files:' "$DIR/spark-dry.err" || true
python3 - "$DIR/cli-dry.out" "$DIR/spark-dry.out" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
pa = {p["path"] for p in a["deletion"]["paths"]}
pb = {p["path"] for p in b["deletion"]["paths"]}
print(f"dry runs: CLI {len(pa)} files, Spark {len(pb)} files, identical: {pa == pb}; "
      f"candidates {a['candidates']} / {b['candidates']}; CLI elapsed_ms {a['elapsed_ms']}")
sys.exit(0 if pa == pb else 1)
EOF
