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
# The launcher starts, watches and stops the servers, and with SERVICES=all (the default) runs the
# gateway and every service in one child process that it starts again if it crashes (dev/devstack
# supervisor.ts). It loads none of the product's code; Node's flags for the product's processes are
# NODE_FLAGS in dev/devstack system.ts. The launcher's own work is small once the servers are up
# (it waits, and restarts what dies): the smallest young generation, no V8 worker threads and no
# optimizing compiler took its idle PSS from 27.4 to 20.6 MB, measured, under the 250 MB of issue 51.
# npm runs this script under `sh -c`, and a SIGTERM to npm ends that shell without reaching us: with
# setpriv (util-linux), the end of our parent, however it ends, is a SIGTERM to the launcher, which
# then stops everything it started.
pdeathsig=()
if command -v setpriv >/dev/null 2>&1; then pdeathsig=(setpriv --pdeathsig=TERM --); fi
exec "${pdeathsig[@]}" node_modules/.bin/node --max-semi-space-size=1 --v8-pool-size=0 --lite-mode dev/devstack/dist/src/start.js
