/**
 * Building the runtime image from the extension's own files. The build context is the
 * extension root restricted to `images/runtime/` and `shims/`; the tag is a content hash of
 * exactly those files, so a changed Dockerfile, entrypoint or shim yields a new tag and an
 * unchanged tree reuses the image already built.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type Dockerode from 'dockerode';
import { RUNTIME_IMAGE_CONTEXT, RUNTIME_IMAGE_LABELS, RUNTIME_IMAGE_PUBLISHED, RUNTIME_IMAGE_REPO } from '../contract/image';
import { abortError, clause, engineMessage, isNotFound, throwIfAborted } from './errors';
import { buildStepProgress, parseBuildStep, type ImageProgress } from './imageProgress';

/** Bounds of the runtime image step. */
export const RUNTIME_IMAGE_LIMITS_MS = {
  /** A pull that reports nothing for this long is given up (a blackholed network), and the image is built. */
  pullStall: 60_000,
  /** After a cancelled build or pull: the tag is checked at once and again this much later. */
  cancelSettle: 1_000,
} as const;

export interface BuildRuntimeImageOptions {
  /** Directory holding `images/runtime/` and `shims/` (the extension root). */
  contextRoot: string;
  tag: string;
  buildArgs?: Record<string, string>;
  onLog?: (line: string) => void;
  /** The current step, for a notification ("step 5 of 22"). */
  onProgress?: (progress: ImageProgress) => void;
  signal?: AbortSignal;
  /** Network for the build's RUN steps (`host` avoids depending on the default bridge). */
  networkMode?: string;
  /** Build without the engine's layer cache (Rebuild Runtime Image, `--no-cache`). */
  noCache?: boolean;
}

/** How many log lines an error message quotes. */
const ERROR_TAIL_LINES = 12;

/** Every regular file of the build context, as sorted `/`-separated paths relative to contextRoot. */
export function runtimeContextFiles(contextRoot: string): string[] {
  const dockerfile = join(contextRoot, RUNTIME_IMAGE_CONTEXT.dockerfile);
  if (!existsSync(dockerfile)) {
    throw new Error(
      `The runtime image cannot be built: ${dockerfile} does not exist. ` +
        'Reinstall the extension (its images/ and shims/ folders are missing or incomplete).',
    );
  }
  const files: string[] = [];
  const walk = (rel: string): void => {
    const abs = join(contextRoot, rel);
    if (!existsSync(abs)) return;
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      // Python's byte-code cache (a test that runs a script of the image leaves one) is not the image's.
      if (entry.isDirectory()) {
        if (entry.name !== '__pycache__') walk(child);
      } else if (entry.isFile()) files.push(child);
    }
  };
  for (const dir of RUNTIME_IMAGE_CONTEXT.dirs) walk(dir);
  return files.sort();
}

/**
 * `toolbox-vscode/runtime:<12 hex>`: sha256 over the sorted context files' paths and contents.
 * Non-empty build args are folded in too, so two variants of the same tree never share a tag.
 */
export function runtimeImageTag(contextRoot: string, buildArgs?: Record<string, string>, repo: string = RUNTIME_IMAGE_REPO): string {
  return `${repo}:${runtimeContextHash(contextRoot, buildArgs)}`;
}

/**
 * Where the runtime image with this local tag is published: the same hash under
 * `RUNTIME_IMAGE_PUBLISHED` (the workflow pushes there), or under `registry_mirror` when one is
 * set, which replaces the registry the way upstream's does (`harbor.corp.io/ghcr-proxy` →
 * `harbor.corp.io/ghcr-proxy/<path>:<hash>`).
 */
export function publishedRuntimeImageRef(localTag: string, registryMirror?: string): string {
  const hash = localTag.slice(localTag.lastIndexOf(':') + 1);
  const registry = registryMirror ? registryMirror.replace(/\/+$/, '') : RUNTIME_IMAGE_PUBLISHED.registry;
  return `${registry}/${RUNTIME_IMAGE_PUBLISHED.path}:${hash}`;
}

/**
 * The labels a runtime image is built with: the hash of the context and build args it was built
 * from, the one its published tag carries (checked after a pull). Worked out from the context,
 * not read off the tag: the same context under another tag is the same image (the build cache
 * gives the same id).
 */
