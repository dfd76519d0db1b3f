#!/usr/bin/env bash
# Runs every test of the project on a fresh Debian machine (installs what it needs):
# formatting and lints, the Rust unit and integration tests (Java fixtures + pypaimon tables),
# the object-store suites against loopback emulators (S3: moto, GCS: fake-gcs-server,
# Azure: Azurite; docs/storage.md), the README / docs C examples, and the C/C++ tests with the
# CMake package (scripts/test-c.sh), then the bindings (scripts/test-bindings.sh), the Spark
# job with spark-submit from pyspark (scripts/test-spark.sh) and the Flink jobs in a local
# MiniCluster (scripts/test-flink.sh).
#
# Every suite runs even if an earlier one failed. The last line says what was run and what was
# not: `tests: N passed, M failed, K skipped (reason)`; a suite (a step, a Rust test binary, a
# ctest test) that could not test what it is for, e.g. without the Java fixture corpus, counts as
# skipped, never as passed. The exit status is non-zero when anything failed.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

bash scripts/install-deps.sh || { echo "scripts/install-deps.sh failed" >&2; exit 1; }
bash scripts/setup-python.sh >/dev/null || { echo "scripts/setup-python.sh failed" >&2; exit 1; }
export PAIMON_PYTHON="${PAIMON_PYTHON:-$PWD/.venv/bin/python}"
# Azurite (npm) for tests/azure.rs; the suites start it (and moto, fake-gcs-server) on loopback.
PAIMON_AZURITE="${PAIMON_AZURITE:-$(bash scripts/setup-azurite.sh | tail -n1)}" ||
  { echo "scripts/setup-azurite.sh failed" >&2; exit 1; }
export PAIMON_AZURITE
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi

# shellcheck source=scripts/lib/summary.sh
. "$ROOT/scripts/lib/summary.sh"
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-test-all.XXXXXX")"
trap 'rm -rf "$LOGS"' EXIT

# section <name>: starts a timed section of the run (its duration goes in the closing summary,
# so a slow CI run shows where its time went).
SECTION_NAMES=()
SECTION_SECS=()
SECTION_START=$SECONDS
section() {
  section_end
  SECTION_NAMES+=("$1")
  SECTION_START=$SECONDS
  echo "== $1"
}
section_end() {
  local n=${#SECTION_NAMES[@]}
  if [ "$n" -gt "${#SECTION_SECS[@]}" ]; then SECTION_SECS+=($((SECONDS - SECTION_START))); fi
}

# step <name> <command...>: one suite.
step() {
  local name="$1"
  shift
  echo "== $name"
  if "$@"; then suite_pass "$name"; else
    echo "FAILED: $name" >&2
    suite_fail "$name"
  fi
}

section "set-up and lints"
step "pypaimon harness self-test" "$PAIMON_PYTHON" tests/py/selftest.py
step "cargo fmt --check" cargo fmt --all -- --check
step "cargo clippy -D warnings" cargo clippy --all-targets -- -D warnings
# The library as CMake builds it for users: without the tools (tools/) and their crates.
step "cargo clippy --lib without the tools" \
  cargo clippy -p paimon-cleanup --lib --no-default-features --features library -- -D warnings

step "Paimon Java reference harness (scripts/setup-java-reference.sh)" bash scripts/setup-java-reference.sh
step "pyiceberg for the Iceberg-compatible Java seeds (scripts/setup-pyiceberg.sh)" bash scripts/setup-pyiceberg.sh
# Rust tests: one suite per test binary. Tests that cannot run here record why in
# PAIMON_SKIP_LOG (tests/common: `skip`), and their binary counts as skipped.
section "cargo test"
export PAIMON_SKIP_LOG="$LOGS/rust-skips.tsv"
: >"$PAIMON_SKIP_LOG"
cargo test --all-targets --no-fail-fast 2>&1 | tee "$LOGS/cargo-test.log"
cargo_rc="${PIPESTATUS[0]}"
unset PAIMON_SKIP_LOG
rust_suites=0
failed_before_rust="$SUITES_FAILED"
current=""
while IFS= read -r line; do
  if [[ "$line" =~ ^[[:space:]]+Running\ (.*)\ \(.*/deps/([^/]+)\)$ ]]; then
    current="${BASH_REMATCH[1]}"
    exe="${BASH_REMATCH[2]}"
    exe="${exe%-*}"
  elif [[ -n "$current" && "$line" =~ ^test\ result:\ (ok|FAILED)\. ]]; then
    rust_suites=$((rust_suites + 1))
    reason="$(awk -F'\t' -v s="$exe" '$1 == s {print $2; exit}' "$LOGS/rust-skips.tsv")"
    if [ "${BASH_REMATCH[1]}" = "FAILED" ]; then
      suite_fail "$current"
    elif [ -n "$reason" ]; then
      suite_skip "$current" "$reason"
    else
      suite_pass "$current"
    fi
    current=""
  fi
done <"$LOGS/cargo-test.log"
if [ "$rust_suites" -eq 0 ] || { [ "$cargo_rc" -ne 0 ] && [ "$SUITES_FAILED" -eq "$failed_before_rust" ]; }; then
  suite_fail "cargo test (exit $cargo_rc, $rust_suites test binaries ran)"
fi

# Every C block of README.md and docs/c-api.md is built and run by ctest (examples/docs); the
# C / C++ tests, the installed package and its consumers; then the bindings.
section "C / C++ tests"
bash scripts/test-c.sh 2>&1 | tee "$LOGS/test-c.log"
suite_add_closing_line "scripts/test-c.sh" "$LOGS/test-c.log" c-abi
section "bindings"
bash scripts/test-bindings.sh 2>&1 | tee "$LOGS/test-bindings.log"
suite_add_closing_line "scripts/test-bindings.sh" "$LOGS/test-bindings.log" bindings
section "Spark job"
bash scripts/test-spark.sh 2>&1 | tee "$LOGS/test-spark.log"
suite_add_closing_line "scripts/test-spark.sh" "$LOGS/test-spark.log" spark
section "Paimon's Spark procedures"
bash scripts/test-paimon-spark.sh 2>&1 | tee "$LOGS/test-paimon-spark.log"
suite_add_closing_line "scripts/test-paimon-spark.sh" "$LOGS/test-paimon-spark.log" paimon-spark
section "Flink jobs"
bash scripts/test-flink.sh 2>&1 | tee "$LOGS/test-flink.log"
suite_add_closing_line "scripts/test-flink.sh" "$LOGS/test-flink.log" flink
section "Python package"
step "scripts/test-python.sh" bash scripts/test-python.sh

section_end
echo "time by section (s):"
for i in "${!SECTION_NAMES[@]}"; do printf '  %6d  %s\n' "${SECTION_SECS[$i]}" "${SECTION_NAMES[$i]}"; done
printf '  %6d  total\n' "$SECONDS"
suite_closing_line tests
[ "$SUITES_FAILED" -eq 0 ]
