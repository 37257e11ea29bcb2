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
# The launcher starts, watches and stops the servers; with SERVICES=all (the default) it also
# runs the gateway and every service itself (dev/devstack host.ts), so it takes Node's flags for
# every process of ours (NODE_FLAGS in dev/devstack system.ts).
exec node_modules/.bin/node --max-semi-space-size=4 dev/devstack/dist/src/start.js
