#!/usr/bin/env bash
# Paimon's own Spark procedures beside ours: Paimon's `CALL sys.remove_orphan_files` and
# `CALL sys.expire_snapshots` (paimon-spark-3.5 0.9.0 on pyspark 3.5.2, scripts/setup-paimon-spark.sh)
# on one copy of a table, ours on an identical copy with the same settings (orphan removal: our
# Spark job bindings/spark RemoveOrphanFiles on pyspark 4.3.0, or the CLI; snapshot expiry: the
# CLI), then (scripts/lib/paimon_spark_diff.py, one Spark session with Paimon's catalog for every
# case):
#   * the deleted sets are compared; every difference needs a reason of docs/java-differences.md;
#   * our --json report lists exactly the files that left our copy;
#   * Paimon's Spark SQL reads every snapshot, tag and branch left on our copy with the rows it
#     reads from the untouched copy (row count and a hash of the multiset of rows; for generated
#     tables, whose data files hold no rows, of the `$files` rows: every file a version plans);
#   * a negative control: a data file the latest snapshot reads is deleted from a copy, and the
#     read check must catch it.
# Tables (warehouse <work>/wh, database db): two paimon-gen tables (tags, a branch, changelog and
# index files, compactions, overwrites, partition drops, orphans) and two Java-written histories
# (the harness of tests/java-reference: seeds 3 and 4, primary-key tables with deletion vectors,
# tags, branches, consumers, a decoupled changelog expiry, killed writers' leftovers). Before
# orphan removal, orphans are planted (a data file, a changelog file, a manifest, a manifest
# list, an index file, a file at partition level, a snapshot temp file), everything is made 3
# days old, the cut-off is 2 days back (the same timestamp text for both sides), and one young
# orphan must survive both.
#
# Environment:
#   PAIMON_PYTHON            the harness venv's python (scripts/setup-python.sh): fastavro, to
#                            read which files a tag's changelog names when classifying
#   PAIMON_CLEANUP_BUILD_DIR build directory (default: build/c-abi, shared with test-spark.sh)
#   JOBS                     parallel build jobs (default: number of CPUs)
# The closing line: `paimon-spark: N passed, M failed, K skipped`.
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
WORK="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-test-paimon-spark.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
WH="$WORK/wh"
DB="$WH/db.db"
mkdir -p "$DB"

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

# --- 1. set-up and build -----------------------------------------------------------------------
PAIMON_SPARK_PYTHON=""
PAIMON_SPARK_JAR=""
setup_paimon_spark() {
  local out
  out="$(bash "$ROOT/scripts/setup-paimon-spark.sh")" || return 1
  PAIMON_SPARK_PYTHON="$(sed -n 's/^PAIMON_SPARK_PYTHON=//p' <<<"$out")"
  PAIMON_SPARK_JAR="$(sed -n 's/^PAIMON_SPARK_JAR=//p' <<<"$out")"
  [ -x "$PAIMON_SPARK_PYTHON" ] && [ -s "$PAIMON_SPARK_JAR" ]
}
run_step "Paimon's Spark runtime (scripts/setup-paimon-spark.sh)" setup_paimon_spark

SPARK_JARS=""
SPARK_SUBMIT=""
setup_spark() {
  local out
  out="$(bash "$ROOT/scripts/setup-spark.sh")" || return 1
  SPARK_JARS="$(sed -n 's/^SPARK_JARS=//p' <<<"$out")"
  SPARK_SUBMIT="$(sed -n 's/^SPARK_SUBMIT=//p' <<<"$out")"
  [ -d "$SPARK_JARS" ] && [ -x "$SPARK_SUBMIT" ]
}
run_step "our Spark runtime (scripts/setup-spark.sh)" setup_spark

build() {
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_DEFAULT_FEATURES=ON \
    "-DPAIMON_CLEANUP_SPARK_JARS=$SPARK_JARS" >/dev/null &&
    cmake --build "$BUILD_DIR" -j "$JOBS" \
      --target paimon_cleanup_jni paimon_cleanup_java paimon_cleanup_spark >/dev/null &&
    cargo build --release --bin paimon-cleanup --bin paimon-gen
}
run_step "build (our Spark job; paimon-cleanup, paimon-gen)" build
CLI="$ROOT/target/release/paimon-cleanup"
GEN="$ROOT/target/release/paimon-gen"
JNI="$BUILD_DIR/bindings/java/libpaimon_cleanup_jni.so"
JAVA_JAR="$BUILD_DIR/bindings/java/paimon-cleanup-java.jar"
SPARK_JAR="$BUILD_DIR/bindings/spark/paimon-cleanup-spark.jar"

