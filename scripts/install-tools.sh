#!/usr/bin/env bash
# Builds the pinned local servers into .tools/bin, only when they are missing:
#   ferretdb   FerretDB v1.24.2 (PostgreSQL or SQLite backend), through our own tiny main
#              (scripts/ferretdb), rebuilt when that main changes
#   versitygw  versitygw (POSIX backend), by go install of its pinned tag
#   mailpit    Mailpit (an SMTP server with an HTTP API to read the mail back; its web UI is
#              embedded), by go install of its pinned tag: where password-reset e-mails land
#   jaeger     Jaeger v2 all-in-one (`install-tools.sh jaeger` only: the tracing tests need it,
#              `npm start` does not), built from its pinned module: about four minutes
#   pocketbase PocketBase v0.40.4 (`install-tools.sh pocketbase` only: the benchmark's baseline,
#              BENCH_ONLY=pocketbase), through our own tiny main (scripts/pocketbase), rebuilt
#              when that main changes. It needs Go 1.27: an older local Go fetches go1.27.4 from
#              the module proxy for this build alone (GOTOOLCHAIN=auto and go.mod's toolchain line)
# Needs only the Go toolchain and the Go module proxy. Idempotent; safe to run concurrently.
set -euo pipefail

VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.8.0}"
MAILPIT_VERSION="${MAILPIT_VERSION:-v1.27.11}"
# Jaeger's v2 binary (cmd/jaeger) is tagged with the module's v1 numbers.
JAEGER_VERSION="${JAEGER_VERSION:-v1.76.0}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/.tools/bin"
mkdir -p "$bin"

if ! command -v go >/dev/null 2>&1; then
  echo "install-tools: the Go toolchain is needed to build FerretDB, versitygw and Mailpit (or set MONGO_URL, S3_ENDPOINT and SMTP_URL)" >&2
  exit 1
fi

exec 9>"$root/.tools/.lock"
flock 9

export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

ferretdb_source="$(cat "$root"/scripts/ferretdb/{main.go,go.mod,go.sum} | sha256sum | cut -c1-16)"
if [ ! -x "$bin/ferretdb" ] || [ "$(cat "$bin/.ferretdb-source" 2>/dev/null)" != "$ferretdb_source" ]; then
  echo "install-tools: building FerretDB v1.24.2 (first run only, about a minute)" >&2
  (cd "$root/scripts/ferretdb" && go build -trimpath -o "$bin/ferretdb.tmp" .)
  mv "$bin/ferretdb.tmp" "$bin/ferretdb"
  echo "$ferretdb_source" >"$bin/.ferretdb-source"
fi

if [ ! -x "$bin/versitygw" ] || [ "$(cat "$bin/.versitygw-version" 2>/dev/null)" != "$VERSITYGW_VERSION" ]; then
  echo "install-tools: building versitygw $VERSITYGW_VERSION (first run only, about a minute)" >&2
  GOBIN="$bin" go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  echo "$VERSITYGW_VERSION" >"$bin/.versitygw-version"
fi

if [ ! -x "$bin/mailpit" ] || [ "$(cat "$bin/.mailpit-version" 2>/dev/null)" != "$MAILPIT_VERSION" ]; then
  echo "install-tools: building Mailpit $MAILPIT_VERSION (first run only, under a minute)" >&2
  # The version in the binary, as Mailpit's own release build sets it (`mailpit version`).
  GOBIN="$bin" go install -ldflags "-X github.com/axllent/mailpit/config.Version=$MAILPIT_VERSION" \
    "github.com/axllent/mailpit@$MAILPIT_VERSION"
  echo "$MAILPIT_VERSION" >"$bin/.mailpit-version"
fi

if [ "${1:-}" = jaeger ] && { [ ! -x "$bin/jaeger" ] || [ "$(cat "$bin/.jaeger-version" 2>/dev/null)" != "$JAEGER_VERSION" ]; }; then
  echo "install-tools: building Jaeger $JAEGER_VERSION (first run only, about four minutes)" >&2
  # Its go.mod has replace directives, which `go install pkg@version` refuses: build inside the
  # downloaded module instead, where they apply (the module cache is read-only; -o writes elsewhere).
  dir="$(go mod download -json "github.com/jaegertracing/jaeger@$JAEGER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  (cd "$dir" && go build -trimpath -o "$bin/jaeger.tmp" ./cmd/jaeger)
  mv "$bin/jaeger.tmp" "$bin/jaeger"
  echo "$JAEGER_VERSION" >"$bin/.jaeger-version"
fi

if [ "${1:-}" = pocketbase ]; then
  pocketbase_source="$(cat "$root"/scripts/pocketbase/{main.go,go.mod,go.sum} | sha256sum | cut -c1-16)"
  if [ ! -x "$bin/pocketbase" ] || [ "$(cat "$bin/.pocketbase-source" 2>/dev/null)" != "$pocketbase_source" ]; then
    pocketbase_version="$(sed -n 's|^require github.com/pocketbase/pocketbase \(v[^ ]*\)$|\1|p' "$root/scripts/pocketbase/go.mod")"
    echo "install-tools: building PocketBase $pocketbase_version (first run only, about a minute)" >&2
    # The version in the binary, as PocketBase's own release build sets it (`pocketbase --version`).
    (cd "$root/scripts/pocketbase" && GOTOOLCHAIN=auto go build -trimpath \
      -ldflags "-X github.com/pocketbase/pocketbase.Version=$pocketbase_version" -o "$bin/pocketbase.tmp" .)
    mv "$bin/pocketbase.tmp" "$bin/pocketbase"
    echo "$pocketbase_source" >"$bin/.pocketbase-source"
  fi
fi
