#!/usr/bin/env bash
# Tests the Spark job (bindings/spark, org.apache.paimon.cleanup.spark.RemoveOrphanFiles) with
# spark-submit --master local[2] from pyspark==4.3.0 (scripts/setup-spark.sh), against the CLI:
#   1. build: cmake (the JNI library, paimon-cleanup-java.jar, paimon-cleanup-spark.jar and its
#      argument tests, javac against pyspark's jars) + the CLI and paimon-gen (cargo, release)
#   2. the job's arguments and --older-than forms (plain java, no Spark)
#   3. a paimon-gen table (tags, a branch, orphans + planted orphans, all 3 days old, and one young
#      orphan) in three identical copies:
# The job decides in shards (--shards, default the parallelism): the plan units' results are
# split by shard and shuffled, each shard task decides its own files (runs below use 2 to 7).
#      a. copy "cli": a dry run of the CLI and of the job print the same text report, nothing
#         changes; then paimon-cleanup remove-orphan-files (the reference)
#      b. copy "spark": the job with a delete unit failing after its deletions (injected); the job
#         fails, every file a version needs is still there (tests/py/needed_files.py) and only
#         files the CLI deleted are gone; the rerun succeeds; afterwards both copies hold exactly
#         the same files, both runs reported the same cut-off for the same timestamp text, the
#         deleted sets add up to the CLI's, inspect reads the table, nothing needed is missing,
#         pypaimon plans every version (tests/py/live_files.py) to the same files as before
#      c. copy "bad": a manifest a version needs is deleted; the job fails, nothing is deleted
#   4. the loopback S3 server (moto, tests/py/s3_server.py): the table uploaded twice; the CLI on
#      one, the job on the other (credentials through the Spark configuration's spark.hadoop.*
#      keys; local[2,2]: a task may be retried once, and the first attempt of a plan unit's task
#      fails, injected): same deleted set, same objects left, inspect reads the table
#   5. ExpireSnapshots (snapshot expiry as units) on a generated table with compactions, tags and
#      a branch: the same report and files as the CLI's expire-snapshots, without shards (the
#      driver decides) and with --shards 2 and 7 (the candidates shuffled by shard, each shard
#      task decides); with --shards 7 --report-dir (a dry run, then the real run) the tasks' path
#      files hold exactly the CLI's data stage (disjoint), the driver's its sample and metadata,
#      and the printed counts are the CLI's; with --shards 2 a delete unit failing after its deletions fails the job
#      with only files the CLI deletes gone (no metadata) and nothing a version needs missing,
#      and the rerun (--shards 7) converges; an unreadable manifest fails the job with nothing
#      deleted, sharded and not; on S3 (a candidate unit's first attempt failing) the same
#      objects and report as the CLI, without shards and with 2 and 7
# spark-submit runs 16 times (~20 s each).
#
# Environment:
#   PAIMON_PYTHON            the harness venv's python (scripts/setup-python.sh): moto, fastavro
#   PAIMON_CLEANUP_BUILD_DIR build directory (default: build/c-abi, shared with test-c.sh)
#   PAIMON_SPARK_VENV        the pyspark venv (default: .venv-spark)
#   JOBS                     parallel build jobs (default: number of CPUs)
# Every step runs even if an earlier one failed (a step whose inputs are missing fails too). The
# closing line: `spark: N passed, M failed, K skipped`.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '\n==> %s\n' "$*"; }

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
PY="${PAIMON_PYTHON:-$ROOT/.venv/bin/python}"
BUILD_DIR="${PAIMON_CLEANUP_BUILD_DIR:-$ROOT/build/c-abi}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-test-spark.XXXXXX")"
S3_PID=""
cleanup() {
  [ -n "$S3_PID" ] && kill "$S3_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=scripts/lib/summary.sh
. "$ROOT/scripts/lib/summary.sh"
run_step() {
  local name="$1" t0=$SECONDS
  shift
  log "$name"
  if "$@"; then
    echo "ok: $name ($((SECONDS - t0)) s)"
    suite_pass "$name"
  else
    echo "FAILED: $name" >&2
    suite_fail "$name"
  fi
}

# --- 1. Spark, build ---------------------------------------------------------------------------
SPARK_JARS=""
SPARK_SUBMIT=""
setup_spark() {
  local out
  out="$(bash "$ROOT/scripts/setup-spark.sh")" || return 1
  SPARK_JARS="$(sed -n 's/^SPARK_JARS=//p' <<<"$out")"
  SPARK_SUBMIT="$(sed -n 's/^SPARK_SUBMIT=//p' <<<"$out")"
  [ -d "$SPARK_JARS" ] && [ -x "$SPARK_SUBMIT" ]
}
run_step "pyspark==4.3.0 (scripts/setup-spark.sh)" setup_spark

# The library with cargo's default features, as test-c.sh builds it: the CLI below reuses it.
run_step "cmake configure (PAIMON_CLEANUP_SPARK_JARS)" cmake -S "$ROOT" -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_DEFAULT_FEATURES=ON \
  "-DPAIMON_CLEANUP_SPARK_JARS=$SPARK_JARS"
run_step "cmake build (JNI library, Java and Spark jars)" cmake --build "$BUILD_DIR" -j "$JOBS" \
  --target paimon_cleanup_jni paimon_cleanup_java paimon_cleanup_spark paimon_cleanup_spark_tests
run_step "cargo build --release (paimon-cleanup, paimon-gen)" \
  cargo build --release --bin paimon-cleanup --bin paimon-gen
CLI="$ROOT/target/release/paimon-cleanup"
GEN="$ROOT/target/release/paimon-gen"
JNI="$BUILD_DIR/bindings/java/libpaimon_cleanup_jni.so"
JAVA_JAR="$BUILD_DIR/bindings/java/paimon-cleanup-java.jar"
SPARK_JAR="$BUILD_DIR/bindings/spark/paimon-cleanup-spark.jar"
SPARK_TEST_JAR="$BUILD_DIR/bindings/spark/paimon-cleanup-spark-tests.jar"

# --- 2. arguments ------------------------------------------------------------------------------
run_step "job arguments and --older-than forms (JobArgsTest)" \
  java -cp "$SPARK_TEST_JAR:$SPARK_JAR:$JAVA_JAR:$SPARK_JARS/*" \
  org.apache.paimon.cleanup.spark.JobArgsTest

# submit <log name> <job arguments...>: one spark-submit, local[2], the native library shipped
# with --files as on a cluster. stdout -> $WORK/<name>.out, stderr -> $WORK/<name>.err.
submit() {
  local name="$1" rc
  shift
  "$SPARK_SUBMIT" --master "$SUBMIT_MASTER" --conf spark.ui.enabled=false \
    --conf spark.log.level=WARN --driver-memory 1g \
    "${SUBMIT_CONF[@]+"${SUBMIT_CONF[@]}"}" \
    --jars "$JAVA_JAR" --files "$JNI" \
    --class org.apache.paimon.cleanup.spark.RemoveOrphanFiles "$SPARK_JAR" \
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
  grep -E '^(remove-orphan-files:|error:)' "$WORK/$name.err" || true
  return $rc
}
SUBMIT_CONF=()
SUBMIT_MASTER='local[2]' # no task retries: a failed task fails the job

# files <dir>: every regular file, relative, sorted.
files() { (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }

# missing_needed <table> [--from-snapshot N]: succeeds when every file a version of the table
# needs is on disk (with --from-snapshot: leaving out the main branch's snapshots below N).
missing_needed() {
  local out
  out="$("$PY" "$ROOT/tests/py/needed_files.py" "$@")" || return 1
  "$PY" -c 'import json,sys; d=json.load(sys.stdin); m=d["missing"]; print("needed files missing:", m) if m else None; sys.exit(1 if m else 0)' <<<"$out"
}

# --- 3. local table ----------------------------------------------------------------------------
BASE="$WORK/base/t"
OLD="@$(($(date +%s) - 3 * 24 * 3600))"
# A timestamp two days back, local time, in Java's form: the CLI and the job must read it alike.
CUTOFF_TEXT="$(date -d '2 days ago' '+%Y-%m-%d %H:%M:%S')"
make_table() {
  "$GEN" "$BASE" --snapshots 16 --partitions 3 --files-per-commit 3 --tags 2 --branch b \
    --branch-at 8 --branch-commits 3 --orphans 5 --seed 20 >/dev/null || return 1
  local bucket
  bucket="$(find "$BASE" -type d -name 'bucket-*' | LC_ALL=C sort | head -n 1)"
  [ -n "$bucket" ] || { echo "no bucket directory in the generated table" >&2; return 1; }
  printf 'planted' >"$bucket/data-planted-orphan-0.parquet"
  printf 'planted' >"$BASE/manifest/manifest-planted-orphan-0"
  printf 'planted' >"$BASE/manifest/manifest-list-planted-orphan-0"
  mkdir -p "$BASE/index" && printf 'planted' >"$BASE/index/index-planted-orphan-0"
  find "$BASE" -exec touch -h -d "$OLD" {} +
  # Young: after the cut-off, so no run may delete it.
  printf 'young' >"$bucket/data-young-orphan-0.parquet"
  missing_needed "$BASE" || return 1
  for c in cli spark bad; do
    mkdir -p "$WORK/$c" && cp -a "$BASE" "$WORK/$c/t" || return 1
  done
  files "$BASE" >"$WORK/base.files"
  # pypaimon's plan of every version (snapshots, tags, the branch), before any cleanup.
  "$PY" "$ROOT/tests/py/live_files.py" "$BASE" --all-versions --files-only \
    >"$WORK/base.pypaimon.json" || { echo "pypaimon cannot plan the generated table" >&2; return 1; }
  echo "table: $(wc -l <"$WORK/base.files") files, cut-off '$CUTOFF_TEXT'"
}
run_step "generated table (paimon-gen: tags, a branch, orphans) in 3 copies" make_table

dry_run_text() {
  local t="$WORK/cli/t"
  "$CLI" remove-orphan-files "$t" --older-than "$CUTOFF_TEXT" --dry-run --list >"$WORK/cli-dry.txt" &&
    submit dry "$t" --older-than "$CUTOFF_TEXT" --dry-run --parallelism 2 || return 1
  diff -u "$WORK/cli-dry.txt" "$WORK/dry.out" ||
    { echo "the job's text report differs from the CLI's" >&2; return 1; }
  grep -q '^  would delete ' "$WORK/dry.out" || { echo "the dry run lists nothing" >&2; return 1; }
  files "$t" >"$WORK/dry.files"
  diff -u "$WORK/base.files" "$WORK/dry.files" || { echo "the dry run changed the table" >&2; return 1; }
}
run_step "dry run: the job prints the CLI's text report, changes nothing" dry_run_text

cli_reference() {
  "$CLI" remove-orphan-files "$WORK/cli/t" --older-than "$CUTOFF_TEXT" --json >"$WORK/cli.json" &&
    files "$WORK/cli/t" >"$WORK/cli.files" &&
    comm -23 "$WORK/base.files" "$WORK/cli.files" >"$WORK/cli.deleted" &&
    echo "CLI deleted $(wc -l <"$WORK/cli.deleted") files" &&
    [ -s "$WORK/cli.deleted" ] &&
    ! grep -q 'young' "$WORK/cli.deleted"
}
run_step "CLI remove-orphan-files on copy 'cli' (reference)" cli_reference

failed_delete_unit() {
  local t="$WORK/spark/t"
  if PAIMON_CLEANUP_SPARK_FAIL_UNIT=delete:0 submit failed --older-than "$CUTOFF_TEXT" "$t" \
    --parallelism 2 --shards 3 --json; then
    echo "the job succeeded although a delete unit failed" >&2
    return 1
  fi
  grep -q 'injected failure' "$WORK/failed.err" ||
    { echo "the job did not fail through the injected failure:" >&2; tail -n 20 "$WORK/failed.err" >&2; return 1; }
  files "$t" >"$WORK/failed.files"
  comm -23 "$WORK/base.files" "$WORK/failed.files" >"$WORK/failed.deleted"
  echo "deleted before the failure: $(wc -l <"$WORK/failed.deleted") files"
  [ -z "$(comm -23 "$WORK/failed.deleted" "$WORK/cli.deleted")" ] ||
    { echo "the failed job deleted files the CLI keeps" >&2; return 1; }
  missing_needed "$t"
}
run_step "job with a failing delete unit: fails, table safe" failed_delete_unit

rerun_converges() {
  local t="$WORK/spark/t"
  submit rerun --older-than "$CUTOFF_TEXT" "$t" --parallelism 2 --shards 5 --json || return 1
  # The decision ran sharded: the units' results were split and shuffled, not gathered.
  grep -q 'split into 5 shards and shuffled' "$WORK/rerun.err" &&
    grep -q '^remove-orphan-files: decide: 5 shards' "$WORK/rerun.err" ||
    { echo "the rerun did not decide in 5 shards" >&2; return 1; }
  files "$t" >"$WORK/spark.files"
  diff -u "$WORK/cli.files" "$WORK/spark.files" ||
    { echo "the job left other files than the CLI" >&2; return 1; }
  # The reports: the same cut-off from the same text; the rerun deleted exactly what the CLI
  # deleted minus what the failed run had deleted.
  "$PY" - "$WORK/cli.json" "$WORK/rerun.out" "$WORK/cli.deleted" "$WORK/failed.deleted" <<'EOF' || return 1
import json, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
want = set(open(sys.argv[3]).read().split()) - set(open(sys.argv[4]).read().split())
got = {p["path"] for p in job["deletion"]["paths"]}
assert cli["older_than_ms"] == job["older_than_ms"], (cli["older_than_ms"], job["older_than_ms"])
assert got == want, ("rerun deleted", sorted(got ^ want))
assert {p["path"] for p in cli["deletion"]["paths"]} == set(open(sys.argv[3]).read().split())
assert not job["deletion"]["failed"], job["deletion"]["failed"]
print(f"cut-off {job['older_than_ms']} ms in both; rerun deleted {len(got)} files")
EOF
  missing_needed "$t" && "$CLI" inspect "$t" >/dev/null || return 1
  # pypaimon plans every version to the same live files as before the cleanup.
  "$PY" "$ROOT/tests/py/live_files.py" "$t" --all-versions --files-only \
    >"$WORK/spark.pypaimon.json" || { echo "pypaimon cannot plan the cleaned table" >&2; return 1; }
  "$PY" - "$WORK/base.pypaimon.json" "$WORK/spark.pypaimon.json" <<'EOF'
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:3])
assert before == after, "pypaimon's view of the versions changed"
assert len(before) > 3, before.keys()
print(f"pypaimon plans the same live files for all {len(before)} versions")
EOF
}
run_step "rerun: converges to the CLI's result; inspect and pypaimon read the table" rerun_converges

