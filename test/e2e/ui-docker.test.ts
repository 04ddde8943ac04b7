/**
 * Issue 27 in a real VS Code: Docker inside the workspace container through its own scoped
 * endpoint. The runtime image's `docker` CLI is refused a privileged container in the terminal,
 * with the rule and the opt-out; what it starts (a container, a network, a named volume) is listed
 * under the container in the Workspaces view; Stop Container names those children in its
 * confirmation, removes the container and the network with it and keeps the volume.
 * Folder: ws-docker. Screenshots: test-output/e2e/docker-NN-*.png.
 */
import assert from 'node:assert/strict';
import { basename } from 'node:path';
import { after, describe, it } from 'node:test';
import { LONG, folder, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

describe('Docker in the container, scoped to it (issue 27)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('docker-');
  const shot = (name: string) => wb.shot(name);
  const scenario = (name: string, body: () => Promise<void>) => async () => wb.scenario(name, body)();
  const pane = (title: string) => page.locator('.pane', { has: page.locator('.pane-header', { hasText: title }) });
  const row = (text: string | RegExp) => pane('Workspaces').locator('.monaco-list-row', { hasText: text }).first();
  // Children carry the test's prefix (scripts/e2e.sh removes what is left by it), not `<prefix>-`,
  // which is Toolbox's own and refused to a container's children.
  const child = `${prefix}kid`;

  const engine = async () => (await import('../support/docker')).docker();

  after(async () => {
    const docker = await engine();
    await docker
      .getVolume(`${child}-data`)
      .remove()
      .catch(() => undefined);
  });

  it(
    'refuses a privileged container in the terminal, lists what it started under the container, and Stop takes it along',
    { timeout: LONG },
    scenario('children', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').first().waitFor({ timeout: LONG });

      // The refusal, as the docker CLI prints it.
      const refused = await wb.ask(
        'docker run --rm --privileged debian:bookworm-slim true; echo "RC=$?"',
        /Error response from daemon: ([^\n]*(?:\n[^\n]*)*?)\s*RC=(?:[1-9]\d*)/,
      );
      assert.match(refused.replace(/\s+/g, ' '), /[Pp]rivileged/, refused);
      await shot('refused-in-terminal');

      // What an agent does: a network, a named volume, a container on both.
      const made = await wb.ask(
        `docker network create ${child}-net >/dev/null && docker volume create ${child}-data >/dev/null && ` +
          `docker run -d --name ${child}-web --network ${child}-net -v ${child}-data:/data debian:bookworm-slim sleep infinity >/dev/null; echo "MADE=$?"`,
        /MADE=(\d+)/,
      );
      assert.equal(made, '0', await wb.terminalText());
      const listed = await wb.ask('docker ps --format "PS={{.Names}}"', /PS=([a-z0-9][\w.-]*)/);
      assert.equal(listed, `${child}-web`, 'docker ps lists its own container only');

      // The tree: under the container, what it started.
      await wb.openToolboxView();
      const container = row(new RegExp(`^${prefix}-${basename(folder)}-[0-9a-f]{8}`));
      await container.waitFor({ timeout: 60_000 });
      if ((await container.getAttribute('aria-expanded')) !== 'true') await container.click();
      const group = row(/^Started with Docker/);
      await group.waitFor({ timeout: 30_000 });
      assert.match((await group.innerText()) as string, /1 container · 1 network · 1 volume/);
      if ((await group.getAttribute('aria-expanded')) !== 'true') await group.click();
      await row(`${child}-web`).waitFor({ timeout: 15_000 });
      assert.match((await row(`${child}-web`).innerText()) as string, /debian:bookworm-slim · running/);
      await row(/kept when the container goes/).waitFor({ timeout: 15_000 });
      await shot('children-in-tree');

      // Stop: the confirmation names them; the container and network go, the volume stays.
      const dialog = page.locator('.monaco-dialog-box');
      await wb.clickRowAction(container, 'Stop Container…', dialog);
      const text = (await dialog.innerText()) as string;
      assert.match(
        text,
        new RegExp(`Removed with it, started through its Docker endpoint:\\s*• ${child}-web\\s*• network ${child}-net`),
        text,
      );
      assert.match(text, new RegExp(`Kept \\(named volumes, they hold data\\):\\s*• volume ${child}-data`), text);
      await shot('stop-names-children');
      await dialog.getByRole('button', { name: 'Stop Container' }).click();
      await container.waitFor({ state: 'detached', timeout: LONG });

      const docker = await engine();
      // The row goes with the parent; its children are removed right after it (engine/lifecycle.ts
      // stopContainer), so they may still be on their way out: at most 30 s.
      let left: unknown[];
      let nets: unknown[];
      for (const end = Date.now() + 30_000; ; await page.waitForTimeout(250)) {
        left = await docker.listContainers({ all: true, filters: { name: [`${child}-web`] } });
        nets = await docker.listNetworks({ filters: { name: [`${child}-net`] } });
        if ((left.length === 0 && nets.length === 0) || Date.now() > end) break;
      }
      assert.deepEqual(left, [], 'the child container went with its parent');
      assert.deepEqual(nets, [], 'its network too');
      const vol = await docker.getVolume(`${child}-data`).inspect();
      assert.equal(vol.Name, `${child}-data`, 'its named volume is kept');
      await shot('after-stop');
    }),
  );
});
