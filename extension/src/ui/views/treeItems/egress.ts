/** Tree item properties for the egress policy's row and its connection log (ui/views/treeItems/index.ts). */
import { inline, plainItem, plainText } from '../../plainText';
import type { EgressLogEntry, EgressSummary } from '../../../backend/api/egress';
import { byteSize, destination, egressLogTooltip } from '../../egress/egressText';
import { type ItemProps } from './containers';

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
