import type { SharedStoreAccess } from '../domain/handIn';
import type { Clock, IdSource } from '../domain/clock';
import type { BatonConfig } from '../domain/config';
import type { StorePort } from '../store/port';

/**
 * What the engine's use cases and its coordinator work with: one context for all of them. A
 * coordinator hands its use cases a fenced store (store/fenced.ts: every transaction checks
 * its epoch) and a fence for the side effects no transaction covers.
 */
export interface EngineContext {
  readonly store: StorePort;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly workspace: string;
  readonly config: BatonConfig;
  /** The `baton` CLI entry (a .js file), given to workers as BATON_CLI so they can heartbeat. */
  readonly cliPath?: string;
  readonly log: (line: string) => void;
  /** On a shared store: how this process reaches it, for the watchdogs that hand in finished work (domain/handIn). */
  readonly storeAccess?: SharedStoreAccess;
  /**
   * Set for a coordinator: proves, right before a side effect (spawn, kill, verify, integrate), that it still holds its
   * epoch.
   */
  readonly fence?: Fence;
}

export interface Fence {
  /**
   * Resolves while the holder's epoch is current (read from the latest state); throws `coordinator.superseded`
   * otherwise.
   */
  assertHeld(): Promise<void>;
  /**
   * When the holder took the run (wall clock). Whoever held it before lost it no later: a process of theirs on another
   * host that a lease watchdog guards has ended by this time plus the watchdog's (foreignLeaseGraceMs).
   */
  heldSince(): number;
}
