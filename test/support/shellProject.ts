/**
 * The set-up of the engine tests that open shells in a project through a window's backend: a
 * temporary home holding `project/`, the test runtime image named in the user's ~/.toolbox.yaml,
 * peer messaging off in the project's; opening a shell there; reading what the shell shows; and
 * the clean-up of the backends, the namespace's objects and the home.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { StartedShell } from '../../extension/src/backend/api';
import { objectNames } from '../../extension/src/contract/objects';
import type { ObjectNames } from '../../extension/src/contract/types';
import { testBackend, type TestBackend } from './backend';
import { docker, removeNamespaceObjects } from './docker';
import { ensureTestRuntimeImage } from './image';
import { screen } from './screen';

/**
 * Writes the project: `folder` (`<home>/project`, with a README.md when `readme`), the runtime image
 * in the home's .toolbox.yaml (from the project's file it would wait for the user's approval,
 * docs/decisions/0041) and `peer_messaging: false` in the project's.
 */
async function writeShellProject(home: string, folder: string, readme: boolean): Promise<void> {
  const image = await ensureTestRuntimeImage();
  mkdirSync(folder);
  if (readme) writeFileSync(join(folder, 'README.md'), 'hello\n');
  writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\n`);
  writeFileSync(join(folder, '.toolbox.yaml'), 'peer_messaging: false\n');
}

/**
 * The shell project of a describe block: a namespace of its own (`tbxt<6 hex>`) and a home
 * `<tmpdir>/<label>XXXXXX`, made at once; registers a `before` hook that writes the project
 * (writeShellProject) and an `after` hook that disposes the backends `windowBackend` made and
 * removes the namespace's objects (children left by a failed test too) and the home.
 */
export function shellProjectSuite(label: string, { readme = false } = {}) {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  const home = mkdtempSync(join(tmpdir(), label));
  const folder = join(home, 'project');
  const backends: TestBackend[] = [];
  before(() => writeShellProject(home, folder, readme));
  after(() => removeShellProject(backends, names, home));
  return {
    names,
    home,
    folder,
    /** A window's backend on the suite's namespace and home (`more` as testBackend takes it), disposed after the suite. */
    windowBackend(more: Parameters<typeof testBackend>[2] = {}): TestBackend {
      const b = testBackend(names, home, more);
      backends.push(b);
      return b;
    },
  };
}

/** Opens a shell in `folder` through `backend` (prepare, open, start at 100x30), as the terminal does. */
export async function openShell(backend: TestBackend, folder: string): Promise<StartedShell> {
  const prepared = await backend.prepareShell({ folder });
  const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
  return session.start({ cols: 100, rows: 30 });
}

/** What `shell` shows, with a wait for a pattern in it (test/support/screen.ts). */
export function shellOutput(shell: StartedShell) {
  return screen({ onDidWrite: (listener: (text: string) => void) => shell.stream.on('data', (d: Buffer) => listener(d.toString('utf8'))) });
}

/**
 * Disposes `backends`, removes every object of namespace `names` (children left by a failed test
 * too, errors ignored), then the home.
 */
async function removeShellProject(backends: TestBackend[], names: ObjectNames, home: string | undefined): Promise<void> {
  for (const b of backends) b.dispose();
  await removeNamespaceObjects(docker(), names).catch(() => undefined);
  if (home) rmSync(home, { recursive: true, force: true });
}
