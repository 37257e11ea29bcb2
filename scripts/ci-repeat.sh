#!/usr/bin/env bash
# Runs CI as CI runs it, N times in a row: each time a fresh clone of this repository's HEAD
# (nothing but what its own files install), then `CI=true bash .ci/run`. Records each run's exit
# code, wall time and closing counts, and stops at the first failure. The record is printed and
# kept in .data/ci-repeat/ (output, not source: never committed).
#
#   bash scripts/ci-repeat.sh 5
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-5}"
work="${CI_REPEAT_DIR:-/tmp/ci-repeat}"
record="$root/.data/ci-repeat/$(date -u +%Y%m%dT%H%M%S)-$$.md"
mkdir -p "$(dirname "$record")"
report() { printf '%s\n' "$*" | tee -a "$record"; }

report "# $runs fresh-clone runs of .ci/run"
report "commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
report ""
for i in $(seq 1 "$runs"); do
  dir="$work/run-$i"
  rm -rf "$dir"
  mkdir -p "$work"
  git clone -q "$root" "$dir"
  started=$(date +%s)
  (cd "$dir" && CI=true bash .ci/run </dev/null >"$work/run-$i.log" 2>&1)
  code=$?
  took=$(($(date +%s) - started))
  counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/run-$i.log" | tail -1)
  faults=$(grep -E '^Tests: ' "$work/run-$i.log" | tail -1 | tr -s ' ')
  report "run $i: exit $code, $((took / 60)) min $((took % 60)) s; npm test: ${counts:-?}; faults: ${faults:-?}"
  # The fault tests' figures of each run (bench/results/faults.{json,md} in the clone).
  for f in faults.json faults.md; do cp "$dir/bench/results/$f" "$work/run-$i-$f" 2>/dev/null; done
  [ "$code" -eq 0 ] || { report "(log: $work/run-$i.log)"; exit 1; }
  rm -rf "$dir"
done
