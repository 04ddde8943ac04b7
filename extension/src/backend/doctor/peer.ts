/**
 * Run Doctor's peer messaging facts (backend/doctor/): the peer anchor container and the socket
 * volume, whose they are, the anchor's entrypoint, the volume's owner and mode.
 */
import type Docker from 'dockerode';
import { foreignLabel } from '../../contract/objects';
import { isNotFound } from '../../engine/errors';
import type { listOwnedContainers } from '../../engine/lifecycle';
import { ANCHOR_ENTRYPOINT } from '../../engine/peer';
import { inspectPeerState } from '../../engine/peerState';
import type { PeerObjectFacts } from '../../plan/doctor';
import type { DoctorContext } from './probes';

export async function peerObjectFacts(
  ctx: DoctorContext,
  docker: Docker,
  owned: ReturnType<typeof listOwnedContainers>,
): Promise<PeerObjectFacts> {
  const { names } = ctx.deps;
  const [state, anchor, volume] = await Promise.all([
    inspectPeerState({ docker, names }, owned),
    docker
      .getContainer(names.anchor)
      .inspect()
      .catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      }),
    (docker.getVolume(names.socketVolume).inspect() as Promise<{ Labels?: Record<string, string> | null }>).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    }),
  ]);
  const entrypoint = anchor?.Config?.Entrypoint;
  const argv = Array.isArray(entrypoint) ? entrypoint : entrypoint ? [entrypoint] : [];
  const anchorLabel = foreignLabel(anchor?.Config?.Labels);
  const volumeLabel = foreignLabel(volume?.Labels);
  return {
    anchor: {
      state: anchor === undefined ? 'missing' : anchor.State.Running ? 'running' : 'stopped',
      ...(anchorLabel !== undefined ? { foreignLabel: anchorLabel } : {}),
      entrypointOk: anchor === undefined || (argv.length === ANCHOR_ENTRYPOINT.length && argv.every((a, i) => a === ANCHOR_ENTRYPOINT[i])),
    },
    volume: {
      exists: state.volume.exists,
      ...(volumeLabel !== undefined ? { foreignLabel: volumeLabel } : {}),
      ...(state.volume.owner !== undefined ? { owner: state.volume.owner } : {}),
      ...(state.volume.mode !== undefined ? { mode: state.volume.mode } : {}),
    },
  };
}
