/** Tree item properties for proximo: its row, its CA, hosts and the workspaces it serves (ui/views/treeItems/index.ts). */
import { inline, plainItem } from '../../plainText';
import { type ContainerSummary, type ProximoSummary } from '../model';
import { type ItemProps } from './containers';

/** What proximo is, in one line a newcomer understands (the Proximo view says it first). */
export const PROXIMO_ONE_LINE =
  'proximo gives the apps you run on this host HTTPS names such as https://app.test; Toolbox makes those names work inside its containers too.';

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
