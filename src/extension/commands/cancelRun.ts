import * as vscode from 'vscode';
import { counted } from '../../engine/index';
import { processesEnded } from '../model/notices';
import { folderCommand, type CommandNode } from './context';
import { pickRun } from './pick';

/**
 * Cancel Run…: ends a run for good, after the person confirms: its workers are ended (and
 * proven gone), its gates closed, its attempts and tasks cancelled (Engine.cancelRun).
 */
export const cancelRun = folderCommand(async (ctx, node: CommandNode) => {
  const runId = await pickRun(ctx, node, 'Cancel Run', 'cancel');
  const CANCEL = 'Cancel Run';
  const confirmed = await vscode.window.showWarningMessage(
    `Cancel run ${runId}? Its workers are ended, its open gates closed and its unfinished tasks cancelled. A cancelled run cannot be resumed; its plan can be started again.`,
    { modal: true },
    CANCEL,
  );
  if (confirmed !== CANCEL) return;
  const outcome = await (await ctx.session.engine()).cancelRun({ runId, by: 'VS Code' });
  await ctx.session.runState?.refreshNow();
  const report = outcome.stop?.report ?? [];
  const gone = processesEnded(report);
  const message = outcome.alreadyCancelled
    ? `Run ${runId} was already cancelled.`
    : `Cancelled run ${runId}: ${counted(outcome.attemptsCancelled.length, 'attempt')} ended${gone ? `, ${gone}` : ''}; ${counted(outcome.tasksCancelled, 'task')} cancelled, ${counted(outcome.gatesClosed, 'gate')} closed.`;
  if (report.some((entry) => !entry.confirmed)) void vscode.window.showWarningMessage(message);
  else void vscode.window.showInformationMessage(message);
});
