/**
 * Issue 25, attack 3, performed from a real container (docs/decisions/0041): the project folder is
 * bind-mounted read-write, so what runs in the container writes the folder's `.toolbox.yaml`
 * (mode 644, owned by the user: it passes the ownership check), and its git refs. Each attack
 * must fail at the folder's next open from the host:
 *   - the file (`/` bound, gh credentials, another image, the Docker socket and ssh back
 *     on where ~/.toolbox.yaml turned them off) is left out and reported as a pending change;
 *     approved in the stand-in store, the same open applies it;
 *   - a named shell path it adds is refused;
 *   - New Agent Worktree's early plan, from a commit the container made on the base branch, gets
 *     the same rule;
 *   - Turn Off for This Folder is kept in the user's settings, so a file the container writes to
 *     turn the Docker socket back on changes nothing.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { memoryState, type KeyValueState } from '../../extension/src/bridge/credentialGrants';
import { FolderConfig } from '../../extension/src/backend/folderConfig';
import { ProjectConsents } from '../../extension/src/backend/projectConsent';
import { ShellOpener } from '../../extension/src/backend/shells';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import type { HostFacts } from '../../extension/src/contract/types';
import { hostReach } from '../../extension/src/plan/posture';
import { planSession } from '../../extension/src/plan/session';
import { testBackend, type TestBackend } from '../support/backend';
import { docker, removeNamespaceObjects } from '../support/docker';
import { execIn } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';
import { ATTACK_FILE, hardenedUserFile } from '../support/projectAttack';
import { standInSettings } from '../support/settings';
import { silentLog } from '../support/vscodeLite';

const progress = { step: () => undefined, log: () => undefined };

/** An image name without the registry Podman writes in front of a short one (docker.io/, localhost/). */
function shortImage(name: string): string {
  return name.replace(/^(docker\.io|localhost)\//, '');
}

describe('a container rewrites its own .toolbox.yaml (issue 25, attack 3; real engine)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  const saved = { HOME: process.env.HOME, GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM };
  let consentState: KeyValueState;
  let dir: string;
  let home: string;
  let folder: string;
  let image: string;
  let backend: TestBackend;
  let settings: ReturnType<typeof standInSettings>;
  let env: NodeJS.ProcessEnv;

  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

  /** Opens the folder's shell from the host, as Open Toolbox Shell does, and inspects its container. */
  async function open(target = folder): Promise<{ pending: unknown; info: Docker.ContainerInspectInfo; binds: string[] }> {
    const prepared = await backend.prepareShell({ folder: target });
    const session = await prepared.open(progress, new AbortController().signal);
    const info = await docker().getContainer(session.id).inspect();
    // Podman reports each bind with the options it added (`:rw,rprivate,rbind`); Docker as sent.
    const binds = (info.HostConfig.Binds ?? []).map((b) => b.replace(/:rw,rprivate,rbind$/, ''));
    return { pending: prepared.pendingConfig, info, binds };
  }

  async function stop(name: string): Promise<void> {
    await backend.stopContainer(name);
    for (let i = 0; i < 100 && (await docker().listContainers({ all: true, filters: { name: [name] } })).length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** What the container writes, through its own bind mount, as the user it runs as. */
  async function writeFromInside(info: Docker.ContainerInspectInfo, text: string): Promise<void> {
    const script = `cat > ${CONTAINER.workspace}/.toolbox.yaml <<'EOF'\n${text}EOF\nchmod 644 ${CONTAINER.workspace}/.toolbox.yaml`;
    const wrote = await execIn(docker().getContainer(info.Id), ['sh', '-c', script]);
    assert.equal(wrote.code, 0, wrote.stderr);
  }

  function assertNoReach(binds: string[]): void {
    assert.ok(!binds.some((b) => b.startsWith('/:')), `no / bind: ${binds.join(' ')}`);
    assert.ok(!binds.some((b) => b.includes('docker.sock')), `no Docker socket: ${binds.join(' ')}`);
    assert.ok(!binds.some((b) => b.startsWith(`${home}/.config/gh:`)), `no gh credentials: ${binds.join(' ')}`);
    assert.ok(!binds.some((b) => b.startsWith(`${home}/.ssh:`)), `no ~/.ssh: ${binds.join(' ')}`);
  }

  before(async () => {
    image = await ensureTestRuntimeImage();
    dir = mkdtempSync(join(tmpdir(), `${names.prefix}-attack-`));
    home = join(dir, 'home');
    folder = join(home, 'proj');
    mkdirSync(join(home, '.config', 'gh'), { recursive: true });
    writeFileSync(join(home, '.config', 'gh', 'hosts.yml'), 'github.com:\n  oauth_token: host-secret\n');
    mkdirSync(join(home, '.ssh'));
    mkdirSync(folder);
    // The user's own config: the Docker socket and ssh off, their image, no peer anchor needed.
    writeFileSync(join(home, '.toolbox.yaml'), `${hardenedUserFile(image)}peer_messaging: false\n`);
    chmodSync(join(home, '.toolbox.yaml'), 0o644);
    // The folder is a git repository with an origin, for New Agent Worktree.
    env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: join(dir, 'gitconfig') };
    writeFileSync(join(dir, 'gitconfig'), '[user]\n\tname = Test\n\temail = test@example.com\n');
    process.env.HOME = home;
    process.env.GIT_CONFIG_NOSYSTEM = '1';
    git(dir, 'init', '-q', '--bare', '-b', 'main', join(dir, 'origin.git'));
    git(folder, 'init', '-q', '-b', 'main');
    writeFileSync(join(folder, 'README.md'), 'hello\n');
    git(folder, 'add', '.');
    git(folder, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-qm', 'initial');
    git(folder, 'remote', 'add', 'origin', join(dir, 'origin.git'));
    git(folder, 'push', '-q', 'origin', 'main');
    git(folder, 'fetch', '-q', 'origin');

    consentState = memoryState();
    // Protected paths off (docs/decisions/0042): with them .toolbox.yaml is read-only in the
    // container (test/engine/protected-paths.test.ts). This proves the second line, for a file
    // written anyway: by a container the toolbox CLI made (it has no protection), before the
    // protection, or with it turned off.
    settings = standInSettings({ protectedPaths: () => false });
    backend = testBackend(names, home, { pathExists: existsSync, settings, projectConsent: consentState });
  });

  after(async () => {
    backend?.dispose();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let pendingHash = '';

  it('leaves out what the file the container wrote widens, and reports it as a pending change', async () => {
    const first = await open();
    assert.equal(first.pending, undefined, 'no project file yet');
    assertNoReach(first.binds);
    await writeFromInside(first.info, ATTACK_FILE);
    // The container wrote the user's file: owned by the user, mode 644, so the ownership check passes.
    const file = join(folder, '.toolbox.yaml');
    assert.equal(readFileSync(file, 'utf8'), ATTACK_FILE);
    assert.equal(statSync(file).uid, process.getuid!());
    assert.equal(statSync(file).mode & 0o777, 0o644);
    await stop(first.info.Name.replace(/^\//, ''));

    const next = await open();
    const pending = next.pending as { hash: string; keys: string[]; items: string[]; sources: string[] } | undefined;
    assert.ok(pending, 'the pending change is reported');
    assert.deepEqual(pending.keys, ['image', 'inherit_host_auth', 'mounts']);
    assert.deepEqual(pending.sources, ['.toolbox.yaml']);
    assert.ok(pending.items.includes('mounts: adds "hostroot": "/" at "/host", read-write'), pending.items.join('\n'));
    assertNoReach(next.binds);
    assert.equal(shortImage(next.info.Config.Image), shortImage(image), "the user's image");
    pendingHash = pending.hash;
    await stop(next.info.Name.replace(/^\//, ''));
  });

  it('refuses a named shell path the container adds', async () => {
    writeFileSync(join(folder, '.toolbox.yaml'), `${ATTACK_FILE}shells:\n  evil:\n    path: /\n`);
    chmodSync(join(folder, '.toolbox.yaml'), 0o644);
    try {
      assert.deepEqual(await backend.namedShells(folder), []);
      await assert.rejects(backend.prepareShell({ folder, namedShell: 'evil' }), (err: Error) => {
        assert.equal(err.name, 'NamedShellRefusal');
        assert.equal((err as Error & { problem?: string }).problem, 'not-configured');
        return true;
      });
    } finally {
      writeFileSync(join(folder, '.toolbox.yaml'), ATTACK_FILE);
    }
  });

  it('plans New Agent Worktree from a base the container committed to under the same rule', async () => {
    // The repository's .git is in the container's workspace: it commits the file on main itself.
    const { info } = await open();
    const script =
      `cd ${CONTAINER.workspace} && git add .toolbox.yaml && ` +
      'git -c user.name=agent -c user.email=agent@example.com commit -qm "harmless" && git update-ref refs/remotes/origin/main HEAD';
    const committed = await execIn(docker().getContainer(info.Id), ['sh', '-c', script]);
    assert.equal(committed.code, 0, committed.stderr + committed.stdout);
    assert.equal(git(folder, 'show', 'main:.toolbox.yaml'), ATTACK_FILE.trimEnd());
    await stop(info.Name.replace(/^\//, ''));

    const opened = await backend.createAgentWorktree(
      { folder, branch: 'agent/attack', base: 'main', noFetch: true },
      progress,
      new AbortController().signal,
    );
    assert.ok(opened);
    assert.ok(opened.prepared.pendingConfig, 'the pending change is reported for the worktree too');
    const wt = await docker().getContainer(opened.session.id).inspect();
    assertNoReach((wt.HostConfig.Binds ?? []).map((b) => b.replace(/:rw,rprivate,rbind$/, '')));
    assert.equal(shortImage(wt.Config.Image), shortImage(image));
    await backend.removeAgentWorktree({ root: folder, branch: 'agent/attack' }, { force: true, deleteRemote: false });
  });

  it('applies the same file once exactly that change is approved in the stand-in store', async () => {
    await backend.approveProjectConfig(folder, pendingHash);
    assert.deepEqual(Object.keys(consentState.get<Record<string, unknown>>('toolbox.projectConfigConsents') ?? {}), [folder]);
    const prepared = await backend.prepareShell({ folder });
    assert.equal(prepared.pendingConfig, undefined);
    // The same open's plan (not started: it would bind / and pull evil/img).
    const host: HostFacts = { uid: process.getuid!(), gid: process.getgid!(), home, platform: process.platform, pathExists: existsSync };
    const config = new FolderConfig({
      names,
      home: () => home,
      settings,
      connector: {} as never,
      consents: new ProjectConsents(consentState),
      log: () => undefined,
    });
    const shells = new ShellOpener({
      names,
      host: () => host,
      log: silentLog as never,
      config,
      connector: {} as never,
      bridges: {} as never,
      images: {} as never,
      sessions: { persist: () => true } as never,
    });
    const { plan } = await shells.prepare({ folder });
    const binds = planSession(plan.request, host).plan.create.HostConfig.Binds;
    assert.ok(binds.includes('/:/host'), binds.join(' '));
    assert.ok(binds.includes(`${home}/.config/gh:/home/toolbox/.config/gh`), binds.join(' '));
    assert.ok(
      binds.some((b) => b.includes('docker.sock')),
      binds.join(' '),
    );
    assert.equal(plan.request.image, 'evil/img');
  });

  it('keeps Turn Off for This Folder where the container cannot undo it', async () => {
    const other = join(home, 'other');
    mkdirSync(other);
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\npeer_messaging: false\n`);
    try {
      const first = await open(other);
      // Docker, as the container has it by default: its own scoped endpoint (issue 27) in docker-sock's place.
      const socket = hostReach(first.info.Mounts, home).find((r) => r.kind === 'docker-endpoint');
      assert.ok(socket, `the container has Docker: ${first.binds.join(' ')}`);
      const plan = await backend.prepareTurnOff(other, socket);
      await plan.apply();
      assert.deepEqual(settings.saved.get(other), { mounts: ['docker-sock'], inheritHostAuth: [] });
      assert.equal(existsSync(join(other, '.toolbox.yaml')), false, 'no project file is written');
      // The container turns it back on in the project file.
      await writeFromInside(first.info, 'mounts:\n  - {name: docker-sock, disabled: false}\n');
      assert.match(readFileSync(join(other, '.toolbox.yaml'), 'utf8'), /disabled: false/);
      await stop(first.info.Name.replace(/^\//, ''));
      const next = await open(other);
      assert.ok(!next.binds.some((b) => b.includes('docker.sock') || b.includes('/run/toolbox-docker')), next.binds.join(' '));
      await stop(next.info.Name.replace(/^\//, ''));
    } finally {
      writeFileSync(join(home, '.toolbox.yaml'), `${hardenedUserFile(image)}peer_messaging: false\n`);
    }
  });
});
