#!/usr/bin/env bash
# Builds, installs and tests the C ABI end to end:
#   1. cmake configure + build (one `cargo build --release --lib`) + install into a temp prefix
#   2. ctest --output-on-failure (C/C++ tests, valgrind runs)
#   3. examples/find_package built against the install prefix with find_package(), then run
#   4. examples/pkg_config/main.c built with pkg-config (shared and static), then run
# Installs cmake / pkg-config / valgrind / a C and C++ compiler with apt-get when missing.
#
# Environment:
#   PAIMON_FIXTURES          fixture tables (default: ../shared/fixtures/java-written-tables)
#   PAIMON_REQUIRE_FIXTURES  1 = fail instead of skipping when fixtures are missing
#   PAIMON_CLEANUP_BUILD_DIR build directory (default: build/c-abi)
#   PAIMON_CLEANUP_ASAN      ON = build the C tests with AddressSanitizer (valgrind runs dropped)
#   PAIMON_CLEANUP_DEFAULT_FEATURES  ON (default) = library built with cargo's default features
#   JOBS                     parallel build jobs (default: number of CPUs)
# Every step runs even if an earlier one failed; the exit status is non-zero if any failed. The
# closing line counts steps and ctest tests: `c-abi: N passed, M failed, K skipped (reason)`.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '\n==> %s\n' "$*"; }

# --- tools -----------------------------------------------------------------------------------
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
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

BUILD_DIR="${PAIMON_CLEANUP_BUILD_DIR:-$ROOT/build/c-abi}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
ASAN="${PAIMON_CLEANUP_ASAN:-OFF}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-test-c.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"

FIXTURES="${PAIMON_FIXTURES:-$ROOT/../shared/fixtures/java-written-tables}"
SAMPLE_TABLE=""
if [ -d "$FIXTURES/orc/append_09.db/append_09" ]; then
  SAMPLE_TABLE="$WORK/tables/append_09"
  mkdir -p "$WORK/tables"
  cp -R "$FIXTURES/orc/append_09.db/append_09" "$SAMPLE_TABLE"
  chmod -R u+w "$SAMPLE_TABLE"
elif [ "${PAIMON_REQUIRE_FIXTURES:-0}" = "1" ]; then
  echo "fixture tables not found at $FIXTURES and PAIMON_REQUIRE_FIXTURES=1" >&2
  exit 1
else
  echo "SKIP: fixture tables not found at $FIXTURES; examples print the version only"
fi

# shellcheck source=scripts/lib/summary.sh
. "$ROOT/scripts/lib/summary.sh"
FIXTURE_REASON="Java fixture corpus not found"
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
# A consumer example: without a fixture table it only prints the version, so it counts as skipped.
run_example() {
  local name="$1"
  shift
  log "$name"
  if ! "$@"; then
    echo "FAILED: $name" >&2
    suite_fail "$name"
  elif [ -z "$SAMPLE_TABLE" ]; then
    suite_skip "$name: built and run without a table" "$FIXTURE_REASON"
  else
    echo "ok: $name"
    suite_pass "$name"
  fi
}

# --- 1. configure, build, install ------------------------------------------------------------
# The library is built with cargo's default features here: the ctests (build_cli),
# test-bindings.sh and test-python.sh build the CLI (tools/) against them, and one feature set
# means the crate is compiled once. The library-only feature set is checked by test-all.sh
# (cargo clippy -p paimon-cleanup --lib --no-default-features) and tests/lean_library.rs.
run_step "cmake configure" cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
  "-DPAIMON_CLEANUP_ASAN=$ASAN" ${PAIMON_FIXTURES:+"-DPAIMON_FIXTURES_DIR=$PAIMON_FIXTURES"} \
  "-DPAIMON_CLEANUP_DEFAULT_FEATURES=${PAIMON_CLEANUP_DEFAULT_FEATURES:-ON}"
run_step "cmake build" cmake --build "$BUILD_DIR" -j "$JOBS"
run_step "cmake install" cmake --install "$BUILD_DIR" --prefix "$PREFIX"

# --- 2. ctest --------------------------------------------------------------------------------
log "ctest"
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS") 2>&1 | tee "$WORK/ctest.log"
suite_add_ctest "$WORK/ctest.log" "$FIXTURE_REASON"

# The installed shared library: libpaimon_cleanup.so -> .so.<ABI> -> .so.<ABI>.<version>, and the
# real file's SONAME is libpaimon_cleanup.so.<ABI>.
ABI="$(sed -nE 's/^#define PAIMON_CLEANUP_ABI_VERSION ([0-9]+).*/\1/p' "$ROOT/include/paimon_cleanup.h")"
SONAME="libpaimon_cleanup.so.$ABI"
installed_shared_library() { find "$PREFIX" -name "$SONAME.*" -type f -print -quit; }
installed_layout() {
  local real libdir
  real="$(installed_shared_library)"
  [ -n "$real" ] || { echo "no $SONAME.* file installed" >&2; return 1; }
  libdir="$(dirname "$real")"
  ls -l "$libdir"/libpaimon_cleanup*
  [ "$(readlink "$libdir/$SONAME")" = "$(basename "$real")" ] ||
    { echo "$libdir/$SONAME is not a link to $(basename "$real")" >&2; return 1; }
  [ "$(readlink "$libdir/libpaimon_cleanup.so")" = "$SONAME" ] ||
    { echo "$libdir/libpaimon_cleanup.so is not a link to $SONAME" >&2; return 1; }
  sh "$ROOT/c_tests/check_soname.sh" "$real" "$SONAME"
}
run_step "installed shared library (SONAME $SONAME, links)" installed_layout

