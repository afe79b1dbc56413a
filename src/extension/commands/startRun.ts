import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { folderCommand, type CommandNode } from './context';
import { driveAndTell, runOfPlan } from './drive';
import { validPlan } from './pick';

/** Start Run…: continues the plan's active run, or starts one (asking when the plan changed since that run started). */
export const startRun = folderCommand(async (ctx, uri?: vscode.Uri) => {
  ctx.session.requireTrust('start a run');
  const opened = await runOfPlan(ctx, await validPlan(ctx, uri));
  if (opened) await driveAndTell(ctx, opened.run, opened.verb);
});

/** Start New Run…: always a new run of the plan (the CLI's `start --new`), whatever its other runs are doing. */
export const startNewRun = folderCommand(async (ctx, arg?: vscode.Uri | CommandNode) => {
  ctx.session.requireTrust('start a run');
  let uri: vscode.Uri | undefined;
  if (arg instanceof vscode.Uri) uri = arg;
  else if (arg && 'runId' in arg) {
    const { planPath } = await (await ctx.session.engine()).getRun(arg.runId);
    uri = vscode.Uri.file(isAbsolute(planPath) ? planPath : join(ctx.session.workspace, planPath));
  }
  const plan = await validPlan(ctx, uri);
  const { run } = await (await ctx.session.engine()).runForPlan(plan.uri.fsPath, { fresh: true });
  await driveAndTell(ctx, run, 'started a new');
});
