/**
 * Issue 28 in a real VS Code (code-server through Chromium) against the real Docker engine: an
 * agent's questions answered from the editor (docs/decisions/0050-approvals-over-the-bridge.md).
 * A stand-in agent (test/fixtures/stand-in-agent.py, speaking Claude Code's hook protocol) runs in
 * a Toolbox shell and asks, one after the other, to run five commands through the hook the runtime
 * image installs. Each question shows as a notification (`Claude Code in <container> wants to run:
 * …` with Allow, Deny, Allow for This Session and Open Terminal), a status bar count and a row
 * under "Agent questions" in the Workspaces view. Answered: Allow from the notification, Deny from
 * the row's inline action, `y` typed in the terminal (the question leaves the inbox), Allow after a
 * window reload (the hook asks the new window), and nothing after the window's folder is closed
 * (the agent falls back to its own prompt). The agent's output is read from agent.log in the
 * folder (it outlives the reload). Folder: ws-approvals. Screenshots: test-output/e2e/approvals-NN-*.png.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { repoRoot } from '../support/image';
import { LONG, folder, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

const STAND_IN = join(repoRoot(), 'test', 'fixtures', 'stand-in-agent.py');
/** The third command keeps the agent busy a while after the terminal's answer, so the empty inbox can be seen. */
const THIRD = 'echo three; sleep 4';
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('agent questions answered in VS Code (issue 28)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('approvals-', {
    beforeOpen: async () => {
      copyFileSync(STAND_IN, join(folder, 'agent.py'));
    },
  });
  const shot = (name: string) => wb.shot(name);
  const scenario = (name: string, body: () => Promise<void>) => async () => wb.scenario(name, body)();
  const pane = (title: string) => page.locator('.pane', { has: page.locator('.pane-header', { hasText: title }) });
  const row = (text: string | RegExp) => pane('Workspaces').locator('.monaco-list-row', { hasText: text }).first();
  const section = () => row(/^Agent questions/);
  const questionRow = (command: string) =>
    pane('Workspaces')
      .locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^run: ${escape(command)}$`) }) })
      .first();
  const toast = (command: string) => page.locator('.notification-toast', { hasText: `wants to run: ${command}` }).first();
  // ui/views/statusBars.ts ApprovalStatusBar: `<publisher>.<name>.toolbox.approvals`.
  const countItem = () => page.locator('.part.statusbar .statusbar-item[id$=".toolbox.approvals"]');
  const containerRe = new RegExp(`^${prefix}-${basename(folder)}-[0-9a-f]{8}$`);
  const log = join(folder, 'agent.log');
  const readLog = () => {
    try {
      return readFileSync(log, 'utf8');
    } catch {
      return '';
    }
  };

  /** What agent.log says once it matches `pattern` (the agent writes it through tee, on the host's folder). */
  const waitForLog = async (pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> => {
    for (const end = Date.now() + timeoutMs; ;) {
      const m = pattern.exec(readLog());
      if (m) return m;
      if (Date.now() > end) throw new Error(`agent.log never showed ${pattern}; it has:\n${readLog()}`);
      await page.waitForTimeout(250);
    }
  };

  /** Polls `read` until it matches `pattern` (the terminal is redrawn as it goes). */
  const waitForText = async (read: () => Promise<string>, pattern: RegExp, what: string, timeoutMs = 30_000) => {
    for (const end = Date.now() + timeoutMs; ;) {
      const text = await read();
      if (pattern.test(text)) return text;
      if (Date.now() > end) throw new Error(`${what} never showed ${pattern}; it shows:\n${text}`);
      await page.waitForTimeout(250);
    }
  };

  /** The notification of one question: its exact words and its four buttons; the container it names. */
  const checkNotification = async (command: string): Promise<string> => {
    const t = toast(command);
    await t.waitFor({ timeout: 60_000 });
    const message = ((await t.locator('.notification-list-item-message').innerText()) as string).trim();
    const m = /^Claude Code in (\S+) wants to run: (.*)$/.exec(message);
    assert.ok(m, `the notification says who asks what: "${message}"`);
    assert.match(m[1]!, containerRe, message);
    assert.equal(m[2], command, 'the command, plain');
    const buttons = ((await t.locator('.monaco-button').allInnerTexts()) as string[]).map((b) => b.trim()).filter(Boolean);
    assert.deepEqual(buttons, ['Allow', 'Deny', 'Allow for This Session', 'Open Terminal'], `the buttons: ${buttons.join(' | ')}`);
    return m[1]!;
  };

  /** The status bar count and the Workspaces view's section with the question's row. */
  const checkInbox = async (command: string, container: string) => {
    const item = countItem();
    await item.waitFor({ timeout: 30_000 });
    assert.equal(await item.getAttribute('aria-label'), '1 agent question waiting');
    assert.equal(((await item.innerText()) as string).trim(), '1');
    await wb.openToolboxView();
    await section().waitFor({ timeout: 30_000 });
    assert.match((await section().innerText()) as string, /^Agent questions\s*1 waiting$/);
    const r = questionRow(command);
    await r.waitFor({ timeout: 30_000 });
    const description = ((await r.locator('.label-description').innerText()) as string).trim();
    assert.equal(description, `${container} · Claude Code · just now`);
  };

  /** The inbox is empty: no section, no count. */
  const checkEmptyInbox = async () => {
    await section().waitFor({ state: 'detached', timeout: 30_000 });
    await countItem().waitFor({ state: 'hidden', timeout: 30_000 });
  };

  let container = '';

  /**
   * The closed window leaves its container (and the agent, waiting at its own prompt, in a held
   * session): removed here, and every process of ours with it (scripts/e2e.sh removes the rest of
   * the test prefix: the peer anchor and its volume, shared by the UI test files). Returns what is left.
   */
  const removeMine = async (): Promise<string[]> => {
    const { docker } = await import('../support/docker');
    const d = docker();
    const list = async () =>
      (await d.listContainers({ all: true, filters: { name: [`${prefix}-${basename(folder)}-`] } })).filter((c) =>
        c.Names.some((n) => containerRe.test(n.replace(/^\//, ''))),
      );
    await Promise.all(
      (await list()).map((c) =>
        d
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined),
      ),
    );
    return (await list()).flatMap((c) => c.Names);
  };

  /** The command lines of the processes in our container. */
  const processes = async (): Promise<string[]> => {
    const { docker } = await import('../support/docker');
    const { execIn } = await import('../support/exec');
    const r = await execIn(docker().getContainer(container), [
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline" 2>/dev/null; echo; done',
    ]);
    return r.stdout.split('\n').filter((l) => l.trim() !== '');
  };

  after(async () => {
    await removeMine();
  });

  it(
    'Allow from the notification, Deny from the row, y in the terminal, Allow after a reload, and no answer after the window closes',
    { timeout: LONG + 300_000 },
    scenario('questions', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      // stdin stays the terminal (the agent's own prompt reads it); its output also goes to the folder.
      await wb.ask(
        `python3 agent.py 'echo one' 'echo two' '${THIRD}' 'echo four' 'echo five' 2>&1 | tee agent.log`,
        /Allow Bash\(echo one\)\? \[y\/n\]/,
      );

      // 1. Allow from the notification.
      container = await checkNotification('echo one');
      await checkInbox('echo one', container);
      await shot('question-one');
      await toast('echo one')
        .locator('.monaco-button', { hasText: /^Allow$/ })
        .click();
      await waitForLog(/RAN echo one -> 0/);
      await waitForText(() => wb.terminalText(), /RAN echo one -> 0/, 'the terminal');

      // 2. Deny from the row's inline action: the agent gets the reason.
      await checkNotification('echo two');
      await checkInbox('echo two', container);
      const two = questionRow('echo two');
      await two.hover();
      await shot('question-two-row-actions');
      await two.locator('.action-label[aria-label="Deny"]').click();
      const [denied] = await waitForLog(/DENIED echo two: .*/);
      assert.equal(denied.trim(), 'DENIED echo two: The user denied this in VS Code.');
      await waitForText(() => wb.terminalText(), /DENIED echo two: The user denied this in VS Code\./, 'the terminal');
      // Its notification is still up; a click on it now changes nothing and says so.
      await toast('echo two')
        .locator('.monaco-button', { hasText: /^Allow$/ })
        .click();
      await page
        .locator('.part.statusbar', { hasText: 'That question was already answered: denied in VS Code' })
        .waitFor({ timeout: 10_000 });
      assert.doesNotMatch(readLog(), /RAN echo two/);

      // 3. Answered in the agent's own prompt: the question leaves the inbox (the command then
      // runs for 4 s, before the agent asks its next question).
      await checkNotification(THIRD);
      await checkInbox(THIRD, container);
      await waitForText(() => wb.terminalText(), /Allow Bash\(echo three; sleep 4\)\? \[y\/n\] *$/, 'the terminal');
      await page
        .locator('.terminal-wrapper.active .xterm')
        .filter({ visible: true })
        .first()
        .click({ position: { x: 12, y: 8 } });
      await page.keyboard.type('y');
      await page.keyboard.press('Enter');
      await checkEmptyInbox();
      await shot('three-answered-in-terminal');
      await waitForLog(/TERMINAL y echo three; sleep 4 -> 0/);
      await waitForText(() => wb.terminalText(), /TERMINAL y echo three; sleep 4 -> 0/, 'the terminal');
      // Its notification stays up until VS Code hides it (a notification cannot be taken back); a
      // click on it would only say it was answered already, as above.

      // 4. A reload while the fourth waits: the hook asks the new window.
      await checkNotification('echo four');
      await checkInbox('echo four', container);
      await wb.reloadToTerminal();
      await checkNotification('echo four');
      await checkInbox('echo four', container);
      // The row's tooltip says it was asked again. The view is redrawn as the new window refreshes,
      // which can drop a hover on its way: the pointer leaves and comes back until it shows.
      const four = questionRow('echo four');
      const hover = page.locator('.workbench-hover', { hasText: 'Command: echo four' }).first();
      await wb.hoverUntilShown(four, hover, "the row's tooltip");
      assert.match((await hover.innerText()) as string, /\(asked again after the window reloaded\)/);
      await shot('four-after-reload');
      // Allow from the row's inline action (the notification may have been hidden by now).
      await four.locator('.action-label[aria-label="Allow"]').click();
      await waitForLog(/RAN echo four -> 0/);
      await waitForText(() => wb.terminalText(), /RAN echo four -> 0/, 'the reattached terminal');

      // 5. The window's folder closed while the fifth waits: after the hook's reconnect window the
      // agent's own prompt is in charge.
      await page.mouse.move(700, 300);
      await checkNotification('echo five');
      await checkInbox('echo five', container);
      await shot('five-before-close');
      const closedAt = Date.now();
      // workbench.action.closeFolder (File > Close Folder): in the palette "Workspaces: Close Workspace".
      // In code-server it opens an empty window in this page, and this window's extension host ends.
      await wb.runCommand('Workspaces: Close Workspace');
      await page.waitForURL((u: URL) => !u.searchParams.has('folder'), { timeout: 60_000 });
      await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      await waitForLog(/NO DECISION FROM HOOKS/, 45_000);
      const waited = Math.round((Date.now() - closedAt) / 1000);
      console.log(`  the agent fell back to its own prompt ${waited} s after the folder was closed`);
      const fifth = readLog().slice(readLog().indexOf('ASK echo five'));
      assert.doesNotMatch(fifth, /RAN echo five|DENIED echo five/, fifth);
      await shot('five-agent-own-prompt');
      // The agent still waits at its own prompt, in the container the closed window left.
      const running = await processes();
      assert.ok(
        running.some((l) => /^python3 agent\.py /.test(l)),
        `the agent still runs:\n${running.join('\n')}`,
      );
      assert.deepEqual(await removeMine(), [], 'our container is gone, and the agent with it');
    }),
  );
});
