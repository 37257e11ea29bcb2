#!/usr/bin/env bash
# npm run bench:scale: set up what is missing (Debian's haproxy for the balancer, Debian's
# redis-server for the shared rate limits), then measure 1 against 2 replicas of every process,
# the balancer hop and Redis on the auth route (see bench/src/scale.ts). About 6 minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH
bash "$root/scripts/install-debian.sh" haproxy "${HAPROXY_PATH:-/usr/sbin/haproxy}" HAPROXY_PATH
cd "$root"
exec node_modules/.bin/node bench/dist/src/scale.js
