/**
 * Issue #14 in a real VS Code: the first Open Toolbox Shell pulls the runtime image from a
 * registry on loopback (`registry_mirror` in ~/.toolbox.yaml) instead of building it, with a progress
 * notification a person can read (layers and bytes, percent, elapsed time); Rebuild Runtime
 * Image builds it locally, reports the step, and keeps the old image the running container uses.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HOST } from '../../extension/src/contract/upstream';
import { RUNTIME_IMAGE_LABELS, RUNTIME_IMAGE_TEST_REPO } from '../../extension/src/contract/image';
import {
  buildRuntimeImage,
  extraCaCerts,
  publishedRuntimeImageRef,
  runtimeImageTag,
  splitTag,
} from '../../extension/src/engine/imageBuild';
import { docker } from '../support/docker';
import { pushImage, startRegistry, type LoopbackRegistry } from '../support/registry';
import { LONG, openWorkbench, prefix, uiTestsSkip, type Workbench } from './workbench';

/** The build args and tag the extension under test computes (EngineBackend.imageBuildArgs). */
function extensionImage(): { buildArgs: Record<string, string>; tag: string } {
  const buildArgs: Record<string, string> = JSON.parse(process.env.TOOLBOX_VSCODE_BUILD_ARGS ?? '{}');
  const dirs = [join(process.env.HOME ?? '', HOST.mountsRoot, 'certs'), HOST.localCaDir];
  const certs = dirs.map((dir) => extraCaCerts(dir)).filter((c) => c !== undefined);
  if (certs.length) buildArgs.EXTRA_CA_CERTS = certs.join('\n');
  return { buildArgs, tag: runtimeImageTag(process.env.E2E_EXT_PATH!, buildArgs, RUNTIME_IMAGE_TEST_REPO) };
}

