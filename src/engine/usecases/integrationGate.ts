import type { EngineContext } from './context';
import type { StoreTx } from '../store/port';
import { openGate } from '../operations/gates/openGate';
import { getDelegation } from '../queries/delegations';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { transitionDelegation } from '../operations/delegations/transitionDelegation';
import type { AttemptWorktree } from '../domain/isolation';

/**
 * Holds the attempt (BLOCKED, worktree kept) at a gate of one of the integration checks; `alongside` writes what
 * belongs to the same decision (an event naming the gate) in the same transaction.
 */
export async function holdAtGate(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  gate: {
    kind: 'target_moved' | 'undeclared_files' | 'integration_failed';
    why: string;
    reason: string;
    details: Record<string, unknown>;
  },
  alongside?: (tx: StoreTx, gateId: string, now: number) => Promise<void>,
): Promise<string> {
  return ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    const delegation = await getDelegation(tx, runId, worktree.delegationId);
    if (delegation?.status === 'RUNNING')
      await transitionDelegation(tx, delegation, 'BLOCKED', { reason: gate.why }, now);
    const opened = await openGate(
      tx,
      {
        runId,
        kind: gate.kind,
        taskId: worktree.taskId,
        delegationId: worktree.delegationId,
        reason: gate.reason,
        details: { ...gate.details, worktree: worktree.path, branch: worktree.branch },
      },
      now,
    );
    await alongside?.(tx, opened.id, now);
    await refreshRunStatus(tx, runId, now);
    return opened.id;
  });
}
