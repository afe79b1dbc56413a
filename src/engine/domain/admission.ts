import { BatonError, type ErrorCode } from './errors';
import { firstOverlap } from './fileOverlap';

/**
 * Whether an attempt of a ready task may start now — the one rule for every way a task is
 * taken: the coordinator's dispatch (executor/dispatchPass.ts, executor/attemptLauncher.ts)
 * and an external worker's `baton claim` (operations/delegations/claimTask.ts). Three limits,
 * in this order: the task's retry backoff, the run's slots (maxConcurrency), and the `files:`
 * overlap with tasks in flight (docs/isolation.md, "Overlap").
 */
export type AdmissionRefusal =
  | { kind: 'backoff'; taskId: string; notBefore: number }
  | { kind: 'concurrency'; taskId: string; running: number; limit: number; holders: string[] }
  | { kind: 'overlap'; taskId: string; otherTaskId: string; globs: [string, string] };

export interface AdmissionFacts {
  now: number;
  task: { id: string; files: readonly string[]; notBefore: number | null };
  maxConcurrency: number;
  /**
   * Attempts whose workers hold a slot now, in the whole run — driven or claimed (a person's
   * hand-off takes none): their task ids.
   */
  occupying: readonly string[];
  /** Other tasks of the run in flight (running or verifying), with the files they declare. */
  inFlight: ReadonlyArray<{ id: string; files: readonly string[] }>;
}

/** The moment a task may start again after a failed attempt, when that is still to come. */
export function backoffUntil(task: { notBefore: number | null }, now: number): number | undefined {
  return task.notBefore !== null && task.notBefore > now ? task.notBefore : undefined;
}

/** How many more attempts may start now. */
export function freeSlots(maxConcurrency: number, occupied: number): number {
  return Math.max(0, maxConcurrency - occupied);
}

/** The first of the task's declared files that overlaps one of another task in flight, if any. */
export function overlapWith(
  task: { files: readonly string[] },
  inFlight: AdmissionFacts['inFlight'],
): { otherTaskId: string; globs: [string, string] } | undefined {
  if (task.files.length === 0) return undefined;
  for (const other of inFlight) {
    const pair = firstOverlap(task.files, other.files);
    if (pair) return { otherTaskId: other.id, globs: pair };
  }
  return undefined;
}

/** Undefined when the task may start now; else the first limit that holds it back. */
export function admissionRefusal(facts: AdmissionFacts): AdmissionRefusal | undefined {
  const taskId = facts.task.id;
  const notBefore = backoffUntil(facts.task, facts.now);
  if (notBefore !== undefined) return { kind: 'backoff', taskId, notBefore };
  const others = facts.occupying.filter((id) => id !== taskId);
  if (freeSlots(facts.maxConcurrency, others.length) === 0)
    return { kind: 'concurrency', taskId, running: others.length, limit: facts.maxConcurrency, holders: others };
  const overlap = overlapWith(
    facts.task,
    facts.inFlight.filter((t) => t.id !== taskId),
  );
  if (overlap) return { kind: 'overlap', taskId, ...overlap };
  return undefined;
}

/**
 * The refusal in one line, saying when to try again: "T3 waits for its retry backoff until
 * 2026-12-01 18:42:10Z", "2 of 2 running (maxConcurrency) …", "T3 overlaps T2's files …".
 */
export function describeRefusal(refusal: AdmissionRefusal): string {
  switch (refusal.kind) {
    case 'backoff':
      return `${refusal.taskId} waits for its retry backoff until ${utcTime(refusal.notBefore)}; claim it again then.`;
    case 'concurrency':
      return `${refusal.running} of ${refusal.limit} running (maxConcurrency): ${refusal.holders.join(', ')}; claim ${refusal.taskId} again when one of them ends.`;
    case 'overlap':
      return `${refusal.taskId} overlaps ${refusal.otherTaskId}'s files (${refusal.globs[0]} / ${refusal.globs[1]}); claim it again when ${refusal.otherTaskId} is done.`;
  }
}

const REFUSAL_CODES: Record<AdmissionRefusal['kind'], ErrorCode> = {
  backoff: 'claim.retry-backoff',
  concurrency: 'claim.max-concurrency',
  overlap: 'claim.files-overlap',
};

/**
 * The refusal as an error (exit 3, "try again later"): its code by kind, the one line, and the
 * reason as facts (`details.refusal`, with `retryAt` for a backoff) for `--json`.
 */
export function refusalError(refusal: AdmissionRefusal): BatonError {
  return new BatonError(REFUSAL_CODES[refusal.kind], describeRefusal(refusal), [], {
    refusal: {
      ...refusal,
      ...(refusal.kind === 'backoff' ? { retryAt: new Date(refusal.notBefore).toISOString() } : {}),
    },
  });
}

/** The reason a ready task shows while it waits for another task's files (the dispatcher's wording). */
export function overlapReason(otherTaskId: string, globs: [string, string]): string {
  return `waits for ${otherTaskId}: its files overlap (${globs[0]} / ${globs[1]})`;
}

function utcTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}
