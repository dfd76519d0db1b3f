#!/usr/bin/env bash
# Builds and tests the C++, Go and Java bindings, then runs the cross-binding scenario
# (bindings/SCENARIO.md) through C, C++, Go and Java on fresh copies of one fixture table and
# requires identical canonical lines:
#   1. cmake configure + build (the library, bindings/cpp runners and tests, the JNI glue and
#      jars) + install into a temp prefix; `cargo build --bin paimon-gen` for the expiry-units
#      tests (their tables)
#   2. ctest -R for the binding tests (C++ wrapper static/shared/valgrind, the C++ expiry units
#      and their valgrind run, Java under -Xcheck:jni)
#   3. go vet + go test in bindings/go (in-tree linking; TestExpiryUnits on a paimon-gen table)
#   4. the installed prefix: a C++ program using paimon_cleanup.hpp via find_package, the Go
#      package linked with -tags paimon_cleanup_pkgconfig
#   5. the scenario through C, C++, Go and Java (the Java one from the installed jar and JNI
#      library); the four outputs must be identical
# Installs golang-go / a JDK / cmake with apt-get when missing (no Go module or Maven downloads).
#
# Environment:
#   PAIMON_FIXTURES          fixture tables (default: ../shared/fixtures/java-written-tables)
#   PAIMON_REQUIRE_FIXTURES  1 = fail instead of skipping when fixtures are missing
#   PAIMON_CLEANUP_BUILD_DIR build directory (default: build/c-abi, shared with test-c.sh)
#   JOBS                     parallel build jobs (default: number of CPUs)
# Every step runs even if an earlier one failed; the exit status is non-zero if any failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '\n==> %s\n' "$*"; }

