import type { StorePort, StoreReader, WriteScope } from './port';
import { storeView } from './storeView';

/**
 * A view of a store whose every write transaction first runs `check` — a coordinator's
 * epoch check — so fencing holds by construction: code that writes through it cannot forget
 * the check, and a coordinator that lost its lease cannot overwrite its successor. (The check
 * holds until the commit: whatever changes a run's epochs writes in that run's scope or
 * unscoped, so it never commits in between.) Reads pass through. Closing the view does not
 * close the store (its owner does).
 */
export function fencedStore(
  store: StorePort,
  check: (tx: StoreReader) => Promise<void>,
  /** The scope of a write that names none: a coordinator's writes are its run's (docs/team.md, "Concurrency"). */
  defaultScope?: WriteScope,
): StorePort {
  return storeView(store, {
    transact: (work, scope) =>
      store.transact(async (tx) => {
        await check(tx);
        return work(tx);
      }, scope ?? defaultScope),
    close: async () => undefined,
  });
}
