/**
 * The Worktrees view: every toolbox worktree of the window's repositories. Live without a polling
 * loop: it reloads when the refresh manager reports Docker's events (container state) and when
 * git's own files change (branches, worktrees, index, the worktree folders), debounced.
 */
import * as vscode from 'vscode';
import { COMMAND_LABELS } from '../../contract/manifest';
import { plainText } from '../plainText';
import type { AgentWorktreeRefusal, AgentWorktreeSummary, WorktreeService } from '../../backend/api';
import type { ToolboxState } from '../views/refreshManager';
import { refusedRow, worktreeRow, type WorktreesViewRow } from './worktreeItems';

const RELOAD_DEBOUNCE_MS = 300;

export class WorktreesProvider implements vscode.TreeDataProvider<WorktreesViewRow>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<WorktreesViewRow | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private rows: WorktreesViewRow[] = [];
  private worktrees: AgentWorktreeSummary[] = [];
  private refusals: AgentWorktreeRefusal[] = [];
  private sessionsByContainer = new Map<string, number>();
  private removing: ReadonlySet<string> = new Set();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private watchers: vscode.Disposable[] = [];
  private watchedRoots = '';
  private visible = false;

  constructor(
    private readonly backend: Pick<WorktreeService, 'agentWorktrees' | 'agentWorktreeRefusals'>,
    private readonly folders: () => string[],
    private readonly log: vscode.LogOutputChannel,
  ) {}

  setVisible(visible: boolean): void {
    this.visible = visible;
    if (visible) this.reloadSoon(0);
  }

  /** Docker's events arrive through the refresh manager's state. */
  update(state: ToolboxState): void {
    const counts = new Map<string, number>();
    for (const s of state.snapshot?.sessions ?? []) if (s.container) counts.set(s.container, (counts.get(s.container) ?? 0) + 1);
    this.sessionsByContainer = counts;
    if (state.removing !== this.removing) {
      this.removing = state.removing ?? new Set();
      this.render();
    }
    this.reloadSoon();
  }

  reloadSoon(delay = RELOAD_DEBOUNCE_MS): void {
    if (!this.visible) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), delay);
  }

  private async reload(): Promise<void> {
    this.timer = undefined;
    let refusals: AgentWorktreeRefusal[] = [];
    try {
      [this.worktrees, refusals] = await Promise.all([
        this.backend.agentWorktrees(this.folders()),
        this.backend.agentWorktreeRefusals(this.folders()),
      ]);
    } catch (err) {
      this.log.warn(`Worktrees view: ${(err as Error).message}`);
      this.worktrees = [];
    }
    this.refusals = refusals;
    this.render();
    this.watch([...new Set(this.worktrees.map((w) => w.root).concat(this.folders()))]);
    void vscode.commands.executeCommand('setContext', 'toolbox.worktreesLoaded', true);
  }

  private render(): void {
    // A repository host git refuses comes first: its worktrees are not listed until it is fixed.
    this.rows = [
      ...this.refusals.map(refusedRow),
      ...this.worktrees.map((w) =>
        worktreeRow(w, w.container ? (this.sessionsByContainer.get(w.container.name) ?? 0) : 0, this.removing.has(w.path)),
      ),
    ];
    this.emitter.fire(undefined);
  }

  /** git's own files: the repository's .git (refs, worktrees, index) and the worktree folders. */
  private watch(roots: string[]): void {
    const key = roots.sort().join('\n');
    if (key === this.watchedRoots) return;
    this.watchedRoots = key;
    for (const w of this.watchers) w.dispose();
    this.watchers = roots.flatMap((root) =>
      ['.git/{HEAD,index,config,packed-refs}', '.git/{refs,worktrees,logs}/**', '.worktrees/**'].map((glob) => {
        const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(root), glob));
        const kick = () => this.reloadSoon();
        watcher.onDidChange(kick);
        watcher.onDidCreate(kick);
        watcher.onDidDelete(kick);
        return watcher;
      }),
    );
  }

  getChildren(row?: WorktreesViewRow): WorktreesViewRow[] {
    return row ? [] : this.rows;
  }

  getTreeItem(row: WorktreesViewRow): vscode.TreeItem {
    const item = new vscode.TreeItem(plainText(row.label, 'label'), vscode.TreeItemCollapsibleState.None);
    item.id = row.id;
    item.description = plainText(row.description, 'label');
    item.tooltip = plainText(row.tooltip, 'tooltip');
    item.contextValue = row.contextValue;
    item.resourceUri = undefined;
    item.iconPath = new vscode.ThemeIcon(row.icon.id, row.icon.color ? new vscode.ThemeColor(row.icon.color) : undefined);
    item.command =
      'refusal' in row
        ? row.refusal.file !== undefined
          ? { command: COMMAND_LABELS.openRefusedGitFile.command, title: 'Open File', arguments: [row] }
          : undefined
        : { command: COMMAND_LABELS.compareAgentWorktree.command, title: 'Compare with Base', arguments: [row] };
    return item;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers) w.dispose();
    this.emitter.dispose();
  }
}
