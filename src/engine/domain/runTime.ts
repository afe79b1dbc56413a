import type { Delegation, Gate, WorkerRuntime } from './types';

/**
 * How long an attempt and a task ran (docs/extension.md, "Durations"): the one definition every
 * surface shows — the Runs view, the dashboard's queue and its charts.
 *
 * An attempt runs from its start (the claim that started it) until the first of: its end, its
 * worker's end (a PASS that still has to be verified or integrated ends the worker first), and the
 * opening of a gate it then waits at (a rejected result, a worker that reported BLOCKED, a failed
 * verification, an integration conflict). What follows is a wait for a person or for Baton's
 * checks, not the attempt's work. Two gates are not such waits: a `question` (the worker is still
 * running while it waits for the answer) and a person's hand-off (`details.manual`: the person's
 * work is the attempt). A task's run time is the sum of its attempts': time in the queue or at a
 * gate before an attempt started never counts.
 */
export interface AttemptSpan {
  from: number;
  /** Undefined while the attempt still runs. */
  to: number | undefined;
}

/** What of a run the spans are read from (a RunOverview has it all). */
export interface RunTimeFacts {
  delegations: readonly Delegation[];
  runtimes: readonly Pick<WorkerRuntime, 'delegationId' | 'endedAt'>[];
  gates: readonly Pick<Gate, 'delegationId' | 'kind' | 'openedAt' | 'details'>[];
}

/** When the attempt ran; undefined before it started. */
export function attemptSpan(attempt: Delegation, facts: Omit<RunTimeFacts, 'delegations'>): AttemptSpan | undefined {
  const from = attempt.startedAt;
  if (from === undefined) return undefined;
  const ends = [
    attempt.finishedAt,
    ...facts.runtimes.filter((r) => r.delegationId === attempt.id).map((r) => r.endedAt),
    ...facts.gates
      .filter((g) => g.delegationId === attempt.id && g.kind !== 'question' && g.details.manual !== true)
      .map((g) => g.openedAt),
  ].filter((t): t is number => t !== undefined && t >= from);
  if (ends.length > 0) return { from, to: Math.min(...ends) };
  // Not running, and nothing above says when it stopped: its last change is the best that is known.
  return { from, to: attempt.status === 'RUNNING' ? undefined : Math.max(from, attempt.updatedAt) };
}

export interface TaskRunTime {
  /** As of `now`. */
  ms: number;
  /** One of its attempts still runs: the time counts up with the clock. */
  running: boolean;
}

/** A task's run time at `now`: the sum of its attempts' spans; undefined while none has started. */
export function taskRunTime(facts: RunTimeFacts, taskId: string, now: number): TaskRunTime | undefined {
  let total: TaskRunTime | undefined;
  for (const attempt of facts.delegations) {
    if (attempt.taskId !== taskId) continue;
    const span = attemptSpan(attempt, facts);
    if (!span) continue;
    total = {
      ms: (total?.ms ?? 0) + Math.max(0, (span.to ?? now) - span.from),
      running: (total?.running ?? false) || span.to === undefined,
    };
  }
  return total;
}
