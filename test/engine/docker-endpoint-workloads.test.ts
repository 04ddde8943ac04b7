/**
 * Issue 27: what agents really run against Docker works through a workspace container's own
 * endpoint (decisions 0047, 0048), typed into a held shell of a default workspace container
 * opened through the backend a window runs, with the image's own docker CLI (decision 0049):
 *
 * - Compose: two services, a named volume, a published port reached from the workspace
 *   container through host.docker.internal; `down` keeps the named volume, `down -v` removes it.
 * - Testcontainers (Node, the library from this repository's node_modules, run by the host's node
 *   binary bound read-only into the container through `mounts:` in ~/.toolbox.yaml): a
 *   GenericContainer started, fetched over its mapped port, stopped; it carried the owner label.
 *   Its client sends two requests the endpoint refused before: an exec start without upgrade
 *   headers (its port wait strategy) and a stop with its options as a JSON body (decision 0047,
 *   "Testcontainers", says how they pass now).
 *
 * Every object the container makes goes through its endpoint, so it carries the owner label with
 * the workspace container's name; the after hook removes those (removeNamespaceObjects).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import type { StartedShell } from '../../extension/src/backend/api';
import { docker, removeNamespaceObjects } from '../support/docker';
import { testBackend, type TestBackend } from '../support/backend';
import { ensureTestRuntimeImage, repoRoot } from '../support/image';
import { screen } from '../support/screen';
import { silentLog } from '../support/vscodeLite';

const BASE_IMAGE = 'debian:bookworm-slim';
/** Where ~/.toolbox.yaml's mounts: put the host's node and this repository's node_modules. */
const NODE_BIN = '/usr/local/bin/node';
const NODE_MODULES = '/opt/toolbox-test/node_modules';

function output(shell: StartedShell) {
  return screen({ onDidWrite: (listener: (text: string) => void) => shell.stream.on('data', (d: Buffer) => listener(d.toString('utf8'))) });
}

