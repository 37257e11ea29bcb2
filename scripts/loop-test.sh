#!/usr/bin/env bash
# Runs one jest test file N times in a row, each run a fresh jest process with its own servers,
# and records every run's outcome. A test that depends on timing or concurrency is trusted only
# after a loop like this; the record goes under bench/results/ with the commit it ran on.
#
#   bash scripts/loop-test.sh RUNS TEST_FILE [OUT_FILE]
#
# Fault tests (bench/faults/…) run under jest.faults.config.js, anything else under the default
# config. Exits 1 when any run failed. The failed runs' output is kept in .data/loop-logs/.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:?usage: loop-test.sh RUNS TEST_FILE [OUT_FILE]}"
file="${2:?usage: loop-test.sh RUNS TEST_FILE [OUT_FILE]}"
out="${3:-}"
export PATH="$root/node_modules/.bin:$PATH"

config=jest.config.js
case "$file" in bench/faults/*) config=jest.faults.config.js ;; esac
logs="$root/.data/loop-logs"
mkdir -p "$logs"

commit="$(git rev-parse --short HEAD)$([ -n "$(git status --porcelain -- ':!bench/results')" ] && echo '+uncommitted')"
report() { printf '%s\n' "$*"; [ -z "$out" ] || printf '%s\n' "$*" >>"$out"; }
[ -z "$out" ] || : >"$out"
report "# $runs runs of $file"
report "commit $commit, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
report ""

passed=0
failed=0
for i in $(seq 1 "$runs"); do
  log="$logs/run-$i.log"
  started=$(date +%s)
  if jest -c "$config" --ci "$file" >"$log" 2>&1; then
    passed=$((passed + 1))
    report "run $i: passed ($(($(date +%s) - started)) s)"
    rm -f "$log"
  else
    failed=$((failed + 1))
    # The first failed expectation, so the record says what broke, not only that it did.
    why=$(grep -m1 -E '^\s+(Expected|Received|thrown|Error|●)' "$log" | sed 's/^ *//')
    report "run $i: FAILED ($(($(date +%s) - started)) s): ${why:-see $log} (log: .data/loop-logs/run-$i-failed.log)"
    mv "$log" "$logs/run-$i-failed.log"
  fi
done
report ""
report "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
