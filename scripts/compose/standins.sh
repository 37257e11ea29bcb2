#!/usr/bin/env bash
# Local stand-ins for the images that the Compose files name, for machines that reach no image
# registry. Each is built only when no image of that name exists, so a machine that pulled the
# real image (scripts/compose-e2e.sh --pull) keeps it:
#   content-service-standin/bookworm:local   Debian bookworm, minbase, from the machine's own apt
#                                            sources (mmdebstrap); the base of the others
#   node:24-bookworm-slim                    that base + the project's Node 24 + npm (node.Dockerfile)
#   versity/versitygw:<tag>                  that base + .tools/bin/versitygw (versitygw.Dockerfile)
#   content-service-ci/ferretdb:1.24.2       that base + .tools/bin/ferretdb (ferretdb.Dockerfile),
#                                            always local: MongoDB's stand-in for compose.e2e.yml
#   axllent/mailpit:<tag>                    that base + .tools/bin/mailpit (mailpit.Dockerfile),
#                                            for the optional `mail` profile
#   prom/prometheus:v2.42.0                  that base + Debian's prometheus (prometheus.Dockerfile),
#   jaegertracing/jaeger:2.13.0              and + .tools/bin/jaeger (jaeger.Dockerfile): the
#                                            optional `ops` profile
#   redis:7.0                                Debian bookworm with Debian's redis-server (7.0) and
#   haproxy:2.6                              haproxy (2.6) packages, installed by apt from the same
#                                            sources (redis.Dockerfile, haproxy.Dockerfile)
# Needs: $DOCKER (a docker client), mmdebstrap, the project's npm install and scripts/install-tools.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/scripts/compose"
DOCKER="${DOCKER:-docker}"
NPM_VERSION="${NPM_VERSION:-11.19.1}"
VERSITYGW_IMAGE="${VERSITYGW_IMAGE:-versity/versitygw:$(cat "$root/.tools/bin/.versitygw-version")}"
MAILPIT_IMAGE="${MAILPIT_IMAGE:-axllent/mailpit:$(cat "$root/.tools/bin/.mailpit-version")}"
PROMETHEUS_IMAGE="${PROMETHEUS_IMAGE:-prom/prometheus:v2.42.0}"
JAEGER_IMAGE="${JAEGER_IMAGE:-jaegertracing/jaeger:2.13.0}"
REDIS_IMAGE="${REDIS_IMAGE:-redis:7.0}"
HAPROXY_IMAGE="${HAPROXY_IMAGE:-haproxy:2.6}"
BASE=content-service-standin/bookworm:local

has() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Builds image $1 from $here/$2 with the files named after it copied into a fresh context.
build() {
  local image="$1" dockerfile="$2"
  shift 2
  local context="$work/${dockerfile%.Dockerfile}"
  mkdir -p "$context"
  [ "$#" -eq 0 ] || cp "$@" "$context/"
  local started=$SECONDS
  "$DOCKER" build --quiet -t "$image" -f "$here/$dockerfile" "$context" >/dev/null
  echo "standins: built $image ($((SECONDS - started)) s)" >&2
}

# Imports Debian bookworm, minbase, with the packages $2 (comma-separated) installed by apt, as
# image $1. The machine's own apt sources: no mirror address is written here. Without man pages,
# docs and translations, as Debian's slim images are; merged /usr without the usrmerge package
# (and the Perl it pulls in).
bootstrap() {
  local image="$1" packages="$2" started=$SECONDS
  mmdebstrap --quiet --variant=minbase --include="$packages" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    bookworm "$work/bookworm.tar" /etc/apt/sources.list.d/debian.sources >"$work/mmdebstrap.log" 2>&1 ||
    { cat "$work/mmdebstrap.log" >&2; exit 1; }
  "$DOCKER" import "$work/bookworm.tar" "$image" >/dev/null
  rm -f "$work/bookworm.tar"
  echo "standins: built $image from Debian's packages ($((SECONDS - started)) s)" >&2
}

# BusyBox gives the versitygw stand-in its `wget`.
has "$BASE" || bootstrap "$BASE" busybox

if ! has node:24-bookworm-slim; then
  (cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && mv "npm-$NPM_VERSION.tgz" npm.tgz)
  build node:24-bookworm-slim node.Dockerfile \
    "$(readlink -f "$root/node_modules/.bin/node")" /etc/ssl/certs/ca-certificates.crt "$work/npm.tgz"
fi

if ! has "$VERSITYGW_IMAGE"; then
  build "$VERSITYGW_IMAGE" versitygw.Dockerfile "$root/.tools/bin/versitygw"
fi

if ! has content-service-ci/ferretdb:1.24.2; then
  build content-service-ci/ferretdb:1.24.2 ferretdb.Dockerfile "$root/.tools/bin/ferretdb"
fi

if ! has "$MAILPIT_IMAGE"; then
  build "$MAILPIT_IMAGE" mailpit.Dockerfile "$root/.tools/bin/mailpit"
fi

if ! has "$PROMETHEUS_IMAGE"; then
  bash "$root/scripts/install-debian.sh" prometheus /usr/bin/prometheus
  build "$PROMETHEUS_IMAGE" prometheus.Dockerfile /usr/bin/prometheus
fi

if ! has "$JAEGER_IMAGE"; then
  bash "$root/scripts/install-tools.sh" jaeger
  build "$JAEGER_IMAGE" jaeger.Dockerfile "$root/.tools/bin/jaeger"
fi

# Redis and HAProxy as Debian packages them, installed by apt (with their users, libraries and
# maintainer scripts) rather than binaries copied in: each a bootstrap of its own.
if ! has "$REDIS_IMAGE"; then
  has content-service-standin/redis:local || bootstrap content-service-standin/redis:local redis-server
  build "$REDIS_IMAGE" redis.Dockerfile
fi

if ! has "$HAPROXY_IMAGE"; then
  has content-service-standin/haproxy:local || bootstrap content-service-standin/haproxy:local haproxy
  build "$HAPROXY_IMAGE" haproxy.Dockerfile
fi
