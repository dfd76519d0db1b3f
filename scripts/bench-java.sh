#!/usr/bin/env bash
# Paimon Java beside paimon-cleanup on copies of the same generated tables (docs/benchmarks.md,
# "Against Paimon Java").
#
#   scripts/bench-java.sh [--sizes "medium large"] [--runs 3] [--threads 2] [--dir DIR]
#                         [--ops "expire orphans"] [--no-xmx] [--xmx-from 16]
#                         [--validate-stride 10] [--no-validate]
#
# Per size: the master table is generated once by `paimon-bench generate` (orphans: 8 % of the
# APPEND files) in DIR/master-SIZE and reused. Java first plans every version of a copy of it
# (BenchMain validate: every snapshot, tag and branch snapshot, data and changelog files; above
# medium every --validate-stride-th snapshot, the latest and every tag, as planning 10,000
# versions one by one takes Java over an hour); a version Java cannot plan stops the script. Then, per run and operation, ours and Java
# alternate on fresh copies (`paimon-bench copy`: data files hard-linked, metadata copied), so
# both see the same machine load:
#   ours: the release CLI, `expire-snapshots --retain-min 1 --older-than-ms NOW
#         --max-deletes 2147483647 --clean-empty-dirs` / `remove-orphan-files --older-than-ms
#         NOW --no-writers-running`, --threads THREADS;
#   Java: BenchMain (tests/java-reference) in a fresh JVM, the same retention / cut-off,
#         file-operation.thread-num = THREADS, default heap.
# Each process runs under /usr/bin/time -v: wall time, CPU time (user + system), peak RSS.
# Java's "inner" time is measured from main() to the end (no JVM start); ours is the process
# wall time (no runtime to start beyond the process). --no-validate skips Java's planning pass
# (for a second invocation on a master an earlier one validated). Then, for Java, the smallest -Xmx in power-of-two MiB
# steps (from --xmx-from, doubling) at which the run completes (one run each; a run longer
# than 3 x the default-heap median + 60 s counts as failed). Results: DIR/results.jsonl, and a
# markdown summary (medians) on standard output.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SIZES="medium large"
RUNS=3
THREADS=2
DIR="${PAIMON_BENCH_DIR:-/tmp/paimon-bench}/java"
OPS="expire orphans"
XMX=1
XMX_FROM=16
STRIDE=10
VALIDATE=1
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) SIZES="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --ops) OPS="$2"; shift 2 ;;
    --no-xmx) XMX=0; shift ;;
    --xmx-from) XMX_FROM="$2"; shift 2 ;;
    --validate-stride) STRIDE="$2"; shift 2 ;;
    --no-validate) VALIDATE=0; shift ;;
    *) echo "bench-java: unknown argument $1" >&2; exit 2 ;;
  esac
done

BIN="$ROOT/target/release"
[ -x "$BIN/paimon-bench" ] && [ -x "$BIN/paimon-cleanup" ] || {
  echo "bench-java: build first: cargo build --release --bin paimon-bench --bin paimon-cleanup" >&2
  exit 1
}
bash "$ROOT/scripts/setup-java-reference.sh" >/dev/null
CP="$(cat "$ROOT/tests/java-reference/target/classpath.txt")"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
RESULTS="$DIR/results.jsonl"
WORK="$DIR/work"

log() { echo "[bench-java $(date -u +%H:%M:%S)] $*" >&2; }

# fresh_copy SIZE: a working copy of the master in $WORK.
fresh_copy() {
  rm -rf "$WORK"
  "$BIN/paimon-bench" copy --table "$DIR/master-$1" --work-table "$WORK" 2>/dev/null
}

# timed OUT CMD...: runs CMD under /usr/bin/time -v, its stdout in OUT, the time report in
# OUT.time; returns CMD's status.
timed() {
  local out="$1"; shift
  /usr/bin/time -v -o "$out.time" "$@" >"$out" 2>"$out.err"
}

# record SIZE OP IMPL RUN XMX OUT STATUS: one JSON line in $RESULTS from the run's outputs.
record() {
  python3 - "$@" >>"$RESULTS" <<'EOF'
import json, re, sys
size, op, impl, run, xmx, out, status = sys.argv[1:8]
t = open(out + ".time").read()
def field(name):
    m = re.search(re.escape(name) + r": (.*)", t)
    return m.group(1).strip() if m else None
def clock(s):
    parts = [float(p) for p in s.split(":")]
    v = 0.0
    for p in parts:
        v = v * 60 + p
    return v
rec = {"size": size, "op": op, "impl": impl, "run": int(run), "xmx_mb": int(xmx) or None,
       "ok": status == "0",
       "wall_s": clock(field("Elapsed (wall clock) time (h:mm:ss or m:ss)")),
       "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
       "rss_kb": int(field("Maximum resident set size (kbytes)"))}
text = open(out).read()
if impl == "java":
    line = next((l for l in text.splitlines() if l.startswith("BENCH-JAVA ")), None)
    if line:
        j = json.loads(line[len("BENCH-JAVA "):])
        rec.update(inner_s=j["wall_ms"] / 1000, deleted_files=j["deleted_files"],
                   deleted=j["deleted"], detail={k: v for k, v in j.items()
                                                 if k not in ("deleted", "deleted_files")})
    else:
        rec["ok"] = False
else:
    # The CLI's text report: one line per kind, "  Kind   N files   B bytes" (its --json
    # report would also print every path, work Java does not do).
    names = {"Data": "data", "ChangelogData": "changelog", "Manifest": "manifest",
             "ManifestList": "manifest list", "IndexManifest": "index manifest",
             "Index": "index", "SnapshotMeta": "snapshot", "Statistics": "statistics",
             "ChangelogMeta": "changelog metadata"}
    kinds = {names.get(m.group(1), m.group(1)): int(m.group(2))
             for m in re.finditer(r"^  ([A-Za-z]+) +(\d+) files", text, re.M)}
    rec.update(inner_s=rec["wall_s"], deleted=kinds, deleted_files=sum(kinds.values()))
    if not kinds and "deleted 0" not in text:
        rec["ok"] = False
if not rec["ok"]:
    err = open(out + ".err").read()
    # Why it failed: the heap (-XX:+ExitOnOutOfMemoryError prints "Terminating due to
    # java.lang.OutOfMemoryError"), the -Xmx search's time limit (timeout's 124), or else.
    rec["oom"] = "OutOfMemoryError" in err or "OutOfMemoryError" in text
    rec["timed_out"] = status == "124"
    rec["stderr_tail"] = err[-400:]
print(json.dumps(rec))
EOF
  tail -n1 "$RESULTS" | cut -c1-300 >&2
}

