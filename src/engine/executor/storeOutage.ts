import { BatonError } from '../domain/errors';

/**
 * A store out of reach for a while — a PostgreSQL server restarting, stopped, or cut off
 * (`store.unreachable`) — is an outage, not the end of a run: nothing was written by the
 * failed call, and the same call is safe again once the server answers (docs/team.md,
 * "Tested failures"). Any other error is what it says.
 */
export function isStoreOutage(err: unknown): boolean {
  return BatonError.is(err, 'store.unreachable');
}

const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 4000;

/** The waits between tries while the store is out of reach: 250 ms, doubling, at most 4 s. */
export function outageWait(tries: number): number {
  return Math.min(FIRST_WAIT_MS * 2 ** Math.max(0, tries - 1), LONGEST_WAIT_MS);
}
