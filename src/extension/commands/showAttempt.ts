import { folderCommand, type CommandNode } from './context';
import { attemptOf } from './pick';

/** Show Changes: VS Code's multi-file diff of what an attempt changed. */
export const showChanges = folderCommand(async (ctx, node: CommandNode) => {
  const { runId, delegationId } = await attemptOf(ctx, node, 'Show Changes');
  await ctx.attemptViews.showChanges(runId, delegationId);
});

/** Show Output: a terminal that follows an attempt's log live. */
export const showOutput = folderCommand(async (ctx, node: CommandNode) => {
  const { runId, delegationId } = await attemptOf(ctx, node, 'Show Output');
  await ctx.attemptViews.showOutput(runId, delegationId);
});
