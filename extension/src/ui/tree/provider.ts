/** One TreeDataProvider for every Toolbox view: it copies pure TreeNodes onto TreeItems. */
import * as vscode from 'vscode';
import type { ToolboxState } from '../refresh';
import type { TreeNode } from './render';

export class NodeTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private roots: TreeNode[] = [];

  constructor(private readonly render: (state: ToolboxState) => TreeNode[]) {}

  update(state: ToolboxState): void {
    this.roots = this.render(state);
    this.emitter.fire(undefined);
  }

  getChildren(node?: TreeNode): TreeNode[] {
    return node ? (node.children ?? []) : this.roots;
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const item = new vscode.TreeItem(
      node.label,
      !node.children?.length
        ? vscode.TreeItemCollapsibleState.None
        : node.collapsed
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.Expanded,
    );
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
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
