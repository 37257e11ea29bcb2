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
COMPOSE_VERSION="${COMPOSE_VERSION:-v2.40.3}"

pull=0
case "${1:-}" in
  --pull) pull=1 ;;
  "") ;;
  *) echo "usage: $0 [--pull]" >&2; exit 2 ;;
esac

if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
say() { echo "compose-e2e: $*"; }

bash scripts/setup.sh
export PATH="$root/node_modules/.bin:$PATH"

# --- What the run needs ------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]} from Debian"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Debian's client speaks the engine's own API version; another client earlier on PATH may not.
DOCKER="$(command -v /usr/bin/docker || command -v docker)"

# Compose v2 is not packaged for bookworm. `go install …@version` refuses its module (its go.mod
# has exclude directives), so it is built inside its own module, downloaded from the proxy.
COMPOSE="$root/.tools/bin/docker-compose"
if [ ! -x "$COMPOSE" ] || [ "$(cat "$root/.tools/bin/.docker-compose-version" 2>/dev/null)" != "$COMPOSE_VERSION" ]; then
  say "building Docker Compose $COMPOSE_VERSION from the Go module proxy (first run only, about two minutes)"
  mkdir -p "$root/.tools/bin"
  module="$(go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" | node -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
  (cd "$module" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
    -o "$COMPOSE.tmp" ./cmd)
  mv "$COMPOSE.tmp" "$COMPOSE"
  echo "$COMPOSE_VERSION" >"$root/.tools/bin/.docker-compose-version"
fi

run_dir="$root/.data/compose-e2e"
rm -rf "$run_dir"
mkdir -p "$run_dir"

dockerd_pid=""
if ! "$DOCKER" info >/dev/null 2>&1; then
  say "starting dockerd (log: $run_dir/dockerd.log)"
  $sudo dockerd --pidfile "$run_dir/dockerd.pid" >"$run_dir/dockerd.log" 2>&1 &
  for _ in $(seq 1 60); do
    "$DOCKER" info >/dev/null 2>&1 && break
    sleep 0.5
  done
  "$DOCKER" info >/dev/null 2>&1 || { tail -20 "$run_dir/dockerd.log" >&2; exit 1; }
  dockerd_pid="$(cat "$run_dir/dockerd.pid")"
fi

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
  if [ -n "$dockerd_pid" ]; then
    say "stopping the dockerd this run started (pid $dockerd_pid)"
    $sudo kill "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
  fi
  say "wall time $(( ($(date +%s%3N) - started_ms) / 1000 )) s; exit $status"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# A free port below the kernel's ephemeral range. The ports are chosen here and bound by Docker a
# minute later, after the builds; a port from the ephemeral range (what listen(0) hands out) could
# be given to another program in between, and once was: a test suite running alongside had its
# storage server's port taken over by this run's published one.
free_port() {
  node -e '
    const net = require("net");
    const [low] = require("fs").readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    const floor = Math.max(1024, Math.min(20000, low - 8000));
    const attempt = (n) => {
      if (n === 0) { console.error("no free port"); process.exit(1); }
      const port = floor + Math.floor(Math.random() * (low - floor));
      const s = net.createServer().once("error", () => attempt(n - 1)).listen(port, "127.0.0.1", () => { console.log(port); s.close(); });
    };
    attempt(50);'
}
random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
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
