/**
 * The Toolbox views (Workspaces, Peer, Proximo, Worktrees) and the status bars, and what redraws
 * them: the refresh manager's snapshots, the terminals' agent states, the agents' and the egress
 * policy's questions, timeline entries and connections (coalesced per burst), the extensions on
 * this host and the window's trust.
 */
import * as vscode from 'vscode';
import { CONTEXT_KEYS } from '../../contract/manifest';
import { TRUST_ENABLED_SETTING } from '../../plan/hostTools';
import { coalesce } from '../coalesce';
import { WORKTREE_BASE_SCHEME } from '../worktrees/compareAgentWorktree';
import { windowFolders } from '../folders';
import { plainText } from '../plainText';
import type { ToolboxServices } from '../services';
import { StateClock } from '../agents/stateClock';
import { NodeTreeProvider } from './nodeTreeProvider';
import { peerNodes, proximoNodes, workspacesNodes } from './treeNodes';
import { WorktreesProvider } from '../worktrees/worktreesProvider';
import { worktreeBaseProvider } from '../worktrees/worktreeBaseProvider';

export function registerViews(context: vscode.ExtensionContext, s: ToolboxServices): void {
  const { backend, shells, refresh, inbox, egressInbox, timeline, home, settings, log } = s;
  // The window's trust and the extensions it runs, for the Extensions on this host row (docs/decisions/0060):
  // read again when an extension comes or goes, trust is granted or Workspace Trust is turned on or off.
  let hostTools = settings.hostTools();
  const views: Array<[string, NodeTreeProvider]> = [
    [
      'toolbox.workspaces',
      new NodeTreeProvider((state) =>
        workspacesNodes(state, windowFolders(), home, shells.agentTerminals(), Date.now(), {
          approvals: inbox.pending(),
          timeline,
          egressLog: (container) => backend.egressLog(container),
          hostTools,
        }),
      ),
    ],
    ['toolbox.peer', new NodeTreeProvider((state) => peerNodes(state, home))],
    ['toolbox.proximo', new NodeTreeProvider((state) => proximoNodes(state, windowFolders()))],
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
    s.agentBar.update(shells.agentTerminals());
    clock.sync();
  };
  // A question arrived or left: the status bar count and the Workspaces view's section at once.
  const approvalsChanged = () => {
    s.approvalBar.update(inbox.pending());
    workspacesView.update(refresh.state);
  };
  // Timeline entries come as fast as an agent works: the rows and open timelines are redrawn once per burst.
  const timelineChanged = coalesce(() => {
    workspacesView.update(refresh.state);
    s.timelineDocs.refreshAll();
  }, 250);
  context.subscriptions.push(inbox.onDidChange(approvalsChanged), timeline.onDidChange(timelineChanged), timelineChanged);
  // Connection questions (issue 30): the status bar count at once; the tree's asking count comes with the next snapshot.
  context.subscriptions.push(egressInbox.onDidChange(() => s.egressBar.update(egressInbox.pending())));
  // Connections come as fast as a container makes them: the latest rows and open logs are redrawn
  // at most four times a second, the snapshot (the counters on the rows) at most once a second.
  const egressRedraw = coalesce(() => {
    workspacesView.update(refresh.state);
    s.egressDocs.refreshAll();
  }, 250);
  const egressSnapshot = coalesce(() => refresh.refreshSoon(0), 1000);
  const egressChanged = () => {
    egressRedraw();
    egressSnapshot();
  };
  // Listening does not load the backend (ui/lazyBackend.ts): the listener is handed over when it loads.
  context.subscriptions.push(backend.onDidChangeEgress(egressChanged), egressRedraw, egressSnapshot);
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
      s.statusBar.update(state.findings);
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
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      for (const view of treeViews) view.description = undefined;
      // VS Code then starts the extensions that needed trust, which onDidChange reports too.
      hostToolsChanged();
      refresh.refreshSoon();
    }),
  );
}
