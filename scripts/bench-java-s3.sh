#!/usr/bin/env bash
# Paimon Java beside paimon-cleanup on a loopback S3 server with injected latency
# (docs/benchmarks.md, "Against Paimon Java", the S3 rows).
#
#   scripts/bench-java-s3.sh [--size small] [--runs 1] [--threads 2] [--latency-ms 20]
#                            [--ops "expire orphans"] [--dry-run] [--dir DIR]
#                            [--java-limit SECONDS] [--upload-threads 8]
#
# The master table is generated once by `paimon-bench generate` (orphans: 8 % of the APPEND
# files) in DIR/master-SIZE and reused. Per run, operation and side (ours, then Java):
#   1. a fresh moto server (tests/py/s3_server.py: in memory, ListObjectsV2 pages of 1,000 as
#      real S3), and the master uploaded into it under s3://paimon/bench/SIDE
#      (`paimon-bench s3-upload`, straight to the server, not timed);
#   2. a fresh latency proxy in front of it (`paimon-bench s3-proxy --latency-ms N`: every
#      request held N ms, then forwarded; requests counted by kind);
#   3. the operation through the proxy, under /usr/bin/time -v (wall, CPU, peak RSS):
#      ours: the release CLI, `expire-snapshots --retain-min 1 --older-than-ms NOW
#            --max-deletes 2147483647 --clean-empty-dirs` / `remove-orphan-files
#            --older-than-ms NOW --no-writers-running`, --threads THREADS, the S3 options in
#            an options file;
#      Java: BenchMain (tests/java-reference) in a fresh JVM on the s3:// path through
#            Paimon's S3 file IO (paimon-s3 1.4.2, Hadoop S3A inside), the same retention /
#            cut-off, file-operation.thread-num = THREADS, default heap;
#   4. the proxy's request counts by kind (LIST, GET, HEAD, PUT, DELETE, POST batch-delete).
# --dry-run: orphan removal only lists what it would delete (ours --dry-run, Java
# LocalOrphanFilesClean with dryRun); expiry has no dry run on Java's side and is skipped.
# --java-limit S: Java's run is stopped after S seconds (SIGTERM); its row then says
# "timed_out" and how many files it had deleted by then (the proxy's DELETE count: Java deletes
# one object per request), so a size where Java needs hours still gives a lower bound.
# --upload-threads: concurrency of the (untimed) upload into the server (default 8).
# Results: DIR/results.jsonl (one line per process), a markdown summary (medians) on standard
# output. Binaries: PAIMON_BENCH_BIN (default target/release/paimon-bench, which has the
# s3-proxy and s3-upload commands) and PAIMON_CLEANUP_BIN (default
# target/release/paimon-cleanup). Python with moto: PAIMON_PYTHON (default .venv/bin/python).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SIZE=small
RUNS=1
THREADS=2
LATENCY=20
OPS="expire orphans"
DRY=0
DIR="${PAIMON_BENCH_DIR:-/tmp/paimon-bench}/java-s3"
JAVA_LIMIT=0
UPLOAD_THREADS=8
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --latency-ms) LATENCY="$2"; shift 2 ;;
    --ops) OPS="$2"; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    --dir) DIR="$2"; shift 2 ;;
    --java-limit) JAVA_LIMIT="$2"; shift 2 ;;
    --upload-threads) UPLOAD_THREADS="$2"; shift 2 ;;
    *) echo "bench-java-s3: unknown argument $1" >&2; exit 2 ;;
  esac
done

BENCH="${PAIMON_BENCH_BIN:-$ROOT/target/release/paimon-bench}"
CLEANUP="${PAIMON_CLEANUP_BIN:-$ROOT/target/release/paimon-cleanup}"
PY="${PAIMON_PYTHON:-$ROOT/.venv/bin/python}"
for b in "$BENCH" "$CLEANUP" "$PY"; do
  [ -x "$b" ] || {
    echo "bench-java-s3: $b missing (cargo build --release --bin paimon-bench --bin paimon-cleanup; scripts/setup-python.sh)" >&2
    exit 1
  }
