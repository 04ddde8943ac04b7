/**
 * Run Doctor's folder facts (backend/doctor/): the folder's configuration and the plan an open
 * would make (backend/shells.ts prepare, plan/session.ts), its peer messaging choice and where it
 * comes from, and what Docker its next container gets.
 */
import { errorText } from '../../contract/errors';
import type { HostFacts } from '../../contract/types';
import type { EngineConnection } from '../../engine/client';
import type { FolderFacts } from '../../plan/doctor';
import { tildePath } from '../../plan/posture';
import { PROTECTED_MOUNT } from '../../plan/protect';
import { previewSession } from '../../plan/session';
import type { SessionPlan } from '../../plan/types';
import { findProximoBinary } from '../../proximo/binary';
import type { PeerSetting } from '../api';
import { endpointUpstream } from '../dockerEndpoints';
import { bounded, ProbeTimeout, type DoctorContext } from './probes';

/** Where a folder's peer-messaging choice comes from, as the report says it. */
function peerSourceWords(setting: PeerSetting, home: string): string {
  const s = setting.source;
  switch (s.from) {
    case 'default':
      return 'default';
    case 'user-file':
    case 'project-file':
      return `from ${tildePath(s.file, home)}`;
    case 'env':
      return `from the ${s.variable} environment variable`;
    case 'setting':
      return `from the toolbox.peerMessaging setting in the ${s.scope} settings`;
  }
}

/** What the folder's plan says, for its checks and its containers'. */
export interface FolderPlan {
  facts: Omit<FolderFacts, 'containers'>;
  /** The plan an open would make, for comparing the containers' protected paths. */
  plan?: SessionPlan;
  image?: { ref: string; ours: boolean; registryMirror?: string };
}

/** The folder's configuration and the plan an open would make (no Docker, nothing written). */
export async function folderPlan(ctx: DoctorContext, folder: string, host: HostFacts): Promise<FolderPlan> {
  try {
    const [{ prepared, plan }, peer, egressMode] = await bounded(
      "The folder's plan",
      ctx.limits.planMs,
      Promise.all([ctx.deps.shells.prepare({ folder }), ctx.deps.config.peerSetting(folder), ctx.deps.egress.mode(folder)]),
    );
    const { request } = plan;
    const session = previewSession(request, host);
    const planned = [
      ...new Set(
        session.mounts
          .filter((m) => m.name === PROTECTED_MOUNT.readonly)
          .map((m) => (m.source.startsWith(`${session.workspace}/`) ? m.source.slice(session.workspace.length + 1) : m.source)),
      ),
    ];
    const ours = request.config.image === undefined;
    return {
      plan: session,
      image: { ref: request.image, ours, ...(request.config.registryMirror ? { registryMirror: request.config.registryMirror } : {}) },
      facts: {
        folder,
        container: prepared.container,
        peer: { on: peer.on, source: peerSourceWords(peer, host.home) },
        imageRef: request.image,
        proximo: {
          enabled: request.config.proximo !== false,
          installed: findProximoBinary({ pathEnv: process.env.PATH, home: host.home }) !== undefined,
          ...(request.proximo ? { caPath: request.proximo.caPath } : {}),
          hosts: request.proximo?.hosts.length ?? 0,
        },
        protection: { enabled: request.protectedPaths === true, planned },
        vscodeGit: ctx.deps.settings.vscodeGitOpeners(folder),
        egressMode,
      },
    };
  } catch (err) {
    return { facts: { folder, configProblem: err instanceof ProbeTimeout ? `${err.message}.` : errorText(err) } };
  }
}

/** What Docker the folder's next container gets: the setting, and whether the endpoint can forward to this engine. */
export function endpointFacts(
  ctx: DoctorContext,
  p: FolderPlan,
  connection: EngineConnection | undefined,
): Pick<FolderFacts, 'dockerEndpoint'> {
  if (p.facts.configProblem !== undefined) return {};
  return {
    dockerEndpoint: {
      setting: ctx.deps.settings.dockerEndpoint(p.facts.folder),
      forwardable: connection !== undefined && endpointUpstream(connection) !== undefined,
    },
  };
}
