#!/usr/bin/env bash
# Validates docker-compose.yml for the older client too: Debian's docker-compose 1.29 parses and
# interpolates it (`config`), also with the optional `mail` and `ops` profiles, and must refuse it when
# JWT_SECRET is missing. Only the balancer publishes the API's port. Compose v2 builds and runs it in scripts/compose-e2e.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v docker-compose >/dev/null 2>&1; then
  echo "check-compose: installing Debian's docker-compose" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq docker-compose >/dev/null
fi

env_ok="$(mktemp)"; env_missing="$(mktemp)"; env_mail="$(mktemp)"
trap 'rm -f "$env_ok" "$env_missing" "$env_mail"' EXIT
printf 'JWT_SECRET=%s\nS3_ACCESS_KEY_ID=ci\nS3_SECRET_ACCESS_KEY=ci-secret-ci-secret\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$env_ok"
printf 'S3_ACCESS_KEY_ID=ci\nS3_SECRET_ACCESS_KEY=ci-secret-ci-secret\n' >"$env_missing"
{ cat "$env_ok"; echo 'SMTP_URL=smtp://mail:1025'; } >"$env_mail"

docker-compose --env-file "$env_ok" -f docker-compose.yml config -q
echo "check-compose: docker-compose.yml is valid"

# The balanced topology: only the balancer publishes the API's port; neither a gateway (a client
# reaching one directly could write its own X-Forwarded-For, which the gateways trust one hop of)
# nor Redis is published; the gateways trust exactly that one hop and count in Redis.
config="$(docker-compose --env-file "$env_ok" -f docker-compose.yml config)"
ports_of() { sed -n "/^  $1:/,/^  [a-z]/{/^    ports:/,/^    [a-z]/p}" <<<"$config" | grep -E '^ +- ' || true; }
for service in gateway redis; do
  [ -z "$(ports_of "$service")" ] || { echo "check-compose: $service must not publish a port: $(ports_of "$service")" >&2; exit 1; }
done
[ -n "$(ports_of balancer)" ] || { echo "check-compose: the balancer must publish the API's port" >&2; exit 1; }
gateway="$(sed -n '/^  gateway:/,/^  [a-z]/p' <<<"$config")"
grep -q "TRUST_PROXY: '1'" <<<"$gateway" && grep -q 'REDIS_URL: redis://redis:6379' <<<"$gateway" ||
  { echo "check-compose: the gateway must trust one proxy hop and count in Redis" >&2; exit 1; }
echo "check-compose: only the balancer is published; the gateways trust its one hop and count in Redis"

# The `mail` profile as its comment says to use it: identity gets the address, and Mailpit's UI
# (no login) is published on loopback only.
config="$(docker-compose --profile mail --env-file "$env_mail" -f docker-compose.yml config)"
grep -q 'SMTP_URL: smtp://mail:1025' <<<"$config" ||
  { echo "check-compose: identity does not get SMTP_URL with the mail profile" >&2; exit 1; }
mail_ports="$(sed -n '/^  mail:/,/^  [a-z]/{/^    ports:/,/^    [a-z]/p}' <<<"$config" | grep -E '^ +- ' || true)"
[ -n "$mail_ports" ] && ! grep -vqE '^ +- 127\.0\.0\.1:' <<<"$mail_ports" ||
  { echo "check-compose: the mail service must publish on 127.0.0.1 only: $mail_ports" >&2; exit 1; }
echo "check-compose: the mail profile is valid, its UI on loopback only"

# The `ops` profile: metrics stay on the Compose network (no published 9464 anywhere), and the
# UIs of Prometheus and Jaeger (no login) are published on loopback only.
config="$(docker-compose --profile ops --env-file "$env_ok" -f docker-compose.yml config)"
if grep -nE '^ +- .*9464' <<<"$config"; then
  echo "check-compose: a metrics port (9464) is published" >&2
  exit 1
fi
for service in prometheus jaeger; do
  published="$(sed -n "/^  $service:/,/^  [a-z]/{/^    ports:/,/^    [a-z]/p}" <<<"$config" | grep -E '^ +- ' || true)"
  [ -n "$published" ] && ! grep -vqE '^ +- 127\.0\.0\.1:' <<<"$published" ||
    { echo "check-compose: $service must publish on 127.0.0.1 only: $published" >&2; exit 1; }
done
echo "check-compose: the ops profile is valid; metrics unpublished, UIs on loopback only"

if out="$(docker-compose --env-file "$env_missing" -f docker-compose.yml config -q 2>&1)"; then
  echo "check-compose: Compose accepted the file without JWT_SECRET" >&2
  exit 1
fi
grep -q JWT_SECRET <<<"$out" || { echo "check-compose: unexpected refusal: $out" >&2; exit 1; }
echo "check-compose: Compose refuses to start without JWT_SECRET"
