#!/usr/bin/env bash
# Two builds interleaved (bench/src/ab.ts): `bash scripts/bench-ab.sh [before-ref] [after-ref]`,
# by default 012dc96 (the build before issue 32's redesign) and HEAD. Each ref gets a worktree
# outside this checkout, its own npm install and build; the Go-built servers (.tools) are shared.
# Writes bench/results/ab.{md,json}; the worktrees are removed at the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
before_ref="${1:-012dc96}"
after_ref="${2:-HEAD}"
base="${AB_WORKTREES:-$(dirname "$root")}"
# Only what this run needs here: the Go-built servers, and this checkout's bench (ab.js, load.js).
bash "$root/scripts/install-tools.sh"
(cd "$root" && node_modules/.bin/tsc -b bench)
# The build after issue 32 starts a redis-server of its own: the event bus.
bash "$root/scripts/install-debian.sh" redis-server "${REDIS_SERVER_PATH:-/usr/bin/redis-server}" REDIS_SERVER_PATH

dirs=()
cleanup() {
  for dir in "${dirs[@]}"; do git -C "$root" worktree remove --force "$dir" || true; done
}
trap cleanup EXIT
for side in before after; do
  ref="${side}_ref"
  dir="$base/ab-$side"
  [ ! -e "$dir" ] || git -C "$root" worktree remove --force "$dir"
  git -C "$root" worktree add --detach "$dir" "$(git -C "$root" rev-parse "${!ref}")"
  dirs+=("$dir")
  ln -s "$root/.tools" "$dir/.tools"
  echo "bench-ab: installing and building $side (${!ref}) in $dir" >&2
  # npm ci, as a fresh clone would; where npm refuses the lockfile (see setup.sh), install keeps to it.
  (cd "$dir" && { npm ci --prefer-offline --no-audit --no-fund --loglevel=error \
    || npm install --prefer-offline --no-audit --no-fund --loglevel=error; } && node_modules/.bin/tsc -b)
done
cd "$root"
node_modules/.bin/node bench/dist/src/ab.js "$base/ab-before" "$base/ab-after"
