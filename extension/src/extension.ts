/**
 * The composition root: builds the collaborators and wires them to VS Code. Nothing here talks
 * to Docker; the engine is reached on the first command or when a Toolbox view becomes visible.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { RUNTIME_IMAGE_REPO, RUNTIME_IMAGE_TEST_REPO } from './contract/image';
import { objectNames } from './contract/objects';
import type { CreateEngineBackendOptions } from './backend/engineBackend';
import { registerCommands } from './ui/commands/registerCommands';
import { windowFolders } from './ui/folders';
import { type checkPeerDefaultAgreement, schedulePeerDefaultCheck } from './ui/config/peerDefaultNotice';
import type { ToolboxState } from './ui/views/refreshManager';
import { createServices } from './ui/services';
import type { OpenedShell } from './ui/shells/shellLauncher';
import { reattachSessions } from './ui/shells/reattachSessions';
import { shellProfileProvider } from './ui/shells/shellProfileProvider';
import { registerViews } from './ui/views/registerViews';

/** Returned from activate() for the extension-host tests; not an API for other extensions. */
export interface ToolboxTestApi {
  readonly shells: readonly OpenedShell[];
  readonly lastOpened: OpenedShell | undefined;
  readonly state: ToolboxState;
  /** The folder's resolved peer-messaging choice (settings, .toolbox.yaml, env). */
  peerWanted(folder: string): Promise<boolean>;
  /** Runs the peer-default check now (it runs by itself once, a few seconds after activation). */
  checkPeerDefault(): ReturnType<typeof checkPeerDefaultAgreement>;
}

/**
 * TOOLBOX_VSCODE_NAME_PREFIX (tests only): the object-name prefix instead of `toolbox`, so the
 * e2e and extension-host tests never touch a user's real containers, anchor or volume; the
 * runtime image then goes to the test repository, which the test harness prunes.
 * TOOLBOX_VSCODE_BUILD_ARGS (tests only): JSON object of runtime image build args, e.g.
 * '{"INSTALL_AGENTS":"0"}' so the image builds in seconds without the agent CLIs.
 * TOOLBOX_VSCODE_CLI_PATH (tests only): the directories searched for the `toolbox` CLI instead of
 * PATH (the peer-default check), because the editor may take PATH from a login shell.
 */
function testOverrides(env: NodeJS.ProcessEnv) {
  const prefix = env.TOOLBOX_VSCODE_NAME_PREFIX?.trim();
  let buildArgs: Record<string, string> = {};
  if (env.TOOLBOX_VSCODE_BUILD_ARGS) {
    const parsed: unknown = JSON.parse(env.TOOLBOX_VSCODE_BUILD_ARGS);
    if (parsed && typeof parsed === 'object') {
      buildArgs = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
    }
  }
  return {
    names: prefix ? objectNames(prefix) : objectNames(),
    buildArgs,
    imageRepo: prefix ? RUNTIME_IMAGE_TEST_REPO : RUNTIME_IMAGE_REPO,
    cliEnv: env.TOOLBOX_VSCODE_CLI_PATH ? { ...env, PATH: env.TOOLBOX_VSCODE_CLI_PATH } : env,
  };
}

/** `dist/backend.js` next to the bundle; `./backend/engineBackend` when running unbundled (tsc). */
function loadEngineBackend(): typeof import('./backend/engineBackend') {
  const bundled = join(__dirname, 'backend.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(existsSync(bundled) ? bundled : join(__dirname, 'backend', 'engineBackend')) as typeof import('./backend/engineBackend');
}

export function activate(context: vscode.ExtensionContext): ToolboxTestApi {
  const activatedAt = performance.now();
  const log = vscode.window.createOutputChannel('Toolbox', { log: true });
  context.subscriptions.push(log);
  const { names, buildArgs, imageRepo, cliEnv } = testOverrides(process.env);
  if (names.prefix !== 'toolbox') log.info(`Test mode: object names use the prefix "${names.prefix}".`);
  const createBackend = (options: CreateEngineBackendOptions) => loadEngineBackend().createEngineBackend(options);
  const s = createServices(context, log, { names, buildArgs, imageRepo, createBackend });
  const { backend, shells, refresh, resolvedConfig } = s;
  context.subscriptions.push(...registerCommands(s));
  registerViews(context, s);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('toolbox.dockerHost')) backend.resetConnection();
      if (e.affectsConfiguration('toolbox')) {
        refresh.refreshSoon();
        resolvedConfig.refreshAll();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => refresh.refreshSoon()),
    vscode.window.registerTerminalProfileProvider('toolbox.shell', shellProfileProvider(shells)),
  );

  // Once per activation, off the critical path: does a toolbox CLI on PATH ship the other peer default?
  const peerCheck = schedulePeerDefaultCheck({
    backend,
    state: context.globalState,
    log,
    folders: windowFolders,
    env: cliEnv,
    home: s.home,
    pinned: () => refresh.refreshSoon(),
  });
  context.subscriptions.push(peerCheck);

  // Held shells of this window come back without a command (the backend loads only when there are any).
  if (s.sessions.forFolders(windowFolders()).length > 0 && s.settings.persistSessions())
    void reattachSessions(shells, refresh, log, activatedAt);

  return {
    get shells() {
      return shells.shells;
    },
    get lastOpened() {
      return shells.shells[shells.shells.length - 1];
    },
    get state() {
      return refresh.state;
    },
    peerWanted: (folder) => backend.peerWanted(folder),
    checkPeerDefault: () => peerCheck.checkNow(),
  };
}

export function deactivate(): void {
  // Everything is in context.subscriptions (the agents' questions waiting are withdrawn there).
}
