/**
 * Fixtures for integration tests against the real engine. Every test run gets its own object
 * prefix and a temporary toolbox home, and cleans up only what carries that prefix.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import type { ObjectNames } from '../../extension/src/contract/types';

export const TEST_LABEL = 'dev.toolbox.test-run';

/**
 * Which engine the integration suite runs against: scripts/test.sh runs it against Docker, then
 * again against Podman with TOOLBOX_TEST_ENGINE=podman and TOOLBOX_TEST_DOCKER_SOCKET set.
 * Tests branch on it only where the engines answer differently (docs/engines.md).
 */
/** Where scripts/ensure-podman.sh serves the test Podman, and the config its CLI needs. */
export const PODMAN_TEST_SOCKET = process.env.TOOLBOX_PODMAN_SOCKET ?? '/run/toolbox-test-podman/podman.sock';
export const PODMAN_TEST_CONF = '/etc/toolbox-test/podman/containers.conf';

export const TEST_ENGINE: 'docker' | 'podman' = process.env.TOOLBOX_TEST_ENGINE === 'podman' ? 'podman' : 'docker';

/**
 * The rootless Podman pass (scripts/test-podman.sh rootless): tests run as the engine's own user,
 * and containers map that user's uid to itself (keep-id, engine/compat.ts), so a container user
 * other than the test's own would own nothing the host can read back. testUser() gives the ids a
 * test's containers run as: its usual ones, or the test's own under that pass.
 */
export const TEST_ROOTLESS = process.env.TOOLBOX_TEST_ROOTLESS === '1';

export function testUser(uid: number, gid: number): { uid: number; gid: number } {
  return TEST_ROOTLESS ? { uid: process.getuid!(), gid: process.getgid!() } : { uid, gid };
}

export function docker(): Docker {
  return new Docker({ socketPath: process.env.TOOLBOX_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock' });
}

export interface TestNamespace {
  names: ObjectNames;
  /** Temporary directory standing in for the host home (holds `.toolbox/`). */
  home: string;
  docker: Docker;
  /** Force-removes every container and volume of this namespace, then the temp home. */
  cleanup(): Promise<void>;
}

export function testNamespace(): TestNamespace {
  const prefix = `tbxt${randomBytes(3).toString('hex')}`;
  const names = objectNames(prefix);
  const home = mkdtempSync(join(tmpdir(), `${prefix}-home-`));
  const d = docker();
  return {
    names,
    home,
    docker: d,
    async cleanup() {
      await removeNamespaceObjects(d, names);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * Everything the test run created under its random prefix, whether or not the extension would
 * count it as its own (tests also make Compose-labelled and oddly named containers there).
 */
function inTestNamespace(name: string, prefix: string): boolean {
  const bare = name.startsWith('/') ? name.slice(1) : name;
  return bare === prefix || bare.startsWith(`${prefix}-`);
}

export async function removeNamespaceObjects(d: Docker, names: ObjectNames): Promise<void> {
  await removeChildrenOfNamespace(d, names);
  const containers = (await d.listContainers({ all: true, filters: { name: [names.prefix] } })).filter((c) =>
    c.Names.some((n) => inTestNamespace(n, names.prefix)),
  );
  const remove = (list: Docker.ContainerInfo[]) =>
    Promise.all(
      list.map((c) =>
        d
          .getContainer(c.Id)
          .remove({ force: true, v: false })
          .catch(() => undefined),
      ),
    );
  // Members first: Podman refuses to remove a container whose PID namespace others join.
  const isAnchor = (c: Docker.ContainerInfo) => c.Names.some((n) => n.replace(/^\//, '') === names.anchor);
  await remove(containers.filter((c) => !isAnchor(c)));
  await remove(containers.filter(isAnchor));
  const { Volumes } = await d.listVolumes({ filters: { name: [names.prefix] } });
  await Promise.all(
    (Volumes ?? [])
      .filter((v) => inTestNamespace(v.Name, names.prefix))
      .map((v) =>
        d
          .getVolume(v.Name)
          .remove({ force: true })
          .catch(() => undefined),
      ),
  );
}

/**
 * What the namespace's containers started through their Docker endpoints (issue 27): containers,
 * networks and volumes labelled LABELS.dockerOwner with one of the namespace's names, whatever
 * their own names.
 */
export async function removeChildrenOfNamespace(d: Docker, names: ObjectNames): Promise<void> {
  const filters = JSON.stringify({ label: [LABELS.dockerOwner] });
  const mine = (labels: Record<string, string> | null | undefined) => inTestNamespace(labels?.[LABELS.dockerOwner] ?? '', names.prefix);
  const containers = (await d.listContainers({ all: true, filters }).catch(() => [])).filter((c) => mine(c.Labels));
  await Promise.all(
    containers.map((c) =>
      d
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined),
    ),
  );
  const networks = (await d.listNetworks({ filters }).catch(() => [])).filter((n) => mine(n.Labels));
  await Promise.all(
    networks.map((n) =>
      d
        .getNetwork(n.Id)
        .remove()
        .catch(() => undefined),
    ),
  );
  const volumes = ((await d.listVolumes({ filters }).catch(() => ({ Volumes: [] }))).Volumes ?? []).filter((v) => mine(v.Labels));
  await Promise.all(
    volumes.map((v) =>
      d
        .getVolume(v.Name)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}