unreadable_manifest() {
  local t="$WORK/bad/t" victim
  victim="$("$PY" "$ROOT/tests/py/needed_files.py" "$t" |
    "$PY" -c 'import json,sys; print([n for n in json.load(sys.stdin)["needed"]["manifest_dir"] if n.startswith("manifest-") and not n.startswith("manifest-list-")][0])')" ||
    return 1
  rm -f "$t/manifest/$victim"
  files "$t" >"$WORK/bad.before"
  if submit bad --older-than "$CUTOFF_TEXT" "$t" --parallelism 2 --shards 4; then
    echo "the job succeeded although manifest $victim is gone" >&2
    return 1
  fi
  files "$t" >"$WORK/bad.after"
  diff -u "$WORK/bad.before" "$WORK/bad.after" ||
    { echo "the failed job deleted files" >&2; return 1; }
  echo "job failed on missing $victim, nothing deleted"
}
run_step "unreadable metadata (a deleted manifest): the job fails, nothing deleted" unreadable_manifest

# --- 4. S3 (moto on loopback) ------------------------------------------------------------------
S3_ENDPOINT=""
start_s3() {
  mkfifo "$WORK/s3.in" || return 1
  "$PY" "$ROOT/tests/py/s3_server.py" --bucket paimon <"$WORK/s3.in" >"$WORK/s3.out" 2>"$WORK/s3.log" &
  S3_PID=$!
  exec 8>"$WORK/s3.in" # the server runs until this script ends (EOF on its stdin)
  local i port
  for i in $(seq 1 600); do
    port="$(sed -n 's/^PORT //p' "$WORK/s3.out")"
    [ -n "$port" ] && break
    kill -0 "$S3_PID" 2>/dev/null || { cat "$WORK/s3.log" >&2; return 1; }
    sleep 0.1
  done
  [ -n "$port" ] || return 1
  S3_ENDPOINT="http://127.0.0.1:$port"
}

