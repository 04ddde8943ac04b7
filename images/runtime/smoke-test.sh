#!/usr/bin/env bash
# Checks the content of a built runtime image with one `docker run --rm`, as an arbitrary
# uid:gid (4242:4242, which has no passwd entry) through the image's own entrypoint.
# Prints one line per check; exits non-zero on the first failure.
# Usage: images/runtime/smoke-test.sh IMAGE
# SMOKE_AGENTS=1 also checks the coding agents (an INSTALL_AGENTS=1 image): Node.js, npm,
# claude and codex run as that uid.
set -euo pipefail

if [ "$#" -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 IMAGE" >&2
  exit 64
fi
IMAGE="$1"
RUN_UID="${SMOKE_UID:-4242}"
RUN_GID="${SMOKE_GID:-4242}"

if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "FAIL: image $IMAGE does not exist; build it first." >&2
  exit 1
fi

# The checks run inside the container. Arguments: expected uid, expected gid.
read -r -d '' CHECKS <<'EOF' || true
set -u
n=0
ok()   { n=$((n+1)); printf 'ok %d - %s\n' "$n" "$1"; }
fail() { n=$((n+1)); printf 'FAIL %d - %s\n' "$n" "$1"; exit 1; }
check() { local what="$1"; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else fail "$what"; fi; }
mode_is() { [ "$(stat -c %a "$1")" = "$2" ]; }

want_uid="$1" want_gid="$2" want_agents="$3"
[ "$(getent passwd 1000 | cut -d: -f1,6)" = "toolbox:/home/toolbox" ] \
  && ok "user toolbox is uid 1000 with home /home/toolbox" || fail "user toolbox is uid 1000 with home /home/toolbox (got: $(getent passwd 1000))"
check "/home/toolbox is world-writable (0777)" mode_is /home/toolbox 777
check "/etc/passwd is 0666" mode_is /etc/passwd 666
check "/etc/group is 0666" mode_is /etc/group 666
for tool in git curl python3 zsh bash certutil sudo tini update-ca-certificates flock ssh; do
  check "tool $tool is installed" command -v "$tool"
done
# The Docker client (issue 27): the CLI and its two plugins run; the image itself names no engine
# (the extension sets DOCKER_HOST per container that has a Docker endpoint).
for cmd in "docker --version" "docker compose version" "docker buildx version" "docker-compose version"; do
  if v="$($cmd 2>&1)"; then ok "$cmd runs (${v%%$'\n'*})"; else fail "$cmd runs (got: $v)"; fi
done
[ -z "${DOCKER_HOST:-}" ] && ok "DOCKER_HOST is not set by the image" || fail "DOCKER_HOST is not set by the image (got: $DOCKER_HOST)"
for shim in code codium xdg-open proximo git-credential-toolbox; do
  p="$(command -v "$shim" 2>/dev/null)"
  [ "$p" = "/usr/local/bin/$shim" ] && [ -x "$p" ] \
    && ok "shim $shim is executable on PATH" || fail "shim $shim is executable on PATH (found: ${p:-nothing})"
done
[ "$(readlink /usr/local/bin/codium)" = "code" ] && ok "codium is a symlink to code" || fail "codium is a symlink to code"
check "bridge-lib.sh is at /usr/local/lib/toolbox/bridge-lib.sh and executable" test -x /usr/local/lib/toolbox/bridge-lib.sh
check "init.d directory exists" test -d /usr/local/lib/toolbox/init.d
check "entrypoint is executable" test -x /usr/local/bin/entrypoint
# The agent hook (docs/decisions/0050-approvals-over-the-bridge.md): it runs, and with no input or
# no bridge it exits 0 and prints nothing (never a decision it did not get from VS Code).
hook=/usr/local/lib/toolbox/toolbox-agent-hook
check "toolbox-agent-hook is executable" test -x "$hook"
out="$("$hook" claude </dev/null 2>/dev/null)" && [ -z "$out" ] \
  && ok "toolbox-agent-hook claude </dev/null exits 0 with no output" || fail "toolbox-agent-hook claude </dev/null exits 0 with no output (got: $out)"
out="$(printf '{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}' | "$hook" codex 2>/dev/null)" && [ -z "$out" ] \
  && ok "toolbox-agent-hook answers nothing without a bridge" || fail "toolbox-agent-hook answers nothing without a bridge (got: $out)"
for f in /etc/claude-code/managed-settings.json /etc/codex/hooks.json; do
  python3 -c 'import json, sys; assert "PermissionRequest" in json.load(open(sys.argv[1]))["hooks"]' "$f" 2>/dev/null && mode_is "$f" 644 \
    && ok "$f parses, has the PermissionRequest hook and is 0644" || fail "$f parses, has the PermissionRequest hook and is 0644"
done
check "/etc/codex/config.toml exists (Codex's system config layer)" test -f /etc/codex/config.toml
# The egress forwarder (issue 30): installed 0755 and relays on loopback (its self-test makes a
# throwaway proxy socket and passes bytes through; this container has no network but loopback).
fwd=/usr/local/lib/toolbox/toolbox-egress
check "toolbox-egress is executable and 0755" mode_is "$fwd" 755
out="$("$fwd" --self-test 2>&1)" && [ "$out" = ok ] \
  && ok "toolbox-egress --self-test relays over loopback" || fail "toolbox-egress --self-test relays over loopback (got: $out)"
# ssh under a policy (its ProxyCommand is toolbox-egress --connect): the file is there and parses,
# and applies only while TOOLBOX_EGRESS_SOCKET is set (a bad file would stop every ssh).
conf=/etc/ssh/ssh_config.d/toolbox-egress.conf
check "$conf exists and is 0644" mode_is "$conf" 644
pc="$(TOOLBOX_EGRESS_SOCKET=/run/toolbox-egress/egress.sock ssh -G git@example.test 2>&1 | grep -i '^proxycommand ')"
[ "$pc" = "proxycommand $fwd --connect %h %p" ] \
  && ok "ssh uses toolbox-egress --connect under a policy" || fail "ssh uses toolbox-egress --connect under a policy (got: $pc)"
pc="$(env -u TOOLBOX_EGRESS_SOCKET ssh -G git@example.test 2>&1 | grep -i '^proxycommand ')"
[ -z "$pc" ] && ok "ssh has no ProxyCommand without a policy" || fail "ssh has no ProxyCommand without a policy (got: $pc)"
[ "$(id -u):$(id -g)" = "$want_uid:$want_gid" ] && ok "runs as $want_uid:$want_gid" || fail "runs as $want_uid:$want_gid (got $(id -u):$(id -g))"
[ "$(whoami 2>&1)" = "toolbox" ] && ok "whoami is toolbox for uid $want_uid" || fail "whoami is toolbox for uid $want_uid (got: $(whoami 2>&1))"
[ "$(getent group "$want_gid" | cut -d: -f1)" = "toolbox" ] && ok "gid $want_gid has a group entry" || fail "gid $want_gid has a group entry"
git --version >/dev/null 2>&1 && ok "git --version works ($(git --version))" || fail "git --version works"
[ "$HOME" = "/home/toolbox" ] && ok "HOME is /home/toolbox" || fail "HOME is /home/toolbox (got: $HOME)"
check "HOME is writable" sh -c 'echo x > "$HOME/.smoke-write" && rm "$HOME/.smoke-write"'
check "sudo is passwordless" sudo -n true
[ "$(pwd)" = "/workspace" ] && ok "working directory is /workspace" || fail "working directory is /workspace (got: $(pwd))"
if [ "$want_agents" = 1 ]; then
  for agent in "node --version" "npm --version" "claude --version" "codex --version"; do
    v="$($agent 2>&1 | head -n 1)" && ok "$agent runs ($v)" || fail "$agent runs (got: $v)"
  done
  case "$(node --version)" in v2[2-9].*|v[3-9][0-9].*) ok "Node.js is 22 or newer" ;; *) fail "Node.js is 22 or newer (got $(node --version))" ;; esac
fi
echo "all $n checks passed"
EOF

exec docker run --rm --network none --user "$RUN_UID:$RUN_GID" "$IMAGE" \
  bash -c "$CHECKS" smoke "$RUN_UID" "$RUN_GID" "${SMOKE_AGENTS:-0}"
