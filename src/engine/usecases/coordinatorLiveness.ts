import type { Clock } from '../domain/clock';
import { probeProcess } from '../effects/processes/processes';
import {
  acquireCoordinatorLease,
  type AcquireInput,
  type AcquireOutcome,
} from '../operations/coordinatorLease/coordinatorLease';
import { readCoordinatorLease, type CoordinatorLease, type CoordinatorState } from '../queries/coordinatorLease';
import type { StorePort } from '../store/port';

/** Is a live coordinator holding the run (so that others observe and leave the driving to it)? */
export function isLeaseLive(lease: CoordinatorLease | undefined, now: number): boolean {
  if (!lease || lease.releasedAt !== undefined) return false;
  if (lease.expiresAt > now) return probeProcess(lease.identity).alive !== false;
  return false;
}

/**
 * The lease as the views show it, with a look at its holder: a lease that has not run out
 * although its holder is dead or stopped (a crashed window, a Ctrl-Z'd `baton start`) drives
 * nothing, and the views say so at once instead of at its expiry. A holder on another host
 * cannot be looked at and is taken at its lease's word.
 */
export function withHolderProcess(lease: CoordinatorState | undefined, now: number): CoordinatorState | undefined {
  if (!lease || lease.releasedAt !== undefined || lease.expiresAt <= now) return lease;
  const probe = probeProcess(lease.identity);
  if (probe.alive === false) return { ...lease, holderProcess: 'gone' };
  if (probe.alive && probe.stopped) return { ...lease, holderProcess: 'stopped' };
  return lease;
}

/**
 * Will the run's coordinator apply a stop now? Not one stopped by a signal (Ctrl-Z, SIGSTOP, a
 * debugger), though its lease still runs: it can apply nothing while stopped, so a stop asked
 * for meanwhile is applied by whoever asks — and wins over the worker leases that run out
 * while it sleeps. When it wakes, the attempts are decided and its writes about them refused.
 * (Reconcile still only reports beside it: repairing under a live lease would end its workers.)
 */
export function isCoordinatorResponsive(lease: CoordinatorLease | undefined, now: number): boolean {
  if (!isLeaseLive(lease, now)) return false;
  return !probeProcess(lease!.identity).stopped;
}

/**
 * Takes the run's coordinator lease (acquireCoordinatorLease), probing the current holder's
 * process before the transaction — never inside it — and again whenever the lease changed
 * between the probe and the transaction.
 */
export async function takeCoordinatorLease(
  store: StorePort,
  clock: Pick<Clock, 'now'>,
  input: Omit<AcquireInput, 'seen'>,
): Promise<Exclude<AcquireOutcome, { reprobe: true }>> {
  for (;;) {
    const current = await store.read((r) => readCoordinatorLease(r, input.runId));
    const seen = current ? { epoch: current.epoch, probe: probeProcess(current.identity) } : undefined;
    const outcome = await store.transact((tx) =>
      acquireCoordinatorLease(tx, { ...input, ...(seen ? { seen } : {}) }, clock.now()),
    );
    if (!('reprobe' in outcome)) return outcome;
  }
}
