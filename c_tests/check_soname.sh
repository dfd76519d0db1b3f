#!/bin/sh
# Checks the shared library's versioned SONAME and that programs linked against it load it by
# that name:
#   check_soname.sh <libpaimon_cleanup.so> <expected SONAME> [program...]
# Every program must record the SONAME as NEEDED (not the unversioned file name) and the loader
# must resolve it (ldd shows no "not found").
set -eu
lib="$1"
soname="$2"
shift 2
command -v readelf >/dev/null 2>&1 || { echo "SKIP: readelf not found"; exit 77; }
status=0
actual="$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')"
if [ "$actual" = "$soname" ]; then
  echo "SONAME of $lib: $actual"
else
  echo "SONAME of $lib is '$actual', expected '$soname'"
  status=1
fi
for program in "$@"; do
  needed="$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(libpaimon_cleanup[^]]*\)\].*/\1/p')"
  if [ "$needed" != "$soname" ]; then
    echo "$program needs '$needed', expected '$soname'"
    status=1
    continue
  fi
  # Capture first: `ldd | grep -q` under pipefail fails when grep exits before ldd is done.
  resolved="$(ldd "$program")"
  line="$(printf '%s\n' "$resolved" | grep -F "$soname" || true)"
  case "$line" in
    *"=> not found"* | "")
      echo "$program: $soname is not resolved by the loader: $line"
      status=1
      ;;
    *) echo "$program loads $line" ;;
  esac
done
exit $status
