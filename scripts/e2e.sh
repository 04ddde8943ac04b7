#!/usr/bin/env bash
# VS Code tests in a real VS Code: code-server (VS Code 1.100 for the browser) driven by
# playwright-core in Debian's chromium. Two parts, both against the real Docker engine:
#   1. the extension-host suite (test/suite, mocha), loaded through the workbench `payload`
#      protocol (code-server rejects --extensionDevelopmentPath);
#   2. the UI tests (test/e2e/ui*.test.ts, node:test; test/e2e/workbench.ts), which click, type and take screenshots
#      into test-output/e2e/.
# Hermetic: a temp HOME (so ~/.toolbox is temporary), XDG dirs and user-data-dir; every Docker
# object carries a random test prefix (TOOLBOX_VSCODE_NAME_PREFIX) and is removed at the end.
# Usage: bash scripts/e2e.sh        (needs root for the first install; see ensure-e2e-tools.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=${TOOLBOX_E2E_TOOLS:-/var/cache/toolbox-e2e}
t() { echo "[e2e $(date +%T)] $*"; }

bash scripts/ensure-e2e-tools.sh
CS=$TOOLS/cs/node_modules/.bin/code-server
export NODE_PATH=$TOOLS/pw/node_modules
[ -f dist/extension.js ] && [ "${E2E_SKIP_BUILD:-}" = 1 ] || npm run -s build
[ "${E2E_SKIP_BUILD:-}" = 1 ] || npm run -s compile-tests

RUN=$(mktemp -d "${TMPDIR:-/tmp}/toolbox-e2e.XXXXXX")
mkdir -p "$RUN/ud/User" "$RUN/xdg" "$RUN/home" "$RUN/ws"
# A ~/.ssh, so the Workspaces view has host SSH keys to show under "Can reach on this host".
mkdir -m 700 "$RUN/home/.ssh"
# The workspace gets a .toolbox.yaml so the activation event is exercised too.
printf '# demo workspace for the Toolbox e2e tests\n' > "$RUN/ws/.toolbox.yaml"
printf 'hello from the toolbox e2e workspace\n' > "$RUN/ws/README.md"
export HOME=$RUN/home XDG_CONFIG_HOME=$RUN/xdg/config XDG_DATA_HOME=$RUN/xdg/data XDG_CACHE_HOME=$RUN/xdg/cache
# A stand-in `toolbox` CLI on PATH (docs/decisions/0018): `toolbox config show` prints what
# ~/.fake-toolbox-config-show holds, nothing without it (an older CLI: no peer-default notice).
mkdir -p "$RUN/bin"
printf '#!/bin/sh\n[ "$1 $2" = "config show" ] || exit 2\ncat "$HOME/.fake-toolbox-config-show" 2>/dev/null\nexit 0\n' > "$RUN/bin/toolbox"
chmod 755 "$RUN/bin/toolbox"
# The editor may take PATH from a login shell, which resets it: the extension searches this instead.
export TOOLBOX_VSCODE_CLI_PATH=$RUN/bin:$PATH
# Tests only: object-name prefix and fast image build args (documented in extension/src/extension.ts).
export TOOLBOX_VSCODE_NAME_PREFIX=${TOOLBOX_VSCODE_NAME_PREFIX:-tbxe2e$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')}
export TOOLBOX_VSCODE_BUILD_ARGS=${TOOLBOX_VSCODE_BUILD_ARGS:-'{"INSTALL_AGENTS":"0"}'}
SHOTS=$ROOT/test-output/e2e
mkdir -p "$SHOTS"
rm -f "$SHOTS"/*.png

cat > "$RUN/ud/User/settings.json" <<'JSON'
{ "workbench.startupEditor": "none", "workbench.tips.enabled": false, "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false, "update.mode": "none",
  "workbench.enableExperiments": false, "security.workspace.trust.enabled": false,
  "terminal.integrated.enablePersistentSessions": false, "terminal.integrated.gpuAcceleration": "off", "chat.commandCenter.enabled": false,
  "terminal.integrated.showTerminalConfigPrompt": false,
  "editor.quickSuggestions": { "other": "off", "comments": "off", "strings": "off" },
  "editor.suggestOnTriggerCharacters": false, "editor.acceptSuggestionOnEnter": "off" }
JSON

PORT=${E2E_PORT:-$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}
setsid "$CS" --bind-addr "127.0.0.1:$PORT" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  --user-data-dir "$RUN/ud" --extensions-dir "$RUN/exts" >"$RUN/code-server.log" 2>&1 &
CS_PID=$!
# Removes every Docker object under this run's prefix (containers, anchor, volume).
remove_objects() {
  node -e '
    const { docker, removeNamespaceObjects } = require(process.argv[1] + "/out/test/support/docker.js");
    const { objectNames } = require(process.argv[1] + "/out/extension/src/contract/objects.js");
    removeNamespaceObjects(docker(), objectNames(process.argv[2])).catch((e) => console.error("cleanup:", e.message));
  ' "$ROOT" "$TOOLBOX_VSCODE_NAME_PREFIX" || true
}
cleanup() {
  # setsid: code-server, its extension hosts and watchers share process group $CS_PID.
  kill -- -"$CS_PID" 2>/dev/null || true
  wait "$CS_PID" 2>/dev/null || true
  remove_objects
  [ "${E2E_KEEP:-}" = 1 ] && t "kept $RUN" || rm -rf "$RUN"
}
trap cleanup EXIT
for _ in $(seq 1 150); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$RUN/code-server.log"; exit 1; }
t "code-server on 127.0.0.1:$PORT (prefix $TOOLBOX_VSCODE_NAME_PREFIX, run dir $RUN)"

export E2E_BASE_URL=http://127.0.0.1:$PORT E2E_EXT_PATH=$ROOT E2E_FOLDER=$RUN/ws E2E_SHOTS=$SHOTS E2E_LOGS=$RUN/logs E2E_USER_DATA=$RUN/ud
# ui-vsix.test.js installs dist/toolbox.vsix into a code-server of its own, started from this binary.
export E2E_CODE_SERVER=$CS
suite=0
if [ "${E2E_ONLY_UI:-}" != 1 ]; then
  t "extension-host suite"
  node out/test/e2e/runSuite.js || suite=$?
  t "extension-host suite exit code $suite"
fi
ui=0
if [ "${E2E_ONLY_SUITE:-}" != 1 ]; then
  # Every UI test file (E2E_UI_TESTS: a space-separated list instead) gets a fresh folder of
  # its own, so it starts from an empty Workspaces view: ui.test.js → ws-ui, ui-<x>.test.js → ws-<x>.
  for file in ${E2E_UI_TESTS:-out/test/e2e/ui*.test.js}; do
    name=$(basename "$file" .test.js); name=${name#ui-}
    ws=$RUN/ws-$name
    mkdir -p "$ws" && printf '# ui test workspace\n' > "$ws/.toolbox.yaml"
    t "UI tests $file (screenshots in $SHOTS)"
    rc=0
    E2E_FOLDER=$ws node --test --test-concurrency=1 "$file" || rc=$?
    t "UI tests $file exit code $rc"
    [ "$rc" = 0 ] || ui=$rc
    # The next file starts from an engine without this one's containers (the tree lists them all).
    remove_objects
  done
fi
exit $(( suite || ui ))