done
bench_help="$("$BENCH" --help 2>&1)"; grep -q s3-proxy <<<"$bench_help" || { echo "bench-java-s3: $BENCH has no s3-proxy command" >&2; exit 1; }
bash "$ROOT/scripts/setup-java-reference.sh" >/dev/null
CP="$(cat "$ROOT/tests/java-reference/target/classpath.txt")"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
RESULTS="$DIR/results.jsonl"
MASTER="$DIR/master-$SIZE"

log() { echo "[bench-java-s3 $(date -u +%H:%M:%S)] $*" >&2; }

# Background processes fed from a FIFO: closing our end of it is their EOF (moto and the proxy
# both end at EOF on standard input).
MOTO_PID="" PROXY_PID=""
exec {MOTO_FD}>/dev/null {PROXY_FD}>/dev/null
stop_proxy() {
  if [ -n "$PROXY_PID" ]; then
    exec {PROXY_FD}>&-
    wait "$PROXY_PID" || true
    PROXY_PID=""
  fi
}
stop_moto() {
  if [ -n "$MOTO_PID" ]; then
    exec {MOTO_FD}>&-
    sleep 0.5
    kill "$MOTO_PID" 2>/dev/null || true
    wait "$MOTO_PID" 2>/dev/null || true
    MOTO_PID=""
  fi
}
trap 'stop_proxy; stop_moto' EXIT

# wait_port FILE: the number on the `PORT n` line FILE gets within 60 s.
wait_port() {
  local i
  for i in $(seq 1 600); do
    if grep -q '^PORT ' "$1" 2>/dev/null; then
      sed -n 's/^PORT //p' "$1" | head -n1
      return 0
    fi
    sleep 0.1
  done
  echo "bench-java-s3: no PORT line in $1" >&2
  return 1
}

start_moto() {
  rm -f "$DIR/moto.fifo" "$DIR/moto.out"
  mkfifo "$DIR/moto.fifo"
  "$PY" "$ROOT/tests/py/s3_server.py" --bucket paimon <"$DIR/moto.fifo" >"$DIR/moto.out" \
    2>"$DIR/moto.err" &
  MOTO_PID=$!
  exec {MOTO_FD}>"$DIR/moto.fifo"
  MOTO_PORT=$(wait_port "$DIR/moto.out")
}

start_proxy() {
  rm -f "$DIR/proxy.fifo" "$DIR/proxy.out"
  mkfifo "$DIR/proxy.fifo"
  "$BENCH" s3-proxy --upstream "127.0.0.1:$MOTO_PORT" --latency-ms "$LATENCY" \
    <"$DIR/proxy.fifo" >"$DIR/proxy.out" 2>"$DIR/proxy.err" &
  PROXY_PID=$!
  exec {PROXY_FD}>"$DIR/proxy.fifo"
  PROXY_PORT=$(wait_port "$DIR/proxy.out")
}

# record OP IMPL RUN OUT STATUS: one JSON line in $RESULTS from the run's outputs and the
# proxy's report.
record() {
  python3 - "$SIZE" "$LATENCY" "$THREADS" "$DRY" "$@" "$DIR/proxy.out" >>"$RESULTS" <<'EOF'
import json, re, sys
size, latency, threads, dry, op, impl, run, out, status, proxy = sys.argv[1:11]
t = open(out + ".time").read()
def field(name):
    m = re.search(re.escape(name) + r": (.*)", t)
    return m.group(1).strip() if m else None
def clock(s):
    v = 0.0
    for p in s.split(":"):
        v = v * 60 + float(p)
    return v
rec = {"store": "s3", "size": size, "op": op, "impl": impl, "run": int(run),
       "latency_ms": int(latency), "threads": int(threads), "dry_run": dry == "1",
       "ok": status == "0",
       "wall_s": clock(field("Elapsed (wall clock) time (h:mm:ss or m:ss)")),
       "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
       "rss_kb": int(field("Maximum resident set size (kbytes)"))}
line = next((l for l in open(proxy).read().splitlines() if l.startswith("S3-PROXY ")), None)
if line:
    rec["requests"] = json.loads(line[len("S3-PROXY "):])
else:
    rec["ok"] = False
text = open(out).read()
if impl == "java":
    line = next((l for l in text.splitlines() if l.startswith("BENCH-JAVA ")), None)
    if line:
        j = json.loads(line[len("BENCH-JAVA "):])
        rec.update(inner_s=j["wall_ms"] / 1000, deleted=j["deleted"],
                   deleted_files=j["deleted_files"])
        if "deleted_reported" in j:
            rec["reported"] = j["deleted_reported"]
    elif status == "124":
        # Stopped by --java-limit: what it had deleted by then, from the proxy's counts.
        rec["timed_out"] = True
        rec["deleted_so_far"] = rec.get("requests", {}).get("by_kind", {}).get(
            "DELETE", {}).get("requests", 0)
        rec["ok"] = False
    else:
        rec["ok"] = False
else:
    names = {"Data": "data", "ChangelogData": "changelog", "Manifest": "manifest",
             "ManifestList": "manifest list", "IndexManifest": "index manifest",
             "Index": "index", "SnapshotMeta": "snapshot", "Statistics": "statistics",
             "ChangelogMeta": "changelog metadata"}
    kinds = {names.get(m.group(1), m.group(1)): int(m.group(2))
             for m in re.finditer(r"^  ([A-Za-z]+) +(\d+) files", text, re.M)}
    rec.update(inner_s=rec["wall_s"], deleted=kinds, deleted_files=sum(kinds.values()))
if not rec["ok"]:
    rec["stderr_tail"] = open(out + ".err").read()[-600:]
print(json.dumps(rec))
EOF
  tail -n1 "$RESULTS" | cut -c1-400 >&2
}

