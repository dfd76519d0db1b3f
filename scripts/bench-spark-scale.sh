#!/usr/bin/env bash
# Scale run of the Spark jobs (bindings/spark) on metadata-only tables: paimon-gen
# --metadata-only writes manifests that reference data files that are never created, so the
# references grow past the disk's inodes. For each size of the growth series it generates a
# table, runs the job in a dry run with the driver capped under each master of MASTERS, and
# records the wall times, the driver's heap and resident set, the executors' resident sets and
# the manifest bytes; then it removes the table.
#
#   JOB=orphan: RemoveOrphanFiles (the sharded decision, --shards) on a table without
#     compaction: every data file stays referenced by the latest snapshot.
#   JOB=expire: ExpireSnapshots on a table with a compaction every COMPACT_EVERY snapshots (so
#     the expired snapshots free data files), retaining RETAIN_PCT % of the snapshots.
#
#   scripts/bench-spark-scale.sh [REFS_IN_MILLIONS...]       default: 1 5 10 25 50 (0.02: 20,000)
#
# Environment:
#   JOB              orphan (default) or expire
#   SHARDS           shards of the orphan decision (default 64)
#   ORPHAN_ARGS      more RemoveOrphanFiles arguments (e.g. "--parallelism 8")
#   EXPIRY_ARGS      more ExpireSnapshots arguments (e.g. "--shards 64" once expiry is sharded)
#   PARALLELISM_PER_M  --parallelism of each job = size in millions x this (at least 2): a
#                    stage-1 task merges 1/parallelism of the table's references, so scaling the
#                    parallelism with the size keeps each task's share (and executor) constant
#   REUSE_TABLES=1   keep a table that $WORK already holds with its generator report
#   COMPACT_EVERY    JOB=expire: a compaction every n-th snapshot (default 10)
#   RETAIN_PCT       JOB=expire: snapshots retained, % (default 10; --retain-min = --retain-max)
#   MASTERS          Spark masters, space-separated, each run on the same table (default
#                    $MASTER or local[2]). local[2]: one JVM holds the driver and the executors,
#                    so its RSS bounds both; local-cluster[2,1,1024]: two executor JVMs of 1 GB,
#                    which separates the driver's figures from the executors'
#   DRIVER_MEMORY    spark-submit --driver-memory (default 512m)
#   EXECUTOR_MEMORY  the executors' heap (default 1g), as spark.executor.memory: spark-submit's
#                    --executor-memory does not reach local-cluster's executors (their heap
#                    stayed 1 GB); local-cluster[N,C,MB] needs MB at least this
#   FILES_PER_COMMIT data files per commit (default 1000); snapshots = refs / files per commit
#                    (10000 at 50 M keeps 5,000 snapshots; the generator writes 50 M references
#                    in ~8 min on a loaded 2-core machine)
#   WORK             where tables, logs and results.jsonl go (default: a temporary directory,
#                    removed afterwards; needs ~95 MB of manifests per million references)
#   PAIMON_CLEANUP_BUILD_DIR, PAIMON_SPARK_VENV as scripts/test-spark.sh
#   PAIMON_GEN       a prebuilt paimon-gen (default: <repo>/target/release/paimon-gen, built here)
#   SKIP_BUILD=1     use the artifacts in PAIMON_CLEANUP_BUILD_DIR and PAIMON_GEN as they are
#                    (no cmake, no cargo): a release build is long on a loaded machine
#
# Measured per job: driver_heap_mb / driver_rss_mb (the orphan job logs them after the
# decision), driver_gc_live_mb (the largest heap in use after a collection, from -Xlog:gc),
# driver_peak_rss_mb and exec_peak_rss_mb / exec_sum_peak_rss_mb (the process tree sampled every
# second), exec_gc_live_mb, peak_rss_mb (GNU time: the largest process), the job's stage lines
# (units, summary bytes, stage times) and its report's counts.
# Output: one line per size and master, and the same as JSON lines in $WORK/results.jsonl.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1 5 10 25 50)
SHARDS="${SHARDS:-64}"
JOB="${JOB:-orphan}"
case "$JOB" in orphan | expire) ;; *) echo "JOB is orphan or expire, not '$JOB'" >&2; exit 2 ;; esac
# shellcheck disable=SC2206
MASTERS=(${MASTERS:-${MASTER:-local[2]}})
EXECUTOR_MEMORY="${EXECUTOR_MEMORY:-1g}"
ORPHAN_ARGS="${ORPHAN_ARGS:-}"
EXPIRY_ARGS="${EXPIRY_ARGS:-}"
COMPACT_EVERY="${COMPACT_EVERY:-10}"
PARALLELISM_PER_M="${PARALLELISM_PER_M:-}"
REUSE_TABLES="${REUSE_TABLES:-0}"
RETAIN_PCT="${RETAIN_PCT:-10}"
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
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_DEFAULT_FEATURES=ON \
    "-DPAIMON_CLEANUP_SPARK_JARS=$SPARK_JARS" >/dev/null || exit 1
  cmake --build "$BUILD_DIR" -j "${JOBS:-2}" \
    --target paimon_cleanup_jni paimon_cleanup_java paimon_cleanup_spark >/dev/null || exit 1
