import type { ProcessIdentity } from '../domain/process';
import { findProcessesOfWorkers, terminateWorker, workerMarker } from '../effects/processes/processes';
import type { EngineContext } from '../usecases/context';

/** Exited workers are looked over together, at most this often (reading /proc costs ~1 ms). */
const LEFTOVER_SWEEP_MS = 250;

interface ExitedWorker {
  delegationId: string;
  runtimeId: string;
  identity: ProcessIdentity;
}

/**
 * A worker that exited may have left processes behind (a detached or setsid child): they
 * carry its marker, and they go with it. Looking means reading /proc, so exited workers are
 * swept together, at most every LEFTOVER_SWEEP_MS, and once more before the coordinator
 * returns or shuts down (`flush`): nothing of theirs outlives the coordinator's return.
 */
export class LeftoverSweeper {
  private readonly exited: ExitedWorker[] = [];
  private cancelTimer: (() => void) | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: EngineContext) {}

  add(worker: ExitedWorker): void {
    this.exited.push(worker);
    this.cancelTimer ??= this.ctx.clock.setTimer(LEFTOVER_SWEEP_MS, () => {
      this.cancelTimer = undefined;
      void this.sweep();
    });
  }

  /** Sweeps now for whatever exited workers left behind. */
  async flush(): Promise<void> {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    await this.sweep();
  }

  private sweep(): Promise<void> {
    this.sweeping = this.sweeping.then(async () => {
      const batch = this.exited.splice(0);
      if (batch.length === 0) return;
      const found = findProcessesOfWorkers(batch.map((w) => ({ root: w.identity, marker: workerMarker(w.runtimeId) })));
      for (const [i, worker] of batch.entries()) {
        if (found[i]!.length === 0) continue;
        try {
          await this.ctx.fence?.assertHeld();
          const report = await terminateWorker(worker.identity, {
            marker: workerMarker(worker.runtimeId),
            graceMs: this.ctx.config.stopGraceSeconds * 1000,
            clock: this.ctx.clock,
          });
          if (report.processes.length > 0) {
            const confirmed = report.confirmed ? '' : ', NOT confirmed';
            this.ctx.log(
              `${worker.delegationId}: ended ${report.processes.length} process(es) the worker left behind${confirmed}`,
            );
          }
        } catch (err) {
          this.ctx.log(`${worker.delegationId}: what the worker left behind was not ended: ${(err as Error).message}`);
        }
      }
    });
    return this.sweeping;
  }
}
