#!/usr/bin/env bash
# The main job, on a fresh Debian machine: build the library, the header and the CMake package,
# then run a cleanup end to end on a demo table written by pypaimon (real Paimon format),
# and prove with pypaimon that every remaining version still reads the same rows.
#
# Output goes to ./out: out/install (the installed CMake package), out/demo (the demo table).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$ROOT/out"
log() { printf '\n==> %s\n' "$*"; }

log "system packages and the pypaimon venv"
bash scripts/install-deps.sh
PY="$(bash scripts/setup-python.sh | tail -n 1)"

log "library, header, CMake package and the CLI (one cmake build compiles the crate once)"
# One cargo invocation builds the library and the paimon-cleanup tool, so the crate is compiled
# once (a cold first run takes about 15 minutes on 2 cores, most of it compiling dependencies).
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DPAIMON_CLEANUP_BUILD_CLI=ON >/dev/null
cmake --build build/demo -j"$(nproc)"
rm -rf "$OUT/install"
cmake --install build/demo --prefix "$OUT/install" >/dev/null
ls "$OUT/install/include" "$OUT/install/lib" "$OUT/install/lib/cmake/PaimonCleanup"
CLI="$ROOT/target/release/paimon-cleanup"
test -x "$CLI"

log "a find_package consumer built against the installed package"
cmake -S examples/find_package -B build/demo-consumer -DCMAKE_PREFIX_PATH="$OUT/install" >/dev/null
cmake --build build/demo-consumer >/dev/null

log "demo tables written by pypaimon"
rm -rf "$OUT/demo"
"$PY" tests/py/make_tables.py "$OUT/demo" --quiet >/dev/null
TABLE="$OUT/demo/db.db/append_unaware"
# An abandoned write (an old unreferenced data file) and a crashed commit's temp file.
part="$(find "$TABLE" -maxdepth 3 -type d -name 'bucket-0' | head -n 1)"
cp "$(find "$part" -name 'data-*' | head -n 1)" "$part/data-00000000-0000-0000-0000-abandoned-0.parquet"
echo '{}' > "$TABLE/snapshot/.snapshot-99.00000000-crashed.tmp"
find "$TABLE" -type f -exec touch -d '3 days ago' {} +
"$PY" tests/py/live_files.py "$TABLE" --all-versions > "$OUT/versions-before.json"

log "inspect"
"$CLI" inspect "$TABLE"
log "the C++ consumer reads the same table through the C ABI"
./build/demo-consumer/paimon_cleanup_example "$TABLE"

log "expire snapshots (dry run, then for real): keep 2, consumers and tags respected"
"$CLI" expire-snapshots "$TABLE" --retain-min 2 --time-retained 0s --dry-run
"$CLI" expire-snapshots "$TABLE" --retain-min 2 --time-retained 0s --clean-empty-dirs

log "remove orphan files older than 1 day"
"$CLI" remove-orphan-files "$TABLE" --older-than 1d

log "maintain (what the table's own options ask for)"
"$CLI" maintain "$TABLE"
"$CLI" inspect "$TABLE"

log "pypaimon reads every remaining version exactly as before"
"$PY" tests/py/live_files.py "$TABLE" --all-versions > "$OUT/versions-after.json"
"$PY" - "$OUT/versions-before.json" "$OUT/versions-after.json" <<'PYEOF'
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:3])
bad = [k for k, v in after.items() if "error" in v or v.get("row_digest") != before[k].get("row_digest")]
print(f"{len(after)} versions remain of {len(before)}; identical rows: {len(after) - len(bad)}")
if bad:
    sys.exit(f"versions that changed: {bad}")
PYEOF
test ! -e "$part/data-00000000-0000-0000-0000-abandoned-0.parquet"
test ! -e "$TABLE/snapshot/.snapshot-99.00000000-crashed.tmp"
log "demo done: library in $OUT/install, demo table in $TABLE"
