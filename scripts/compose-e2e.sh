#!/usr/bin/env bash
# The Compose deployment, built and run for real: the jest project `compose` (tests/compose)
# builds every image, brings the stack up with docker-compose.yml and checks it, one named case per
# promise (the journey through the published ports, deploys and scale-out under traffic, a killed
# process, `down` and `up`, secrets, the rate limits shared by two gateways behind HAProxy), then
# takes it down. Figures go to bench/results/compose.{json,md}. This script prepares what the tests
# need (the engine, the Compose client, stand-in images, the project's secrets and ports) and, as
# a net for an interrupted run, removes whatever the project left behind (containers, networks,
# volumes).
#
#   bash scripts/compose-e2e.sh          offline: local stand-ins for images no registry gives
#   bash scripts/compose-e2e.sh --pull   pull the real images first (node, versitygw, mongo:7, redis, haproxy)
#
# It installs what it needs (Debian's docker.io and mmdebstrap; Docker Compose v2, built from the
# Go module proxy into .tools/bin) and starts dockerd when none is running, stopping only that
# one, by its pid. Traffic goes to loopback and to the containers on the network the run creates.
# Without a MongoDB image (no registry), FerretDB stands in for mongo:7 (scripts/compose/compose.e2e.yml).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
started_ms="$(date +%s%3N)"

pull=0
case "${1:-}" in
  --pull) pull=1 ;;
  "") ;;
  *) echo "usage: $0 [--pull]" >&2; exit 2 ;;
esac

say() { echo "compose-e2e: $*"; }
# shellcheck source=scripts/lib/engine.sh
source "$root/scripts/lib/engine.sh"

bash scripts/setup.sh
export PATH="$root/node_modules/.bin:$PATH"

run_dir="$root/.data/compose-e2e"
rm -rf "$run_dir"
mkdir -p "$run_dir"

engine_prepare "$run_dir"

# --- The project, its secrets and ports --------------------------------------------------------
export COMPOSE_PROJECT_NAME="cse2e$(head -c 3 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export COMPOSE_ENV_FILE="$run_dir/e2e.env"
export DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0
export DOCKER COMPOSE

teardown() {
  local status=$?
  trap - EXIT INT TERM
  say "tearing down $COMPOSE_PROJECT_NAME (containers, networks, volumes); every container's log: $run_dir/logs"
  "$COMPOSE" --env-file "$COMPOSE_ENV_FILE" down --volumes --remove-orphans --timeout 10 >"$run_dir/down.log" 2>&1 ||
    { status=1; cat "$run_dir/down.log" >&2; }
  left="$("$DOCKER" ps -aq --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")$("$DOCKER" volume ls -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")$("$DOCKER" network ls -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")"
  [ -z "$left" ] || { say "left behind: $left"; status=1; }
  engine_stop
  say "wall time $(( ($(date +%s%3N) - started_ms) / 1000 )) s; exit $status"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# The published ports: the API (the balancer in front of the gateways), storage, and the `ops`
# profile's Prometheus and Jaeger UIs.
taken=""
for name in gateway_port storage_port prometheus_port jaeger_port; do
  port="$(free_port)"
  while [[ " $taken " == *" $port "* ]]; do port="$(free_port)"; done
  taken="$taken $port"
  printf -v "$name" '%s' "$port"
done
cat >"$COMPOSE_ENV_FILE" <<EOF
JWT_SECRET=$(random_hex 32)
S3_ACCESS_KEY_ID=e2e$(random_hex 4)
S3_SECRET_ACCESS_KEY=$(random_hex 24)
BIND_ADDRESS=127.0.0.1
PORT=$gateway_port
STORAGE_PORT=$storage_port
S3_PUBLIC_ENDPOINT=http://127.0.0.1:$storage_port
FRONTEND_ORIGIN=http://127.0.0.1:$gateway_port
# Off for the traffic, which logs in all the time; step 8 brings the gateways up with limits.
AUTH_RATE_LIMIT=0
RATE_LIMIT=0
PUBLIC_CHANGES_PER_MINUTE=0
COMPOSE_PROFILES=ops
OTEL_EXPORTER_OTLP_ENDPOINT=http://jaeger:4318
PROMETHEUS_PORT=$prometheus_port
JAEGER_UI_PORT=$jaeger_port
EOF

# --- Images that no registry gives here --------------------------------------------------------
export COMPOSE_FILE="docker-compose.yml:scripts/compose/compose.e2e.yml"
E2E_DATABASE="FerretDB v1.24.2 on SQLite (compose.e2e.yml)"
if [ "$pull" = 1 ]; then
  "$DOCKER" pull -q node:24-bookworm-slim || true
  "$DOCKER" pull -q "versity/versitygw:$(cat .tools/bin/.versitygw-version)" || true
  "$DOCKER" pull -q "axllent/mailpit:$(cat .tools/bin/.mailpit-version)" || true
  "$DOCKER" pull -q prom/prometheus:v2.42.0 || true
  "$DOCKER" pull -q jaegertracing/jaeger:2.13.0 || true
  "$DOCKER" pull -q redis:7.0 || true
  "$DOCKER" pull -q haproxy:2.6 || true
  if "$DOCKER" pull -q mongo:7; then
    export COMPOSE_FILE="docker-compose.yml"
    E2E_DATABASE="mongo:7"
  fi
fi
DOCKER="$DOCKER" bash scripts/compose/standins.sh

# --- The checks: the jest project `compose` ----------------------------------------------------
say "project $COMPOSE_PROJECT_NAME, API (balancer) 127.0.0.1:$gateway_port, storage 127.0.0.1:$storage_port, database: $E2E_DATABASE"
# In the background and waited for, so that a SIGTERM to this script stops the checks and tears
# down at once (bash runs a trap only after a foreground child has exited).
GATEWAY_URL="http://127.0.0.1:$gateway_port" STORAGE_URL="http://127.0.0.1:$storage_port" \
  PROMETHEUS_URL="http://127.0.0.1:$prometheus_port" JAEGER_URL="http://127.0.0.1:$jaeger_port" \
  E2E_DATABASE="$E2E_DATABASE" E2E_STARTED_AT="$started_ms" E2E_LOGS="$run_dir/logs" \
  jest --selectProjects compose --maxWorkers=1 &
checks=$!
trap 'kill "$checks" 2>/dev/null; exit 130' INT TERM
wait "$checks"
