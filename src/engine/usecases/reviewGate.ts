import type { EngineContext } from './context';
import type { AttemptWorktree } from '../domain/isolation';
import { reviewReason } from '../domain/gateReasons';
import { openGate } from '../operations/gates/openGate';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { transitionDelegation } from '../operations/delegations/transitionDelegation';
import { getDelegation } from '../queries/delegations';
import { readRunSettings } from '../queries/runs';
import { commitAttemptWork } from './integrationSteps';

/** Whether a passed attempt goes on to its integration (or completion), or waits at its review gate. */
export type ReviewHold = { kind: 'go-on' } | { kind: 'held'; gateId: string } | { kind: 'decided-meanwhile' };

/**
 * Under `review: required` (a frozen run setting) a passed attempt whose verify commands passed waits for a person
 * before its work reaches the target branch or its task completes (docs/extension.md, "Review required"). Its
 * worktree's work is committed first, so the review is of one commit — the one an approval integrates and the one a
 * follow-up attempt starts from when changes are requested (claimAttempt, `carriedHeldWork`). The attempt is BLOCKED
 * at a `review` gate, as at an integration gate; approving sets its task `verifying` again and this finds the
 * approval: it goes on.
 */
export async function holdForReview(
  ctx: EngineContext,
  runId: string,
  delegationId: string,
  worktree: AttemptWorktree | undefined,
): Promise<ReviewHold> {
  const { settings, gates } = await ctx.store.read(async (r) => ({
    settings: await readRunSettings(r, runId),
    gates: await r.all<{ id: string; status: string }>(
      `SELECT id, status FROM gates WHERE run_id = ? AND delegation_id = ? AND kind = 'review'`,
      [runId, delegationId],
    ),
  }));
  if (settings.review !== 'required') return { kind: 'go-on' };
  if (gates.some((g) => g.status === 'approved')) return { kind: 'go-on' };
  const open = gates.find((g) => g.status === 'open');
  if (open) return { kind: 'held', gateId: open.id };
  // Committed before the gate opens: what the person reviews does not change under them (a worker left behind could
  // still write to its worktree), and a crash between the two finds the commit and opens the gate.
  const source = worktree ? await commitAttemptWork(ctx, runId, worktree) : undefined;
  return ctx.store.transact(async (tx): Promise<ReviewHold> => {
    const now = ctx.clock.now();
    const delegation = await getDelegation(tx, runId, delegationId);
    const task = delegation
      ? await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
          runId,
          delegation.taskId,
        ])
      : undefined;
    // Stopped, or another coordinator decided it: no gate for an attempt that is over.
    if (!delegation || task?.status !== 'verifying' || !['RUNNING', 'BLOCKED'].includes(delegation.status))
      return { kind: 'decided-meanwhile' };
    if (delegation.status === 'RUNNING')
      await transitionDelegation(tx, delegation, 'BLOCKED', { reason: 'passed; waits for review' }, now);
    const gate = await openGate(
      tx,
      {
        runId,
        kind: 'review',
        taskId: delegation.taskId,
        delegationId,
        reason: reviewReason(delegation.taskId, delegationId, source?.changedFiles, worktree?.path),
        details: {
          ...(source
            ? { sourceHead: source.sourceHead, baseCommit: source.baseCommit, files: source.changedFiles }
            : {}),
          ...(worktree ? { worktree: worktree.path, branch: worktree.branch } : {}),
        },
      },
      now,
    );
    await refreshRunStatus(tx, runId, now);
    return { kind: 'held', gateId: gate.id };
  });
}