# --- 3. find_package consumer ----------------------------------------------------------------
example_find_package() {
  local dir="$WORK/find_package"
  cmake -S "$ROOT/examples/find_package" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$PREFIX" &&
    cmake --build "$dir" -j "$JOBS" &&
    "$dir/paimon_cleanup_example" ${SAMPLE_TABLE:+"$SAMPLE_TABLE"} &&
    "$dir/paimon_cleanup_example_shared" &&
    sh "$ROOT/c_tests/check_soname.sh" "$(installed_shared_library)" "$SONAME" \
      "$dir/paimon_cleanup_example_shared"
}
run_example "find_package example" example_find_package

# --- 4. pkg-config consumer ------------------------------------------------------------------
example_pkg_config() {
  local pc libdir cflags libs static_libs
  pc="$(find "$PREFIX" -name paimon_cleanup.pc -print -quit)"
  [ -n "$pc" ] || { echo "paimon_cleanup.pc not installed" >&2; return 1; }
  export PKG_CONFIG_PATH="$(dirname "$pc")"
  pkg-config --exists --print-errors paimon_cleanup || return 1
  echo "pkg-config paimon_cleanup $(pkg-config --modversion paimon_cleanup)"
  libdir="$(pkg-config --variable=libdir paimon_cleanup)"
  cflags="$(pkg-config --cflags paimon_cleanup)"
  libs="$(pkg-config --libs paimon_cleanup)"
  static_libs="$(pkg-config --libs --static paimon_cleanup)"
  static_libs="${static_libs/-lpaimon_cleanup/-l:libpaimon_cleanup.a}"
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Wextra -Wpedantic -Werror "$ROOT/examples/pkg_config/main.c" $cflags $libs \
    "-Wl,-rpath,$libdir" -o "$WORK/pc_shared" || return 1
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Wextra -Wpedantic -Werror "$ROOT/examples/pkg_config/main.c" $cflags \
    $static_libs -o "$WORK/pc_static" || return 1
  # ldd's output is captured before it is searched: `ldd | grep -q` under `set -o pipefail`
  # failed at random when grep exited at the first match while ldd was still writing (SIGPIPE).
  local shared_deps static_deps
  shared_deps="$(ldd "$WORK/pc_shared")" || return 1
  grep -qF "$SONAME => $libdir/$SONAME" <<<"$shared_deps" ||
    { echo "pc_shared does not load the installed $SONAME:" >&2; echo "$shared_deps" >&2; return 1; }
  sh "$ROOT/c_tests/check_soname.sh" "$libdir/$SONAME" "$SONAME" "$WORK/pc_shared" || return 1
  static_deps="$(ldd "$WORK/pc_static")" || return 1
  if grep -qF libpaimon_cleanup <<<"$static_deps"; then
    echo "pc_static links libpaimon_cleanup dynamically" >&2
    return 1
  fi
  "$WORK/pc_shared" ${SAMPLE_TABLE:+"$SAMPLE_TABLE"} &&
    "$WORK/pc_static" ${SAMPLE_TABLE:+"$SAMPLE_TABLE"}
}
run_example "pkg-config example" example_pkg_config

# --- 5. the README's pkg-config lines, verbatim ------------------------------------------------
# The `sh` block after "pkg-config:" in README.md's Linking section, run as a user would type it
# (the install prefix /opt/paimon-cleanup replaced by this run's, app.c by the example program);
# the program it builds must start (find libpaimon_cleanup.so.<ABI>) with no LD_LIBRARY_PATH.
readme_pkg_config() {
  local block dir
  dir="$WORK/readme_pkg_config"
  mkdir -p "$dir"
  block="$(awk '/^pkg-config:$/ {seen = 1; next} seen && /^```sh$/ {inside = 1; next}
                inside && /^```$/ {exit} inside {print}' "$ROOT/README.md")"
  [ -n "$block" ] || { echo "README.md has no sh block after 'pkg-config:'" >&2; return 1; }
  grep -qF 'app.c' <<<"$block" || { echo "README's pkg-config block builds no app.c" >&2; return 1; }
  cp "$ROOT/examples/pkg_config/main.c" "$dir/app.c"
  block="${block//\/opt\/paimon-cleanup/$PREFIX}"
  echo "$block"
  (cd "$dir" && unset LD_LIBRARY_PATH && bash -euo pipefail -c "$block" && ./a.out ${SAMPLE_TABLE:+"$SAMPLE_TABLE"})
}
run_example "README pkg-config lines" readme_pkg_config

# --- summary ---------------------------------------------------------------------------------
suite_closing_line c-abi
[ "$SUITES_FAILED" -eq 0 ]
