/**
 * Having the session image on this machine before a container is created: our own runtime
 * image is built from the extension's files, anyone else's is pulled, and a custom image is
 * checked once for the shims and tools the bridge and the entrypoint rely on.
 */
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import type { PullPolicy } from '../config/model';
import { CONTAINER } from '../contract/upstream';
import { RUNTIME_IMAGE_LABELS } from '../contract/image';
import { SHIMS } from '../contract/shims';
import { RUNTIME_IMAGE_LIMITS_MS, buildRuntimeImage, splitTag, tagTarget, untagIfMoved } from './imageBuild';
import { PullProgress, type ImageProgress } from './imageProgress';
import { demux, subscribeWait } from './containers';
import type { EngineContext } from './context';
import { abortError, clause, engineMessage, isNotFound, throwIfAborted } from './errors';

/**
 * Shims a custom image may lack without being refused: paplay only serves herdr's chimes, and an
 * image made before upstream added it (or /sound) still runs every shell.
 */
const OPTIONAL_SHIMS: readonly string[] = ['paplay', 'toolbox-propose'];

export interface EnsureImageOptions {
  ref: string;
  pull: PullPolicy;
  /**
   * True for the extension's own runtime image: pulled from `publishedRef` when that is set and
   * the pull policy allows, built locally from the extension's files otherwise or when the pull fails.
   */
  ours: boolean;
  /** Where ours is published under the same hash (`<registry or mirror>/<path>:<hash>`); unset: never pulled. */
  publishedRef?: string;
  /** The extension root (holds images/runtime and shims), for building ours. */
  contextRoot: string;
  buildArgs?: Record<string, string>;
  onLog?: (line: string) => void;
  /** The phase for a notification: layers and bytes of a pull, the step of a build. */
  onProgress?: (progress: ImageProgress) => void;
  signal?: AbortSignal;
  /** Image ids already checked by the preflight, with what each one lacks (empty: fine); the caller keeps it. */
  checkedImages?: Map<string, string[]>;
}

/**
 * Makes the image available and answers its repo digest (`sha256:…`, for TOOLBOX_IMAGE_DIGEST),
 * or undefined when it has none (a local build), as upstream's session plan records it.
 */
export async function ensureImage(ctx: EngineContext, opts: EnsureImageOptions): Promise<string | undefined> {
  const { docker } = ctx;
  const { ref, pull, ours, onLog, signal } = opts;
  throwIfAborted(signal);
  const first = await imageInfo(docker, ref);
  const present = first?.Id;
  if (ours) {
    const outcome = await ensureRuntimeImage(ctx, opts, present);
    // The inspect above still describes the image unless this step pulled or built another.
    return outcome.how === 'present' && first ? repoDigest(first) : repoDigest(await imageInfo(docker, ref));
  }
  if (!present || pull === 'always') {
    if (!present && pull === 'never') {
      throw new Error(
        `The image ${ref} is not on this machine and pull is set to never. ` +
          `Pull or build it yourself, or set \`pull: auto\` in .toolbox.yaml.`,
      );
    }
    await pullImage(docker, ref, onLog, signal);
    const pulled = await imageInfo(docker, ref);
    if (!pulled) {
      throw new Error(`The image ${ref} was pulled but Docker does not list it afterwards. Try again, or pull it yourself.`);
    }
    await preflightImage(ctx, ref, pulled.Id, opts.checkedImages, signal);
    return repoDigest(pulled);
  }
  await preflightImage(ctx, ref, present!, opts.checkedImages, signal);
  return repoDigest(first);
}

/** The digest part of the image's first repo digest (`repo@sha256:…`); none for a local build. */
export function repoDigest(info: { RepoDigests?: string[] } | undefined): string | undefined {
  for (const entry of info?.RepoDigests ?? []) {
    const at = entry.indexOf('@');
    if (at > 0 && at < entry.length - 1) return entry.slice(at + 1);
  }
  return undefined;
}

