/**
 * The backend bundle's entry (docs/decisions/0005-lazy-backend-bundle.md): builds one service
 * per feature and hands the UI their roles as one ToolboxBackend. No logic of its own; which file
 * owns what is in docs/architecture.md ("The backend").
 */
import type * as vscode from 'vscode';
import { BridgeHub, type CredentialConsentOptions, type WorkspaceRegistration } from '../bridge/hub';
import { describeBridgeEvent } from '../bridge/log';
import type { EditorActions } from '../bridge/route';
import type { BridgeMount, HostFacts, ObjectNames } from '../contract/types';
import type { ConfigService, ContainerService, LoadedBackend, ShellService, ViewService, WorktreeService } from './api';
import { BridgeRegistry } from './bridges';
import { EngineConnector } from './connection';
import { Containers } from './containers';
import { FolderConfig } from './folderConfig';
import { RuntimeImages } from './images';
import { HeldSessions } from './sessions';
import { vscodeSettings, type BackendSettings } from './settings';
import { ShellOpener } from './shells';
import { Views } from './views';
import { AgentWorktrees } from './worktrees';

export interface EngineBackendDeps {
  names: ObjectNames;
  host: () => HostFacts;
  /** Directory holding images/runtime and shims: the runtime image's build context. */
  extensionPath: string;
  /** Extra image build args (tests: TOOLBOX_VSCODE_BUILD_ARGS, JSON). */
  buildArgs: Record<string, string>;
  /** Repository our runtime image is tagged in (tests use their own). */
  imageRepo?: string;
  log: vscode.LogOutputChannel;
  /** VS Code's settings and workspace trust; default: the window's (backend/settings.ts). */
  settings?: BackendSettings;
  /** Serves the bridge for one container (BridgeHub.ensureWorkspace). */
  bridgeFor?: (registration: WorkspaceRegistration) => Promise<BridgeMount>;
}

/** The methods of `service` named in `keys`, bound to it: one role of the facade. */
function role<T extends object, K extends keyof T>(service: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) {
    const value = service[k];
    out[k] = (typeof value === 'function' ? value.bind(service) : value) as T[K];
  }
  return out;
}

/** Every method of each role, so the facade cannot miss one (the compiler checks the lists are whole). */
const SHELL_KEYS = ['prepareShell', 'reattachShell', 'endShell', 'shellEnded'] as const satisfies readonly (keyof ShellService)[];
const CONFIG_KEYS = [
  'peerWanted',
  'peerSetting',
  'seccompSetting',
  'writeProjectPeerMessaging',
  'pinUserPeerMessaging',
  'resolvedConfigText',
  'configProblems',
  'namedShells',
  'prepareNamedShellCreate',
  'prepareTurnOff',
] as const satisfies readonly (keyof ConfigService)[];
const CONTAINER_KEYS = [
  'stopContainer',
  'stopAllTargets',
  'stopAll',
  'rebuildRuntimeImage',
] as const satisfies readonly (keyof ContainerService)[];
const WORKTREE_KEYS = [
  'createAgentWorktree',
  'agentWorktrees',
  'agentWorktreeRisk',
  'removeAgentWorktree',
  'syncAgentWorktree',
  'agentWorktreeChanges',
  'agentWorktreeFileAt',
  'pruneAgentWorktrees',
] as const satisfies readonly (keyof WorktreeService)[];

export function engineBackend(deps: EngineBackendDeps): LoadedBackend {
  const { names, log } = deps;
  const home = () => deps.host().home;
  const settings = deps.settings ?? vscodeSettings();
  const connector = new EngineConnector({ names, home, settings, log });
  const config = new FolderConfig({ names, home, settings, connector, log: (line) => log.info(line) });
  const images = new RuntimeImages({ ...deps, home, settings, connector });
  const containers = new Containers(connector, images, log);
  const sessions = new HeldSessions({ connector, settings, log });
  const bridges = new BridgeRegistry({ home, connector, log, bridgeFor: deps.bridgeFor });
  const shells = new ShellOpener({ names, host: deps.host, log, config, connector, bridges, images, sessions });
  const worktrees = new AgentWorktrees({ names, config, connector, shells, containers, log: (line) => log.info(line) });
  const views = new Views(names, deps.host, connector);
  const shellRole: ShellService = {
    prepareShell: (request) => shells.prepareShell(request),
    ...role(sessions, ['reattachShell', 'endShell', 'shellEnded'] as const),
  };
  const viewRole: ViewService = {
    names,
    ...role(views, ['snapshot', 'proximo'] as const),
    ...role(connector, ['watchEvents'] as const),
  };
  return {
    ...role(shellRole, SHELL_KEYS),
    ...role(config, CONFIG_KEYS),
    ...viewRole,
    ...role(connector, ['engineChoices'] as const),
    ...role(containers, CONTAINER_KEYS),
    ...role(worktrees, WORKTREE_KEYS),
    resetConnection: () => connector.close({ whenIdle: true }),
    dispose: () => connector.close(),
  };
}

export interface CreateEngineBackendOptions extends Omit<EngineBackendDeps, 'bridgeFor'> {
  /** The bridge's /edit and /open land in this window. */
  editor: EditorActions;
  /** Git credential consent: the prompt and where grants persist (ui/credentialConsent.ts). */
  credentialConsent?: CredentialConsentOptions;
}

/**
 * The backend with its bridge hub. The hub listens only once a shell needs it, and is shut
 * down with the backend.
 */
export function createEngineBackend(options: CreateEngineBackendOptions): LoadedBackend {
  let hub: BridgeHub | undefined;
  const { editor, credentialConsent, ...deps } = options;
  const backend = engineBackend({
    ...deps,
    bridgeFor: (registration) =>
      (hub ??= new BridgeHub({
        home: deps.host().home,
        log: (event) => {
          const { level, text } = describeBridgeEvent(event);
          deps.log[level](text);
        },
        openInEditor: editor.openInEditor,
        openUntitled: editor.openUntitled,
        openExternal: editor.openExternal,
        credentialConsent,
      })).ensureWorkspace(registration),
  });
  return {
    ...backend,
    dispose: () => {
      backend.dispose();
      void hub?.dispose();
    },
  };
}
