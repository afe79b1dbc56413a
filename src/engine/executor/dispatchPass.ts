import { backoffUntil, freeSlots } from '../domain/admission';
import { isFinishedRun, type RunStatus, type StopMode } from '../domain/types';

/** What one pass of the coordinator reads from the store (queries/dispatchSnapshot.ts). */
export interface DispatchSnapshot {
  now: number;
  run: { status: RunStatus; stopMode: StopMode | null };
  /** Ready tasks in plan order: as many as could start now, plus the next one waiting on a retry backoff. */
  ready: ReadonlyArray<{ id: string; notBefore: number | null }>;
  /** Tasks whose attempt passed and waits for its verification or integration. */
  verifying: readonly string[];
  openGates: number;
  /**
   * Attempts with a live lease: this coordinator's, those held by an external worker (`baton claim`), and a
   * person's (`handOff`: a manual worker's, which nobody waits for — the run pauses on its gate).
   */
  leased: ReadonlyArray<{
    delegationId: string;
    taskId: string;
    leaseExpiresAt: number;
    handOff?: boolean;
    /** Driven by another coordinator of the run (its lease holder, or one that joined it): it takes that one's slot. */
    driven?: boolean;
  }>;
}

/** What the coordinator itself holds while it plans. */
export interface CoordinatorView {
  maxConcurrency: number;
  /** Attempts whose worker processes take a slot (a manual hand-off takes none). */
  busySlots: number;
  /** Tasks with an attempt this coordinator drives, and those attempts' delegation ids. */
  tasksInFlight: ReadonlySet<string>;
  ownDelegations: ReadonlySet<string>;
  /** Verifying tasks it is already finishing, and those it found nothing to finish for. */
  finishing: ReadonlySet<string>;
  cannotFinish: ReadonlySet<string>;
  /** `--task`: only these are dispatched. */
  selected?: readonly string[];
  /** Shutting down or superseded: nothing new starts. */
  halted: boolean;
}

export interface DispatchPlan {
  /** Ready tasks to start, in order, while slots are free (a task may still be held back when it starts). */
  candidates: string[];
  /** The next moment the store changes by itself: a backoff ends, an external worker's lease runs out. */
  wakeAt?: number;
  waitingForBackoff: boolean;
  /** Attempts held by someone else that this pass waits for. */
  heldElsewhere: number;
  /** A person's hand-offs (manual attempts) of the selected tasks held by predecessors: waited for by no one. */
  handOffs: number;
  /** Verifying tasks with no attempt of this coordinator behind them: it finishes them alongside. */
  finish: string[];
}

/**
 * One dispatch decision, from a snapshot and the coordinator's own state, with no I/O: which
 * ready tasks may start (none while the run is stopped or finished, or the coordinator
 * halted), when to look again, and which verifying tasks to finish.
 */
