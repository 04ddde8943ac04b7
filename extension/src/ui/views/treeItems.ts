/**
 * Tree item properties as pure functions of the model: label, description, icon, contextValue
 * and tooltip. The providers only copy these onto vscode.TreeItems, so every `when` clause in
 * package.json can be checked against test/unit/tree-items.test.ts without a VS Code.
 */
import type { AgentEvent, ApprovalRequest, DockerChildrenSummary } from '../../backend/api/editor';
import { reachTitle, tildePath, type HostReach } from '../../plan/posture';
import {
  hostToolsChoice,
  hostToolsDetail,
  hostToolsSummary,
  MANAGE_TRUST_COMMAND,
  restrictedWords,
  TRUST_ENABLED_SETTING,
  type FoundHostTool,
  type HostToolsOffer,
  type HostToolsPosture,
} from '../../plan/hostTools';
import { PROPOSABLE_PATHS } from '../../plan/proposals';
import { publishedPortUrl, type PublishedPort } from '../../plan/publish';
import type { AgentState, AgentStatus } from '../agents/agentState';
import { approvalDescription, approvalTooltip, subjectPhrase } from '../approvals/approvalText';
import { recentLines, timelineSuffix, type TimelineSummary } from '../agents/agentTimeline';
import { inline, plainItem, plainText, quoted } from '../plainText';
import type { EgressLogEntry, EgressSummary } from '../../backend/api/egress';
import { byteSize, destination, egressLogTooltip } from '../egress/egressText';
import {
  peerSourceShort,
  peerSourceText,
  settingScopeText,
  type AgentSessionSummary,
  type AnchorSummary,
  type ContainerSummary,
  type HeldShellSummary,
  type PeerSetting,
  type ProximoSummary,
  type SocketVolumeSummary,
} from './model';
import { type FindingKind } from '../containers/driftFindings';

/** A codicon id and an optional theme colour id; the provider turns it into a ThemeIcon. */
export interface IconSpec {
  id: string;
  color?: string;
}

export interface ContainerItemInput {
  container: ContainerSummary;
  drift?: FindingKind;
  /** The container belongs to a folder of this window. */
  inThisWindow: boolean;
  /** This window asked the engine to stop it and the engine has not said it stopped yet. */
  stopping?: boolean;
}

export function containerLabel(c: ContainerSummary): string {
  return plainText(c.name, 'label');
}

/** The Workspaces view's group of the containers of folders this window does not have open (ui/views/treeNodes.ts groupOthers). */
export function otherContainersItem(count: number): { label: string; icon: IconSpec; contextValue: string; tooltip: string } {
  return {
    label: `Other toolbox containers (${count})`,
    icon: { id: 'layers' },
    contextValue: 'otherContainers',
    tooltip:
      `${count} toolbox container${count === 1 ? '' : 's'} on this engine for folders this window does not have open ` +
      "(other windows, the toolbox CLI). Their rows work as this window's do.",
  };
}

/** Short state word for a Docker state. */
export function stateWord(state: string): string {
  switch (state) {
    case 'running':
      return 'running';
    case 'exited':
    case 'created':
    case 'dead':
      return 'stopped';
    default:
      return state;
  }
}

export function containerDescription(i: ContainerItemInput): string {
  // A container opened with a per-run override says so: the folder's setting does not apply to it.
  const run = i.container.peerRun !== undefined ? ' (this run)' : '';
  const parts = [i.stopping ? 'stopping…' : stateWord(i.container.state)];
  // Whose credentials it has: the profile's name is text from the engine (a label or a mount path).
  if (i.container.profile !== undefined) parts.push(`profile ${inline(i.container.profile, 64)}`);
  parts.push(`${i.container.peer ? 'peer on' : 'peer off'}${run}`);
  if (i.drift) parts.push('drifted');
  // Connections its egress policy refused (issue 30): the posture row under it lists them.
  const denied = i.container.egress?.denied ?? 0;
  if (denied > 0) parts.push(`${denied} denied`);
  return plainText(parts.join(' · '), 'label');
}

export function containerIcon(i: ContainerItemInput): IconSpec {
  if (i.stopping) return { id: 'loading~spin' };
  if (i.drift) return { id: 'warning', color: 'list.warningForeground' };
  switch (i.container.state) {
    case 'running':
      return { id: 'vm-running', color: 'testing.iconPassed' };
    case 'paused':
      return { id: 'debug-pause' };
    case 'restarting':
      return { id: 'sync' };
    default:
      return { id: 'vm-outline' };
  }
}

/**
 * `container.<running|stopped|stopping>.<peer|nopeer>[.drifted][.window]`: the menus match with
 * regular expressions such as `viewItem =~ /^container\.running/` or `/\.drifted/`. A container
 * being stopped offers no Stop, so a second click on the same spot stops nothing else.
 */
export function containerContextValue(i: ContainerItemInput): string {
  const run = i.stopping ? 'stopping' : i.container.state === 'running' ? 'running' : 'stopped';
  let v = `container.${run}.${i.container.peer ? 'peer' : 'nopeer'}`;
  if (i.drift) v += '.drifted';
  if (i.inThisWindow) v += '.window';
  return v;
}

