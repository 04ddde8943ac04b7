/**
 * UI tests in a real VS Code (code-server) through Chromium: the palette, the terminal, the
 * tree and the status bar, against the real Docker engine (see ./workbench.ts for how they run).
 * Every test saves a screenshot under test-output/e2e/.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { LONG, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

describe('Toolbox in VS Code', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite();
  const shot = (name: string) => wb.shot(name);
  const scenario = (name: string, body: () => Promise<void>) => async () => wb.scenario(name, body)();
  const runCommand = (title: string) => wb.runCommand(title);
  const terminalText = () => wb.terminalText();
  const ask = (command: string, pattern: RegExp) => wb.ask(command, pattern);
  const pressInTerminal = (key: string, until: RegExp) => wb.pressInTerminal(key, until);
  const openToolboxView = () => wb.openToolboxView();

  /** pid 1 of the terminal's PID namespace, as one line. */
  const pid1 = () => ask(`echo "PID1=[$(tr '\\0' ' ' </proc/1/cmdline)]"`, /PID1=\[([^$\]]*)\]/);

  const statusItem = () => page.locator('.statusbar-item', { hasText: 'drifted' });

  it(
    'shows the welcome view while the folder has no container',
    scenario('welcome', async () => {
      await page.getByText('No toolbox containers yet.').waitFor({ timeout: 60_000 });
      await shot('welcome');
    }),
  );

  it(
    'lists Open Toolbox Shell first when its own title is typed in the palette',
    scenario('palette-rank', async () => {
      const ranked = await wb.paletteLabels('Open Toolbox Shell', 'palette-rank');
      assert.equal(ranked[0], 'Toolbox: Open Toolbox Shell', `the palette lists: ${ranked.join(' | ')}`);
      assert.ok(ranked.includes('Toolbox: Open Toolbox Shell by Name…'), `the named-shell command is listed too: ${ranked.join(' | ')}`);
    }),
  );

  it(
    'opens a shell from the palette whose pid 1 is the peer anchor',
    { timeout: LONG },
    scenario('shell', async () => {
      await runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      const answer = await ask('echo "ANSWER=$((6*7))"', /ANSWER=(\d+)/);
      assert.equal(answer, '42');
      const init = await pid1();
      assert.match(init, /sleep infinity/, `pid 1 should be the anchor's sleep, got "${init}"`);
      await shot('shell-peer-on');
    }),
  );

  it(
    'lists the container, the anchor and the socket volume in the tree',
    scenario('tree', async () => {
      await openToolboxView();
      const tree = page.locator('.pane-body');
      const container = tree.getByText(new RegExp(`^${prefix}-ws-ui-[0-9a-f]{8}$`)).first();
      await container.waitFor({ timeout: 30_000 });
      await tree.getByText(`${prefix}-peer-anchor`, { exact: true }).first().waitFor({ timeout: 30_000 });
      await tree.getByText(`${prefix}-cc-socks`, { exact: true }).waitFor({ timeout: 30_000 });
      await shot('tree');
    }),
  );

  it(
    'warns in the status bar when the setting no longer matches the running container, and fixes it',
    { timeout: LONG },
    scenario('drift', async () => {
      await runCommand('Toolbox: Toggle Peer Messaging for This Folder…');
      // It asks where to write: this folder's .vscode/settings.json is the first choice.
      const where = page.locator('.quick-input-list .monaco-list-row', { hasText: 'settings.json' });
      await where.waitFor({ timeout: 15_000 });
      await where.click();
      const item = statusItem();
      await item.waitFor({ timeout: 30_000 });
      const text = (await item.innerText()) as string;
      assert.match(text, new RegExp(`${prefix}-ws-ui-[0-9a-f]{8}`), `the warning names the container: "${text}"`);
      await shot('drift-warning');

      await item.click();
      const fix = page.locator('.notification-toast .monaco-button', { hasText: /^Restart$/ });
      await fix.waitFor({ timeout: 15_000 });
      await shot('drift-actions');
      await fix.click();
      await item.waitFor({ state: 'detached', timeout: LONG });
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      const init = await pid1();
      assert.doesNotMatch(init, /sleep infinity/, `with peer messaging off pid 1 is the container's own init, got "${init}"`);
      await shot('drift-fixed');
    }),
  );

  it(
    'keeps a shell running across window reloads and brings its terminal back without a command; closing it ends it',
    { timeout: LONG },
    scenario('sessions', async () => {
      // Start from no terminals, so this shell is the container's only session.
      await runCommand('Terminal: Kill All Terminals');
      await runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      const before = await ask(
        'i=0; while :; do i=$((i+1)); echo "tick $i pid $$ in $(hostname)"; sleep 0.5; done',
        /tick ([3-9]|\d\d+) pid (\d+) in (\S+)/,
      );
      const text = await terminalText();
      const [, pid, host] = /tick \d+ pid (\d+) in (\S+)/.exec(text) ?? [];
      assert.ok(pid && host, `the counter shows its pid: ${text.slice(-300)}`);
      const n = Number(before);
      // The tree lists the shell under its container.
      const row = page.locator('.monaco-list-row', { hasText: `${prefix}-ws-ui-` }).first();
      await row.waitFor({ timeout: 30_000 });
      for (const end = Date.now() + 30_000; Date.now() < end && (await row.getAttribute('aria-expanded')) !== 'true';) {
        if ((await row.getAttribute('aria-expanded')) === 'false') await row.click();
        await page.waitForTimeout(500);
      }
      // The held shell, shown with its session's state (ui/views/treeItems/ agentRowItem).
      await page
        .locator('.pane-body .monaco-list-row', { hasText: /^shell\s*(idle|working|needs you) · / })
        .first()
        .waitFor({ timeout: 30_000 });
      await shot('sessions-shell-in-tree');

      /** Reloads the window and selects our terminal, which must come back without a command. */
      const reload = async () => {
        await runCommand('Developer: Reload Window');
        await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
        // VS Code may also restore a host terminal of its own into the panel: pick ours by its tab.
        // Alone, ours has no tab list, only the panel's single-terminal title.
        const tab = page.locator('.terminal-tabs-entry', { hasText: 'ws-ui' }).first();
        const single = page.locator('.single-terminal-tab', { hasText: 'ws-ui' }).first();
        await tab.or(single).first().waitFor({ timeout: 60_000 });
        if (await tab.isVisible()) await tab.click();
        await page.locator('.terminal-wrapper.active .xterm-rows').filter({ visible: true }).first().waitFor({ timeout: 60_000 });
      };

      await reload();
      let later = 0;
      for (const end = Date.now() + 30_000; Date.now() < end && later <= n;) {
        const m = [...(await terminalText()).matchAll(new RegExp(`tick (\\d+) pid ${pid} in ${host}`, 'g'))].pop();
        later = m ? Number(m[1]) : 0;
        if (later <= n) await page.waitForTimeout(250);
      }
      assert.ok(later > n, `after the reload the same shell (pid ${pid}) counts on: ${n} → ${later}`);
      await shot('sessions-reattached');

      // A full-screen program is drawn again after a reload, not left blank or garbled.
      // The prompt again once the counter is stopped (a key the workbench drops is pressed again).
      await pressInTerminal('Control+C', /[#%$]\s*$/);
      await ask('top -d 1', /load average/);
      await reload();
      let screen = '';
      for (const end = Date.now() + 20_000; Date.now() < end && !/load average[\s\S]*PID/.test(screen);) {
        screen = await terminalText();
        if (!/load average[\s\S]*PID/.test(screen)) await page.waitForTimeout(250);
      }
      assert.match(screen, /load average[\s\S]*PID/, `top is redrawn after the reload: ${screen.slice(0, 300)}`);
      await shot('sessions-fullscreen-redrawn');

      // Issue 26 item 2: a program that asks the terminal (background colour, device attributes)
      // and reads the answer. Its queries are in the history a reattach replays; the replay must
      // not make the terminal answer again into the shell's input.
      await pressInTerminal('q', /[#%$]\s*$/);
      const answered = await ask(
        `printf '\\033]11;?\\007\\033[c'; read -r -s -t 3 -d c ans; echo "ANSWER_READ=\${#ans}"`,
        /ANSWER_READ=(\d+)/,
      );
      assert.ok(Number(answered) > 0, `the terminal answered the program: ${answered}`);
      await reload();
      const clean = await ask('echo "AFTER=$((2+3))"', /AFTER=(5)/);
      assert.equal(clean, '5');
      const afterReload = await terminalText();
      assert.doesNotMatch(afterReload, /rgb:|command not found|\d;\d+c/, `no answer was typed into the shell: ${afterReload.slice(-400)}`);
      // Issue 26 item 1: the reattached shell reaches the bridge (code exited 69 before).
      const codeExit = await ask('echo hi > after-reload.txt; code after-reload.txt; echo "CODE_EXIT=$?"', /CODE_EXIT=(\d+)/);
      assert.equal(codeExit, '0', 'code works in a reattached shell');
      await page.locator('.tabs-container .tab', { hasText: 'after-reload.txt' }).first().waitFor({ timeout: 30_000 });
      await shot('sessions-reattached-clean');

      // Closing the terminal by hand ends the shell, and with its last shell the container goes.
      await runCommand('Terminal: Kill the Active Terminal Instance');
      const gone = async () => {
        const { docker } = await import('../support/docker');
        const list = await docker().listContainers({ all: true, filters: { name: [prefix] } });
        return !list.some((c) => c.Names.some((nm) => nm.includes(`${prefix}-ws-ui-`)));
      };
      let removed = false;
      for (const end = Date.now() + 60_000; Date.now() < end && !removed;) {
        removed = await gone();
        if (!removed) await page.waitForTimeout(500);
      }
      assert.ok(removed, 'the container was removed with its last shell');
      await shot('sessions-ended');
    }),
  );

  it(
    'asks before a container gets git credentials for a host that is not a remote of the folder; Deny refuses, Always is listed and revoked',
    { timeout: LONG },
    scenario('credential-consent', async () => {
      // The previous test ended the container with its last shell: open one, as the only terminal
      // (a host terminal VS Code restored after the reload would shadow it).
      await runCommand('Terminal: Kill All Terminals');
      await runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').first().waitFor({ timeout: LONG });
      // Toasts (a forwarded port, the previous test's) would catch the clicks on the terminal.
      await runCommand('Notifications: Clear All Notifications');
      // A round trip first, so the shell's line editor is up before the long command is typed.
      assert.equal(await ask('echo "READY=$((40+2))"', /READY=(\d+)/), '42');
      const dialog = page.locator('.monaco-dialog-box');
      // The answer to `ask` only appears once the prompt below is answered.
      const denied = ask(
        "printf 'protocol=https\\nhost=unknown.example\\n' | git-credential-toolbox get 2>/tmp/cred.err; r=$?; cat /tmp/cred.err; " +
          'echo "CRED_DONE=$r/$(grep -c \'refused git credentials for unknown.example\' /tmp/cred.err)"',
        /CRED_DONE=(\d+\/\d+)/,
      );
      await dialog.waitFor({ timeout: 30_000 });
      const text = (await dialog.innerText()) as string;
      assert.match(text, new RegExp(`The container ${prefix}-ws-ui-[0-9a-f]{8} asks for your git credentials for host unknown\\.example`));
      assert.match(text, /Allow once/);
      assert.match(text, /Always for this folder/);
      // Deny is the default button: an Enter meant for the terminal refuses.
      assert.equal(((await dialog.locator('.dialog-buttons .monaco-button:not(.secondary)').first().innerText()) as string).trim(), 'Deny');
      await shot('credential-consent');
      await dialog.getByRole('button', { name: 'Deny' }).click();
      assert.equal(await denied, '0/1', 'the shim exits 0 and says the host refused');
      await shot('credential-denied');

      const granted = ask(
        'printf \'protocol=https\\nhost=granted.example\\n\' | git-credential-toolbox get >/dev/null 2>&1; echo "CRED_GRANTED=$?"',
        /CRED_GRANTED=(\d+)/,
      );
      await dialog.waitFor({ timeout: 30_000 });
      await dialog.getByRole('button', { name: 'Always for this folder' }).click();
      assert.equal(await granted, '0');
      await runCommand('Toolbox: Manage Git Credential Grants…');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'granted.example' });
      await row.waitFor({ timeout: 15_000 });
      await shot('credential-grants');
      await row.click();
      await page.keyboard.press('Enter');
      await page.locator('.notification-toast', { hasText: 'revoked granted.example' }).waitFor({ timeout: 15_000 });
      await shot('credential-revoked');
    }),
  );

  it(
    'shows what the container can reach on this host (Docker scoped to it, not the host socket), and turns Docker off for the folder',
    { timeout: LONG },
    scenario('posture', async () => {
      // A shell of this folder's container, whether or not the tests before left one running.
      await runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').first().waitFor({ timeout: LONG });
      await openToolboxView();
      const rows = page.locator('.pane-body .monaco-list-row');
      const row = (text: string | RegExp) => rows.filter({ hasText: text }).first();
      // Issue 11, finding 10: under the container, "Can reach on this host" (collapsed) lists
      // what the container can use on this host.
      const containerRow = row(new RegExp(`^${prefix}-ws-ui-[0-9a-f]{8}`));
      await containerRow.waitFor({ timeout: 30_000 });
      if ((await containerRow.getAttribute('aria-expanded')) !== 'true') await containerRow.click();
      const group = row('Can reach on this host');
      await group.waitFor({ timeout: 30_000 });
      const count = async () => Number(/(\d+) things? beyond its workspace/.exec((await group.innerText()) as string)?.[1]);
      const before = await count();
      assert.ok(before >= 2, `at least Docker and ~/.ssh: ${(await group.innerText()) as string}`);
      if ((await group.getAttribute('aria-expanded')) !== 'true') await group.click();
      // Issue 27: the container's own Docker endpoint, not the host's socket (root on this host).
      const socket = row(/^Docker\s*its own containers only/);
      await socket.waitFor({ timeout: 15_000 });
      await row('Your SSH keys').waitFor({ timeout: 15_000 });
      assert.match((await socket.innerText()) as string, /binds inside this folder/);
      assert.equal(await row('Docker socket').count(), 0, 'no host socket by default');
      // The view is redrawn as the engine's events come in, which can drop a hover on its way.
      const tip = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: 'raw-socket' }).first();
      await wb.hoverUntilShown(socket, tip, "the Docker row's tooltip");
      await shot('posture');

      // Kept in the User settings, where the container cannot undo it; the project file, which
      // the container can write, is left as it was (docs/decisions/0041).
      const file = join(process.env.E2E_FOLDER!, '.toolbox.yaml');
      const projectText = readFileSync(file, 'utf8');
      await socket.locator('.action-label[aria-label="Turn Off for This Folder"]').click();
      const recreate = page.locator('.notification-toast .monaco-button', { hasText: /^Recreate Now$/ });
      await recreate.waitFor({ timeout: 30_000 });
      assert.equal(readFileSync(file, 'utf8'), projectText, 'the project file is not edited');
      // VS Code writes its User settings file after the update resolves: read until it is there.
      // toolbox.turnedOffForFolder is machine-scoped: where the extension host runs remotely (as in
      // code-server) VS Code keeps it in the Machine settings, else in the User settings.
      const settingsFiles = ['Machine', 'User'].map((d) => join(process.env.E2E_USER_DATA!, d, 'settings.json'));
      const settingsFile = () =>
        settingsFiles.find((f) => existsSync(f) && readFileSync(f, 'utf8').includes('toolbox.turnedOffForFolder')) ?? settingsFiles[1]!;
      const turnedOff = () =>
        (JSON.parse(readFileSync(settingsFile(), 'utf8')) as Record<string, Record<string, unknown> | undefined>)[
          'toolbox.turnedOffForFolder'
        ]?.[resolve(process.env.E2E_FOLDER!)];
      for (const end = Date.now() + 15_000; turnedOff() === undefined && Date.now() < end;) await page.waitForTimeout(250);
      assert.deepEqual(turnedOff(), { mounts: ['docker-sock'] }, readFileSync(settingsFile(), 'utf8'));
      await shot('posture-turned-off');

      // Recreate: the new container has no Docker socket, and the tree no longer lists it.
      await recreate.click();
      await socket.waitFor({ state: 'detached', timeout: LONG });
      await page.locator('.terminal-wrapper.active .xterm').first().waitFor({ timeout: LONG });
      const sock = await ask(
        'echo "SOCK=$(test -S /var/run/docker.sock -o -e /run/toolbox-docker -o -n "$DOCKER_HOST" && echo present || echo absent)"',
        /SOCK=(present|absent)/,
      );
      assert.equal(sock, 'absent');
      await containerRow.waitFor({ timeout: 30_000 });
      if ((await containerRow.getAttribute('aria-expanded')) !== 'true') await containerRow.click();
      if ((await group.getAttribute('aria-expanded')) !== 'true') await group.click();
      await row('Your SSH keys').waitFor({ timeout: 30_000 });
      assert.equal(await count(), before - 1, 'one thing fewer: Docker');
      await shot('posture-recreated');
    }),
  );

  it(
    'Stop All names what it will stop, and Enter (the default button) keeps it running',
    { timeout: LONG },
    scenario('stop-all', async () => {
      const running = async () => {
        const { docker } = await import('../support/docker');
        const list = await docker().listContainers({ filters: { name: [prefix] } });
        return list.flatMap((c) => c.Names.map((n) => n.slice(1))).filter((n) => n.startsWith(`${prefix}-ws-ui-`));
      };
      const before = await running();
      assert.equal(before.length, 1, `one shell container runs: ${before.join(', ')}`);
      await runCommand('Toolbox: Stop Every Container…');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      const text = (await dialog.innerText()) as string;
      assert.match(text, /Stop \d+ toolbox containers?\?/);
      assert.ok(text.includes(before[0]!), `the dialog names ${before[0]}: ${text}`);
      await shot('stop-all-confirm');
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached', timeout: 15_000 });
      await page.waitForTimeout(3000);
      assert.deepEqual(await running(), before, 'Enter stopped nothing');
    }),
  );
});
