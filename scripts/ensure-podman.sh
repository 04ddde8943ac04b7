#!/usr/bin/env bash
# The second engine of the integration suite (issue #18): rootful Podman, Debian's package,
# serving its Docker-compatible API on a unix socket of its own. Only this test engine is
# configured here — never /etc/containers/containers.conf or the package's systemd units:
#   - runc, not crun: Debian's crun 1.8 refuses this machine kind's hybrid cgroup layout;
#   - default_ulimits lowered: the container runtime may not raise the open-files or process
#     limit here (no CAP_SYS_RESOURCE), and Podman's defaults ask for more than we have;
#   - the base image is copied from Docker (there is no Docker Hub), under the fully qualified
#     name Podman resolves `FROM debian:bookworm-slim` to.
#
#   bash scripts/ensure-podman.sh          as root: installs, configures and starts it (setup.sh)
#   bash scripts/ensure-podman.sh stop     stops the rootful service this script started
#
# It also starts a rootless Podman for the user tbxpodman (made here) on that user's
# $XDG_RUNTIME_DIR/podman/podman.sock, with the same containers.conf.
#
# Idempotent and quick when the service already answers. Tests find it through
# TOOLBOX_PODMAN_SOCKET (default below); the suite's Podman pass is scripts/test.sh's.
set -euo pipefail

SOCK="${TOOLBOX_PODMAN_SOCKET:-/run/toolbox-test-podman/podman.sock}"
DIR="/etc/toolbox-test/podman"
CONF="$DIR/containers.conf"
LOG=/var/log/toolbox-test-podman.log
BASE_IMAGE="${BASE_IMAGE:-debian:bookworm-slim}"
REGISTRY_PORT="${TOOLBOX_TEST_REGISTRY_PORT:-55055}"
ROOTLESS_USER="${TOOLBOX_PODMAN_ROOTLESS_USER:-tbxpodman}"

