/**
 * The Docker endpoint's gate (engine/dockerEndpoint/server.ts) made of its policy (plan/dockerEndpoint/policy.ts):
 * the I/O the policy asks for and nothing it judges. In the order plan/dockerEndpoint/policy.ts lists: classify
 * the head; inspect each object it names and answer whose it is; for a JSON body, parse it, resolve
 * its bind sources on the host and inspect the objects it names, check it, create the volumes it
 * needs (labelled, and their answer's labels checked) and forward the policy's body; resolve a
 * container's binds again before a start or restart; scrub /info's answer.
 *
 * Every lookup is bounded in time (LOOKUP_MS). A lookup the engine does not answer, or answers
 * with an error other than 404, refuses the request (502): an object whose owner is not known is
 * never taken for the caller's, nor a volume for one to create. Engine error texts pass to the
 * container shortened (ENGINE_TEXT_CHARS).
 */
import { realpath as fsRealpath } from 'node:fs/promises';
import type Dockerode from 'dockerode';
import {
  bodyLookups,
  checkBody,
  checkOwned,
  checkReach,
  checkStartBinds,
  classify,
  containerOwnership,
  forwardTarget,
  imageOwnership,
  type Classified,
  type ContainerNetwork,
  DROPPED_BODY,
  type EndpointScope,
  isOwned,
  isRefusal,
  type ObjectKind,
  type ObjectRefs,
  type Ownership,
  parseBody,
  type Refusal,
  scrubInfo,
  startBindSources,
} from '../../plan/dockerEndpoint/policy';
import type { InspectedMount } from '../../plan/posture';
import type { EndpointGate, GateForward, GateHead, GateRefusal } from './server';
import { engineMessage, isNotFound, isVolumeTaken, statusOf } from '../errors';

export interface PolicyGateOptions {
  /** The engine client, for lookups and volume creates. */
  docker: Dockerode;
  /** Whose endpoint this is (plan/dockerEndpoint/policy.ts EndpointScope). */
  scope: EndpointScope;
  /** A bind source's realpath on the host; undefined when it does not exist. Default fs.promises.realpath. */
  realpath?(path: string): Promise<string | undefined>;
  log?(event: { rule?: string; message: string }): void;
  /** How long one lookup may take; tests shorten it. */
  lookupMs?: number;
}

/** How long one inspect, volume create or realpath may take before the request is refused. */
export const LOOKUP_MS = 10_000;
/** How much of an engine's error text a refusal quotes. */
export const ENGINE_TEXT_CHARS = 200;
/** /info's answer is read whole to be scrubbed (it is a few KiB). */
const INFO_MAX_BYTES = 1024 * 1024;

const seconds = (ms: number): string => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

/** A lookup that failed: the request is refused with it, not judged on a guess. */
class LookupFailed extends Error {}

export function shortText(text: string, max: number = ENGINE_TEXT_CHARS): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function toGate(r: Refusal): GateRefusal {
  return { kind: 'refuse', status: r.status, rule: r.rule, message: r.message };
}

async function defaultRealpath(path: string): Promise<string | undefined> {
  try {
    return await fsRealpath(path);
  } catch {
    // ENOENT, ENOTDIR, ELOOP, EACCES: not a path the bind can be judged by, so it is refused as missing.
    return undefined;
  }
}

/** What one inspect told: whose the object is, and for a container its mounts (the start re-check). */
interface Looked {
  ownership: Ownership;
  /**
   * The id to forward in place of the client's reference (a container's, network's or exec's id;
   * a volume's name): what the engine resolved the reference to when its owner was checked.
   */
  id?: string;
  /** An image's: whether it carries the caller's owner label (no container is made from it). */
  carriesOwner?: boolean;
  mounts?: InspectedMount[];
  /** A network's Internal, as the engine's inspect says (an egress policy's networks must be). */
  internal?: boolean;
  /** A container's HostConfig.NetworkMode (an exec's: its container's), which an egress policy asks about. */
  networkMode?: string;
}

type Labels = Record<string, string> | null | undefined;

/** docker-modem's request function, as dockerode's own helpers call it. */
interface Modem {
  dial(options: object, callback: (error: unknown, data: unknown) => void): void;
}

