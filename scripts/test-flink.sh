#!/usr/bin/env bash
# Tests the Flink jobs (bindings/flink: org.apache.paimon.cleanup.flink.RemoveOrphanFiles and
# ExpireSnapshots) in a local Flink MiniCluster (parallelism 2, started by a plain `java` command
# on Flink 2.0.0's jars from Maven Central, scripts/setup-flink.sh), against the CLI:
#   1. build: cmake (the JNI library, paimon-cleanup-java.jar) + bindings/flink/build.sh (javac)
#      + the CLI and paimon-gen (cargo, release)
#   2. the jobs' arguments, --older-than forms (the library's parser) and report texts (plain java)
#   3. a paimon-gen table (tags, a branch, orphans + planted orphans, all 3 days old, and one young
#      orphan) in identical copies:
#      a. copy "cli": a dry run of the CLI and of the job print the same text report, nothing
#         changes; then paimon-cleanup remove-orphan-files (the reference)
#      b. copy "flink": the job with a delete unit's task failing after its deletions in every
#         attempt (injected; Flink restarts it once, config.yaml); the job fails, every file a
#         version needs is still there (tests/py/needed_files.py) and only files the CLI deleted
#         are gone; the rerun succeeds; afterwards both copies hold exactly the same files, both
#         runs reported the same cut-off for the same timestamp text, the deleted sets add up to
#         the CLI's, inspect reads the table, nothing needed is missing, pypaimon plans every
#         version (tests/py/live_files.py) to the same files as before
#      c. copy "bad": a manifest a version needs is deleted; the job fails, nothing is deleted
#      d. copies "exp-cli" / "exp-flink": ExpireSnapshots and the CLI's expire-snapshots with the
#         same retention: the same report, the same files left
#   4. the loopback S3 server (moto, tests/py/s3_server.py): the table uploaded twice; the CLI on
#      one, the job on the other (credentials from the Flink configuration's s3.* keys, the first
#      attempt of a plan unit's task failing, injected, and Flink restarting it): same deleted
#      set, same objects left, inspect reads the table
#   5. ExpireSnapshots (snapshot expiry as units) on a generated table with compactions, tags and
#      a branch: a delete unit failing after its deletions fails the job with only files the CLI
#      deletes gone (no metadata) and nothing a version needs missing, and the rerun converges to
#      the CLI's files; an unreadable manifest fails the job with nothing deleted; on S3 (a
#      candidate unit's first attempt failing, Flink restarting it) the same objects and report
#      as the CLI
# The jobs' JVM starts 10 times, plus one plain JVM for the argument tests.
#
# Environment:
#   PAIMON_PYTHON            the harness venv's python (scripts/setup-python.sh): moto, fastavro
#   PAIMON_CLEANUP_BUILD_DIR build directory (default: build/c-abi, shared with test-c.sh)
#   PAIMON_FLINK_CACHE       where scripts/setup-flink.sh keeps Flink's jars
#   JOBS                     parallel build jobs (default: number of CPUs)
# Every step runs even if an earlier one failed (a step whose inputs are missing fails too). The
# closing line: `flink: N passed, M failed, K skipped`.
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
WORK="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-test-flink.XXXXXX")"
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

# --- 1. Flink's jars, build --------------------------------------------------------------------
FLINK_JARS=""
setup_flink() {
  local out
  out="$(bash "$ROOT/scripts/setup-flink.sh")" || return 1
  FLINK_JARS="$(sed -n 's/^FLINK_JARS=//p' <<<"$out")"
  [ -d "$FLINK_JARS" ]
}
run_step "Flink 2.0.0 jars from Maven Central (scripts/setup-flink.sh)" setup_flink

# The library with cargo's default features, as test-c.sh builds it: the CLI below reuses it.
run_step "cmake configure" cmake -S "$ROOT" -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_DEFAULT_FEATURES=ON
run_step "cmake build (JNI library, Java binding jar)" cmake --build "$BUILD_DIR" -j "$JOBS" \
  --target paimon_cleanup_jni paimon_cleanup_java
JNI="$BUILD_DIR/bindings/java/libpaimon_cleanup_jni.so"
JAVA_JAR="$BUILD_DIR/bindings/java/paimon-cleanup-java.jar"
FLINK_OUT="$BUILD_DIR/bindings/flink"
run_step "Flink jobs' jars (bindings/flink/build.sh, javac)" \
  bash "$ROOT/bindings/flink/build.sh" "$FLINK_JARS" "$JAVA_JAR" "$FLINK_OUT"
