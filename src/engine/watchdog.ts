// The lease watchdog's way into the engine (docs/team.md, "Failover"): what a watchdog process needs and nothing else.
// A coordinator on a shared store starts one beside every worker and verify command, so its start is paid once per
// attempt: the program built from src/cli/watchdog.ts loads this facade alone, not the whole engine behind
// src/engine/index.ts (docs/architecture.md, "How the CLI starts"). The hand-in — the store, its client — loads only
// when a watchdog hands a worker's end in, which a coordinator that watches makes rare.
import type * as HandIn from './usecases/handIn';

export { systemClock } from './domain/clock';
export type { SharedStoreAccess } from './domain/handIn';
export { unsettledAfterExit, watchLease, type WatchedWorker } from './effects/processes/leaseWatchdog';

/** usecases/handIn.ts's handInFromWatchdog, loaded on first use. */
export const handInFromWatchdog: typeof HandIn.handInFromWatchdog = async (...args) =>
  (await import('./usecases/handIn')).handInFromWatchdog(...args);
