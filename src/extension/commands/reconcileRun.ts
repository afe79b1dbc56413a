import * as vscode from 'vscode';
import { folderCommand, type CommandNode } from './context';
import { pickRun } from './pick';

/** Reconcile Run: every task classified from the evidence, proven gaps repaired; the report goes to the log. */
export const reconcileRun = folderCommand(async (ctx, node: CommandNode) => {
  const report = await (await ctx.session.engine()).reconcile(await pickRun(ctx, node, 'Reconcile Run'));
  for (const entry of report.entries)
    ctx.log.info(
      `reconcile ${entry.taskId}${entry.delegationId ? ` ${entry.delegationId}` : ''}: ${entry.classification}${entry.repair ? ` → ${entry.repair}` : ''}`,
    );
  const repairs = report.entries.filter((x) => x.repair).length;
  void vscode.window.showInformationMessage(
    report.reportOnly
      ? `Run ${report.runId} is driven by ${report.coordinator}; nothing changed (see the Baton log).`
      : `Reconciled ${report.runId}: ${repairs} repair${repairs === 1 ? '' : 's'} (see the Baton log).`,
  );
  await ctx.session.runState?.refreshNow();
});
