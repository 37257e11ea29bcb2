#!/usr/bin/env bash
# npm run bench: set up what is missing, then run every scenario (see bench/src/run.ts).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# Every system runs a redis-server of its own: the event bus.
bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH
# Scenario 14's baseline, built only for it and for search's.
case "${BENCH_ONLY:-}" in pocketbase | search) bash "$root/scripts/install-tools.sh" pocketbase ;; esac
cd "$root"
# Scenario 13 holds 10,000 streams through the gateway: a client connection and an upstream socket
# each. Raise the open-files limit for what this script starts, where the hard limit allows it.
ulimit -n "${BENCH_OPEN_FILES:-65536}" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec node_modules/.bin/node bench/dist/src/run.js
