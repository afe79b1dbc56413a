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

  private timers: Array<{ due: number; seq: number; callback: () => void }> = [];
  private timerSeq = 0;

  setTimer(delayMs: number, callback: () => void): () => void {
    const timer = { due: this.mono + Math.max(0, delayMs), seq: ++this.timerSeq, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves both clocks forward and fires, in order, every timer that came due. */
  advance(ms: number): void {
    const target = this.mono + ms;
    for (;;) {
      const next = [...this.timers].sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!next || next.due > target) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.wall += next.due - this.mono;
      this.mono = next.due;
      next.callback();
    }
    this.wall += target - this.mono;
    this.mono = target;
  }

  /** A wall-clock jump (NTP, a laptop waking): monotonic time does not move. */
  jumpWall(ms: number): void {
    this.wall += ms;
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** When (monotonic) the next timer comes due; undefined when none is set. */
  get nextDue(): number | undefined {
    return this.timers.length ? Math.min(...this.timers.map((t) => t.due)) : undefined;
  }

  /**
   * Moves the clock on `ms` as the real clock would pass: timer by timer, each at its own time,
   * and before each one (and at the end) `settled` waits for the asynchronous work the earlier
   * ones started (a store read), so that a timer that work sets fires when it is due, not late.
   */
  async runFor(ms: number, settled: () => Promise<void>): Promise<void> {
    const end = this.mono + ms;
    for (;;) {
      await settled();
      const due = this.nextDue;
      if (due === undefined || due > end) break;
      this.advance(Math.max(0, due - this.mono));
    }
    this.advance(end - this.mono);
    await settled();
  }
}

/** Ids that are the same on every run of a test. */
export function sequentialIds(): IdSource {
  let run = 0;
  let runtime = 0;
  let token = 0;
  return {
    runId: () => `R-test-${++run}`,
    // The pid keeps runtime ids (and so the BATON_RUNTIME_ID marker of workers) apart between test processes.
    runtimeId: () => `W-test-${process.pid}-${++runtime}`,
    token: () => `token-${++token}`,
  };
}
