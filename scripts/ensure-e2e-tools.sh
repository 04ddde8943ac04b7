#!/usr/bin/env bash
# Installs what the VS Code tests need, once, into a cache outside the repository:
# Debian's chromium (Playwright drives it), code-server (VS Code for the browser, from npm) and
# playwright-core. VS Code desktop and Electron cannot be downloaded on this machine kind, so
# code-server is the real VS Code the tests run in. Prints nothing but progress; idempotent.
#
# code-server 4.100.3 is the newest that runs on Node 20 (VS Code 1.100.3). Its install needs
# four things here: root needs npm_config_unsafe_perm for its postinstall; the kerberos module
# needs libkrb5-dev; @vscode/ripgrep downloads rg from GitHub, so we seed its download cache with
# Debian's ripgrep; node-pty's postinstall runs `npx node-gyp`, which needs npm_config_yes.
set -euo pipefail
CS_VERSION=${CS_VERSION:-4.100.3}
TOOLS=${TOOLBOX_E2E_TOOLS:-/var/cache/toolbox-e2e}
t() { echo "[ensure-e2e-tools $(date +%T)] $*"; }

need=()
for p in libkrb5-dev ripgrep chromium; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if ((${#need[@]})); then
  t "apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

CS=$TOOLS/cs/node_modules/.bin/code-server
if ! [ -x "$CS" ] || [ "$("$CS" --version 2>/dev/null | awk '/^[0-9]/{print $1; exit}')" != "$CS_VERSION" ]; then
  t "installing code-server@$CS_VERSION into $TOOLS (about a minute)"
  rm -rf "$TOOLS/cs" "$TOOLS/pack"
  mkdir -p "$TOOLS/cs" "$TOOLS/tmp" "$TOOLS/pack"
  (
    cd "$TOOLS/pack"
    npm pack -s "code-server@$CS_VERSION" >/dev/null
    tar xzf "code-server-$CS_VERSION.tgz" package/lib/vscode/npm-shrinkwrap.json
    RGPKG=$(node -p "require('./package/lib/vscode/npm-shrinkwrap.json').packages['node_modules/@vscode/ripgrep'].version")
    npm pack -s "@vscode/ripgrep@$RGPKG" >/dev/null
    RGTAG=$(tar xzOf "vscode-ripgrep-$RGPKG.tgz" package/lib/postinstall.js | sed -n "s/^const VERSION = '\(.*\)';/\1/p")
    mkdir -p "$TOOLS/tmp/vscode-ripgrep-cache-$RGPKG" rgstage
    cp /usr/bin/rg rgstage/rg
    tar czf "$TOOLS/tmp/vscode-ripgrep-cache-$RGPKG/ripgrep-$RGTAG-x86_64-unknown-linux-musl.tar.gz" -C rgstage rg
  )
  (
    cd "$TOOLS/cs"
    echo '{"private":true}' > package.json
    TMPDIR=$TOOLS/tmp npm_config_unsafe_perm=true npm_config_yes=true \
      npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" >/dev/null
  )
fi
if ! [ -d "$TOOLS/pw/node_modules/playwright-core" ]; then
  t "installing playwright-core into $TOOLS/pw"
  mkdir -p "$TOOLS/pw"
  (cd "$TOOLS/pw" && echo '{"private":true}' > package.json && npm install -s --no-audit --no-fund playwright-core >/dev/null)
fi
t "code-server $("$CS" --version | awk '/^[0-9]/{print $1; exit}'), playwright-core $(node -p "require('$TOOLS/pw/node_modules/playwright-core/package.json').version"), $(chromium --version 2>/dev/null | head -1)"
