import { join } from 'node:path';
import * as vscode from 'vscode';
import { runPaths } from '../../engine/index';
import { UserFacingError } from '../session';
import { artifactDocumentUri } from '../storedArtifacts';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { delegationOf } from './pick';

/** Open Artifact: the newest result of the attempt — its file when it is here, else its content from the store. */
export const openArtifact = folderCommand(async (ctx, node: CommandNode) => {
  const d = await delegationOf(ctx, node);
  const record = [...(ctx.session.runState?.ingestions(d.runId) ?? [])].reverse().find((r) => r.delegationId === d.id);
  if (!record) return openPath(ctx, d.artifactPath, 'artifact');
  await vscode.window.showTextDocument(artifactDocumentUri(ctx.session.workspace, record), { preview: true });
});

/** Open Log: the attempt's worker log. */
export const openLog = folderCommand(async (ctx, node: CommandNode) => {
  const d = await delegationOf(ctx, node);
  await openPath(ctx, runPaths(ctx.session.workspace, d.runId).log(d.id), 'log');
});

async function openPath(ctx: CommandContext, path: string | undefined, what: string): Promise<void> {
  if (!path) throw new UserFacingError(`There is no ${what} for this yet.`);
  const absolute = path.startsWith('/') || /^[A-Za-z]:/.test(path) ? path : join(ctx.session.workspace, path);
  await vscode.window.showTextDocument(vscode.Uri.file(absolute), { preview: true });
}
