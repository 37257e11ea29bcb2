#!/usr/bin/env bash
# The Swarm deployment, run for real on a single-node swarm: docker-compose.yml with
# docker-compose.swarm.yml, deployed as a stack from the images Compose builds, then checked by the
# jest project `swarm` (tests/swarm): the contract through the stack's balancer, a rolling update of
# every part under traffic, a bad image rolled back, a killed task replaced, the gateway and posts
# scaled out and back, live updates across a realtime task's replacement. Figures go to
# bench/results/swarm.{json,md}.
#
# This script prepares what the checks need: the engine and clients (scripts/lib/engine.sh), the
# stand-in images (no registry is reached), our images as v1, v2 and a never-ready posts, a swarm
# (initialised only when the engine has none), the node's data label, the stack's secrets, and the
# stack file rendered by Compose. At the end it removes everything it created: the stack, its
# secrets, configs, volumes and network, the label, our image tags, the swarm if it made it, and the
# dockerd if it started it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
started_ms="$(date +%s%3N)"

say() { echo "swarm-e2e: $*"; }
# shellcheck source=scripts/lib/engine.sh
source "$root/scripts/lib/engine.sh"

bash scripts/setup.sh
export PATH="$root/node_modules/.bin:$PATH"

run_dir="$root/.data/swarm-e2e"
rm -rf "$run_dir"
mkdir -p "$run_dir"
engine_prepare "$run_dir"

# `docker stack deploy` of a Compose file without `version:` needs a client from Docker 23 on;
# Debian bookworm's (20.10) refuses one. Any newer client on the machine does, against this engine.
STACK_DOCKER=""
for candidate in "$(command -v docker || true)" /usr/local/bin/docker /usr/bin/docker; do
  [ -x "$candidate" ] || continue
  major="$("$candidate" version --format '{{.Client.Version}}' 2>/dev/null | cut -d. -f1 || true)"
  if [[ "$major" =~ ^[0-9]+$ ]] && [ "$major" -ge 23 ]; then STACK_DOCKER="$candidate"; break; fi
done
[ -n "$STACK_DOCKER" ] || { say "no Docker client of version 23 or later (docker stack deploy of version-less Compose files)"; exit 1; }

stack="csswarm$(random_hex 3)"
export IMAGE_REGISTRY="content-service-e2e" SECRET_PREFIX="$stack"
export DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0
files=(-f docker-compose.yml -f scripts/compose/compose.e2e.yml -f docker-compose.swarm.yml)
jwt_secret="$(random_hex 32)"
s3_key="e2e$(random_hex 4)"
s3_secret="$(random_hex 24)"
swarm_made=0
gwbridge_before=1
label_added=0
node=""

