/**
 * Issue 26 item 3, the pure parts: which container a session holder serves
 * (plan/holderProof.ts, and the holder's own reading of its id in images/runtime/toolbox-session),
 * and run dirs that never collide across engines (bridge/state.ts). The engine test is
 * test/engine/holder-identity.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chooseRunDir, workspaceRunId } from '../../extension/src/bridge/state';
import { SESSION_PROTOCOL } from '../../extension/src/contract/image';
import { proveHolder, socketTransport } from '../../extension/src/engine/sessions';
import { holderMismatchText, judgeHolder, unprovenHolderReason } from '../../extension/src/plan/holderProof';
import { repoRoot } from '../support/image';
import { hasPython } from '../support/python';

const A = '5400753ce25329a7cae75465a91cb40148d1f2889e9833de4d4f5fc91d2dce16';
const B = '911589f824f9ad8c565c6ee01b6bbfaba2f3c1078d3afd56cfdca2d7fe54990c';

describe('judgeHolder', () => {
  it('proves the container the engine named, by full id or a 12+ digit prefix', () => {
    assert.deepEqual(judgeHolder(A, A), { kind: 'proven' });
    assert.deepEqual(judgeHolder(A.toUpperCase(), A), { kind: 'proven' });
    assert.deepEqual(judgeHolder(A.slice(0, 12), A), { kind: 'proven' });
  });

  it('names the other container a holder serves', () => {
    assert.deepEqual(judgeHolder(A, B), { kind: 'other', serves: B });
    assert.deepEqual(judgeHolder(A.slice(0, 11), A), { kind: 'other', serves: A }, 'a prefix shorter than the CLI shows proves nothing');
    assert.deepEqual(judgeHolder('', A), { kind: 'other', serves: A });
  });

  it('is unproven when the holder cannot say, or says something that is not an id', () => {
    for (const said of [undefined, null, '', 42, {}, A.slice(0, 12), `${A}\n`, A.toUpperCase(), `../${A}`, 'x'.repeat(64)]) {
      assert.deepEqual(judgeHolder(A, said), { kind: 'unproven' }, JSON.stringify(said));
    }
  });

  it('says what happened and what to do, with short ids', () => {
    const text = holderMismatchText('toolbox-alpha-1a2b3c4d', A, B, 'on /run/user/1000/toolbox/0123abcd/sessions.sock');
    assert.match(text, /serves another container \(911589f824f9\), not 5400753ce253 on this engine/);
    assert.match(text, /Stop the other container/);
    assert.match(text, /open the shell again/);
    assert.doesNotMatch(text, new RegExp(B));
    assert.match(unprovenHolderReason('toolbox-alpha-1a2b3c4d'), /stop toolbox-alpha-1a2b3c4d and open a shell again/);
  });
});

describe('run dirs across engines', () => {
  const name = 'toolbox-alpha-1a2b3c4d';

  it('differ for the same name on two engines or contexts, and stay put for one', () => {
    const docker = workspaceRunId(name, 'unix:///var/run/docker.sock');
    const podman = workspaceRunId(name, 'unix:///run/podman/podman.sock');
    const remote = workspaceRunId(name, 'ssh://me@box');
    assert.notEqual(docker, podman);
    assert.notEqual(docker, remote);
    assert.equal(workspaceRunId(name, 'unix:///var/run/docker.sock'), docker);
    assert.match(docker, /^[0-9a-f]{8}$/, 'the shape bridge/sweep.ts looks for');
    const base = { key: name, uid: 1000, platform: 'linux' as const, tmpRoot: '/tmp', xdgRuntimeDir: '/run/user/1000' };
    assert.notEqual(
      chooseRunDir({ ...base, engine: 'unix:///var/run/docker.sock' }).runDir,
      chooseRunDir({ ...base, engine: 'unix:///run/podman/podman.sock' }).runDir,
    );
  });

  it('keeps the name-only run dir of a registration recorded before the engine was part of it', () => {
    assert.equal(workspaceRunId(name), createHash('sha256').update(name).digest('hex').slice(0, 8));
    assert.notEqual(workspaceRunId(name, ''), workspaceRunId(name));
  });
});

/** The holder's own_container_id on a mountinfo text, run by python3 from the image's file. */
function holderIdFrom(mountinfo: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tbxt-mountinfo-'));
  try {
    const file = join(dir, 'mountinfo');
    writeFileSync(file, mountinfo);
    const script = join(repoRoot(), 'images/runtime/toolbox-session');
    const code =
      'import sys\nfrom importlib.machinery import SourceFileLoader\n' +
      "m = SourceFileLoader('holder', sys.argv[1]).load_module()\nprint(m.own_container_id(sys.argv[2]))";
    return execFileSync('python3', ['-S', '-c', code, script, file], { encoding: 'utf8' }).trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the holder reads its own container id', { skip: hasPython ? false : 'no python3 on this host' }, () => {
  const root = '1 0 254:0 / / rw - overlay overlay rw\n';
  // Measured on Docker 20.10 (cgroup v1), rootful Podman 4.3 and rootless Podman 4.3.
  const docker = `${root}126 108 254:0 /var/lib/docker/containers/${A}/hostname /etc/hostname rw,relatime - ext4 /dev/vda rw\n127 108 254:0 /var/lib/docker/containers/${A}/hosts /etc/hosts rw,relatime - ext4 /dev/vda rw\n`;
  const rootful = `${root}123 114 254:0 /run/containers/storage/overlay-containers/${B}/userdata/hostname /etc/hostname rw,relatime - ext4 /dev/vda rw\n124 114 254:0 /run/containers/storage/overlay-containers/${B}/userdata/resolv.conf /etc/resolv.conf rw - ext4 /dev/vda rw\n`;
  const rootless = `${root}174 166 254:0 /run/user/1001/containers/overlay-containers/${A}/userdata/hostname /etc/hostname rw,relatime - ext4 /dev/vda rw\n`;

  it('from where the engine mounted /etc/hostname from, on Docker and Podman', () => {
    assert.equal(holderIdFrom(docker), A);
    assert.equal(holderIdFrom(rootful), B);
    assert.equal(holderIdFrom(rootless), A);
  });

  it('says nothing when the mounts name no id, or two', () => {
    assert.equal(holderIdFrom(root), 'None');
    assert.equal(
      holderIdFrom(`${root}9 1 0:1 /x/${A}/hostname /home/toolbox/hostname rw - ext4 /dev/vda rw\n`),
      'None',
      'not an /etc mount',
    );
    assert.equal(
      holderIdFrom(`${docker}128 108 254:0 /var/lib/docker/containers/${B}/resolv.conf /etc/resolv.conf rw - ext4 /dev/vda rw\n`),
      'None',
    );
  });
});