/** How the runtime image step ended: already here, pulled, or built (and why it was not pulled). */
export type RuntimeImageOutcome = { how: 'present' } | { how: 'pulled'; from: string } | { how: 'built'; pullFailed?: string };

/**
 * Our runtime image, under upstream's pull policy: `auto` pulls only when the tag is absent
 * (the warm path asks no registry), `always` pulls even when it is present, `never` never asks
 * a registry. A pull that fails (offline, not published, a 404, a stall) builds instead, and says so.
 */
export async function ensureRuntimeImage(ctx: EngineContext, opts: EnsureImageOptions, present?: string): Promise<RuntimeImageOutcome> {
  const { docker } = ctx;
  const { ref, pull, publishedRef, onLog, onProgress, signal } = opts;
  if (present === undefined) present = await imageId(docker, ref);
  if (present && pull !== 'always') return { how: 'present' };
  let pullFailed: string | undefined;
  if (publishedRef && pull !== 'never') {
    try {
      await pullRuntimeImage(docker, { ...opts, publishedRef, before: present });
      return { how: 'pulled', from: publishedRef };
    } catch (err) {
      if (signal?.aborted) throw err;
      pullFailed = (err as { reason?: string }).reason ?? clause((err as Error).message);
      if (present) {
        onLog?.(`Could not pull ${publishedRef} (${pullFailed}); keeping the runtime image this machine has.`);
        return { how: 'present' };
      }
      onLog?.(`Could not pull ${publishedRef} (${pullFailed}). Building the runtime image on this machine instead.`);
      onProgress?.({ message: 'The runtime image could not be pulled; building it on this machine' });
    }
  } else if (present) {
    return { how: 'present' };
  }
  onLog?.(`Building the toolbox runtime image ${ref}…`);
  await buildRuntimeImage(docker, { contextRoot: opts.contextRoot, tag: ref, buildArgs: opts.buildArgs, onLog, onProgress, signal });
  return { how: 'built', pullFailed };
}

/**
 * Pulls the published runtime image, checks that it was built from the same context (its
 * label), and tags it under the local runtime tag; the registry's name is dropped again. A
 * cancelled or failed pull leaves no image under either name.
 */
async function pullRuntimeImage(
  docker: Docker,
  opts: EnsureImageOptions & { publishedRef: string; before: string | undefined },
): Promise<void> {
  const { ref, publishedRef, onLog, onProgress, signal } = opts;
  const remoteBefore = await tagTarget(docker, publishedRef).catch(() => undefined);
  const dropRemote = async (): Promise<void> => {
    if (remoteBefore === undefined) {
      await docker
        .getImage(publishedRef)
        .remove({ noprune: true })
        .catch(() => undefined);
    }
  };
  try {
    await pullImage(docker, publishedRef, onLog, signal, onProgress, 'the runtime image');
  } catch (err) {
    if (signal?.aborted) await untagIfMoved(docker, publishedRef, remoteBefore);
    throw err;
  }
  try {
    const info = await docker.getImage(publishedRef).inspect();
    const want = ref.slice(ref.lastIndexOf(':') + 1);
    const got = info.Config?.Labels?.[RUNTIME_IMAGE_LABELS.contextHash];
    if (got !== want) {
      throw new Error(
        `the image there was built from another context (label ${RUNTIME_IMAGE_LABELS.contextHash}=${got ?? 'unset'}, expected ${want})`,
      );
    }
    throwIfAborted(signal);
    await docker.getImage(publishedRef).tag(splitTag(ref));
    onLog?.(`Pulled the runtime image from ${publishedRef} and tagged it ${ref}.`);
  } finally {
    await dropRemote();
  }
}

/** The image's id, or undefined when the engine has no such image. */
async function imageId(docker: Docker, ref: string): Promise<string | undefined> {
  return (await imageInfo(docker, ref))?.Id;
}

/** The image's inspect, or undefined when the engine has no such image. */
async function imageInfo(docker: Docker, ref: string): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await docker.getImage(ref).inspect();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new Error(`Could not inspect the image ${ref}: ${clause(engineMessage(err))}.`, { cause: err });
  }
}

