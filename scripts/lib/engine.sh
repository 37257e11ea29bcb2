# Sourced by scripts/compose-e2e.sh and scripts/swarm-e2e.sh: a Docker engine and the clients that
# talk to it, installed when missing, and the values a run makes up (free ports, random secrets).
#
#   engine_prepare RUN_DIR   installs Debian's docker.io and mmdebstrap when missing, builds Docker
#                            Compose v2 ($COMPOSE_VERSION) from the Go module proxy into .tools/bin
#                            once, and starts dockerd when none answers (its log in RUN_DIR).
#                            Sets DOCKER and COMPOSE.
#   engine_stop              stops the dockerd that engine_prepare started, by its pid; no other.
#   free_port                a free TCP port on loopback, below the kernel's ephemeral range.
#   random_hex N             N random bytes, in hex.
#
# Needs: $root (the checkout), and `say` (a line to the log).

COMPOSE_VERSION="${COMPOSE_VERSION:-v2.40.3}"
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
engine_dockerd_pid=""

engine_prepare() {
  local run_dir="$1" missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing ${missing[*]} from Debian"
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  # Debian's client speaks the engine's own API version; another client earlier on PATH may not.
  DOCKER="$(command -v /usr/bin/docker || command -v docker)"

  # Compose v2 is not packaged for bookworm. `go install …@version` refuses its module (its go.mod
  # has exclude directives), so it is built inside its own module, downloaded from the proxy.
  COMPOSE="$root/.tools/bin/docker-compose"
  if [ ! -x "$COMPOSE" ] || [ "$(cat "$root/.tools/bin/.docker-compose-version" 2>/dev/null)" != "$COMPOSE_VERSION" ]; then
    say "building Docker Compose $COMPOSE_VERSION from the Go module proxy (first run only, about two minutes)"
    mkdir -p "$root/.tools/bin"
    local module
    module="$(go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
    (cd "$module" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
      -o "$COMPOSE.tmp" ./cmd)
    mv "$COMPOSE.tmp" "$COMPOSE"
    echo "$COMPOSE_VERSION" >"$root/.tools/bin/.docker-compose-version"
  fi

  if ! "$DOCKER" info >/dev/null 2>&1; then
    say "starting dockerd (log: $run_dir/dockerd.log)"
    $sudo dockerd --pidfile "$run_dir/dockerd.pid" >"$run_dir/dockerd.log" 2>&1 &
    for _ in $(seq 1 60); do
      "$DOCKER" info >/dev/null 2>&1 && break
      sleep 0.5
    done
    "$DOCKER" info >/dev/null 2>&1 || { tail -20 "$run_dir/dockerd.log" >&2; return 1; }
    engine_dockerd_pid="$(cat "$run_dir/dockerd.pid")"
  fi
}

engine_stop() {
  [ -n "$engine_dockerd_pid" ] || return 0
  say "stopping the dockerd this run started (pid $engine_dockerd_pid)"
  $sudo kill "$engine_dockerd_pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$engine_dockerd_pid" 2>/dev/null || break; sleep 0.5; done
}

# A free port below the kernel's ephemeral range. The ports are chosen before the images build and
# bound by Docker a minute later; a port from the ephemeral range (what listen(0) hands out) could
# be given to another program in between, and once was: a test suite running alongside had its
# storage server's port taken over by a run's published one.
free_port() {
  node -e '
    const net = require("net");
    const [low] = require("fs").readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    const floor = Math.max(1024, Math.min(20000, low - 8000));
    const attempt = (n) => {
      if (n === 0) { console.error("no free port"); process.exit(1); }
      const port = floor + Math.floor(Math.random() * (low - floor));
      const s = net.createServer().once("error", () => attempt(n - 1)).listen(port, "127.0.0.1", () => { console.log(port); s.close(); });
    };
    attempt(50);'
}

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
