/**
 * The composition root: builds the collaborators and wires them to VS Code. Nothing here talks
 * to Docker; the engine is reached on the first command or when a Toolbox view becomes visible.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { WorktreesProvider } from './ui/tree/worktrees';
import { worktreeBaseProvider } from './ui/worktreeBase';
import { WORKTREE_BASE_SCHEME } from './ui/commands/compareAgentWorktree';
import { RUNTIME_IMAGE_REPO, RUNTIME_IMAGE_TEST_REPO } from './contract/constants';
import { objectNames } from './contract/objects';
import { CONTEXT_KEYS } from './contract/manifest';
import { PEER_DEFAULT_STATE, checkPeerDefaultAgreement, type PeerDefaultNoticeDeps } from './ui/peerDefaultNotice';
import { registerCommands, showEngineError } from './ui/commands';
import { lazyBackend } from './ui/lazyBackend';
import { windowFolders, pickFolder } from './ui/folders';
import { readHostFacts } from './backend/hostFacts';
import { vscodeSettings } from './backend/settings';
import { TRUST_ENABLED_SETTING } from './plan/hostTools';
import { RefreshManager } from './ui/refresh';
import { SessionStore } from './ui/sessionStore';
import { ShellLauncher, type OpenedShell } from './ui/shells';
import { askCredentialConsent, credentialGrantState } from './ui/credentialConsent';
import { PendingConfigPrompt } from './ui/pendingConfig';
import { UnknownKeyNotice } from './ui/unknownKeyNotice';
import { AgentStatusBar, ApprovalStatusBar, DriftStatusBar, EgressStatusBar } from './ui/statusBar';
import { ApprovalInbox } from './ui/approvalInbox';
import { ApprovalPrompter } from './ui/approvals';
import { EgressInbox } from './ui/egressQuestions';
import { EgressQuestions } from './ui/egress';
import { EgressLogDocuments } from './ui/egressLog';
import { DoctorDocuments } from './ui/doctor';
import { AgentTimeline } from './ui/agentTimeline';
import { SessionTimelineDocuments } from './ui/sessionTimeline';
import { AgentNudge } from './ui/agentNudge';
import { StateClock } from './ui/stateClock';
import { ConfigDiagnostics } from './ui/configDiagnostics';
import { ResolvedConfigDocuments } from './ui/resolvedConfig';
import { ProposalReview } from './ui/proposals';
import { LoginForwardStatus } from './ui/loginForwards';
import { NodeTreeProvider } from './ui/tree/provider';
import { plainText } from './ui/plainText';
import { peerNodes, proximoNodes, workspacesNodes } from './ui/tree/render';
import type { ToolboxState } from './ui/refresh';

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
  };
}

/** `dist/backend.js` next to the bundle; `./backend/engineBackend` when running unbundled (tsc). */
function loadEngineBackend(): typeof import('./backend/engineBackend') {
  const bundled = join(__dirname, 'backend.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(existsSync(bundled) ? bundled : join(__dirname, 'backend', 'engineBackend')) as typeof import('./backend/engineBackend');
}

/** performance.now() when activate() was called (the reattach timing starts here). */
let activatedAt = 0;

export function activate(context: vscode.ExtensionContext): ToolboxTestApi {
  activatedAt = performance.now();
  const log = vscode.window.createOutputChannel('Toolbox', { log: true });
  context.subscriptions.push(log);
  const { names, buildArgs, imageRepo } = testOverrides(process.env);
  if (names.prefix !== 'toolbox') log.info(`Test mode: object names use the prefix "${names.prefix}".`);

  const credentialGrants = credentialGrantState(context);
  const proposals = new ProposalReview(log);
  context.subscriptions.push(proposals);
  // Agents' questions (issue 28): they wait here for the user; the window going away withdraws them,
  // and the hook asks the next window (docs/decisions/0050).
  const inbox = new ApprovalInbox();
  const timeline = new AgentTimeline();
  // The shell launcher is made below; the prompter reaches it only when the user opens a terminal.
  const approvals = new ApprovalPrompter(
    inbox,
    { terminalFor: (container, session) => shells.terminalFor(container, session), focus: (key) => shells.focus(key) },
    log,
  );
  context.subscriptions.push(timeline, approvals);
  // Connection questions of the egress policy (issue 30, docs/decisions/0056): each holds a connection
  // while it waits here; the window going away denies them.
  const egressInbox = new EgressInbox();
  const egress = new EgressQuestions(egressInbox, log);
  context.subscriptions.push(egress);
  // Login callbacks forwarded into a container (issue 29, docs/decisions/0053): the status bar item and notices.
  const loginForwards = new LoginForwardStatus(log);
  context.subscriptions.push(loginForwards);
  const backend = lazyBackend(names, () => {
    // Loaded on first use (see lazyBackend.ts), from its own bundle: esbuild leaves a require
    // of a computed path alone, so activation never parses zod, yaml or dockerode.
    const { createEngineBackend } = loadEngineBackend();
    return createEngineBackend({
      names,
      host: () => readHostFacts(process.env),
      extensionPath: context.extensionPath,
      buildArgs,
      imageRepo,
      log,
      editor: {
        openInEditor,
        openUntitled,
        // False when the user cancels VS Code's "open the external website?" question.
        openExternal: async (url) => vscode.env.openExternal(vscode.Uri.parse(url, true)),
        // The bridge's /propose: a diff with Apply and Reject; nothing is written without the click.
        propose: (proposal) => proposals.propose(proposal),
        // The bridge's /approval: waits for Allow or Deny here; never "allow" without the user's click.
        askApproval: (request, signal) => approvals.ask(request, signal),
        // The bridge's /agent-event: the session timeline and usage.
        // What the agent did next also tells a question answered in its terminal (ApprovalInbox.leftBehind).
        agentEvent: (event) => {
          timeline.record(event);
          inbox.leftBehind(event);
        },
      },
      onLoginForward: (event) => loginForwards.handle(event),
      credentialConsent: { state: context.globalState, prompt: askCredentialConsent },
      // Approvals of what a project config asks beyond the user's own: never in the folder (docs/decisions/0041).
      projectConsent: context.globalState,
      // A connection in `ask` mode waits for Allow Once, Allow for This Folder or Deny here; never an allow without the click.
      egressPrompter: egress,
    });
  });
  const sessions = new SessionStore(context.workspaceState);
  const pendingConfig = new PendingConfigPrompt(backend, log);
  const home = readHostFacts(process.env).home;
  const settings = vscodeSettings();
  // The window's trust and the extensions it runs, for the Extensions on this host row (docs/decisions/0060):
  // read again when an extension comes or goes, trust is granted or Workspace Trust is turned on or off.
  let hostTools = settings.hostTools();
  const unknownKeys = new UnknownKeyNotice(context.workspaceState, home);
  const shells = new ShellLauncher(backend, sessions, log, pendingConfig, unknownKeys);
  const refresh = new RefreshManager(backend, windowFolders, log, home);
  const statusBar = new DriftStatusBar();
  const agentBar = new AgentStatusBar();
  const approvalBar = new ApprovalStatusBar();
  const egressBar = new EgressStatusBar();
  const nudge = new AgentNudge(shells, log);
  context.subscriptions.push(
    backend,
    inbox,
    egressInbox,
    shells,
    refresh,
    statusBar,
    agentBar,
    approvalBar,
    egressBar,
    nudge,
    pendingConfig,
  );

  const resolvedConfig = new ResolvedConfigDocuments(backend);
  const timelineDocs = new SessionTimelineDocuments(timeline);
  const egressDocs = new EgressLogDocuments(backend);
  const doctorDocs = new DoctorDocuments();
  context.subscriptions.push(timelineDocs, egressDocs, doctorDocs);
  const services = {
    backend,
    shells,
    refresh,
    statusBar,
    log,
    credentialGrants,
    resolvedConfig,
    proposals,
    approvals,
    timeline,
    timelineDocs,
    egress,
    egressDocs,
    doctorDocs,
  };
  context.subscriptions.push(...registerCommands(services));
  // .toolbox.yaml problems in the Problems panel; the backend loads only once such a file is open.
  context.subscriptions.push(
    resolvedConfig,
    new ConfigDiagnostics(backend, log, () => {
      // A saved .toolbox.yaml can change the folder's peer-messaging state and the resolved view.
      resolvedConfig.refreshAll();
      refresh.refreshSoon();
    }),
  );

  const views: Array<[string, NodeTreeProvider]> = [
    [
      'toolbox.workspaces',
      new NodeTreeProvider((s) =>
        workspacesNodes(s, windowFolders(), home, shells.agentTerminals(), Date.now(), {
          approvals: inbox.pending(),
          timeline,
          egressLog: (container) => backend.egressLog(container),
          hostTools,
        }),
      ),
    ],
    ['toolbox.peer', new NodeTreeProvider((s) => peerNodes(s, home))],
    ['toolbox.proximo', new NodeTreeProvider((s) => proximoNodes(s, windowFolders()))],
  ];
  const workspacesView = views[0]![1];
  // The time in each state, redrawn every half minute; the clock runs only while this window has
  // Toolbox terminals (it is synced whenever a terminal opens, changes state, ends or closes).
  const clock = new StateClock(
    () => shells.agentTerminals().length > 0,
    () => workspacesView.update(refresh.state),
  );
  const hostToolsChanged = () => {
    hostTools = settings.hostTools();
    workspacesView.update(refresh.state);
  };
  const agentsChanged = () => {
    workspacesView.update(refresh.state);
    agentBar.update(shells.agentTerminals());
    clock.sync();
  };
  // A question arrived or left: the status bar count and the Workspaces view's section at once.
  const approvalsChanged = () => {
    approvalBar.update(inbox.pending());
    workspacesView.update(refresh.state);
  };
  // Timeline entries come as fast as an agent works: the rows and open timelines are redrawn once per burst.
  let timelineRedraw: NodeJS.Timeout | undefined;
  const timelineChanged = () => {
    timelineRedraw ??= setTimeout(() => {
      timelineRedraw = undefined;
      workspacesView.update(refresh.state);
      timelineDocs.refreshAll();
    }, 250);
  };
  context.subscriptions.push(inbox.onDidChange(approvalsChanged), timeline.onDidChange(timelineChanged), {
    dispose: () => clearTimeout(timelineRedraw),
  });
  // Connection questions (issue 30): the status bar count at once; the tree's asking count comes with the next snapshot.
  context.subscriptions.push(egressInbox.onDidChange(() => egressBar.update(egressInbox.pending())));
  // Connections come as fast as a container makes them: the latest rows and open logs are redrawn
  // at most four times a second, the snapshot (the counters on the rows) at most once a second.
  let egressRedraw: NodeJS.Timeout | undefined;
  let egressSnapshot: NodeJS.Timeout | undefined;
  const egressChanged = () => {
    egressRedraw ??= setTimeout(() => {
      egressRedraw = undefined;
      workspacesView.update(refresh.state);
      egressDocs.refreshAll();
    }, 250);
    egressSnapshot ??= setTimeout(() => {
      egressSnapshot = undefined;
      refresh.refreshSoon(0);
    }, 1000);
  };
  // Listening does not load the backend (ui/lazyBackend.ts): the listener is handed over when it loads.
  context.subscriptions.push(backend.onDidChangeEgress(egressChanged), {
    dispose: () => {
      clearTimeout(egressRedraw);
      clearTimeout(egressSnapshot);
    },
  });
  const treeViews: vscode.TreeView<unknown>[] = [];
  let workspacesTreeView: vscode.TreeView<unknown> | undefined;
  // The Worktrees view: its own provider (git state from host git, live from git's files).
  const worktrees = new WorktreesProvider(backend, windowFolders, log);
  const worktreesView = vscode.window.createTreeView('toolbox.worktrees', { treeDataProvider: worktrees, showCollapseAll: false });
  treeViews.push(worktreesView as vscode.TreeView<unknown>);
  context.subscriptions.push(
    worktrees,
    worktreesView,
    worktreesView.onDidChangeVisibility((e) => {
      worktrees.setVisible(e.visible);
      refresh.setViewVisible('toolbox.worktrees', e.visible);
    }),
    vscode.workspace.registerTextDocumentContentProvider(WORKTREE_BASE_SCHEME, worktreeBaseProvider(backend)),
  );
  if (worktreesView.visible) {
    worktrees.setVisible(true);
    refresh.setViewVisible('toolbox.worktrees', true);
  }
  for (const [id, provider] of views) {
    const view = vscode.window.createTreeView(id, { treeDataProvider: provider, showCollapseAll: false });
    if (id === 'toolbox.workspaces') workspacesTreeView = view;
    // Untrusted: the project's .toolbox.yaml is ignored; say so where the user looks.
    if (!vscode.workspace.isTrusted) view.description = 'limited mode (untrusted workspace)';
    treeViews.push(view as vscode.TreeView<unknown>);
    context.subscriptions.push(
      provider,
      view,
      view.onDidChangeVisibility((e) => refresh.setViewVisible(id, e.visible)),
    );
    if (view.visible) refresh.setViewVisible(id, true);
  }

  context.subscriptions.push(
    refresh.onDidChange((state) => {
      // The welcome view waits for the first answer, so "no containers yet" is never a guess.
      void vscode.commands.executeCommand('setContext', 'toolbox.loaded', !state.loading);
      // The walkthrough's "engine found" step, and the Proximo view's welcome text.
      if (!state.loading) void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.engineReachable, !state.error);
      if (state.proximo) {
        void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.proximo, state.proximo.installed ? 'installed' : 'missing');
      }
      for (const [, provider] of views) provider.update(state);
      worktrees.update(state);
      statusBar.update(state.findings);
      // The engine in use and where its endpoint came from, as the Workspaces view's description.
      if (workspacesTreeView && vscode.workspace.isTrusted && !state.loading) {
        const engine = state.snapshot?.engine;
        workspacesTreeView.description = state.error || engine === undefined ? undefined : plainText(engine, 'label');
      }
      if (state.snapshot && !state.error) {
        const running = state.snapshot.containers.filter((c) => c.state === 'running').map((c) => c.id);
        shells.closeGone(new Set(running), state.takenAt, state.snapshot.endpoint);
      }
    }),
    shells.onDidOpen(() => {
      refresh.noteShellOpened();
      clock.sync();
    }),
    // A session's state shows in the tree and the status bar as soon as its stream says so.
    shells.onDidChangeAgent(() => agentsChanged()),
    vscode.window.onDidCloseTerminal(() => agentsChanged()),
    clock,
    vscode.extensions.onDidChange(() => hostToolsChanged()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(TRUST_ENABLED_SETTING)) hostToolsChanged();
      if (e.affectsConfiguration('toolbox.dockerHost')) backend.resetConnection();
      if (e.affectsConfiguration('toolbox')) {
        refresh.refreshSoon();
        resolvedConfig.refreshAll();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => refresh.refreshSoon()),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      for (const view of treeViews) view.description = undefined;
      // VS Code then starts the extensions that needed trust, which onDidChange reports too.
      hostToolsChanged();
      refresh.refreshSoon();
    }),
    vscode.window.registerTerminalProfileProvider('toolbox.shell', {
      provideTerminalProfile: async () => {
        const folder = await pickFolder();
        if (!folder) return undefined;
        const options = await shells.profileOptions({ folder });
        return options ? new vscode.TerminalProfile(options) : undefined;
      },
    }),
  );

  // Once per activation, off the critical path: does a toolbox CLI on PATH ship the other peer default?
  const peerNotice: PeerDefaultNoticeDeps = {
    backend,
    state: context.globalState,
    log,
    folders: windowFolders,
    env: process.env.TOOLBOX_VSCODE_CLI_PATH ? { ...process.env, PATH: process.env.TOOLBOX_VSCODE_CLI_PATH } : process.env,
    home,
    pinned: () => refresh.refreshSoon(),
  };
  const peerCheck = setTimeout(() => {
    checkPeerDefaultAgreement(peerNotice).then(
      (outcome) => log.debug(`Peer-default check: ${outcome}.`),
      (err: Error) => log.warn(`Could not compare peer-messaging defaults with the toolbox CLI: ${err.message}`),
    );
  }, PEER_DEFAULT_STATE.delayMs);
  // A check still waiting keeps no process alive (the extension host never waits for it; the
  // startup benchmark's child process exits after activation).
  peerCheck.unref();
  context.subscriptions.push({ dispose: () => clearTimeout(peerCheck) });

  // Held shells of this window come back without a command (the backend loads only when there are any).
  if (sessions.forFolders(windowFolders()).length > 0 && settings.persistSessions()) void reattachSessions(shells, refresh, log);

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
    checkPeerDefault: () => {
      clearTimeout(peerCheck);
      return checkPeerDefaultAgreement(peerNotice);
    },
  };
}