s3_tables() {
  start_s3 || return 1
  # The generated table as it was before any cleanup, twice; then, after the cut-off, a young
  # orphan in each (object times are upload times).
  "$PY" - "$S3_ENDPOINT" "$BASE" <<'EOF' || return 1
import os, sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
base = sys.argv[2]
for root, _, names in os.walk(base):
    for n in names:
        if "young" in n:
            continue
        rel = os.path.relpath(os.path.join(root, n), base)
        for prefix in ("cli", "spark"):
            s3.upload_file(os.path.join(root, n), "paimon", f"{prefix}/t/{rel}")
EOF
  sleep 1.5
  S3_CUTOFF_MS="$(($(date +%s%3N) - 500))"
  sleep 1.5
  "$PY" - "$S3_ENDPOINT" <<'EOF'
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
for prefix in ("cli", "spark"):
    s3.put_object(Bucket="paimon", Key=f"{prefix}/t/manifest/manifest-young-orphan-0", Body=b"young")
EOF
}

s3_keys() {
  "$PY" - "$S3_ENDPOINT" "$1" <<'EOF'
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
keys = []
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="paimon", Prefix=sys.argv[2] + "/"):
    keys += [o["Key"][len(sys.argv[2]) + 1:] for o in page.get("Contents", [])]
