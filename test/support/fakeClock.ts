import type { Clock, IdSource } from '../../src/engine/index';

/** A clock tests move by hand: leases and timeouts without sleeps. */
export class FakeClock implements Clock {
  private wall: number;
  private mono = 1_000_000;

  constructor(start = Date.UTC(2026, 10, 29, 9, 0, 0)) {
    this.wall = start;
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.mono;
  }

  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }
}

/** Ids that are the same on every run of a test. */
export function sequentialIds(): IdSource {
  let run = 0;
  let runtime = 0;
  let token = 0;
  return {
    runId: () => `R-test-${++run}`,
    runtimeId: () => `W-test-${++runtime}`,
    token: () => `token-${++token}`,
  };
}
