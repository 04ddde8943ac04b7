#!/usr/bin/env bash
# The test command (README: `npm test`). Unit tests need nothing; integration tests need a
# running Docker engine and the local base image; the VS Code tests need code-server and
# Chromium. scripts/setup.sh installs and starts all of them (.ci/run calls it first).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run -s build
npm run -s compile-tests
echo "== unit tests"
node --test out/test/unit
echo "== integration tests (real Docker engine)"
node --test --test-concurrency=1 out/test/image out/test/engine out/test/bridge
echo "== VS Code tests (code-server + Chromium, real Docker engine)"
E2E_SKIP_BUILD=1 bash scripts/e2e.sh
