import * as vscode from 'vscode';
import { folderCommand } from './context';

/**
 * Open Documentation: the README, rendered by VS Code's own Markdown preview. A file URI handed
 * to openExternal does nothing in a browser (code-server), and the preview works the same on the desktop.
 */
export const openDocs = folderCommand((ctx) =>
  vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.joinPath(ctx.extensionUri, 'README.md')),
);
