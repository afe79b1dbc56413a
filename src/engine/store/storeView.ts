import type { StorePort } from './port';

/** A view of a store with a write transaction and a close of its own; reads, watching and the rest pass through. */
export function storeView(store: StorePort, own: Pick<StorePort, 'transact' | 'close'>): StorePort {
  return {
    transact: own.transact,
    read: (work) => store.read(work),
    refresh: () => store.refresh(),
    watch: (listener) => store.watch(listener),
    continueNumbering: (tx, columns) => store.continueNumbering(tx, columns),
    get recovery() {
      return store.recovery;
    },
    close: own.close,
  };
}
