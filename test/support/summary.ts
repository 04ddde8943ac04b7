/**
 * What the views are given, for the pure view tests: a container as they see it (ui/views/model.ts
 * ContainerSummary; a running workspace container of /src/app in the peer anchor's namespace,
 * changed by `over`), an engine snapshot listing containers, and the views' state around one.
 */
import type { Snapshot } from '../../extension/src/backend/api';
import type { ToolboxState } from '../../extension/src/ui/views/refreshManager';
import type { ContainerSummary } from '../../extension/src/ui/views/model';

export const SUMMARY_ANCHOR_ID = 'a1b2c3d4e5f6';

export function containerSummary(over: Partial<ContainerSummary> = {}): ContainerSummary {
  return {
    id: 'c0ffee',
    name: 'toolbox-app-1234abcd',
    state: 'running',
    kind: 'workspace',
    mountsSocketVolume: true,
    pidMode: `container:${SUMMARY_ANCHOR_ID}`,
    peer: true,
    workspace: '/src/app',
    ...over,
  };
}

/**
 * An engine snapshot (backend/api/views.ts Snapshot) listing `containers`: the peer anchor missing,
 * no socket volume, no peer members or sessions, unless `more` says otherwise.
 */
export function engineSnapshot(containers: ContainerSummary[], more: Partial<Snapshot> = {}): Snapshot {
  return {
    containers,
    anchor: { name: 'toolbox-peer-anchor', state: 'missing' },
    volume: { name: 'toolbox-cc-socks', exists: false },
    members: [],
    sessions: [],
    ...more,
  };
}

/**
 * The views' state (ui/views/refreshManager.ts ToolboxState) around engineSnapshot(containers,
 * `snapshot`): no folder wants peer messaging, no findings, loaded, the snapshot taken at `takenAt`.
 */
export function viewState(
  containers: ContainerSummary[],
  { takenAt = 0, snapshot = {} }: { takenAt?: number; snapshot?: Partial<Snapshot> } = {},
): ToolboxState {
  return { wantPeer: new Map<string, boolean>(), findings: [], loading: false, takenAt, snapshot: engineSnapshot(containers, snapshot) };
}
