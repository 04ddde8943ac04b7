/**
 * Issue 27, items 1 and 3: a Docker Engine API endpoint per workspace container
 * (engine/dockerEndpoint/server.ts), against the real engine. The host's `docker` CLI is pointed at the
 * endpoint (DOCKER_HOST) and runs what agents run: version, ps, run (with piped stdin), exec -i
 * and -it, logs -f, build; a refusal reaches it as "Error response from daemon: <message>". From
 * inside a real container the endpoint's directory is bind-mounted read-only, as the open path
 * will mount it, and curl talks to it; the runtime image's own docker CLI (with its Compose and
 * Buildx plugins) runs compose and a BuildKit build there. Hostile clients (request smuggling,
 * slowloris, too many connections) are written byte for byte on a raw socket. The lifecycle: a
 * window reload ends the endpoint and the next window serves it again for the running container
 * (engine/dockerEndpoint/served.ts; docs/decisions/0048).
 *
 * The gates here stand in for the policy (plan/dockerEndpoint/policy.ts): one forwards everything (and
 * rewrites create bodies, to prove a body the gate read goes out whole), one refuses volumes at
 * the head and privileged containers in the body. Timeouts are shortened to 1.5 s so that every
 * stream test (logs -f, a quiet exec) outlasts them.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DOCKER_ENDPOINT } from '../../extension/src/contract/dockerEndpoint';
import {
  startDockerEndpoint,
  type DockerEndpoint,
  type EndpointGate,
  type EndpointLimits,
} from '../../extension/src/engine/dockerEndpoint/server';
import { DockerEndpoints } from '../../extension/src/engine/dockerEndpoint/served';
import { planEndpointSocket } from '../../extension/src/plan/dockerEndpoint/socket';
import { TEST_ENGINE, testNamespace } from '../support/docker';
import { ensureTestRuntimeImage } from '../support/image';

const ENGINE_SOCKET = process.env.TOOLBOX_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
const ENGINE = `unix://${ENGINE_SOCKET}`;
const BASE_IMAGE = 'debian:bookworm-slim';
const LIMITS: Partial<EndpointLimits> = { headersMs: 1_500, idleMs: 1_500, bodyMs: 1_500 };
const HIJACK = /^(?:\/v[0-9.]+)?\/(?:containers\/[^/]+\/attach|exec\/[^/]+\/start|session|grpc)$/;
const GATE_LABEL = 'dev.toolbox.test-gate';
const CREATE = /^(?:\/v[0-9.]+)?\/containers\/create$/;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The host's docker CLI against `socket`, with `input` on its stdin (else /dev/null). */
function docker(
  socket: string,
  args: string[],
  opts: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, DOCKER_HOST: `unix://${socket}`, ...opts.env },
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

interface RawReply {
  text: string;
  closed: boolean;
  ms: number;
}

/**
 * Writes `chunks` to the socket (one write each, `gapMs` apart) and collects what comes back until
 * the connection closes or `waitMs` pass.
 */
function raw(socketPath: string, chunks: Array<string | Buffer>, opts: { gapMs?: number; waitMs?: number } = {}): Promise<RawReply> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const socket = connect(socketPath);
    let text = '';
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => finish(false), opts.waitMs ?? 3_000);
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    void (async () => {
      for (const chunk of chunks) {
        if (done || socket.destroyed) return;
        socket.write(chunk);
        if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
      }
    })();
  });
}

const statusOf = (reply: RawReply): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(reply.text)?.[1] ?? 0);
const messageOf = (reply: RawReply): string =>
  (JSON.parse(reply.text.slice(reply.text.indexOf('\r\n\r\n') + 4)) as { message: string }).message;
const responses = (reply: RawReply): number => reply.text.match(/HTTP\/1\.1 \d{3}/g)?.length ?? 0;

let home = '';

