#!/usr/bin/env bash
# Runtime image entrypoint (runs under tini as the container's user, usually the host uid:gid).
# Mirrors upstream toolbox's entrypoint, in order:
#   0. start the session holder on $TOOLBOX_SESSION_SOCKET when it is set, in the background,
#      and the egress forwarder to $TOOLBOX_EGRESS_SOCKET when that is set, supervised
#   1. give an unknown runtime uid/gid a passwd/group entry named toolbox
#   2. run /usr/local/lib/toolbox/init.d/*.sh in parallel (logs in ~/.toolbox-state/init/<n>.log)
#   3. trust /etc/ssl/proximo-ca.pem system-wide (only when it changed) and in $HOME/.pki/nssdb
#   4. point git's credential helper at git-credential-toolbox when a bridge token is readable
#   5. run /home/toolbox/.toolbox-startup.d/*.sh one at a time
#   6. exec "$@" (under an egress policy, once the forwarder listens, waiting at most 3 s)
# Every step is best-effort and logged: a failing step never stops the container from starting.
set -u

TOOLBOX_HOME=/home/toolbox
STATE_DIR=/home/toolbox/.toolbox-state
INIT_LOG_DIR="$STATE_DIR/init"
INIT_DIR=/usr/local/lib/toolbox/init.d
PROXIMO_CA=/etc/ssl/proximo-ca.pem
SYSTEM_CA=/usr/local/share/ca-certificates/proximo.crt
BRIDGE_DIR=/home/toolbox/.toolbox/bridge
BRIDGE_LEGACY_DIR=/home/toolbox/.toolbox/browser
CREDENTIAL_HELPER=/usr/local/bin/git-credential-toolbox
STARTUP_DIR=/home/toolbox/.toolbox-startup.d
SESSION_HOLDER=/usr/local/lib/toolbox/toolbox-session
EGRESS_FORWARDER=/usr/local/lib/toolbox/toolbox-egress
EGRESS_PORT=3128
EGRESS_SSH_CONFIG=/etc/ssh/ssh_config.d/toolbox-egress.conf
USER_SHELL=/bin/zsh
HOME="${HOME:-$TOOLBOX_HOME}"
export HOME

LOG_FILE=""
if mkdir -p "$INIT_LOG_DIR" 2>/dev/null && touch "$INIT_LOG_DIR/entrypoint.log" 2>/dev/null; then
  LOG_FILE="$INIT_LOG_DIR/entrypoint.log"
fi

log() {
  local line
  line="$(date -u +%Y-%m-%dT%H:%M:%SZ 2>/dev/null) toolbox-entrypoint: $*"
  printf '%s\n' "$line" >&2
  if [ -n "$LOG_FILE" ]; then printf '%s\n' "$line" >>"$LOG_FILE" 2>/dev/null || true; fi
}