export function policyGate(options: PolicyGateOptions): EndpointGate {
  const { docker, scope } = options;
  const lookupMs = options.lookupMs ?? LOOKUP_MS;
  const realpath = options.realpath ?? defaultRealpath;
  const log = options.log ?? (() => undefined);

  /**
   * One request to the engine through dockerode's modem (whose inspect helpers do not all take an
   * abort signal), within lookupMs. A 404 is `undefined`; a status `tolerate` names is thrown as
   * the modem's error; any other failure is LookupFailed.
   */
  async function dial<T>(
    what: string,
    request: { path: string; method?: 'GET' | 'POST'; body?: object },
    tolerate: (error: unknown) => boolean = () => false,
  ): Promise<T | undefined> {
    // Not AbortSignal.timeout, whose timer is unref'd: a lookup must end even when nothing else holds the loop.
    const abort = new AbortController();
    const signal = abort.signal;
    const timer = setTimeout(() => abort.abort(), lookupMs);
    try {
      return await new Promise<T>((resolve, reject) =>
        (docker.modem as Modem).dial(
          {
            path: request.path,
            method: request.method ?? 'GET',
            ...(request.body !== undefined ? { allowEmpty: true, options: { _query: {}, _body: request.body } } : {}),
            abortSignal: signal,
            statusCodes: { 200: true, 201: true, 404: 'not found', 409: 'conflict', 500: 'server error' },
          },
          (error, data) => (error ? reject(error) : resolve(data as T)),
        ),
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      if (tolerate(error)) throw error;
      const why = signal.aborted
        ? `no answer within ${seconds(lookupMs)}`
        : shortText(statusOf(error) !== undefined ? engineMessage(error) : ((error as Error).message ?? String(error)));
      throw new LookupFailed(`The engine could not ${what} (${why}); the request was not forwarded.`);
    } finally {
      clearTimeout(timer);
    }
  }

  const owned = (labels: Labels): Ownership => (isOwned(labels ?? undefined, scope) ? 'own' : 'other');
  // The policy's path grammars leave nothing to escape in a name but an image reference's `/`, which the Engine API takes as is.
  const at = (ref: string): string => encodeURIComponent(ref).replace(/%2F/g, '/').replace(/%3A/g, ':').replace(/%40/g, '@');

  const idOf = (v: unknown): string | undefined => (typeof v === 'string' && /^[A-Za-z0-9:]{1,128}$/.test(v) ? v : undefined);

  async function lookContainer(ref: string): Promise<Looked> {
    const info = await dial<{
      Id?: unknown;
      Image?: unknown;
      Config?: { Labels?: Labels };
      Mounts?: InspectedMount[];
      HostConfig?: { NetworkMode?: unknown };
    }>(`inspect the container ${ref}`, { path: `/containers/${at(ref)}/json` });
    if (info === undefined) return { ownership: 'missing' };
    const id = idOf(info.Id);
    // Without its id the container cannot be forwarded as what was checked.
    if (id === undefined || !isOwned(info.Config?.Labels ?? undefined, scope)) return { ownership: 'other' };
    // The owner label proves the owner only when the image did not bring it (routes.ts containerOwnership).
    const image = idOf(info.Image);
    const imageLabels =
      image === undefined
        ? undefined
        : (await dial<{ Config?: { Labels?: Labels } }>(`inspect the image of the container ${ref}`, { path: `/images/${at(image)}/json` }))
            ?.Config?.Labels;
    const mode = info.HostConfig?.NetworkMode;
    return {
      ownership: containerOwnership(info.Config?.Labels, imageLabels, scope),
      id,
      mounts: info.Mounts ?? [],
      ...(typeof mode === 'string' ? { networkMode: mode } : {}),
    };
  }

  async function look(kind: ObjectKind, ref: string): Promise<Looked> {
    switch (kind) {
      case 'container':
        return lookContainer(ref);
      case 'volume': {
        // A volume has a name only: the name is what was checked.
        const info = await dial<{ Labels?: Labels }>(`inspect the volume ${ref}`, { path: `/volumes/${at(ref)}` });
        return { ownership: info === undefined ? 'missing' : owned(info.Labels) };
      }
      case 'network': {
        const info = await dial<{ Id?: unknown; Labels?: Labels; Internal?: unknown }>(`inspect the network ${ref}`, {
          path: `/networks/${at(ref)}`,
        });
        if (info === undefined) return { ownership: 'missing' };
        const id = idOf(info.Id);
        return { ownership: id === undefined ? 'other' : owned(info.Labels), id, internal: info.Internal === true };
      }
      case 'image': {
        const info = await dial<{ Id?: unknown; RepoTags?: unknown; Config?: { Labels?: Labels } }>(`inspect the image ${ref}`, {
          path: `/images/${at(ref)}/json`,
        });
        const labels = info?.Config?.Labels;
        const repoTags = Array.isArray(info?.RepoTags) ? info.RepoTags.filter((t): t is string => typeof t === 'string') : [];
        return {
          ownership: imageOwnership(ref, info === undefined ? undefined : { labels, repoTags }, scope),
          carriesOwner: isOwned(labels ?? undefined, scope),
        };
      }
      case 'exec': {
        // An exec is the caller's when the container it runs in is.
        const info = await dial<{ ID?: unknown; ContainerID?: unknown }>(`inspect the exec ${ref}`, { path: `/exec/${at(ref)}/json` });
        const container = info?.ContainerID;
        if (typeof container !== 'string' || container === '') return { ownership: 'missing' };
        const id = idOf(info?.ID);
        const looked = await lookContainer(container);
        return {
          ownership: id === undefined ? 'other' : looked.ownership,
          id,
          ...(looked.networkMode !== undefined ? { networkMode: looked.networkMode } : {}),
        };
      }
    }
  }

  /** Inspects every object of `refs` at once; the answers by kind and ref. */
  async function lookAll(refs: ObjectRefs): Promise<Map<string, Looked>> {
    const kinds: Array<[ObjectKind, string[]]> = [
      ['container', refs.containers],
      ['volume', refs.volumes],
      ['network', refs.networks],
      ['image', refs.images],
      ['exec', refs.execs],
    ];
    const pairs = kinds.flatMap(([kind, list]) => [...new Set(list)].map((ref) => [kind, ref] as const));
    const answers = await Promise.all(pairs.map(async ([kind, ref]) => [`${kind}\n${ref}`, await look(kind, ref)] as const));
    return new Map(answers);
  }

  const ownerOf =
    (known: ReadonlyMap<string, Looked>) =>
    (kind: ObjectKind, ref: string): Ownership =>
      // Anything not looked up is not proven the caller's.
      known.get(`${kind}\n${ref}`)?.ownership ?? 'other';

  const idsOf =
    (known: ReadonlyMap<string, Looked>) =>
    (kind: ObjectKind, ref: string): string | undefined =>
      known.get(`${kind}\n${ref}`)?.id;

  const internalOf =
    (known: ReadonlyMap<string, Looked>) =>
    (network: string): boolean =>
      known.get(`network\n${network}`)?.internal === true;

  /**
   * Under an egress policy, the network of each container and exec a request runs something in: the
   * inspect's mode, and for `container:<other>` that other's mode, looked up (one step).
   */
  async function networksOf(c: Classified, known: ReadonlyMap<string, Looked>): Promise<Map<string, ContainerNetwork>> {
    const keys = [...c.owned.containers.map((r) => `container\n${r}`), ...c.owned.execs.map((r) => `exec\n${r}`)];
    const out = new Map<string, ContainerNetwork>();
    for (const key of keys) {
      const mode = known.get(key)?.networkMode;
      const shared = mode?.startsWith('container:') ? mode.slice('container:'.length) : undefined;
      out.set(key, { mode, ...(shared !== undefined ? { joined: (await lookContainer(shared)).networkMode } : {}) });
    }
    return out;
  }

  async function realpaths(sources: readonly string[]): Promise<Map<string, string | undefined>> {
    const out = await Promise.all(
      [...new Set(sources)].map(async (source) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), lookupMs)));
        const real = await Promise.race([realpath(source), late]).finally(() => clearTimeout(timer));
        if (real === 'timeout')
          throw new LookupFailed(`The host did not resolve ${shortText(source)} in time; the request was not forwarded.`);
        return [source, real] as const;
      }),
    );
    return new Map(out);
  }

  /**
   * Creates a volume the body uses, labelled as the caller's, and checks the engine's answer: an
   * existing volume comes back as it is (Docker) or as a conflict (Podman), and one someone else
   * made in between is refused.
   */
  async function createVolume(name: string, body: Buffer): Promise<Refusal | undefined> {
    let labels: Labels;
    try {
      const answer = await dial<{ Labels?: Labels }>(
        `create the volume ${name}`,
        { path: '/volumes/create', method: 'POST', body: JSON.parse(body.toString('utf8')) as object },
        isVolumeTaken,
      );
      labels = answer?.Labels;
    } catch (error) {
      if (!isVolumeTaken(error)) throw error;
    }
    if (labels === undefined) {
      // Podman answers a taken name with a conflict, not the volume: inspect it to learn whose it is.
      labels = (await dial<{ Labels?: Labels }>(`inspect the volume ${name}`, { path: `/volumes/${at(name)}` }))?.Labels;
    }
    if (isOwned(labels ?? undefined, scope)) return undefined;
    return {
      kind: 'refuse',
      status: 403,
      rule: 'not-owned',
      message: `The volume ${name} was made by someone else while this request was checked; use a volume of this workspace's own.`,
    };
  }

  async function checkJsonBody(c: Classified, raw: Buffer): Promise<GateRefusal | { kind: 'forward'; body: Buffer }> {
    const parsed = parseBody(c, raw);
    if (isRefusal(parsed)) return refuse(parsed);
    const lookups = bodyLookups(parsed, scope);
    if (isRefusal(lookups)) return refuse(lookups);
    const [known, real] = await Promise.all([lookAll(lookups.objects), realpaths(lookups.bindSources)]);
    const checked = checkBody(parsed, scope, {
      owner: ownerOf(known),
      internal: internalOf(known),
      // By the client's reference, or by the id the body now names it by (bodies.ts Judge.own).
      network: (container) => ({
        mode: (known.get(`container\n${container}`) ?? [...known.values()].find((l) => l.id !== undefined && l.id === container))
          ?.networkMode,
      }),
      realpaths: real,
      id: idsOf(known),
      imageCarriesOwner: (ref) => known.get(`image\n${ref}`)?.carriesOwner === true,
    });
    if (isRefusal(checked)) return refuse(checked);
    for (const volume of checked.volumesToCreate) {
      const taken = await createVolume(volume.name, volume.body);
      if (taken) return refuse(taken);
    }
    return { kind: 'forward', body: checked.body };
  }

  function refuse(r: Refusal): GateRefusal {
    log({ rule: r.rule, message: r.message });
    return toGate(r);
  }

  function failed(error: unknown): GateRefusal {
    if (!(error instanceof LookupFailed)) throw error;
    log({ rule: 'engine-lookup', message: error.message });
    return { kind: 'refuse', status: 502, rule: 'engine-lookup', message: error.message };
  }

  async function head(req: { method: string; target: string; headers: Record<string, string | string[] | undefined> }): Promise<GateHead> {
    const c = classify({ method: req.method, target: req.target, headers: req.headers }, scope);
    if (isRefusal(c)) return refuse(c);
    const known = await lookAll({ ...c.owned, networks: [...c.owned.networks, ...c.internalNetworks] });
    const notOwned = checkOwned(c, ownerOf(known), internalOf(known));
    if (notOwned) return refuse(notOwned);
    if (c.runsInside !== undefined) {
      // Under an egress policy: nothing runs in a container of its own that has a network.
      const networks = await networksOf(c, known);
      const reach = checkReach(c, (kind, ref) => networks.get(`${kind}\n${ref}`));
      if (reach) return refuse(reach);
    }

    if (c.recheckBinds) {
      // Start and restart: Docker resolves the binds again, so they are resolved again here first.
      for (const ref of c.owned.containers) {
        const mounts = known.get(`container\n${ref}`)?.mounts ?? [];
        const again = checkStartBinds(mounts, scope, await realpaths(startBindSources(mounts)));
        if (again) return refuse(again);
      }
    }

    // Forwarded by the ids just checked: a name could lead to another object by the time the engine reads it.
    const forward: GateForward = { kind: 'forward', target: forwardTarget(c, idsOf(known)), upgrade: c.hijack, headers: { ...c.headers } };
    if (c.body.kind === 'json') {
      // What goes out is the policy's JSON, never empty, whatever the client sent (or did not);
      // nothing for a body Docker does not read (stop, restart, kill: dockerode repeats its query there).
      const { 'content-type': _type, ...rest } = c.headers;
      forward.headers = DROPPED_BODY.has(c.route) ? rest : { ...rest, 'content-type': 'application/json' };
      forward.body = {
        maxBytes: c.body.limit,
        check: async (raw) => {
          try {
            return await checkJsonBody(c, raw);
          } catch (error) {
            return failed(error);
          }
        },
      };
    }
    if (c.response === 'scrub-info') {
      forward.response = {
        maxBytes: INFO_MAX_BYTES,
        rewrite: (status, body) => (status >= 200 && status < 300 ? scrubInfo(body) : body),
      };
    }
    return forward;
  }

  return {
    async head(req) {
      try {
        return await head(req);
      } catch (error) {
        return failed(error);
      }
    },
  };
}
