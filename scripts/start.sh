#!/usr/bin/env bash
# Try the extension: builds it and serves it in a local VS Code (code-server on 127.0.0.1,
# installed on first use by scripts/ensure-e2e-tools.sh), opened on a folder.
# Usage: npm start [-- FOLDER]     (default: a demo folder in a temp dir)
# Env: PORT (default 8080). Ctrl-C stops it.
# This is the real product: it uses your ~/.toolbox and the real `toolbox-…` container names.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=${TOOLBOX_E2E_TOOLS:-/var/cache/toolbox-e2e}
PORT=${PORT:-8080}

# A fresh clone has no node_modules yet: install exactly what the lock file names first.
if [ ! -x node_modules/.bin/esbuild ]; then
  echo "[start] installing the build's dependencies (npm ci), once"
  npm ci --no-audit --no-fund
fi
bash scripts/ensure-e2e-tools.sh
npm run -s build
CS=$TOOLS/cs/node_modules/.bin/code-server

RUN=$(mktemp -d "${TMPDIR:-/tmp}/toolbox-start.XXXXXX")
if [ $# -ge 1 ]; then
  FOLDER=$(cd "$1" && pwd)
else
  FOLDER=$RUN/demo
  mkdir -p "$FOLDER"
  cat > "$FOLDER/.toolbox.yaml" <<'YAML'
# Toolbox project settings (see the README). Peer messaging lets agent sessions in this
# folder's container message sessions in other toolbox containers.
peer_messaging: true
YAML
  printf '# Demo\n\nRun "Toolbox: Open Toolbox Shell" from the command palette (F1).\n' > "$FOLDER/README.md"
fi
mkdir -p "$RUN/ud/User"
cat > "$RUN/ud/User/settings.json" <<'JSON'
{ "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off", "update.mode": "none",
  "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false }
JSON
# code-server's own state (config.yaml, logs) stays out of your home.
export XDG_CONFIG_HOME=$RUN/xdg/config XDG_DATA_HOME=$RUN/xdg/data XDG_CACHE_HOME=$RUN/xdg/cache

PAYLOAD=$(node -e '
  const [port, ext] = process.argv.slice(1);
  console.log(encodeURIComponent(JSON.stringify([["extensionDevelopmentPath", `vscode-remote://127.0.0.1:${port}${ext}`], ["skipWelcome", "true"]])));
' "$PORT" "$ROOT")
URL="http://127.0.0.1:$PORT/?folder=$(node -p 'encodeURIComponent(process.argv[1])' "$FOLDER")&payload=$PAYLOAD"

setsid "$CS" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry --disable-update-check \
  --disable-getting-started-override --user-data-dir "$RUN/ud" --extensions-dir "$RUN/exts" >"$RUN/code-server.log" 2>&1 &
CS_PID=$!
trap 'kill -- -"$CS_PID" 2>/dev/null || true; wait "$CS_PID" 2>/dev/null || true; rm -rf "$RUN"' EXIT INT TERM
for _ in $(seq 1 150); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$RUN/code-server.log"; exit 1; }
echo
echo "Toolbox is running in VS Code (code-server) on folder $FOLDER:"
echo "  $URL"
echo "Open Toolbox Shell from the palette (F1), or the Toolbox icon in the activity bar. Ctrl-C stops."
wait "$CS_PID"
