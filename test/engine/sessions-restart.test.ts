/**
 * A held shell while its engine restarts, on a private second dockerd (the machine's engine is
 * shared with other tests): the real backend and the real terminal (ui/shells/toolboxShellPty.ts, with the
 * small `vscode` stand-in for its event emitters). Without live-restore the restart takes the
 * container down; the terminal must say so in one line, offer Reopen, and a reopen must give a
 * working shell on the restarted engine. While the engine is down the shell works on: the
 * terminal reaches its holder through the socket, not through the engine.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { objectNames } from '../../extension/src/contract/objects';
import type { SessionRecord } from '../../extension/src/backend/api';
import { docker as mainDocker, TEST_LABEL } from '../support/docker';
import { testBackend, type TestBackend } from '../support/backend';
import { ensureTestRuntimeImage } from '../support/image';
import { startSecondEngine, type SecondEngine } from '../support/second-engine';
import { installVscodeLite, silentLog } from '../support/vscodeLite';
import { screen } from '../support/screen';

installVscodeLite();
/* eslint-disable @typescript-eslint/no-require-imports */
const { ToolboxShellPty } =
  require('../../extension/src/ui/shells/toolboxShellPty') as typeof import('../../extension/src/ui/shells/toolboxShellPty');
/* eslint-enable @typescript-eslint/no-require-imports */

type Pty = InstanceType<typeof ToolboxShellPty>;

/**
 * Copies an image from the main engine into the second one as a single layer: the second engine
 * stores layers with vfs (a full copy each), so the runtime image's twenty-odd layers would cost
 * minutes; exported and imported flat with its config, it is one copy.
 */
async function copyImage(from: Docker, to: Docker, tag: string): Promise<void> {
  const config = (await from.getImage(tag).inspect()).Config;
  const scratch = await from.createContainer({ Image: tag, Labels: { [TEST_LABEL]: '1' } });
  try {
    const tar = (await scratch.export()) as unknown as NodeJS.ReadableStream;
    const q = (v: unknown) => JSON.stringify(v);
    const changes = [
      `USER ${config.User}`,
      `WORKDIR ${config.WorkingDir}`,
      `ENTRYPOINT ${q(config.Entrypoint)}`,
      `CMD ${q(config.Cmd)}`,
      ...(config.Env ?? []).map((kv) => `ENV ${kv.slice(0, kv.indexOf('='))}=${q(kv.slice(kv.indexOf('=') + 1))}`),
      ...Object.entries(config.Labels ?? {}).map(([k, v]) => `LABEL ${k}=${q(v)}`),
    ];
    const [repo, version] = [tag.slice(0, tag.lastIndexOf(':')), tag.slice(tag.lastIndexOf(':') + 1)];
    const options: object = { repo, tag: version, changes };
    const importing = await to.importImage(tar, options);
    await new Promise<void>((resolve, reject) => to.modem.followProgress(importing, (err) => (err ? reject(err) : resolve())));
  } finally {
    await scratch.remove({ force: true });
  }
}

