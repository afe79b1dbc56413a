import * as vscode from 'vscode';
import { folderCommand, type CommandNode } from './context';
import { pickRun } from './pick';

/**
 * Resume Run: its stops lifted, the run is driven from this window — or, driven by another machine on a team store,
 * joined (unless another window or process drives it here).
 */
export const resumeRun = folderCommand(async (ctx, node: CommandNode) => {
  const runId = await pickRun(ctx, node, 'Resume Run', 'resume');
  const e = await ctx.session.engine();
  // What kept a task out of its worktree may be fixed by now: its isolation gate closes by itself.
  for (const checked of await e.recheckIsolation({ runId }))
    ctx.log.info(`${checked.gate.id}: ${checked.resolved ? 'closed' : 'still waits'}: ${checked.reason}`);
  await e.liftStops(runId);
  const driving = await ctx.session.drive(runId, { join: true });
  if (driving === 'joined')
    void vscode.window.showInformationMessage(
      `Run ${runId} is driven by another machine; this window joins it and runs its tasks too.`,
    );
  else if (!driving) void vscode.window.showInformationMessage(`Run ${runId} is driven by another window or process.`);
});