describe('the runtime image in VS Code', { skip: uiTestsSkip }, () => {
  let wb: Workbench;
  let registry: LoopbackRegistry;
  const userFile = join(homedir(), '.toolbox.yaml');
  let savedUserFile: string | undefined;
  const d = docker();
  const keep = `${prefix}-keep/runtime:original`;
  let tag = '';
  let published = '';
  let rebuiltId = '';

  /** Every distinct toast text seen while waiting, for the failure message. */
  const seen = new Set<string>();
  /** The text of the visible notification toasts. */
  const toasts = async (): Promise<string> => {
    const texts = ((await wb.page.locator('.notification-toast').allInnerTexts()) as string[]).map((t) => t.replace(/\s+/g, ' '));
    for (const t of texts) seen.add(t);
    return texts.join('\n');
  };
  const waitForToast = async (pattern: RegExp, timeout = 240_000): Promise<string> => {
    for (const end = Date.now() + timeout; Date.now() < end;) {
      const text = await toasts();
      if (pattern.test(text)) return text;
      await wb.page.waitForTimeout(100);
    }
    throw new Error(`No notification matched ${pattern}; seen:\n${[...seen].join('\n')}`);
  };

  before(async () => {
    registry = startRegistry(prefix);
    const image = extensionImage();
    tag = image.tag;
    // The image the extension would build, built here (cached) and kept under a name of ours.
    const exists = await d
      .getImage(tag)
      .inspect()
      .then(() => true)
      .catch(() => false);
    if (!exists)
      await buildRuntimeImage(d, { contextRoot: process.env.E2E_EXT_PATH!, tag, buildArgs: image.buildArgs, networkMode: 'host' });
    await d.getImage(tag).tag(splitTag(keep));
    // Published: that image plus a 200 MB layer of its own, so the pull has bytes to show.
    const base = await d.getImage(tag).inspect();
    const c = await d.createContainer({
      name: `${prefix}-publish`,
      Image: tag,
      User: '0:0',
      Entrypoint: ['sh', '-c'],
      Cmd: [`head -c ${200 << 20} /dev/urandom > /opt/published-layer && echo ${randomBytes(4).toString('hex')} >> /opt/published-layer`],
      HostConfig: { NetworkMode: 'none' },
    });
    await c.start();
    await c.wait();
    published = publishedRuntimeImageRef(tag, registry.address);
    await c.commit({
      ...splitTag(published),
      changes: [
        `LABEL ${RUNTIME_IMAGE_LABELS.contextHash}=${tag.slice(tag.lastIndexOf(':') + 1)}`,
        `ENTRYPOINT ${JSON.stringify(base.Config.Entrypoint)}`,
        `CMD ${JSON.stringify(base.Config.Cmd)}`,
        `USER ${base.Config.User}`,
      ],
    });
    await c.remove({ force: true });
    await pushImage(d, published);
    await d.getImage(published).remove();
    // The runtime tag is absent: the first open has to fetch it.
    await d.getImage(tag).remove({ noprune: true, force: true });
    // The user's own file: from the project's, a registry_mirror waits for approval (docs/decisions/0041).
    savedUserFile = existsSync(userFile) ? readFileSync(userFile, 'utf8') : undefined;
    writeFileSync(userFile, `${savedUserFile ?? ''}registry_mirror: ${registry.address}\n`);
    wb = await openWorkbench('image-');
  });

  after(async () => {
    await wb?.close();
    if (savedUserFile === undefined) rmSync(userFile, { force: true });
    else writeFileSync(userFile, savedUserFile);
    // Leave the runtime tag on the image the extension would build, as before this file ran.
    await d
      .getImage(keep)
      .tag(splitTag(tag))
      .catch(() => undefined);
    for (const ref of [keep, published]) {
      await d
        .getImage(ref)
        .remove({ noprune: true })
        .catch(() => undefined);
    }
    // The from-scratch image of the rebuild test, untagged again above.
    if (rebuiltId)
      await d
        .getImage(rebuiltId)
        .remove()
        .catch(() => undefined);
    registry?.stop();
  });

  it(
    'pulls the runtime image on the first open, showing layers, bytes, percent and time, and the shell runs it',
    { timeout: LONG },
    async () =>
      wb.scenario('pull', async () => {
        await wb.runCommand('Toolbox: Open Toolbox Shell');
        const pulling = await waitForToast(/Pulling the runtime image: \d+ of \d+ layers, [\d.]+ MB of [\d.]+ MB · \d+%/);
        await wb.shot('pulling');
        assert.doesNotMatch(pulling, /Building/);
        // The pulled image's own layer is in the shell's container (the log view renders spaces as no-break spaces: \\s).
        const out = await wb.ask('test -s /opt/published-layer && echo PULLED-$((6*7))', /PULLED-(42)/);
        assert.equal(out, '42');
        await wb.shot('pulled-shell');
        await wb.runCommand('Toolbox: Show Log');
        await wb.outputLines('Pulled the runtime image', /Pulled\sthe\sruntime\simage\sfrom\s127\.0\.0\.1:\d+/);
        await wb.shot('pulled-log');
      })(),
  );

  it(
    'rebuilds the runtime image from scratch on demand, shows the step, and keeps the old image the running container uses',
    { timeout: LONG },
    async () =>
      wb.scenario('rebuild', async () => {
        const pulled = (await d.getImage(tag).inspect()).Id;
        await wb.runCommand('Toolbox: Rebuild Runtime Image');
        const row = wb.page.locator('.quick-input-list .monaco-list-row', { hasText: 'Downloads everything again' }).first();
        await wb.page.locator('.quick-input-list .monaco-list-row').first().waitFor();
        await wb.shot('rebuild-choice');
        await row.click();
        await waitForToast(/Building the runtime image: step \d+ of \d+/);
        await wb.shot('rebuilding');
        const done = await waitForToast(/The Toolbox runtime image was rebuilt/);
        await wb.shot('rebuilt');
        assert.match(done, /Kept 1 old image that a container still uses/);
        // The tag names the image built here; the pulled one stays for the container that runs it.
        rebuiltId = (await d.getImage(tag).inspect()).Id;
        assert.notEqual(rebuiltId, pulled);
        assert.ok(await d.getImage(pulled).inspect());
      })(),
  );
});
