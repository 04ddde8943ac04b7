/** Tree item properties for peer messaging: the folder's setting, the anchor and the socket volume (ui/views/treeItems/index.ts). */
import { inline, plainItem } from '../../plainText';
import {
  peerSourceShort,
  peerSourceText,
  settingScopeText,
  type AnchorSummary,
  type PeerSetting,
  type SocketVolumeSummary,
} from '../model';
import { type IconSpec } from './containers';

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
