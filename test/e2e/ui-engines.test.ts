/**
 * Issue 26, item 3 in a real VS Code: the same folder opened on Docker, then on Podman (the
 * toolbox.dockerHost setting), gives a container of the same name on each engine. The shell
 * opened on Podman must run in Podman's container, never attach to the Docker container's holder
 * (before decision 0043 it did: the run directory was keyed by the name alone), and after a
 * reload the shell comes back in the container it was opened in. Folder: ws-engines.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Docker from 'dockerode';
import { PODMAN_TEST_SOCKET, docker } from '../support/docker';
import { LONG, prefix, uiTestsSkip, type Workbench, workbenchForSuite } from './workbench';

/** The user settings file of this code-server (scripts/e2e.sh writes it). */
const settingsFile = join(process.env.E2E_USER_DATA ?? '', 'User', 'settings.json');
const original = process.env.E2E_USER_DATA ? readFileSync(settingsFile, 'utf8') : '';

/** The prefix's containers on an engine, by name. */
async function ours(engine: Docker): Promise<Map<string, string>> {
  const list = await engine.listContainers({ all: true, filters: { name: [prefix] } });
  return new Map(list.flatMap((c) => c.Names.map((n): [string, string] => [n.slice(1), c.Id])));
}

describe('The same folder on two engines (issue 26, item 3)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('engines-', {
    beforeOpen: async () => {
      await podman.ping();
    },
  });
  const d = docker();
  const podman = new Docker({ socketPath: PODMAN_TEST_SOCKET });
  /** The runtime image this test loaded into Podman (removed after), if it was not there before. */
  let loaded: string | undefined;

  after(async () => {
    if (process.env.E2E_USER_DATA) writeFileSync(settingsFile, original);
    // scripts/e2e.sh removes the prefix's objects on Docker; Podman's are this test's to remove.
    for (const [, id] of await ours(podman).catch(() => new Map<string, string>())) {
      await podman
        .getContainer(id)
        .remove({ force: true, v: true })
        .catch(() => undefined);
    }
    const volumes = await podman.listVolumes({ filters: { name: [prefix] } }).catch(() => undefined);
    for (const v of volumes?.Volumes ?? []) {
      if (v.Name.startsWith(prefix))
        await podman
          .getVolume(v.Name)
          .remove({ force: true } as object)
          .catch(() => undefined);
    }
    if (loaded)
      await podman
        .getImage(loaded)
        .remove()
        .catch(() => undefined);
  });

  /** Selects a terminal by its tab in the panel's tab list, and waits for its rows. */
  const selectTerminal = async (tab: ReturnType<Workbench['page']['locator']>) => {
    await tab.waitFor({ timeout: 60_000 });
    await tab.click();
    await page.locator('.terminal-wrapper.active .xterm-rows').filter({ visible: true }).first().waitFor({ timeout: 60_000 });
  };

  it(
    'opens the shell on Podman in Podman’s container of the same name, and brings both shells back to their own containers after a reload',
    { timeout: LONG },
    async () =>
      wb.scenario('two-engines', async () => {
        // Day one, on Docker: a shell, and a mark only Docker's container has.
        await wb.runCommand('Toolbox: Open Toolbox Shell');
        assert.equal(await wb.ask('echo docker > /tmp/tbx-engine-mark && echo MARKED-$((6*7))', /MARKED-(42)/), '42');
        const onDocker = await ours(d);
        const name = [...onDocker.keys()].find((n) => n.includes('ws-engines'));
        assert.ok(name, `the folder's container runs on Docker: ${[...onDocker.keys()].join(', ')}`);
        await wb.shot('docker-shell');

        // The runtime image is copied to Podman, so the open there does not build it again.
        const image = (await d.getContainer(onDocker.get(name)!).inspect()).Config.Image;
        const present = await podman
          .getImage(image)
          .inspect()
          .then(() => true)
          .catch(() => false);
        if (!present) {
          const tar = await d.getImage(image).get();
          const load = await podman.loadImage(tar);
          await new Promise<void>((resolve, reject) => podman.modem.followProgress(load, (err) => (err ? reject(err) : resolve())));
          loaded = image;
        }

        // Day two: the same folder on Podman.
        // As a user would: the Settings editor, searched for the setting (a write to settings.json
        // behind code-server's back is not seen by the open window).
        await wb.runCommand('Preferences: Open User Settings');
        const settings = page.locator('.settings-editor');
        await settings.waitFor({ timeout: 30_000 });
        await page.waitForTimeout(500); // the search box takes the focus
        await page.keyboard.type('toolbox.dockerHost');
        const field = settings.locator('.setting-item-control input[aria-label="toolbox.dockerHost"]').first();
        await field.waitFor({ timeout: 30_000 });
        await field.fill(`unix://${PODMAN_TEST_SOCKET}`);
        await page.keyboard.press('Tab');
        const header = page.locator('.pane-header', { hasText: 'Workspaces' });
        await header
          .locator('.description', { hasText: /^Podman \d/ })
          .first()
          .waitFor({ timeout: 60_000 });
        await wb.shot('podman-selected');
        // Focus back in the side bar (the Settings editor keeps F1 from the command palette).
        await page.locator('.part.sidebar .composite.title').first().click();
        await wb.runCommand('View: Close All Editors');
        // The Docker container's shell is not "gone" because Podman does not list it.
        await page.waitForTimeout(3000);
        assert.doesNotMatch(await wb.terminalText(), /is gone/, 'the Docker shell was ended by the Podman container list');
        await wb.runCommand('Toolbox: Open Toolbox Shell');
        await selectTerminal(page.locator('.terminal-tabs-entry', { hasText: 'ws-engines (2)' }).first());
        // Podman's container of the same name has no mark: the shell runs there, not in Docker's.
        const where = await wb.ask('echo "ON-$(cat /tmp/tbx-engine-mark 2>/dev/null || echo podman)-$((6*7))"', /ON-(\w+)-42/);
        assert.equal(where, 'podman', 'the shell opened on Podman ran in the Docker container of the same name');
        const onPodman = await ours(podman);
        assert.ok(onPodman.has(name), `Podman runs a container of the same name: ${[...onPodman.keys()].join(', ')}`);
        assert.ok((await ours(d)).has(name), 'Docker’s container is left running');
        // Written there, the file is seen by Podman's container only.
        assert.equal(await wb.ask('echo podman > /tmp/tbx-engine-mark && echo WROTE-$((6*7))', /WROTE-(42)/), '42');
        const dockerMark = await d.getContainer(onDocker.get(name)!).exec({ Cmd: ['cat', '/tmp/tbx-engine-mark'], AttachStdout: true });
        const out = await new Promise<string>((resolve, reject) => {
          dockerMark.start({ hijack: true, stdin: false }, (err, stream) => {
            if (err || !stream) return reject(err ?? new Error('no exec stream'));
            let text = '';
            stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
            stream.on('end', () => resolve(text));
          });
        });
        assert.match(out, /docker/, 'Docker’s container still has its own mark');
        await wb.shot('podman-shell');

        // A reload: both shells come back, each in the container it was opened in (the Docker
        // one through its holder's socket, proven to be Docker's container's).
        await wb.runCommand('Developer: Reload Window');
        await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
        await header
          .locator('.description', { hasText: /^Podman \d/ })
          .first()
          .waitFor({ timeout: 60_000 });
        await selectTerminal(page.locator('.terminal-tabs-entry', { hasText: 'ws-engines (2)' }).first());
        const back = await wb.ask('echo "BACK-$(cat /tmp/tbx-engine-mark)-$((6*7))"', /BACK-(\w+)-42/);
        assert.equal(back, 'podman', 'after the reload the Podman shell is back in Podman’s container');
        await selectTerminal(page.locator('.terminal-tabs-entry', { hasText: 'ws-engines' }).filter({ hasNotText: '(2)' }).first());
        const first = await wb.ask('echo "FIRST-$(cat /tmp/tbx-engine-mark)-$((6*7))"', /FIRST-(\w+)-42/);
        assert.equal(first, 'docker', 'after the reload the Docker shell is back in Docker’s container');
        await wb.shot('podman-shell-reattached');
      })(),
  );
});
