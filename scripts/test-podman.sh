#!/usr/bin/env bash
# The integration tier again, against Podman (issue #18): rootful Podman's Docker-compatible API
# on the socket scripts/ensure-podman.sh serves (scripts/setup.sh starts it). Expects out/ built
# (scripts/test.sh builds it; alone: npm run test:podman). Files that never reach the engine under
# test are left out: sessions-restart drives a private dockerd of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
SOCK="${TOOLBOX_PODMAN_SOCKET:-/run/toolbox-test-podman/podman.sock}"
if ! curl -fsS --max-time 5 --unix-socket "$SOCK" -o /dev/null http://d/_ping 2>/dev/null; then
  echo "Podman does not answer on $SOCK: run 'sudo bash scripts/ensure-podman.sh' (or scripts/setup.sh) first." >&2
  exit 1
fi
export TOOLBOX_TEST_ENGINE=podman TOOLBOX_TEST_DOCKER_SOCKET="$SOCK" DOCKER_HOST="unix://$SOCK"
files=()
for f in out/test/image/*.test.js out/test/engine/*.test.js; do
  case "$f" in */sessions-restart.test.js) continue ;; esac
  files+=("$f")
done
node --test --test-concurrency=1 "${files[@]}"