describe('a Docker endpoint per workspace container (issue 27)', () => {
  const ns = testNamespace();
  const prefix = ns.names.prefix;
  const runRoot = mkdtempSync(`/tmp/${prefix}-`);
  home = ns.home;
  const seen: string[] = [];
  const created: string[] = [];
  const endpoints: DockerEndpoint[] = [];
  let permissive: DockerEndpoint;
  let refusing: DockerEndpoint;
  let runtimeImage = '';
  const built = `${prefix}-img:1`;
  const builtInside = `${prefix}-img:inside`;
  // The container user as the host sees it: 1000 when the test runs as root (the runtime image's
  // user), else the test's own user, which is all a non-root host can chown to.
  const isRoot = process.getuid?.() === 0;
  const owner = isRoot ? { uid: 1000, gid: 1000 } : { uid: process.getuid!(), gid: process.getgid!() };

  const permissiveGate: EndpointGate = {
    async head(req) {
      seen.push(`${req.method} ${req.target}`);
      const path = req.target.split('?')[0] ?? '';
      if (req.method === 'POST' && CREATE.test(path)) {
        return {
          kind: 'forward',
          target: req.target,
          upgrade: false,
          body: {
            maxBytes: 256 * 1024,
            async check(body) {
              const spec = JSON.parse(body.toString('utf8')) as { Labels?: Record<string, string> };
              spec.Labels = { ...spec.Labels, [GATE_LABEL]: prefix };
              return { kind: 'forward', body: Buffer.from(JSON.stringify(spec)) };
            },
          },
          onResponse(status, body) {
            if (status === 201 && body) created.push((JSON.parse(body.toString('utf8')) as { Id: string }).Id);
          },
        };
      }
      if (req.method === 'GET' && /^(?:\/v[0-9.]+)?\/info$/.test(path)) {
        return {
          kind: 'forward',
          target: req.target,
          upgrade: false,
          response: {
            maxBytes: 1024 * 1024,
            rewrite: (_status, body) =>
              Buffer.from(JSON.stringify({ ...(JSON.parse(body.toString('utf8')) as object), DockerRootDir: '/scrubbed' })),
          },
        };
      }
      return { kind: 'forward', target: req.target, upgrade: HIJACK.test(path) };
    },
  };
  const refusingGate: EndpointGate = {
    async head(req) {
      seen.push(`${req.method} ${req.target}`);
      const path = req.target.split('?')[0] ?? '';
      if (/^(?:\/v[0-9.]+)?\/volumes(?:\/|$)/.test(path)) {
        return { kind: 'refuse', status: 403, rule: 'test-volumes', message: 'volumes are not for this container (test gate)' };
      }
      if (req.method === 'POST' && CREATE.test(path)) {
        return {
          kind: 'forward',
          target: req.target,
          upgrade: false,
          body: {
            maxBytes: 256 * 1024,
            async check(body) {
              const spec = JSON.parse(body.toString('utf8')) as { HostConfig?: { Privileged?: boolean } };
              return spec.HostConfig?.Privileged
                ? { kind: 'refuse', status: 403, rule: 'test-privileged', message: 'privileged containers are refused (test gate)' }
                : { kind: 'forward', body };
            },
          },
        };
      }
      return { kind: 'forward', target: req.target, upgrade: HIJACK.test(path) };
    },
  };

  const place = (container: string) =>
    planEndpointSocket({ engine: ENGINE, container, uid: process.getuid!(), platform: process.platform, tmpRoot: runRoot });
  const start = async (container: string, gate: EndpointGate, limits: Partial<EndpointLimits> = LIMITS): Promise<DockerEndpoint> => {
    const e = await startDockerEndpoint({
      socketPath: place(container).socketPath,
      upstream: { socketPath: ENGINE_SOCKET },
      gate,
      log: () => undefined,
      owner,
      limits,
    });
    endpoints.push(e);
    return e;
  };
  const name = (suffix: string) => `${prefix}-${suffix}`;
  const exists = async (container: string) =>
    ns.docker
      .getContainer(container)
      .inspect()
      .then(() => true)
      .catch(() => false);

  before(async () => {
    await ns.docker
      .getImage(BASE_IMAGE)
      .inspect()
      .catch(() => assert.fail(`${BASE_IMAGE} must be present locally (tests never pull).`));
    runtimeImage = await ensureTestRuntimeImage();
    permissive = await start(name('permissive-0000aaaa'), permissiveGate);
    refusing = await start(name('refusing-0000bbbb'), refusingGate);
  });

  after(async () => {
    await Promise.all(endpoints.map((e) => e.close()));
    await ns.cleanup();
    for (const image of [built, builtInside]) {
      await ns.docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
    }
    // Compose's default network, should a failed run have left it (compose down removes it).
    await ns.docker
      .getNetwork(`${prefix}-compose_default`)
      .remove()
      .catch(() => undefined);
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('serves its socket 0600 in a 0700 directory, both the container user’s', () => {
    const plan = place(name('permissive-0000aaaa'));
    const dir = statSync(plan.dir);
    const sock = statSync(plan.socketPath);
    assert.equal(dir.mode & 0o777, 0o700);
    assert.equal(sock.mode & 0o777, 0o600);
    assert.ok(sock.isSocket());
    assert.deepEqual([dir.uid, dir.gid, sock.uid, sock.gid], [owner.uid, owner.gid, owner.uid, owner.gid]);
  });

  describe('the docker CLI on the host, through the endpoint', () => {
    it('docker version, docker ps, and docker info as the gate rewrote it', async () => {
      const direct = await docker(ENGINE_SOCKET, ['version', '--format', '{{.Server.Version}}']);
      const through = await docker(permissive.socketPath, ['version', '--format', '{{.Server.Version}}']);
      assert.equal(through.code, 0, through.stderr);
      assert.equal(through.stdout, direct.stdout);
      const ps = await docker(permissive.socketPath, ['ps', '--all', '--format', '{{.Names}}']);
      assert.equal(ps.code, 0, ps.stderr);
      assert.ok(
        seen.some((s) => /^GET \/v[0-9.]+\/containers\/json/.test(s)),
        'the gate saw the listing',
      );
      const info = await docker(permissive.socketPath, ['info', '--format', '{{.DockerRootDir}}']);
      assert.deepEqual([info.code, info.stdout.trim()], [0, '/scrubbed'], 'the gate rewrote /info’s answer');
    });

    it('docker run --rm … true; the create body the gate rewrote went out whole', async () => {
      const run = await docker(permissive.socketPath, ['run', '--rm', '--name', name('run'), BASE_IMAGE, 'true']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(created.length, 1, 'onResponse saw the create’s JSON answer');
      const labelled = await docker(permissive.socketPath, ['create', '--name', name('labelled'), BASE_IMAGE, 'true']);
      assert.equal(labelled.code, 0, labelled.stderr);
      const info = await ns.docker.getContainer(name('labelled')).inspect();
      assert.equal(info.Config.Labels[GATE_LABEL], prefix);
      assert.equal(info.Id, created[1]);
    });

    it('docker run -i with stdin piped (attach, half-closed)', async () => {
      const run = await docker(
        permissive.socketPath,
        ['run', '-i', '--rm', '--name', name('run-i'), BASE_IMAGE, 'sh', '-c', 'cat; echo end'],
        {
          input: 'hello\nworld\n',
        },
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'hello\nworld\nend\n');
    });

    it('docker exec -i (hijack): input, exit codes, and a stream quiet for longer than every timeout', async () => {
      const started = await docker(permissive.socketPath, ['run', '-d', '--name', name('exec'), BASE_IMAGE, 'sleep', '600']);
      assert.equal(started.code, 0, started.stderr);
      const cat = await docker(permissive.socketPath, ['exec', '-i', name('exec'), 'sh', '-c', 'cat; echo done'], { input: 'a\nb\n' });
      assert.deepEqual([cat.code, cat.stdout], [0, 'a\nb\ndone\n'], cat.stderr);
      const three = await docker(permissive.socketPath, ['exec', '-i', name('exec'), 'sh', '-c', 'exit 3'], { input: '' });
      assert.equal(three.code, 3, three.stderr);
      const quiet = await docker(permissive.socketPath, ['exec', name('exec'), 'sh', '-c', 'sleep 2.5; echo late']);
      assert.deepEqual([quiet.code, quiet.stdout], [0, 'late\n'], quiet.stderr);
      assert.equal(permissive.stats().hijacksOpen, 0, 'every hijack ended with its exec');
    });

    it('docker exec -it in a terminal exits cleanly (TTY, resize)', async (t) => {
      if (spawnSync('script', ['--version']).status !== 0)
        return t.skip('util-linux script(1) is not installed: no terminal to run -it in');
      // script's terminal has no size (its stdin is not one): give it one, which the CLI passes on
      // with a resize just after the exec starts (API 1.41 has no size at start), hence the sleep.
      const cmd = `stty rows 30 cols 100; docker exec -it ${name('exec')} sh -c 'sleep 1; stty size; echo tty-ok; exit 4'`;
      const run = await new Promise<Run>((resolve) => {
        const child = spawn('script', ['-qec', cmd, '/dev/null'], {
          env: { PATH: process.env.PATH ?? '', HOME: home, DOCKER_HOST: `unix://${permissive.socketPath}` },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr: '' }));
      });
      assert.match(run.stdout, /30 100\r?\ntty-ok\r?\n/);
      assert.equal(run.code, 4);
      assert.ok(
        seen.some((s) => /^POST \/v[0-9.]+\/exec\/[0-9a-f]+\/resize/.test(s)),
        'the CLI sized the terminal through the endpoint',
      );
    });

    it('docker logs -f follows a container that prints with pauses longer than every timeout, and ends with it', async () => {
      const started = await docker(permissive.socketPath, [
        'run',
        '-d',
        '--name',
        name('logs'),
        BASE_IMAGE,
        'sh',
        '-c',
        'for i in 1 2 3; do echo line$i; sleep 2; done',
      ]);
      assert.equal(started.code, 0, started.stderr);
      const logs = await docker(permissive.socketPath, ['logs', '-f', name('logs')]);
      assert.deepEqual([logs.code, logs.stdout], [0, 'line1\nline2\nline3\n'], logs.stderr);
    });

    it('docker build of a two-line Dockerfile (BuildKit when the CLI has buildx, else the classic builder)', async (t) => {
      const buildx = spawnSync('docker', ['buildx', 'version'], { env: { PATH: process.env.PATH ?? '', HOME: home } }).status === 0;
      const context = join(runRoot, 'context');
      mkdirSync(context, { recursive: true });
      writeFileSync(join(context, 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN echo built > /built\n`);
      const build = await docker(permissive.socketPath, ['build', '--network', 'none', '-t', built, context], {
        env: { DOCKER_BUILDKIT: buildx ? '1' : '0' },
        timeoutMs: 180_000,
      });
      t.diagnostic(`builder: ${buildx ? 'BuildKit (buildx)' : 'classic (the CLI has no buildx)'}`);
      assert.equal(build.code, 0, build.stderr + build.stdout);
      if (buildx)
        assert.ok(
          seen.some((s) => /\/session$/.test(s)),
          'BuildKit ran its session through the endpoint',
        );
      const check = await docker(permissive.socketPath, ['run', '--rm', '--name', name('built'), built, 'cat', '/built']);
      assert.deepEqual([check.code, check.stdout], [0, 'built\n'], check.stderr);
    });

    it('shows a refusal as "Error response from daemon: <message>", at the head and in the body', async () => {
      const volumes = await docker(refusing.socketPath, ['volume', 'ls']);
      assert.notEqual(volumes.code, 0);
      assert.match(volumes.stderr, /Error response from daemon: volumes are not for this container \(test gate\)/);
      const privileged = await docker(refusing.socketPath, ['run', '--rm', '--privileged', '--name', name('priv'), BASE_IMAGE, 'true']);
      assert.notEqual(privileged.code, 0);
      assert.match(privileged.stderr, /Error response from daemon: privileged containers are refused \(test gate\)/);
      assert.equal(await exists(name('priv')), false, 'nothing was created');
      const ps = await docker(refusing.socketPath, ['ps']);
      assert.equal(ps.code, 0, 'what the gate allows still works');
    });
  });

  it('from inside a container that mounts the endpoint directory read-only, as its user only', async () => {
    const mounts = [
      '-v',
      `${place(name('permissive-0000aaaa')).dir}:${DOCKER_ENDPOINT.containerDir}:ro`,
      '-v',
      `${place(name('refusing-0000bbbb')).dir}:/run/refusing:ro`,
    ];
    const script = [
      `curl -sS --unix-socket ${DOCKER_ENDPOINT.containerSocket} http://docker/v1.41/containers/json?all=1`,
      'echo',
      `curl -sS -w '\\n%{http_code}\\n' --unix-socket /run/refusing/${DOCKER_ENDPOINT.socket} http://docker/v1.41/volumes`,
      `rm -f ${DOCKER_ENDPOINT.containerSocket} 2>/dev/null || echo read-only`,
    ].join('; ');
    const user = `${owner.uid}:${owner.gid}`;
    const run = await docker(ENGINE_SOCKET, [
      'run',
      '--rm',
      '--name',
      name('inside'),
      '--user',
      user,
      ...mounts,
      '--entrypoint',
      'sh',
      runtimeImage,
      '-c',
      script,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const [list, refusal, status, ro] = run.stdout.split('\n').filter((l) => l !== '');
    const names = (JSON.parse(list as string) as Array<{ Names: string[] }>).flatMap((c) => c.Names);
    assert.ok(names.includes(`/${name('exec')}`), 'the listing came from the engine');
    assert.equal(status, '403');
    assert.deepEqual(JSON.parse(refusal as string), { message: 'volumes are not for this container (test gate)' });
    assert.equal(ro, 'read-only', 'the container cannot replace its endpoint');
    if (isRoot) {
      const other = await docker(ENGINE_SOCKET, [
        'run',
        '--rm',
        '--name',
        name('other-user'),
        '--user',
        '1001:1001',
        ...mounts,
        '--entrypoint',
        'curl',
        runtimeImage,
        '-sS',
        '--unix-socket',
        DOCKER_ENDPOINT.containerSocket,
        'http://docker/_ping',
      ]);
      // By what curl says, not by the exit code: Podman 4.3's `docker run --rm` exits 0 whatever the container did.
      assert.doesNotMatch(other.stdout, /OK/, 'another uid in the container gets no answer');
      assert.match(other.stderr, /Failed to connect|Permission denied/, 'another uid in the container cannot connect');
    }
  });

  it('the runtime image’s own docker CLI through the endpoint: compose up and down, and docker build with BuildKit (buildx; Podman has none: the classic builder)', async () => {
    const context = join(runRoot, 'inside-context');
    mkdirSync(context, { recursive: true });
    writeFileSync(join(context, 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN echo built-inside > /built\n`);
    writeFileSync(
      join(context, 'compose.yaml'),
      `services:\n  web:\n    image: ${BASE_IMAGE}\n    pull_policy: never\n    network_mode: none\n    command: ["echo", "compose-ok"]\n`,
    );
    const project = name('compose');
    // Podman serves no BuildKit: buildx there boots a moby/buildkit container of its own instead.
    const buildkit = TEST_ENGINE === 'docker';
    const compose = `docker compose -p ${project} -f /ctx/compose.yaml`;
    const script = [
      'set -e',
      "docker version --format 'server {{.Server.Version}}'",
      `${compose} up --abort-on-container-exit --no-color`,
      `${compose} down`,
      `${buildkit ? '' : 'DOCKER_BUILDKIT=0 '}docker build --network none -t ${builtInside} /ctx`,
      `docker run --rm --network none --name ${name('built-inside')} ${builtInside} cat /built`,
    ].join('\n');
    const sessions = seen.filter((s) => /\/session$/.test(s)).length;
    const run = await docker(
      ENGINE_SOCKET,
      [
        'run',
        '--rm',
        '--name',
        name('cli-inside'),
        '--user',
        `${owner.uid}:${owner.gid}`,
        '--network',
        'none',
        '-e',
        `DOCKER_HOST=unix://${DOCKER_ENDPOINT.containerSocket}`,
        '-v',
        `${place(name('permissive-0000aaaa')).dir}:${DOCKER_ENDPOINT.containerDir}:ro`,
        '-v',
        `${context}:/ctx:ro`,
        '--entrypoint',
        'bash',
        runtimeImage,
        '-c',
        script,
      ],
      { timeoutMs: 240_000 },
    );
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const direct = await docker(ENGINE_SOCKET, ['version', '--format', 'server {{.Server.Version}}']);
    assert.match(run.stdout, new RegExp(`^${direct.stdout.trim().replace(/[.+]/g, '\\$&')}$`, 'm'), 'docker version reached the engine');
    assert.match(run.stdout, /compose-ok/, 'the compose service ran');
    assert.match(run.stdout, /^built-inside$/m, 'the image built inside runs');
    if (buildkit)
      assert.ok(seen.filter((s) => /\/session$/.test(s)).length > sessions, 'docker build went to BuildKit through the endpoint');
    assert.equal(await exists(`${project}-web-1`), false, 'compose down removed its container');
  });

  describe('hostile clients, on a raw socket', () => {
    const http = (lines: string[], body = '') => `${lines.join('\r\n')}\r\n\r\n${body}`;

    it('refuses ambiguous framing before the gate (request smuggling)', async () => {
      const before = seen.length;
      const cases = [
        http(['POST /v1.41/containers/create HTTP/1.1', 'Host: d', 'Content-Length: 4', 'Transfer-Encoding: chunked'], '0\r\n\r\n'),
        http(['POST /v1.41/containers/create HTTP/1.1', 'Host: d', 'Content-Length: 2', 'Content-Length: 2'], '{}'),
        http(['GET /v1.41/containers/json HTTP/1.1', 'Host: d', 'X-A: a', ' folded'], ''),
        http(['POST /v1.41/containers/create HTTP/1.1', 'Host: d', 'Transfer-Encoding: chunked, identity'], '0\r\n\r\n'),
        http(['GET http://evil/v1.41/volumes HTTP/1.1', 'Host: d']),
      ];
      for (const c of cases) {
        const reply = await raw(refusing.socketPath, [c]);
        assert.equal(statusOf(reply), 400, c);
        assert.ok(reply.closed, 'and the connection closed');
      }
      assert.equal(seen.length, before, 'the gate never saw them');
    });

    it('refuses oversized heads: too many headers, a long header, a long target', async () => {
      const many = await raw(refusing.socketPath, [
        http(['GET /_ping HTTP/1.1', 'Host: d', ...Array.from({ length: 150 }, (_, i) => `X-${i}: v`)]),
      ]);
      assert.equal(statusOf(many), 431);
      const long = await raw(refusing.socketPath, [http(['GET /_ping HTTP/1.1', 'Host: d', `X-Big: ${'a'.repeat(130 * 1024)}`])]);
      assert.equal(statusOf(long), 431);
      const target = await raw(refusing.socketPath, [http([`GET /${'a'.repeat(65 * 1024)} HTTP/1.1`, 'Host: d'])]);
      assert.equal(statusOf(target), 414);
      assert.match(messageOf(target), /request target is over the 65536-byte limit/);
    });

    it('forwards nothing a client hides behind a refused request or a hijack that is not taken', async () => {
      const smuggled = http(
        [
          'POST /v1.41/containers/create?name=' + name('smuggled') + ' HTTP/1.1',
          'Host: d',
          'Content-Type: application/json',
          'Content-Length: 2',
        ],
        '{}',
      );
      const afterRefusal = await raw(refusing.socketPath, [http(['GET /v1.41/volumes HTTP/1.1', 'Host: d']) + smuggled]);
      assert.equal(statusOf(afterRefusal), 403);
      assert.equal(responses(afterRefusal), 1);
      const body = '{"Detach":false,"Tty":false}';
      const hijack = http(
        [
          'POST /v1.41/exec/0000000000000000/start HTTP/1.1',
          'Host: d',
          'Connection: Upgrade',
          'Upgrade: tcp',
          'Content-Type: application/json',
          `Content-Length: ${body.length}`,
        ],
        body,
      );
      const afterHijack = await raw(refusing.socketPath, [hijack + smuggled], { waitMs: 5_000 });
      assert.equal(statusOf(afterHijack), 404, afterHijack.text);
      assert.equal(responses(afterHijack), 1);
      assert.ok(afterHijack.closed);
      assert.equal(await exists(name('smuggled')), false, 'the hidden create never reached the engine');
      assert.ok(!seen.some((s) => s.includes(name('smuggled'))), 'nor the gate');
    });

    it('sends a hijack target without the upgrade headers as an ordinary request (the raw stream as its body); refuses an upgrade elsewhere, and bodies over the gate’s bound', async () => {
      // dockerode's exec start and attach without hijack (Testcontainers' port wait strategy): the engine answers 200 with a raw stream.
      const attach = await raw(refusing.socketPath, [
        http(['POST /v1.41/containers/' + name('exec') + '/attach?stream=1&stdout=1 HTTP/1.1', 'Host: d', 'Content-Length: 0']),
      ]);
      assert.equal(statusOf(attach), 200, attach.text);
      assert.match(attach.text.toLowerCase(), /\r\ncontent-type: application\/vnd\.docker\.(raw|multiplexed)-stream\r\n/);
      const info = await raw(permissive.socketPath, [http(['GET /v1.41/info HTTP/1.1', 'Host: d', 'Connection: Upgrade', 'Upgrade: tcp'])]);
      assert.equal(statusOf(info), 400, 'an upgrade would pass the answer by the gate’s rewrite');
      assert.match(messageOf(info), /does not take the connection over/);
      const declared = await raw(refusing.socketPath, [
        http(['POST /v1.41/containers/create HTTP/1.1', 'Host: d', `Content-Length: ${300 * 1024}`]),
      ]);
      assert.equal(statusOf(declared), 413);
      const chunk = `${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`;
      const chunked = await raw(
        refusing.socketPath,
        [
          http(['POST /v1.41/containers/create HTTP/1.1', 'Host: d', 'Transfer-Encoding: chunked']),
          ...Array.from({ length: 6 }, () => chunk),
        ],
        { gapMs: 10 },
      );
      assert.equal(statusOf(chunked), 413);
    });

    it('closes slow and idle clients (slowloris): a trickled head, nothing at all, an idle keep-alive, a trickled body', async () => {
      const head = 'GET /_ping HTTP/1.1\r\nHost: d\r\nX-Slow: ';
      const trickle = await raw(refusing.socketPath, [head, ...Array.from({ length: 40 }, () => 'a')], { gapMs: 200, waitMs: 6_000 });
      assert.ok(trickle.closed && trickle.ms < 4_000, `closed after ${Math.round(trickle.ms)} ms`);
      assert.equal(statusOf(trickle), 408);
      const idle = await raw(refusing.socketPath, [], { waitMs: 6_000 });
      assert.ok(idle.closed && idle.ms < 4_000, `idle closed after ${Math.round(idle.ms)} ms`);
      const kept = await raw(refusing.socketPath, [http(['GET /_ping HTTP/1.1', 'Host: d'])], { waitMs: 6_000 });
      assert.equal(statusOf(kept), 200);
      assert.ok(kept.closed && kept.ms < 4_000, `keep-alive closed after ${Math.round(kept.ms)} ms`);
      const body = await raw(
        refusing.socketPath,
        [http(['POST /v1.41/containers/create HTTP/1.1', 'Host: d', 'Content-Length: 100'], '{"Image"')],
        {
          waitMs: 6_000,
        },
      );
      assert.equal(statusOf(body), 408);
    });

    it('caps open connections: the next one is told 503, and served again once one closes', async () => {
      const capped = await start(name('capped-0000cccc'), permissiveGate, { ...LIMITS, headersMs: 10_000, maxConnections: 3 });
      const open: Socket[] = [];
      for (let i = 0; i < 3; i++) {
        const s = connect(capped.socketPath);
        await new Promise((r) => s.once('connect', r));
        open.push(s);
      }
      await new Promise((r) => setTimeout(r, 50));
      const over = await raw(capped.socketPath, [http(['GET /_ping HTTP/1.1', 'Host: d'])]);
      assert.equal(statusOf(over), 503);
      assert.match(messageOf(over), /Too many open connections to this Docker endpoint \(the limit is 3\)/);
      open.pop()?.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const again = await raw(capped.socketPath, [http(['GET /_ping HTTP/1.1', 'Host: d', 'Connection: close'])]);
      assert.equal(statusOf(again), 200);
      for (const s of open) s.destroy();
      assert.ok(capped.stats().overCap >= 1);
    });
  });

  it('a reloaded window serves the endpoint again where the running container’s directory mount points', async () => {
    const container = name('adopt-0123abcd');
    const host = { uid: process.getuid!(), platform: process.platform, tmpRoot: runRoot };
    const first = new DockerEndpoints({ host, log: () => undefined, limits: LIMITS });
    const served = await first.ensure({ engine: ENGINE, container, upstream: { socketPath: ENGINE_SOCKET }, gate: permissiveGate, owner });
    const user = `${owner.uid}:${owner.gid}`;
    const dirMount = `${served.plan.dir}:${DOCKER_ENDPOINT.containerDir}:ro`;
    // Beside it, the mount decision 0048 rejects: the socket file itself.
    const fileMount = `${served.plan.socketPath}:/run/file-mounted.sock`;
    const run = await docker(ENGINE_SOCKET, [
      'run',
      '-d',
      '--name',
      container,
      '--user',
      user,
      '-v',
      dirMount,
      '-v',
      fileMount,
      '--entrypoint',
      'sleep',
      runtimeImage,
      '600',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const ping = async (sock: string) =>
      (await docker(ENGINE_SOCKET, ['exec', container, 'curl', '-sS', '--max-time', '5', '--unix-socket', sock, 'http://docker/_ping']))
        .stdout;
    assert.equal(await ping(DOCKER_ENDPOINT.containerSocket), 'OK');
    assert.equal(await ping('/run/file-mounted.sock'), 'OK');

    await first.dispose(); // the window goes away
    assert.notEqual(await ping(DOCKER_ENDPOINT.containerSocket), 'OK');

    const second = new DockerEndpoints({ host, log: () => undefined, limits: LIMITS });
    const adopted = await second.adoptRunning(
      { docker: ns.docker, names: ns.names },
      { engine: ENGINE, upstream: { socketPath: ENGINE_SOCKET }, gateFor: () => permissiveGate },
    );
    assert.deepEqual(adopted, [container], 'only the running container of ours that mounts its endpoint');
    assert.equal(await ping(DOCKER_ENDPOINT.containerSocket), 'OK', 'the directory mount reaches the new socket');
    assert.notEqual(await ping('/run/file-mounted.sock'), 'OK', 'a file mount still holds the dead socket');

    await ns.docker.getContainer(container).remove({ force: true });
    await second.release(ENGINE, container, { removeDir: true });
    assert.equal(statSync(served.plan.dir, { throwIfNoEntry: false }), undefined);
    await second.dispose();
  });
});
