#!/usr/bin/env bash
# Installs and starts everything the tests need on a fresh Debian machine (as root): the Docker
# engine, the local base image the runtime image builds FROM, rootful Podman as the second engine
# (its own config, socket and a copy of the base image), Debian's container registry (the
# pull-before-build tests start one on loopback, scripts/ensure-registry.sh), OpenSSH's server
# (the ssh:// engine tests start their own on loopback, scripts/ensure-sshd.sh), code-server +
# Chromium for the VS Code tests, and the real Claude Code binary (pinned, from the npm registry)
# that test/engine/claude-real-hook.test.ts runs. Each step is idempotent and quick when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
bash scripts/ensure-base-image.sh
bash scripts/ensure-registry.sh install
bash scripts/ensure-sshd.sh install
bash scripts/ensure-podman.sh
bash scripts/ensure-e2e-tools.sh
bash scripts/ensure-claude-binary.sh >/dev/null
