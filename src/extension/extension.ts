import * as vscode from 'vscode';

/**
 * For now the extension activates, shows the Baton view container and logs; the views,
 * commands and coordinator arrive with the extension issue (docs/extension.md).
 */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Baton', { log: true });
  context.subscriptions.push(log);
  const runs = vscode.window.createTreeView('baton.runs', { treeDataProvider: new EmptyRunsProvider() });
  context.subscriptions.push(runs);
  context.subscriptions.push(vscode.commands.registerCommand('baton.showLog', () => log.show()));
  log.info(`Baton activated (workspace trusted: ${vscode.workspace.isTrusted}).`);
}

export function deactivate(): void {
  // Everything is owned by context.subscriptions.
}

/** An empty tree lets VS Code show the view's welcome content. */
class EmptyRunsProvider implements vscode.TreeDataProvider<never> {
  getTreeItem(element: never): vscode.TreeItem {
    return element;
  }
  getChildren(): never[] {
    return [];
  }
}
