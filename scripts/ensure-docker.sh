#!/usr/bin/env bash
# Ensure a Docker engine answers on /var/run/docker.sock (as root).
#  - installs docker.io with apt when dockerd is missing,
#  - starts dockerd in the background when the socket does not answer (log: $DOCKERD_LOG),
#  - waits up to ~60 s for it and prints the server version.
# Idempotent and fast when the engine is already up.
set -euo pipefail

SOCK="${DOCKER_SOCK:-/var/run/docker.sock}"
DOCKERD_LOG="${DOCKERD_LOG:-/var/log/dockerd.log}"
WAIT_S="${DOCKER_WAIT_S:-60}"

log() { printf '[ensure-docker] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ping_engine() {
  if command -v curl >/dev/null 2>&1; then
    [ "$(curl -fsS --max-time 3 --unix-socket "$SOCK" http://localhost/_ping 2>/dev/null)" = "OK" ]
  elif command -v docker >/dev/null 2>&1; then
    docker -H "unix://$SOCK" version >/dev/null 2>&1
  else
    return 1
  fi
}

server_version() {
  if command -v docker >/dev/null 2>&1; then
    docker -H "unix://$SOCK" version --format '{{.Server.Version}} (API {{.Server.APIVersion}})' 2>/dev/null && return 0
  fi
  curl -fsS --max-time 3 --unix-socket "$SOCK" http://localhost/version 2>/dev/null \
    | sed -n 's/.*"Version":"\([^"]*\)".*/\1/p' | head -n1
}

if ping_engine; then
  echo "[ensure-docker] Docker engine already answering on $SOCK: $(server_version)"
  exit 0
fi

as_root() { [ "$(id -u)" = 0 ] || die "$1 needs root; re-run as root (sudo bash $0)."; }

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
  as_root "installing docker.io"
  log "dockerd not found; installing docker.io with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || log "apt-get update failed; trying the install anyway"
  apt-get install -y -qq docker.io >/dev/null \
    || die "could not install docker.io with apt-get; install Docker by hand and re-run."
  # The package may have started the engine through its service already.
  if ping_engine; then
    echo "[ensure-docker] Docker engine answering on $SOCK: $(server_version)"
    exit 0
  fi
fi

dockerd_running() {
  if command -v pgrep >/dev/null 2>&1; then
    pgrep -x dockerd >/dev/null 2>&1
  else
    [ -r /var/run/docker.pid ] && kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null
  fi
}

if dockerd_running; then
  log "dockerd is running but $SOCK does not answer yet; waiting for it"
else
  as_root "starting dockerd"
  # curl is used to ping the socket; fine if absent (docker version is the fallback).
  mkdir -p "$(dirname "$DOCKERD_LOG")"
  log "starting dockerd in the background (log: $DOCKERD_LOG)"
  # setsid: its own session, so stopping the shell (or the process group) that started it does
  # not take the engine down with it.
  setsid nohup dockerd -H "unix://$SOCK" >>"$DOCKERD_LOG" 2>&1 </dev/null &
  disown || true
fi

for _ in $(seq 1 "$WAIT_S"); do
  if ping_engine; then
    echo "[ensure-docker] Docker engine answering on $SOCK: $(server_version)"
    exit 0
  fi
  sleep 1
done
tail -n 20 "$DOCKERD_LOG" >&2 2>/dev/null || true
die "dockerd did not answer on $SOCK within ${WAIT_S}s; see $DOCKERD_LOG."
