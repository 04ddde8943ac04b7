/**
 * Issue 29 item 1 (docs/decisions/0051): a shell of the upstream CLI exiting never takes the
 * editor's shells with it. Upstream removes the container when no exec there runs
 * (test/support/upstreamTeardown.ts, its rule read from the engine as it reads it); the editor's
 * shells live in the holder with no exec, so the holder keeps a sentinel exec running while it
 * has a live session. Here a window's backend opens a held shell, a CLI-style shell exits with
 * the shell attached, then detached with its window gone, and the shell lives on each time; then
 * the last shell of either tool ends and the container goes: the editor's last shell while a CLI
 * shell still runs (our rule keeps it), then that CLI shell (upstream's rule removes it).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Duplex } from 'node:stream';
import { describe, it } from 'node:test';
import type Docker from 'dockerode';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { holderHeld, socketTransport } from '../../extension/src/engine/sessions';
import { docker } from '../support/docker';
import { execIn } from '../support/exec';
import { shellOutput, shellProjectSuite } from '../support/shellProject';
import { containerGone, upstreamOnShellExit } from '../support/upstreamTeardown';

/** The holder's sentinel execs in the container, as the engine reports them. */
async function sentinels(engine: Docker, name: string): Promise<Docker.ExecInspectInfo[]> {
  const detail = await engine.getContainer(name).inspect();
  const execs = await Promise.all(
    (detail.ExecIDs ?? []).map((id) =>
      engine
        .getExec(id)
        .inspect()
        .catch(() => undefined),
    ),
  );
  return execs.filter((e): e is Docker.ExecInspectInfo => {
    const args = e?.ProcessConfig?.arguments ?? [];
    return args.includes(CONTAINER.sessionHolder) && args.includes('hold');
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A CLI-style shell: an exec that runs until its stdin closes, as `toolbox shell`'s does until exit. */
async function cliShell(engine: Docker, name: string): Promise<{ exit(): Promise<void> }> {
  const exec = await engine
    .getContainer(name)
    .exec({ Cmd: ['cat'], AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
  stream.resume();
  await until('the CLI shell to run', async () => ((await exec.inspect()).Running ? true : undefined));
  return {
    async exit() {
      stream.end();
      await until('the CLI shell to end', async () => ((await exec.inspect()).Running ? undefined : true));
    },
  };
}

describe('the toolbox CLI never ends the editor shells (issue 29 item 1)', () => {
  const engine = docker();
  const { home, folder, windowBackend } = shellProjectSuite('tbxt-cli-teardown-');

  it('keeps the container for a held shell, attached and detached, and removes it after the last shell of either tool', async () => {
    const first = windowBackend();
    const prepared = await first.prepareShell({ folder });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const shell = await session.start({ cols: 100, rows: 30 });
    const record = shell.record!;
    assert.ok(record, 'the shell is held');
    const name = record.container;

    // The sentinel runs while the shell lives, once however many shells start.
    const second = await session.start({ cols: 100, rows: 30 });
    await until('one running sentinel', async () =>
      (await sentinels(engine, name)).filter((e) => e.Running).length === 1 ? true : undefined,
    );
    // The exec runs a moment before its `hold` reaches the holder.
    await until('the holder to say it is held', async () =>
      (await holderHeld(socketTransport(record.holder.hostSocket!))) ? true : undefined,
    );

    // A CLI shell exits while the editor's shell is attached: upstream's rule leaves the container.
    await (await cliShell(engine, name)).exit();
    assert.equal(await upstreamOnShellExit(engine, name), 'left running');
    const attached = shellOutput(shell);
    shell.stream.write('echo "alive $((40+1))"\r');
    await attached.waitFor(/alive 41/);

    // The window goes away (both terminals detach, the backend stops): still left running.
    shell.dispose();
    second.dispose();
    first.dispose();
    await (await cliShell(engine, name)).exit();
    assert.equal(await upstreamOnShellExit(engine, name), 'left running');

    // A reloaded window attaches the same shell again.
    const reloaded = windowBackend();
    const again = await reloaded.reattachShell(record);
    const back = shellOutput(again);
    again.stream.write('echo "back $((40+2))"\r');
    await back.waitFor(/back 42/);

    // The editor's last shells end while a CLI shell runs: our rule keeps the container for it,
    // and the sentinel leaves with the last held shell.
    const cli = await cliShell(engine, name);
    await reloaded.endShell(second.record!);
    assert.equal((await sentinels(engine, name)).filter((e) => e.Running).length, 1, 'one held shell is left');
    await reloaded.endShell(again.record!);
    assert.equal(await containerGone(engine, name, 0), false, 'kept for the CLI shell');
    // The engine drops an ended exec from the container's list (Docker) or reports it not running.
    await until('the sentinel to leave', async () => ((await sentinels(engine, name)).every((e) => !e.Running) ? true : undefined));
    assert.equal(await holderHeld(socketTransport(record.holder.hostSocket!)), false, 'the holder let it go');
    assert.doesNotMatch((await execIn(engine.getContainer(name), ['ps', '-eo', 'args'])).stdout, /toolbox-session hold/);

    // The CLI shell exits last: upstream's rule now removes the container.
    await cli.exit();
    assert.equal(await upstreamOnShellExit(engine, name), 'removed');
    assert.equal(await containerGone(engine, name), true);
  });

  it('starts no sentinel that outlives the shells: one with nothing to hold exits at once', async () => {
    const b = windowBackend();
    const other = join(home, 'other');
    mkdirSync(other);
    writeFileSync(join(other, '.toolbox.yaml'), 'peer_messaging: false\n');
    const prepared = await b.prepareShell({ folder: other });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const shell = await session.start({ cols: 80, rows: 24 });
    const name = shell.record!.container;
    await until('the sentinel', async () => ((await sentinels(engine, name)).some((e) => e.Running) ? true : undefined));
    // A second `hold` while one holds, as a stray start would run it: told so, gone at once.
    const stray = await execIn(
      engine.getContainer(name),
      ['python3', '-S', CONTAINER.sessionHolder, 'hold', '--socket', shell.record!.holder.containerSocket],
      {
        user: shell.record!.holder.user,
      },
    );
    assert.equal(stray.code, 0);
    await b.endShell(shell.record!);
    assert.equal(await containerGone(engine, name), true, 'our own rule removed it: the sentinel does not count');
  });
});
