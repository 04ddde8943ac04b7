/**
 * Issue 31 item 4: the paths Docker Desktop, OrbStack, Colima and WSL take, forced on this
 * machine's engine (docs/decisions/0058-forced-fallback-transports.md). With
 * toolbox.transport.bridge `tcp` the container sees no bridge socket, so `code` goes through
 * host.docker.internal (relayed to the host's loopback as those engines do,
 * test/support/desktopLoopback.ts); with toolbox.transport.sessions `exec` the window reaches the
 * holder through `toolbox-session connect` in an exec. A second window reattaches the same shell
 * through the same paths, and `code` in it reaches that window.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BRIDGE_FILES, BRIDGE_TCP_ONLY_DIR } from '../../extension/src/contract/shims';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { workspaceStateDir } from '../../extension/src/bridge/state';
import { probeBridgePath } from '../../extension/src/engine/bridgePath';
import { docker } from '../support/docker';
import { desktopLoopback, type DesktopLoopback } from '../support/desktopLoopback';
import { execIn } from '../support/exec';
import { openShell, shellOutput, shellProjectSuite } from '../support/shellProject';
import { standInSettings } from '../support/settings';

describe('forced fallbacks: the bridge over TCP through host.docker.internal, sessions through an exec (issue 31)', () => {
  const opened: string[] = [];
  let relay: DesktopLoopback | undefined;
  const project = shellProjectSuite('tbxt-fallback-', { readme: true });
  const { home, folder } = project;

  after(async () => {
    await relay?.close();
  });

  const windowBackend = () =>
    project.windowBackend({
      settings: standInSettings({ transports: () => ({ bridge: 'tcp', sessions: 'exec' }) }),
      editor: { openInEditor: (path) => void opened.push(path), openUntitled: () => undefined, openExternal: () => undefined },
    });

  /** The `toolbox-session connect` processes in the container: one per exec-transport connection. */
  async function connectExecs(id: string): Promise<number> {
    const r = await execIn(docker().getContainer(id), [
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline" 2>/dev/null; echo; done | grep -c "toolbox-session connect" || true',
    ]);
    return Number(r.stdout.trim());
  }

  it('runs `code` over TCP and holds the shell through an exec, before and after a reload', async () => {
    const first = windowBackend();
    const shell = await openShell(first, folder);
    const record = shell.record!;
    const container = docker().getContainer(record.containerId);
    const info = await container.inspect();

    // The container's run dir is the tcp-only directory: no bridge socket in it.
    const runMount = info.Mounts.find((m) => m.Destination === CONTAINER.bridgeRunDir);
    assert.ok(runMount?.Source.endsWith(`/${BRIDGE_TCP_ONLY_DIR}`), `run dir mount: ${runMount?.Source}`);
    const sock = await execIn(container, ['test', '-S', `${CONTAINER.bridgeRunDir}/${BRIDGE_FILES.socket}`]);
    assert.equal(sock.code, 1, 'the container sees no bridge socket');
    // The holder's socket is where it always is, but this window reaches it through an exec.
    assert.ok((await connectExecs(record.containerId)) >= 1, 'the attached shell runs through toolbox-session connect');

    // Without host.docker.internal reaching the host's loopback, the shim has nowhere to go: the socket is not used.
    const out = shellOutput(shell);
    shell.stream.write('code README.md; echo "unrelayed exit $?"\r');
    const [, unrelayed] = await out.waitFor(/unrelayed exit (\d+)/);
    assert.equal(unrelayed, '69', 'no TCP path yet: the shim says the bridge is unreachable');
    assert.deepEqual(opened, []);

    const unrelayedPath = await probeBridgePath(docker(), record.containerId);
    assert.equal(unrelayedPath.mode, 'none', unrelayedPath.why);
    assert.match(unrelayedPath.why, /made with toolbox\.transport\.bridge set to tcp/);

    const port = Number(readFileSync(join(workspaceStateDir(home, record.container), BRIDGE_FILES.port), 'utf8').trim());
    relay = await desktopLoopback(container, port);
    shell.stream.write('code README.md; echo "tcp exit $?"\r');
    const [, tcp] = await out.waitFor(/tcp exit (\d+)/);
    assert.equal(tcp, '0', 'code reached the window over TCP');
    assert.deepEqual(opened, [join(folder, 'README.md')]);
    const tcpPath = await probeBridgePath(docker(), record.containerId);
    assert.equal(tcpPath.mode, 'tcp', tcpPath.why);

    // A reload: the window goes, a new one reattaches the same shell through an exec.
    shell.dispose();
    first.dispose();
    const reloaded = windowBackend();
    // The views honour the setting too: no socket, so nothing listed until this window has its exec.
    const heldShells = async (): Promise<number | undefined> =>
      (await reloaded.snapshot()).containers.find((c) => c.id === record.containerId)?.shells?.length;
    assert.equal(await heldShells(), undefined, 'the views do not reach the holder through its socket under sessions: exec');
    const again = await reloaded.reattachShell(record);
    assert.equal(await heldShells(), 1, 'the views list the held shell through the window’s exec');
    const after = shellOutput(again);
    again.stream.write('code README.md; echo "again exit $?"\r');
    const [, code] = await after.waitFor(/again exit (\d+)/);
    assert.equal(code, '0', 'code reached the reloaded window over TCP');
    assert.equal(opened.length, 2);
    assert.ok((await connectExecs(record.containerId)) >= 1, 'the reattached shell runs through toolbox-session connect');
    again.dispose();
  });
});
