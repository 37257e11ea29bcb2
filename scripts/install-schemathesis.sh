#!/usr/bin/env bash
# The property-based API fuzzer, from PyPI, into a git-ignored virtual environment (.venv).
set -euo pipefail
SCHEMATHESIS_VERSION="${SCHEMATHESIS_VERSION:-4.32.5}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
if [ -x "$venv/bin/st" ] && [ "$(cat "$venv/.schemathesis-version" 2>/dev/null)" = "$SCHEMATHESIS_VERSION" ]; then exit 0; fi
echo "install-schemathesis: installing schemathesis $SCHEMATHESIS_VERSION into .venv" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
echo "$SCHEMATHESIS_VERSION" >"$venv/.schemathesis-version"
