#!/usr/bin/env bash
# Builds the Python package (bindings/python) as a wheel around the release library, installs it
# into a fresh venv and tests it there:
#   1. `cargo build --release --lib --bin paimon-cleanup` (a no-op when test-c.sh already built
#      them: the wheel reuses target/release/libpaimon_cleanup.so, nothing is compiled twice)
#   2. a fresh venv; `pip wheel bindings/python` (hatchling, build hook bundling the library)
#   3. the wheel + pytest + tqdm installed into the venv
#   4. pytest bindings/python/tests in that venv (pypaimon side through $PAIMON_PYTHON, CLI
#      reference target/release/paimon-cleanup); no tests collected (exit 5) is a failure
#   5. the README's Python example (extracted from README.md) on a pypaimon-written table
#
# Environment:
#   PAIMON_PYTHON     harness venv python with pypaimon (default: scripts/setup-python.sh)
#   CARGO_TARGET_DIR  cargo's target directory (default: target/)
#   PYTHON3           interpreter the fresh venv is made from (default: python3)
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

log "cargo build --release --lib --bin paimon-cleanup"
cargo build --release --lib --bin paimon-cleanup || fail "cargo build failed"
[ -f "$TARGET/release/libpaimon_cleanup.so" ] || fail "no $TARGET/release/libpaimon_cleanup.so"

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

echo "python: wheel built, tests passed, README example ran"
