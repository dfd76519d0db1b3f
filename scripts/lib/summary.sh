# Counting suites for the closing line of the test runners (sourced by scripts/test-*.sh).
#
# A suite is one unit that passes, fails or is skipped: a script step, a ctest test, a Rust test
# binary. A suite that could not test what it is for (no fixtures, no interpreter, ...) counts as
# skipped, never as passed. The closing line is
#   <prefix>: N passed, M failed, K skipped (reason; reason)
# and scripts/test-all.sh adds up the closing lines of the runners it calls.

SUITES_PASSED=0
SUITES_FAILED=0
SUITES_SKIPPED=0
SUITES_FAILED_NAMES=()
SUITES_SKIP_REASONS=()

suite_pass() { SUITES_PASSED=$((SUITES_PASSED + ${2:-1})); }

suite_fail() {
  SUITES_FAILED=$((SUITES_FAILED + ${2:-1}))
  SUITES_FAILED_NAMES+=("$1")
}

# suite_skip <name> <reason> [count]
suite_skip() {
  local reason="$2" r
  SUITES_SKIPPED=$((SUITES_SKIPPED + ${3:-1}))
  echo "SKIP: $1 ($reason)"
  for r in "${SUITES_SKIP_REASONS[@]+"${SUITES_SKIP_REASONS[@]}"}"; do
    [ "$r" = "$reason" ] && return 0
  done
  SUITES_SKIP_REASONS+=("$reason")
}

# Adds a closing line `<prefix>: N passed, M failed, K skipped (...)` from a runner's output to
# the counts; a runner without one (it crashed) counts as one failed suite.
# suite_add_closing_line <runner name> <log file> <prefix>
suite_add_closing_line() {
  local name="$1" log="$2" prefix="$3" line p f s reasons r
  line="$(grep -E "^$prefix: [0-9]+ passed, [0-9]+ failed" "$log" | tail -n 1)"
  if [ -z "$line" ]; then
    suite_fail "$name (no closing line)"
    return
  fi
  p="$(sed -E 's/^[^:]*: ([0-9]+) passed.*/\1/' <<<"$line")"
  f="$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")"
  s=0
  if grep -qE ' [0-9]+ skipped' <<<"$line"; then
    s="$(sed -E 's/.* ([0-9]+) skipped.*/\1/' <<<"$line")"
  fi
  suite_pass "$name" "$p"
  [ "$f" -gt 0 ] && suite_fail "$name" "$f"
  if [ "$s" -gt 0 ]; then
    reasons="$(sed -nE 's/.* skipped \((.*)\)$/\1/p' <<<"$line")"
    SUITES_SKIPPED=$((SUITES_SKIPPED + s))
    IFS=';' read -ra parts <<<"${reasons:-see the log}"
    for r in "${parts[@]}"; do
      r="${r# }"
      local known=0 k
      for k in "${SUITES_SKIP_REASONS[@]+"${SUITES_SKIP_REASONS[@]}"}"; do
        [ "$k" = "$r" ] && known=1
      done
      [ "$known" = 1 ] || SUITES_SKIP_REASONS+=("$r")
    done
  fi
}

# Counts the tests of a ctest run from its output: each test is a suite, "***Skipped" ones
# (exit code 77: fixtures, tools missing) count as skipped with <reason>.
# suite_add_ctest <log file> <reason for skips>
suite_add_ctest() {
  local log="$1" reason="$2" total failed skipped
  total="$(sed -nE 's/.* tests? failed out of ([0-9]+).*/\1/p' "$log" | tail -n 1)"
  failed="$(sed -nE 's/.* ([0-9]+) tests? failed out of.*/\1/p' "$log" | tail -n 1)"
  if [ -z "$total" ]; then
    suite_fail "ctest (no summary)"
    return
  fi
  skipped="$(grep -cE '\*\*\*(Skipped|Not Run)' "$log" || true)"
  suite_pass ctest $((total - failed - skipped))
  [ "$failed" -gt 0 ] && suite_fail "ctest: $failed tests" "$failed"
  if [ "$skipped" -gt 0 ]; then suite_skip "$skipped ctest tests" "$reason" "$skipped"; fi
  return 0
}

# The closing line: `<prefix>: N passed, M failed, K skipped (reason; reason)`.
suite_closing_line() {
  local prefix="$1" reasons=""
  if ((${#SUITES_SKIP_REASONS[@]})); then
    reasons="$(printf '%s; ' "${SUITES_SKIP_REASONS[@]}")"
    reasons=" (${reasons%; })"
  fi
  if ((${#SUITES_FAILED_NAMES[@]})); then
    echo "failed: ${SUITES_FAILED_NAMES[*]}"
  fi
  echo "$prefix: $SUITES_PASSED passed, $SUITES_FAILED failed, $SUITES_SKIPPED skipped$reasons"
}