# run_side OP IMPL RUN: fresh server, upload, proxy, the operation, the proxy's counts.
run_side() {
  local op="$1" impl="$2" run="$3" out="$DIR/out" st=0 now uri
  uri="s3://paimon/bench/$impl"
  start_moto
  "$BENCH" s3-upload --upstream "127.0.0.1:$MOTO_PORT" --table "$MASTER" --s3-uri "$uri" \
    --threads "$UPLOAD_THREADS" 2>&1 | sed 's/^/  /' >&2
  start_proxy
  local endpoint="http://127.0.0.1:$PROXY_PORT"
  # The cut-off one second before now, and the upload's last object (its LastModified) two
  # seconds before: every orphan is older than the cut-off.
  sleep 2
  now=$(($(date +%s%3N) - 1000))
  if [ "$impl" = ours ]; then
    printf '%s\n' "s3.endpoint=$endpoint" s3.region=us-east-1 s3.access-key=test \
      s3.secret-key=test s3.path-style-access=true s3.allow-http=true >"$DIR/ours.options"
    local dry=()
    [ "$DRY" = 1 ] && dry=(--dry-run)
    case "$op" in
      expire) /usr/bin/time -v -o "$out.time" "$CLEANUP" expire-snapshots "$uri" \
                --options-file "$DIR/ours.options" --threads "$THREADS" --retain-min 1 \
                --older-than-ms "$now" --max-deletes 2147483647 --clean-empty-dirs \
                --progress none "${dry[@]}" >"$out" 2>"$out.err" || st=$? ;;
      orphans) /usr/bin/time -v -o "$out.time" "$CLEANUP" remove-orphan-files "$uri" \
                --options-file "$DIR/ours.options" --threads "$THREADS" \
                --older-than-ms "$now" --no-writers-running --progress none "${dry[@]}" \
                >"$out" 2>"$out.err" || st=$? ;;
    esac
  else
    local jop="$op"
    [ "$DRY" = 1 ] && [ "$op" = orphans ] && jop=orphans-list
    local to=()
    [ "$JAVA_LIMIT" != 0 ] && to=(timeout "$JAVA_LIMIT")
    /usr/bin/time -v -o "$out.time" "${to[@]}" java \
      -Dbench.option.s3.endpoint="$endpoint" -Dbench.option.s3.endpoint.region=us-east-1 \
      -Dbench.option.s3.access-key=test -Dbench.option.s3.secret-key=test \
      -Dbench.option.s3.path.style.access=true -Dbench.option.s3.connection.ssl.enabled=false \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$CP" org.paimoncleanup.ref.BenchMain \
      "$jop" "$uri" "$THREADS" "$now" >"$out" 2>"$out.err" || st=$?
  fi
  stop_proxy
  stop_moto
  record "$op" "$impl" "$run" "$out" "$st"
}

