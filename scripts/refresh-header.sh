#!/usr/bin/env bash
# Rewrites the committed C header include/paimon_cleanup.h from src/ffi (cbindgen, the same
# rendering as build.rs). The build itself never touches the source tree; tests/header_fresh.rs
# fails until the refreshed header is committed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PAIMON_CLEANUP_REFRESH_HEADER=1 cargo test -q --test header_fresh \
  committed_header_matches_cbindgen_output -- --exact --nocapture
git --no-pager diff --stat -- include/paimon_cleanup.h 2>/dev/null || true
