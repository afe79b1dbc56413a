import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import type { Delegation, TaskStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { delegationId } from '../../domain/runSettings';
import { readinessOf, readTaskClaimFacts, type TaskClaimFacts } from '../../queries/tasks';

export interface EnqueueDelegationInput {
  runId: string;
  taskId: string;
  agent?: string;
}

/**
 * Puts the next attempt of a ready task on the queue as a PENDING delegation. Refuses
 * (inside the transaction, so across processes too) while another attempt of the task is
 * PENDING or RUNNING: two attempts of one task never run at once.
 */
export async function enqueueDelegation(
  tx: StoreTx,
  input: EnqueueDelegationInput,
  now: number,
  /** The task's row and attempts as read in this transaction (readTaskClaimFacts); read here otherwise. */
  known?: TaskClaimFacts,
): Promise<Delegation> {
  const facts = known ?? (await readTaskClaimFacts(tx, input.runId, input.taskId));
  if (!facts) throw new BatonError('task.unknown', `Task ${input.taskId} is not in run ${input.runId}.`);
  const { task, attempts } = facts;
  const live = attempts.find((a) => a.status === 'PENDING' || a.status === 'RUNNING' || a.status === 'BLOCKED');
  if (live) {
    throw new BatonError(
      'task.already-claimed',
      `Task ${input.taskId} already has attempt ${live.id} (${live.status}${live.runtimeId ? `, runtime ${live.runtimeId}` : ''}).`,
    );
  }
  await refuseUnlessReady(tx, input.runId, input.taskId, task.status, task.statusReason);
  const agent = input.agent ?? task.agent;
  const attempt = Math.max(0, ...attempts.map((a) => a.attempt)) + 1;
  const id = delegationId(input.taskId, agent, attempt);
  await tx.run(
    `INSERT INTO delegations (run_id, id, task_id, agent, attempt, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?)`,
    [input.runId, id, input.taskId, agent, attempt, now, now],
  );
  await appendEvent(tx, input.runId, 'delegation:created', now, {
    delegationId: id,
    taskId: input.taskId,
    agent,
    attempt,
  });
  return {
    runId: input.runId,
    id,
    taskId: input.taskId,
    agent,
    attempt,
    status: 'PENDING',
    createdAt: now,
    updatedAt: now,
  };
}

async function refuseUnlessReady(
  tx: StoreTx,
  runId: string,
  taskId: string,
  status: TaskStatus,
  reason: string | null,
): Promise<void> {
  switch (status) {
    case 'ready':
      return;
    case 'gated': {
      const gate = await tx.get<{ id: string; kind: string }>(
        `SELECT id, kind FROM gates WHERE run_id = ? AND task_id = ? AND status = 'open' LIMIT 1`,
        [runId, taskId],
      );
      throw new BatonError(
        'task.gated',
        `Task ${taskId} waits at gate ${gate?.id ?? '?'} (${gate?.kind ?? 'gate'}); approve it first: baton approve ${gate?.id ?? '<gate>'}`,
      );
    }
    case 'pending': {
      if ((await readinessOf(tx, runId, taskId)) === 'ready') return;
      const unmet = await tx.all<{ id: string; status: string }>(
        `SELECT t.id, t.status FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.depends_on
         WHERE dep.run_id = ? AND dep.task_id = ? AND t.status <> 'completed'`,
        [runId, taskId],
      );
      throw new BatonError(
        'task.dependencies-unmet',
        `Task ${taskId} depends on ${unmet.map((d) => `${d.id} (${d.status})`).join(', ')}, not completed yet.`,
      );
    }
    default:
      throw new BatonError(
        `task.${status}`,
        `Task ${taskId} is ${status}${reason ? ` (${reason})` : ''}; it cannot start a new attempt.`,
      );
  }
}
