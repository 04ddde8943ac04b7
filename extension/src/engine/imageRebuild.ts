/**
 * Rebuild Runtime Image (upstream's `toolbox build`, `--no-cache` as an option): builds the
 * runtime image under its current tag, then prunes old toolbox runtime images: other tags of our
 * own repository, and the image the tag named before the rebuild. Never an image a container
 * (running or stopped) still uses, never anything outside our repository.
 */
import type Docker from 'dockerode';
import { familiarImageName } from './compat';
import { buildRuntimeImage, tagTarget } from './imageBuild';
import { clause, engineMessage } from './errors';
import type { ImageProgress } from './imageProgress';

export interface RebuildOptions {
  contextRoot: string;
  /** The runtime tag (`<repo>:<hash>`); its repository bounds what is pruned. */
  tag: string;
  buildArgs?: Record<string, string>;
  noCache?: boolean;
  /**
   * Also remove the repository's other tags (default). Off for the test repository, which
   * concurrent test runs share: there only the image this rebuild replaced is pruned.
   */
  pruneOtherTags?: boolean;
  onLog?: (line: string) => void;
  onProgress?: (progress: ImageProgress) => void;
  signal?: AbortSignal;
}

export interface RebuildResult {
  id: string;
  /** Tags (or ids, for the untagged previous image) removed. */
  pruned: string[];
  /** Old images kept because a container uses them. */
  inUse: string[];
}

export async function rebuildRuntimeImage(docker: Docker, opts: RebuildOptions): Promise<RebuildResult> {
  const before = await tagTarget(docker, opts.tag);
  const id = await buildRuntimeImage(docker, {
    contextRoot: opts.contextRoot,
    tag: opts.tag,
    buildArgs: opts.buildArgs,
    noCache: opts.noCache,
    onLog: opts.onLog,
    onProgress: opts.onProgress,
    signal: opts.signal,
  });
  const { pruned, inUse } = await pruneRuntimeImages(docker, opts.tag, before && before !== id ? [before] : [], opts.onLog, {
    otherTags: opts.pruneOtherTags ?? true,
  });
  return { id, pruned, inUse };
}

/**
 * Removes the tags of `keep`'s repository other than `keep`, and the listed previous image ids,
 * unless a container uses the image. Removal is never forced: the engine refuses an image a
 * container still references, and that refusal is reported as in use.
 */
export async function pruneRuntimeImages(
  docker: Docker,
  keep: string,
  previousIds: string[],
  onLog?: (line: string) => void,
  scope: { otherTags: boolean } = { otherTags: true },
): Promise<{ pruned: string[]; inUse: string[] }> {
  const repo = keep.slice(0, keep.lastIndexOf(':'));
  const keepId = await tagTarget(docker, keep);
  // Podman lists image ids without the sha256: prefix Docker gives them, and names with their registry.
  const bareId = (id: string) => id.replace(/^sha256:/, '');
  const used = new Set((await docker.listContainers({ all: true })).map((c) => bareId(c.ImageID)));
  const images = scope.otherTags ? await docker.listImages({ filters: { reference: [`${repo}:*`] } }) : [];
  const targets: { name: string; id: string }[] = [];
  for (const img of images) {
    for (const tag of img.RepoTags ?? []) {
      const t = familiarImageName(tag);
      if (t !== keep && t.startsWith(`${repo}:`)) targets.push({ name: t, id: img.Id });
    }
  }
  for (const id of previousIds) if (id !== keepId && !targets.some((t) => t.id === id)) targets.push({ name: id, id });
  const pruned: string[] = [];
  const inUse: string[] = [];
  for (const t of targets) {
    if (t.id === keepId) {
      // Another tag of the very image we keep: only the name goes.
      await docker
        .getImage(t.name)
        .remove({ noprune: true })
        .then(() => pruned.push(t.name))
        .catch(() => undefined);
      continue;
    }
    if (used.has(bareId(t.id))) {
      inUse.push(t.name);
      continue;
    }
    try {
      await docker.getImage(t.name).remove();
      pruned.push(t.name);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 409) inUse.push(t.name);
      else onLog?.(`Could not remove the old runtime image ${t.name}: ${clause(engineMessage(err))}.`);
    }
  }
  if (pruned.length) onLog?.(`Removed old runtime images: ${pruned.join(', ')}.`);
  if (inUse.length) onLog?.(`Kept old runtime images a container still uses: ${inUse.join(', ')}.`);
  return { pruned, inUse };
}
