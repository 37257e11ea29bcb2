#!/usr/bin/env bash
# npm run soak: ten minutes of mixed traffic with every process's memory sampled (see
# bench/src/soak.ts). Not part of CI. Writes bench/results/soak.{json,md}.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# Every system runs a redis-server of its own: the event bus.
bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH
cd "$root"
exec node_modules/.bin/node bench/dist/src/soak.js
