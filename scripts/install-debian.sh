#!/usr/bin/env bash
# Installs a Debian package that a suite runs as a real server or tool (prometheus, chromium…)
# when its binary is missing and this is a Debian machine where we are root; otherwise says what
# to do. Never a downloaded binary: the package, as an operator would install it.
#
#   bash scripts/install-debian.sh PACKAGE BINARY [VARIABLE]
#
# VARIABLE names the environment variable that can point at another binary instead.
set -euo pipefail
package="${1:?usage: install-debian.sh PACKAGE BINARY [VARIABLE]}"
binary="${2:?usage: install-debian.sh PACKAGE BINARY [VARIABLE]}"
variable="${3:-}"
[ -x "$binary" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "setup: installing Debian's $package (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "$package" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "$package" >/dev/null; }
  [ -x "$binary" ] && exit 0
fi
cat >&2 <<MSG
$package is needed at $binary, and it could not be installed here.
Install Debian's package (sudo apt-get install $package)${variable:+, or set $variable to its binary}.
MSG
exit 1
