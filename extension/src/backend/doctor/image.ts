/**
 * Run Doctor's runtime image facts (backend/doctor/): each image the folders' next containers
 * use, whether it is here, the content hash its tag and its label name, and where it came from.
 */
import type Docker from 'dockerode';
import { RUNTIME_IMAGE_LABELS, RUNTIME_IMAGE_PUBLISHED } from '../../contract/image';
import { isNotFound } from '../../engine/errors';
import type { ImageFacts } from '../../plan/doctor';
import type { FolderPlan } from './folderPlan';
import type { DoctorContext } from './probes';

/** Each image the folders' next containers use, once. */
export async function imageFacts(ctx: DoctorContext, docker: Docker, plans: readonly FolderPlan[]): Promise<ImageFacts[]> {
  const byRef = new Map<string, NonNullable<FolderPlan['image']>>();
  for (const p of plans) if (p.image && !byRef.has(p.image.ref)) byRef.set(p.image.ref, p.image);
  return Promise.all(
    [...byRef.values()].map(async ({ ref, ours, registryMirror }): Promise<ImageFacts> => {
      const info = await docker
        .getImage(ref)
        .inspect()
        .catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        });
      const pullFrom = ours ? ctx.deps.images.pullRef(ref, registryMirror) : undefined;
      const labelHash = info?.Config?.Labels?.[RUNTIME_IMAGE_LABELS.contextHash];
      return {
        ref,
        ours,
        present: info !== undefined,
        ...(info?.Id ? { id: info.Id } : {}),
        ...(ours ? { tagHash: ref.slice(ref.lastIndexOf(':') + 1) } : {}),
        ...(labelHash !== undefined ? { labelHash } : {}),
        pulled: pulledFromRegistry(info?.RepoDigests, ours),
        ...(pullFrom !== undefined ? { pullFrom } : {}),
      };
    }),
  );
}

/**
 * Whether the image came from a registry: ours when a digest names the repository the workflow
 * publishes it under (RUNTIME_IMAGE_PUBLISHED, or a mirror of it); Podman gives a digest of its own
 * repository to a local build too, so any digest is not enough. Someone else's: any digest.
 */
function pulledFromRegistry(repoDigests: readonly string[] | undefined, ours: boolean): boolean {
  const repos = (repoDigests ?? []).map((d) => d.slice(0, Math.max(0, d.indexOf('@'))));
  return ours ? repos.some((r) => r.endsWith(`/${RUNTIME_IMAGE_PUBLISHED.path}`)) : repos.length > 0;
}
