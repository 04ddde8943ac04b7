/**
 * Listing and stopping toolbox containers. Ownership is by name, like upstream (which sets no
 * labels), but by the exact grammar of the names toolbox creates, not by prefix, and never for a
 * container another tool labels as its own (contract/objects.ts): nothing else is ever read as
 * ours or touched. The socket volume is never touched here — `toolbox stop --all` leaves it alone.
 */
import type Docker from 'dockerode';
import { CONTAINER, LABELS } from '../contract/upstream';
import { bareName, foreignLabel, foreignLabelled } from '../contract/objects';
import { joinsNamespace, seccompProfileOf, storedPidMode } from '../plan/drift';
import type { SeccompProfile } from '../contract/types';
import { clause, engineMessage, hasDependents, isConflict, isNotFound, isNotModified } from './errors';
import { parseUser, waitUntilGone } from './containers';
import type { EngineContext } from './context';
import { removeDockerChildren } from './dockerEndpoint/children';
import { familiarImageName } from './compat';
import { placeholderCandidates, removeUnusedPlaceholders } from './placeholders';

/** A toolbox shell container as the engine lists it (the views get a ContainerSummary built from it). */
export interface ListedContainer {
  id: string;
  name: string;
  /** Docker's state word: `running`, `exited`, `created`, `paused`, … */
  state: string;
  /** Docker's human status line (`Up 5 minutes`). */
  status: string;
  image: string;
  /** Host workspace from the `dev.toolbox.workspace` label, when the container carries one. */
  workspace: string | undefined;
  pidMode: string;
  /** Joins the peer anchor's PID namespace (`container:<anchor name or id>`). */
  peer: boolean;
  /** The seccomp profile it runs with, from the inspected HostConfig.SecurityOpt (the seccomp drift rule reads it). */
  seccomp: SeccompProfile;
  createdAt: Date;
  /** The full inspect data, so callers need not ask the engine again. */
  detail: Docker.ContainerInspectInfo;
}

/** A container of ours as listed, with the PidMode the list endpoint does not report. */
export interface OwnedContainer {
  id: string;
  name: string;
  info: Docker.ContainerInfo;
  pidMode: string;
  detail: Docker.ContainerInspectInfo;
}

/**
 * Every container that is ours by name, in any state but `removing` (devcontainers' rule: a
 * container being removed is already gone for every purpose here). Includes the anchor and the
 * volume initialiser; callers decide what to hide.
 */
