#!/usr/bin/env bash
# The test command (README: `npm test`). Unit tests need nothing; integration tests need a
# running Docker engine and the local base image (scripts/setup.sh provides both); the UI and
# extension-host tests need code-server and Chromium (also from scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run -s build
npm run -s compile-tests
echo "== unit tests"
node --test out/test/unit
echo "== integration tests (real Docker engine)"
node --test --test-concurrency=1 out/test/image out/test/engine out/test/bridge
