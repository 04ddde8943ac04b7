/**
 * Every collaborator of the window, built in one place (extension.ts calls it once): the agents'
 * and the egress policy's questions, the lazily loaded backend, the shell launcher, the refresh
 * manager, the status bars and the documents. Each goes into context.subscriptions here.
 */
import type * as vscode from 'vscode';
import type { LoadedBackend } from '../backend/api';
import type { CreateEngineBackendOptions } from '../backend/engineBackend';
import { readHostFacts } from '../backend/hostFacts';
import { vscodeSettings, type BackendSettings } from '../backend/settings';
import type { ObjectNames } from '../contract/types';
import { AgentNudge } from './agents/agentNudge';
import { AgentTimeline } from './agents/agentTimeline';
import { ApprovalInbox } from './approvals/approvalInbox';
import { ApprovalPrompter } from './approvals/approvalPrompter';
import type { CommandServices } from './commands/toolboxCommand';
import { ConfigDiagnostics } from './config/configDiagnostics';
import { askCredentialConsent, credentialGrantState } from './approvals/credentialConsent';
import { DoctorDocuments } from './doctor/doctorDocuments';
import { editorActions } from './editorActions';
import { EgressQuestions } from './egress/egressQuestions';
import { EgressLogDocuments } from './egress/egressLogDocuments';
import { EgressInbox } from './egress/egressInbox';
import { windowFolders } from './folders';
import { lazyBackend } from './lazyBackend';
import { LoginForwardStatus } from './loginForwards/loginForwardStatus';
import { PendingConfigPrompt } from './config/pendingConfigPrompt';
import { ProposalReview } from './approvals/proposalReview';
import { RefreshManager } from './views/refreshManager';
import { ResolvedConfigDocuments } from './config/resolvedConfigDocuments';
import { SessionStore } from './shells/sessionStore';
import { SessionTimelineDocuments } from './agents/sessionTimelineDocuments';
import { ShellLauncher } from './shells/shellLauncher';
import { AgentStatusBar, ApprovalStatusBar, DriftStatusBar, EgressStatusBar } from './views/statusBars';
import { UnknownKeyNotice } from './config/unknownKeyNotice';

/** What the commands get, and what the views, the reattach and the peer-default check need besides. */
export interface ToolboxServices extends CommandServices {
  backend: LoadedBackend;
  home: string;
  settings: BackendSettings;
  sessions: SessionStore;
  /** Agents' questions waiting for the user (issue 28). */
  inbox: ApprovalInbox;
  /** Connection questions of the egress policy waiting for the user (issue 30). */
  egressInbox: EgressInbox;
  agentBar: AgentStatusBar;
  approvalBar: ApprovalStatusBar;
  egressBar: EgressStatusBar;
}

export interface BackendLoading {
  names: ObjectNames;
  buildArgs: Record<string, string>;
  imageRepo: string;
  /** Loads the backend bundle and creates the backend (extension.ts `loadEngineBackend`). */
  createBackend(options: CreateEngineBackendOptions): LoadedBackend;
}

export function createServices(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, loading: BackendLoading): ToolboxServices {
  const { names, buildArgs, imageRepo } = loading;
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
  // Loaded on first use (see lazyBackend.ts), from its own bundle: esbuild leaves a require
  // of a computed path alone, so activation never parses zod, yaml or dockerode.
  const backend = lazyBackend(names, () =>
    loading.createBackend({
      names,
      host: () => readHostFacts(process.env),
      extensionPath: context.extensionPath,
      buildArgs,
      imageRepo,
      log,
      editor: editorActions({ proposals, approvals, timeline, inbox }),
      onLoginForward: (event) => loginForwards.handle(event),
      credentialConsent: { state: context.globalState, prompt: askCredentialConsent },
      // Approvals of what a project config asks beyond the user's own: never in the folder (docs/decisions/0041).
      projectConsent: context.globalState,
      // A connection in `ask` mode waits for Allow Once, Allow for This Folder or Deny here; never an allow without the click.
      egressPrompter: egress,
    }),
  );
  const sessions = new SessionStore(context.workspaceState);
  const pendingConfig = new PendingConfigPrompt(backend, log);
  const home = readHostFacts(process.env).home;
  const settings = vscodeSettings();
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
  // .toolbox.yaml problems in the Problems panel; the backend loads only once such a file is open.
  context.subscriptions.push(
    resolvedConfig,
    new ConfigDiagnostics(backend, log, () => {
      // A saved .toolbox.yaml can change the folder's peer-messaging state and the resolved view.
      resolvedConfig.refreshAll();
      refresh.refreshSoon();
    }),
  );
  return {
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
    home,
    settings,
    sessions,
    inbox,
    egressInbox,
    agentBar,
    approvalBar,
    egressBar,
  };
}
