#!/usr/bin/env bash
# Installs and starts everything the tests need on a fresh Debian machine (as root): the Docker
# engine, the local base image, and the browser-side tools for the VS Code tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
bash scripts/ensure-base-image.sh
