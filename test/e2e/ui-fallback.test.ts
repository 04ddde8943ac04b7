/**
 * Issue 31 item 4 in a real VS Code (code-server through Chromium) against the real engine: the
 * paths Docker Desktop, OrbStack, Colima and WSL users take, forced here
 * (docs/decisions/0058-forced-fallback-transports.md). toolbox.transport.bridge is `tcp` and
 * toolbox.transport.sessions `exec` in the settings before the window opens; the test relays
 * host.docker.internal to the host's loopback, as those engines do (test/support/desktopLoopback.ts).
 * Through those paths: a shell held through an exec with no bridge socket in its container,
 * `code` and `xdg-open`, a git credential question, an agent's question answered from the
 * notification and a session that needs you, then a window reload that brings the shell back
 * through an exec, where `code` reaches the new window.
 *
 * Folder: ws-fallback. Screenshots: test-output/e2e/fallback-NN-*.png.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BRIDGE_FILES } from '../../extension/src/contract/shims';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { SETTINGS } from '../../extension/src/contract/manifest';
import { workspaceStateDir } from '../../extension/src/bridge/state';
import { docker } from '../support/docker';
import { desktopLoopback, type DesktopLoopback } from '../support/desktopLoopback';
import { execIn } from '../support/exec';
import { repoRoot } from '../support/image';
import { LONG, folder, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

/**
 * The transport settings are machine-scoped: where the extension host runs remotely (as in
 * code-server) VS Code reads them from the Machine settings, else from the User settings; the
 * test sets both and puts both back after (as test/e2e/ui-egress.test.ts does).
 */
const userData = process.env.E2E_USER_DATA ?? '';
const settingsFiles = ['Machine', 'User'].map((d) => join(userData, d, 'settings.json'));
const originals = userData ? settingsFiles.map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : undefined)) : [];

function withForcedTransports(file: string): void {
  let current: Record<string, unknown>;
  try {
    current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    current = {};
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ ...current, [SETTINGS.bridgeTransport]: 'tcp', [SETTINGS.sessionsTransport]: 'exec' }, null, 2));
}

/** What Claude Code does, minus the model (as in test/e2e/ui-agents.test.ts). */
const NEEDS_YOU = [
  '#!/bin/sh',
  "printf '\\033]0;\\342\\234\\263 Claude Code\\007'",
  "echo 'stand-in agent: working'",
  'sleep 5',
  "printf '\\033]9;Claude needs your permission to use Bash\\007'",
  'read answer',
  'echo "stand-in agent: got $answer"',
  '',
].join('\n');

const STAND_IN = join(repoRoot(), 'test', 'fixtures', 'stand-in-agent.py');

