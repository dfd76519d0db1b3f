#!/usr/bin/env bash
# Runs every test of the project on a fresh Debian machine (installs what it needs):
# formatting and lints, the Rust unit and integration tests (Java fixtures + pypaimon tables),
# the object-store suites against loopback emulators (S3: moto, GCS: gcp-storage-emulator,
# Azure: Azurite; docs/storage.md), and the C/C++ tests with the CMake package (scripts/test-c.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/setup-python.sh >/dev/null
export PAIMON_PYTHON="${PAIMON_PYTHON:-$PWD/.venv/bin/python}"
# Azurite (npm) for tests/azure.rs; the suites start it (and moto, gcp-storage-emulator) on loopback.
PAIMON_AZURITE="${PAIMON_AZURITE:-$(bash scripts/setup-azurite.sh | tail -n1)}"
export PAIMON_AZURITE

echo "== pypaimon harness self-test"
"$PAIMON_PYTHON" tests/py/selftest.py
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --all-targets -- -D warnings
echo "== cargo test"
cargo test --all-targets 2>&1 | tee /tmp/paimon-cleanup-cargo-test.log
echo "== C / C++ tests"
bash scripts/test-c.sh
bash scripts/test-bindings.sh
echo "== all tests passed"
