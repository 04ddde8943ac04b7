/**
 * Whether a registered agent session can be messaged by its peers (issue 17, item 4): the
 * sessions in the shared registry (~/.toolbox/.claude/sessions, mounted into every container),
 * the container each lives in, and why one that is registered cannot be reached. Pure: the
 * facts (containers, namespace members, whether each inbox socket exists) come in as data;
 * test/unit/peer-reach.test.ts.
 */

export interface PeerReachContainer {
  name: string;
  /** Host path of its workspace folder (mirrored at the same path inside, where it can be). */
  workspace?: string;
  running: boolean;
  /** It joins the peer anchor's PID namespace. */
  member: boolean;
}

/** Whether its inbox socket is in the shared socket volume: unknown when the volume cannot be read from here. */
export type SocketPresence = 'present' | 'missing' | 'unknown';

export interface PeerReach {
  state: 'reachable' | 'unreachable' | 'unknown';
  /** The container it lives in, when its working directory says. */
  container?: string;
  /** For a session that is not reachable (or not known to be): why, in a sentence. */
  why?: string;
}

/**
 * The container whose workspace holds `cwd` (the longest match): sessions run in the workspace
 * folder, which toolbox containers mirror at its host path. Undefined when none or several
 * equally long ones match.
 */
export function sessionContainer(cwd: string | undefined, containers: readonly PeerReachContainer[]): PeerReachContainer | undefined {
  if (!cwd) return undefined;
  const under = (dir: string) => cwd === dir || cwd.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
  const matches = containers.filter((c) => c.workspace && under(c.workspace.replace(/\/+$/, '') || '/'));
  const longest = Math.max(0, ...matches.map((c) => c.workspace!.length));
  const best = matches.filter((c) => c.workspace!.length === longest);
  return best.length === 1 ? best[0] : undefined;
}

export function peerReach(
  session: { cwd?: string; messagingSocketPath?: string },
  containers: readonly PeerReachContainer[],
  socket: SocketPresence,
): PeerReach {
  const c = sessionContainer(session.cwd, containers);
  if (!c) {
    return { state: 'unknown', why: 'Its working directory is in no toolbox container this engine runs, so where it lives is not known.' };
  }
  const at = { container: c.name };
  if (!c.running) return { ...at, state: 'unreachable', why: `Its container ${c.name} is not running: the registry entry is left over.` };
  if (!c.member) {
    return {
      ...at,
      state: 'unreachable',
      why: `Its container ${c.name} is not in the shared PID namespace (peer messaging off, or drift): peers cannot see it. Restart the container with peer messaging on.`,
    };
  }
  if (!session.messagingSocketPath)
    return { ...at, state: 'unreachable', why: 'It registered no inbox socket, so peers have nothing to write to.' };
  if (socket === 'missing') {
    return {
      ...at,
      state: 'unreachable',
      why: `Its inbox socket ${session.messagingSocketPath} is missing from the shared socket volume.`,
    };
  }
  if (socket === 'unknown') {
    return {
      ...at,
      state: 'unknown',
      why: 'It shares the PID namespace, but its inbox socket could not be checked from this host (the volume is not readable here).',
    };
  }
  return { ...at, state: 'reachable' };
}