export function containerTooltip(i: ContainerItemInput, driftMessage?: string): string {
  const c = i.container;
  // Docker's "Up 3 minutes" is stale as soon as it is shown (the tree refreshes on events, not
  // on a clock): the start time stays true.
  const state = i.stopping
    ? 'State: stopping (waiting for the engine)'
    : c.state === 'running' && c.startedAt
      ? `Running since ${startedText(c.startedAt)}`
      : `State: ${inline(stateWord(c.state))}`;
  const lines = [inline(c.name), state, `Kind: ${c.kind === 'named' ? 'named shell' : c.kind}`];
  if (c.workspace) lines.push(`Folder: ${inline(c.workspace)}`);
  if (c.profile !== undefined) {
    lines.push(
      `Profile: ${inline(c.profile, 64)} (its credentials come from ~/.toolbox/profiles/${inline(c.profile, 64)}, not ~/.toolbox)`,
    );
  }
  if (c.image) lines.push(`Image: ${inline(c.image)}`);
  lines.push(`Peer messaging: ${i.container.peer ? 'shares the PID namespace' : 'not in the shared PID namespace'}`);
  if (c.peerRun !== undefined) {
    lines.push(`Opened with peer messaging ${c.peerRun ? 'on' : 'off'} for that run only: the folder's setting does not apply to it.`);
  }
  if (c.seccomp)
    lines.push(
      `Seccomp: ${c.seccomp === 'unconfined' ? 'unconfined (no filter, as the toolbox CLI creates it)' : "Docker's default profile"}`,
    );
  if (driftMessage) lines.push('', inline(driftMessage));
  return plainText(lines.join('\n'), 'tooltip');
}

/**
 * A window folder's peer-messaging choice in the Peer Messaging view: "This folder: on" with
 * where it comes from, and a tooltip that says where Toggle writes (or why it cannot win) and the
 * .toolbox.yaml alternative. `label` names the folder when the window has several.
 */
export function folderPeerItem(
  folder: string,
  setting: PeerSetting,
  home: string,
  several: boolean,
): { label: string; description: string; icon: IconSpec; contextValue: string; tooltip: string } {
  const name = several ? folder.split(/[\\/]/).filter(Boolean).pop() || folder : 'This folder';
  const source = peerSourceText(setting.source, folder, home);
  const short = peerSourceShort(setting.source, folder, home);
  const where =
    setting.source.from === 'setting'
      ? `Set by the toolbox.peerMessaging setting in ${settingScopeText(setting.source.scope)}.`
      : setting.source.from === 'default'
        ? 'Nothing sets it, so the default applies (on).'
        : `Set ${source}.`;
  const toggle =
    "Toggle Peer Messaging for This Folder… asks where to write: this folder's .vscode/settings.json (VS Code only), " +
    "or the project's .toolbox.yaml (peer_messaging:, read by the toolbox CLI too, and can be committed). " +
    'The toolbox.peerMessaging setting wins over .toolbox.yaml.';
  return plainItem({
    label: `${name}: ${setting.on ? 'on' : 'off'}`,
    description: short,
    icon: { id: setting.on ? 'broadcast' : 'circle-slash' },
    contextValue: `folderPeer.${setting.on ? 'on' : 'off'}`,
    tooltip: [
      `Peer messaging for ${inline(folder)}: ${setting.on ? 'on' : 'off'}.`,
      inline(where),
      'It applies to the next shell.',
      '',
      toggle,
    ].join('\n'),
  });
}