JAVA_CP=""
setup_java() {
  bash "$ROOT/scripts/setup-java-reference.sh" >"$WORK/java-setup.log" 2>&1 ||
    { tail -n 20 "$WORK/java-setup.log" >&2; return 1; }
  JAVA_CP="$(cat "$ROOT/tests/java-reference/target/classpath.txt")"
}
run_step "Paimon Java harness (scripts/setup-java-reference.sh)" setup_java

# --- 2. tables ---------------------------------------------------------------------------------
OLD="@$(($(date +%s) - 3 * 24 * 3600))"
# A timestamp two days back in Java's form: Paimon's older_than and our --older-than read it alike.
CUTOFF_TEXT="$(date -d '2 days ago' '+%Y-%m-%d %H:%M:%S')"
TABLES=(gen1 gen2 java3 java4)

make_gen() {
  "$GEN" "$DB/gen1_src" --snapshots 16 --partitions 3 --files-per-commit 3 --tags 2 --branch b \
    --branch-at 8 --branch-commits 3 --orphans 5 --seed 20 >/dev/null &&
    "$GEN" "$DB/gen2_src" --snapshots 30 --partitions 4 --partition-type int --files-per-commit 2 \
      --buckets 2 --compact-every 4 --overwrite-every 7 --drop-every 11 --tags 3 --branch none \
      --changelog true --index true --index-every 3 --consumers 1 --orphans 3 --seed 7 >/dev/null
}

make_java() {
  printf '{"cmd":"write","seed":3,"dir":"%s","size":30}\n{"cmd":"write","seed":4,"dir":"%s","size":30}\n' \
    "$DB/java3_src" "$DB/java4_src" |
    java -Xmx1g -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$JAVA_CP" org.paimoncleanup.ref.Harness \
      >"$WORK/java-write.out" 2>"$WORK/java-write.err" || { tail -n 20 "$WORK/java-write.err" >&2; return 1; }
  [ "$(grep -c '"ok":true' "$WORK/java-write.out")" = 2 ] ||
    { cat "$WORK/java-write.out" >&2; return 1; }
  cut -c1-300 "$WORK/java-write.out"
}

# plant <table dir>: orphans of every kind, as old as the table.
plant() {
  local t="$1" bucket
  bucket="$(find "$t" -type d -name 'bucket-*' -not -path '*/branch/*' | LC_ALL=C sort | head -n 1)"
  [ -n "$bucket" ] || { echo "no bucket directory in $t" >&2; return 1; }
  printf 'planted' >"$bucket/data-planted-orphan-0.parquet"
  printf 'planted' >"$bucket/changelog-planted-orphan-0.parquet"
  printf 'planted' >"$t/manifest/manifest-planted-orphan-0"
  printf 'planted' >"$t/manifest/manifest-list-planted-orphan-0"
  mkdir -p "$t/index" && printf 'planted' >"$t/index/index-planted-orphan-0"
  [ "$(dirname "$bucket")" != "$t" ] && printf 'planted' >"$(dirname "$bucket")/stray-planted.txt"
  printf 'planted' >"$t/snapshot/.snapshot-99.tmp"
  return 0
}

# copies <table> <case>: <case>_base, <case>_paimon and <case>_ours from <table>_src.
copies() {
  local c
  for c in base paimon ours; do cp -a "$DB/$1_src" "$DB/$2_$c" || return 1; done
}

make_tables() {
  make_gen || return 1
  make_java || return 1
  local t
  for t in "${TABLES[@]}"; do
    plant "$DB/${t}_src" || return 1
    find "$DB/${t}_src" -exec touch -h -d "$OLD" {} + || return 1
    # Young: after the cut-off, so no run may delete it.
    printf 'young' >"$DB/${t}_src/manifest/manifest-young-orphan-0"
    copies "$t" "${t}_orph" && copies "$t" "${t}_exp" || return 1
    if [ "$t" = java3 ]; then copies "$t" "${t}_ctl" || return 1; fi
    # Seed 4's consumers both read the earliest snapshot, which would keep every snapshot on
    # both sides: without them the expiry case deletes something to compare.
    if [ "$t" = java4 ]; then rm -rf "$DB/${t}_exp_base/consumer" "$DB/${t}_exp_paimon/consumer" "$DB/${t}_exp_ours/consumer"; fi
    echo "$t: $(find "$DB/${t}_src" -type f | wc -l) files, $(ls "$DB/${t}_src/snapshot" | grep -c '^snapshot-') snapshots"
  done
  for t in "${TABLES[@]}"; do mv "$DB/${t}_src" "$WORK/${t}_src"; done
}
run_step "tables: 2 generated, 2 Java-written, orphans planted, 3 copies per case" make_tables

# --- 3. the cases ------------------------------------------------------------------------------
# Our Spark job on pyspark 4.3.0, local[2]: the table comes as {table}.
OUR_SPARK="$(printf '"%s",' "$SPARK_SUBMIT" --master 'local[2]' --conf spark.ui.enabled=false \
  --conf spark.log.level=WARN --driver-memory 1g --jars "$JAVA_JAR" --files "$JNI" \
  --class org.apache.paimon.cleanup.spark.RemoveOrphanFiles "$SPARK_JAR")"

