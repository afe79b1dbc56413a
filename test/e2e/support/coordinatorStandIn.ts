import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { systemClock } from '../../../src/engine/domain/clock';
import { identityOf } from '../../../src/engine/effects/processes/processes';
import { storeDirOf } from '../../../src/engine/effects/workspaceLayout';
import { FileStore } from '../../../src/engine/store/fileStore';
import { takeCoordinatorLease } from '../../../src/engine/usecases/coordinatorLiveness';
import { OTHER_CHECKOUT } from './paths';

/**
 * Makes another process on this host (`pid`, alive) the coordinator of a run: it takes the
 * run's lease for `leaseMs` and then renews nothing, as a hung coordinator would. Written with
 * the store code of the checkout whose build is under test (OTHER_CHECKOUT in paths.ts, see
 * support/engine.ts: this checkout's code would migrate an older build's store out of its
 * reach). Returns whether the lease was taken.
 */
export async function takeLeaseElsewhere(
  workspace: string,
  input: { runId: string; holder: string; pid: number; leaseMs: number },
): Promise<boolean> {
  const root = OTHER_CHECKOUT;
  const lease = { runId: input.runId, holder: input.holder, identity: identityOf(input.pid), leaseMs: input.leaseMs };
  if (!root) {
    const store = await FileStore.open(storeDirOf(workspace));
    try {
      return (await takeCoordinatorLease(store, systemClock, lease)).acquired;
    } finally {
      await store.close();
    }
  }
  // The store code from before the tiers (src/engine/{store,executor,runtime}): same lease, older paths.
  const load = (path: string): Record<string, never> =>
    createRequire(__filename)(resolve(root, 'src/engine', path)) as Record<string, never>;
  /* eslint-disable @typescript-eslint/no-explicit-any -- another checkout's modules, typed by hand */
  const { FileStore: OldStore } = load('store/fileStore') as any;
  const { storeDirOf: oldStoreDirOf } = load('engine') as any;
  const { identityOf: oldIdentityOf } = load('runtime/processes') as any;
  const { acquireCoordinatorLease } = load('executor/coordinatorLease') as any;
  const store = await OldStore.open(oldStoreDirOf(workspace));
  try {
    const outcome = await store.transact((tx: unknown) =>
      acquireCoordinatorLease(tx, { ...lease, identity: oldIdentityOf(input.pid) }, Date.now()),
    );
    return outcome.acquired as boolean;
  } finally {
    await store.close();
  }
  /* eslint-enable @typescript-eslint/no-explicit-any */
}