export function planDispatch(snapshot: DispatchSnapshot, view: CoordinatorView): DispatchPlan {
  const selected = (taskId: string): boolean => !view.selected || view.selected.includes(taskId);
  const candidates: string[] = [];
  let wakeAt: number | undefined;
  let waitingForBackoff = false;
  const dispatching = !snapshot.run.stopMode && !isFinishedRun(snapshot.run.status) && !view.halted;
  if (dispatching) {
    for (const task of snapshot.ready) {
      if (!selected(task.id) || view.tasksInFlight.has(task.id)) continue;
      const notBefore = backoffUntil(task, snapshot.now);
      if (notBefore !== undefined) {
        waitingForBackoff = true;
        wakeAt = Math.min(wakeAt ?? Infinity, notBefore);
        continue;
      }
      candidates.push(task.id);
    }
  }
  // An attempt held elsewhere ends by its result (a store change wakes the coordinator) or when its lease runs out.
  const heldElsewhere = snapshot.leased.filter(
    (d) => !d.handOff && !view.ownDelegations.has(d.delegationId) && selected(d.taskId),
  );
  for (const d of heldElsewhere) wakeAt = Math.min(wakeAt ?? Infinity, d.leaseExpiresAt);
  const finish = snapshot.verifying.filter(
    (taskId) => !view.tasksInFlight.has(taskId) && !view.finishing.has(taskId) && !view.cannotFinish.has(taskId),
  );
  // The run's slots are shared with external workers (`baton claim`): theirs count against maxConcurrency too. Another
  // coordinator's attempts take its own slots, not these.
  const claimedElsewhere = snapshot.leased.filter(
    (d) => !d.handOff && !d.driven && !view.ownDelegations.has(d.delegationId),
  ).length;
  return {
    candidates: freeSlots(view.maxConcurrency, view.busySlots + claimedElsewhere) === 0 ? [] : candidates,
    ...(wakeAt !== undefined ? { wakeAt } : {}),
    waitingForBackoff,
    heldElsewhere: heldElsewhere.length,
    handOffs: snapshot.leased.filter((d) => d.handOff && !view.ownDelegations.has(d.delegationId) && selected(d.taskId))
      .length,
    finish,
  };
}

export type CoordinatorOutcome =
  | { kind: 'finished'; status: RunStatus }
  /** `handOffs`: a person's attempts (manual workers) it left waiting at their gates; the run itself may be running. */
  /** `cancelling`: the stop it paused on is a cancel's — the run is being cancelled, nothing waits for a person. */
  | { kind: 'paused'; status: RunStatus; openGates: number; stopped: boolean; handOffs?: number; cancelling?: true }
  | { kind: 'idle'; status: RunStatus; reason: string }
  | { kind: 'lease-lost'; detail: string }
  | { kind: 'shut-down' }
  /** Let go with its workers running, for a successor to adopt (Coordinator.handOver). */
  | { kind: 'handed-over'; workers: number }
  /**
   * A coordinator that joined the run found its lease holder gone (its lease and the takeover rule's time ran out): it
   * let go of its place with its workers running (`workers`), for its caller to take the run over and adopt them.
   */
  | { kind: 'holder-gone'; workers?: number };

/**
 * After a pass has acted: whether the coordinator's work is over for now. It goes on while
 * anything of its own is in flight, a backoff runs, or someone else holds an attempt; else
 * the run's status says how it ended (finished), what it waits for (paused), or that nothing
 * the coordinator may dispatch is ready (idle).
 */
export function passOutcome(input: {
  inFlight: number;
  plan: Pick<DispatchPlan, 'waitingForBackoff' | 'heldElsewhere'> & Partial<Pick<DispatchPlan, 'handOffs'>>;
  runStatus: RunStatus;
  openGates: number;
  stopped: boolean;
  cancelling?: boolean;
  readyCount: number;
  selected?: readonly string[];
}): CoordinatorOutcome | undefined {
  if (input.inFlight > 0 || input.plan.waitingForBackoff || input.plan.heldElsewhere > 0) return undefined;
  const status = input.runStatus;
  if (isFinishedRun(status)) {
    return { kind: 'finished', status };
  }
  // Only a person's hand-offs are left: the coordinator does not wait days for them; the run waits at their gates.
  const handOffs = input.plan.handOffs ?? 0;
  if (status === 'paused' || status === 'stopping') {
    return {
      kind: 'paused',
      status,
      openGates: input.openGates,
      stopped: input.stopped,
      ...(handOffs ? { handOffs } : {}),
      ...(input.stopped && input.cancelling ? { cancelling: true as const } : {}),
    };
  }
  if (handOffs > 0 && input.readyCount === 0)
    return { kind: 'paused', status, openGates: input.openGates, stopped: input.stopped, handOffs };
  if (input.readyCount === 0) {
    const reason = input.selected ? 'the selected tasks are done or waiting' : 'nothing is ready to run';
    return { kind: 'idle', status, reason };
  }
  return undefined;
}
