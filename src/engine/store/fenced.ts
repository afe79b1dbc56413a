import type { StorePort, StoreReader } from './port';
import { storeView } from './storeView';

/**
 * A view of a store whose every write transaction first runs `check` — a coordinator's
 * epoch check — so fencing holds by construction: code that writes through it cannot forget
 * the check, and a coordinator that lost its lease cannot overwrite its successor. Reads
 * pass through. Closing the view does not close the store (its owner does).
 */
export function fencedStore(store: StorePort, check: (tx: StoreReader) => Promise<void>): StorePort {
  return storeView(store, {
    transact: (work) =>
      store.transact(async (tx) => {
        await check(tx);
        return work(tx);
      }),
    close: async () => undefined,
  });
}
