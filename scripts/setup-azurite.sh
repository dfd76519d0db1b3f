#!/usr/bin/env bash
# Install (or reuse) Azurite, the Azure Blob Storage emulator the tests of tests/azure.rs start
# on loopback, into a project-local npm prefix (<repo>/.azurite by default), pinned to
# azurite@3.35.0: the last release whose engines field accepts node 20 (3.36.0 wants >= 21,
# 3.37.0 >= 22). Idempotent: a quick no-op when it is already there. Installs nodejs/npm with
# apt-get when they are missing and this runs as root. Prints the azurite-blob path as the
# last line of stdout.
#
#   scripts/setup-azurite.sh                          # -> /abs/path/.azurite/node_modules/.bin/azurite-blob
#   PAIMON_AZURITE_DIR=/some/dir scripts/setup-azurite.sh
set -euo pipefail

AZURITE_VERSION="3.35.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${PAIMON_AZURITE_DIR:-$ROOT/.azurite}"
BIN="$DIR/node_modules/.bin/azurite-blob"

log() { echo "setup-azurite: $*" >&2; }

have_azurite() {
  [ -x "$BIN" ] || return 1
  command -v node >/dev/null 2>&1 || return 1
  [ "$("$BIN" --version 2>/dev/null | tail -n1 | tr -d '[:space:]')" = "$AZURITE_VERSION" ]
}

if have_azurite; then
  echo "$BIN"
  exit 0
fi

if command -v flock >/dev/null 2>&1; then
  mkdir -p "$DIR"
  exec 9>"$DIR/.setup.lock"
  flock 9
  if have_azurite; then
    echo "$BIN"
    exit 0
  fi
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "node/npm missing; installing nodejs npm with apt-get"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
  else
    log "node/npm not found (and not root / no apt-get to install them)"
    exit 1
  fi
fi
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" -lt 10 ]; then
  log "node $(node --version) is older than azurite@$AZURITE_VERSION accepts (>= 10)"
  exit 1
fi

log "installing azurite@$AZURITE_VERSION into $DIR"
npm install --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error \
  "azurite@$AZURITE_VERSION" >&2

if ! have_azurite; then
  log "azurite@$AZURITE_VERSION not runnable after install ($BIN)"
  exit 1
fi
echo "$BIN"
