#!/usr/bin/env bash
# The real Claude Code native binary for test/engine/claude-real-hook.test.ts, fetched once from the
# npm registry npm is configured for, into a cache outside the repository, and
# its path printed on stdout (nothing else goes to stdout). Idempotent; instant when cached.
#
# The version is pinned here and nowhere else: the platform package of Claude Code
# (@anthropic-ai/claude-code-linux-x64 or -linux-arm64, glibc, as the runtime image is Debian
# bookworm), checked twice: `npm pack` checks the tarball against the registry's sha512, and this
# script checks it against the sha512 pinned below, so a republished tarball is refused.
#
# Cache: $TOOLBOX_TEST_CACHE, else /var/cache/toolbox-test as root, else ~/.cache/toolbox-test;
# the binary is <cache>/claude-<version>-linux-<arch>/bin/claude (the test mounts bin/ read-only).
# Exit 1 with a sentence on stderr when it cannot be had (no registry, a changed tarball, a CPU
# without a package).
set -euo pipefail

VERSION=2.1.332
declare -A INTEGRITY=(
  [x64]='sha512-f4JWhzwYutJIHScC7/dYOPX6s28tt7ZADhsOi8zwOHq5fFPEuUeChh2NMfinSg0GrUckYxaeebC4h0DqiKzLcw=='
  [arm64]='sha512-BlHNEtK38KBPWU31F4lUSS9sHclCyfWbThT1CErvxxH8+XcljYLZlQwdyXBkTD62rw1TgfE1u1a+quMWS0NSJg=='
)

die() { echo "ensure-claude-binary: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || die "needs node and npm on PATH (they fetch and check the package)."
ARCH=$(node -p process.arch)
[ -n "${INTEGRITY[$ARCH]:-}" ] || die "Claude Code has no linux package for the CPU '$ARCH' (only x64 and arm64)."
PKG="@anthropic-ai/claude-code-linux-$ARCH"

if [ -n "${TOOLBOX_TEST_CACHE:-}" ]; then
  CACHE=$TOOLBOX_TEST_CACHE
elif [ "$(id -u)" = 0 ]; then
  CACHE=/var/cache/toolbox-test
else
  CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/toolbox-test
fi
DIR="$CACHE/claude-$VERSION-linux-$ARCH"
BIN="$DIR/bin/claude"
STAMP="$DIR/ok"

# Cached: the stamp is written only after the binary was checked and unpacked whole.
if [ -f "$STAMP" ] && [ -x "$BIN" ] && [ "$(cat "$STAMP")" = "${INTEGRITY[$ARCH]}" ]; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$CACHE"
STAGE=$(mktemp -d "$CACHE/.claude-$VERSION-$ARCH.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
echo "ensure-claude-binary: fetching $PKG@$VERSION from the npm registry (about 180 MB, once)" >&2
if ! (cd "$STAGE" && timeout 600 npm pack --json --loglevel=error --fetch-retries=1 --fetch-retry-mintimeout=1000 --fetch-retry-maxtimeout=3000 "$PKG@$VERSION" >pack.json 2>pack.err); then
  why=$(node -p "(require('$STAGE/pack.json').error || {}).summary || ''" 2>/dev/null || true)
  [ -n "$why" ] || why=$(grep -m1 -v '^npm error code' "$STAGE/pack.err" 2>/dev/null | sed 's/^npm error //' || true)
  die "could not fetch $PKG@$VERSION from the npm registry: ${why:-npm pack failed} (the machine must reach the registry npm is configured for: $(npm config get registry 2>/dev/null))."
fi
TGZ=$(node -p "require('$STAGE/pack.json')[0].filename")
GOT=$(node -e "
  const { createHash } = require('crypto');
  const h = createHash('sha512');
  const s = require('fs').createReadStream(process.argv[1]);
  s.on('data', (d) => h.update(d)).on('end', () => console.log('sha512-' + h.digest('base64')));
" "$STAGE/$TGZ")
[ "$GOT" = "${INTEGRITY[$ARCH]}" ] || die "$PKG@$VERSION from the registry is not the tarball pinned in $0 (sha512 $GOT, pinned ${INTEGRITY[$ARCH]})."
mkdir -p "$STAGE/out/bin"
tar -xzf "$STAGE/$TGZ" -C "$STAGE/out" --strip-components=1 package/claude
mv "$STAGE/out/claude" "$STAGE/out/bin/claude"
chmod 0755 "$STAGE/out" "$STAGE/out/bin" "$STAGE/out/bin/claude"
printf '%s\n' "${INTEGRITY[$ARCH]}" >"$STAGE/out/ok"
# Another run may have finished first: keep its copy (the same checked binary).
if ! [ -f "$STAMP" ]; then
  rm -rf "$DIR"
  mv "$STAGE/out" "$DIR" || die "could not move the binary into $DIR."
fi
echo "$BIN"