fi
GEN="${PAIMON_GEN:-$ROOT/target/release/paimon-gen}"
if [ -z "${PAIMON_GEN:-}" ] && [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release --bin paimon-gen >/dev/null 2>&1 || { echo "cargo build failed" >&2; exit 1; }
fi
[ -x "$GEN" ] || { echo "no generator at $GEN (set PAIMON_GEN or drop SKIP_BUILD)" >&2; exit 1; }
JNI="$BUILD_DIR/bindings/java/libpaimon_cleanup_jni.so"
JAVA_JAR="$BUILD_DIR/bindings/java/paimon-cleanup-java.jar"
SPARK_JAR="$BUILD_DIR/bindings/spark/paimon-cleanup-spark.jar"

# Process tree of a running job, sampled every second until it exits: the peak RSS (MB) of the
# driver JVM (the java process running SparkSubmit) and of the executor JVMs (the processes
# running CoarseGrainedExecutorBackend, present with local-cluster or a real cluster): the
# largest single executor and the largest sum over them. Writes "driver exec_max exec_sum" to $2
# after every sample, so the file holds the peaks once the job is gone.
sample_tree() {
  local root="$1" out="$2" d=0 em=0 es=0 line
  while kill -0 "$root" 2>/dev/null; do
    line="$(ps -eo pid=,ppid=,rss=,args= | awk -v root="$root" '
      { pid[NR]=$1; ppid[NR]=$2; rss[NR]=$3; a=$0; sub(/^ *[0-9]+ +[0-9]+ +[0-9]+ +/, "", a); args[NR]=a }
      END {
        tree[root]=1; changed=1
        while (changed) { changed=0; for (i=1;i<=NR;i++) if (!(pid[i] in tree) && (ppid[i] in tree)) { tree[pid[i]]=1; changed=1 } }
        d=0; em=0; es=0
        for (i=1;i<=NR;i++) if (pid[i] in tree) {
          if (args[i] ~ /CoarseGrainedExecutorBackend/) { es+=rss[i]; if (rss[i]>em) em=rss[i] }
          else if (args[i] ~ /SparkSubmit/ && rss[i]>d) d=rss[i]
        }
        printf "%d %d %d\n", d/1024, em/1024, es/1024
      }')"
    read -r cd cem ces <<<"$line"
    [ "${cd:-0}" -gt "$d" ] && d=$cd
    [ "${cem:-0}" -gt "$em" ] && em=$cem
    [ "${ces:-0}" -gt "$es" ] && es=$ces
    echo "$d $em $es" >"$out"
    sleep 1
  done
}

# The largest heap in use after a collection (MB) in a JVM's -Xlog:gc file(s): the live set the
# JVM kept, a lower bound of what it needs (heap in use before a collection includes garbage).
gc_after_max() {
  cat "$@" 2>/dev/null | sed -nE 's/.* [0-9]+M->([0-9]+)M\([0-9]+M\).*/\1/p' | sort -n | tail -n 1
}

# Runs one job ($1: orphan or expire) on table $2 under master $3; tag $4 names its files.
run_job() {
  local job="$1" t="$2" master="$3" tag="$4" class extra
  if [ "$job" = orphan ]; then
    class=org.apache.paimon.cleanup.spark.RemoveOrphanFiles
    # shellcheck disable=SC2206
    extra=(--json --no-writers-running --older-than-ms "$(($(date +%s) * 1000))" --shards "$SHARDS" "${par_args[@]}" $ORPHAN_ARGS)
  else
    class=org.apache.paimon.cleanup.spark.ExpireSnapshots
    # shellcheck disable=SC2206
    # The text report (a dry run's --json document lists every path: millions of lines here);
    # --max-deletes lifts snapshot.expire.limit (50 by default) so that one run expires them all.
    extra=(--retain-min "$RETAIN" --retain-max "$RETAIN" --max-deletes "$snapshots" "${par_args[@]}"
      --older-than-ms "$(($(date +%s) * 1000))" $EXPIRY_ARGS)
  fi
  rm -f "$WORK/gc-$tag"-*.log
  /usr/bin/time -f '%M' -o "$WORK/time-$tag" \
    "$SPARK_SUBMIT" --master "$master" --conf spark.ui.enabled=false --conf spark.log.level=WARN \
    --driver-memory "$DRIVER_MEMORY" --executor-memory "$EXECUTOR_MEMORY" \
    --conf "spark.executor.memory=$EXECUTOR_MEMORY" \
    --driver-java-options "-Xlog:gc:file=$WORK/gc-$tag-driver.log" \
    --conf "spark.executor.extraJavaOptions=-Xlog:gc:file=$WORK/gc-$tag-exec-%p.log" \
    --jars "$JAVA_JAR" --files "$JNI" --class "$class" "$SPARK_JAR" "$t" --dry-run \
    "${extra[@]}" >"$WORK/job-$tag.out" 2>"$WORK/job-$tag.err" &
  local pid=$!
  sample_tree "$pid" "$WORK/rss-$tag" &
  local spid=$!
  wait "$pid"
  local rc=$?
  wait "$spid" 2>/dev/null
  return $rc
}

for m in "${SIZES[@]}"; do
  refs=$(awk "BEGIN{printf \"%d\", $m * 1000000}")
  snapshots=$(((refs + FILES_PER_COMMIT - 1) / FILES_PER_COMMIT))
  t="$WORK/t-$JOB-${m}m"
  par="" par_args=()
  if [ -n "$PARALLELISM_PER_M" ]; then
    par=$(awk "BEGIN{p=int($m * $PARALLELISM_PER_M + 0.5); print (p < 2 ? 2 : p)}")
    par_args=(--parallelism "$par")
  fi
  if [ "$JOB" = orphan ]; then
    # No compaction, overwrite, drop or tags: every data file stays referenced by the latest
    # snapshot, so the references are the files the manifests name.
    compact=0
  else
    # Compactions, so that expiring the old snapshots has files to delete (the compacted-away
    # inputs only they reference); RETAIN_PCT of the snapshots are retained.
    compact="$COMPACT_EVERY"
  fi
  RETAIN=$(((snapshots * RETAIN_PCT + 99) / 100))
  if [ "$REUSE_TABLES" = 1 ] && [ -s "$WORK/gen-$JOB-${m}m.json" ] && [ -d "$t" ]; then
    echo "reusing $t" >&2
  else
    rm -rf "$t"
    "$GEN" "$t" --metadata-only --snapshots "$snapshots" --files-per-commit "$FILES_PER_COMMIT" \
      --partitions 64 --buckets 4 --compact-every "$compact" --overwrite-every 0 --drop-every 0 \
      --tags 0 --consumers 0 --branch none --seed 7 >"$WORK/gen-$JOB-${m}m.json" 2>"$WORK/gen-$JOB-${m}m.err" ||
      { echo "paimon-gen failed for ${m} M: $(tail -n 3 "$WORK/gen-$JOB-${m}m.err")" >&2; exit 1; }
  fi
  # The generator's own elapsed time (also right for a reused table).
  gen_s="$(sed -nE 's/.*"elapsed_ms": ([0-9]+).*/\1/p' "$WORK/gen-$JOB-${m}m.json" | awk '{printf "%.0f", $1 / 1000}')"
  manifest_mb=$(du -sm "$t/manifest" | cut -f1)
  referenced="$(sed -nE 's/.*"referenced_files": ([0-9]+).*/\1/p' "$WORK/gen-$JOB-${m}m.json")"
  for master in "${MASTERS[@]}"; do
    mtag="$(tr -c 'A-Za-z0-9\n' '_' <<<"$master")"
    tag="$JOB-${m}m-$mtag"
    j0=$(date +%s.%N)
    if ! run_job "$JOB" "$t" "$master" "$tag"; then
      echo "the $JOB job failed for ${m} M ($master): $(grep -E '^error|Exception' "$WORK/job-$tag.err" | tail -n 3)" >&2
      read -r drv_peak exec_max exec_sum <"$WORK/rss-$tag"
      gc_driver="$(gc_after_max "$WORK/gc-$tag-driver.log")"
      cause="$(grep -oE 'OutOfMemoryError[^"]*|SparkException: [^"]*' "$WORK/job-$tag.err" | head -n 1)"
      # The stage the job reached: a job failing after its decision (e.g. in the final report)
      # still logged the decision's driver heap.
      reached="$(grep -oE '(plan|protect|decide): [0-9]+ [a-z ]*(units|shards)|summary [0-9]+ bytes|\([0-9]+ ms\)|heap used [0-9]+ MB|VmHWM [0-9]+ MB' "$WORK/job-$tag.err" | tr -d '()' | tr '\n' ',' | sed 's/,$//')"
      printf '{"job":"%s","refs":%d,"master":"%s","parallelism":"%s","failed":true,"cause":"%s","reached":"%s","driver_gc_live_mb":"%s","driver_peak_rss_mb":%d,"exec_peak_rss_mb":%d}\n' \
        "$JOB" "$refs" "$master" "${par:-}" "$cause" "$reached" "${gc_driver:-}" "${drv_peak:-0}" "${exec_max:-0}" >>"$WORK/results.jsonl"
      continue
    fi
    j1=$(date +%s.%N)
    job_s=$(awk "BEGIN{printf \"%.0f\", $j1-$j0}")
    # Both jobs log the driver's heap and RSS after the decision (the sharded expiry job only).
    line="$(grep -E '^(remove-orphan-files|expire-snapshots): decide:' "$WORK/job-$tag.err" | tail -n 1)"
    heap="$(sed -n 's/.*heap used \([0-9]*\) MB.*/\1/p' <<<"$line")"
    rss="$(sed -n 's/.*VmRSS \([0-9]*\) MB.*/\1/p' <<<"$line")"
    peak=$(($(cat "$WORK/time-$tag") / 1024))
    read -r drv_peak exec_max exec_sum <"$WORK/rss-$tag"
    gc_driver="$(gc_after_max "$WORK/gc-$tag-driver.log")"
    gc_exec="$(gc_after_max "$WORK"/gc-"$tag"-exec-*.log)"
    # The job's own stage lines: units planned, the summary the driver merged, stage times.
    stages="$(grep -oE '(plan|protect|decide): [0-9]+ [a-z ]*(units|shards)|summary [0-9]+ bytes|\([0-9]+ ms\)' "$WORK/job-$tag.err" | tr -d '()' | tr '\n' ',' | sed 's/,$//')"
    if [ "$JOB" = orphan ]; then
      summary="$(grep -oE '"(versions|candidates|orphans)[a-z_]*": ?[0-9]+' "$WORK/job-$tag.out" | tr -d ' "' | tr '\n' ' ')"
    else
      summary="$(grep -E '^would expire|^  Data ' "$WORK/job-$tag.out" | tr -s ' ' | tr '\n' ';')"
    fi
    echo "job=$JOB refs=$refs referenced=${referenced:-?} master=$master gen_s=$gen_s job_s=$job_s driver_heap_mb=${heap:-?} driver_rss_mb=${rss:-?} driver_gc_live_mb=${gc_driver:-?} driver_peak_rss_mb=$drv_peak exec_peak_rss_mb=$exec_max exec_sum_peak_rss_mb=$exec_sum exec_gc_live_mb=${gc_exec:-?} peak_rss_mb=$peak manifest_mb=$manifest_mb parallelism=${par:-default} stages=[$stages] $summary"
    printf '{"job":"%s","refs":%d,"referenced":"%s","snapshots":%d,"retain":%d,"master":"%s","shards":%d,"gen_s":%s,"job_s":%s,"driver_heap_mb":"%s","driver_rss_mb":"%s","driver_gc_live_mb":"%s","driver_peak_rss_mb":%d,"exec_peak_rss_mb":%d,"exec_sum_peak_rss_mb":%d,"exec_gc_live_mb":"%s","peak_rss_mb":%d,"manifest_mb":%d,"parallelism":"%s","extra":"%s","stages":"%s","summary":"%s"}\n' \
      "$JOB" "$refs" "${referenced:-}" "$snapshots" "$RETAIN" "$master" "$SHARDS" "$gen_s" "$job_s" \
      "${heap:-}" "${rss:-}" "${gc_driver:-}" "$drv_peak" "$exec_max" "$exec_sum" "${gc_exec:-}" \
      "$peak" "$manifest_mb" "${par:-}" "$([ "$JOB" = orphan ] && echo "$ORPHAN_ARGS" || echo "$EXPIRY_ARGS")" "$stages" "$summary" \
      >>"$WORK/results.jsonl"
  done
  rm -rf "$t"
done
