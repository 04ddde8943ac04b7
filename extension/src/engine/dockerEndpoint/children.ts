/**
 * A workspace container's children (issue 27, item 4): what it created through its Docker
 * endpoint, every one labelled LABELS.dockerOwner with its name (plan/dockerEndpoint/policy.ts). They follow
 * their parent: when it is removed, its containers go (with their anonymous volumes) and then its
 * networks; its named volumes are kept, since they hold data (a database's), and listed.
 */
import { LABELS } from '../../contract/upstream';
import { bareName } from '../../contract/objects';
import type { EngineContext } from '../context';

export interface DockerChildren {
  /** Containers, by name, running or not. */
  containers: string[];
  networks: string[];
  /** Named volumes: kept when the parent goes. */
  volumes: string[];
}

function ownerFilter(owner: string): string {
  return JSON.stringify({ label: [`${LABELS.dockerOwner}=${bareName(owner)}`] });
}

/** What `owner` created through its endpoint and still exists. */
export async function listDockerChildren(ctx: EngineContext, owner: string): Promise<DockerChildren> {
  const { containers, networks, volumes } = await children(ctx, owner);
  return { containers: containers.map((c) => c.name), networks: networks.map((n) => n.name), volumes };
}

interface Found {
  containers: Array<{ id: string; name: string }>;
  networks: Array<{ id: string; name: string }>;
  volumes: string[];
}

/**
 * The ids of the images that carry an owner label: the engine copies it into every container made
 * from them, so a container whose image has one may be the host's (plan/dockerEndpoint/routes.ts
 * containerOwnership), and is neither listed nor removed as a child.
 */
async function labelledImages(ctx: EngineContext): Promise<Set<string>> {
  const images = await ctx.docker.listImages({ filters: JSON.stringify({ label: [LABELS.dockerOwner] }) });
  return new Set(images.filter((i) => (i.Labels?.[LABELS.dockerOwner] ?? '') !== '').map((i) => i.Id));
}

async function children(ctx: EngineContext, owner: string): Promise<Found> {
  const filters = ownerFilter(owner);
  const [containers, networks, volumes, inherited] = await Promise.all([
    ctx.docker.listContainers({ all: true, filters }),
    ctx.docker.listNetworks({ filters }),
    ctx.docker.listVolumes({ filters }),
    labelledImages(ctx),
  ]);
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  return {
    containers: containers
      .filter((c) => !inherited.has(c.ImageID))
      .map((c) => ({ id: c.Id, name: bareName(c.Names?.[0] ?? c.Id.slice(0, 12)) }))
      .sort(byName),
    networks: networks.map((n) => ({ id: n.Id, name: n.Name })).sort(byName),
    volumes: (volumes.Volumes ?? []).map((v) => v.Name).sort(),
  };
}

/** A workspace container's children as the tree and the Stop confirmations show them. */
export interface DockerChildrenSummary {
  containers: Array<{ name: string; image: string; state: string }>;
  networks: string[];
  volumes: string[];
}

/** Nothing to list or remove. */
export function noChildren(c: DockerChildren): boolean {
  return c.containers.length === 0 && c.networks.length === 0 && c.volumes.length === 0;
}

/**
 * Removes `owner`'s child containers (force, with their anonymous volumes) and then its networks;
 * keeps its named volumes. Returns what it removed and what it kept; failures are logged and
 * the rest goes on (a child someone else removed meanwhile is no failure).
 */
export async function removeDockerChildren(ctx: EngineContext, owner: string): Promise<DockerChildren> {
  const found = await children(ctx, owner);
  const removed: DockerChildren = { containers: [], networks: [], volumes: found.volumes };
  await Promise.all(
    found.containers.map(({ id, name }) =>
      ctx.docker
        .getContainer(id)
        .remove({ force: true, v: true })
        .then(
          () => void removed.containers.push(name),
          (err: { statusCode?: number; message?: string }) => {
            if (err.statusCode === 404) return;
            ctx.log?.(`Could not remove ${name}, a container ${bareName(owner)} started: ${String(err.message ?? err).slice(0, 300)}`);
          },
        ),
    ),
  );
  for (const { id, name } of found.networks) {
    await ctx.docker
      .getNetwork(id)
      .remove()
      .then(
        () => void removed.networks.push(name),
        (err: { statusCode?: number; message?: string }) => {
          if (err.statusCode === 404) return;
          ctx.log?.(`Could not remove the network ${name} ${bareName(owner)} made: ${String(err.message ?? err).slice(0, 300)}`);
        },
      );
  }
  removed.containers.sort();
  return removed;
}

