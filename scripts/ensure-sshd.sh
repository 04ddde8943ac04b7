#!/usr/bin/env bash
# The OpenSSH server for the ssh:// engine tests (test/engine/remote.test.ts): they start their
# own sshd on 127.0.0.1:<free port> with their own config, keys and pid file
# (test/support/sshd.ts), and stop it. This only installs the package, without starting or
# enabling the system's ssh service (a policy-rc.d refuses it during the install).
#
#   bash scripts/ensure-sshd.sh install     as root (scripts/setup.sh); quick when present
#
# Idempotent.
set -euo pipefail

BIN="${SSHD_BIN:-/usr/sbin/sshd}"
log() { printf '[ensure-sshd] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

case "${1:-}" in
  install)
    # systemd-socket-activate (package systemd) binds the TLS test engine's port (test/support/second-engine.ts).
    if [ -x "$BIN" ] && command -v ssh-keygen >/dev/null && command -v systemd-socket-activate >/dev/null; then
      log "openssh-server is installed ($BIN); nothing to do."
      exit 0
    fi
    [ "$(id -u)" = 0 ] || die "installing needs root; re-run as root (sudo bash $0 install)."
    policy=/usr/sbin/policy-rc.d
    own_policy=0
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
    fi
    trap '[ "$own_policy" = 1 ] && rm -f "$policy"' EXIT
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-server openssh-client systemd >/dev/null \
      || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-server openssh-client systemd >/dev/null; }
    [ -x "$BIN" ] || die "the openssh-server package did not install $BIN."
    log "installed openssh-server (the system's ssh service was not started)."
    ;;
  *)
    die "usage: $0 install"
    ;;
esac
