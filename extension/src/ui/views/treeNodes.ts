/**
 * The three views as plain nodes computed from the refresh state: pure, so what each view
 * shows in each state is unit-tested without VS Code.
 */
import type { ErrorAction } from '../../contract/errors';
import { COMMAND_LABELS, SETTINGS } from '../../contract/manifest';
import { folderOf, sortForWorkspacesView, type ContainerSummary, type HeldShellSummary } from './model';
import type { ToolboxState } from './refreshManager';
import {
  agentRowItem,
  agentSessionItem,
  approvalGroupItem,
  approvalItem,
  anchorItem,
  containerContextValue,
  containerDescription,
  containerIcon,
  containerLabel,
  containerTooltip,
  errorItem,
  otherContainersItem,
  folderPeerItem,
  heldShellItem,
  portItem,
  proximoCaItem,
  proximoHostsItem,
  proximoItem,
  proximoWorkspaceItem,
  reachGroupItem,
  dockerChildItem,
  dockerChildrenGroupItem,
  egressLogItem,
  egressMoreItem,
  egressPostureItem,
  EGRESS_LOG_ROWS,
  leftBehindGroupItem,
  protectionItem,
  hostToolItem,
  hostToolsActionItem,
  hostToolsItem,
  reachItem,
  socketVolumeItem,
  PROXIMO_ONE_LINE,
  withTimeline,
  type AgentRowInput,
  type IconSpec,
} from './treeItems';
import type { ApprovalRequest, DockerChildrenSummary, LeftBehind } from '../../backend/api/editor';
import type { EgressLogEntry, EgressSummary } from '../../backend/api/egress';
import type { AgentTimeline } from '../agents/agentTimeline';
import type { HostReach } from '../../plan/posture';
import { hostToolsOffer, hostToolsPosture, runningOnTheirOwn, type HostToolsFacts, type HostToolsPosture } from '../../plan/hostTools';
import type { PublishedPort } from '../../plan/publish';
import { plainItem } from '../plainText';

/** What proximo is, for a newcomer: upstream's page about the integration. */
export const PROXIMO_DOCS_URL = 'https://github.com/filippolmt/toolbox/blob/main/docs/proximo.md';

export interface TreeNode {
  /** Stable id, so VS Code keeps selection and expansion across refreshes. */
  id: string;
  label: string;
  description?: string;
  icon?: IconSpec;
  contextValue?: string;
  tooltip?: string;
  /** Command id run on click, with the node as its argument (or `commandArgs`). */
  command?: string;
  commandArgs?: unknown[];
  /** A web page opened on click (instead of a command). */
  link?: string;
  children?: TreeNode[];
  /** With children: starts collapsed (default: expanded). */
  collapsed?: boolean;
  /** The container a node stands for (commands take it from here). */
  container?: ContainerSummary;
  /** The held shell a node stands for (Attach and End take it from here). */
  shell?: HeldShellSummary;
  /** A "Can reach on this host" item: what it is. */
  reach?: HostReach;
  /** The window folder the container belongs to, when it does. */
  folder?: string;
  /** A published port: what Open in Browser opens. */
  port?: PublishedPort;
  /** An agent's question (ui/approvals/approvalInbox.ts): what Allow, Deny and Open Terminal answer. */
  approvalId?: string;
  /** A session row with a timeline (ui/agents/agentTimeline.ts): what Show Session Timeline opens. */
  timeline?: { container: string; sessionId: string };
  /** A "Left behind by" row: the gone owner whose children Remove What Was Left Behind removes. */
  leftBehind?: string;
  /** A network posture row or a connection under it (issue 30): the container whose log Open Connection Log opens. */
  egressContainer?: string;
}

/** What the Workspaces view shows besides the engine's state (issue 28). */
export interface WorkspacesExtras {
  /** The agents' questions waiting, oldest first: a section at the top while there are any. */
  approvals?: readonly ApprovalRequest[];
  /** What each session's agent did: a summary on its row. */
  timeline?: Pick<AgentTimeline, 'summary' | 'forSession'>;
  /** A container's connection log in this window, oldest first (EgressService.egressLog): its latest under its network row. */
  egressLog?: (container: string) => readonly EgressLogEntry[];
  /** The window's trust and its extensions (backend/settings.ts hostTools): a row under each of this window's containers' reach. */
  hostTools?: HostToolsFacts;
}

