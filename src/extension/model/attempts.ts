import type { Delegation, RunOverview } from '../../engine/index';

/**
 * Facts about one attempt that Show Output and Show Changes need, mapped from a run's overview
 * (no vscode: unit-tested as plain data).
 */

/** The attempt a task's row stands for: its latest one that started (undefined before any did). */
export function latestStartedAttempt(view: RunOverview, taskId: string): Delegation | undefined {
  return view.delegations.filter((d) => d.taskId === taskId && d.startedAt !== undefined).at(-1);
}

/**
 * Whether an attempt's worker is done writing its log, and the line that says so: its worker's
 * lease ended (it exited, was stopped, or handed in its result), or the attempt is over or
 * waits at a gate. Undefined while the worker may still write.
 */
export function attemptEndLine(view: RunOverview, delegationId: string): string | undefined {
  const d = view.delegations.find((x) => x.id === delegationId);
  if (!d) return undefined;
  const runtime = view.runtimes.filter((r) => r.delegationId === delegationId).at(-1);
  const over = d.status !== 'RUNNING' && d.status !== 'PENDING';
  if (!over && runtime?.endedAt === undefined) return undefined;
  const result = d.resultStatus ? ` · result ${d.resultStatus}` : '';
  // "result PASS" says nothing the result does not.
  const reason = d.reason && d.reason !== `result ${d.resultStatus}` ? ` · ${d.reason}` : '';
  if (!over) {
    const task = view.tasks.find((t) => t.id === d.taskId);
    return `${d.id}: its worker ended${result}; the task is ${task?.status ?? 'still going'}`;
  }
  return `${d.id} ended: ${d.status}${result}${reason}`;
}
