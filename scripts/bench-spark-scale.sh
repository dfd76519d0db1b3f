#!/usr/bin/env bash
# Scale run of the Spark orphan job (bindings/spark RemoveOrphanFiles, the sharded decision) on
# metadata-only tables: paimon-gen --metadata-only writes manifests that reference data files
# that are never created, so the references grow past the disk's inodes. For each size of the
# growth series it generates a table, then runs the job in a dry run with the driver capped and
# records the wall time, the driver's heap and resident set as the job logs them after the
# decision, and the peak RSS of the whole spark-submit process tree.
#
#   scripts/bench-spark-scale.sh [REFS_IN_MILLIONS...]       default: 1 5 10 25 50
#
# Environment:
#   SHARDS           shards of the decision (default 64)
#   MASTER           Spark master (default local[2]: one JVM holds the driver and the
#                    executors, so its RSS is an upper bound of the driver's; local-cluster[2,1,1024]
#                    separates them where the Spark distribution supports it)
#   DRIVER_MEMORY    spark-submit --driver-memory (default 512m)
#   FILES_PER_COMMIT data files per commit (default 1000); snapshots = refs / files per commit
#   WORK             where the tables go (default: a temporary directory, removed afterwards;
#                    needs ~110 bytes of manifest per reference)
#   PAIMON_CLEANUP_BUILD_DIR, PAIMON_SPARK_VENV as scripts/test-spark.sh
# Output: one line per size, `refs=<n> gen_s=<s> job_s=<s> driver_heap_mb=<m> driver_rss_mb=<m>
# peak_rss_mb=<m> manifest_mb=<m>`, and the same as JSON lines in $WORK/results.jsonl.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1 5 10 25 50)
SHARDS="${SHARDS:-64}"
MASTER="${MASTER:-local[2]}"
DRIVER_MEMORY="${DRIVER_MEMORY:-512m}"
FILES_PER_COMMIT="${FILES_PER_COMMIT:-1000}"
BUILD_DIR="${PAIMON_CLEANUP_BUILD_DIR:-$ROOT/build/c-abi}"
KEEP_WORK=1
if [ -z "${WORK:-}" ]; then
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-bench-spark.XXXXXX")"
  KEEP_WORK=0
fi
mkdir -p "$WORK"
cleanup() { [ "$KEEP_WORK" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT

out="$(bash "$ROOT/scripts/setup-spark.sh")" || { echo "setup-spark.sh failed" >&2; exit 1; }
SPARK_JARS="$(sed -n 's/^SPARK_JARS=//p' <<<"$out")"
SPARK_SUBMIT="$(sed -n 's/^SPARK_SUBMIT=//p' <<<"$out")"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_DEFAULT_FEATURES=ON \
  "-DPAIMON_CLEANUP_SPARK_JARS=$SPARK_JARS" >/dev/null || exit 1
cmake --build "$BUILD_DIR" -j "${JOBS:-2}" \
  --target paimon_cleanup_jni paimon_cleanup_java paimon_cleanup_spark >/dev/null || exit 1
cargo build --release --bin paimon-gen >/dev/null 2>&1 || { echo "cargo build failed" >&2; exit 1; }
GEN="$ROOT/target/release/paimon-gen"
JNI="$BUILD_DIR/bindings/java/libpaimon_cleanup_jni.so"
JAVA_JAR="$BUILD_DIR/bindings/java/paimon-cleanup-java.jar"
SPARK_JAR="$BUILD_DIR/bindings/spark/paimon-cleanup-spark.jar"

# peak RSS (MB) of a command and its children: GNU time's maximum resident set of the process
# that waited longest, which for spark-submit is the JVM (local mode: driver and executors).
for m in "${SIZES[@]}"; do
  refs=$((m * 1000000))
  snapshots=$(((refs + FILES_PER_COMMIT - 1) / FILES_PER_COMMIT))
  t="$WORK/t-${m}m"
  rm -rf "$t"
  g0=$(date +%s.%N)
  # No compaction, overwrite, drop or tags: every data file stays referenced by the latest
  # snapshot, so the references are the files the manifests name.
  "$GEN" "$t" --metadata-only --snapshots "$snapshots" --files-per-commit "$FILES_PER_COMMIT" \
    --partitions 64 --buckets 4 --compact-every 0 --overwrite-every 0 --drop-every 0 --tags 0 \
    --consumers 0 --branch none --seed 7 >"$WORK/gen-${m}m.json" 2>"$WORK/gen-${m}m.err" ||
    { echo "paimon-gen failed for ${m} M: $(tail -n 3 "$WORK/gen-${m}m.err")" >&2; exit 1; }
  g1=$(date +%s.%N)
  manifest_mb=$(du -sm "$t/manifest" | cut -f1)
  j0=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$WORK/time-${m}m" \
    "$SPARK_SUBMIT" --master "$MASTER" --conf spark.ui.enabled=false --conf spark.log.level=WARN \
    --driver-memory "$DRIVER_MEMORY" --jars "$JAVA_JAR" --files "$JNI" \
    --class org.apache.paimon.cleanup.spark.RemoveOrphanFiles "$SPARK_JAR" "$t" --dry-run \
    --no-writers-running --older-than-ms "$(($(date +%s) * 1000))" --shards "$SHARDS" --json \
    >"$WORK/job-${m}m.out" 2>"$WORK/job-${m}m.err" ||
    { echo "the job failed for ${m} M: $(grep -E '^error' "$WORK/job-${m}m.err" | tail -n 3)" >&2; exit 1; }
  j1=$(date +%s.%N)
  line="$(grep '^remove-orphan-files: decide:' "$WORK/job-${m}m.err" | tail -n 1)"
  heap="$(sed -n 's/.*heap used \([0-9]*\) MB.*/\1/p' <<<"$line")"
  rss="$(sed -n 's/.*VmRSS \([0-9]*\) MB.*/\1/p' <<<"$line")"
  peak=$(($(cat "$WORK/time-${m}m") / 1024))
  gen_s=$(awk "BEGIN{printf \"%.0f\", $g1-$g0}")
  job_s=$(awk "BEGIN{printf \"%.0f\", $j1-$j0}")
  echo "refs=${refs} gen_s=${gen_s} job_s=${job_s} driver_heap_mb=${heap:-?} driver_rss_mb=${rss:-?} peak_rss_mb=${peak} manifest_mb=${manifest_mb}"
  printf '{"refs":%d,"gen_s":%s,"job_s":%s,"driver_heap_mb":"%s","driver_rss_mb":"%s","peak_rss_mb":%d,"manifest_mb":%d,"shards":%d,"master":"%s"}\n' \
    "$refs" "$gen_s" "$job_s" "${heap:-}" "${rss:-}" "$peak" "$manifest_mb" "$SHARDS" "$MASTER" \
    >>"$WORK/results.jsonl"
  rm -rf "$t"
done
