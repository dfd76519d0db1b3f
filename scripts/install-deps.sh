#!/usr/bin/env bash
# Installs the system packages the build and tests need (Debian; run as root). Idempotent.
set -euo pipefail
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v mvn >/dev/null 2>&1 || need+=(maven) # fetches the Flink jobs' jars (scripts/setup-flink.sh)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing tools: ${need[*]} (install them, or run as root on Debian)" >&2
    exit 1
  fi
fi
