#!/usr/bin/env bash
# Runs one fuzz target with libFuzzer on the stable toolchain (docs/fuzzing.md):
#   fuzz/run.sh TARGET [SECONDS] [extra libFuzzer flags...]
# TARGET is avro_manifest, json_metadata or binary_row; SECONDS defaults to 600. The corpus is
# fuzz/corpus/TARGET (fill it first with fuzz/seed.sh); crashes, timeouts and out-of-memory
# inputs go to fuzz/artifacts/TARGET/. Needs `cargo install cargo-fuzz`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$(dirname "$here")"
target="${1:?usage: fuzz/run.sh TARGET [SECONDS] [libFuzzer flags...]}"
secs="${2:-600}"
shift $(( $# >= 2 ? 2 : 1 ))
dict=()
[ -f "fuzz/dicts/$target.dict" ] && dict=("-dict=fuzz/dicts/$target.dict")
mkdir -p "fuzz/corpus/$target"
# cargo-fuzz passes nightly-only rustc flags (-Zsanitizer=address, sancov); RUSTC_BOOTSTRAP
# lets the stable compiler accept them.
RUSTC_BOOTSTRAP=1 exec nice cargo fuzz run "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "${dict[@]}" "$@"
