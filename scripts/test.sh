#!/usr/bin/env bash
# npm test: set up what is missing (Debian's chromium for the browser tests, Debian's prometheus
# and a Jaeger built from the Go module proxy for the observability tests, Debian's redis-server
# for the shared rate limits, Debian's haproxy for the scaled topology), then run every
# workspace's suite against real servers (ours, or the ones MONGO_URL / S3_ENDPOINT name).
# The fault tests (the jest project `faults`) and the deployment tests (`compose`, `swarm`) are left
# out here: `npm run test:faults`, scripts/compose-e2e.sh and scripts/swarm-e2e.sh run them.
# Extra arguments go to jest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/install-chromium.sh"
bash "$root/scripts/install-debian.sh" prometheus "${PROMETHEUS_PATH:-/usr/bin/prometheus}" PROMETHEUS_PATH
bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH
bash "$root/scripts/install-debian.sh" haproxy "${HAPROXY_PATH:-/usr/sbin/haproxy}" HAPROXY_PATH
bash "$root/scripts/install-tools.sh" jaeger
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
exec jest --ignoreProjects faults compose swarm "$@"
