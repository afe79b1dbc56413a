import type { SqlValue, StorePort, StoreTx } from './port';
import { storeView } from './storeView';

/**
 * A view of a store that runs `effect` once, after its first write transaction commits a change
 * (a row inserted, updated or deleted): what a command does to the workspace only because it
 * writes (the repository's info/exclude for `.baton/`) waits until it has written, so a command
 * that only read, or was refused — also by a transaction that commits having changed nothing, as
 * a heartbeat for an unknown runtime does — leaves everything as it was. Closing the view closes
 * the store.
 */
export function onFirstCommit(store: StorePort, effect: () => void): StorePort {
  let committed = false;
  return storeView(store, {
    transact: async (work, scope) => {
      if (committed) return store.transact(work, scope);
      let changed = false;
      const result = await store.transact((tx) => {
        const noting: StoreTx = {
          get: (sql, params) => tx.get(sql, params),
          all: (sql, params) => tx.all(sql, params),
          run: async (sql, params) => {
            const rows = await tx.run(sql, params);
            if (rows > 0) changed = true;
            return rows;
          },
          runReturning: async <T>(sql: string, params?: readonly SqlValue[]) => {
            const rows = await tx.runReturning<T>(sql, params);
            if (rows.length > 0) changed = true;
            return rows;
          },
        };
        return work(noting);
      }, scope);
      if (changed && !committed) {
        committed = true;
        effect();
      }
      return result;
    },
    close: () => store.close(),
  });
}
