import * as vscode from 'vscode';
import { UserFacingError } from '../session';
import { folderCommand, type CommandNode } from './context';
import { continueIfReleased } from './drive';

/** Check Again, on an isolation gate: it closes by itself when the tree is clean now, and the run goes on. */
export const recheckIsolation = folderCommand(async (ctx, node: CommandNode) => {
  const e = await ctx.session.engine();
  const gateId =
    node?.kind === 'gate'
      ? node.gateId
      : ((await e.listGates({ status: 'open' })).find((g) => g.kind === 'isolation')?.id ??
        (() => {
          throw new UserFacingError('No isolation gate is open.');
        })());
  const [checked] = await e.recheckIsolation({ gateId });
  await ctx.session.runState?.refreshNow();
  if (!checked) return;
  if (!checked.resolved) {
    void vscode.window.showWarningMessage(`${checked.gate.id} still waits: ${checked.reason}`);
    return;
  }
  void vscode.window.showInformationMessage(`${checked.gate.id} closed: ${checked.reason}.`);
  await continueIfReleased(ctx, checked.gate.runId);
});
