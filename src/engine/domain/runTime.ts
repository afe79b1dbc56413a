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

/** What of a run, besides the attempt itself, ends its run: when its worker ended, when it began to wait. */
export interface AttemptEnds {
  workerEndedAt?: number;
  waitBegan?: number;
}

/**
 * Each attempt's ends, by delegation id, read once from a run's runtimes and gates (a RunOverview
 * has both): the spans of all its attempts then cost one look-up each.
 */
export function attemptEndsOf(facts: {
  runtimes: readonly Pick<WorkerRuntime, 'delegationId' | 'endedAt'>[];
  gates: readonly Pick<Gate, 'delegationId' | 'kind' | 'openedAt' | 'details'>[];
}): Map<string, AttemptEnds> {
  const ends = new Map<string, AttemptEnds>();
  const earliest = (id: string, key: keyof AttemptEnds, at: number): void => {
    const found = ends.get(id) ?? {};
    found[key] = Math.min(found[key] ?? at, at);
    ends.set(id, found);
  };
  for (const r of facts.runtimes) if (r.endedAt !== undefined) earliest(r.delegationId, 'workerEndedAt', r.endedAt);
  for (const g of facts.gates)
    if (g.delegationId && g.kind !== 'question' && g.details.manual !== true)
      earliest(g.delegationId, 'waitBegan', g.openedAt);
  return ends;
}

/** When the attempt ran; undefined before it started. */
export function attemptSpan(attempt: Delegation, ends: AttemptEnds | undefined): AttemptSpan | undefined {
  const from = attempt.startedAt;
  if (from === undefined) return undefined;
  const to = [attempt.finishedAt, ends?.workerEndedAt, ends?.waitBegan].filter(
    (t): t is number => t !== undefined && t >= from,
  );
  if (to.length > 0) return { from, to: Math.min(...to) };
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
export function taskRunTime(
  attempts: readonly Delegation[],
  ends: ReadonlyMap<string, AttemptEnds>,
  now: number,
): TaskRunTime | undefined {
  let total: TaskRunTime | undefined;
  for (const attempt of attempts) {
    const span = attemptSpan(attempt, ends.get(attempt.id));
    if (!span) continue;
    total = {
      ms: (total?.ms ?? 0) + Math.max(0, (span.to ?? now) - span.from),
      running: (total?.running ?? false) || span.to === undefined,
    };
  }
  return total;
}
