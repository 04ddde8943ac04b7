/**
 * Issue 26 item 3: a container of the same name on another engine never gets this one's shells.
 * A window on Docker opens a held shell in a folder; a window on rootful Podman opens the same
 * folder, so its container has the same name. Before the fix both containers mounted one run dir
 * (keyed by the name alone) and the Podman window's shell ran in the Docker container, through
 * the Docker container's session holder. Now run dirs are keyed by the engine too, and the holder
 * must prove the container it serves before anything is attached (docs/decisions/0043).
 *
 * Needs both engines as root: Docker on /var/run/docker.sock and the test Podman
 * (scripts/ensure-podman.sh); skipped, saying why, when either does not answer.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Docker from 'dockerode';
import type { SessionRecord, StartedShell } from '../../extension/src/backend/api';
import type { HeldSessions as HeldSessionsClass } from '../../extension/src/backend/sessions';
import type { EngineConnector as EngineConnectorClass } from '../../extension/src/backend/connection';
import { errorCode, errorText } from '../../extension/src/contract/errors';
import { objectNames } from '../../extension/src/contract/objects';
import { proveHolder, socketTransport } from '../../extension/src/engine/sessions';
import { testBackend, type TestBackend } from '../support/backend';
import { PODMAN_TEST_SOCKET, removeNamespaceObjects } from '../support/docker';
import { ensureTestRuntimeImageOn } from '../support/image';
import { screen } from '../support/screen';
import { standInSettings } from '../support/settings';
import { silentLog } from '../support/vscodeLite';

const DOCKER_SOCKET = '/var/run/docker.sock';

function output(shell: StartedShell) {
  return screen({ onDidWrite: (listener: (text: string) => void) => shell.stream.on('data', (d: Buffer) => listener(d.toString('utf8'))) });
}

/** Which engine's container the shell runs in: the mark written into the Docker container, else podman. */
async function whereRuns(shell: StartedShell, tag: string): Promise<string> {
  const seen = output(shell);
  shell.stream.write(`echo "${tag}=$(cat /tmp/tbxt-engine-mark 2>/dev/null || echo podman)"\r`);
  const [, where] = await seen.waitFor(new RegExp(`${tag}=([a-z]+)\\r?\\n`));
  return where as string;
}

async function answers(d: Docker): Promise<boolean> {
  return d
    .ping()
    .then(() => true)
    .catch(() => false);
}

const dockerClient = new Docker({ socketPath: DOCKER_SOCKET });
const podmanClient = new Docker({ socketPath: PODMAN_TEST_SOCKET });

