import * as vscode from 'vscode';
import { processesEnded, stopNotice, type StopNotice } from '../model/notices';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { delegationOf, pickRun } from './pick';

/** Stop Run…: graceful or immediate, as the argument says (a CodeLens, the dashboard) or the person picks. */
export const stopRun = folderCommand((ctx, node: CommandNode, mode?: unknown) =>
  stop(ctx, node, mode === 'graceful' || mode === 'immediate' ? mode : undefined),
);

/** Stop Run Immediately: every worker process of the run ended now, and proven gone. */
export const stopRunImmediately = folderCommand((ctx, node: CommandNode) => stop(ctx, node, 'immediate'));

/** Stop This Attempt: one attempt's processes ended now; the run goes on. */
export const stopDelegation = folderCommand(async (ctx, node: CommandNode) => {
  const delegation = await delegationOf(ctx, node);
  const { request } = await (
    await ctx.session.engine()
  ).requestStop({ runId: delegation.runId, delegationId: delegation.id, mode: 'immediate', by: 'VS Code' });
  const gone = processesEnded(request.report);
  const message = `Stopped ${delegation.id}${gone ? `: ${gone}` : ''}.`;
  if (request.report.some((r) => !r.confirmed)) void vscode.window.showWarningMessage(message);
  else void vscode.window.showInformationMessage(message);
  await ctx.session.runState?.refreshNow();
});

async function stop(ctx: CommandContext, node: CommandNode, mode?: 'graceful' | 'immediate'): Promise<void> {
  const runId = await pickRun(ctx, node, 'Stop Run', 'stop');
  const chosen =
    mode ??
    (
      await vscode.window.showQuickPick(
        [
          { label: 'Graceful', description: 'finish what runs, start nothing new', mode: 'graceful' as const },
          { label: 'Immediate', description: 'end every worker process now', mode: 'immediate' as const },
        ],
        { title: `Stop ${runId}` },
      )
    )?.mode;
  if (!chosen) return;
  const notice = await stopRunAs(ctx, runId, chosen);
  if (notice.level === 'warning') void vscode.window.showWarningMessage(notice.message);
  else void vscode.window.showInformationMessage(notice.message);
}

/**
 * The one way the editor stops a run, whatever asked (Stop Run…, the dashboard, a chat tool): the
 * engine's stop request, what it did logged and returned as the notice to show.
 */
export async function stopRunAs(
  ctx: CommandContext,
  runId: string,
  mode: 'graceful' | 'immediate',
): Promise<StopNotice> {
  const outcome = await (await ctx.session.engine()).requestStop({ runId, mode, by: 'VS Code' });
  const notice = stopNotice(runId, outcome);
  ctx.log.info(notice.message);
  await ctx.session.runState?.refreshNow();
  return notice;
}
