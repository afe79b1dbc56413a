import type { FileStore } from '../../src/engine/store/fileStore';
import type { StoreTx, WriteScope } from '../../src/engine/store/port';

/** The store as a use case sees it, counting the transactions it is asked for (reads pass through). */
export function countingTransactions(store: FileStore): { counting: FileStore; transactions: () => number } {
  let transactions = 0;
  const counting = {
    read: store.read.bind(store),
    transact: <T>(work: (tx: StoreTx) => Promise<T>, scope?: WriteScope): Promise<T> => {
      transactions++;
      return store.transact(work, scope);
    },
  } as unknown as FileStore;
  return { counting, transactions: () => transactions };
}