/** An absolute start time, as the user's locale writes dates. */
export function startedText(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function anchorItem(a: AnchorSummary): {
  label: string;
  description: string;
  icon: IconSpec;
  contextValue: string;
  tooltip: string;
} {
  const icon: IconSpec =
    a.state === 'running'
      ? { id: 'pulse', color: 'testing.iconPassed' }
      : a.state === 'stopped'
        ? { id: 'debug-stop' }
        : { id: 'circle-slash' };
  return plainItem(
    {
      label: a.name,
      description: `anchor · ${a.state}`,
      icon,
      contextValue: `anchor.${a.state}`,
      tooltip:
        a.state === 'missing'
          ? `${a.name} does not exist yet: the first shell with peer messaging on creates it.`
          : `${a.name} holds the shared PID namespace that peer-messaging containers join (${a.state}).`,
    },
    'message',
  );
}

export function socketVolumeItem(v: SocketVolumeSummary): {
  label: string;
  description: string;
  icon: IconSpec;
  contextValue: string;
  tooltip: string;
} {
  const bits = v.exists ? [v.owner ? `owner ${v.owner}` : undefined, v.mode ? `mode ${v.mode}` : undefined].filter(Boolean) : ['missing'];
  return plainItem(
    {
      label: v.name,
      description: `volume · ${bits.join(' · ') || 'present'}`,
      icon: { id: 'database' },
      contextValue: v.exists ? 'socketVolume.present' : 'socketVolume.missing',
      tooltip: v.exists
        ? `Inbox sockets of agent sessions (${v.owner ? `owned by ${v.owner}` : 'owner unknown'}${v.mode ? `, mode ${v.mode}` : ''}).`
        : `${v.name} does not exist yet: the first shell with peer messaging on creates it.`,
    },
    'message',
  );
}

export function agentSessionItem(s: AgentSessionSummary): {
  label: string;
  description: string;
  icon: IconSpec;
  contextValue: string;
  tooltip: string;
} {
  const where = s.container ? ` · ${s.container}` : '';
  // Whether peers can message it (plan/peerReach.ts): said in the row, and why not in the tooltip.
  const reach =
    s.reach === 'reachable'
      ? ' · reachable'
      : s.reach === 'unreachable'
        ? ' · unreachable'
        : s.reach === 'unknown'
          ? ' · reach unknown'
          : '';
  const icon: IconSpec =
    s.reach === 'reachable'
      ? { id: 'hubot', color: 'testing.iconPassed' }
      : s.reach === 'unreachable'
        ? { id: 'hubot', color: 'list.warningForeground' }
        : { id: 'hubot' };
  return plainItem({
    label: plainText(s.name, 'label', 60) || `pid ${s.pid}`,
    description: `pid ${s.pid}${where}${reach}`,
    icon,
    contextValue: s.reach ? `agentSession.${s.reach}` : 'agentSession',
    tooltip: [
      `Agent session, pid ${s.pid}`,
      s.cwd ? `cwd ${inline(s.cwd, 200)}` : undefined,
      s.container ? `in ${inline(s.container)}` : undefined,
      s.reach === 'reachable'
        ? 'Reachable: its container shares the PID namespace and its inbox socket is in the shared volume.'
        : undefined,
      s.why && inline(s.why),
    ]
      .filter(Boolean)
      .join('\n'),
  });
}

/** What proximo is, in one line a newcomer understands (the Proximo view says it first). */
export const PROXIMO_ONE_LINE =
  'proximo gives the apps you run on this host HTTPS names such as https://app.test; Toolbox makes those names work inside its containers too.';

type ItemProps = { label: string; description: string; icon: IconSpec; contextValue: string; tooltip: string };

export function proximoItem(p: ProximoSummary): ItemProps {
  return plainItem({
    label: 'proximo',
    description: p.installed ? 'installed on this host' : 'not installed on this host',
    icon: p.installed ? { id: 'check', color: 'testing.iconPassed' } : { id: 'circle-slash' },
    contextValue: p.installed ? 'proximo.installed' : 'proximo.missing',
    tooltip: [
      PROXIMO_ONE_LINE,
      '',
      p.installed
        ? `Found at ${inline(p.binary ?? 'its usual place')}. In a Toolbox shell, proximo up, down, status, errors and skill run it on this host.`
        : 'Not found on this host (PATH, /opt/homebrew/bin, /usr/local/bin, ~/go/bin). Containers start without it and nothing else is affected. To use it, install proximo on this host, then click Refresh.',
    ].join('\n'),
  });
}

export function proximoCaItem(p: ProximoSummary): ItemProps {
  return plainItem(
    {
      label: 'CA certificate',
      description: p.caPath ?? 'not found',
      icon: { id: 'shield' },
      contextValue: p.caPath ? 'proximoCa.present' : 'proximoCa.missing',
      tooltip: p.caPath
        ? `proximo's certificate authority, ${p.caPath}. Containers with proximo on get it read-only and trust it, so https://….test works inside them without certificate errors. Nothing to do.`
        : "proximo's certificate authority was not found, so containers do not trust proximo's HTTPS names. Run proximo install on this host to create it, then open a new shell (a running container keeps what it had).",
    },
    'message',
  );
}

export function proximoHostsItem(p: ProximoSummary): ItemProps {
  const n = p.hosts.length;
  return plainItem({
    label: 'Routed hosts',
    description: n === 0 ? 'none right now' : String(n),
    icon: { id: 'globe' },
    contextValue: 'proximoHosts',
    tooltip:
      n === 0
        ? 'The names proximo routes right now: none. Start your app with proximo (proximo up, on this host or in a Toolbox shell); its names appear here.'
        : `The names proximo routes right now (${n}), read from the running containers' proximo.hosts labels. Containers created from now on resolve them to this host.`,
  });
}

/** One workspace container's line in the Proximo view. */
export function proximoWorkspaceItem(c: ContainerSummary): ItemProps {
  const n = c.proximoHosts?.length ?? 0;
  return plainItem(
    {
      label: c.name,
      description: proximoWorkspaceDescription(c),
      icon: { id: c.proximoCa ? 'pass' : 'circle-large-outline' },
      contextValue: c.proximoCa ? 'proximoWorkspace.on' : 'proximoWorkspace.off',
      tooltip: c.proximoCa
        ? `proximo is on in ${c.name}: it trusts proximo's certificate${n ? ` and resolves ${n} routed host${n === 1 ? '' : 's'} to this host` : ''}.`
        : `proximo is off in ${c.name}: it was created without proximo's certificate (proximo was not installed then, or the folder's .toolbox.yaml says proximo: false). Stop it and open a new shell to pick proximo up.`,
    },
    'message',
  );
}

/** The workspace-level proximo line: on when the container mounts the CA. */
export function proximoWorkspaceDescription(c: ContainerSummary): string {
  if (!c.proximoCa) return 'proximo off';
  const n = c.proximoHosts?.length ?? 0;
  return n ? `proximo on · ${n} host${n === 1 ? '' : 's'}` : 'proximo on';
}

/**
 * An error shown as a tree item with actions instead of an empty view. `setting`: the error
 * names toolbox.dockerHost, so Open Setting is one of the actions.
 */
export function errorItem(message: string, setting = false): ItemProps {
  const firstSentence = message.split(/(?<=[.!?])\s/)[0] ?? message;
  return plainItem({
    label: firstSentence,
    description: setting ? 'Open Setting · Retry · Show Log' : 'Retry · Show Log',
    icon: { id: 'error', color: 'errorForeground' },
    contextValue: 'error',
    tooltip: message,
  });
}

/**
 * A shell the container's session holder keeps: its title (or command), whether a terminal shows
 * it now, and since when it runs. Detached ones can be picked up from any window.
 */
export function heldShellItem(
  s: HeldShellSummary,
  now: number,
): { label: string; description: string; icon: IconSpec; contextValue: string; tooltip: string } {
  const attached = s.attached > 0;
  // What runs in it, as a person would say it ("zsh -l", "claude"): the terminal's title is the
  // container's name, which the parent row already shows.
  const [program = '', ...args] = s.command.split(' ');
  const label = plainText([program.split('/').pop(), ...args].filter(Boolean).join(' '), 'label', 60) || s.id;
  return plainItem({
    label,
    description: `${attached ? 'attached' : 'detached'} · ${sinceText(s.started, now)}`,
    icon: attached ? { id: 'terminal' } : { id: 'debug-disconnect' },
    contextValue: attached ? 'heldShell.attached' : 'heldShell.detached',
    tooltip: [
      `${inline(s.command || 'shell')} (pid ${s.pid} in the container)${s.title ? `, opened as ${quoted(s.title, 'message')}` : ''}`,
      `Started ${new Date(s.started).toLocaleString()}`,
      attached ? `Shown in ${s.attached} terminal${s.attached > 1 ? 's' : ''} now.` : 'No terminal shows it: Attach opens one here.',
      'End stops it (as closing its terminal does).',
    ].join('\n'),
  });
}

/** "started 5 min ago", coarse on purpose: the tree refreshes on events, not on a clock. */
export function sinceText(started: number, now: number): string {
  const minutes = Math.max(0, Math.round((now - started) / 60_000));
  if (minutes < 1) return 'started just now';
  if (minutes < 60) return `started ${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `started ${hours} h ago` : `started ${Math.round(hours / 24)} days ago`;
}

/** The label of the group under each container that lists what it can reach on this host. */
export const REACH_GROUP_LABEL = 'Can reach on this host';

export function reachGroupItem(reach: readonly HostReach[]): {
  label: string;
  description: string;
  icon: IconSpec;
  contextValue: string;
  tooltip: string;
} {
  const n = reach.length;
  return plainItem({
    label: REACH_GROUP_LABEL,
    description: n === 0 ? 'nothing beyond its workspace' : `${n} thing${n === 1 ? '' : 's'} beyond its workspace`,
    icon: n === 0 ? { id: 'shield' } : { id: 'shield', color: 'list.warningForeground' },
    contextValue: 'reachGroup',
    tooltip:
      n === 0
        ? 'Read from its mounts: this container reaches nothing on this host beyond its workspace folder and its own toolbox directories.'
        : 'Read from its mounts: what this container can use on this host besides its workspace folder and its own toolbox directories. ' +
          'Turn an item off for this folder with the button on its line; the container keeps it until it is recreated.',
  });
}

/** The label of the group under a container that lists what it started through its Docker endpoint. */
export const DOCKER_CHILDREN_LABEL = 'Started with Docker';

/** "2 containers · 1 network · 1 volume". */
export function dockerChildrenCount(c: DockerChildrenSummary): string {
  const part = (n: number, one: string) => (n === 0 ? undefined : `${n} ${one}${n === 1 ? '' : 's'}`);
  return [part(c.containers.length, 'container'), part(c.networks.length, 'network'), part(c.volumes.length, 'volume')]
    .filter((p) => p !== undefined)
    .join(' · ');
}

export function dockerChildrenGroupItem(c: DockerChildrenSummary): ItemProps {
  return plainItem(
    {
      label: DOCKER_CHILDREN_LABEL,
      description: dockerChildrenCount(c),
      icon: { id: 'layers' },
      contextValue: 'dockerChildren',
      tooltip:
        'What this container started through its own Docker endpoint (docker run, docker compose, Testcontainers). ' +
        'When the container is stopped, its containers and networks are removed with it; its named volumes are kept.',
    },
    'message',
  );
}

/**
 * A top-level row for what `owner` started through its Docker endpoint and is still here though
 * `owner` is gone (engine/dockerEndpoint/children.ts leftBehindOf): removed by the toolbox CLI, `docker rm`
 * or anything but this editor, which would have removed them with it.
 */
export function leftBehindGroupItem(owner: string, c: DockerChildrenSummary): ItemProps {
  return plainItem(
    {
      label: `Left behind by ${owner}`,
      description: dockerChildrenCount(c),
      icon: { id: 'layers', color: 'list.warningForeground' },
      contextValue: 'leftBehind',
      tooltip:
        `${inline(owner, 120)}, the container that started these through its Docker endpoint, is gone: something other than ` +
        'this editor removed it (the toolbox CLI, docker rm), and they kept running. ' +
        'Remove What Was Left Behind removes its containers and networks; its named volumes are kept.',
    },
    'message',
  );
}

/** One thing a container started: a container (its image and state), a network, or a named volume. */
export function dockerChildItem(
  child: { kind: 'container'; name: string; image: string; state: string } | { kind: 'network' | 'volume'; name: string },
): ItemProps {
  if (child.kind === 'container') {
    return plainItem({
      label: child.name,
      description: `${child.image} · ${child.state}`,
      icon: { id: child.state === 'running' ? 'vm-running' : 'vm-outline' },
      contextValue: 'dockerChild.container',
      tooltip: `A container started from ${inline(child.image)}: removed with its parent.`,
    });
  }
  return plainItem({
    label: child.name,
    description: child.kind === 'network' ? 'network' : 'volume · kept when the container goes',
    icon: { id: child.kind === 'network' ? 'type-hierarchy' : 'database' },
    contextValue: `dockerChild.${child.kind}`,
    tooltip:
      child.kind === 'network'
        ? 'A network it made: removed with its parent.'
        : 'A named volume it made: kept when its parent goes, since it holds data. Remove it with docker volume rm.',
  });
}

/** The label of the row under "Can reach on this host" that says whether the folder's protected paths are read-only. */
export const PROTECTION_ROW_LABEL = 'Protected paths';

/**
 * The protection row (docs/decisions/0042, 0044): on when the container was made with the
 * folder's protected paths read-only; off for one made before the protection, by the toolbox CLI,
 * or with toolbox.protectedPaths off. The opt-out is a User setting only, never a file the
 * container can write. `paths`: the protected paths, for the tooltip.
 */
export function protectionItem(on: boolean, paths: readonly string[] = PROPOSABLE_PATHS): ItemProps {
  const list = paths.join(', ');
  return plainItem(
    on
      ? {
          label: PROTECTION_ROW_LABEL,
          description: 'read-only in this container',
          icon: { id: 'lock' },
          contextValue: 'protection.on',
          tooltip:
            `Read-only in this container, so an agent cannot plant what host programs run: ${list}. ` +
            'The agent proposes a change to one of them with toolbox-propose; you see it as a diff and apply or reject it. ' +
            'Turn the protection off only with toolbox.protectedPaths in your User settings (a workspace or folder setting does not count: the container could write it); a container keeps what it was made with until it is recreated.',
        }
      : {
          label: PROTECTION_ROW_LABEL,
          description: 'not protected',
          icon: { id: 'unlock', color: 'list.warningForeground' },
          contextValue: 'protection.off',
          tooltip:
            `This container can write the paths host programs run from its folder: ${list}. ` +
            'It was made without the protection: before it existed, by the toolbox CLI, or with toolbox.protectedPaths off in your User settings. ' +
            'Recreate it from VS Code, with the setting on, to make them read-only.',
        },
    'message',
  );
}

/** The label of the row under "Can reach on this host" that names the host's extensions that run the folder's files. */
export const HOST_TOOLS_ROW_LABEL = 'Extensions on this host';

/**
 * The extensions on this host that run the folder's files, which the container can write
 * (docs/decisions/0060, plan/hostTools.ts): how many run them on their own, and whether the
 * window is in Restricted Mode. Calm: trusting the folder is the user's choice, not a fault.
 */
export function hostToolsItem(p: HostToolsPosture): ItemProps {
  const choice = hostToolsChoice(p);
  return plainItem({
    label: HOST_TOOLS_ROW_LABEL,
    description: hostToolsSummary(p),
    icon: { id: p.state === 'restricted' ? 'workspace-untrusted' : 'extensions' },
    contextValue: `hostTools.${p.state}`,
    tooltip: [hostToolsDetail(p), ...(choice !== undefined ? [choice] : [])].join('\n\n'),
  });
}

/** One extension that runs the folder's files on its own: what it runs, and what Restricted Mode does with it. */
export function hostToolItem(t: FoundHostTool): ItemProps {
  return plainItem({
    label: t.name,
    description: restrictedWords(t),
    icon: { id: 'extensions' },
    contextValue: 'hostTool',
    tooltip: `${t.name} (${t.id}) runs ${t.runs}. An agent in the container can write those files; the extension runs them on this host, as you.`,
  });
}

/** The row under it that opens the Workspace Trust editor (or the setting that turns Workspace Trust on): a click runs `command`. */
export function hostToolsActionItem(offer: HostToolsOffer): ItemProps & { command: string; commandArgs: unknown[] } {
  return offer === 'workspace-trust'
    ? {
        label: 'Manage Workspace Trust',
        description: 'choose Restricted Mode while an agent works',
        icon: { id: 'workspace-untrusted' },
        contextValue: 'action',
        tooltip:
          "Opens VS Code's Workspace Trust editor. Don't Trust puts the window in Restricted Mode: the extensions above stop running the folder's files; so do tasks, debugging and VS Code's git, and Toolbox ignores the project's .toolbox.yaml. Trust it again when the agent is done.",
        command: MANAGE_TRUST_COMMAND,
        commandArgs: [],
      }
    : {
        label: 'Open Setting',
        description: TRUST_ENABLED_SETTING,
        icon: { id: 'settings-gear' },
        contextValue: 'action',
        tooltip: `Opens the ${TRUST_ENABLED_SETTING} setting: with Workspace Trust on, you can open the folder in Restricted Mode while an agent works.`,
        command: 'workbench.action.openSettings',
        commandArgs: [TRUST_ENABLED_SETTING],
      };
}

/**
 * One thing a container reaches. `actionable`: the container belongs to a folder of this
 * window, so "Turn off for this folder" can record it for that folder (in the user's settings).
 */
export function reachItem(r: HostReach, home: string, actionable: boolean): ItemProps {
  // Every tooltip here is one sentence.
  return plainItem(reachItemText(r, home, actionable), 'message');
}

function reachItemText(r: HostReach, home: string, actionable: boolean): ItemProps {
  const src = tildePath(r.source, home);
  const mode = r.readonly ? 'read-only' : 'read-write';
  const off = actionable
    ? 'Turn it off for this folder with the button on this line (kept in your User settings, where the container cannot undo it).'
    : 'Open its folder in a window to turn it off there.';
  const contextValue = `reach.${r.kind}${actionable ? '.window' : ''}`;
  switch (r.kind) {
    case 'docker-endpoint':
      return {
        label: reachTitle(r, home),
        description: 'its own containers only · binds inside this folder',
        icon: { id: 'server-process' },
        contextValue,
        tooltip:
          'Docker commands in the container go to an endpoint Toolbox serves for it alone: it sees, runs, stops and removes only the containers, volumes and networks it created there, binds only paths inside this folder, and is refused privileged containers, host namespaces, devices and added capabilities, each with a message that names the rule. ' +
          `To give it the host's Docker socket instead (root on this host), set toolbox.dockerEndpoint to raw-socket in your User settings. ${off}`,
      };
    case 'docker-socket':
      return {
        label: reachTitle(r, home),
        description: `${src} · root on this host`,
        icon: { id: 'server-process', color: 'list.errorForeground' },
        contextValue,
        tooltip:
          `The host's Docker engine (${src}) is mounted: anything in the container can start a container that mounts / and so has root on this host. ` +
          `Upstream's default, for docker commands inside the container. ${off}`,
      };
    case 'host-ssh':
      return {
        label: reachTitle(r, home),
        description: `${src} · ${mode}`,
        icon: { id: 'key', color: 'list.warningForeground' },
        contextValue,
        tooltip:
          `Your own SSH directory (${src}) is mounted ${mode} at ${r.target} because ~/.toolbox/ssh does not exist: the container can read your private keys and use them wherever they work. ` +
          `Put keys meant for the container in ~/.toolbox/ssh instead, or ${off.charAt(0).toLowerCase()}${off.slice(1)}`,
      };
    case 'host-auth': {
      // Read-write as the CLI binds it (plan/mounts.ts INHERIT_HOST_AUTH): token refreshes write there.
      // Turn Off drops the key from inherit_host_auth (plan/posture.ts turnOffChange), not a mounts: patch.
      const authOff =
        actionable && r.authKey !== undefined
          ? `Turn it off for this folder with the button on this line (it leaves ${r.authKey} out of inherit_host_auth, kept in your User settings).`
          : off;
      return {
        label: reachTitle(r, home),
        description: `${src} · ${r.readonly ? mode : 'read-write, for token refresh'} · inherit_host_auth`,
        icon: { id: 'account', color: 'list.warningForeground' },
        contextValue,
        tooltip: r.readonly
          ? `inherit_host_auth mounts your own ${reachTitle(r, home)} (${src}) ${mode} at ${r.target}, instead of the container's own copy under ~/.toolbox. ${authOff}`
          : `inherit_host_auth mounts your own ${reachTitle(r, home)} (${src}) read-write at ${r.target}, instead of the container's own copy under ~/.toolbox, ` +
            `as the toolbox CLI does, so the CLI can refresh its tokens. Anything running in the container can read these credentials and change them: ` +
            `replace or delete tokens and change the settings your host's own ${r.authKey ?? 'CLI'} then uses. ${authOff}`,
      };
    }
    case 'host-path':
      return {
        label: reachTitle(r, home),
        description: `${mode} at ${r.target} in the container`,
        icon: { id: 'folder', color: r.readonly ? undefined : 'list.warningForeground' },
        contextValue,
        tooltip: `${src} on this host is mounted ${mode} at ${r.target}: it is outside the workspace and the toolbox directories. ${off}`,
      };
  }
}

