#!/usr/bin/env bash
# What the release workflow (.github/workflows/release.yml) does for a tag, without the network and
# without publishing, for v<package.json's version>: check the tag and its channel, package the
# VSIX once (dist/toolbox.vsix, --pre-release on an odd minor), list it, check its version and
# pre-release mark, extract CHANGELOG.md's section for the version, and print what would be
# published where. npm test runs it after the unit tests (scripts/test.sh).
# docs/decisions/0057-release-channels.md; the steps themselves are scripts/release.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

version="$(node -p 'require("./package.json").version')"
tag="v$version"
echo "release dry run for $tag (nothing is published)"
outputs="$(node scripts/release.mjs check-tag "$tag")"
prerelease="$(sed -n 's/^prerelease=//p' <<<"$outputs")"

package=(npm run -s package)
channel=release
if [ "$prerelease" = true ]; then
  package+=(-- --pre-release)
  channel=pre-release
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "\$ ${package[*]}"
if ! "${package[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  echo "release dry run: packaging failed" >&2
  exit 1
fi
grep -E 'DONE|WARNING' "$log" || true

node scripts/release.mjs vsix-list dist/toolbox.vsix
node scripts/release.mjs check-vsix dist/toolbox.vsix "$tag"

# The release notes. CHANGELOG.md must have the section; the release itself also refuses one
# whose heading still says "unreleased" (changelog-section --release), which is only reported here.
if [ ! -f CHANGELOG.md ]; then
  echo "release dry run: CHANGELOG.md does not exist: the release notes are its section for $version (## [$version] — <date>)" >&2
  exit 1
fi
notes="$(node scripts/release.mjs changelog-section "$version")"
echo "release notes (CHANGELOG.md, $version):"
sed 's/^/  | /' <<<"$notes"
if ! refusal="$(node scripts/release.mjs changelog-section "$version" --release 2>&1 >/dev/null)"; then
  echo "note: tagging $tag now would stop the release: ${refusal#release: }"
fi

pre_flag=""
gh_flag=""
if [ "$prerelease" = true ]; then
  pre_flag=" --pre-release"
  gh_flag=" --prerelease"
fi
echo "would publish dist/toolbox.vsix ($version, $channel) to:"
row() { printf '  %-50s %s\n' "$1" "$2"; }
row "Visual Studio Marketplace (when VSCE_PAT is set):" "npx vsce publish --packagePath dist/toolbox.vsix$pre_flag --skip-duplicate"
row "Open VSX (when OVSX_PAT is set):" "npx --yes ovsx@1.4.0 publish dist/toolbox.vsix --skip-duplicate"
row "GitHub release $tag:" "gh release create $tag toolbox-vscode-$version.vsix --title $tag --notes-file <the notes above> --verify-tag$gh_flag"
echo "release dry run: done in $((SECONDS - started)) s"
