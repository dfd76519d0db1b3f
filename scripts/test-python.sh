#!/usr/bin/env bash
# Builds the Python package (bindings/python) as a wheel around the release library, installs it
# into a fresh venv and tests it there:
#   1. `cargo build --release --lib --bin paimon-cleanup --bin paimon-gen` (a no-op when
#      test-c.sh already built them: the wheel reuses target/release/libpaimon_cleanup.so,
#      nothing is compiled twice; paimon-gen writes the table of test_expiry_units.py)
#   2. a fresh venv; `pip wheel bindings/python` (hatchling, build hook bundling the library)
#   3. the wheel + pytest + tqdm installed into the venv
#   4. pytest bindings/python/tests in that venv (pypaimon side through $PAIMON_PYTHON, CLI
#      reference target/release/paimon-cleanup); no tests collected (exit 5) is a failure
#   5. the README's Python example (extracted from README.md) on a pypaimon-written table
#   6. the cross-binding scenario (bindings/SCENARIO.md) through Python, compared line by line
#      with the C runner built by test-bindings.sh (skipped when that runner is not built)
#
# Environment:
#   PAIMON_PYTHON     harness venv python with pypaimon (default: scripts/setup-python.sh)
#   CARGO_TARGET_DIR  cargo's target directory (default: target/)
#   PYTHON3           interpreter the fresh venv is made from (default: python3)
#   PAIMON_FIXTURES   Java fixture tables for the scenario (default: ../shared/fixtures/...)
#   PAIMON_CLEANUP_BUILD_DIR  where test-bindings.sh built the C scenario runner (build/c-abi)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf '\n==> %s\n' "$*"; }
fail() { echo "test-python: $*" >&2; exit 1; }

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
PYTHON3="${PYTHON3:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/paimon-cleanup-test-python.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export PYTHONDONTWRITEBYTECODE=1

log "cargo build --release --lib --bin paimon-cleanup --bin paimon-gen"
cargo build --release --lib --bin paimon-cleanup --bin paimon-gen || fail "cargo build failed"
[ -f "$TARGET/release/libpaimon_cleanup.so" ] || fail "no $TARGET/release/libpaimon_cleanup.so"
export PAIMON_GEN="$TARGET/release/paimon-gen"

if [ -z "${PAIMON_PYTHON:-}" ]; then
  PAIMON_PYTHON="$(bash scripts/setup-python.sh | tail -n 1)" || fail "setup-python.sh failed"
fi
export PAIMON_PYTHON
export PAIMON_CLEANUP_CLI="$TARGET/release/paimon-cleanup"
export PAIMON_CLEANUP_REPO="$ROOT"

log "fresh venv, wheel, install"
VENV="$WORK/venv"
"$PYTHON3" -m venv "$VENV" || fail "cannot create a venv with $PYTHON3"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input -q)
"${PIP[@]}" wheel --no-deps -w "$WORK/dist" "$ROOT/bindings/python" || fail "wheel build failed"
WHEEL="$(find "$WORK/dist" -name 'paimon_cleanup-*.whl' -print -quit)"
[ -n "$WHEEL" ] || fail "no wheel in $WORK/dist"
case "$(basename "$WHEEL")" in
  *-py3-none-any.whl) fail "the wheel is not platform-tagged: $(basename "$WHEEL")" ;;
esac
echo "wheel: $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1))"
"${PIP[@]}" install "$WHEEL" pytest tqdm || fail "installing the wheel failed"

log "pytest bindings/python/tests"
(cd "$ROOT/bindings/python" &&
  "$VENV/bin/python" -m pytest tests -p no:cacheprovider -q -rs --durations=5)
rc=$?
if [ "$rc" -eq 5 ]; then
  fail "pytest collected no tests"
elif [ "$rc" -ne 0 ]; then
  fail "pytest failed (exit $rc)"
fi

log "README's Python example"
EXAMPLE="$WORK/readme_example.py"
# The first ```python block after the "## Python" heading; its table path is replaced by a
# fresh pypaimon-written table.
awk '/^## Python/{s=1} s&&/^```python$/{c=1;next} c&&/^```$/{exit} c{print}' README.md >"$EXAMPLE"
grep -q 'import paimon_cleanup' "$EXAMPLE" || fail "no Python example found in README.md"
grep -q '/data/wh/db.db/t' "$EXAMPLE" || fail "the README example no longer uses /data/wh/db.db/t"
"$PAIMON_PYTHON" tests/py/make_tables.py "$WORK/wh" --only append_unaware --quiet ||
  fail "make_tables.py failed"
sed -i "s|/data/wh/db.db/t|$WORK/wh/db.db/append_unaware|g" "$EXAMPLE"
(cd "$WORK" && "$VENV/bin/python" "$EXAMPLE") || fail "the README's Python example failed"

log "scenario: Python == C"
FIXTURES="${PAIMON_FIXTURES:-$ROOT/../shared/fixtures/java-written-tables}"
C_RUNNER="${PAIMON_CLEANUP_BUILD_DIR:-$ROOT/build/c-abi}/bindings/cpp/paimon_cleanup_scenario_c"
prepare_scenario_copy() {
  local dst="$1" old
  mkdir -p "$(dirname "$dst")"
  cp -R "$FIXTURES/parquet/pk_09.db/pk_09" "$dst" && chmod -R u+w "$dst" || return 1
  printf '01234567890123456789' >"$dst/f1=10/bucket-0/data-planted-orphan-0.parquet"
  printf '0123456789' >"$dst/manifest/manifest-planted-orphan-0"
  old="@$(($(date +%s) - 3 * 24 * 3600))"
  touch -d "$old" "$dst/f1=10/bucket-0/data-planted-orphan-0.parquet" \
    "$dst/manifest/manifest-planted-orphan-0"
}
if [ ! -d "$FIXTURES/parquet/pk_09.db/pk_09" ]; then
  [ "${PAIMON_REQUIRE_FIXTURES:-0}" = "1" ] && fail "fixture tables not found at $FIXTURES"
  echo "SKIP: fixture tables not found at $FIXTURES"
elif [ ! -x "$C_RUNNER" ]; then
  echo "SKIP: $C_RUNNER not built (scripts/test-bindings.sh builds it)"
else
  prepare_scenario_copy "$WORK/scenario/c/pk_09" && prepare_scenario_copy "$WORK/scenario/py/pk_09" ||
    fail "cannot prepare the scenario copies"
  "$C_RUNNER" "$WORK/scenario/c/pk_09" | grep '^SCENARIO ' >"$WORK/scenario/c.out"
  "$VENV/bin/python" bindings/python/tests/scenario.py "$WORK/scenario/py/pk_09" |
    grep '^SCENARIO ' >"$WORK/scenario/py.out"
  [ "$(wc -l <"$WORK/scenario/c.out")" -eq 9 ] || fail "expected 9 scenario lines from C"
  diff -u "$WORK/scenario/c.out" "$WORK/scenario/py.out" || fail "the Python scenario differs from C"
  echo "9 scenario lines identical"
fi

echo "python: wheel built, tests passed, README example ran"
