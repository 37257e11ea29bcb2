#!/usr/bin/env bash
# npm start: set up what is missing, then run the whole system on embedded defaults.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
cd "$root"
exec node_modules/.bin/node libs/devstack/dist/src/start.js