# Runs one named step; its failure is logged and ignored.
step() {
  local name="$1" rc; shift
  "$@"
  rc=$?
  if [ "$rc" -ne 0 ]; then log "step '$name' failed (exit $rc); continuing"; fi
  return 0
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

# --- 1. account entries for the runtime uid/gid -------------------------------------------
# Podman (4.x) writes its own entries for a uid/gid the image does not know, named after the
# number, with home = the working directory and /bin/sh; they are replaced by ours
# (docs/engines.md). Rewritten in place: /etc/passwd and /etc/group are 0666, /etc is not.
drop_podman_entry() {
  local file="$1" prefix="$2" rest
  grep -q -F -- "$prefix" "$file" 2>/dev/null || return 0
  rest="$(awk -v p="$prefix" 'index($0, p) != 1' "$file")" || return 1
  printf '%s\n' "$rest" >"$file" && log "replaced the engine's stand-in entry ${prefix%%:*} in $file"
}

ensure_account() {
  local uid gid
  uid="$(id -u)" gid="$(id -g)"
  drop_podman_entry /etc/group "$gid:x:$gid:" || return 1
  drop_podman_entry /etc/passwd "$uid:*:$uid:$gid:container user:" || return 1
  if ! getent group "$gid" >/dev/null 2>&1; then
    if printf 'toolbox:x:%s:\n' "$gid" >>/etc/group 2>/dev/null; then
      log "added group entry toolbox:$gid"
    else
      log "gid $gid has no group entry and /etc/group is not writable"; return 1
    fi
  fi
  if ! getent passwd "$uid" >/dev/null 2>&1; then
    if printf 'toolbox:x:%s:%s:toolbox:%s:%s\n' "$uid" "$gid" "$TOOLBOX_HOME" "$USER_SHELL" >>/etc/passwd 2>/dev/null; then
      log "added passwd entry toolbox:$uid:$gid"
    else
      log "uid $uid has no passwd entry and /etc/passwd is not writable"; return 1
    fi
  fi
}

# --- 0. session holder ----------------------------------------------------------------------------
# The extension sets TOOLBOX_SESSION_SOCKET when its shells are held (docs/decisions/0009-session-holder.md):
# starting the holder here, as the container starts, saves the first shell an exec
# (docs/decisions/0032-session-holder-started-with-the-container.md). First, in the background, so
# Python's start overlaps the account step; its shells wait while that step's marker is there
# (TOOLBOX_ACCOUNT_PENDING: bounded, not passed on to them; no marker when /tmp is not writable;
# docs/decisions/0038-worktree-made-while-the-task-is-typed.md). With the environment the
# container was given: bash's own SHLVL and _ are not passed on. `ensure` is serialised, so an
# exec that starts it too is harmless.
ACCOUNT_PENDING="/tmp/.toolbox-account-pending-$(id -u)"
start_session_holder() {
  [ -n "${TOOLBOX_SESSION_SOCKET:-}" ] || return 0
  [ -f "$SESSION_HOLDER" ] || return 0
  local out=/dev/null
  if [ -n "$LOG_FILE" ]; then out="$INIT_LOG_DIR/session-holder.log"; fi
  local pending=""
  if : >"$ACCOUNT_PENDING" 2>/dev/null; then pending="$ACCOUNT_PENDING"; fi
  TOOLBOX_ACCOUNT_PENDING="$pending" env -u SHLVL -u _ python3 -S "$SESSION_HOLDER" ensure --socket "$TOOLBOX_SESSION_SOCKET" </dev/null >>"$out" 2>&1 &
  log "starting the session holder on $TOOLBOX_SESSION_SOCKET"
}

# --- 0. egress forwarder -----------------------------------------------------------------------
# Under an egress policy (issue 30) the container has no network but its loopback, and the
# extension sets TOOLBOX_EGRESS_SOCKET to the host proxy's socket, bound in read-only. The
# forwarder listens on 127.0.0.1 (and ::1) port $EGRESS_PORT, where HTTP_PROXY and the like point,
# and relays each connection to that socket. --supervise starts it again when it fails (bounded,
# with backoff); a forwarder that already serves the port (one started by an exec) makes this one
# exit 0. Its log: $INIT_LOG_DIR/egress.log.
# ssh ignores proxy variables; $EGRESS_SSH_CONFIG (images/runtime/ssh-egress.conf) gives it
# `ProxyCommand toolbox-egress --connect %h %p` for every host while TOOLBOX_EGRESS_SOCKET is set
# (a Match exec on the variable). The image ships it rather than this script writing it as root
# here: that needs no sudo (a uid without it, or sudo removed), holds from the first process on
# (the session holder's shells start before these steps, a `docker exec` needs no entrypoint),
# and writes nothing to /etc at run time; without a policy the Match is false and it does
# nothing. The user's ~/.ssh/config is read first, so a ProxyCommand or ProxyJump there wins.
# Here it is only checked, so a missing file is said in the log.
start_egress_forwarder() {
  [ -n "${TOOLBOX_EGRESS_SOCKET:-}" ] || return 0
  if [ ! -f "$EGRESS_FORWARDER" ]; then
    log "TOOLBOX_EGRESS_SOCKET is set but $EGRESS_FORWARDER is missing: no egress forwarder"; return 1
  fi
  local out=/dev/null
  if [ -n "$LOG_FILE" ]; then out="$INIT_LOG_DIR/egress.log"; fi
  env -u SHLVL -u _ python3 -S "$EGRESS_FORWARDER" --supervise --port "$EGRESS_PORT" --socket "$TOOLBOX_EGRESS_SOCKET" </dev/null >>"$out" 2>&1 &
  log "starting the egress forwarder on port $EGRESS_PORT for $TOOLBOX_EGRESS_SOCKET"
  if [ -f "$EGRESS_SSH_CONFIG" ]; then
    log "ssh connects through the egress proxy ($EGRESS_SSH_CONFIG)"
  else
    log "$EGRESS_SSH_CONFIG is missing: ssh (git over SSH) is not configured for the egress proxy"
  fi
}

# Neither the holder's shells nor the command may reach for the proxy before the forwarder
# listens (an agent started with its container connects at once): the shells wait for the
# account marker, removed after this. The kernel's table of listening sockets says when it
# listens (a probe connection would reach the host's proxy).
wait_egress_forwarder() {
  [ -n "${TOOLBOX_EGRESS_SOCKET:-}" ] && [ -f "$EGRESS_FORWARDER" ] || return 0
  local hex i
  hex="$(printf ':%04X 00000000:0000 0A' "$EGRESS_PORT")"
  for i in $(seq 150); do
    if grep -q -F -- "$hex" /proc/net/tcp 2>/dev/null; then return 0; fi
    sleep 0.02
  done
  log "the egress forwarder is not listening on port $EGRESS_PORT after 3 s (see $INIT_LOG_DIR/egress.log)"; return 1
}

# --- 2. init.d scripts, in parallel ---------------------------------------------------------
run_init_d() {
  local f n pids=() names=() i rc=0
  for f in "$INIT_DIR"/*.sh; do
    [ -f "$f" ] || continue
    n="$(basename "$f" .sh)"
    bash "$f" </dev/null >>"$INIT_LOG_DIR/$n.log" 2>&1 &
    pids+=("$!"); names+=("$n")
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      log "init script ${names[$i]} failed (see $INIT_LOG_DIR/${names[$i]}.log)"; rc=1
    fi
  done
  return "$rc"
}

# --- 3. proximo CA ----------------------------------------------------------------------------
trust_proximo_ca() {
  [ -f "$PROXIMO_CA" ] || return 0
  local ok=0 nssdb="$HOME/.pki/nssdb"
  if cmp -s "$PROXIMO_CA" "$SYSTEM_CA" 2>/dev/null; then
    log "proximo CA already in the system store"
  elif as_root cp "$PROXIMO_CA" "$SYSTEM_CA" && as_root chmod 0644 "$SYSTEM_CA" \
       && as_root update-ca-certificates >/dev/null 2>&1; then
    log "added the proximo CA to the system store"
  else
    log "could not add the proximo CA to the system store"; ok=1
  fi
  if command -v certutil >/dev/null 2>&1; then
    if mkdir -p "$nssdb" \
       && { [ -f "$nssdb/cert9.db" ] || certutil -d "sql:$nssdb" -N --empty-password; } \
       && { certutil -d "sql:$nssdb" -D -n proximo >/dev/null 2>&1 || true; } \
       && certutil -d "sql:$nssdb" -A -n proximo -t 'C,,' -i "$PROXIMO_CA"; then
      log "added the proximo CA to the NSS database $nssdb"
    else
      log "could not add the proximo CA to the NSS database $nssdb"; ok=1
    fi
  else
    log "certutil is missing; the proximo CA is not in the NSS database"; ok=1
  fi
  if command -v proximo-hosts >/dev/null 2>&1; then
    proximo-hosts --watch </dev/null >>"$INIT_LOG_DIR/proximo-hosts.log" 2>&1 &
    log "started proximo-hosts --watch"
  fi
  return "$ok"
}

# --- 4. git credential helper -------------------------------------------------------------------
configure_git_credentials() {
  case "$(printf '%s' "${GIT_CREDENTIAL_BRIDGE:-}" | tr '[:upper:]' '[:lower:]')" in
    0|false|no|off) log "GIT_CREDENTIAL_BRIDGE=${GIT_CREDENTIAL_BRIDGE}: git credential helper left alone"; return 0 ;;
  esac
  if [ ! -r "$BRIDGE_DIR/token" ] && [ ! -r "$BRIDGE_LEGACY_DIR/token" ]; then
    return 0
  fi
  as_root flock /tmp/toolbox-gitconfig.lock \
    git config --system credential.helper "!$CREDENTIAL_HELPER" || return 1
  log "git credential helper set to $CREDENTIAL_HELPER"
}

# --- 5. startup scripts ----------------------------------------------------------------------------
run_startup_scripts() {
  local f rc=0 code
  for f in "$STARTUP_DIR"/*.sh; do
    [ -f "$f" ] || continue
    log "running startup script $f"
    bash "$f" </dev/null
    code=$?
    if [ "$code" -ne 0 ]; then log "startup script $f failed (exit $code)"; rc=1; fi
  done
  return "$rc"
}

step session-holder start_session_holder
step egress-forwarder start_egress_forwarder
step account ensure_account
# Under a policy a shell's first connection needs the forwarder: it listens before shells start.
step egress-ready wait_egress_forwarder
# The account step has run (whatever its outcome): the holder's shells may start.
rm -f "$ACCOUNT_PENDING" 2>/dev/null
step init.d run_init_d
step proximo-ca trust_proximo_ca
step git-credentials configure_git_credentials
step startup-scripts run_startup_scripts

if [ "$#" -eq 0 ]; then set -- sleep infinity; fi
exec "$@"