describe('the forced fallbacks: bridge over TCP, sessions through an exec (issue 31)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('fallback-', {
    beforeOpen: async () => {
      for (const file of settingsFiles) withForcedTransports(file);
      copyFileSync(STAND_IN, join(folder, 'agent.py'));
      writeFileSync(join(folder, 'needs-you.sh'), NEEDS_YOU, { mode: 0o755 });
    },
  });
  let relay: DesktopLoopback | undefined;
  let containerId = '';
  const containerRe = new RegExp(`^${prefix}-${basename(folder)}-[0-9a-f]{8}$`);
  const treeRow = (text: RegExp) => page.locator('.pane-body .monaco-list-row').filter({ hasText: text }).first();

  /** The `toolbox-session connect` processes in the container: one per exec-transport connection. */
  const connectExecs = async (): Promise<number> => {
    const r = await execIn(docker().getContainer(containerId), [
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline" 2>/dev/null; echo; done | grep -c "toolbox-session connect" || true',
    ]);
    return Number(r.stdout.trim());
  };

  after(async () => {
    await relay?.close();
    settingsFiles.forEach((file, i) => {
      const original = originals[i];
      if (original === undefined) writeFileSync(file, '{}');
      else writeFileSync(file, original);
    });
  });

  it('opens a shell held through an exec, in a container that has no bridge socket', { timeout: LONG }, async () =>
    wb.scenario('shell', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      assert.equal(await wb.ask('echo "READY=$((40+2))"', /READY=(\d+)/), '42');
      const [mine] = (await docker().listContainers({ filters: { name: [`${prefix}-${basename(folder)}-`] } })).filter((c) =>
        c.Names.some((n) => containerRe.test(n.replace(/^\//, ''))),
      );
      assert.ok(mine, 'the folder has its container');
      containerId = mine.Id;
      const name = mine.Names[0]!.replace(/^\//, '');
      assert.equal(await wb.ask(`test -S ${CONTAINER.bridgeRunDir}/${BRIDGE_FILES.socket}; echo "SOCK=$?"`, /SOCK=(\d+)/), '1');
      assert.ok((await connectExecs()) >= 1, 'the terminal runs through toolbox-session connect');
      // What Docker Desktop does for host.docker.internal, from here on.
      const port = Number(readFileSync(join(workspaceStateDir(process.env.HOME ?? '', name), BRIDGE_FILES.port), 'utf8').trim());
      relay = await desktopLoopback(docker().getContainer(containerId), port);
      await wb.shot('shell-through-exec');
    })(),
  );

  it('runs `code` and `xdg-open` over TCP', { timeout: 180_000 }, async () =>
    wb.scenario('code-xdg-open', async () => {
      assert.equal(await wb.ask('code brand-new.txt; echo "CODE_EXIT=$?"', /CODE_EXIT=(\d+)/), '0');
      await page.locator('.tabs-container .tab', { hasText: 'brand-new.txt' }).first().waitFor({ timeout: 30_000 });
      await wb.ask('xdg-open https://example.com/fallback; echo "OPEN_EXIT=$?"', /(Waiting for confirmation in VS Code…)/);
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      await wb.shot('xdg-open-over-tcp');
      await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
      assert.match(await wb.waitForTerminal(/OPEN_EXIT=\d+/), /OPEN_EXIT=77/);
    })(),
  );

  it('asks before git credentials go out over TCP', { timeout: 180_000 }, async () =>
    wb.scenario('credential', async () => {
      await wb.runCommand('Notifications: Clear All Notifications');
      const dialog = page.locator('.monaco-dialog-box');
      const denied = wb.ask(
        "printf 'protocol=https\\nhost=unknown.example\\n' | git-credential-toolbox get 2>/tmp/cred.err; r=$?; " +
          'echo "CRED_DONE=$r/$(grep -c \'refused git credentials for unknown.example\' /tmp/cred.err)"',
        /CRED_DONE=(\d+\/\d+)/,
      );
      await dialog.waitFor({ timeout: 30_000 });
      assert.match((await dialog.innerText()) as string, /asks for your git credentials for host unknown\.example/);
      await wb.shot('credential-over-tcp');
      await dialog.getByRole('button', { name: 'Deny' }).click();
      assert.equal(await denied, '0/1', 'the shim exits 0 and says the host refused');
    })(),
  );

  it("answers an agent's question from the notification, and shows a session that needs you", { timeout: 240_000 }, async () =>
    wb.scenario('agent', async () => {
      await wb.ask("python3 agent.py 'echo one' 2>&1 | tee agent.log", /(Allow Bash\(echo one\)\? \[y\/n\])/);
      const toast = page.locator('.notification-toast', { hasText: 'wants to run: echo one' }).first();
      await toast.waitFor({ timeout: 60_000 });
      assert.match(
        ((await toast.locator('.notification-list-item-message').innerText()) as string).trim(),
        /^Claude Code in \S+ wants to run: echo one/,
      );
      await wb.shot('agent-question-over-tcp');
      await toast.locator('.monaco-button', { hasText: /^Allow$/ }).click();
      await wb.waitForTerminal(/RAN echo one -> 0/);

      // The session's state comes from the terminal's stream, here through the exec: an agent that
      // names itself, works, then asks through OSC 9 while the user is in an editor.
      await wb.ask('sh ./needs-you.sh', /(stand-in agent: working)/);
      await treeRow(/claude.*working/).waitFor({ timeout: 15_000 });
      await wb.runCommand('File: New Untitled Text File');
      await page.keyboard.type('notes while the agent works');
      await page.locator('.notification-toast', { hasText: 'needs you' }).first().waitFor({ timeout: 30_000 });
      await treeRow(/claude.*needs you/).waitFor({ timeout: 10_000 });
      await wb.shot('agent-needs-you-over-exec');
    })(),
  );

  it('brings the shell back through an exec after a reload, and `code` reaches the new window', { timeout: LONG }, async () =>
    wb.scenario('reload', async () => {
      await wb.reloadToTerminal();
      // The held shell came back with what it showed before (the agent still waits for its answer).
      await wb.waitForTerminal(/stand-in agent: working/);
      assert.equal(await wb.ask('y', /stand-in agent: got (y)/), 'y');
      assert.equal(await wb.ask('code after-reload.txt; echo "CODE_AGAIN=$?"', /CODE_AGAIN=(\d+)/), '0');
      await page.locator('.tabs-container .tab', { hasText: 'after-reload.txt' }).first().waitFor({ timeout: 30_000 });
      assert.ok((await connectExecs()) >= 1, 'the reattached terminal runs through toolbox-session connect');
      await wb.shot('after-reload');
    })(),
  );

  it('Run Doctor names the paths this container takes', { timeout: 180_000 }, async () =>
    wb.scenario('doctor', async () => {
      await wb.runCommand('Toolbox: Run Doctor');
      await page
        .locator('.notification-toast', { hasText: /Doctor: \d+ passed/ })
        .first()
        .waitFor({ timeout: 120_000 });
      await page.locator('.tab.active', { hasText: 'Toolbox Doctor.txt' }).waitFor({ timeout: 30_000 });
      const lines = page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
      const report = ((await lines.innerText()) as string).replace(/\u00a0/g, ' ').replace(/\n {2,}/g, ' ');
      await wb.shot('doctor-paths');
      console.log(`--- the doctor's report with both paths forced ---\n${report}\n---`);
      const container = new RegExp(`${prefix}-${basename(folder)}-[0-9a-f]{8}`).exec(report)?.[0];
      assert.ok(container, report);
      assert.match(
        report,
        new RegExp(
          `\\[PASS\\] Transports of ${container} Bridge: TCP via host\\.docker\\.internal \\(the container was made with ${SETTINGS.bridgeTransport.replace(/\./g, '\\.')} set to tcp, so it has no bridge socket; host\\.docker\\.internal:\\d+ answers\\)`,
        ),
      );
      assert.match(report, /Sessions: exec \(forced by the User setting toolbox\.transport\.sessions\)/);
    })(),
  );
});