print("\n".join(sorted(keys)))
EOF
}

s3_same_as_cli() {
  s3_tables || return 1
  local opts=(-o "s3.endpoint=$S3_ENDPOINT" -o s3.region=us-east-1 -o s3.path-style-access=true
    -o s3.allow-http=true)
  "$CLI" remove-orphan-files s3://paimon/cli/t "${opts[@]}" -o s3.access-key=test \
    -o s3.secret-key=test --no-writers-running --older-than-ms "$S3_CUTOFF_MS" --json \
    >"$WORK/s3-cli.json" || return 1
  # The job gets the credentials from the Spark configuration (Hadoop S3A keys), not from -o.
  # A plan unit's task fails in its first attempt; Spark retries it (local[2,2]).
  SUBMIT_CONF=(--conf spark.hadoop.fs.s3a.access.key=test --conf spark.hadoop.fs.s3a.secret.key=test)
  SUBMIT_MASTER='local[2,2]'
  PAIMON_CLEANUP_SPARK_FAIL_UNIT=plan:1:once submit s3 s3://paimon/spark/t "${opts[@]}" \
    --no-writers-running --older-than-ms "$S3_CUTOFF_MS" --parallelism 3 --shards 7 --json
  local rc=$?
  SUBMIT_CONF=()
  SUBMIT_MASTER='local[2]'
  [ "$rc" -eq 0 ] || return 1
  grep -q 'injected failure' "$WORK/s3.err" ||
    { echo "the plan unit's first attempt did not fail" >&2; return 1; }
  s3_keys cli >"$WORK/s3-cli.keys" && s3_keys spark >"$WORK/s3-spark.keys" || return 1
  diff -u "$WORK/s3-cli.keys" "$WORK/s3-spark.keys" ||
    { echo "the job left other objects than the CLI" >&2; return 1; }
  "$PY" - "$WORK/s3-cli.json" "$WORK/s3.out" <<'EOF' || return 1
import json, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
paths = lambda r: {p["path"] for p in r["deletion"]["paths"]}
assert paths(cli) == paths(job), sorted(paths(cli) ^ paths(job))
assert paths(cli), "nothing deleted on S3"
assert not any("young" in p for p in paths(job))
for k in ("older_than_ms", "candidates", "referenced", "vetoed"):
    assert cli[k] == job[k], (k, cli[k], job[k])
print(f"S3: both deleted the same {len(paths(job))} objects")
EOF
  grep -q 'manifest-young-orphan-0' "$WORK/s3-spark.keys" &&
    "$CLI" inspect s3://paimon/spark/t "${opts[@]}" -o s3.access-key=test -o s3.secret-key=test \
      >/dev/null
}
run_step "S3 (moto), a plan task retried: the job deletes what the CLI deletes" s3_same_as_cli