export function runtimeImageLabels(contextRoot: string, buildArgs?: Record<string, string>): Record<string, string> {
  return { [RUNTIME_IMAGE_LABELS.contextHash]: runtimeContextHash(contextRoot, buildArgs) };
}

export function runtimeContextHash(contextRoot: string, buildArgs?: Record<string, string>): string {
  const h = createHash('sha256');
  for (const rel of runtimeContextFiles(contextRoot)) {
    const content = readFileSync(join(contextRoot, rel));
    h.update(`${rel}\0${content.length}\0`);
    h.update(content);
  }
  for (const key of Object.keys(buildArgs ?? {}).sort()) {
    h.update(`arg\0${key}=${buildArgs![key]}\0`);
  }
  return h.digest('hex').slice(0, 12);
}

interface BuildEvent {
  stream?: string;
  status?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

/** Builds the runtime image and resolves with its id (`sha256:…`). */
export async function buildRuntimeImage(docker: Dockerode, opts: BuildRuntimeImageOptions): Promise<string> {
  const { contextRoot, tag, buildArgs, onLog, onProgress, signal, networkMode } = opts;
  throwIfAborted(signal);
  const src = runtimeContextFiles(contextRoot);
  for (const dir of RUNTIME_IMAGE_CONTEXT.dirs) {
    if (!statSync(join(contextRoot, dir), { throwIfNoEntry: false })?.isDirectory()) {
      throw new Error(`The runtime image cannot be built: ${join(contextRoot, dir)} is missing. Reinstall the extension.`);
    }
  }

  const tail: string[] = [];
  let lastStep = '';
  const argDefaults: Record<string, string> = {};
  const log = (line: string): void => {
    const step = parseBuildStep(line);
    if (step) {
      // Name the real image in FROM steps: substitute build args and ARG defaults seen so far.
      const arg = /^ARG\s+(\w+)=(\S*)/i.exec(step.instruction);
      if (arg) argDefaults[arg[1]] = arg[2];
      lastStep = step.instruction.replace(/\$\{(\w+)\}/g, (m, k: string) => buildArgs?.[k] ?? argDefaults[k] ?? m);
      const progress = buildStepProgress('the runtime image', line);
      if (progress) onProgress?.(progress);
    }
    tail.push(line);
    if (tail.length > ERROR_TAIL_LINES) tail.shift();
    onLog?.(line);
  };

  // A cancelled build must leave no image under the tag, nor move the tag off an image it had.
  const before = await tagTarget(docker, tag);
  const cancelled = async (): Promise<Error> => {
    await untagIfMoved(docker, tag, before);
    return abortError(signal!);
  };
  let stream: NodeJS.ReadableStream;
  try {
    stream = await docker.buildImage(
      { context: contextRoot, src },
      {
        t: tag,
        dockerfile: RUNTIME_IMAGE_CONTEXT.dockerfile,
        buildargs: buildArgs ?? {},
        rm: true,
        forcerm: true,
        labels: runtimeImageLabels(contextRoot, buildArgs),
        ...(opts.noCache ? { nocache: true } : {}),
        ...(networkMode ? { networkmode: networkMode } : {}),
        abortSignal: signal,
      },
    );
  } catch (err) {
    if (signal?.aborted) throw await cancelled();
    throw buildError(tag, engineMessage(err), tail, lastStep);
  }

  let imageId: string | undefined;
  let failure: string | undefined;
  const aborted = { value: false };
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null) => {
        if (signal?.aborted) {
          aborted.value = true;
          resolve();
        } else if (err) reject(buildError(tag, engineMessage(err), tail, lastStep));
        else resolve();
      },
      (event: BuildEvent) => {
        if (typeof event.stream === 'string') {
          for (const line of event.stream.split(/\r?\n/)) {
            if (line.trim() !== '') log(line);
          }
          const built = /^Successfully built ([0-9a-f]+)/m.exec(event.stream);
          if (built && !imageId) imageId = built[1];
        } else if (typeof event.status === 'string') {
          log(event.progress ? `${event.status} ${event.progress}` : event.status);
        }
        if (event.aux?.ID) imageId = event.aux.ID;
        const message = event.errorDetail?.message ?? event.error;
        if (typeof message === 'string' && failure === undefined) {
          failure = message;
          log(message);
        }
      },
    );
  });

  if (aborted.value) throw await cancelled();
  if (failure !== undefined) throw buildError(tag, failure, tail, lastStep);
  try {
    const info = await docker.getImage(tag).inspect();
    return info.Id;
  } catch (err) {
    if (imageId) return imageId.startsWith('sha256:') ? imageId : `sha256:${imageId}`;
    throw buildError(tag, `the engine reported no error but the image cannot be inspected: ${engineMessage(err)}`, tail, lastStep);
  }
}

