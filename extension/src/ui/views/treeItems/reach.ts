/** Tree item properties for what a container can reach on this host: the group, protected paths, host extensions, each reach and published ports (ui/views/treeItems/index.ts). */
import { reachTitle, tildePath, type HostReach } from '../../../plan/posture';
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
} from '../../../plan/hostTools';
import { PROPOSABLE_PATHS } from '../../../plan/proposals';
import { publishedPortUrl, type PublishedPort } from '../../../plan/publish';
import { inline, plainItem } from '../../plainText';
import { type IconSpec, type ItemProps } from './containers';

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