describe('a container of the same name on another engine never gets these shells (issue 26, item 3)', async () => {
  const both = process.getuid?.() === 0 && (await answers(dockerClient)) && (await answers(podmanClient));
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  let home: string;
  let folder: string;
  const backends: TestBackend[] = [];
  const dockerSettings = standInSettings({ dockerHost: () => `unix://${DOCKER_SOCKET}` });
  const podmanSettings = standInSettings({ dockerHost: () => `unix://${PODMAN_TEST_SOCKET}` });

  before(async () => {
    if (!both) return;
    const [image] = await Promise.all([ensureTestRuntimeImageOn(dockerClient), ensureTestRuntimeImageOn(podmanClient)]);
    home = mkdtempSync(join(tmpdir(), 'tbxt-holder-identity-'));
    folder = join(home, 'project');
    mkdirSync(folder);
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\npeer_messaging: false\n`);
  });

  after(async () => {
    for (const b of backends) b.dispose();
    if (!both) return;
    await removeNamespaceObjects(dockerClient, names).catch(() => undefined);
    await removeNamespaceObjects(podmanClient, names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  function windowOn(settings: typeof dockerSettings): TestBackend {
    const b = testBackend(names, home, { settings });
    backends.push(b);
    return b;
  }

  async function openShell(b: TestBackend): Promise<{ shell: StartedShell; id: string; name: string }> {
    const prepared = await b.prepareShell({ folder });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    assert.deepEqual(session.persistence, { held: true, transport: 'socket' }, 'held through the run dir socket');
    return { shell: await session.start({ cols: 100, rows: 30 }), id: session.id, name: session.name };
  }

  let dockerRecord: SessionRecord;
  let podmanRecord: SessionRecord;
  let dockerId: string;
  let podmanId: string;

  it(
    'runs the Podman window’s shell in the Podman container',
    { skip: both ? false : 'needs Docker and the test Podman, as root' },
    async () => {
      const docker = await openShell(windowOn(dockerSettings));
      const podman = await openShell(windowOn(podmanSettings));
      dockerId = docker.id;
      podmanId = podman.id;
      assert.equal(podman.name, docker.name, 'the same folder: the same container name on both engines');
      assert.notEqual(podmanId, dockerId);
      // Marks the Docker container, through its own engine.
      const exec = await dockerClient.getContainer(dockerId).exec({ Cmd: ['sh', '-c', 'echo docker > /tmp/tbxt-engine-mark'] });
      await new Promise<void>((resolve, reject) =>
        exec.start({}, (err, stream) => (err ? reject(err) : stream ? (stream.on('end', resolve), stream.resume()) : resolve())),
      );
      assert.equal(await whereRuns(docker.shell, 'd1'), 'docker');
      assert.equal(await whereRuns(podman.shell, 'p1'), 'podman', 'the Podman window’s shell ran in the Docker container');
      dockerRecord = docker.shell.record!;
      podmanRecord = podman.shell.record!;
      assert.notEqual(podmanRecord.holder.hostSocket, dockerRecord.holder.hostSocket, 'one run dir per engine');
      docker.shell.dispose();
      podman.shell.dispose();
    },
  );

  it('proves which container a holder serves, and refuses another’s', { skip: both ? false : 'needs both engines' }, async () => {
    assert.deepEqual(await proveHolder(socketTransport(dockerRecord.holder.hostSocket!), dockerId), { kind: 'proven' });
    assert.deepEqual(await proveHolder(socketTransport(podmanRecord.holder.hostSocket!), podmanId), { kind: 'proven' });
    assert.deepEqual(await proveHolder(socketTransport(dockerRecord.holder.hostSocket!), podmanId), { kind: 'other', serves: dockerId });

    // Run dirs that still collide (a container made before this change, or two made by the CLI,
    // which mounts one run dir into all of them): the Podman container's holder address pointing at
    // the Docker container's socket. Opening refuses, and says what to do.
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { HeldSessions } = require('../../extension/src/backend/sessions') as { HeldSessions: typeof HeldSessionsClass };
    const { EngineConnector } = require('../../extension/src/backend/connection') as { EngineConnector: typeof EngineConnectorClass };
    /* eslint-enable @typescript-eslint/no-require-imports */
    const connector = new EngineConnector({ names, home: () => home, settings: podmanSettings, log: silentLog as never });
    const sessions = new HeldSessions({ connector, bridges: undefined as never, settings: podmanSettings, log: silentLog as never });
    const logged: string[] = [];
    await assert.rejects(
      sessions.transport(podmanId, podmanRecord.container, dockerRecord.holder, { log: (l) => logged.push(l), step: () => undefined }),
      (err: unknown) => {
        assert.equal(errorCode(err), 'holder-mismatch');
        assert.match(errorText(err), new RegExp(`serves another container \\(${dockerId.slice(0, 12)}\\), not ${podmanId.slice(0, 12)}`));
        assert.match(errorText(err), /Stop the other container/);
        return true;
      },
    );
    // A recorded shell whose socket now answers for another container is not attached either.
    const podmanWindow = windowOn(podmanSettings);
    await assert.rejects(podmanWindow.reattachShell({ ...podmanRecord, holder: dockerRecord.holder }), (err: unknown) => {
      assert.equal(errorCode(err), 'session-gone');
      assert.match(errorText(err), /serves another container/);
      return true;
    });
  });

  it('gets both shells back after a reload, each in its own container', { skip: both ? false : 'needs both engines' }, async () => {
    const dockerAgain = await windowOn(dockerSettings).reattachShell(dockerRecord);
    const podmanAgain = await windowOn(podmanSettings).reattachShell(podmanRecord);
    assert.equal(await whereRuns(dockerAgain, 'd2'), 'docker');
    assert.equal(await whereRuns(podmanAgain, 'p2'), 'podman');
    dockerAgain.dispose();
    podmanAgain.dispose();
  });
});
