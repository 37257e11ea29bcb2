#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (never a downloaded one).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/install-debian.sh" chromium "${CHROMIUM_PATH:-/usr/bin/chromium}" CHROMIUM_PATH