# --- 5. ExpireSnapshots (snapshot expiry as units) ------------------------------------------
# submit_expire <log name> <job arguments...>: as submit, the ExpireSnapshots class.
submit_expire() {
  local name="$1" rc
  shift
  "$SPARK_SUBMIT" --master "$SUBMIT_MASTER" --conf spark.ui.enabled=false \
    --conf spark.log.level=WARN --driver-memory 1g \
    "${SUBMIT_CONF[@]+"${SUBMIT_CONF[@]}"}" \
    --jars "$JAVA_JAR" --files "$JNI" \
    --class org.apache.paimon.cleanup.spark.ExpireSnapshots "$SPARK_JAR" \
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
  grep -E '^(expire-snapshots:|error:)' "$WORK/$name.err" | cut -c1-400 || true
  return $rc
}

XBASE="$WORK/xbase/t"
expire_table() {
  "$GEN" "$XBASE" --snapshots 30 --partitions 3 --files-per-commit 6 --compact-every 3 \
    --tags 2 --branch b --branch-at 10 --branch-commits 3 --seed 21 >/dev/null || return 1
  missing_needed "$XBASE" || return 1
  for c in x-cli x-spark x-s2 x-s7 x-rd x-fail x-bad; do
    mkdir -p "$WORK/$c" && cp -a "$XBASE" "$WORK/$c/t" || return 1
  done
  files "$XBASE" >"$WORK/xbase.files"
  X_ARGS=(--retain-min 2 --older-than-ms "$(($(date +%s%3N) - 1000))" --max-deletes 1000
    --clean-empty-dirs --json)
  "$CLI" expire-snapshots "$WORK/x-cli/t" "${X_ARGS[@]}" --dry-run >"$WORK/x-cli-dry.json" ||
    return 1
  "$CLI" expire-snapshots "$WORK/x-cli/t" "${X_ARGS[@]}" >"$WORK/x-cli.json" || return 1
  files "$WORK/x-cli/t" >"$WORK/x-cli.files"
  comm -23 "$WORK/xbase.files" "$WORK/x-cli.files" >"$WORK/x-cli.deleted"
  echo "CLI expire-snapshots deleted $(wc -l <"$WORK/x-cli.deleted") files"
  [ -s "$WORK/x-cli.deleted" ]
}
run_step "ExpireSnapshots: generated table (compactions, tags, a branch) in 6 copies; CLI reference" \
  expire_table

