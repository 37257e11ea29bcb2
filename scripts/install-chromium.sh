#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (never a downloaded one). Installs the package when
# it is missing and this is a Debian machine where we are root; otherwise says what to do.
set -euo pipefail
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$chromium" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "setup: installing Debian's chromium for the browser tests (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
  [ -x "$chromium" ] && exit 0
fi
cat >&2 <<MSG
The browser tests need Chromium at $chromium, and it could not be installed here.
Install Debian's package (sudo apt-get install chromium), or set CHROMIUM_PATH to a Chromium binary.
MSG
exit 1