# --- tools -----------------------------------------------------------------------------------
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v go >/dev/null 2>&1 || missing+=(golang-go)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq || { echo "apt-get update failed" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" || { echo "apt-get install ${missing[*]} failed" >&2; exit 1; }
fi
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
# Go: the standard library only; never download modules or toolchains.
export GOFLAGS="-mod=mod" GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off
export GOCACHE="${GOCACHE:-$ROOT/target/go-cache}"
if [ -z "${HOME:-}" ]; then export GOPATH="${GOPATH:-$ROOT/target/go-path}"; fi

BUILD_DIR="${PAIMON_CLEANUP_BUILD_DIR:-$ROOT/build/c-abi}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-test-bindings.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"

FIXTURES="${PAIMON_FIXTURES:-$ROOT/../shared/fixtures/java-written-tables}"
FIXTURES="$(cd "$FIXTURES" 2>/dev/null && pwd || echo "$FIXTURES")"
SCENARIO_TABLE="parquet/pk_09.db/pk_09"
HAVE_FIXTURES=1
if [ ! -d "$FIXTURES/$SCENARIO_TABLE" ]; then
  if [ "${PAIMON_REQUIRE_FIXTURES:-0}" = "1" ]; then
    echo "fixture tables not found at $FIXTURES and PAIMON_REQUIRE_FIXTURES=1" >&2
    exit 1
  fi
  echo "SKIP: fixture tables not found at $FIXTURES; the scenario comparison is skipped"
  HAVE_FIXTURES=0
fi
export PAIMON_FIXTURES="$FIXTURES"

# shellcheck source=scripts/lib/summary.sh
. "$ROOT/scripts/lib/summary.sh"
run_step() {
  local name="$1"
  shift
  log "$name"
  if "$@"; then
    echo "ok: $name"
    suite_pass "$name"
  else
    echo "FAILED: $name" >&2
    suite_fail "$name"
  fi
}

# --- 1. configure, build, install ------------------------------------------------------------
run_step "cmake configure" cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
  "-DPAIMON_FIXTURES_DIR=$FIXTURES"
run_step "cmake build" cmake --build "$BUILD_DIR" -j "$JOBS"
run_step "cmake install" cmake --install "$BUILD_DIR" --prefix "$PREFIX"

# --- 1b. paimon-gen: the table generator of the expiry-units tests ----------------------------
# test_cpp_wrapper_expiry_units (ctest) and TestExpiryUnits (Go) generate their table with it;
# PAIMON_REQUIRE_GEN=1 makes them fail instead of skipping when it is missing.
# The same invocation as test-spark.sh and test-flink.sh (same features), so that theirs is a
# no-op afterwards.
run_step "cargo build --release (paimon-cleanup, paimon-gen)" \
  cargo build --release --bin paimon-cleanup --bin paimon-gen
export PAIMON_GEN="${CARGO_TARGET_DIR:-$ROOT/target}/release/paimon-gen" PAIMON_REQUIRE_GEN=1

# --- 2. ctest: the binding tests -------------------------------------------------------------
log "ctest (bindings)"
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS" \
  -R '^(test_cpp_wrapper|valgrind_test_cpp_wrapper|java_binding)') 2>&1 | tee "$WORK/ctest.log"
suite_add_ctest "$WORK/ctest.log" "Java fixture corpus not found"

# --- 3. Go -----------------------------------------------------------------------------------
go_tests() {
  (cd "$ROOT/bindings/go" && go vet ./... && go test -count=1 ./...)
}
run_step "go vet + go test" go_tests

# --- 4. the installed prefix -----------------------------------------------------------------
installed_cpp() {
  local dir="$WORK/cpp_consumer" table=""
  mkdir -p "$dir"
  if [ "$HAVE_FIXTURES" = "1" ]; then
    table="$dir/pk_09"
    cp -R "$FIXTURES/$SCENARIO_TABLE" "$table" || return 1
  fi
  cat >"$dir/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(paimon_cleanup_hpp_consumer LANGUAGES CXX)
find_package(PaimonCleanup CONFIG REQUIRED)
add_executable(app main.cpp)
set_target_properties(app PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
target_link_libraries(app PRIVATE PaimonCleanup::paimon_cleanup)
EOF
  cat >"$dir/main.cpp" <<'EOF'
#include <paimon_cleanup.hpp>
#include <iostream>
int main(int argc, char **argv) {
    namespace pc = paimon_cleanup;
    if (!pc::abi_compatible()) return 1;
    pc::Executor exec(1);
    std::cout << "paimon_cleanup " << pc::version() << " via paimon_cleanup.hpp\n";
    if (argc > 1) std::cout << pc::Context(argv[1]).summary(exec).snapshot_count << " snapshots\n";
    return 0;
}
EOF
  [ -f "$PREFIX/include/paimon_cleanup.hpp" ] || { echo "paimon_cleanup.hpp not installed" >&2; return 1; }
  cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$PREFIX" >/dev/null &&
    cmake --build "$dir/build" >/dev/null &&
    "$dir/build/app" ${table:+"$table"}
}
run_step "installed C++ header (find_package)" installed_cpp

installed_go() {
  local pc
  pc="$(find "$PREFIX" -name paimon_cleanup.pc -print -quit)"
  [ -n "$pc" ] || { echo "paimon_cleanup.pc not installed" >&2; return 1; }
  # A fresh build cache: Go 1.19 does not key cached cgo packages on pkg-config's output, so a
  # package cached for an earlier (since deleted) temp prefix would link against that path.
  (cd "$ROOT/bindings/go" &&
    GOCACHE="$WORK/go-cache-installed" PKG_CONFIG_PATH="$(dirname "$pc")" \
      go test -count=1 -tags paimon_cleanup_pkgconfig \
      -c -o "$WORK/go-pkgconfig.test" . &&
    LD_LIBRARY_PATH="$(dirname "$(dirname "$pc")")" "$WORK/go-pkgconfig.test" \
      -test.run '^(TestVersion|TestHandlesAndArgumentErrors)$')
}
run_step "installed library from Go (pkg-config)" installed_go

# --- 5. the scenario through C, C++, Go and Java ----------------------------------------------
prepare_copy() {
  local dst="$1" old
  mkdir -p "$(dirname "$dst")"
  cp -R "$FIXTURES/$SCENARIO_TABLE" "$dst" && chmod -R u+w "$dst" || return 1
  printf '01234567890123456789' >"$dst/f1=10/bucket-0/data-planted-orphan-0.parquet"
  printf '0123456789' >"$dst/manifest/manifest-planted-orphan-0"
  old="@$(($(date +%s) - 3 * 24 * 3600))"
  touch -d "$old" "$dst/f1=10/bucket-0/data-planted-orphan-0.parquet" \
    "$dst/manifest/manifest-planted-orphan-0"
}

scenario() {
  local lang table out rc=0 jar jni
  for lang in c cpp go java; do
    table="$WORK/scenario/$lang/pk_09"
    out="$WORK/scenario/$lang.out"
    prepare_copy "$table" || return 1
    case "$lang" in
      c) "$BUILD_DIR/bindings/cpp/paimon_cleanup_scenario_c" "$table" >"$out.raw" ;;
      cpp) "$BUILD_DIR/bindings/cpp/paimon_cleanup_scenario_cpp" "$table" >"$out.raw" ;;
      go) (cd "$ROOT/bindings/go" && go test -count=1 -c -o "$WORK/go-scenario.test" . &&
        PAIMON_SCENARIO_TABLE="$table" "$WORK/go-scenario.test" -test.run '^TestScenario$') >"$out.raw" ;;
      java)
        jar="$(find "$PREFIX" -name 'paimon-cleanup-java*.jar' -print -quit)"
        jni="$(dirname "$(find "$PREFIX" -name 'libpaimon_cleanup_jni.so' -print -quit)")"
        java "-Djava.library.path=$jni" \
          -cp "$jar:$(find "$BUILD_DIR/bindings/java" -name 'paimon-cleanup-java-tests*.jar' -print -quit)" \
          org.apache.paimon.cleanup.Scenario "$table" >"$out.raw" ;;
    esac || { echo "the $lang scenario failed" >&2; rc=1; }
    grep '^SCENARIO ' "$out.raw" >"$out" || true
    echo "$lang: $(wc -l <"$out") lines"
  done
  echo "--- C (reference):"
  cat "$WORK/scenario/c.out"
  [ "$(wc -l <"$WORK/scenario/c.out")" -eq 9 ] || { echo "expected 9 scenario lines from C" >&2; rc=1; }
  for lang in cpp go java; do
    if ! diff -u "$WORK/scenario/c.out" "$WORK/scenario/$lang.out"; then
      echo "$lang differs from C" >&2
      rc=1
    fi
  done
  return $rc
}
if [ "$HAVE_FIXTURES" = "1" ]; then
  run_step "scenario: C == C++ == Go == Java" scenario
else
  suite_skip "scenario: C == C++ == Go == Java" "Java fixture corpus not found"
fi

# --- summary ---------------------------------------------------------------------------------
suite_closing_line bindings
[ "$SUITES_FAILED" -eq 0 ]
