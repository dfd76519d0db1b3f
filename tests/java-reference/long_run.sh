#!/usr/bin/env bash
# A resumable long run of tests/java_reference.rs (java_differential), one seed per process.
#
#   tests/java-reference/long_run.sh OUT_DIR [LAST_SEED]
#
# OUT_DIR keeps everything: results.jsonl (PAIMON_JAVA_RESULTS: one line per seed-operation and
# per seed), seed-N.log (each seed's output), and bin/ (the frozen test and CLI binaries the run
# uses, copied from target/ at the first start, so that rebuilding meanwhile changes nothing).
# A rerun continues after the highest seed results.jsonl has finished (from FIRST, default
# 1000, if none). Stops after LAST_SEED (default: never), or when OUT_DIR/STOP exists, or at
# the epoch second in OUT_DIR/STOP_AT. Knobs as in docs/java-differences.md: PAIMON_JAVA_SIZE
# (default 60 here), PAIMON_JAVA_DECOUPLED (default all here). Runs under `nice -n 15`.
# Totals: python3 tests/java-reference/long_run_summary.py OUT_DIR/results.jsonl
set -euo pipefail
out=${1:?usage: long_run.sh OUT_DIR [LAST_SEED]}
last=${2:-}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/bin"
if [ ! -x "$out/bin/java_reference" ]; then
    (cd "$repo" && cargo test --test java_reference --no-run 2>&1 | tail -1)
    # The CLI is the tools' binary (tools/): built here so that the copy is this commit's.
    (cd "$repo" && cargo build --bin paimon-cleanup 2>&1 | tail -1)
    test_bin=$(cd "$repo" && ls -t target/debug/deps/java_reference-* | grep -v '\.d$' | head -1)
    cp "$repo/$test_bin" "$out/bin/java_reference"
    cp "$repo/target/debug/paimon-cleanup" "$out/bin/paimon-cleanup"
    git -C "$repo" rev-parse HEAD > "$out/bin/commit"
fi
results="$out/results.jsonl"
next=${FIRST:-1000}
if [ -s "$results" ]; then
    done_max=$(python3 -c '
import json, sys
m = None
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("kind") == "seed":
        m = r["seed"] if m is None else max(m, r["seed"])
print("" if m is None else m)' "$results")
    [ -n "$done_max" ] && next=$((done_max + 1))
fi
while :; do
    [ -e "$out/STOP" ] && { echo "STOP file: stopping before seed $next"; break; }
    if [ -s "$out/STOP_AT" ] && [ "$(date +%s)" -ge "$(cat "$out/STOP_AT")" ]; then
        echo "STOP_AT reached: stopping before seed $next"; break
    fi
    [ -n "$last" ] && [ "$next" -gt "$last" ] && break
    echo "$(date -u +%H:%M:%S) seed $next"
    (cd "$repo" && PAIMON_JAVA_RESULTS="$results" PAIMON_CLEANUP_BIN="$out/bin/paimon-cleanup" \
        PAIMON_JAVA_SEEDS=1 PAIMON_JAVA_FIRST_SEED="$next" \
        PAIMON_JAVA_SIZE="${PAIMON_JAVA_SIZE:-60}" PAIMON_JAVA_DECOUPLED="${PAIMON_JAVA_DECOUPLED:-all}" \
        nice -n 15 "$out/bin/java_reference" java_differential --exact --nocapture \
        > "$out/seed-$next.log" 2>&1) || echo "  seed $next: failures (see seed-$next.log)"
    next=$((next + 1))
done
