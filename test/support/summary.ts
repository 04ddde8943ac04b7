/**
 * A container as the views see it (ui/views/model.ts ContainerSummary), for the pure view tests: a
 * running workspace container of /src/app in the peer anchor's namespace, changed by `over`.
 */
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