describe('a held shell across a restart of its engine (private second dockerd)', () => {
  let engine: SecondEngine | undefined;
  let home: string;
  let folder: string;
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  const savedDockerHost = process.env.DOCKER_HOST;
  let backend: TestBackend | undefined;
  const ptys: Pty[] = [];
  const backends: TestBackend[] = [];

  before(async () => {
    const image = await ensureTestRuntimeImage();
    engine = await startSecondEngine();
    await copyImage(mainDocker(), engine.client(), image);
    home = mkdtempSync(join(tmpdir(), 'tbxt-restart-home-'));
    folder = join(home, 'project');
    mkdirSync(folder);
    // The test image by name: the tag the backend would compute also hashes this host's CA certificates.
    // In ~/.toolbox.yaml: from the project file it would wait for the user's approval (docs/decisions/0041).
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\n`);
    // The backend finds its engine the way a user's DOCKER_HOST would point it there.
    process.env.DOCKER_HOST = `unix://${engine.socketPath}`;
    backend = newBackend();
  });

  /** A backend as a window (or a reloaded one) creates it. */
  function newBackend(): TestBackend {
    const b = testBackend(names, home);
    backends.push(b);
    return b;
  }

  after(async () => {
    for (const p of ptys) p.close();
    for (const b of backends) b.dispose();
    if (savedDockerHost === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = savedDockerHost;
    await engine?.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  /** Opens a Toolbox shell in the folder as the launcher does, and a terminal on it. */
  async function openTerminal(): Promise<{ pty: Pty; out: ReturnType<typeof screen>; container: string; record(): SessionRecord }> {
    const prepared = await backend!.prepareShell({ folder, peer: false });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    assert.deepEqual(session.persistence, { held: true, transport: 'socket' }, 'the shell is held, reached over the socket');
    let started: Awaited<ReturnType<typeof session.start>> | undefined;
    const pty: Pty = new ToolboxShellPty({
      container: session.name,
      start: async (size) => (started = await session.start(size)),
      reconnect: async () => backend!.reattachShell(started!.record!),
      log: silentLog as never,
    });
    ptys.push(pty);
    const out = screen(pty);
    pty.open({ columns: 100, rows: 30 });
    return { pty, out, container: session.name, record: () => started!.record! };
  }

  it('works on while the engine is down, says the container went with the restart, and Reopen gives a working shell', async () => {
    const e = engine!;
    const { pty, out, container } = await openTerminal();
    await new Promise((r) => setTimeout(r, 500)); // the shell's prompt
    pty.handleInput('echo "before $((6*7))"\r');
    await out.waitFor(/before 42/);
    let ended: unknown;
    pty.onDidEnd((end) => (ended = end));
    let reopenAsked = false;
    pty.onDidAskReopen(() => (reopenAsked = true));

    // The engine goes away as a crash would. The container's processes outlive it (their shim
    // does), and the terminal talks to its holder over the socket, not through the engine.
    await e.stop('SIGKILL');
    pty.handleInput('echo "during $((6*7))"\r');
    await out.waitFor(/during 42/);
    assert.doesNotMatch(out.text, /lost|gone/, 'the shell works on while the engine is down');

    // Restarted without live-restore, the engine stops what it finds running: the connection drops.
    await e.start();
    await out.waitFor(/connection to .* lost; reattaching/);

    // The restarted engine did not keep the container running (no live-restore): one clear line.
    const gone = await out.waitFor(/\[(\S+) is gone: ([^\]]*)\]\r\nPress Enter to open a new shell/);
    assert.equal(gone[1], container);
    assert.match(gone[2]!, /no longer running/);
    assert.equal((out.text.match(/is gone/g) ?? []).length, 1, 'said once');
    assert.deepEqual(ended, { kind: 'gone', reason: gone[2] });
    pty.handleInput('\r');
    assert.ok(reopenAsked, 'Enter asks the launcher for a new shell');

    // What the launcher then does: open the folder's shell again. The container starts again.
    const again = await openTerminal();
    again.pty.handleInput('echo "after $((6*7)) in $(hostname)"\r');
    await again.out.waitFor(/after 42 in \S+/);
    const state = await e
      .client()
      .getContainer(again.container)
      .inspect()
      .then((i) => i.State.Running);
    assert.equal(again.container, container, 'the same container');
    assert.ok(state, 'running again on the restarted engine');
  });

  it('a reloaded window reattaches through the holder socket with the engine down; once the container is gone it says so', async () => {
    const e = engine!;
    const { pty, out, record } = await openTerminal();
    await new Promise((r) => setTimeout(r, 500)); // the shell's prompt
    pty.handleInput('echo "pid $$ here"\r');
    const [, pid] = await out.waitFor(/pid (\d+) here/);
    pty.close(); // the window went away: detached, the session lives on

    // A new window's backend has no engine connection yet; with the engine down it can only
    // have reached the shell through the holder's socket in the run dir.
    await e.stop('SIGKILL');
    const reloaded = newBackend();
    const shell = await reloaded.reattachShell(record());
    const back = new ToolboxShellPty({ container: record().container, start: () => Promise.resolve(shell), log: silentLog as never });
    ptys.push(back);
    const screenBack = screen(back);
    back.open({ columns: 100, rows: 30 });
    back.handleInput('echo "still $$"\r');
    await screenBack.waitFor(new RegExp(`still ${pid}`));
    back.close();

    // Restarted without live-restore, the engine stops the container: the next window is told
    // the session is gone (not an engine error it would retry).
    await e.start();
    const later = newBackend();
    for (const end = Date.now() + 60_000; ;) {
      const running = await e
        .client()
        .getContainer(record().containerId)
        .inspect()
        .then((i) => i.State.Running)
        .catch(() => false); // removed with its last shell, as upstream does
      if (!running) break;
      assert.ok(Date.now() < end, 'the restarted engine stops the container');
      await new Promise((r) => setTimeout(r, 250));
    }
    await assert.rejects(
      later.reattachShell(record()),
      (err: Error) => err.name === 'SessionGoneError' && /no longer running/.test(err.message),
    );
  });
});
