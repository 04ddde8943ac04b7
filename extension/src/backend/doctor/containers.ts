/**
 * Run Doctor's container facts (backend/doctor/): which containers are a folder's, and for each
 * its transports (backend/transportFacts.ts), peer membership, proximo CA, protected paths against
 * the folder's plan, what Docker it has and its egress, each socket probed in bounded time.
 */
import { join } from 'node:path';
import { CONTAINER, LABELS } from '../../contract/upstream';
import { DOCKER_ENDPOINT } from '../../contract/dockerEndpoint';
import { EGRESS } from '../../contract/egress';
import { ENV } from '../../contract/shims';
import type { HostFacts } from '../../contract/types';
import type { ListedContainer } from '../../engine/lifecycle';
import type { ContainerFacts } from '../../plan/doctor';
import { egressEnforcedOf, missingProtections, missingSocketVolume, peerRunOf, replacedProtections } from '../../plan/drift';
import { hostReach, protectedPathsOf } from '../../plan/posture';
import type { FolderPlan } from './folderPlan';
import { readFact, socketAnswers, type DoctorContext } from './probes';

export async function containerFacts(
  ctx: DoctorContext,
  c: ListedContainer,
  p: FolderPlan,
  host: HostFacts,
  local: boolean,
): Promise<ContainerFacts> {
  const { detail } = c;
  const labels = detail.Config?.Labels ?? {};
  const mounts = detail.Mounts ?? [];
  const running = c.state === 'running';
  const reach = hostReach(mounts, host.home);
  const endpoint = reach.find((r) => r.kind === 'docker-endpoint');
  const egressDir = mounts.find((m) => m.Destination === EGRESS.containerDir)?.Source;
  const enforced = egressEnforcedOf(labels);
  const probe = (path: string) => socketAnswers(path, ctx.limits.socketMs);
  const [transports, endpointServed, egressServed] = await Promise.all([
    running && ctx.deps.transports
      ? readFact('Measuring the transports', ctx.limits.probeMs, () => ctx.deps.transports!(detail))
      : undefined,
    endpoint !== undefined && running && local ? probe(join(endpoint.source, DOCKER_ENDPOINT.socket)) : undefined,
    enforced && running && local ? (egressDir !== undefined ? probe(join(egressDir, EGRESS.socket)) : false) : undefined,
  ]);
  const perRun = peerRunOf(labels);
  return {
    name: c.name,
    state: c.state,
    ...(detail.Image ? { imageId: detail.Image } : {}),
    // undefined: not running, or not measured (yet).
    ...(transports !== undefined ? { transports } : {}),
    peer: { member: c.peer, socketVolume: !missingSocketVolume(mounts, ctx.deps.names), ...(perRun !== undefined ? { perRun } : {}) },
    proximoCa: mounts.some((m) => m.Destination === CONTAINER.proximoCa),
    protection: {
      labelled: labels[LABELS.protectedPaths] !== undefined,
      count: protectedPathsOf(mounts, labels, host.home)?.length ?? 0,
      missing: p.plan ? missingProtections(mounts, p.plan) : [],
      replaced: p.plan ? replacedProtections(labels, p.plan) : [],
    },
    docker: {
      kind: endpoint !== undefined ? 'endpoint' : reach.some((r) => r.kind === 'docker-socket') ? 'raw-socket' : 'none',
      ...(endpointServed !== undefined ? { served: endpointServed } : {}),
    },
    egress: { enforced, ...(egressServed !== undefined ? { served: egressServed } : {}) },
  };
}

/** The host folder a container works on: its workspace label, else its TOOLBOX_HOST_WORKSPACE. */
export function workspaceOf(c: ListedContainer): string | undefined {
  if (c.workspace !== undefined) return c.workspace;
  const key = `${ENV.hostWorkspace}=`;
  return (c.detail.Config?.Env ?? []).find((e) => e.startsWith(key))?.slice(key.length);
}