/**
 * Every workspace container's children on the engine, by owner (the snapshot's one look): three
 * lists filtered by the owner label's key, whatever its value.
 */
export async function dockerChildrenByOwner(ctx: EngineContext): Promise<Map<string, DockerChildrenSummary>> {
  const filters = JSON.stringify({ label: [LABELS.dockerOwner] });
  const [containers, networks, volumes, inherited] = await Promise.all([
    ctx.docker.listContainers({ all: true, filters }),
    ctx.docker.listNetworks({ filters }),
    ctx.docker.listVolumes({ filters }),
    labelledImages(ctx),
  ]);
  const out = new Map<string, DockerChildrenSummary>();
  const of = (owner: string | undefined) => {
    if (owner === undefined || owner === '') return undefined;
    let entry = out.get(owner);
    if (!entry) out.set(owner, (entry = { containers: [], networks: [], volumes: [] }));
    return entry;
  };
  for (const c of containers) {
    if (inherited.has(c.ImageID)) continue;
    of(c.Labels?.[LABELS.dockerOwner])?.containers.push({
      name: bareName(c.Names?.[0] ?? c.Id.slice(0, 12)),
      image: c.Image ?? '',
      state: c.State ?? '',
    });
  }
  for (const n of networks) of(n.Labels?.[LABELS.dockerOwner])?.networks.push(n.Name);
  for (const v of volumes.Volumes ?? []) of(v.Labels?.[LABELS.dockerOwner])?.volumes.push(v.Name);
  for (const entry of out.values()) {
    entry.containers.sort((a, b) => a.name.localeCompare(b.name));
    entry.networks.sort();
    entry.volumes.sort();
  }
  return out;
}

/** Children whose owner container no longer exists: what something else's removal left running. */
export interface LeftBehind {
  /** The owner's name, from the label (text from the engine: shown as plain text). */
  owner: string;
  children: DockerChildrenSummary;
}

/** A container of that name exists now (any container: a 404 is the only "no"). */
async function containerExists(ctx: EngineContext, name: string): Promise<boolean> {
  try {
    await ctx.docker.getContainer(name).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

/**
 * The children of ours (owners named in ctx.names' namespace) whose owner is gone: removed by
 * something other than this editor (the upstream CLI's shell-exit teardown, `toolbox stop`,
 * `docker rm`), which does not know about them: those with a container or a network (their named
 * volumes listed too; volumes alone are what any removal keeps). `present`: the names already
 * listed; an owner not among them is inspected, so only a 404 counts as gone. Sorted by owner.
 */
export async function leftBehindOf(
  ctx: EngineContext,
  byOwner: ReadonlyMap<string, DockerChildrenSummary>,
  present: ReadonlySet<string>,
): Promise<LeftBehind[]> {
  // Named volumes alone are what every removal keeps (the editor's Stop too): nothing to offer.
  const candidates = [...byOwner]
    .filter(([owner, c]) => !present.has(owner) && ctx.names.kindOf(owner) !== undefined && c.containers.length + c.networks.length > 0)
    .map(([owner]) => owner);
  const gone = await Promise.all(
    candidates.map(async (owner) => ((await containerExists(ctx, owner).catch(() => true)) ? undefined : owner)),
  );
  return gone
    .filter((o): o is string => o !== undefined)
    .sort()
    .map((owner) => ({ owner, children: byOwner.get(owner)! }));
}

/**
 * Remove What Was Left Behind: `owner`'s containers and networks (named volumes kept), only when
 * `owner` is a name of ours and no container of that name exists now: one that does may be the
 * owner recreated, whose children are its own again (its Stop removes them). Throws a sentence
 * saying why it refused.
 */
export async function removeLeftBehind(ctx: EngineContext, owner: string): Promise<DockerChildren> {
  const name = bareName(owner);
  if (name.length > 200 || ctx.names.kindOf(name) === undefined) {
    throw new Error(`${name.slice(0, 200)} is not the name of a toolbox container: nothing was removed.`);
  }
  if (await containerExists(ctx, name)) {
    throw new Error(
      `A container named ${name} exists again, so what it started is its own: nothing was removed. Stop the container to remove them with it.`,
    );
  }
  return removeDockerChildren(ctx, name);
}