# same_expiry_report <cli json> <job json>: the same report but the wall time.
same_expiry_report() {
  "$PY" - "$1" "$2" <<'EOF'
import json, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
for r in (cli, job):
    r.pop("elapsed_ms")
assert cli == job, (cli, job)
assert job["snapshots_expired"] > 0 and job["deletion"]["paths"], job
print(f"both expired snapshots {job['first_expired']}..={job['last_expired']}, "
      f"{len(job['deletion']['paths'])} files")
EOF
}

# sharded_ran <log name> <shards>: the job took the sharded path with that many shards.
sharded_ran() {
  grep -q "split into $2 shards" "$WORK/$1.err" ||
    { echo "$1: the job did not decide in $2 shards" >&2; return 1; }
}

# expire_like_cli <copy> [job options...]: the job on copy <copy> leaves the CLI's files and
# prints its report.
expire_like_cli() {
  local c="$1" t="$WORK/$1/t"
  shift
  submit_expire "$c" "$t" "${X_ARGS[@]}" "$@" || return 1
  files "$t" >"$WORK/$c.files"
  diff -u "$WORK/x-cli.files" "$WORK/$c.files" ||
    { echo "ExpireSnapshots ($c) left other files than the CLI" >&2; return 1; }
  same_expiry_report "$WORK/x-cli.json" "$WORK/$c.out" &&
    missing_needed "$t" && "$CLI" inspect "$t" >/dev/null
}

expire_same_as_cli() {
  expire_like_cli x-spark --parallelism 2 || return 1
  ! grep -q "split into" "$WORK/x-spark.err" ||
    { echo "the job without --shards decided in shards" >&2; return 1; }
}
run_step "ExpireSnapshots: the CLI's expire-snapshots report and files" expire_same_as_cli

expire_sharded_same_as_cli() {
  expire_like_cli x-s2 --parallelism 2 --shards 2 && sharded_ran x-s2 2 &&
    expire_like_cli x-s7 --parallelism 3 --shards 7 && sharded_ran x-s7 7
}
run_step "ExpireSnapshots --shards 2 and 7: the CLI's report and files" expire_sharded_same_as_cli

