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
echo "== integration tests (real Docker engine)"
node --test --test-concurrency=1 out/test/image out/test/engine
echo "== integration tests again, against Podman (its Docker-compatible API)"
bash scripts/test-podman.sh
echo "== VS Code tests (code-server + Chromium, real Docker engine)"
E2E_SKIP_BUILD=1 bash scripts/e2e.sh