log() { printf '[ensure-podman] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

answers() { curl -fsS --max-time 5 --unix-socket "$SOCK" -o /dev/null http://d/_ping 2>/dev/null; }

if [ "${1:-}" = stop ]; then
  pid="$(cat "$(dirname "$SOCK")/pid" 2>/dev/null || true)"
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  exit 0
fi

[ "$(id -u)" = 0 ] || die "rootful Podman needs root; re-run as root (sudo bash $0)."

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v newuidmap >/dev/null; then
  log "installing podman (Debian's package), runc and uidmap (rootless)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman runc uidmap slirp4netns >/dev/null \
    || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman runc uidmap slirp4netns >/dev/null; }
fi
command -v podman >/dev/null || die "the podman package did not install podman."

mkdir -p "$DIR"
# Lower than the hard limits of this shell: equal values are refused by the runtime here too.
nofile="$(ulimit -Hn)"
[ "$nofile" = unlimited ] && nofile=1048576
nofile=$((nofile > 65536 ? 65536 : nofile))
nproc=32768
cat >"$CONF.tmp" <<EOF
# Written by scripts/ensure-podman.sh for the test engine only (CONTAINERS_CONF).
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
mv "$CONF.tmp" "$CONF"
# Docker trusts plain HTTP on 127.0.0.0/8; Podman only where registries.conf says so. The pull
# tests' registry listens on this one port during the Podman pass (TOOLBOX_TEST_REGISTRY_PORT).
cat >"$DIR/registries.conf.tmp" <<EOF
# Written by scripts/ensure-podman.sh for the test engine only (CONTAINERS_REGISTRIES_CONF).
unqualified-search-registries = ["docker.io"]

[[registry]]
location = "127.0.0.1:$REGISTRY_PORT"
insecure = true
EOF
mv "$DIR/registries.conf.tmp" "$DIR/registries.conf"

export CONTAINERS_CONF="$CONF" CONTAINERS_REGISTRIES_CONF="$DIR/registries.conf"
if answers; then
  log "Podman already answering on $SOCK."
else
  mkdir -p "$(dirname "$SOCK")"
  rm -f "$SOCK"
  # Its own session (setsid): the service outlives the shell that started it.
  setsid nohup podman system service --time=0 "unix://$SOCK" >>"$LOG" 2>&1 &
  echo $! >"$(dirname "$SOCK")/pid"
  for _ in $(seq 1 150); do
    answers && break
    sleep 0.2
  done
  answers || die "podman system service did not answer on $SOCK within 30 s; see $LOG."
  log "started podman system service on $SOCK (log: $LOG)"
fi

qualified="docker.io/library/$BASE_IMAGE"
if podman image exists "$qualified"; then
  log "base image $qualified present in Podman."
else
  docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 || die "Docker has no $BASE_IMAGE to copy; run scripts/ensure-base-image.sh first."
  log "copying $BASE_IMAGE from Docker into Podman"
  docker save "$BASE_IMAGE" | podman load >/dev/null
  podman tag "$BASE_IMAGE" "$qualified" 2>/dev/null || podman tag "localhost/$BASE_IMAGE" "$qualified"
fi
version="$(curl -fsS --max-time 10 --unix-socket "$SOCK" http://d/version | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["Version"], "(API", v["ApiVersion"] + ")")')"
log "Podman answering on $SOCK: $version"

# --- rootless: the same Podman run by an unprivileged user of its own ------------------------
# A system user with subordinate ids, a runtime directory as a login session would have, and its
# own storage (native overlay); the service listens where rootless Podman always does,
# $XDG_RUNTIME_DIR/podman/podman.sock. scripts/test-podman.sh runs a part of the suite as it.
if ! id "$ROOTLESS_USER" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash "$ROOTLESS_USER"
  log "created the user $ROOTLESS_USER for rootless Podman"
fi
grep -q "^$ROOTLESS_USER:" /etc/subuid || usermod --add-subuids 200000-265535 "$ROOTLESS_USER"
grep -q "^$ROOTLESS_USER:" /etc/subgid || usermod --add-subgids 200000-265535 "$ROOTLESS_USER"
ruid="$(id -u "$ROOTLESS_USER")"
rdir="/run/user/$ruid"
rsock="$rdir/podman/podman.sock"
# /run is not a tmpfs on this machine kind: after a restart the runtime directory is still there
# with Podman's pause.pid naming a process that is gone, and the service then refuses to start
# ("invalid internal status … podman system migrate"). A login session would have an empty one:
# when none of the user's processes runs, start from an empty directory too.
if [ -d "$rdir" ] && ! pgrep -u "$ROOTLESS_USER" >/dev/null 2>&1; then
  rm -rf "$rdir"
  log "cleared $rdir, left from before a restart (no process of $ROOTLESS_USER runs)"
fi
install -d -o "$ROOTLESS_USER" -g "$ROOTLESS_USER" -m 0700 "$rdir"
as_user() { runuser -u "$ROOTLESS_USER" -- env HOME="$(getent passwd "$ROOTLESS_USER" | cut -d: -f6)" XDG_RUNTIME_DIR="$rdir" CONTAINERS_CONF="$CONF" "$@"; }
as_user mkdir -p "$(getent passwd "$ROOTLESS_USER" | cut -d: -f6)/.config/containers"
as_user sh -c 'printf "[storage]\ndriver = \"overlay\"\n" > "$HOME/.config/containers/storage.conf"'
if curl -fsS --max-time 5 --unix-socket "$rsock" -o /dev/null http://d/_ping 2>/dev/null; then
  log "rootless Podman already answering on $rsock."
else
  as_user mkdir -p "$rdir/podman"
  as_user setsid nohup podman system service --time=0 "unix://$rsock" >>"$LOG" 2>&1 &
  for _ in $(seq 1 150); do
    curl -fsS --max-time 5 --unix-socket "$rsock" -o /dev/null http://d/_ping 2>/dev/null && break
    sleep 0.2
  done
  curl -fsS --max-time 5 --unix-socket "$rsock" -o /dev/null http://d/_ping 2>/dev/null \
    || die "rootless podman system service did not answer on $rsock within 30 s; see $LOG."
  log "started rootless podman system service (user $ROOTLESS_USER) on $rsock"
fi
if ! as_user podman image exists "$qualified"; then
  log "copying $BASE_IMAGE into the rootless Podman's storage"
  tarball="$(mktemp /tmp/toolbox-base-XXXXXX.tar)"
  docker save "$BASE_IMAGE" >"$tarball" && chmod 0644 "$tarball"
  as_user podman load -i "$tarball" >/dev/null
  rm -f "$tarball"
  as_user podman tag "localhost/$BASE_IMAGE" "$qualified" 2>/dev/null || as_user podman tag "$BASE_IMAGE" "$qualified"
fi
log "rootless Podman answering on $rsock"