run_step "cargo build --release (paimon-cleanup, paimon-gen)" \
  cargo build --release --bin paimon-cleanup --bin paimon-gen
CLI="$ROOT/target/release/paimon-cleanup"
GEN="$ROOT/target/release/paimon-gen"
FLINK_JAR="$FLINK_OUT/paimon-cleanup-flink.jar"
FLINK_TEST_JAR="$FLINK_OUT/paimon-cleanup-flink-tests.jar"

# --- 2. arguments ------------------------------------------------------------------------------
run_step "job arguments, --older-than forms, report texts (JobArgsTest)" \
  java "-Dpaimon.cleanup.jni.library=$JNI" \
  -cp "$FLINK_TEST_JAR:$FLINK_JAR:$JAVA_JAR:$FLINK_JARS/*" org.apache.paimon.cleanup.flink.JobArgsTest

# The Flink configuration of the local MiniCluster (FLINK_CONF_DIR, as a Flink process has it):
# one restart of a failed task, so a transient failure is retried and a persistent one fails
# the job.
mkdir -p "$WORK/conf"
write_conf() {
  {
    echo "restart-strategy.type: fixed-delay"
    echo "restart-strategy.fixed-delay.attempts: 1"
    echo "restart-strategy.fixed-delay.delay: 100 ms"
    printf '%s\n' "$@"
  } >"$WORK/conf/config.yaml"
}
write_conf

# flink_run <log name> <class> <job arguments...>: one plain java process running the job in a
# local MiniCluster (parallelism 2), the native library shipped with --native-library as on a
# cluster. stdout -> $WORK/<name>.out, stderr -> $WORK/<name>.err.
flink_run() {
  local name="$1" class="$2" rc
  shift 2
  FLINK_CONF_DIR="$WORK/conf" java -Xmx1g -cp "$FLINK_JAR:$JAVA_JAR:$FLINK_JARS/*" \
    "org.apache.paimon.cleanup.flink.$class" "$@" --native-library "$JNI" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
  grep -E '^(remove-orphan-files:|error:)' "$WORK/$name.err" | cut -c1-400 || true
  return $rc
}
orphans() {
  local name="$1"
  shift
  flink_run "$name" RemoveOrphanFiles "$@"
}

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
  for c in cli flink bad exp-cli exp-flink; do
    mkdir -p "$WORK/$c" && cp -a "$BASE" "$WORK/$c/t" || return 1
  done
  files "$BASE" >"$WORK/base.files"
  # pypaimon's plan of every version (snapshots, tags, the branch), before any cleanup.
  "$PY" "$ROOT/tests/py/live_files.py" "$BASE" --all-versions --files-only \
    >"$WORK/base.pypaimon.json" || { echo "pypaimon cannot plan the generated table" >&2; return 1; }
  echo "table: $(wc -l <"$WORK/base.files") files, cut-off '$CUTOFF_TEXT'"
}
run_step "generated table (paimon-gen: tags, a branch, orphans) in 5 copies" make_table

dry_run_text() {
  local t="$WORK/cli/t"
  "$CLI" remove-orphan-files "$t" --older-than "$CUTOFF_TEXT" --dry-run --list >"$WORK/cli-dry.txt" &&
    orphans dry "$t" --older-than "$CUTOFF_TEXT" --dry-run --parallelism 2 || return 1
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
  local t="$WORK/flink/t"
  if PAIMON_CLEANUP_FLINK_FAIL_UNIT=delete:0 orphans failed --older-than "$CUTOFF_TEXT" "$t" \
    --parallelism 2 --json; then
    echo "the job succeeded although a delete unit failed" >&2
    return 1
  fi
  grep -q 'injected failure' "$WORK/failed.err" ||
    { echo "the job did not fail through the injected failure:" >&2; tail -n 20 "$WORK/failed.err" >&2; return 1; }
  [ ! -s "$WORK/failed.out" ] || { echo "the failed job printed a report" >&2; return 1; }
  files "$t" >"$WORK/failed.files"
  comm -23 "$WORK/base.files" "$WORK/failed.files" >"$WORK/failed.deleted"
  echo "deleted before the failure: $(wc -l <"$WORK/failed.deleted") files"
  [ -s "$WORK/failed.deleted" ] ||
    { echo "the failing delete unit deleted nothing (the injection comes after its deletions)" >&2; return 1; }
  [ -z "$(comm -23 "$WORK/failed.deleted" "$WORK/cli.deleted")" ] ||
    { echo "the failed job deleted files the CLI keeps" >&2; return 1; }
  missing_needed "$t"
}
run_step "job with a failing delete unit: fails, table safe" failed_delete_unit

