import * as vscode from 'vscode';
import { UserFacingError } from '../session';
import type { RunsNode } from '../views';
import { folderCommand } from './context';
import { runOfPlan } from './drive';
import { validPlan } from './pick';

/**
 * Run Task: drives the task's run dispatching only that task — from the Runs view, or from the
 * task's CodeLens (the plan's run as Start Run finds it).
 */
export const runTask = folderCommand(async (ctx, arg?: RunsNode | { planUri: string; taskId: string }) => {
  ctx.session.requireTrust('run a task');
  let runId: string;
  let taskId: string;
  if (arg && 'planUri' in arg) {
    const opened = await runOfPlan(ctx, await validPlan(ctx, vscode.Uri.parse(arg.planUri)));
    if (!opened) return;
    runId = opened.run.id;
    taskId = arg.taskId;
  } else if (arg?.kind === 'task') {
    runId = arg.runId;
    taskId = arg.taskId;
  } else throw new UserFacingError('Choose a task in the Runs view or in its plan.');
  const driving = await ctx.session.drive(runId, { tasks: [taskId], join: true });
  if (driving === 'joined')
    void vscode.window.showInformationMessage(
      `Run ${runId} is driven by another machine; this window joined it for ${taskId}, which the first machine with a free slot runs.`,
    );
  else if (!driving)
    void vscode.window.showInformationMessage(
      `Run ${runId} is driven by another window or process; it dispatches ${taskId} when it is ready.`,
    );
});
