#!/usr/bin/env bash
# npm run bench: set up what is missing, then run every scenario (see bench/src/run.ts).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# Every system runs a redis-server of its own: the event bus.
bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH
cd "$root"
exec node_modules/.bin/node bench/dist/src/run.js