# run_ours SIZE OP RUN / run_java SIZE OP RUN XMX [TIMEOUT]: one run on a fresh copy.
run_ours() {
  local size="$1" op="$2" run="$3" out="$DIR/out" now st=0
  fresh_copy "$size"
  now=$(($(date +%s%3N) - 1000))
  case "$op" in
    expire) timed "$out" "$BIN/paimon-cleanup" expire-snapshots "$WORK" --threads "$THREADS" \
              --retain-min 1 --older-than-ms "$now" --max-deletes 2147483647 --clean-empty-dirs \
              --progress none || st=$? ;;
    orphans) timed "$out" "$BIN/paimon-cleanup" remove-orphan-files "$WORK" --threads "$THREADS" \
              --older-than-ms "$now" --no-writers-running --progress none || st=$? ;;
  esac
  record "$size" "$op" ours "$run" 0 "$out" "$st"
}
run_java() {
  local size="$1" op="$2" run="$3" xmx="$4" limit="${5:-0}" out="$DIR/out" now st=0 heap=()
  fresh_copy "$size"
  now=$(($(date +%s%3N) - 1000))
  [ "$xmx" != 0 ] && heap=("-Xmx${xmx}m" -XX:+ExitOnOutOfMemoryError)
  local to=()
  [ "$limit" != 0 ] && to=(timeout "$limit")
  timed "$out" "${to[@]}" java "${heap[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$CP" org.paimoncleanup.ref.BenchMain \
    "$op" "$WORK" "$THREADS" "$now" || st=$?
  record "$size" "$op" java "$run" "$xmx" "$out" "$st"
  return "$st"
}

for size in $SIZES; do
  if [ ! -d "$DIR/master-$size" ]; then
    log "generating master-$size"
    "$BIN/paimon-bench" generate --size "$size" --table "$DIR/master-$size" --dir "$DIR" >&2
  fi
  if [ "$VALIDATE" = 1 ]; then
    log "$size: Java plans every version"
    fresh_copy "$size"
    val="$DIR/validate-$size.json"
    stride=1
    [ "$size" != medium ] && [ "$size" != small ] && stride="$STRIDE"
    if ! java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$CP" org.paimoncleanup.ref.BenchMain \
        validate "$WORK" "$THREADS" "$stride" >"$val.out" 2>"$val.err"; then
      tail -n 30 "$val.err" >&2
      log "$size: Java could not plan every version of the generated table"
      exit 1
    fi
    grep '^BENCH-JAVA ' "$val.out" | sed 's/^BENCH-JAVA //' >"$val"
    python3 - "$val" "$DIR/master-$size.paimon-bench.json" <<'EOF' >&2
import json, sys
v = json.load(open(sys.argv[1]))["versions"]
side = json.load(open(sys.argv[2]))
ours = len(side["live_latest"])
main = v["main"]
print(f"  Java planned {sum(b['snapshots'] + b['tags'] for b in v.values())} versions: {v}")
print(f"  latest snapshot: Java {main['latest_data_files']} data files, generator {ours}")
if main["latest_data_files"] != ours:
    sys.exit("  Java and the generator disagree on the latest snapshot's data files")
EOF
  fi
  for run in $(seq 1 "$RUNS"); do
    for op in $OPS; do
      log "$size $op run $run: ours"
      run_ours "$size" "$op" "$run"
      log "$size $op run $run: Java"
      run_java "$size" "$op" "$run" 0 || true
    done
  done
  if [ "$XMX" = 1 ]; then
    for op in $OPS; do
      med=$(python3 -c "
import json,statistics,sys
r=[json.loads(l) for l in open('$RESULTS')]
w=[x['wall_s'] for x in r if x['size']=='$size' and x['op']=='$op' and x['impl']=='java' and not x['xmx_mb'] and x['ok']]
print(int(statistics.median(w)*3+60) if w else 0)")
      [ "$med" = 0 ] && { log "$size $op: no successful Java run, no -Xmx search"; continue; }
      xmx="$XMX_FROM"
      while [ "$xmx" -le 65536 ]; do
        log "$size $op: Java -Xmx${xmx}m (limit ${med} s)"
        if run_java "$size" "$op" 0 "$xmx" "$med"; then break; fi
        xmx=$((xmx * 2))
      done
    done
  fi
done
rm -rf "$WORK"
python3 "$ROOT/scripts/bench-java-summary.py" "$RESULTS"
