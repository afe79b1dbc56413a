import { isFinishedRun } from '../../engine/index';
import { runsByPlace } from '../model/viewRows';
import { UserFacingError } from '../session';
import { folderCommand, type CommandNode } from './context';
import { pickRun } from './pick';

/**
 * Remove from View: finished runs leave the Runs view (hidden in this workspace's editor state;
 * the store keeps them).
 */
export const removeRun = folderCommand(async (ctx, node: CommandNode) => {
  const cache = ctx.session.runState;
  if (!cache) return;
  let ids: string[];
  if (node?.kind === 'history') ids = runsByPlace(cache, (id) => ctx.hidden.has(id)).history.map((r) => r.id);
  else {
    const runId = await pickRun(ctx, node, 'Remove from View');
    const run = cache.runs.find((r) => r.id === runId) ?? (await (await ctx.session.engine()).getRun(runId));
    if (!isFinishedRun(run.status))
      throw new UserFacingError(`Run ${runId} is ${run.status}; only a finished run can be removed from the view.`);
    ids = [runId];
  }
  await ctx.hidden.hide(ids);
  ctx.log.info(`Removed from the Runs view: ${ids.join(', ')} (Show Removed Runs brings them back).`);
});

/** Show Removed Runs: the runs removed from the view come back. */
export const showRemovedRuns = folderCommand(async (ctx) => {
  await ctx.hidden.showAll();
});
