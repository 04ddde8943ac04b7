#!/usr/bin/env bash
# Refreshes the README's screenshots (docs/media/*.png) from the VS Code UI tests: builds, runs
# the four UI test files that take them (scripts/e2e.sh, code-server + Chromium against the real
# Docker engine, about 5 minutes), then copies one screenshot of each into docs/media/.
#
#   bash scripts/readme-shots.sh
#
# The README links them by relative path; vsce rewrites those links to the repository
# (package.json's "repository", …/raw/HEAD/docs/media/…), so docs/media/ stays out of the VSIX
# (.vscodeignore) and the Marketplace shows the images of the default branch. Commit the new
# PNGs after looking at them. Container names in the shots carry the tests' random object prefix.
set -euo pipefail
cd "$(dirname "$0")/.."
SHOTS=test-output/e2e
MEDIA=docs/media

npm run -s build
npm run -s compile-tests
E2E_SKIP_BUILD=1 E2E_ONLY_UI=1 \
  E2E_UI_TESTS="out/test/e2e/ui.test.js out/test/e2e/ui-approvals.test.js out/test/e2e/ui-worktrees.test.js out/test/e2e/ui-propose.test.js" \
  bash scripts/e2e.sh

# copy <glob in test-output/e2e> <name in docs/media>: the shot's step number changes when a test
# gains a step, so it is found by the name the test gives it (wb.shot in test/e2e/*.test.ts).
copy() {
  local matches=()
  for f in "$SHOTS"/$1; do [ -f "$f" ] && matches+=("$f"); done
  if [ "${#matches[@]}" -ne 1 ]; then
    echo "readme-shots: expected one $SHOTS/$1, found ${#matches[@]}" >&2
    exit 1
  fi
  cp "${matches[0]}" "$MEDIA/$2"
  echo "$MEDIA/$2 ← ${matches[0]} ($(stat -c %s "$MEDIA/$2") bytes)"
}
mkdir -p "$MEDIA"
copy '[0-9][0-9]-tree.png' workspaces-view.png          # test/e2e/ui.test.ts: a container, its shell, what it can reach
copy 'approvals-[0-9][0-9]-question-one.png' agent-question.png # test/e2e/ui-approvals.test.ts: Claude Code asks, Allow/Deny
copy 'worktrees-[0-9][0-9]-new-worktree-agent.png' agent-worktree.png # test/e2e/ui-worktrees.test.ts: Worktrees view, compare
copy 'propose-[0-9][0-9]-posture-row.png' posture.png # test/e2e/ui-propose.test.ts: Can reach on this host, protected paths
