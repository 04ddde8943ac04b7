/**
 * The runtime image built from this repository (INSTALL_AGENTS=0): its content (smoke-test.sh)
 * and the entrypoint's behaviour, observed through dockerode in containers that run as an
 * arbitrary uid with no passwd entry, the way the extension runs them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BRIDGE_FILES, ENV } from '../../extension/src/contract/shims';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { RUNTIME_IMAGE_CONTEXT, RUNTIME_IMAGE_REPO } from '../../extension/src/contract/image';
import { buildRuntimeImage, runtimeContextFiles, runtimeImageTag } from '../../extension/src/engine/imageBuild';
import { TEST_LABEL, testNamespace, type TestNamespace } from '../support/docker';
import { ensureTestRuntimeImage, repoRoot } from '../support/image';

const execFileP = promisify(execFile);
const RUN_AS = '4242:4242';
const HELPER = `!${CONTAINER.shimDir}/git-credential-toolbox`;

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Splits docker's multiplexed (non-TTY) log stream into stdout and stderr. */
function demux(buf: Buffer): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const kind = buf[i];
    const len = buf.readUInt32BE(i + 4);
    const chunk = buf.subarray(i + 8, i + 8 + len);
    (kind === 2 ? err : out).push(chunk);
    i += 8 + len;
  }
  return { stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('runtime image', () => {
  let ns: TestNamespace;
  let image: string;
  let seq = 0;

  before(async () => {
    ns = testNamespace();
    image = await ensureTestRuntimeImage();
  });
  after(async () => {
    await ns?.cleanup();
  });

  /** A host directory under the namespace's temp home that an arbitrary uid can read. */
  function hostDir(name: string): string {
    const dir = mkdtempSync(join(ns.home, `${name}-`));
    chmodSync(dir, 0o755);
    return dir;
  }

  async function create(script: string, opts: { binds?: string[]; env?: string[] } = {}) {
    const name = `${ns.names.prefix}-img-${++seq}`;
    return ns.docker.createContainer({
      name,
      Image: image,
      User: RUN_AS,
      Cmd: ['bash', '-c', script],
      Env: opts.env,
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: { NetworkMode: 'none', Binds: opts.binds },
    });
  }

  async function startAndWait(c: Awaited<ReturnType<typeof create>>): Promise<Run> {
    await c.start();
    const { StatusCode } = (await c.wait()) as { StatusCode: number };
    const logs = (await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    return { exitCode: StatusCode, ...demux(logs) };
  }

  async function run(script: string, opts: { binds?: string[]; env?: string[] } = {}): Promise<Run> {
    return startAndWait(await create(script, opts));
  }

  it('tags the image by the content of images/runtime and shims, so any change gives a new tag', () => {
    const root = hostDir('context');
    for (const dir of RUNTIME_IMAGE_CONTEXT.dirs) cpSync(join(repoRoot(), dir), join(root, dir), { recursive: true });
    const files = runtimeContextFiles(root);
    assert.ok(files.includes(RUNTIME_IMAGE_CONTEXT.dockerfile));
    assert.ok(files.includes('shims/code'));
    assert.deepEqual(files, [...files].sort());
    const before = runtimeImageTag(root);
    assert.match(before, new RegExp(`^${RUNTIME_IMAGE_REPO}:[0-9a-f]{12}$`));
    assert.equal(runtimeImageTag(root), before);
    assert.notEqual(runtimeImageTag(root, { INSTALL_AGENTS: '0' }), before);
    writeFileSync(join(root, 'shims', 'code'), '#!/bin/sh\necho changed\n');
    assert.notEqual(runtimeImageTag(root), before);
  });

  it('explains a missing base image and names the script that builds it', async () => {
    const tag = `${ns.names.prefix}-unbuildable:test`;
    await assert.rejects(
      buildRuntimeImage(ns.docker, {
        contextRoot: repoRoot(),
        tag,
        buildArgs: { INSTALL_AGENTS: '0', BASE_IMAGE: `${ns.names.prefix}-missing/base:none` },
        networkMode: 'host',
      }),
      (err: Error) => {
        assert.match(err.message, /Building the runtime image .* failed/);
        assert.match(err.message, new RegExp(`${ns.names.prefix}-missing/base:none`));
        assert.match(err.message, /ensure-base-image\.sh/);
        return true;
      },
    );
    await assert.rejects(ns.docker.getImage(tag).inspect());
  });

  it('passes smoke-test.sh (user, tools, shims, entrypoint as an arbitrary uid)', async () => {
    const script = join(repoRoot(), 'images', 'runtime', 'smoke-test.sh');
    const { stdout } = await execFileP('bash', [script, image], { maxBuffer: 1 << 20 });
    assert.doesNotMatch(stdout, /^FAIL/m);
    assert.match(stdout, /^all \d+ checks passed$/m);
  });

  it('names a uid without a passwd entry toolbox, with working git and a writable /home/toolbox', async () => {
    const r = await run('whoami; id -u; git --version; echo "home=$HOME"; echo hi > "$HOME/probe" && cat "$HOME/probe"');
    assert.equal(r.exitCode, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines[0], CONTAINER.user);
    assert.equal(lines[1], '4242');
    assert.match(lines[2], /^git version \d/);
    assert.equal(lines[3], `home=${CONTAINER.home}`);
    assert.equal(lines[4], 'hi');
  });

  it('trusts a mounted proximo CA system-wide and in $HOME/.pki/nssdb, and re-adds it only when it changed', async (t) => {
    if (!hasOpenssl()) {
      t.skip('openssl is not installed on the host; cannot generate a throwaway CA');
      return;
    }
    const dir = hostDir('ca');
    const pem = join(dir, 'ca.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-keyout',
        join(dir, 'ca.key'),
        '-out',
        pem,
        '-subj',
        `/CN=${ns.names.prefix} test proximo CA`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
      ],
      { stdio: 'ignore' },
    );
    chmodSync(pem, 0o644);

    const c = await create(
      [
        'certutil -d "sql:$HOME/.pki/nssdb" -L',
        'echo "---"',
        'tr -d "\\n" < /etc/ssl/certs/ca-certificates.crt | grep -c -F "$(tr -d "\\n" < /etc/ssl/proximo-ca.pem | sed "s/-----[^-]*-----//g")"',
      ].join('; '),
      { binds: [`${pem}:${CONTAINER.proximoCa}:ro`] },
    );
    const first = await startAndWait(c);
    assert.equal(first.exitCode, 0, first.stderr);
    const [nss, bundle] = first.stdout.split('---\n');
    assert.match(nss, /^proximo\s+C,,\s*$/m, `certutil -L should list nickname proximo with trust C,,:\n${nss}`);
    assert.equal(bundle.trim(), '1', 'the system CA bundle should contain the proximo CA once');
    assert.match(first.stderr, /added the proximo CA to the system store/);

    // Second start of the same container: the system store already holds this CA.
    const second = await startAndWait(c);
    assert.equal(second.exitCode, 0, second.stderr);
    assert.match(second.stdout, /^proximo\s+C,,\s*$/m);
    assert.match(second.stderr, /proximo CA already in the system store/);
  });

  it('points git at git-credential-toolbox when a bridge token is readable', async () => {
    const bridge = hostDir('bridge');
    writeFileSync(join(bridge, BRIDGE_FILES.token), `${'ab'.repeat(32)}\n`, { mode: 0o644 });
    const r = await run('git config --system credential.helper', {
      binds: [`${bridge}:${CONTAINER.bridgeDir}:ro`],
    });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout.trim(), HELPER);
  });

  it('leaves git credentials alone without a token, or when GIT_CREDENTIAL_BRIDGE opts out', async () => {
    const none = await run('git config --system credential.helper || echo unset');
    assert.equal(none.stdout.trim(), 'unset');

    const bridge = hostDir('bridge-off');
    writeFileSync(join(bridge, BRIDGE_FILES.token), `${'cd'.repeat(32)}\n`, { mode: 0o644 });
    const off = await run('git config --system credential.helper || echo unset', {
      binds: [`${bridge}:${CONTAINER.bridgeDir}:ro`],
      env: [`${ENV.gitCredentialBridge}=off`],
    });
    assert.equal(off.stdout.trim(), 'unset');
  });

  it('runs startup scripts in order, and a failing one neither stops the others nor the command', async () => {
    const startup = hostDir('startup');
    writeFileSync(join(startup, '10-first.sh'), 'echo first >> "$HOME/startup-ran"\n', { mode: 0o644 });
    writeFileSync(join(startup, '20-broken.sh'), 'echo broken >> "$HOME/startup-ran"\nexit 3\n', { mode: 0o644 });
    writeFileSync(join(startup, '30-last.sh'), 'echo last >> "$HOME/startup-ran"\n', { mode: 0o644 });
    writeFileSync(join(startup, 'ignored.txt'), 'echo ignored >> "$HOME/startup-ran"\n', { mode: 0o644 });
    const r = await run('cat "$HOME/startup-ran"; echo command-ran', {
      binds: [`${startup}:${CONTAINER.startupDir}:ro`],
    });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['first', 'broken', 'last', 'command-ran']);
    assert.match(r.stderr, /startup script .*20-broken\.sh failed \(exit 3\)/);
  });

  it('runs init.d scripts with a log each, and a failing one does not stop the command', async () => {
    const initd = hostDir('initd');
    writeFileSync(join(initd, 'good.sh'), 'echo good-output\n', { mode: 0o644 });
    writeFileSync(join(initd, 'bad.sh'), 'echo bad-output; exit 5\n', { mode: 0o644 });
    const r = await run(`cat ${CONTAINER.stateDir}/init/good.log ${CONTAINER.stateDir}/init/bad.log; echo command-ran`, {
      binds: [`${initd}:${CONTAINER.initDir}:ro`],
    });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['good-output', 'bad-output', 'command-ran']);
    assert.match(r.stderr, /init script bad failed/);
    assert.doesNotMatch(r.stderr, /init script good failed/);
  });

  it('keeps running its default command after a failing startup script', async () => {
    const startup = hostDir('startup-fail');
    writeFileSync(join(startup, 'fail.sh'), 'exit 1\n', { mode: 0o644 });
    const name = `${ns.names.prefix}-img-${++seq}`;
    const c = await ns.docker.createContainer({
      name,
      Image: image,
      User: RUN_AS,
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: { NetworkMode: 'none', Binds: [`${startup}:${CONTAINER.startupDir}:ro`] },
    });
    await c.start();
    // The entrypoint writes its log before exec; poll for the exec'd command (sleep) to appear as
    // a process of its own (tini's command line names it from the start: it is the entrypoint's argument).
    let top = '';
    const execd = (info: { Processes?: string[][] }) => (info.Processes ?? []).some((p) => p.at(-1) === 'sleep infinity');
    for (let i = 0; i < 100; i++) {
      const info = (await c.top()) as { Processes?: string[][] };
      top = (info.Processes ?? []).map((p) => p.join(' ')).join('\n');
      if (execd(info)) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const state = (await c.inspect()).State;
    assert.equal(state.Running, true);
    assert.match(top, /sleep infinity/);
    const log = await c.exec({ Cmd: ['cat', `${CONTAINER.stateDir}/init/entrypoint.log`], AttachStdout: true, AttachStderr: true });
    const stream = await log.start({ hijack: true, stdin: false });
    const chunks: Buffer[] = [];
    await new Promise<void>((res, rej) => {
      stream.on('data', (b: Buffer) => chunks.push(b));
      stream.on('end', () => res());
      stream.on('error', rej);
    });
    assert.match(demux(Buffer.concat(chunks)).stdout, /startup script .*fail\.sh failed \(exit 1\)/);
    await c.remove({ force: true });
  });
});
