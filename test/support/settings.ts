/**
 * A stand-in for the backend's VS Code settings adapter (backend/settings.ts): the defaults, a
 * trusted workspace, Turn Off for This Folder kept in `saved` and the folders' profiles in `profiles`
 * instead of the User settings.
 */
import type { BackendSettings } from '../../extension/src/backend/settings';
import type { FolderTurnOff } from '../../extension/src/plan/posture';
import type { ProfileChoice } from '../../extension/src/plan/profiles';

export function standInSettings(
  over: Partial<BackendSettings> = {},
): BackendSettings & { saved: Map<string, FolderTurnOff>; profiles: Map<string, ProfileChoice> } {
  const saved = new Map<string, FolderTurnOff>();
  const profiles = new Map<string, ProfileChoice>();
  return {
    saved,
    profiles,
    dockerHost: () => '',
    persistSessions: () => true,
    pullRuntimeImage: () => true,
    trusted: () => true,
    peerMessaging: () => ({}),
    seccomp: () => ({ profile: 'unconfined' }),
    turnedOff: (f) => saved.get(f) ?? { mounts: [], inheritHostAuth: [] },
    setTurnedOff: async (f, off) => void saved.set(f, off),
    profile: (f) => profiles.get(f) ?? { share: [] },
    setProfile: async (f, choice) => void profiles.set(f, choice),
    protectedPaths: () => true,
    dockerEndpoint: () => 'scoped',
    dockerEndpointPorts: () => 'local',
    egress: () => ({}),
    transports: () => ({ bridge: 'auto', sessions: 'auto' }),
    vscodeGitOpeners: () => [],
    hostTools: () => ({ trusted: true, trustEnabled: true, extensions: [] }),
    ...over,
  };
}