# retain_max for snapshot expiry: half of the table's snapshots (at least 1).
retain_max() {
  local n
  n="$(ls "$DB/$1_exp_base/snapshot" | grep -c '^snapshot-')"
  echo $(((n + 1) / 2))
}

write_cases() {
  local t k sep="" ours
  {
    echo "["
    for t in "${TABLES[@]}"; do
      # Our Spark job on one generated and one Java-written table, the CLI on the others.
      case "$t" in
        gen1 | java3) ours="[$OUR_SPARK\"{table}\",\"--older-than\",\"$CUTOFF_TEXT\",\"--parallelism\",\"2\",\"--json\"]" ;;
        *) ours="[\"$CLI\",\"remove-orphan-files\",\"{table}\",\"--older-than\",\"$CUTOFF_TEXT\",\"--json\"]" ;;
      esac
      read_mode=rows
      case "$t" in gen*) read_mode=files ;; esac
      printf '%s{"name":"%s remove-orphan-files","table":"%s_orph","op":"remove-orphan-files","read":"%s",' \
        "$sep" "$t" "$t" "$read_mode"
      printf '"call":"CALL sys.remove_orphan_files(table => '"'"'{table}'"'"', older_than => '"'"'%s'"'"')","ours":%s}\n' \
        "$CUTOFF_TEXT" "$ours"
      sep=","
      k="$(retain_max "$t")"
      printf ',{"name":"%s expire-snapshots retain_max %s","table":"%s_exp","op":"expire-snapshots","read":"%s",' \
        "$t" "$k" "$t" "$read_mode"
      printf '"call":"CALL sys.expire_snapshots(table => '"'"'{table}'"'"', retain_max => %s, retain_min => 1)",' "$k"
      printf '"ours":["%s","expire-snapshots","{table}","--retain-min=1","--retain-max=%s","--max-deletes=2147483647","--time-retained=36500 d",' "$CLI" "$k"
      printf '"-o=snapshot.num-retained.min=1","-o=snapshot.num-retained.max=%s","-o=snapshot.time-retained=36500 d",' "$k"
      printf '"-o=changelog.num-retained.min=1","-o=changelog.num-retained.max=%s","-o=changelog.time-retained=36500 d","--json"]}\n' "$k"
    done
    # The negative control: a data file the latest snapshot reads is deleted from our copy;
    # the read check must report it (the case passes only then).
    printf ',{"name":"java3 control: a live data file deleted","table":"java3_ctl","op":"control","read":"rows",'
    printf '"call":"CALL sys.expire_snapshots(table => '"'"'{table}'"'"', retain_max => 1000000)","ours":[]}\n'
    echo "]"
  } >"$WORK/cases.json"
  "$PAIMON_SPARK_PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))), "cases")' "$WORK/cases.json"
}
run_step "cases (orphan removal and snapshot expiry per table, a control)" write_cases

# Every case is one suite; the driver's exit status is not a suite of its own.
run_cases() {
  local line
  log "Paimon's procedures against ours (scripts/lib/paimon_spark_diff.py)"
  "$PAIMON_SPARK_PYTHON" "$ROOT/scripts/lib/paimon_spark_diff.py" --jar "$PAIMON_SPARK_JAR" \
    --warehouse "$WH" --cases "$WORK/cases.json" --out "$WORK/result.json" --helper-python "$PY" \
    >"$WORK/diff.out" 2>"$WORK/diff.err"
  cat "$WORK/diff.out"
  while IFS= read -r line; do
    case "$line" in
      "CASE "*": ok"*) suite_pass "${line%%: ok*}" ;;
      "CASE "*": FAILED"*) suite_fail "${line%%: FAILED*}" ;;
    esac
  done <"$WORK/diff.out"
  if ! grep -q '^CASE ' "$WORK/diff.out"; then
    tail -n 30 "$WORK/diff.err" >&2
    suite_fail "paimon_spark_diff.py ran no case"
  fi
  # Nothing young was deleted on any copy.
  local t c
  for t in "${TABLES[@]}"; do
    for c in orph_paimon orph_ours; do
      [ -f "$DB/${t}_$c/manifest/manifest-young-orphan-0" ] ||
        { echo "the young orphan of ${t}_$c is gone" >&2; suite_fail "young orphan ${t}_$c"; }
    done
  done
  [ -n "${PAIMON_SPARK_KEEP:-}" ] && cp "$WORK/result.json" "$PAIMON_SPARK_KEEP"
  return 0
}
run_cases

suite_closing_line paimon-spark
[ "$SUITES_FAILED" -eq 0 ]