if [ ! -d "$MASTER" ]; then
  log "generating $MASTER"
  "$BENCH" generate --size "$SIZE" --table "$MASTER" --dir "$DIR" >&2
fi
for run in $(seq 1 "$RUNS"); do
  for op in $OPS; do
    if [ "$DRY" = 1 ] && [ "$op" = expire ]; then
      log "expire has no dry run on Java's side: skipped"
      continue
    fi
    for impl in ours java; do
      log "$SIZE $op run $run: $impl (${LATENCY} ms a request, $THREADS threads)"
      run_side "$op" "$impl" "$run"
    done
  done
done

python3 - "$RESULTS" "$SIZE" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if r.get("store") == "s3" and r["size"] == sys.argv[2]]
kinds = ["LIST", "GET", "HEAD", "PUT", "DELETE", "POST batch-delete", "other"]
def med(rs, f):
    v = [f(r) for r in rs]
    return statistics.median(v) if v else float("nan")
def req(r, k):
    return r["requests"]["by_kind"].get(k, {}).get("requests", 0)
print("| size | operation | latency | runs | ours wall s | Java wall s (inner) | Java / ours wall "
      "| ours CPU s | Java CPU s | ours peak RSS MiB | Java peak RSS MiB | requests ours / Java "
      "(" + ", ".join(kinds[:-1]) + ") | files deleted ours / Java |")
print("|" + "---|" * 13)
seen = []
for r in rows:
    key = (r["op"], r["dry_run"], r["latency_ms"])
    if key not in seen:
        seen.append(key)
for op, dry, lat in seen:
    sel = [r for r in rows if (r["op"], r["dry_run"], r["latency_ms"]) == (op, dry, lat)]
    o = [r for r in sel if r["impl"] == "ours" and r["ok"]]
    j = [r for r in sel if r["impl"] == "java" and r["ok"]]
    # Java runs stopped by --java-limit: their wall time is a lower bound.
    jt = [r for r in sel if r["impl"] == "java" and r.get("timed_out")]
    runs = f"{len(o)}/{len(j)}" + (f" (+{len(jt)} timed out)" if jt else "")
    ow, jw = med(o, lambda r: r["wall_s"]), med(j, lambda r: r["wall_s"])
    ji = med(j, lambda r: r["inner_s"])
    if jt and not j:
        tw = min(r["wall_s"] for r in jt)
        done = "/".join(str(r["deleted_so_far"]) for r in jt)
        print(f"| {sys.argv[2]} | {op} | {lat} ms | {runs} | {ow:.2f} | > {tw:.0f} (timed out) | "
              f"> {tw / ow if o else float('nan'):.1f}x | {med(o, lambda r: r['cpu_s']):.2f} | "
              f"{med(jt, lambda r: r['cpu_s']):.2f} by then | {med(o, lambda r: r['rss_kb']) / 1024:.0f} | "
              f"{med(jt, lambda r: r['rss_kb']) / 1024:.0f} | "
              f"{med(o, lambda r: r['requests']['requests']):.0f} / "
              f"> {med(jt, lambda r: r['requests']['requests']):.0f} by then | "
              f"{'/'.join(str(r['deleted_files']) for r in o)} / {done} by then |")
        continue
    def reqs(rs):
        if not rs:
            return "n/a"
        tot = med(rs, lambda r: r["requests"]["requests"])
        return f"{tot:.0f} (" + ", ".join(f"{med(rs, lambda r: req(r, k)):.0f}" for k in kinds[:-1]) + ")"
    deleted = lambda rs: "/".join(str(r["deleted_files"] if not dry else r.get("reported", r["deleted_files"])) for r in rs)
    name = op + (" (dry run)" if dry else "")
    print(f"| {sys.argv[2]} | {name} | {lat} ms | {runs} | {ow:.2f} | {jw:.2f} ({ji:.2f}) | "
          f"{jw / ow if o and j else float('nan'):.1f}x | {med(o, lambda r: r['cpu_s']):.2f} | "
          f"{med(j, lambda r: r['cpu_s']):.2f} | {med(o, lambda r: r['rss_kb']) / 1024:.0f} | "
          f"{med(j, lambda r: r['rss_kb']) / 1024:.0f} | {reqs(o)} / {reqs(j)} | "
          f"{deleted(o)} / {deleted(j)} |")
EOF
