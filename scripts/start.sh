#!/usr/bin/env bash
# npm start: set up what is missing, then run the whole system on embedded defaults.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# Redis: the event bus (and, scaled, where the gateways count their limits), unless REDIS_URL names one.
[ -n "${REDIS_URL:-}" ] || bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH
# Scaled (REPLICAS or GATEWAYS above 1): HAProxy in front of the replicas.
if [ "${REPLICAS:-1}" != 1 ] || [ "${GATEWAYS:-1}" != 1 ]; then
  bash "$root/scripts/install-debian.sh" haproxy "${HAPROXY_PATH:-/usr/sbin/haproxy}" HAPROXY_PATH
fi
cd "$root"
# The launcher only starts, watches and stops the others: V8's lite mode (no optimizing compiler)
# and a 1 MB young generation keep it at about 50 MB RSS, 39 MB of which is Node's own code,
# shared with the five processes it starts (18 MB PSS).
exec node_modules/.bin/node --lite-mode --max-semi-space-size=1 dev/devstack/dist/src/start.js
