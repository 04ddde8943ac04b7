#!/usr/bin/env bash
# `npm run bench`: speed and memory targets, measured against the real engine (scripts/setup.sh
# installs and starts it). Writes bench/RESULTS.md. Arguments pick benchmarks by name.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run -s build
npm run -s compile-tests
node --expose-gc out/bench/run.js "$@"