describe('workloads through a workspace container’s Docker endpoint, from its own shell (issue 27)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  /** The extension's log lines about the endpoint: a refusal names its rule there. */
  const logged: string[] = [];
  const log = {
    ...silentLog,
    info: (m: string) => logged.push(m),
    warn: (m: string) => logged.push(m),
    error: (m: string) => logged.push(m),
  };
  let home: string;
  let folder: string;
  let image: string;
  let backend: TestBackend;
  let container: string;
  let shellCount = 0;

  /** A new held shell in the workspace container; run() types a command line and waits for its marker. */
  const shell = async () => {
    const s = await (
      await backend.prepareShell({ folder })
    ).open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    container = s.name;
    const started = await s.start({ cols: 250, rows: 40 });
    const out = output(started);
    const tag = `s${++shellCount}`;
    let step = 0;
    /**
     * Runs `command`, then prints `<TAG-n rc>` upper-cased by tr, which the echoed command line
     * cannot show; resolves with what the command printed (between the two markers) and its exit code.
     */
    const send = (command: string) => {
      const n = `${tag}-${++step}`.toUpperCase();
      const from = out.text.length;
      started.stream.write(`echo begin-${n} | tr a-z A-Z; ${command}; echo "end-${n} $?" | tr a-z A-Z\r`);
      return {
        /** Waits for a pattern in what the command printed so far (the command line's echo is not looked at). */
        waitFor: async (pattern: RegExp, timeoutMs = 120_000) => {
          // Or the end marker: a command that ended without printing it fails at once, with what it printed.
          await out.waitFor(new RegExp(`BEGIN-${n}[^]*(?:${pattern.source}|END-${n} \\d+)`), timeoutMs);
          const printed = out.text.slice(out.text.indexOf(`BEGIN-${n}`, from));
          const m = pattern.exec(printed);
          if (!m) throw new Error(`the command ended without printing ${pattern}: ${printed}`);
          return m;
        },
        /** Resolves with what the command printed (between the two markers) and its exit code. */
        done: async (timeoutMs = 120_000): Promise<{ rc: number; text: string }> => {
          const end = await out.waitFor(new RegExp(`END-${n} (\\d+)`), timeoutMs);
          const all = out.text.slice(from);
          const begin = all.indexOf(`BEGIN-${n}`);
          return { rc: Number(end[1]), text: all.slice(begin + `BEGIN-${n}`.length, all.indexOf(`END-${n}`, begin)) };
        },
      };
    };
    /** Runs `command` and waits for its end marker, which the echoed command line cannot show (tr upper-cases it). */
    const run = (command: string, timeoutMs = 120_000) => send(command).done(timeoutMs);
    return { run, send, type: (text: string) => started.stream.write(text), dispose: () => started.dispose() };
  };

  const refusals = (from = 0) => logged.slice(from).filter((l) => / refused /.test(l));
  /** What the endpoint refused during a test, in its report (lookups of objects not made yet are 404s there). */
  const report = (t: TestContext, from: number) => {
    for (const line of refusals(from)) t.diagnostic(line);
  };

  before(async () => {
    image = await ensureTestRuntimeImage();
    await docker()
      .getImage(BASE_IMAGE)
      .inspect()
      .catch(() => assert.fail(`${BASE_IMAGE} must be present locally (tests never pull).`));
    home = mkdtempSync(join(tmpdir(), 'tbxt-endpoint-workloads-'));
    folder = join(realpathSync(home), 'project');
    mkdirSync(folder);
    // The runtime test image has no Node (INSTALL_AGENTS=0): the host's node (it links only libc,
    // libstdc++ and libgcc_s, which the image has) and this repository's node_modules, read-only.
    writeFileSync(
      join(home, '.toolbox.yaml'),
      [
        `image: ${image}`,
        'mounts:',
        `  - {name: tbxt-node, source: ${realpathSync(process.execPath)}, target: ${NODE_BIN}, readonly: true}`,
        `  - {name: tbxt-node-modules, source: ${join(repoRoot(), 'node_modules')}, target: ${NODE_MODULES}, readonly: true}`,
        '',
      ].join('\n'),
    );
    writeFileSync(join(folder, '.toolbox.yaml'), 'peer_messaging: false\n');
    backend = testBackend(names, home, { pathExists: existsSync, log: log as never });
  });

  after(async () => {
    backend?.dispose();
    // Whatever a failed test left: labelled with the workspace container's name (its children), or named in the namespace.
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  it('docker compose: up, ps, the web service over its published port, down keeps the named volume, down -v removes it', async (t) => {
    const from = logged.length;
    const project = `${names.prefix}proj`;
    mkdirSync(join(folder, 'site'));
    writeFileSync(join(folder, 'site', 'index.txt'), 'served-through-compose\n');
    writeFileSync(
      join(folder, 'compose.yaml'),
      [
        'services:',
        '  db:',
        `    image: ${BASE_IMAGE}`,
        '    pull_policy: never',
        '    command: ["sleep", "infinity"]',
        '    volumes:',
        '      - data:/data',
        '  web:',
        `    image: ${image}`,
        '    pull_policy: never',
        '    command: ["python3", "-m", "http.server", "8000", "--directory", "/site"]',
        '    volumes:',
        '      - ./site:/site:ro',
        '    ports:',
        // A free host port on every address: the workspace container reaches it through host.docker.internal.
        '      - "8000"',
        'volumes:',
        '  data: {}',
        '',
      ].join('\n'),
    );
    const sh = await shell();
    const compose = `docker compose -p ${project}`;
    try {
      const up = await sh.run(`${compose} up -d 2>&1`, 180_000);
      assert.equal(up.rc, 0, `${up.text}\n${refusals().join('\n')}`);
      const ps = await sh.run(`${compose} ps --format '{{.Service}} {{.State}}' 2>&1`);
      assert.equal(ps.rc, 0, ps.text);
      assert.match(ps.text, /^db running/m, ps.text);
      assert.match(ps.text, /^web running/m, ps.text);
      const port = await sh.run(`${compose} port web 8000 2>&1`);
      assert.equal(port.rc, 0, port.text);
      const hostPort = /:(\d+)\s*$/m.exec(port.text)?.[1];
      assert.ok(hostPort, port.text);
      // The server may take a moment to listen: curl retries a refused connection, bounded.
      const got = await sh.run(
        `curl -sS --retry 50 --retry-delay 0 --retry-connrefused --retry-max-time 30 --max-time 5 http://host.docker.internal:${hostPort}/index.txt 2>&1 | tr a-z A-Z`,
      );
      assert.match(got.text, /SERVED-THROUGH-COMPOSE/, got.text);

      const owned = { label: [`${LABELS.dockerOwner}=${container}`, `com.docker.compose.project=${project}`] };
      const listed = async () => ({
        containers: (await docker().listContainers({ all: true, filters: JSON.stringify(owned) }))
          .map((c) => c.Labels['com.docker.compose.service'])
          .sort(),
        networks: (await docker().listNetworks({ filters: JSON.stringify(owned) })).map((n) => n.Name),
        volumes: ((await docker().listVolumes({ filters: JSON.stringify(owned) })).Volumes ?? []).map((v) => v.Name),
      });
      assert.deepEqual(
        await listed(),
        { containers: ['db', 'web'], networks: [`${project}_default`], volumes: [`${project}_data`] },
        'the owner label on all of them',
      );

      const down = await sh.run(`${compose} down 2>&1`, 120_000);
      assert.equal(down.rc, 0, down.text);
      const vols = await sh.run(`docker volume ls --format '{{.Name}}' | tr a-z A-Z`);
      assert.match(vols.text, new RegExp(`^${project.toUpperCase()}_DATA`, 'm'), 'down keeps the named volume');
      assert.deepEqual(await listed(), { containers: [], networks: [], volumes: [`${project}_data`] });

      const downV = await sh.run(`${compose} down -v 2>&1`, 120_000);
      assert.equal(downV.rc, 0, downV.text);
      const after = await sh.run(`docker volume ls --format '{{.Name}}' | tr a-z A-Z`);
      assert.doesNotMatch(after.text, new RegExp(`^${project.toUpperCase()}_DATA`, 'm'), 'down -v removes it');
      assert.deepEqual(await listed(), { containers: [], networks: [], volumes: [] });
    } finally {
      sh.dispose();
      report(t, from);
    }
  });

  it('Testcontainers (Node): a GenericContainer started, reached over its mapped port, labelled as the workspace container’s, stopped', async (t) => {
    const from = logged.length;
    writeFileSync(
      join(folder, 'tc.js'),
      [
        // Ryuk's image (testcontainers/ryuk) cannot be pulled on this test machine (no registry but
        // npm's): the script stops its own container instead. Set here, not in the container's env.
        "process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';",
        `const { GenericContainer } = require('${NODE_MODULES}/testcontainers');`,
        '(async () => {',
        `  const c = await new GenericContainer('${image}').withCommand(['python3', '-m', 'http.server', '8000']).withExposedPorts(8000).start();`,
        '  const res = await fetch(`http://${c.getHost()}:${c.getMappedPort(8000)}/`);',
        "  console.log('tc-id', c.getId());",
        "  console.log('tc-host', c.getHost());",
        '  console.log(`tc-status ${res.status}`);',
        // The test looks at the container from the host, then types a line to let the script stop it.
        "  await new Promise((resolve) => process.stdin.once('data', resolve));",
        '  await c.stop();',
        "  console.log('tc-stopped');",
        '  process.exit(0);',
        '})().catch((e) => { console.error(e); process.exit(1); });',
        '',
      ].join('\n'),
    );
    const sh = await shell();
    try {
      const run = sh.send('node tc.js 2>&1');
      const [, id] = await run.waitFor(/tc-id ([0-9a-f]{64})/, 180_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${refusals().join('\n')}`);
      });
      const info = await docker().getContainer(id!).inspect();
      assert.equal(info.Config.Labels[LABELS.dockerOwner], container, 'the endpoint labelled it as the workspace container’s');
      assert.equal(info.State.Running, true);
      await run.waitFor(/tc-status \d+/);
      sh.type('stop\r');
      const done = await run.done(120_000);
      assert.equal(done.rc, 0, `${done.text}\n${refusals().join('\n')}`);
      assert.match(done.text, /tc-host host\.docker\.internal/, done.text);
      assert.match(done.text, /tc-status 200/, done.text);
      assert.match(done.text, /tc-stopped/, done.text);
      const gone = await docker()
        .getContainer(id!)
        .inspect()
        .then(
          (i) => `still there: ${i.State.Status}`,
          () => 'gone',
        );
      assert.equal(gone, 'gone', 'stop removed the container');
    } finally {
      sh.dispose();
      report(t, from);
    }
  });
});