/** The registry a reference pulls from (`docker.io` for bare names, like the CLI). */
export function registryOf(ref: string): string {
  const slash = ref.indexOf('/');
  if (slash < 0) return 'docker.io';
  const first = ref.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : 'docker.io';
}

interface PullEvent {
  status?: string;
  id?: string;
  progress?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
  errorDetail?: { message?: string };
}

async function pullImage(
  docker: Docker,
  ref: string,
  onLog: ((line: string) => void) | undefined,
  outerSignal: AbortSignal | undefined,
  onProgress?: (progress: ImageProgress) => void,
  label: string = ref,
): Promise<void> {
  // A pull that reports nothing for a while (a network that drops packets) is given up.
  const stall = new AbortController();
  const signal = outerSignal ? AbortSignal.any([outerSignal, stall.signal]) : stall.signal;
  let timer: NodeJS.Timeout | undefined;
  const alive = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => stall.abort(), RUNTIME_IMAGE_LIMITS_MS.pullStall);
  };
  alive();
  try {
    await pullImageOnce(docker, ref, onLog, signal, outerSignal, onProgress, label, alive);
  } finally {
    clearTimeout(timer);
  }
}

async function pullImageOnce(
  docker: Docker,
  ref: string,
  onLog: ((line: string) => void) | undefined,
  signal: AbortSignal,
  outerSignal: AbortSignal | undefined,
  onProgress: ((progress: ImageProgress) => void) | undefined,
  label: string,
  alive: () => void,
): Promise<void> {
  const stalled = `it reported no progress for ${RUNTIME_IMAGE_LIMITS_MS.pullStall / 1000} seconds`;
  const registry = registryOf(ref);
  const fail = (why: string) =>
    Object.assign(
      new Error(
        `The image ${ref} could not be pulled from ${registry}: ${clause(why)}. ` +
          `Build it locally, set \`image:\` in .toolbox.yaml to an image this machine has, ` +
          `or set \`pull: never\` to use only local images.`,
      ),
      { reason: clause(why) },
    );
  onLog?.(`Pulling ${ref} from ${registry}…`);
  let stream: NodeJS.ReadableStream;
  try {
    const pull = docker.pull.bind(docker) as unknown as (r: string, o: object) => Promise<NodeJS.ReadableStream>;
    stream = await pull(ref, { abortSignal: signal });
  } catch (err) {
    if (outerSignal?.aborted) throw abortError(outerSignal);
    throw fail(signal.aborted ? stalled : engineMessage(err));
  }
  // Layers report progress many times a second; a line per change of status is enough.
  const lastStatus = new Map<string, string>();
  const progress = new PullProgress(label);
  let lastPercent = -1;
  let lastReport = 0;
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, events: PullEvent[]) => {
        const failed = events?.find((e) => e.error || e.errorDetail?.message);
        if (outerSignal?.aborted) reject(abortError(outerSignal));
        else if (signal.aborted) reject(fail(stalled));
        else if (err) reject(fail(engineMessage(err)));
        else if (failed) reject(fail(failed.errorDetail?.message ?? failed.error ?? 'unknown error'));
        else {
          if (onProgress && lastPercent < 100) onProgress(progress.complete());
          resolve();
        }
      },
      (event: PullEvent) => {
        alive();
        // Bytes change many times a second: a report when the percent moves, else at most 4 a second.
        const report = progress.update(event);
        const now = Date.now();
        if (report && onProgress && ((report.percent ?? 0) !== lastPercent || now - lastReport >= 250)) {
          lastPercent = report.percent ?? 0;
          lastReport = now;
          onProgress(report);
        }
        if (!event.status) return;
        const key = event.id ?? '';
        if (lastStatus.get(key) === event.status) return;
        lastStatus.set(key, event.status);
        onLog?.(event.id ? `${event.id}: ${event.status}` : event.status);
      },
    );
  });
}