teardown() {
  local status=$?
  trap - EXIT INT TERM
  say "removing the stack $stack and everything the run created"
  if [ -n "$node" ]; then
    "$STACK_DOCKER" stack rm "$stack" >/dev/null 2>&1 || true
    for _ in $(seq 1 60); do
      [ -z "$("$DOCKER" ps -q --filter "label=com.docker.stack.namespace=$stack")" ] && break
      sleep 1
    done
    # The containers of the bucket set-up job's finished tasks outlive its service: removed here.
    "$DOCKER" ps -aq --filter "label=com.docker.stack.namespace=$stack" | xargs -r "$DOCKER" rm -f >/dev/null || status=1
    # The network goes once its last task has; the volumes once no container holds them.
    for _ in $(seq 1 30); do
      [ -z "$("$DOCKER" network ls -q --filter "label=com.docker.stack.namespace=$stack")" ] && break
      sleep 1
    done
    "$DOCKER" volume ls -q --filter "label=com.docker.stack.namespace=$stack" | xargs -r "$DOCKER" volume rm >/dev/null || status=1
    "$DOCKER" secret ls -q --filter "name=${stack}_" | xargs -r "$DOCKER" secret rm >/dev/null || status=1
    "$DOCKER" config ls -q --filter "label=com.docker.stack.namespace=$stack" | xargs -r "$DOCKER" config rm >/dev/null || true
    [ "$label_added" = 0 ] || "$DOCKER" node update --label-rm content-service.data "$node" >/dev/null || status=1
    left="$("$DOCKER" ps -aq --filter "label=com.docker.stack.namespace=$stack")$("$DOCKER" network ls -q --filter "label=com.docker.stack.namespace=$stack")$("$DOCKER" volume ls -q --filter "label=com.docker.stack.namespace=$stack")$("$DOCKER" secret ls -q --filter "name=${stack}_")"
    [ -z "$left" ] || { say "left behind: $left"; status=1; }
  fi
  if [ "$swarm_made" = 1 ]; then
    say "leaving the swarm this run made"
    "$DOCKER" swarm leave --force >/dev/null || status=1
    # `swarm init` made the bridge that joins tasks to the host, and leaving keeps it, with an
    # endpoint of the ingress sandbox that the engine lets go of only when it restarts. An engine
    # this run started is restarted for that; another one keeps the bridge until it restarts.
    if [ "$gwbridge_before" = 0 ] && ! "$DOCKER" network rm docker_gwbridge >/dev/null 2>&1; then
      if [ -n "$engine_dockerd_pid" ]; then
        engine_stop
        engine_prepare "$run_dir"
        "$DOCKER" network rm docker_gwbridge >/dev/null || status=1
      else
        say "docker_gwbridge stays until the engine restarts (a stale endpoint of the ingress sandbox)"
      fi
    fi
  fi
  "$DOCKER" image ls --format '{{.Repository}}:{{.Tag}}' | grep "^$IMAGE_REGISTRY/" | xargs -r "$DOCKER" rmi >/dev/null 2>&1 || true
  engine_stop
  say "wall time $(( ($(date +%s%3N) - started_ms) / 1000 )) s; exit $status"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# --- Images: the stand-ins, ours as v1 and v2, and a release that is never ready ----------------
DOCKER="$DOCKER" bash scripts/compose/standins.sh
build_started=$SECONDS
# Compose builds from docker-compose.yml as it does for a Compose deployment, tagging each image as
# docker-compose.swarm.yml names it; the layers Compose built before come from the cache. Building
# reads the whole file, which asks for the secrets: they reach no image (only build args do).
# One image after the other, as compose-e2e.sh builds them, so that the build stage they share is
# built once (in parallel, each build would run it again).
for tag in v1 v2; do
  for part in identity posts notes files realtime gateway; do
    JWT_SECRET="$jwt_secret" S3_ACCESS_KEY_ID="$s3_key" S3_SECRET_ACCESS_KEY="$s3_secret" IMAGE_TAG="$tag" REVISION="$tag" \
      "$COMPOSE" -p "$stack" "${files[@]}" build "$part" >>"$run_dir/build.log" 2>&1 ||
      { tail -30 "$run_dir/build.log" >&2; exit 1; }
  done
done
"$DOCKER" build --quiet --build-arg "BASE=$IMAGE_REGISTRY/posts:v2" -t "$IMAGE_REGISTRY/posts:never-ready" \
  -f scripts/swarm/never-ready.Dockerfile scripts/swarm >/dev/null
say "images built in $((SECONDS - build_started)) s"

# --- The swarm, its data label, the secrets ----------------------------------------------------
gwbridge_before=0
"$DOCKER" network inspect docker_gwbridge >/dev/null 2>&1 && gwbridge_before=1
if [ "$("$DOCKER" info --format '{{.Swarm.LocalNodeState}}')" != active ]; then
  "$DOCKER" swarm init --advertise-addr 127.0.0.1 >/dev/null
  swarm_made=1
fi
node="$("$DOCKER" info --format '{{.Swarm.NodeID}}')"
if [ -z "$("$DOCKER" node inspect -f '{{index .Spec.Labels "content-service.data"}}' "$node")" ]; then
  "$DOCKER" node update --label-add content-service.data=true "$node" >/dev/null
  label_added=1
fi
printf '%s' "$jwt_secret" | "$DOCKER" secret create "${stack}_jwt_secret" - >/dev/null
printf '%s' "$s3_key" | "$DOCKER" secret create "${stack}_s3_access_key_id" - >/dev/null
printf '%s' "$s3_secret" | "$DOCKER" secret create "${stack}_s3_secret_access_key" - >/dev/null
printf '%s\n' "smtp://mail:1025" | "$DOCKER" secret create "${stack}_smtp_url" - >/dev/null

# --- The stack file, and what `docker stack deploy` fills it with ------------------------------
"$COMPOSE" -p "$stack" "${files[@]}" config --no-interpolate --no-normalize >"$run_dir/stack.yml"
gateway_port="$(free_port)"
storage_port="$(free_port)"
while [ "$storage_port" = "$gateway_port" ]; do storage_port="$(free_port)"; done

say "stack $stack, API (balancer) 127.0.0.1:$gateway_port, storage 127.0.0.1:$storage_port, client $STACK_DOCKER"
# In the background and waited for, so that a SIGTERM to this script stops the checks and tears
# down at once (bash runs a trap only after a foreground child has exited).
STACK="$stack" STACK_FILE="$run_dir/stack.yml" STACK_DOCKER="$STACK_DOCKER" DOCKER="$DOCKER" \
  GATEWAY_URL="http://127.0.0.1:$gateway_port" STORAGE_URL="http://127.0.0.1:$storage_port" \
  PORT="$gateway_port" STORAGE_PORT="$storage_port" S3_PUBLIC_ENDPOINT="http://127.0.0.1:$storage_port" \
  FRONTEND_ORIGIN="http://127.0.0.1:$gateway_port" CONTRACT_JWT_SECRET="$jwt_secret" \
  E2E_STARTED_AT="$started_ms" \
  jest --selectProjects swarm --maxWorkers=1 &
checks=$!
trap 'kill "$checks" 2>/dev/null; exit 130' INT TERM
wait "$checks"