rerun_converges() {
  local t="$WORK/flink/t"
  orphans rerun --older-than "$CUTOFF_TEXT" "$t" --parallelism 2 --json || return 1
  files "$t" >"$WORK/flink.files"
  diff -u "$WORK/cli.files" "$WORK/flink.files" ||
    { echo "the job left other files than the CLI" >&2; return 1; }
  # The reports: the same cut-off from the same text; the rerun deleted exactly what the CLI
  # deleted minus what the failed run had deleted.
  "$PY" - "$WORK/cli.json" "$WORK/rerun.out" "$WORK/cli.deleted" "$WORK/failed.deleted" <<'PYEOF' || return 1
import json, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
want = set(open(sys.argv[3]).read().split()) - set(open(sys.argv[4]).read().split())
got = {p["path"] for p in job["deletion"]["paths"]}
assert cli["older_than_ms"] == job["older_than_ms"], (cli["older_than_ms"], job["older_than_ms"])
assert got == want, ("rerun deleted", sorted(got ^ want))
assert {p["path"] for p in cli["deletion"]["paths"]} == set(open(sys.argv[3]).read().split())
assert not job["deletion"]["failed"], job["deletion"]["failed"]
print(f"cut-off {job['older_than_ms']} ms in both; rerun deleted {len(got)} files")
PYEOF
  missing_needed "$t" && "$CLI" inspect "$t" >/dev/null || return 1
  # pypaimon plans every version to the same live files as before the cleanup.
  "$PY" "$ROOT/tests/py/live_files.py" "$t" --all-versions --files-only \
    >"$WORK/flink.pypaimon.json" || { echo "pypaimon cannot plan the cleaned table" >&2; return 1; }
  "$PY" - "$WORK/base.pypaimon.json" "$WORK/flink.pypaimon.json" <<'PYEOF'
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:3])
assert before == after, "pypaimon's view of the versions changed"
assert len(before) > 3, before.keys()
print(f"pypaimon plans the same live files for all {len(before)} versions")
PYEOF
}
run_step "rerun: converges to the CLI's result; inspect and pypaimon read the table" rerun_converges

unreadable_manifest() {
  local t="$WORK/bad/t" victim
  victim="$("$PY" "$ROOT/tests/py/needed_files.py" "$t" |
    "$PY" -c 'import json,sys; print([n for n in json.load(sys.stdin)["needed"]["manifest_dir"] if n.startswith("manifest-") and not n.startswith("manifest-list-")][0])')" ||
    return 1
  rm -f "$t/manifest/$victim"
  files "$t" >"$WORK/bad.before"
  if orphans bad --older-than "$CUTOFF_TEXT" "$t" --parallelism 2; then
    echo "the job succeeded although manifest $victim is gone" >&2
    return 1
  fi
  files "$t" >"$WORK/bad.after"
  diff -u "$WORK/bad.before" "$WORK/bad.after" ||
    { echo "the failed job deleted files" >&2; return 1; }
  echo "job failed on missing $victim, nothing deleted"
}
run_step "unreadable metadata (a deleted manifest): the job fails, nothing deleted" unreadable_manifest

expire_same_as_cli() {
  local now args
  now="$(($(date +%s%3N) - 1000))"
  args=(--retain-min 2 --retain-max 5 --older-than-ms "$now" --clean-empty-dirs --json)
  "$CLI" expire-snapshots "$WORK/exp-cli/t" "${args[@]}" >"$WORK/exp-cli.json" || return 1
  flink_run exp ExpireSnapshots "$WORK/exp-flink/t" "${args[@]}" || return 1
  files "$WORK/exp-cli/t" >"$WORK/exp-cli.files" && files "$WORK/exp-flink/t" >"$WORK/exp-flink.files"
  diff -u "$WORK/exp-cli.files" "$WORK/exp-flink.files" ||
    { echo "ExpireSnapshots left other files than the CLI" >&2; return 1; }
  "$PY" - "$WORK/exp-cli.json" "$WORK/exp.out" <<'PYEOF' || return 1
import json, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
for r in (cli, job):
    r.pop("elapsed_ms")
assert cli == job, (cli, job)
assert job["snapshots_expired"] > 0 and job["deletion"]["paths"], job
print(f"both expired snapshots {job['first_expired']}..={job['last_expired']}, "
      f"{len(job['deletion']['paths'])} files")
PYEOF
  missing_needed "$WORK/exp-flink/t" && "$CLI" inspect "$WORK/exp-flink/t" >/dev/null
}
run_step "ExpireSnapshots: the CLI's expire-snapshots report and files" expire_same_as_cli

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
        for prefix in ("cli", "flink"):
            s3.upload_file(os.path.join(root, n), "paimon", f"{prefix}/t/{rel}")
