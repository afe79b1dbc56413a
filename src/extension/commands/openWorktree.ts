import * as vscode from 'vscode';
import type { AttemptWorktreePlace } from '../../engine/index';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { attemptOf } from './pick';

/**
 * Open Worktree in New Window: the folder an isolated attempt worked in (docs/extension.md, "An attempt's
 * worktree"), in a window of its own — its changes in Source Control, its files to edit, its branch checked out.
 */
export const openWorktree = folderCommand(async (ctx, node: CommandNode) => {
  const place = await worktreeOf(ctx, node, 'Open Worktree in New Window');
  await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(place.folder), { forceNewWindow: true });
});

/** Open Worktree in Terminal: an integrated terminal whose working folder is the attempt's worktree. */
export const openWorktreeInTerminal = folderCommand(async (ctx, node: CommandNode) => {
  const place = await worktreeOf(ctx, node, 'Open Worktree in Terminal');
  const terminal = vscode.window.createTerminal({
    name: `Baton: ${place.delegationId} worktree`,
    cwd: place.folder,
    iconPath: new vscode.ThemeIcon('worktree'),
  });
  terminal.show();
});

/**
 * The worktree of the attempt a node stands for (a task's latest attempt, an attempt, a worker's, a gate's), or one
 * picked; an attempt that ran in the shared working tree, or whose worktree is gone, is refused with why.
 */
export async function worktreeOf(ctx: CommandContext, node: CommandNode, what: string): Promise<AttemptWorktreePlace> {
  const { runId, delegationId } =
    node?.kind === 'gate' ? await gateAttempt(ctx, node.runId, node.gateId) : await attemptOf(ctx, node, what);
  const place = await (await ctx.session.engine()).attemptWorktree(runId, delegationId);
  if (!place)
    throw new UserFacingError(`${delegationId} ran in the shared working tree: it has no worktree of its own.`);
  if (!place.onDisk)
    throw new UserFacingError(
      `The worktree of ${delegationId} (${vscode.workspace.asRelativePath(place.path)}) was removed${removedBecause(place)}; ${place.status === 'integrated' ? `its work is on the target branch now` : `its branch ${place.branch} is gone with it`}.`,
    );
  return place;
}

/** Why a worktree is gone, as docs/isolation.md ("Cleanup and disk") says it goes. */
function removedBecause(place: AttemptWorktreePlace): string {
  switch (place.status) {
    case 'integrated':
      return ' once its work was integrated';
    case 'pushed':
      return ' once its branch was pushed';
    case 'discarded':
      return ' when its attempt was discarded (or by baton cleanup)';
    default:
      return ' (by baton cleanup, or by hand)';
  }
}

async function gateAttempt(
  ctx: CommandContext,
  runId: string,
  gateId: string,
): Promise<{ runId: string; delegationId: string }> {
  const gate = (await (await ctx.session.engine()).listGates({ runId })).find((g) => g.id === gateId);
  if (!gate?.delegationId) throw new UserFacingError(`${gateId} is not about an attempt: it has no worktree.`);
  return { runId, delegationId: gate.delegationId };
}
