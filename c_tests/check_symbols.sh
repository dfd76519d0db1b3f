#!/bin/sh
# Checks the shared library's dynamic symbol table against the header: every exported symbol has
# the paimon_cleanup_ prefix, and every function the header declares is exported.
#   check_symbols.sh <libpaimon_cleanup.so> <paimon_cleanup.h>
set -eu
lib="$1"
header="$2"
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm not found"; exit 77; }
exported="$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)"
declared="$(grep -oE '\bpaimon_cleanup_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)"
status=0
stray="$(printf '%s\n' "$exported" | grep -v '^paimon_cleanup_' || true)"
if [ -n "$stray" ]; then
  echo "exported symbols without the paimon_cleanup_ prefix:"
  printf '  %s\n' $stray
  status=1
fi
for fn in $declared; do
  if ! printf '%s\n' "$exported" | grep -qx "$fn"; then
    echo "declared in the header but not exported: $fn"
    status=1
  fi
done
for fn in $exported; do
  if ! printf '%s\n' "$declared" | grep -qx "$fn"; then
    echo "exported but not declared in the header: $fn"
    status=1
  fi
done
echo "$(printf '%s\n' "$exported" | wc -l) exported symbols checked"
exit $status
