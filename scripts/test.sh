#!/usr/bin/env bash
# The test command (README: `npm test`): lint and format first, then every tier, cheapest first.
# Each tier also runs alone:
#   npm run test:unit    no Docker, no VS Code (pure planning, config, tree items, the bridge)
#   npm run test:docker  the real Docker engine (image, shims in a container, engine)
#   npm run test:podman  the same against rootful Podman (scripts/test-podman.sh)
#   npm run test:vscode  code-server + Chromium + the real engine (extension-host suite, UI tests)
# scripts/setup.sh installs and starts what the last two need (.ci/run calls it first).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== lint and format (eslint, prettier)"
npm run -s lint
npm run -s build
npm run -s compile-tests
echo "== unit tests (no Docker, no VS Code)"
node --test out/test/unit out/test/bridge
echo "== release dry run (package the VSIX, no publishing)"
bash scripts/release-dry-run.sh
# The Docker tier and the Podman tier drive two independent engines and mostly wait on them, so
# they run at the same time (measured on two cores: both in 14.6 min, against 13.0 + 14.6 one
# after the other). Podman's output is kept aside and printed whole after Docker's.
echo "== integration tests (real Docker engine; the Podman tier runs alongside, its output follows)"
podman_log="$(mktemp /tmp/toolbox-podman-tier-XXXXXX)"
bash scripts/test-podman.sh >"$podman_log" 2>&1 &
podman_pid=$!
docker_rc=0
node --test --test-concurrency=1 out/test/image out/test/engine || docker_rc=$?
podman_rc=0
wait "$podman_pid" || podman_rc=$?
echo "== integration tests again, against Podman (its Docker-compatible API; ran alongside the Docker tier)"
cat "$podman_log"
rm -f "$podman_log"
if [ "$docker_rc" != 0 ] || [ "$podman_rc" != 0 ]; then
  echo "integration tests failed: Docker tier exit $docker_rc, Podman tier exit $podman_rc" >&2
  exit 1
fi
echo "== VS Code tests (code-server + Chromium, real Docker engine)"
E2E_SKIP_BUILD=1 bash scripts/e2e.sh