# With --report-dir the sharded job hands the paths to the tasks: each delete unit's task writes
# <dir>/unit-<i>.txt (a dry run: each shard task <dir>/shard-<k>.txt), the driver
# <dir>/driver-paths.txt (its own deletions and the sample) and prints the counts and the sample.
# The tasks' listings are disjoint and hold exactly the CLI's data stage, the driver's the CLI's
# first 20 paths and its metadata in its order; the CLI's counts. The dry run first (nothing
# changes), then the real run.
report_dir_like_cli() {
  "$PY" - "$@" <<'EOF2'
import glob, json, os, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
pdir, prefix = sys.argv[3], sys.argv[4]
def lines(p):
    return open(p, encoding="utf-8").read().splitlines()
names = sorted(os.path.basename(f) for f in glob.glob(os.path.join(pdir, "*.txt")))
task_files = [n for n in names if n.startswith(("unit-", "shard-"))]
assert task_files and all(n.startswith(prefix) for n in task_files), names
assert set(names) == set(task_files) | {"driver-paths.txt"}, names
assert not any(".attempt-" in n for n in task_files), task_files
tasks = [p for n in task_files for p in lines(os.path.join(pdir, n))]
driver = lines(os.path.join(pdir, "driver-paths.txt"))
d = cli["deletion"]
want = [p["path"] for p in d["paths"]]
n = len(tasks)
assert len(set(tasks)) == n, "a path in two task listings"
assert sorted(tasks) == sorted(want[:n]), ("task listings", n, len(want))
assert driver == want[:min(20, n)] + want[n:], ("driver listing", len(driver), len(want) - n)
assert job["paths_elsewhere"] is True and job["paths_dir"] == pdir, job
assert job["paths_file"] == os.path.join(pdir, "driver-paths.txt"), job["paths_file"]
assert job["path_count"] == len(driver), job["path_count"]
assert job["sample_paths"] == driver[:20], job["sample_paths"]
assert job["dry_run"] == cli["deletion"]["dry_run"], job["dry_run"]
assert job["deleted"] == d["deleted"], (job["deleted"], d["deleted"])
for k in ("snapshots_expired", "first_expired", "last_expired", "earliest_after"):
    assert job[k] == cli[k], (k, job[k], cli[k])
assert job["dirs_removed"] == d["dirs_removed"] and job["failed"] == [], job
print(f"report dir ({prefix}): {n} paths in {len(task_files)} task listings and {len(driver)} "
      f"in the driver's, as the CLI's {len(want)}")
EOF2
}
expire_report_dir_same_as_cli() {
  local t="$WORK/x-rd/t" dir="$WORK/x-rd.report"
  submit_expire x-rd-dry "$t" "${X_ARGS[@]}" --dry-run --parallelism 2 --shards 7 \
    --report-dir "$dir" || return 1
  files "$t" >"$WORK/x-rd-dry.files"
  diff -u "$WORK/xbase.files" "$WORK/x-rd-dry.files" ||
    { echo "ExpireSnapshots --dry-run (x-rd) changed the table" >&2; return 1; }
  report_dir_like_cli "$WORK/x-cli-dry.json" "$WORK/x-rd-dry.out" "$dir" shard- || return 1
  submit_expire x-rd "$t" "${X_ARGS[@]}" --parallelism 2 --shards 7 --report-dir "$dir" || return 1
  sharded_ran x-rd 7 || return 1
  files "$t" >"$WORK/x-rd.files"
  diff -u "$WORK/x-cli.files" "$WORK/x-rd.files" ||
    { echo "ExpireSnapshots (x-rd) left other files than the CLI" >&2; return 1; }
  report_dir_like_cli "$WORK/x-cli.json" "$WORK/x-rd.out" "$dir" unit- || return 1
  missing_needed "$t" && "$CLI" inspect "$t" >/dev/null
}
run_step "ExpireSnapshots --shards 7 --report-dir: the CLI's files, paths (tasks' listings) and counts" \
  expire_report_dir_same_as_cli

expire_failed_delete_unit() {
  local t="$WORK/x-fail/t"
  if PAIMON_CLEANUP_SPARK_FAIL_EXPIRY_UNIT=delete:0 submit_expire x-failed "$t" "${X_ARGS[@]}" \
    --parallelism 2 --shards 2; then
    echo "the job succeeded although a delete unit failed" >&2
    return 1
  fi
  grep -q 'injected failure' "$WORK/x-failed.err" ||
    { echo "the job did not fail through the injected failure" >&2; tail -n 20 "$WORK/x-failed.err" >&2; return 1; }
  files "$t" >"$WORK/x-failed.files"
  comm -23 "$WORK/xbase.files" "$WORK/x-failed.files" >"$WORK/x-failed.deleted"
  echo "deleted before the failure: $(wc -l <"$WORK/x-failed.deleted") files"
  [ -s "$WORK/x-failed.deleted" ] || { echo "the failing delete unit deleted nothing" >&2; return 1; }
  [ -z "$(comm -23 "$WORK/x-failed.deleted" "$WORK/x-cli.deleted")" ] ||
    { echo "the failed job deleted files the CLI keeps" >&2; return 1; }
  ! grep -qE '^(snapshot|manifest)/' "$WORK/x-failed.deleted" ||
    { echo "the failed job deleted metadata" >&2; return 1; }
  # The snapshots being expired may have lost files already (the crash-safe order); every
  # version the expiry keeps is whole.
  missing_needed "$t" --from-snapshot "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["earliest_after"])' "$WORK/x-cli.json")" || return 1
  sharded_ran x-failed 2 || return 1
  submit_expire x-rerun "$t" "${X_ARGS[@]}" --parallelism 2 --shards 7 || return 1
  sharded_ran x-rerun 7 || return 1
  files "$t" >"$WORK/x-rerun.files"
  diff -u "$WORK/x-cli.files" "$WORK/x-rerun.files" ||
    { echo "the rerun left other files than the CLI" >&2; return 1; }
  missing_needed "$t"
}
run_step "ExpireSnapshots --shards 2: a failing delete unit leaves the table safe, a rerun converges" \
  expire_failed_delete_unit