/** What the preflight looks for: the shims (bridge-lib is sourced, the rest executed) and python3. */
export function preflightTargets(): { files: string[]; executables: string[]; commands: string[] } {
  const files: string[] = [];
  const executables: string[] = [];
  for (const shim of SHIMS) {
    if (OPTIONAL_SHIMS.includes(shim)) continue;
    if (CONTAINER.bridgeLib.endsWith(`/${shim}`)) files.push(CONTAINER.bridgeLib);
    else executables.push(`${CONTAINER.shimDir}/${shim}`);
  }
  return { files, executables, commands: ['python3'] };
}

export function preflightScript(): string {
  const { files, executables, commands } = preflightTargets();
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return [
    ...files.map((f) => `[ -f ${q(f)} ] || echo ${q(f)}`),
    ...executables.map((f) => `[ -x ${q(f)} ] || echo ${q(f)}`),
    ...commands.map((c) => `command -v ${q(c)} >/dev/null 2>&1 || echo ${q(c)}`),
    'exit 0',
  ].join('\n');
}

/**
 * Runs a throwaway container over a custom image, once per image id, and fails with what is
 * missing. Without the shims the bridge routes silently do nothing inside the container.
 */
async function preflightImage(
  ctx: EngineContext,
  ref: string,
  id: string,
  checked: Map<string, string[]> | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  let missing = checked?.get(id);
  if (missing === undefined) {
    missing = await runPreflight(ctx, ref, signal);
    checked?.set(id, missing);
  }
  if (missing.length > 0) {
    throw new Error(
      `The image ${ref} cannot run a toolbox shell: it lacks ${missing.join(', ')}. ` +
        `Base it on the toolbox runtime image, or unset \`image:\` in .toolbox.yaml to use the built-in one.`,
    );
  }
}

async function runPreflight(ctx: EngineContext, ref: string, signal: AbortSignal | undefined): Promise<string[]> {
  const { docker, names } = ctx;
  throwIfAborted(signal);
  const container = await docker.createContainer({
    name: `${names.prefix}-image-check-${randomBytes(3).toString('hex')}`,
    Image: ref,
    User: '0:0',
    Entrypoint: ['sh', '-c'],
    Cmd: [preflightScript()],
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: { AutoRemove: true, NetworkMode: 'none' },
  });
  try {
    const stream = (await container.attach({ stream: true, stdout: true, stderr: true })) as NodeJS.ReadableStream;
    const chunks: Buffer[] = [];
    const ended = new Promise<void>((resolve) => {
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });
    const { exited } = await subscribeWait(docker, container.id, 'removed');
    try {
      await container.start();
    } catch (err) {
      throw new Error(
        `The image ${ref} cannot run a toolbox shell: a test container could not start (${clause(engineMessage(err))}). ` +
          `Base it on the toolbox runtime image, or unset \`image:\` in .toolbox.yaml to use the built-in one.`,
        { cause: err },
      );
    }
    const result = await exited;
    await ended;
    const output = demux(Buffer.concat(chunks));
    if (result.StatusCode !== 0) {
      throw new Error(
        `The image ${ref} could not be checked: its test container exited with code ${result.StatusCode}` +
          `${output.trim() ? ` (${clause(output.trim())})` : ''}. Base it on the toolbox runtime image, or unset \`image:\`.`,
      );
    }
    return output
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

/**
 * The image's entrypoint starts the session holder at container start when ENV.sessionSocket is
 * set (RUNTIME_IMAGE_LABELS.holderAtStart, docs/decisions/0032-session-holder-started-with-the-container.md).
 * false when it does not say so, or cannot be inspected.
 */
export async function imageStartsHolder(docker: Docker, ref: string): Promise<boolean> {
  const info = await docker
    .getImage(ref)
    .inspect()
    .catch(() => undefined);
  return info?.Config?.Labels?.[RUNTIME_IMAGE_LABELS.holderAtStart] === '1';
}
