import * as vscode from 'vscode';
import { counted } from '../../engine/index';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { continueIfReleased } from './drive';
import { pickRun } from './pick';

/** Replan Run…: the run mapped onto a plan the person picks (its completed tasks carry over); the new run goes on. */
export const replanRun = folderCommand(async (ctx, node: CommandNode) => {
  const { session } = ctx;
  const runId = await pickRun(ctx, node, 'Replan Run');
  const picked = await vscode.window.showOpenDialog({
    title: `Replan ${runId}: the new plan`,
    defaultUri: session.folder.uri,
    filters: { Markdown: ['md'] },
    canSelectMany: false,
  });
  if (!picked?.[0]) return;
  await replanOnto(ctx, runId, picked[0].fsPath);
});

/** The run replanned onto `planPath` (its completed tasks carry over); the new run goes on, from here if free. */
export async function replanOnto(ctx: CommandContext, runId: string, planPath: string): Promise<void> {
  const { session } = ctx;
  const outcome = await (await session.engine()).replan({ runId, planPath });
  await session.runState?.refreshNow();
  const replanned = `Run ${runId} is superseded by ${outcome.run.id}; ${counted(outcome.carried.length, 'completed task')} carried over`;
  await continueIfReleased(ctx, outcome.run.id);
  if (session.drivenRuns.includes(outcome.run.id)) {
    void vscode.window.showInformationMessage(`${replanned}; this window drives it.`);
    return;
  }
  void vscode.window.showInformationMessage(`${replanned}.`, 'Resume').then((pick) => {
    if (pick)
      void vscode.commands.executeCommand('baton.resumeRun', {
        kind: 'run',
        id: `run:${outcome.run.id}`,
        runId: outcome.run.id,
      });
  });
}