expire_unreadable_manifest() {
  local t="$WORK/x-bad/t" victim
  victim="$("$PY" "$ROOT/tests/py/needed_files.py" "$t" |
    "$PY" -c 'import json,sys; print([n for n in json.load(sys.stdin)["needed"]["manifest_dir"] if n.startswith("manifest-") and not n.startswith("manifest-list-")][0])')" ||
    return 1
  printf 'not avro' >"$t/manifest/$victim"
  files "$t" >"$WORK/x-bad.before"
  local run
  for run in "x-bad:" "x-bad-sharded:--shards 3"; do
    # shellcheck disable=SC2086 # the options split on purpose
    if submit_expire "${run%%:*}" "$t" "${X_ARGS[@]}" --parallelism 2 ${run#*:}; then
      echo "ExpireSnapshots ${run#*:} succeeded although manifest $victim is unreadable" >&2
      return 1
    fi
    files "$t" >"$WORK/x-bad.after"
    diff -u "$WORK/x-bad.before" "$WORK/x-bad.after" ||
      { echo "the failed job (${run#*:}) deleted files" >&2; return 1; }
    echo "job ${run#*:} failed on unreadable $victim, nothing deleted"
  done
}
run_step "ExpireSnapshots (unsharded, --shards 3): unreadable metadata fails the job, nothing deleted" \
  expire_unreadable_manifest

expire_s3_same_as_cli() {
  if [ -z "$S3_ENDPOINT" ]; then start_s3 || return 1; fi
  "$PY" - "$S3_ENDPOINT" "$XBASE" <<'EOF' || return 1
import os, sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
base = sys.argv[2]
for root, _, names in os.walk(base):
    for n in names:
        rel = os.path.relpath(os.path.join(root, n), base)
        for prefix in ("x-cli", "x-spark", "x-s2", "x-s7"):
            s3.upload_file(os.path.join(root, n), "paimon", f"{prefix}/t/{rel}")
EOF
  local opts=(-o "s3.endpoint=$S3_ENDPOINT" -o s3.region=us-east-1 -o s3.path-style-access=true
    -o s3.allow-http=true)
  local args=(--retain-min 2 --older-than-ms "$(($(date +%s%3N) - 1000))" --max-deletes 1000 --json)
  "$CLI" expire-snapshots s3://paimon/x-cli/t "${opts[@]}" -o s3.access-key=test \
    -o s3.secret-key=test "${args[@]}" >"$WORK/x-s3-cli.json" || return 1
  # Credentials from the Spark configuration; a candidate unit's first attempt fails (retried).
  SUBMIT_CONF=(--conf spark.hadoop.fs.s3a.access.key=test --conf spark.hadoop.fs.s3a.secret.key=test)
  SUBMIT_MASTER='local[2,2]'
  PAIMON_CLEANUP_SPARK_FAIL_EXPIRY_UNIT=candidates:0:once submit_expire x-s3 \
    s3://paimon/x-spark/t "${opts[@]}" "${args[@]}" --parallelism 3
  local rc=$?
  [ "$rc" -eq 0 ] && grep -q 'injected failure' "$WORK/x-s3.err" ||
    { echo "the job failed, or the candidate unit's first attempt did not fail" >&2; rc=1; }
  if [ "$rc" -eq 0 ]; then
    submit_expire x-s3-s2 s3://paimon/x-s2/t "${opts[@]}" "${args[@]}" --parallelism 2 \
      --shards 2 && sharded_ran x-s3-s2 2 || rc=1
  fi
  if [ "$rc" -eq 0 ]; then
    PAIMON_CLEANUP_SPARK_FAIL_EXPIRY_UNIT=candidates:0:once submit_expire x-s3-s7 \
      s3://paimon/x-s7/t "${opts[@]}" "${args[@]}" --parallelism 3 --shards 7 &&
      sharded_ran x-s3-s7 7 && grep -q 'injected failure' "$WORK/x-s3-s7.err" || rc=1
  fi
  SUBMIT_CONF=()
  SUBMIT_MASTER='local[2]'
  [ "$rc" -eq 0 ] || return 1
  s3_keys x-cli >"$WORK/x-s3-cli.keys" || return 1
  local p
  for p in x-spark:x-s3 x-s2:x-s3-s2 x-s7:x-s3-s7; do
    s3_keys "${p%%:*}" >"$WORK/${p#*:}.keys" || return 1
    diff -u "$WORK/x-s3-cli.keys" "$WORK/${p#*:}.keys" ||
      { echo "ExpireSnapshots (${p%%:*}) left other objects than the CLI" >&2; return 1; }
    same_expiry_report "$WORK/x-s3-cli.json" "$WORK/${p#*:}.out" || return 1
  done
}
run_step "ExpireSnapshots on S3 (moto), unsharded and --shards 2 / 7, a candidate task retried: the CLI's deletions" \
  expire_s3_same_as_cli

suite_closing_line spark
[ "$SUITES_FAILED" -eq 0 ]