/** The image id a tag points at, or undefined when it names no image. */
export async function tagTarget(docker: Dockerode, tag: string): Promise<string | undefined> {
  try {
    return (await docker.getImage(tag).inspect()).Id;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new Error(`Could not inspect the image ${tag}: ${clause(engineMessage(err))}.`, { cause: err });
  }
}

/**
 * After a cancelled build or pull: the engine stops the job when the request closes, but a job
 * at its last step may still tag. Removes the tag when it now names another image than before
 * (only the tag: layers a container uses stay), now and once more after the engine settled.
 */
export async function untagIfMoved(docker: Dockerode, tag: string, before: string | undefined): Promise<void> {
  const check = async (): Promise<void> => {
    const now = await tagTarget(docker, tag).catch(() => undefined);
    if (now === undefined || now === before) return;
    await docker
      .getImage(tag)
      .remove({ noprune: true })
      .catch(() => undefined);
    // The old image keeps its tag: a cancelled rebuild changes nothing.
    if (before)
      await docker
        .getImage(before)
        .tag(splitTag(tag))
        .catch(() => undefined);
  };
  await check();
  await new Promise((resolve) => setTimeout(resolve, RUNTIME_IMAGE_LIMITS_MS.cancelSettle));
  await check();
}

/** `repo:tag` as dockerode's tag() wants it (the repository may hold a registry's port). */
export function splitTag(ref: string): { repo: string; tag: string } {
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? { repo: ref.slice(0, colon), tag: ref.slice(colon + 1) } : { repo: ref, tag: 'latest' };
}

function buildError(tag: string, message: string, tail: string[], lastStep: string): Error {
  const reason = clause(message);
  const text = `${reason}\n${tail.join('\n')}`;
  let hint = 'Check that the Docker engine is running and has free disk space, then retry; the last build lines are below.';
  if (
    /^FROM\b/i.test(lastStep) ||
    /pull access denied|repository does not exist|manifest unknown|No such image|initializing source docker:\/\//i.test(reason)
  ) {
    hint =
      `The base image (${lastStep || 'FROM'}) is not available locally and could not be pulled: ` +
      'pull or build it first (in this repository: bash scripts/ensure-base-image.sh), then retry.';
  } else if (/Temporary failure resolving|Could not resolve|Failed to fetch|Unable to fetch|ENOTFOUND|EAI_AGAIN/i.test(text)) {
    hint = `A download failed in step "${lastStep}": check the network or package mirror the Docker engine can reach, then retry.`;
  } else if (/no space left on device/i.test(text)) {
    hint = 'The Docker engine is out of disk space: free some (docker system prune), then retry.';
  } else if (lastStep) {
    hint = `The failing step was "${lastStep}". ${hint}`;
  }
  const lines = tail.length > 0 ? `\nLast build output:\n  ${tail.join('\n  ')}` : '';
  return new Error(`Building the runtime image ${tag} failed: ${reason}. ${hint}${lines}`);
}

/**
 * The PEM text of every `*.crt` / `*.pem` file in `dir` (upstream's `~/.toolbox/certs`, which
 * the container also mounts at /etc/toolbox/certs), for the EXTRA_CA_CERTS build argument: a
 * TLS-intercepting proxy otherwise fails the build's npm downloads. Undefined when there are
 * none; files that are not PEM certificates are skipped with a log line.
 */
export function extraCaCerts(dir: string, log?: (line: string) => void): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => /\.(crt|pem)$/i.test(n))
      .sort();
  } catch {
    return undefined;
  }
  const pems: string[] = [];
  for (const name of names) {
    const text = readFileSync(join(dir, name), 'utf8');
    const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
    if (blocks) pems.push(...blocks);
    else log?.(`Skipping ${join(dir, name)} for the image build: it holds no PEM certificate.`);
  }
  return pems.length > 0 ? pems.join('\n') : undefined;
}
