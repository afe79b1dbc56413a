import type { StorePort } from './port';
import { storeView } from './storeView';

/**
 * A view of a store that runs `effect` once, after its first write transaction commits: what a
 * command does to the workspace only because it writes (the repository's info/exclude for
 * `.baton/`) waits until it has written, so a command that only read, or was refused, leaves
 * everything as it was. Closing the view closes the store.
 */
export function onFirstCommit(store: StorePort, effect: () => void): StorePort {
  let committed = false;
  return storeView(store, {
    transact: async (work) => {
      const result = await store.transact(work);
      if (!committed) {
        committed = true;
        effect();
      }
      return result;
    },
    close: () => store.close(),
  });
}
