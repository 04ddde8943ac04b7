#!/usr/bin/env bash
# The integration tier again, against Podman (issue #18), as scripts/ensure-podman.sh serves it
# (scripts/setup.sh starts both). Expects out/ built (scripts/test.sh builds it; alone:
# npm run test:podman; TOOLBOX_PODMAN_PASSES=rootless runs only the second pass).
#   1. rootful Podman: every file of test/image and test/engine, but sessions-restart (it drives a
#      private dockerd of its own), remote (ssh:// and TLS to engines of its own making) and the
#      three whose subject is the shims and the host, not the engine (see below);
#   2. rootless Podman: the open path, peer messaging (anchor, volume ownership, the gate), drift,
#      events, stop all, the session holder and the CLI exit check, the protected paths and the agent's git in them, run
#      as the engine's own user (containers map its uid to itself, engine/compat.ts). The files
#      that need root for themselves are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
answers() { curl -fsS --max-time 5 --unix-socket "$1" -o /dev/null http://d/_ping 2>/dev/null; }
SOCK="${TOOLBOX_PODMAN_SOCKET:-/run/toolbox-test-podman/podman.sock}"
if ! answers "$SOCK"; then
  echo "Podman does not answer on $SOCK: run 'sudo bash scripts/ensure-podman.sh' (or scripts/setup.sh) first." >&2
  exit 1
fi
files=()
for f in out/test/image/*.test.js out/test/engine/*.test.js; do
  # sessions-restart drives a private dockerd of its own; remote reaches this machine's engine
  # through ssh://, where dial-stdio answers with the docker CLI's default engine, not Podman.
  # shims, bridge-shims-e2e and propose test the shims and the host's answers to them: nothing in
  # them differs by engine (the socket mount they use is proven on Podman by forced-fallback and
  # reattach-bridge), so they run on Docker only (CI time, docs/engines.md).
  case "$f" in */sessions-restart.test.js | */remote.test.js) continue ;; esac
  case "$f" in */image/shims.test.js | */image/bridge-shims-e2e.test.js | */engine/propose.test.js) continue ;; esac
  files+=("$f")
done
PASSES="${TOOLBOX_PODMAN_PASSES:-rootful rootless}"
if [[ " $PASSES " == *" rootful "* ]]; then
  echo "-- rootful Podman ($SOCK)"
  TOOLBOX_TEST_ENGINE=podman TOOLBOX_TEST_DOCKER_SOCKET="$SOCK" DOCKER_HOST="unix://$SOCK" node --test --test-concurrency=1 "${files[@]}"
fi
[[ " $PASSES " == *" rootless "* ]] || exit 0

ROOTLESS_USER="${TOOLBOX_PODMAN_ROOTLESS_USER:-tbxpodman}"
ruid="$(id -u "$ROOTLESS_USER" 2>/dev/null)" || { echo "No user $ROOTLESS_USER: run 'sudo bash scripts/ensure-podman.sh' first." >&2; exit 1; }
RSOCK="/run/user/$ruid/podman/podman.sock"
if ! answers "$RSOCK"; then
  echo "Rootless Podman does not answer on $RSOCK: run 'sudo bash scripts/ensure-podman.sh' first." >&2
  exit 1
fi
rootless=(open peer peer-gate lifecycle events sessions cli-teardown smoke protected-paths git-workflow docker-endpoint-join egress)
# The tests run as that user: from here when it can read the tree, else from a copy it owns.
dir="$PWD"
if ! runuser -u "$ROOTLESS_USER" -- test -r "$dir/out/test/engine/open.test.js" -a -r "$dir/node_modules/dockerode/package.json"; then
  dir="$(mktemp -d /tmp/toolbox-rootless-XXXXXX)"
  cp -r out images shims package.json node_modules "$dir/"
  chown -R "$ROOTLESS_USER:" "$dir"
  trap 'rm -rf "$dir"' EXIT
fi
echo "-- rootless Podman ($RSOCK, as $ROOTLESS_USER)"
runuser -u "$ROOTLESS_USER" -- env -C "$dir" HOME="$(getent passwd "$ROOTLESS_USER" | cut -d: -f6)" XDG_RUNTIME_DIR="/run/user/$ruid" \
  TOOLBOX_TEST_ROOTLESS=1 TOOLBOX_TEST_ENGINE=podman TOOLBOX_TEST_DOCKER_SOCKET="$RSOCK" DOCKER_HOST="unix://$RSOCK" \
  node --test --test-concurrency=1 $(printf "out/test/engine/%s.test.js " "${rootless[@]}")
