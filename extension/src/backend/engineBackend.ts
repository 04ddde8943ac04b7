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
import type { LoadedBackend } from './api';
import { BridgeRegistry } from './bridges';
import { EngineConnector } from './connection';
import { ScopedDockerEndpoints } from './dockerEndpoints';
import { Containers } from './containers';
import type { KeyValueState } from '../bridge/credentialGrants';
import { FolderConfig } from './folderConfig';
import { ProjectConsents } from './projectConsent';
import { RuntimeImages } from './images';
import { HeldSessions } from './sessions';
import { LoginForwards } from './loginForwards';
import type { LoginForwardEvent } from './api/loginForwards';
import { vscodeSettings, type BackendSettings } from './settings';
import { ShellOpener } from './shells';
import { Views } from './views';
import { AgentWorktrees } from './worktrees';
import { EgressPolicies, type EgressDeps } from './egress';
import type { EgressPrompter } from './api/egress';
import { Doctor, socketAnswers, DOCTOR_LIMITS } from './doctor';
import { transportFactsFor } from './transportFacts';

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
  /**
   * Where the user's approvals of a project config's widening persist (globalState in the
   * extension: never the folder); default: memory.
   */
  projectConsent?: KeyValueState;
  /**
   * Serves the bridge for one container (BridgeHub.ensureWorkspace); its /open forwards login
   * callbacks through `logins` (issue 29).
   */
  bridgeFor?: (registration: WorkspaceRegistration, logins: LoginForwards) => Promise<BridgeMount>;
  /** Login callback forwards opening, closing or refused (issue 29): the UI's status bar and notices. */
  onLoginForward?: (event: LoginForwardEvent) => void;
  /** Asks the user about a connection in `ask` mode (ui/egress/egressQuestions.ts); absent: such a connection is refused. */
  egressPrompter?: EgressPrompter;
  /** Tests: where the egress proxies' sockets go, their name lookup and bounds. */
  egress?: Pick<EgressDeps, 'host' | 'proxy'>;
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

export function engineBackend(deps: EngineBackendDeps): LoadedBackend {
  const { names, log } = deps;
  const home = () => deps.host().home;
  const settings = deps.settings ?? vscodeSettings();
  const connector = new EngineConnector({ names, home, settings, log });
  const consents = new ProjectConsents(deps.projectConsent);
  const config = new FolderConfig({ names, home, settings, connector, consents, log: (line) => log.info(line) });
  const images = new RuntimeImages({ ...deps, home, settings, connector });
  const containers = new Containers(connector, images, log);
  const logins = new LoginForwards({ connector, log, onEvent: deps.onLoginForward });
  const bridgeFor = deps.bridgeFor;
  const bridges = new BridgeRegistry({
    home,
    connector,
    log,
    transport: () => settings.transports().bridge,
    bridgeFor: bridgeFor && ((registration) => bridgeFor(registration, logins)),
  });
  const egress = new EgressPolicies({
    settings,
    log,
    configFor: async (folder) => (await config.read(folder)).config.egress,
    ...(deps.egressPrompter ? { prompter: deps.egressPrompter } : {}),
    ...deps.egress,
  });
  // The Docker endpoint holds what a container starts to its folder's egress policy (issue 30).
  const dockerEndpoints = new ScopedDockerEndpoints({
    names,
    settings,
    log,
    egressFor: (folder, container) => egress.endpointEgress(folder, container),
  });
  const sessions = new HeldSessions({ connector, bridges, settings, log, dockerEndpoints, egress });
  const shells = new ShellOpener({ names, host: deps.host, log, config, connector, bridges, images, sessions, dockerEndpoints, egress });
  const worktrees = new AgentWorktrees({ names, config, connector, shells, containers, log: (line) => log.info(line) });
  const views = new Views(names, deps.host, connector, egress, {
    execTransport: (id) => sessions.execTransport(id),
    socketAllowed: () => settings.transports().sessions !== 'exec',
  });
  const transports = transportFactsFor({
    docker: async () => (await connector.engine()).docker,
    holderPath: (id) => sessions.holderPath(id),
    sessionsTransport: () => settings.transports().sessions,
    socketAnswers: (path) => socketAnswers(path, DOCTOR_LIMITS.socketMs),
  });
  const doctor = new Doctor({ names, host: deps.host, settings, connector, config, shells, images, egress, log, transports });
  // Every role method once; the return type makes a missing one a compile error.
  return {
    names,
    ...role(shells, ['prepareShell']),
    ...role(sessions, ['reattachShell', 'endShell', 'shellEnded']),
    ...role(config, ['peerWanted', 'peerSetting', 'seccompSetting', 'writeProjectPeerMessaging', 'pinUserPeerMessaging']),
    ...role(config, ['profiles', 'setFolderProfile']),
    ...role(config, ['resolvedConfigText', 'configProblems', 'namedShells', 'prepareNamedShellCreate', 'prepareTurnOff']),
    ...role(config, ['approveProjectConfig']),
    ...role(views, ['snapshot', 'proximo']),
    ...role(connector, ['engineChoices', 'watchEvents']),
    ...role(containers, ['stopContainer', 'stopAllTargets', 'stopAll', 'removeLeftBehind', 'rebuildRuntimeImage']),
    ...role(worktrees, ['createAgentWorktree', 'agentWorktrees', 'agentWorktreeRisk', 'removeAgentWorktree', 'pruneAgentWorktrees']),
    ...role(worktrees, ['syncAgentWorktree', 'agentWorktreeChanges', 'agentWorktreeFileAt', 'agentWorktreeRefusals']),
    ...role(logins, ['forwardLoginPort', 'stopLoginForward', 'loginForwards']),
    ...role(egress, ['egressLog', 'onDidChangeEgress']),
    ...role(doctor, ['doctor']),
    resetConnection: () => connector.close({ whenIdle: true }),
    // The endpoints ask the engine which containers are gone before the connection closes.
    dispose: () => {
      logins.dispose();
      void Promise.all([dockerEndpoints.dispose(), egress.dispose()]).finally(() => connector.close());
    },
  };
}

export interface CreateEngineBackendOptions extends Omit<EngineBackendDeps, 'bridgeFor'> {
  /** The bridge's /edit and /open land in this window. */
  editor: EditorActions;
  /** Git credential consent: the prompt and where grants persist (ui/approvals/credentialConsent.ts). */
  credentialConsent?: CredentialConsentOptions;
  /** How long the bridge's /open waits for the user's answer; default OPEN_LIMITS_MS.confirm (tests shorten it). */
  openConfirmMs?: number;
}

/**
 * The backend with its bridge hub. The hub listens only once a shell needs it, and is shut
 * down with the backend.
 */
export function createEngineBackend(options: CreateEngineBackendOptions): LoadedBackend {
  let hub: BridgeHub | undefined;
  const { editor, credentialConsent, openConfirmMs, ...deps } = options;
  const backend = engineBackend({
    ...deps,
    bridgeFor: (registration, logins) =>
      (hub ??= new BridgeHub({
        home: deps.host().home,
        log: (event) => {
          const { level, text } = describeBridgeEvent(event);
          deps.log[level](text);
        },
        openInEditor: editor.openInEditor,
        openUntitled: editor.openUntitled,
        openExternal: editor.openExternal,
        propose: editor.propose,
        askApproval: editor.askApproval,
        agentEvent: editor.agentEvent,
        // The bridge's /open forwards a login callback the URL names before the browser opens (issue 29).
        forwardLoginCallback: (container, port) => logins.forwardForUrl(container, port),
        credentialConsent,
        openConfirmMs,
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