EOF
  sleep 1.5
  S3_CUTOFF_MS="$(($(date +%s%3N) - 500))"
  sleep 1.5
  "$PY" - "$S3_ENDPOINT" <<'EOF'
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
for prefix in ("cli", "flink"):
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
  # The job gets the credentials from the Flink configuration (the keys of Flink's S3 file
  # systems), not from -o. A plan unit's task fails in its first attempt; Flink restarts it.
  write_conf "s3.access-key: test" "s3.secret-key: test"
  PAIMON_CLEANUP_FLINK_FAIL_UNIT=plan:1:once orphans s3 s3://paimon/flink/t "${opts[@]}" \
    --no-writers-running --older-than-ms "$S3_CUTOFF_MS" --parallelism 2 --json
  local rc=$?
  write_conf
  [ "$rc" -eq 0 ] || return 1
  grep -q 'injected failure' "$WORK/s3.err" ||
    { echo "the plan unit's first attempt did not fail" >&2; return 1; }
  s3_keys cli >"$WORK/s3-cli.keys" && s3_keys flink >"$WORK/s3-flink.keys" || return 1
  diff -u "$WORK/s3-cli.keys" "$WORK/s3-flink.keys" ||
    { echo "the job left other objects than the CLI" >&2; return 1; }
  "$PY" - "$WORK/s3-cli.json" "$WORK/s3.out" <<'PYEOF' || return 1
import json, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
paths = lambda r: {p["path"] for p in r["deletion"]["paths"]}
assert paths(cli) == paths(job), sorted(paths(cli) ^ paths(job))
assert paths(cli), "nothing deleted on S3"
assert not any("young" in p for p in paths(job))
for k in ("older_than_ms", "candidates", "referenced", "vetoed"):
    assert cli[k] == job[k], (k, cli[k], job[k])
print(f"S3: both deleted the same {len(paths(job))} objects")
PYEOF
  grep -q 'manifest-young-orphan-0' "$WORK/s3-flink.keys" &&
    "$CLI" inspect s3://paimon/flink/t "${opts[@]}" -o s3.access-key=test -o s3.secret-key=test \
      >/dev/null
}
run_step "S3 (moto), a plan task restarted: the job deletes what the CLI deletes" s3_same_as_cli

# --- 5. ExpireSnapshots on units: failures, unreadable metadata, S3 ---------------------------
XBASE="$WORK/xbase/t"
expire_table() {
  "$GEN" "$XBASE" --snapshots 30 --partitions 3 --files-per-commit 6 --compact-every 3 \
    --tags 2 --branch b --branch-at 10 --branch-commits 3 --seed 21 >/dev/null || return 1
  missing_needed "$XBASE" || return 1
  for c in x-cli x-fail x-bad; do
    mkdir -p "$WORK/$c" && cp -a "$XBASE" "$WORK/$c/t" || return 1
  done
  files "$XBASE" >"$WORK/xbase.files"
  X_ARGS=(--retain-min 2 --older-than-ms "$(($(date +%s%3N) - 1000))" --max-deletes 1000
    --clean-empty-dirs --json)
  "$CLI" expire-snapshots "$WORK/x-cli/t" "${X_ARGS[@]}" >"$WORK/x-cli.json" || return 1
  files "$WORK/x-cli/t" >"$WORK/x-cli.files"
  comm -23 "$WORK/xbase.files" "$WORK/x-cli.files" >"$WORK/x-cli.deleted"
  echo "CLI expire-snapshots deleted $(wc -l <"$WORK/x-cli.deleted") files"
  [ -s "$WORK/x-cli.deleted" ]
}
run_step "ExpireSnapshots: generated table (compactions, tags, a branch) in 3 copies; CLI reference" \
  expire_table

# same_expiry_report <cli json> <job json>: the same report but the wall time.
same_expiry_report() {
  "$PY" - "$1" "$2" <<'PYEOF2'
import json, sys
cli, job = (json.load(open(p)) for p in sys.argv[1:3])
for r in (cli, job):
    r.pop("elapsed_ms")
assert cli == job, (cli, job)
assert job["snapshots_expired"] > 0 and job["deletion"]["paths"], job
print(f"both expired snapshots {job['first_expired']}..={job['last_expired']}, "
      f"{len(job['deletion']['paths'])} files")
PYEOF2
}

