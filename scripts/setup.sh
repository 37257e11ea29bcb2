#!/usr/bin/env bash
# Everything `npm start` and `npm test` need, done only when missing or stale:
# npm dependencies (with Node 24 from the `node` package), the Go-built servers, the build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ ! -x node_modules/.bin/node ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies" >&2
  # `npm install`, not `npm ci`: npm 11 records only this platform's optional binaries in the
  # lockfile and `npm ci` then refuses it (npm/cli#4828, #8320). install keeps to the lockfile.
  npm install --no-audit --no-fund --loglevel=error
fi

if [ -z "${MONGO_URL:-}" ] || [ -z "${S3_ENDPOINT:-}" ] || [ -z "${SMTP_URL:-}" ]; then
  bash scripts/install-tools.sh
fi

# The embedded FerretDB's backend (dev/devstack/src/postgres.ts). Without it FerretDB runs on
# SQLite, which the launcher says at start-up.
if [ -z "${MONGO_URL:-}" ] && [ -z "${PG_BIN:-}" ] && [ "${FERRETDB_BACKEND:-}" != sqlite ] \
  && ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
  # pg_ctlcluster (postgresql-common) is there whatever the version the package brings.
  bash scripts/install-debian.sh postgresql /usr/bin/pg_ctlcluster PG_BIN \
    || echo "setup: no PostgreSQL: the embedded FerretDB will run on SQLite" >&2
fi

echo "setup: building (tsc -b)" >&2
node_modules/.bin/tsc -b

# The web client, when its sources (or the client library it bundles, the contract's limits it
# checks tags with, or the lockfile) changed
# since the last build: most starts change nothing, and vite takes seconds.
web_source="$(find gateway/web clients/js/src libs/contract/src/limits.ts -type f -not -path '*/node_modules/*' -print0 | sort -z \
  | xargs -0 sha256sum | cat - package-lock.json | sha256sum | cut -c1-16)"
if [ "$(cat gateway/dist/public/.source 2>/dev/null)" != "$web_source" ]; then
  echo "setup: building the web client (vite)" >&2
  node_modules/.bin/tsc -p gateway/web/tsconfig.json
  node_modules/.bin/vite build gateway/web --logLevel warn
  echo "$web_source" >gateway/dist/public/.source
fi
