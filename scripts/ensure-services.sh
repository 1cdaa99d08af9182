#!/usr/bin/env bash
# Makes sure the three servers the integration and end-to-end tests use are up on their standard ports:
# PostgreSQL 127.0.0.1:5432, Redis 127.0.0.1:6379, NATS with JetStream 127.0.0.1:4222.
# A server that is down is started; one that is not installed is installed from Debian's packages first
# (needs root and apt). The commands are the ones this machine family starts them with.
set -uo pipefail

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_up() { # port name
  for _ in $(seq 1 60); do up "$1" && return 0; sleep 0.5; done
  echo "ensure-services: $2 did not come up on 127.0.0.1:$1" >&2
  return 1
}

apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-services: $* missing and no apt-get here: install $* yourself" >&2
    return 1
  fi
  [ -n "${APT_UPDATED:-}" ] || { apt-get update -qq >/dev/null && APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_postgres() {
  up 5432 && return 0
  ls /etc/postgresql/*/main >/dev/null 2>&1 || apt_install postgresql || return 1
  local version; version=$(ls /etc/postgresql | sort -V | tail -n 1)
  # Tests connect over TCP as `postgres` without a password, as on the development machines.
  local hba="/etc/postgresql/$version/main/pg_hba.conf"
  if ! grep -qE '^host\s+all\s+all\s+127.0.0.1/32\s+trust' "$hba"; then
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  wait_up 5432 PostgreSQL
}

ensure_redis() {
  up 6379 && return 0
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server || return 1
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_up 6379 Redis
}

ensure_nats() {
  up 4222 && return 0
  [ -x /usr/sbin/nats-server ] || apt_install nats-server || return 1
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_up 4222 "NATS JetStream"
}

status=0
ensure_postgres || status=1
ensure_redis || status=1
ensure_nats || status=1
exit $status