/**
 * One port a container publishes: `8080 → 127.0.0.1:8080` (container port → where this host
 * reaches it). TCP ports get Open in Browser (`port.http`); UDP and SCTP ones cannot (`port.other`).
 */
export function portItem(p: PublishedPort, container: string): ItemProps {
  const proto = p.protocol === 'tcp' ? '' : `/${p.protocol}`;
  const host = p.hostIp.includes(':') ? `[${p.hostIp}]` : p.hostIp;
  const everywhere = p.hostIp === '0.0.0.0' || p.hostIp === '::';
  const url = publishedPortUrl(p);
  return plainItem({
    label: `${p.containerPort}${proto} → ${host}:${p.hostPort}`,
    description: everywhere ? 'published on every interface' : 'published port',
    icon: { id: 'plug', color: everywhere ? 'list.warningForeground' : undefined },
    contextValue: p.protocol === 'tcp' ? 'port.http' : 'port.other',
    tooltip: [
      `Port ${p.containerPort}/${p.protocol} of ${inline(container)} is published on ${inline(host)}:${p.hostPort} of this host.`,
      everywhere
        ? 'It is bound on every interface, so other machines on your network can reach it too.'
        : 'Only this machine can reach it.',
      p.protocol === 'tcp' ? `Open in Browser opens ${inline(url)}.` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  });
}

/** A terminal of this window and its session's state (ui/shells/shellLauncher.ts AgentTerminal, without vscode). */
export interface AgentRowInput {
  key: number;
  container: string;
  title: string;
  sessionId?: string;
  status: AgentStatus;
}

const STATE_WORDS: Record<AgentState, string> = { working: 'working', needsYou: 'needs you', idle: 'idle', ended: 'ended' };

/** The state as an icon: a bell that stands out when it needs you. */
export function agentStateIcon(state: AgentState): IconSpec {
  switch (state) {
    case 'needsYou':
      return { id: 'bell-dot', color: 'list.warningForeground' };
    case 'working':
      return { id: 'loading~spin' };
    case 'idle':
      return { id: 'circle-large-outline' };
    case 'ended':
      return { id: 'circle-slash' };
  }
}

/** How long it has been in its state, coarse: the tree is redrawn every half minute, not every second. */
export function timeInState(since: number, now: number): string {
  const minutes = Math.floor(Math.max(0, now - since) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} days`;
}

/**
 * A session in one of this window's terminals: the agent (claude, codex, shell), its state and
 * for how long; a click focuses its terminal. `heldShell` is the holder's line for the same
 * session, when it has one: its contextValue keeps the `heldShell.` prefix so Attach and End stay.
 */
export function agentRowItem(
  a: AgentRowInput,
  now: number,
  heldShell?: HeldShellSummary,
): { label: string; description: string; icon: IconSpec; contextValue: string; tooltip: string } {
  const s = a.status;
  // An ended session says how it ended ("ended (exit 1)") and since when ("2 min ago").
  const exit = s.state === 'ended' && s.exitCode !== undefined ? ` (exit ${s.exitCode})` : '';
  const state = `${STATE_WORDS[s.state]}${exit}`;
  const time = timeInState(s.since, now);
  const ago = s.state === 'ended' && time !== 'just now' ? `${time} ago` : time;
  const said = s.state === 'needsYou' && s.message ? ` · ${quoted(s.message, 'label')}` : '';
  const held = heldShell ? `heldShell.${heldShell.attached > 0 ? 'attached' : 'detached'}.` : '';
  return plainItem({
    label: s.agent,
    description: `${state} · ${ago}${said}`,
    icon: agentStateIcon(s.state),
    contextValue: `${held}agent.${s.state}`,
    tooltip: [
      `${inline(a.title)}: ${s.agent === 'shell' ? 'a shell' : s.agent}, ${state} since ${new Date(s.since).toLocaleTimeString()}.`,
      s.state === 'needsYou' && s.message ? `It said: ${quoted(s.message, 'message')}` : undefined,
      s.title ? `Its title: ${quoted(s.title, 'message')}` : undefined,
      heldShell ? `${inline(heldShell.command || 'shell')} (pid ${heldShell.pid} in the container).` : undefined,
      'Click to focus its terminal.',
    ]
      .filter(Boolean)
      .join('\n'),
  });
}

/** The label of the Workspaces view's section of agent questions (shown only while one waits). */
export const APPROVALS_GROUP_LABEL = 'Agent questions';

/** The section at the top of the Workspaces view while agents wait for an answer (issue 28). */
export function approvalGroupItem(count: number): ItemProps {
  return {
    label: APPROVALS_GROUP_LABEL,
    description: `${count} waiting`,
    icon: { id: 'question', color: 'list.warningForeground' },
    contextValue: 'approvals',
    tooltip:
      `${count} question${count === 1 ? '' : 's'} from agents in Toolbox containers, waiting for your answer. ` +
      "Allow or Deny on a question's line, or answer it in the agent's terminal; unanswered, the agent asks there itself.",
  };
}

/**
 * One question: what the agent wants (the subject), who asks (`<container> · <agent> · <age>`), the
 * full question in the tooltip. `approval.session` when the agent can remember an allow for its
 * session (Allow for This Session is offered), else `approval`.
 */
export function approvalItem(request: ApprovalRequest, now: number): ItemProps {
  return plainItem({
    label: subjectPhrase(request),
    description: approvalDescription(request, now),
    icon: { id: 'question', color: 'list.warningForeground' },
    contextValue: request.canAllowForSession ? 'approval.session' : 'approval',
    tooltip: `${approvalTooltip(request)}\n\nClick to answer, or use Allow and Deny on this line.`,
  });
}

/**
 * A session row with what its agent did (ui/agents/agentTimeline.ts): the counts and tokens after its
 * description, its last entries in the tooltip, and `.timeline` at the end of its contextValue
 * (Show Session Timeline). Unchanged when nothing came from the session.
 */
export function withTimeline<T extends { description: string; tooltip: string; contextValue: string }>(
  row: T,
  summary: TimelineSummary | undefined,
  recent: readonly AgentEvent[],
): T {
  if (summary === undefined) return row;
  const lines = recentLines(recent);
  return {
    ...row,
    description: plainText(`${row.description}${timelineSuffix(summary)}`, 'label'),
    contextValue: `${row.contextValue}.timeline`,
    tooltip: plainText(
      [row.tooltip, '', lines.length > 0 ? 'What its agent did last:' : undefined, ...lines].filter((l) => l !== undefined).join('\n'),
      'tooltip',
    ),
  };
}

/** The label of the posture row under a container with an egress policy (issue 30) starts with this. */
export const EGRESS_ROW_LABEL = 'Network';

/** How many of a container's latest connections its posture row lists (Open Connection Log has them all). */
export const EGRESS_LOG_ROWS = 20;

/**
 * The posture row of a container's network (issue 30, docs/decisions/0056): its egress mode and
 * who enforces it, the counters in the description. `egress.<mode>.<enforced|unenforced>` as
 * contextValue: Open Connection Log is offered on every one.
 */
export function egressPostureItem(e: EgressSummary): ItemProps {
  const counts = [`${e.allowed} allowed`, `${e.denied} denied`, ...(e.asking > 0 ? [`${e.asking} asking`] : [])].join(' · ');
  const contextValue = `egress.${e.mode}.${e.enforced ? 'enforced' : 'unenforced'}`;
  const policy = e.mode === 'ask' || e.mode === 'allowlist';
  if (!policy) {
    return plainItem(
      {
        label: `${EGRESS_ROW_LABEL}: open — anywhere`,
        description: counts,
        icon: { id: 'globe' },
        contextValue,
        tooltip:
          "This container has the engine's network, as the toolbox CLI gives it: it can connect anywhere. " +
          "Set toolbox.egress.mode (or the folder's mode in toolbox.egressForFolder) to ask or allowlist in your User settings to hold its connections to a list; it applies when the container is next created.",
      },
      'message',
    );
  }
  if (!e.enforced) {
    return plainItem(
      {
        label: `${EGRESS_ROW_LABEL}: open (created before the policy; reopen to apply)`,
        description: `folder's mode: ${e.mode}`,
        icon: { id: 'globe', color: 'list.warningForeground' },
        contextValue,
        tooltip:
          `The folder's egress mode is ${e.mode}, but this container was created before that policy: it still has the engine's network and can connect anywhere. ` +
          'Stop it and open a new shell (or Recreate Drifted Container) to create it under the policy.',
      },
      'message',
    );
  }
  const how = e.mode === 'ask' ? 'a host no rule allows waits while VS Code asks you' : 'a host no rule allows is refused without asking';
  return plainItem(
    {
      label: e.served
        ? `${EGRESS_ROW_LABEL}: ${e.mode} — through this window's proxy`
        : `${EGRESS_ROW_LABEL}: ${e.mode} — not served by this window`,
      description: e.served ? counts : 'its proxy runs in the window that opened it',
      icon: { id: 'shield', color: e.asking > 0 ? 'list.warningForeground' : undefined },
      contextValue: `${contextValue}${e.served ? '.served' : ''}`,
      tooltip: e.served
        ? `Egress policy ${e.mode}: this container has no network of its own; each connection goes through a proxy in this VS Code window, which lets through the allowed hosts (the agents' APIs, the package registries, the folder's git remotes, your toolbox.egressForFolder rules) and ${how}. ` +
          `So far in this window: ${counts}. Open Connection Log lists every connection.`
        : `Egress policy ${e.mode}: this container has no network of its own and reaches out only through the proxy of the VS Code window that opened it. ` +
          'This window does not serve it, so its connections are not logged here; open its shell from this window to serve it here.',
    },
    'message',
  );
}

/** One connection under the posture row: `✓ api.example.com:443` and its bytes, or `✗ evil.example:443` · denied. */
export function egressLogItem(e: EgressLogEntry): ItemProps {
  const allowed = e.verdict === 'allowed';
  const bytes = byteSize(e.bytesUp + e.bytesDown);
  return {
    label: plainText(`${allowed ? '✓' : '✗'} ${inline(destination(e.host, e.port), 200)}`, 'label'),
    description: allowed ? (e.endedAt === undefined ? `${bytes} · open` : bytes) : 'denied',
    icon: allowed ? { id: 'pass', color: 'testing.iconPassed' } : { id: 'error', color: 'list.errorForeground' },
    contextValue: allowed ? 'egressEntry.allowed' : 'egressEntry.denied',
    tooltip: egressLogTooltip(e),
  };
}

/** The row after the latest connections when the log holds more. */
export function egressMoreItem(more: number): ItemProps {
  return {
    label: `${more} earlier connection${more === 1 ? '' : 's'}`,
    description: 'Open Connection Log',
    icon: { id: 'ellipsis' },
    contextValue: 'egressMore',
    tooltip: `The log keeps ${more} more connection${more === 1 ? '' : 's'} of this container. Click to open the whole log as a document.`,
  };
}
