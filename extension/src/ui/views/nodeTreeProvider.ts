/** One TreeDataProvider for every Toolbox view: it copies pure TreeNodes onto TreeItems. */
import * as vscode from 'vscode';
import { plainText } from '../plainText';
import type { ToolboxState } from './refreshManager';
import { treeKey, type TreeNode } from './treeNodes';

export class NodeTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private roots: TreeNode[] = [];
  private shown: string | undefined;

  constructor(private readonly render: (state: ToolboxState) => TreeNode[]) {}

  /** Renders `state`; redraws the view only when a node changed (treeNodes.ts treeKey says why). */
  update(state: ToolboxState): void {
    const roots = this.render(state);
    const key = treeKey(roots);
    if (key !== undefined && key === this.shown) return;
    this.roots = roots;
    this.shown = key;
    this.emitter.fire(undefined);
  }

  getChildren(node?: TreeNode): TreeNode[] {
    return node ? (node.children ?? []) : this.roots;
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    // The rows are built plain (ui/views/treeItems/); cleaned again here, where every row passes.
    const item = new vscode.TreeItem(
      plainText(node.label, 'label'),
      !node.children?.length
        ? vscode.TreeItemCollapsibleState.None
        : node.collapsed
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.Expanded,
    );
    item.id = node.id;
    item.description = node.description === undefined ? undefined : plainText(node.description, 'label');
    item.tooltip = node.tooltip === undefined ? undefined : plainText(node.tooltip, 'tooltip');
    item.contextValue = node.contextValue;
    if (node.icon) {
      item.iconPath = new vscode.ThemeIcon(node.icon.id, node.icon.color ? new vscode.ThemeColor(node.icon.color) : undefined);
    }
    if (node.link) item.command = { command: 'vscode.open', title: node.label, arguments: [vscode.Uri.parse(node.link, true)] };
    else if (node.command) item.command = { command: node.command, title: node.label, arguments: node.commandArgs ?? [node] };
    return item;
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
