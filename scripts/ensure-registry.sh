#!/usr/bin/env bash
# A container registry on loopback for the pull-before-build tests and bench (issue #14):
# Debian's distribution registry (package docker-registry), with its own config and storage
# under a directory the caller owns, never the package's service or its /var/lib storage.
# Docker treats 127.0.0.0/8 as an insecure registry by default, so no daemon change is needed.
#
#   bash scripts/ensure-registry.sh install     as root: installs the package (scripts/setup.sh)
#   bash scripts/ensure-registry.sh start DIR   starts one on 127.0.0.1:<free port> unless DIR's
#                                               is already answering; prints 127.0.0.1:<port>
#   bash scripts/ensure-registry.sh stop DIR    stops the one DIR's pid file names
#
# Idempotent. Tests start it only for themselves (test/support/registry.ts) and stop it after.
set -euo pipefail

BIN="${REGISTRY_BIN:-/usr/bin/docker-registry}"
log() { printf '[ensure-registry] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

answers() { curl -fsS --max-time 2 -o /dev/null "http://$1/v2/" 2>/dev/null; }

case "${1:-}" in
  install)
    if [ -x "$BIN" ]; then
      log "docker-registry is installed ($BIN); nothing to do."
      exit 0
    fi
    [ "$(id -u)" = 0 ] || die "installing needs root; re-run as root (sudo bash $0 install)."
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker-registry >/dev/null \
      || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker-registry >/dev/null; }
    [ -x "$BIN" ] || die "the docker-registry package did not install $BIN."
    log "installed docker-registry."
    ;;
  start)
    dir="${2:?usage: $0 start DIR}"
    [ -x "$BIN" ] || die "$BIN is missing: run 'sudo bash scripts/ensure-registry.sh install' (or scripts/setup.sh)."
    mkdir -p "$dir/storage"
    if [ -s "$dir/addr" ] && answers "$(cat "$dir/addr")"; then
      cat "$dir/addr"
      exit 0
    fi
    # A free port: bind port 0 and read what the kernel gave. REGISTRY_PORT fixes it instead
    # (the Podman pass: its test engine trusts plain HTTP on that one port, scripts/ensure-podman.sh).
    port="${REGISTRY_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')}"
    addr="127.0.0.1:$port"
    cat >"$dir/config.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
http:
  addr: $addr
EOF
    setsid nohup "$BIN" serve "$dir/config.yml" >"$dir/registry.log" 2>&1 &
    echo $! >"$dir/pid"
    for _ in $(seq 1 100); do
      if answers "$addr"; then
        echo "$addr" >"$dir/addr"
        echo "$addr"
        exit 0
      fi
      kill -0 "$(cat "$dir/pid")" 2>/dev/null || die "the registry exited: $(tail -n 5 "$dir/registry.log")"
      sleep 0.1
    done
    die "the registry on $addr did not answer within 10 seconds: $(tail -n 5 "$dir/registry.log")"
    ;;
  stop)
    dir="${2:?usage: $0 stop DIR}"
    if [ -s "$dir/pid" ]; then
      kill "$(cat "$dir/pid")" 2>/dev/null || true
      rm -f "$dir/pid" "$dir/addr"
    fi
    ;;
  *)
    die "usage: $0 install | start DIR | stop DIR"
    ;;
esac