expire_failed_delete_unit() {
  local t="$WORK/x-fail/t"
  if PAIMON_CLEANUP_FLINK_FAIL_EXPIRY_UNIT=delete:0 flink_run x-failed ExpireSnapshots "$t" \
    "${X_ARGS[@]}" --parallelism 2; then
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
  flink_run x-rerun ExpireSnapshots "$t" "${X_ARGS[@]}" --parallelism 2 || return 1
  files "$t" >"$WORK/x-rerun.files"
  diff -u "$WORK/x-cli.files" "$WORK/x-rerun.files" ||
    { echo "the rerun left other files than the CLI" >&2; return 1; }
  missing_needed "$t"
}
run_step "ExpireSnapshots: a failing delete unit leaves the table safe, a rerun converges" \
  expire_failed_delete_unit

expire_unreadable_manifest() {
  local t="$WORK/x-bad/t" victim
  victim="$("$PY" "$ROOT/tests/py/needed_files.py" "$t" |
    "$PY" -c 'import json,sys; print([n for n in json.load(sys.stdin)["needed"]["manifest_dir"] if n.startswith("manifest-") and not n.startswith("manifest-list-")][0])')" ||
    return 1
  printf 'not avro' >"$t/manifest/$victim"
  files "$t" >"$WORK/x-bad.before"
  if flink_run x-bad ExpireSnapshots "$t" "${X_ARGS[@]}" --parallelism 2; then
    echo "ExpireSnapshots succeeded although manifest $victim is unreadable" >&2
    return 1
  fi
  files "$t" >"$WORK/x-bad.after"
  diff -u "$WORK/x-bad.before" "$WORK/x-bad.after" ||
    { echo "the failed job deleted files" >&2; return 1; }
  echo "job failed on unreadable $victim, nothing deleted"
}
run_step "ExpireSnapshots: unreadable metadata fails the job, nothing deleted" \
  expire_unreadable_manifest

expire_s3_same_as_cli() {
  if [ -z "$S3_ENDPOINT" ]; then start_s3 || return 1; fi
  "$PY" - "$S3_ENDPOINT" "$XBASE" <<'PYEOF2' || return 1
import os, sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
base = sys.argv[2]
for root, _, names in os.walk(base):
    for n in names:
        rel = os.path.relpath(os.path.join(root, n), base)
        for prefix in ("x-cli", "x-flink"):
            s3.upload_file(os.path.join(root, n), "paimon", f"{prefix}/t/{rel}")
PYEOF2
  local opts=(-o "s3.endpoint=$S3_ENDPOINT" -o s3.region=us-east-1 -o s3.path-style-access=true
    -o s3.allow-http=true)
  local args=(--retain-min 2 --older-than-ms "$(($(date +%s%3N) - 1000))" --max-deletes 1000 --json)
  "$CLI" expire-snapshots s3://paimon/x-cli/t "${opts[@]}" -o s3.access-key=test \
    -o s3.secret-key=test "${args[@]}" >"$WORK/x-s3-cli.json" || return 1
  # Credentials from the Flink configuration; a candidate unit's first attempt fails (restarted).
  write_conf "s3.access-key: test" "s3.secret-key: test"
  PAIMON_CLEANUP_FLINK_FAIL_EXPIRY_UNIT=candidates:0:once flink_run x-s3 ExpireSnapshots \
    s3://paimon/x-flink/t "${opts[@]}" "${args[@]}" --parallelism 2
  local rc=$?
  write_conf
  [ "$rc" -eq 0 ] || return 1
  grep -q 'injected failure' "$WORK/x-s3.err" ||
    { echo "the candidate unit's first attempt did not fail" >&2; return 1; }
  s3_keys x-cli >"$WORK/x-s3-cli.keys" && s3_keys x-flink >"$WORK/x-s3-flink.keys" || return 1
  diff -u "$WORK/x-s3-cli.keys" "$WORK/x-s3-flink.keys" ||
    { echo "ExpireSnapshots left other objects than the CLI" >&2; return 1; }
  same_expiry_report "$WORK/x-s3-cli.json" "$WORK/x-s3.out"
}
run_step "ExpireSnapshots on S3 (moto), a candidate task restarted: the CLI's deletions" \
  expire_s3_same_as_cli

suite_closing_line flink
[ "$SUITES_FAILED" -eq 0 ]
