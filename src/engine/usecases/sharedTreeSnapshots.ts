import { BatonError } from '../domain/errors';
import { snapshotWorkingTree } from '../effects/git/treeSnapshot';
import { recordTreeAfter, recordTreeBefore } from '../operations/treeSnapshots/recordTreeSnapshot';
import { readTreeSnapshot } from '../queries/treeSnapshots';
import type { EngineContext } from './context';

/**
 * A shared-tree attempt has no branch of its own to compare, so its coordinator records the
 * working tree right before the worker starts and right after it ends (docs/workers.md, "What
 * an attempt changed"). A snapshot that fails is logged and the attempt goes on: seeing the
 * changes afterwards is worth less than doing the work.
 */

/** Before the worker starts. `repoRoot`: the workspace's repository (sharedTreeRepository), undefined outside git. */
export async function recordSharedTreeBefore(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'workspace' | 'log'>,
  attempt: { runId: string; delegationId: string },
  repoRoot: string | undefined,
): Promise<void> {
  if (!repoRoot) return;
  try {
    const commit = await snapshotWorkingTree(
      repoRoot,
      ctx.workspace,
      `Baton: the working tree before ${attempt.delegationId}`,
    );
    await ctx.store.transact((tx) => recordTreeBefore(tx, { ...attempt, repoRoot, commit }, ctx.clock.now()));
  } catch (err) {
    if (BatonError.is(err, 'coordinator.superseded')) throw err;
    ctx.log(`${attempt.delegationId}: the working tree before it was not recorded: ${(err as Error).message}`);
  }
}

/** After the worker ended (by itself, or stopped): only for an attempt whose `before` was recorded. */
export async function recordSharedTreeAfter(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'workspace' | 'log'>,
  attempt: { runId: string; delegationId: string },
): Promise<void> {
  try {
    const snapshot = await ctx.store.read((r) => readTreeSnapshot(r, attempt.runId, attempt.delegationId));
    if (!snapshot || snapshot.after) return;
    const commit = await snapshotWorkingTree(
      snapshot.repoRoot,
      ctx.workspace,
      `Baton: the working tree after ${attempt.delegationId}`,
    );
    await ctx.store.transact((tx) => recordTreeAfter(tx, { ...attempt, commit }, ctx.clock.now()));
  } catch (err) {
    // A coordinator that lost the run leaves this to nobody: the view then compares with the tree as it is.
    ctx.log(`${attempt.delegationId}: the working tree after it was not recorded: ${(err as Error).message}`);
  }
}