export async function listOwnedContainers(ctx: EngineContext): Promise<OwnedContainer[]> {
  const { docker, names } = ctx;
  // The engine's name filter is a substring match; isOurs (name grammar and labels) is the real test.
  const listed = await docker.listContainers({ all: true, filters: { name: [names.prefix] } });
  const ours = listed.flatMap((info) => {
    const name = info.Names.map(bareName).find((n) => names.isOurs(n, info.Labels));
    return name !== undefined && info.State !== 'removing' ? [{ info, name }] : [];
  });
  const inspected = await Promise.all(
    ours.map(async ({ info, name }): Promise<OwnedContainer | undefined> => {
      try {
        const detail = await docker.getContainer(info.Id).inspect();
        if (detail.State.Status === 'removing' || foreignLabelled(detail.Config?.Labels)) return undefined;
        return { id: info.Id, name, info, pidMode: storedPidMode(detail.HostConfig.PidMode), detail };
      } catch (err) {
        // Removed between list and inspect: it is gone, which is what the list should say.
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }),
  );
  return inspected.filter((c): c is OwnedContainer => c !== undefined);
}

/**
 * The shells of this namespace: every container of ours except the anchor and initialiser.
 * `owned` lets a caller that also needs the peer state list the engine once for both.
 */
export async function listToolboxContainers(
  ctx: EngineContext,
  owned: OwnedContainer[] | Promise<OwnedContainer[]> = listOwnedContainers(ctx),
): Promise<ListedContainer[]> {
  const { names } = ctx;
  const listed = await owned;
  const anchor = { name: names.anchor, id: listed.find((c) => c.name === names.anchor)?.id };
  return listed
    .filter((c) => c.name !== names.anchor && c.name !== names.socketVolumeInit)
    .map(({ id, name, info, pidMode, detail }) => ({
      id,
      name,
      state: info.State,
      status: info.Status,
      image: familiarImageName(info.Image),
      workspace: info.Labels?.[LABELS.workspace] || undefined,
      pidMode,
      peer: joinsNamespace(pidMode, anchor),
      seccomp: seccompProfileOf(detail.HostConfig?.SecurityOpt),
      createdAt: new Date(info.Created * 1000),
      detail,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export type StopOutcome = 'stopped' | 'already-gone';

export interface StopOptions {
  /**
   * Stop All only: stop just these names (what the user confirmed), skipping any container of
   * ours that appeared since. Undefined: everything of ours.
   */
  only?: ReadonlySet<string>;
  /** Seconds Docker waits after SIGTERM before it kills (docker stop -t); default 10. */
  graceSeconds?: number;
  /** How long to wait for the container to disappear after the stop; default 30 s. */
  goneTimeoutMs?: number;
}

/**
 * Stops one container by its full name and waits until it no longer exists. Session containers
 * are AutoRemove, so the engine removes them on exit; anything else (the anchor, an old
 * container created with AutoRemove false, one that never started) is removed here, so a stop
 * always ends with the container gone.
 */
export async function stopContainer(ctx: EngineContext, name: string, options: StopOptions = {}): Promise<StopOutcome> {
  const target = bareName(name.trim());
  if (!ctx.names.isOurs(target)) {
    throw new Error(
      `Refusing to stop "${target}": it is not a toolbox container (toolbox names its containers ` +
        `${ctx.names.prefix}-<folder>-<8 hex>, ${ctx.names.prefix}-named-<name> and ${ctx.names.anchor}). ` +
        `Stop it with Docker directly if you really mean to.`,
    );
  }
  const container = ctx.docker.getContainer(target);
  let detail: Docker.ContainerInspectInfo;
  try {
    detail = await container.inspect();
  } catch (err) {
    if (isNotFound(err)) {
      // Gone by itself (AutoRemove, docker rm): its children may still be there.
      await removeChildrenOf(ctx, target);
      return 'already-gone';
    }
    throw engineFailure(target, err);
  }
  // A lookup by name also matches an id prefix: make sure Docker found the container so named.
  if (bareName(detail.Name) !== target) {
    throw new Error(`Refusing to stop "${target}": Docker resolved it to "${bareName(detail.Name)}", not a container with that name.`);
  }
  const label = foreignLabel(detail.Config?.Labels);
  if (label !== undefined) {
    throw new Error(
      `Refusing to stop "${target}": its label ${label} marks it as managed by another tool (Docker Compose, Swarm, Dev Containers, …), so it is not a toolbox container even though its name looks like one. Stop it with that tool, or with Docker directly if you really mean to.`,
    );
  }
  try {
    const s = detail.State;
    if (s.Running || s.Paused || s.Restarting) {
      await container.stop({ t: options.graceSeconds ?? 10 }).catch(tolerate(isNotModified, isNotFound));
    }
    // AutoRemove may already be removing it (409) or be done (404): both mean "on its way out".
    const kept = await container
      .remove({ force: true, v: false })
      .then(() => undefined)
      .catch((err: unknown) => {
        // Podman keeps a container others joined (an anchor with a foreign member): stopped is
        // what was asked; it goes once they do.
        if (hasDependents(err)) return clause(engineMessage(err));
        tolerate(isNotFound, isConflict)(err);
        return undefined;
      });
    if (kept !== undefined) {
      ctx.log?.(`${target} is stopped; the engine keeps it while other containers share its namespaces (${kept}).`);
      return 'stopped';
    }
  } catch (err) {
    throw engineFailure(target, err);
  }
  await waitUntilGone(ctx.docker, target, options.goneTimeoutMs ?? 30_000);
  // What it started through its Docker endpoint goes with it; its named volumes stay (engine/dockerEndpoint/children.ts).
  await removeChildrenOf(ctx, target);
  // The placeholders of its protected paths go with it, unless another container still mounts them.
  await removeUnusedPlaceholders(ctx, placeholderCandidates(detail.Mounts), parseUser(detail.Config?.User ?? ''));
  return 'stopped';
}

/** The containers and networks `owner` started through its Docker endpoint; a failure is logged, never thrown. */
async function removeChildrenOf(ctx: EngineContext, owner: string): Promise<void> {
  try {
    const removed = await removeDockerChildren(ctx, owner);
    if (removed.containers.length + removed.networks.length > 0) {
      ctx.log?.(
        `Removed with ${owner}: ${[...removed.containers, ...removed.networks.map((n) => `network ${n}`)].join(', ')}` +
          (removed.volumes.length > 0 ? `; kept its volumes ${removed.volumes.join(', ')}.` : '.'),
      );
    }
  } catch (err) {
    ctx.log?.(`Could not remove what ${owner} started through its Docker endpoint: ${clause(engineMessage(err))}`);
  }
}

function engineFailure(name: string, err: unknown): Error {
  return new Error(`Could not stop ${name}: ${clause(engineMessage(err))}. Check that the Docker engine is running, then try again.`);
}

function tolerate(...accepted: Array<(err: unknown) => boolean>): (err: unknown) => void {
  return (err: unknown) => {
    if (!accepted.some((ok) => ok(err))) throw err;
  };
}

/**
 * Stops every container that is ours, the anchor and the volume initialiser included — the
 * anchor last, since the session containers live in its PID namespace. Returns the names it
 * stopped. Never touches the socket volume.
 */
export async function stopAll(ctx: EngineContext, options: StopOptions = {}): Promise<string[]> {
  const only = options.only;
  const owned = (await listOwnedContainers(ctx)).filter((c) => only === undefined || only.has(c.name));
  const stopped: string[] = [];
  const stopEach = async (list: OwnedContainer[]) => {
    const results = await Promise.allSettled(list.map((c) => stopContainer(ctx, c.name, options)));
    const failures: string[] = [];
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        if (r.value === 'stopped') stopped.push(list[i].name);
      } else {
        failures.push(r.reason instanceof Error ? r.reason.message : String(r.reason));
      }
    });
    if (failures.length > 0) throw new Error(failures.join('\n'));
  };
  await stopEach(owned.filter((c) => c.name !== ctx.names.anchor));
  await stopEach(owned.filter((c) => c.name === ctx.names.anchor));
  return stopped.sort();
}

/**
 * Upstream's rule for a shell that ended: its container goes away unless something else still
 * runs there — another exec (a plain shell from this or another window, `docker exec` by hand)
 * or a live session in the holder, attached or not. The holder's own execs do not count: its
 * connect execs (the exec transport) only carry sessions the holder already counts, and its
 * sentinel (`hold`, decision 0051) runs for the CLI's check, not ours, and may still be on its way
 * out when the last session has just ended.
 */
export async function removeIfIdle(
  ctx: EngineContext,
  name: string,
  liveSessions: () => Promise<number> = async () => 0,
): Promise<'removed' | 'kept'> {
  let detail: Docker.ContainerInspectInfo;
  try {
    detail = await ctx.docker.getContainer(name).inspect();
  } catch (err) {
    if (isNotFound(err)) return 'removed';
    throw err;
  }
  if (!detail.State.Running) return 'kept';
  if ((await liveSessions()) > 0) return 'kept';
  const execs = await Promise.all(
    (detail.ExecIDs ?? []).map((id) =>
      ctx.docker
        .getExec(id)
        .inspect()
        .catch(() => undefined),
    ),
  );
  const busy = execs.some((e) => e?.Running && !(e.ProcessConfig?.arguments ?? []).includes(CONTAINER.sessionHolder));
  if (busy) return 'kept';
  await stopContainer(ctx, name);
  return 'removed';
}