/** Reattaches this window's held shells; says once which could not come back and why. */
async function reattachSessions(shells: ShellLauncher, refresh: RefreshManager, log: vscode.LogOutputChannel): Promise<void> {
  try {
    const outcome = await shells.reattachAll(windowFolders());
    const attached = performance.now();
    if (outcome.reattached > 0) {
      refresh.noteShellOpened();
      // bench/reattach.ts reads this line: activation → every reattached terminal showing its screen.
      const after = (t: number) => `${Math.round(t - activatedAt)} ms`;
      void outcome.screensShown.then((at) =>
        log.info(
          `Reattached ${outcome.reattached} Toolbox shell(s): engine and holders answered ${after(attached)} after activation, ` +
            (at === undefined
              ? 'but a terminal showed no screen within 10 s.'
              : `terminals opened at ${after(at.opened)}, every screen shown ${after(at.shown)} after activation.`),
        ),
      );
    }
    for (const line of outcome.gone) log.warn(line);
    if (outcome.gone.length > 0) {
      void vscode.window.showInformationMessage(
        plainText(
          outcome.gone.length === 1 ? outcome.gone[0]! : `${outcome.gone.length} Toolbox shells did not survive: ${outcome.gone.join(' ')}`,
          'message',
        ),
      );
    }
    if (outcome.failed.length > 0) {
      for (const line of outcome.failed) log.warn(`Could not reattach ${line}`);
      const retry = 'Retry';
      const answer = await showEngineError(
        `Toolbox could not reattach ${outcome.failed.length} shell(s); they are still recorded. ${outcome.failed[0]}`,
        log,
        retry,
      );
      if (answer === retry) await reattachSessions(shells, refresh, log);
    }
  } catch (err) {
    log.error(`Reattaching Toolbox shells failed: ${(err as Error).message}`);
  }
}

/** The bridge's /edit: a file opens in a tab, a folder is revealed in the Explorer. */
async function openInEditor(hostPath: string, isDirectory: boolean): Promise<void> {
  const uri = vscode.Uri.file(hostPath);
  if (isDirectory) await vscode.commands.executeCommand('revealInExplorer', uri);
  else await vscode.window.showTextDocument(uri, { preview: false });
}

/**
 * The bridge's /edit for a file that does not exist yet: an untitled editor bound to that path,
 * as desktop `code new.txt` does. Nothing is written until the user saves.
 */
async function openUntitled(hostPath: string): Promise<void> {
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(hostPath).with({ scheme: 'untitled' }));
  await vscode.window.showTextDocument(document, { preview: false });
}

export function deactivate(): void {
  // Everything is in context.subscriptions (the agents' questions waiting are withdrawn there).
}