describe('proveHolder against what answers on the socket', () => {
  let dir: string;
  const servers: Server[] = [];
  const frame = (type: string, body: unknown) => {
    const payload = Buffer.from(JSON.stringify(body));
    const head = Buffer.alloc(5);
    head.write(type, 0, 'latin1');
    head.writeUInt32BE(payload.length, 1);
    return Buffer.concat([head, payload]);
  };
  /** A holder that greets, then answers the first hello with one frame. */
  async function holder(name: string, answer: Buffer): Promise<string> {
    const path = join(dir, name);
    const server = createServer((sock) => {
      sock.on('error', () => undefined);
      sock.write(SESSION_PROTOCOL.magic);
      sock.once('data', () => sock.end(answer));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(path, r));
    return path;
  }

  it('proves, refuses another container, and calls a holder without whoami unproven', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tbxt-prove-'));
    try {
      const knows = await holder('knows.sock', frame('I', { container: A }));
      assert.deepEqual(await proveHolder(socketTransport(knows), A), { kind: 'proven' });
      assert.deepEqual(await proveHolder(socketTransport(knows), B), { kind: 'other', serves: A });
      // What a holder from an older image answers (images/runtime/toolbox-session `fail`).
      const old = await holder('old.sock', frame('E', { message: "unknown op 'whoami'" }));
      assert.deepEqual(await proveHolder(socketTransport(old), A), { kind: 'unproven' });
      const unsure = await holder('unsure.sock', frame('I', { container: null }));
      assert.deepEqual(await proveHolder(socketTransport(unsure), A), { kind: 'unproven' });
      const odd = await holder('odd.sock', frame('I', { container: 'x'.repeat(100_000) }));
      assert.deepEqual(await proveHolder(socketTransport(odd), A), { kind: 'unproven' });
      // Any other refusal, or nobody there, is not a proof of anything: an error.
      const refuses = await holder('refuses.sock', frame('E', { message: 'the first frame must be a hello' }));
      await assert.rejects(proveHolder(socketTransport(refuses), A), /refused/);
      await assert.rejects(proveHolder(socketTransport(join(dir, 'nobody.sock')), A), /no session holder socket/);
    } finally {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
