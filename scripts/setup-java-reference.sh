#!/usr/bin/env bash
# Resolves Paimon Java (the versions pinned in tests/java-reference/pom.xml: paimon-bundle,
# paimon-s3 (its S3 file IO, for s3:// tables), a Hadoop client, an slf4j binding) with Maven
# into ~/.m2, and compiles the reference harness
# (tests/java-reference/src) against them. Idempotent: offline (-o) once everything is cached,
# and javac runs only when a source or the pom changed.
#
# Output: tests/java-reference/target/classpath.txt (the harness classes, then the jars) and
# tests/java-reference/target/classes; the last line printed is the class path.
# tests/java_reference.rs reads classpath.txt (or PAIMON_JAVA_CLASSPATH) and skips without it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/tests/java-reference"
OUT="$DIR/target"
mkdir -p "$OUT"

for tool in mvn javac java; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup-java-reference: $tool not found" >&2; exit 1; }
done

deps="$OUT/dependencies.txt"
if [ ! -s "$deps" ] || [ "$DIR/pom.xml" -nt "$deps" ]; then
  # Offline first (everything cached in ~/.m2), then online.
  if ! mvn -q -o -B -f "$DIR/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$deps.tmp" >"$OUT/mvn.log" 2>&1; then
    mvn -q -B -f "$DIR/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$deps.tmp" >"$OUT/mvn.log" 2>&1 || {
        cat "$OUT/mvn.log" >&2
        echo "setup-java-reference: Maven could not resolve the pinned artifacts" >&2
        exit 1
      }
  fi
  mv "$deps.tmp" "$deps"
fi

stamp="$OUT/classes/.built"
sources=$(find "$DIR/src/main/java" -name '*.java' | sort)
rebuild=0
if [ ! -f "$stamp" ] || [ "$deps" -nt "$stamp" ]; then
  rebuild=1
else
  for f in $sources; do
    if [ "$f" -nt "$stamp" ]; then rebuild=1; fi
  done
fi
if [ "$rebuild" = 1 ]; then
  rm -rf "$OUT/classes"
  mkdir -p "$OUT/classes"
  # shellcheck disable=SC2086
  javac -nowarn --release 17 -encoding UTF-8 -cp "$(cat "$deps")" -d "$OUT/classes" $sources
  touch "$stamp"
fi

echo "$OUT/classes:$(cat "$deps")" >"$OUT/classpath.txt"
echo "paimon-bundle: $(tr ':' '\n' <"$deps" | grep paimon-bundle)"
cat "$OUT/classpath.txt"