/**
 * A container's network posture row (issue 30) and, under it, its latest connections, newest
 * first, then a row that opens the whole log when there are more.
 */
export function egressNode(c: ContainerSummary, e: EgressSummary, log: readonly EgressLogEntry[]): TreeNode {
  const latest = log.slice(-EGRESS_LOG_ROWS).reverse();
  // The log drops its oldest entries, so an index is no stable id: the time and destination are,
  // numbered when several share them (ids must be unique in the view).
  const seen = new Map<string, number>();
  const rows = latest.map((entry): TreeNode => {
    const key = `${entry.at}:${entry.host}:${entry.port}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return { id: `egress:${c.name}:${key}${n > 0 ? `#${n}` : ''}`, ...egressLogItem(entry), container: c, egressContainer: c.name };
  });
  if (log.length > latest.length) {
    rows.push({
      id: `egress:${c.name}:more`,
      ...egressMoreItem(log.length - latest.length),
      command: COMMAND_LABELS.showEgressLog.command,
      commandArgs: [c.name],
      container: c,
      egressContainer: c.name,
    });
  }
  return {
    id: `egress:${c.name}`,
    ...egressPostureItem(e),
    container: c,
    egressContainer: c.name,
    ...(rows.length > 0 ? { children: rows, collapsed: true } : {}),
  };
}

/** The section of waiting questions, one row each, oldest first; nothing when none waits. */
export function approvalNodes(approvals: readonly ApprovalRequest[], now: number): TreeNode[] {
  if (approvals.length === 0) return [];
  const rows = approvals.map((r): TreeNode => ({
    id: `approval:${r.id}`,
    ...approvalItem(r, now),
    command: COMMAND_LABELS.showApprovals.command,
    commandArgs: [r.id],
    approvalId: r.id,
  }));
  return [{ id: 'approvals', ...approvalGroupItem(approvals.length), children: rows }];
}

/** The engine's error, once, at the top of the Workspaces view; with Open Setting when the setting can fix it. */
function errorNodes(message: string, actions: readonly ErrorAction[]): TreeNode[] {
  const setting = actions.includes('open-docker-host-setting');
  const e = errorItem(message, setting);
  const open: TreeNode[] = setting
    ? [
        {
          id: 'error.setting',
          label: 'Open Setting',
          description: SETTINGS.dockerHost,
          icon: { id: 'settings-gear' },
          command: 'workbench.action.openSettings',
          commandArgs: [SETTINGS.dockerHost],
          contextValue: 'action',
          tooltip: `Opens the ${SETTINGS.dockerHost} setting: the Docker endpoint Toolbox uses (empty: DOCKER_HOST, the current Docker context, then the usual sockets).`,
        },
      ]
    : [];
  return [
    { id: 'error', ...e },
    ...open,
    { id: 'error.retry', label: 'Retry', icon: { id: 'refresh' }, command: COMMAND_LABELS.refresh.command, contextValue: 'action' },
    { id: 'error.log', label: 'Show Log', icon: { id: 'output' }, command: COMMAND_LABELS.showLog.command, contextValue: 'action' },
  ];
}

/**
 * Workspaces: this window's folders first. Empty (so the welcome view shows) when nothing exists.
 * Each container holds its held shells and what it can reach on this host (plan/posture.ts).
 * `agents` are this window's terminals with their sessions' state: a held shell shown in one of
 * them is that session's row (agent, state, time in state; a click focuses the terminal), and a
 * terminal without a held session gets a row of its own.
 */
export function workspacesNodes(
  state: ToolboxState,
  folders: readonly string[],
  home = '',
  agents: readonly AgentRowInput[] = [],
  now: number = Date.now(),
  extras: WorkspacesExtras = {},
): TreeNode[] {
  // The agents' questions come through the bridge, not the engine: shown whatever the engine says.
  const questions = approvalNodes(extras.approvals ?? [], now);
  if (state.error) return [...questions, ...errorNodes(state.error, state.errorActions ?? [])];
  const snap = state.snapshot;
  if (!snap) return questions;
  const timeline = extras.timeline;
  const withSession = <T extends TreeNode & { description: string; tooltip: string; contextValue: string }>(
    node: T,
    container: string,
    sessionId: string | undefined,
  ): TreeNode => {
    if (timeline === undefined || sessionId === undefined) return node;
    const summary = timeline.summary(container, sessionId);
    if (summary === undefined) return node;
    return { ...withTimeline(node, summary, timeline.forSession(container, sessionId)), timeline: { container, sessionId } };
  };
  const drifted = new Map(state.findings.map((f) => [f.container.id, f]));
  const hostTools = extras.hostTools === undefined ? undefined : hostToolsPosture(extras.hostTools);
  const nodes = sortForWorkspacesView(snap.containers, folders).map((c) => {
    const finding = drifted.get(c.id);
    const folder = folderOf(c, folders);
    const input = {
      container: c,
      drift: finding?.drift,
      inThisWindow: folder !== undefined,
      stopping: state.stopping?.has(c.name) ?? false,
    };
    // Its published ports, its held shells (the agent's state where a terminal of this window shows one), then what it can reach on this host (a group that starts collapsed).
    const ports = (c.ports ?? []).map((p): TreeNode => ({
      id: `port:${c.name}:${p.containerPort}/${p.protocol}:${p.hostPort}`,
      ...portItem(p, c.name),
      container: c,
      port: p,
    }));
    const mine = agents.filter((a) => a.container === c.name);
    const children: TreeNode[] = [
      ...ports,
      ...(c.shells ?? []).map((s): TreeNode => {
        const a = mine.find((m) => m.sessionId === s.id);
        return withSession(
          a
            ? {
                id: `shell:${c.name}:${s.id}`,
                ...agentRowItem(a, now, s),
                command: COMMAND_LABELS.focusTerminal.command,
                commandArgs: [a.key],
                container: c,
                shell: s,
              }
            : {
                id: `shell:${c.name}:${s.id}`,
                ...heldShellItem(s, state.takenAt),
                command: COMMAND_LABELS.attachShell.command,
                container: c,
                shell: s,
              },
          c.name,
          s.id,
        );
      }),
    ];
    for (const a of mine) {
      if (a.sessionId !== undefined && c.shells?.some((s) => s.id === a.sessionId)) continue;
      children.push(
        withSession(
          {
            id: `terminal:${a.key}`,
            ...agentRowItem(a, now),
            command: COMMAND_LABELS.focusTerminal.command,
            commandArgs: [a.key],
            container: c,
          },
          c.name,
          a.sessionId,
        ),
      );
    }
    if (c.dockerChildren !== undefined) children.push(dockerChildrenNode(c, c.dockerChildren));
    // Its network (issue 30), next to what it can reach on this host: the mode, then its latest connections.
    if (c.egress !== undefined) children.push(egressNode(c, c.egress, extras.egressLog?.(c.name) ?? []));
    if (c.reach !== undefined) children.push(reachGroupNode(c, c.reach, home, folder, hostTools));
    return {
      id: `container:${c.name}`,
      label: containerLabel(c),
      description: containerDescription(input),
      icon: containerIcon(input),
      contextValue: containerContextValue(input),
      tooltip: containerTooltip(input, finding?.notice.message),
      container: c,
      ...(folder !== undefined ? { folder } : {}),
      children: children.length ? children : undefined,
    };
  });
  return [...questions, ...groupOthers(nodes, folders, agents), ...leftBehindNodes(snap.leftBehind ?? [])];
}

/**
 * What containers of ours started and left running when something else removed them, a row per
 * gone owner after the containers (engine/dockerEndpoint/children.ts leftBehindOf), listed as under a
 * container; Remove What Was Left Behind on the row.
 */
export function leftBehindNodes(groups: readonly LeftBehind[]): TreeNode[] {
  return groups.map(({ owner, children: d }): TreeNode => ({
    id: `leftBehind:${owner}`,
    ...leftBehindGroupItem(owner, d),
    leftBehind: owner,
    children: [
      ...d.containers.map((x): TreeNode => ({ id: `leftBehind:${owner}:c:${x.name}`, ...dockerChildItem({ kind: 'container', ...x }) })),
      ...d.networks.map((name): TreeNode => ({ id: `leftBehind:${owner}:n:${name}`, ...dockerChildItem({ kind: 'network', name }) })),
      ...d.volumes.map((name): TreeNode => ({ id: `leftBehind:${owner}:v:${name}`, ...dockerChildItem({ kind: 'volume', name }) })),
    ],
  }));
}

/** The id of the Workspaces view's group of other folders' containers. */
export const OTHER_CONTAINERS_ID = 'otherContainers';

/**
 * This window's containers at the top, every other toolbox container on the engine in one group
 * that starts collapsed (issue 26, item 12). This window's: a container of one of its folders, or
 * one a terminal of this window runs in (a named shell works in its own path).
 */
export function groupOthers(nodes: readonly TreeNode[], folders: readonly string[], agents: readonly AgentRowInput[] = []): TreeNode[] {
  const mine = (n: TreeNode) =>
    n.container === undefined ||
    (n.container !== undefined && folderOf(n.container, folders) !== undefined) ||
    agents.some((a) => a.container === n.container?.name);
  const ours = nodes.filter(mine);
  const others = nodes.filter((n) => !mine(n));
  if (others.length === 0) return ours;
  return [...ours, { id: OTHER_CONTAINERS_ID, ...otherContainersItem(others.length), children: others, collapsed: true }];
}

/** What the container started through its Docker endpoint (engine/dockerEndpoint/children.ts), under it. */
function dockerChildrenNode(c: ContainerSummary, d: DockerChildrenSummary): TreeNode {
  const items: TreeNode[] = [
    ...d.containers.map((x): TreeNode => ({
      id: `child:${c.name}:c:${x.name}`,
      ...dockerChildItem({ kind: 'container', ...x }),
      container: c,
    })),
    ...d.networks.map((name): TreeNode => ({
      id: `child:${c.name}:n:${name}`,
      ...dockerChildItem({ kind: 'network', name }),
      container: c,
    })),
    ...d.volumes.map((name): TreeNode => ({ id: `child:${c.name}:v:${name}`, ...dockerChildItem({ kind: 'volume', name }), container: c })),
  ];
  return { id: `children:${c.name}`, ...dockerChildrenGroupItem(d), container: c, children: items };
}

function reachGroupNode(
  c: ContainerSummary,
  reach: readonly HostReach[],
  home: string,
  folder: string | undefined,
  hostTools: HostToolsPosture | undefined,
): TreeNode {
  const items = reach.map((r): TreeNode => ({
    id: `reach:${c.name}:${r.kind}:${r.target}`,
    ...reachItem(r, home, folder !== undefined),
    container: c,
    reach: r,
    ...(folder !== undefined ? { folder } : {}),
  }));
  // The protection first: the folder's own files the container cannot change (docs/decisions/0042);
  // a container has it when its mounts hold the read-only binds (plan/posture.ts protectedPathsOf).
  // Then, for a container of this window's folders, the window's extensions that run the folder's
  // files, which no protection covers (docs/decisions/0060).
  const tools: TreeNode[] = folder !== undefined && hostTools !== undefined ? [hostToolsNode(c, hostTools)] : [];
  items.unshift(
    {
      id: `protection:${c.name}`,
      ...protectionItem(c.protectedPaths !== undefined),
      container: c,
    },
    ...tools,
  );
  return { id: `reach:${c.name}`, ...reachGroupItem(reach), container: c, children: items, collapsed: true };
}

/**
 * The extensions on this host that run the folder's files: one row each for those that run them
 * on their own now, then the action that lets the user choose Restricted Mode (plan/hostTools.ts).
 */
function hostToolsNode(c: ContainerSummary, p: HostToolsPosture): TreeNode {
  const offer = hostToolsOffer(p);
  const children: TreeNode[] = [
    ...runningOnTheirOwn(p).map((t): TreeNode => ({ id: `hostTool:${c.name}:${t.id}`, ...hostToolItem(t), container: c })),
    ...(offer !== undefined ? [{ id: `hostTools.action:${c.name}`, ...hostToolsActionItem(offer), container: c }] : []),
  ];
  return { id: `hostTools:${c.name}`, ...hostToolsItem(p), container: c, ...(children.length > 0 ? { children } : {}) };
}

/**
 * Peer Messaging: each window folder's setting and its source, anchor, socket volume, namespace
 * members, live agent sessions. Empty while Docker does not answer (the error is said once, in
 * Workspaces; this view's welcome waits).
 */
export function peerNodes(state: ToolboxState, home = ''): TreeNode[] {
  if (state.error) return [];
  const snap = state.snapshot;
  if (!snap) return [];
  const settings = [...(state.peerSettings ?? new Map())];
  const folderNodes = settings.map(([folder, setting]): TreeNode => ({
    id: `folderPeer:${folder}`,
    ...folderPeerItem(folder, setting, home, settings.length > 1),
    folder,
  }));
  const anchor = anchorItem(snap.anchor);
  const members = snap.members.map((m) => ({ id: `member:${m}`, ...plainItem({ label: m }), icon: { id: 'vm' }, contextValue: 'member' }));
  const sessions = snap.sessions.map((s) => ({ id: `session:${s.pid}`, ...agentSessionItem(s) }));
  return [
    ...folderNodes,
    { id: 'anchor', ...anchor, children: members.length ? members : undefined },
    { id: 'volume', ...socketVolumeItem(snap.volume) },
    {
      id: 'sessions',
      label: 'Agent sessions',
      description: sessions.length ? `${sessions.length} live` : 'none',
      icon: { id: 'comment-discussion' },
      contextValue: 'sessions',
      tooltip: 'Sessions registered in the shared registry (~/.toolbox/.claude/sessions).',
      children: sessions.length ? sessions : undefined,
    },
  ];
}

/**
 * Proximo: what it is (a link to its docs), installed or not, CA, routed hosts, and which
 * workspaces have it on. Empty when proximo is not on this host at all: the view's welcome then
 * says what proximo is and that nothing is missing. The host lookup does not need Docker, so it
 * is shown when Docker fails too (without the containers).
 */
export function proximoNodes(state: ToolboxState, folders: readonly string[]): TreeNode[] {
  const p = state.proximo;
  if (!p || (!p.installed && !p.caPath)) return [];
  const hosts = p.hosts.map((h) => ({
    id: `host:${h}`,
    ...plainItem({ label: h, tooltip: `https://${h} is routed by proximo on this host.` }, 'message'),
    icon: { id: 'globe' },
    contextValue: 'proximoHost',
  }));
  const nodes: TreeNode[] = [
    {
      id: 'proximo.about',
      label: 'What is proximo?',
      description: 'HTTPS names for your local apps',
      icon: { id: 'book' },
      contextValue: 'proximoAbout',
      tooltip: `${PROXIMO_ONE_LINE}\nClick to read more (${PROXIMO_DOCS_URL}).`,
      link: PROXIMO_DOCS_URL,
    },
    { id: 'proximo', ...proximoItem(p) },
    { id: 'ca', ...proximoCaItem(p) },
    { id: 'hosts', ...proximoHostsItem(p), children: hosts.length ? hosts : undefined },
  ];
  const shells = state.snapshot && !state.error ? sortForWorkspacesView(state.snapshot.containers, folders) : [];
  for (const c of shells) nodes.push({ id: `proximo:${c.name}`, ...proximoWorkspaceItem(c) });
  return nodes;
}

/**
 * A key that is the same for two renders only when every node carries the same data, in the same
 * order: what the tree provider compares before it tells VS Code to redraw. A redraw with nothing
 * changed is not free: VS Code drops the commands of the rows it replaced, so a click that lands
 * during a burst of engine events on a row that looks the same fails with "Actual command not
 * found", and the row under the pointer can move. undefined (always redraw) when a node holds
 * something that does not serialise.
 */
export function treeKey(nodes: readonly TreeNode[]): string | undefined {
  try {
    return JSON.stringify(nodes, (_key, value: unknown) =>
      value instanceof Map ? { map: [...value.entries()] } : value instanceof Set ? { set: [...value] } : value,
    );
  } catch {
    return undefined;
  }
}
