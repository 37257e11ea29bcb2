#!/usr/bin/env bash
# npm run test:faults: the reliability promises (tests/faults, the jest project `faults`), each
# against the real system with real servers that the tests kill, pause and restart themselves, one
# file at a time: a fault test's timings must not share two cores with another's load. Writes the
# figures to bench/results/faults.{json,md}. Extra arguments go to jest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# The tests start servers of their own to break, even when MONGO_URL / S3_ENDPOINT name others.
bash "$root/scripts/install-tools.sh"
# The scale-out test: replicas behind Debian's HAProxy, limits counted in Debian's redis-server.
bash "$root/scripts/install-debian.sh" haproxy "${HAPROXY_PATH:-/usr/sbin/haproxy}" HAPROXY_PATH
bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
export FAULTS_FIGURES_DIR="$root/.data/faults-figures"
rm -rf "$FAULTS_FIGURES_DIR"
status=0
# The servers' and processes' logs stay after the run (KEEP_TEST_DATA), so that a failure can be
# read: on one, the end of every fault system's logs is printed below, as CI keeps only the output.
marker="$(mktemp)"
KEEP_TEST_DATA=1 jest --selectProjects faults --maxWorkers=1 "$@" || status=$?
for dir in "$root"/.data/test-*/; do
  [ "$dir" -nt "$marker" ] || continue
  if [ "$status" -ne 0 ]; then
    for log in "$dir"faults-*/logs/*.log; do
      [ -f "$log" ] || continue
      echo "== the end of ${log#"$root"/}"
      tail -n 30 "$log"
    done
  fi
  rm -rf "$dir"
done
rm -f "$marker"
node bench/dist/src/faults-report.js "$FAULTS_FIGURES_DIR" bench/results || status=$?
exit "$status"
