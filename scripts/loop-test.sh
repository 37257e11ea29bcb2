#!/usr/bin/env bash
# Runs jest test files N times in a row, each run a fresh jest process with its own servers, and
# records every run's outcome. A test that depends on timing or concurrency is trusted only after
# a loop like this. The record is output, not source: it is printed, with the commit it ran on,
# and kept with the failed runs' output in .data/loop-logs/<time>-<pid>/ (never committed; cite it
# in the change's notes).
#
#   bash scripts/loop-test.sh RUNS TEST_FILE [TEST_FILE…]
#
# Fault tests (tests/faults/…) run as the jest project `faults`, one file at a time, as
# `npm run test:faults` runs them (one run may not mix them with other tests). Exits 1 when any
# run failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:?usage: loop-test.sh RUNS TEST_FILE [TEST_FILE…]}"
shift
[ "$#" -gt 0 ] || { echo "usage: loop-test.sh RUNS TEST_FILE [TEST_FILE…]" >&2; exit 2; }
files=("$@")
export PATH="$root/node_modules/.bin:$PATH"

select=(--ignoreProjects faults compose swarm)
case "${files[0]}" in tests/faults/*) select=(--selectProjects faults --maxWorkers=1) ;; esac
logs="$root/.data/loop-logs/$(date -u +%Y%m%dT%H%M%S)-$$"
mkdir -p "$logs"
record="$logs/record.md"

commit="$(git rev-parse --short HEAD)$([ -n "$(git status --porcelain)" ] && echo '+uncommitted')"
report() { printf '%s\n' "$*" | tee -a "$record"; }
report "# $runs runs of ${files[*]}"
report "commit $commit, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
report ""

passed=0
failed=0
for i in $(seq 1 "$runs"); do
  log="$logs/run-$i.log"
  started=$(date +%s)
  if jest "${select[@]}" --ci "${files[@]}" >"$log" 2>&1; then
    passed=$((passed + 1))
    report "run $i: passed ($(($(date +%s) - started)) s)"
    rm -f "$log"
  else
    failed=$((failed + 1))
    # The failed test and the first lines of what it received, so the record says what broke.
    test=$(grep -m1 -E '^\s+● ' "$log" | sed 's/^ *● //')
    got=$(grep -m1 -A14 -E '^\s+(\+ Received|Received:|Expected:|thrown:)' "$log" | grep -E '^\s+(\+|Received)' |
      sed 's/^ *//' | tr -s ' ' | head -8 | paste -sd' ' -)
    why="$test: ${got:-see the log}"
    report "run $i: FAILED ($(($(date +%s) - started)) s): ${why:-see $log} (log: ${logs#"$root"/}/run-$i-failed.log)"
    mv "$log" "$logs/run-$i-failed.log"
  fi
done
report ""
report "$passed passed, $failed failed"
echo "(this record: ${record#"$root"/})"
[ "$failed" -eq 0 ]
