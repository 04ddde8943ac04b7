/**
 * A stand-in for the backend's VS Code settings adapter (backend/settings.ts): the defaults, a
 * trusted workspace, and Turn Off for This Folder kept in `saved` instead of the User settings.
 */
import type { BackendSettings } from '../../extension/src/backend/settings';
import type { FolderTurnOff } from '../../extension/src/plan/posture';

export function standInSettings(over: Partial<BackendSettings> = {}): BackendSettings & { saved: Map<string, FolderTurnOff> } {
  const saved = new Map<string, FolderTurnOff>();
  return {
    saved,
    dockerHost: () => '',
    persistSessions: () => true,
    pullRuntimeImage: () => true,
    trusted: () => true,
    peerMessaging: () => ({}),
    seccomp: () => ({ profile: 'unconfined' }),
    turnedOff: (f) => saved.get(f) ?? { mounts: [], inheritHostAuth: [] },
    setTurnedOff: async (f, off) => void saved.set(f, off),
    protectedPaths: () => true,
    dockerEndpoint: () => 'scoped',
    ...over,
  };
}
