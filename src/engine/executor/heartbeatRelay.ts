import { BatonError } from '../domain/errors';
import { LogTail } from '../effects/processes/logTail';
import { renewRuntimeLease } from '../operations/runtimes/renewRuntimeLease';
import type { EngineContext } from '../usecases/context';
import type { Attempt } from './attempt';

/** How often a relay file is read. */
export const RELAY_POLL_MS = 500;

/** One line of a relay file, as `baton heartbeat` appends it (src/cli/commands/heartbeat.ts). */
export interface RelayedBeat {
  runtimeId: string;
  token: string;
  progress?: string;
}

/**
 * Heartbeats a worker hands to its coordinator (docs/team.md, "Worker credentials"). On a
 * shared store a worker Baton starts gets no store credential — the team database's password
 * must not reach an agent's environment, transcript or model provider — so its
 * `baton heartbeat` appends the beat to a file in the run's folder instead
 * (BATON_HEARTBEAT_RELAY), and the coordinator commits it: the same renewal, with the worker's
 * own token and progress, as if the worker had reached the store. Beats read together are one
 * renewal (the last one's progress).
 */
export class HeartbeatRelay {
  private readonly tail: LogTail;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly ctx: EngineContext,
    private readonly attempt: Attempt,
    path: string,
  ) {
    this.tail = new LogTail(path);
  }

  start(): void {
    const poll = (): void => {
      this.attempt.setTimer(
        'relay',
        this.ctx.clock.setTimer(RELAY_POLL_MS, () => {
          if (this.stopped) return;
          const beat = this.lastBeat(this.tail.lines());
          if (beat && !this.attempt.ending) this.writing = this.writing.then(() => this.commit(beat));
          poll();
        }),
      );
    };
    poll();
  }

  private lastBeat(lines: string[]): RelayedBeat | undefined {
    let last: RelayedBeat | undefined;
    for (const line of lines) {
      try {
        const beat = JSON.parse(line) as Partial<RelayedBeat>;
        if (beat.runtimeId === this.attempt.runtimeId && typeof beat.token === 'string')
          last = {
            runtimeId: beat.runtimeId,
            token: beat.token,
            ...(typeof beat.progress === 'string' ? { progress: beat.progress } : {}),
          };
      } catch {
        // not a beat: the file is the worker's to write, and only beats are taken from it
      }
    }
    return last;
  }

  private async commit(beat: RelayedBeat): Promise<void> {
    try {
      const outcome = await this.ctx.store.transact((tx) =>
        renewRuntimeLease(
          tx,
          {
            runtimeId: beat.runtimeId,
            authority: { holder: 'worker', token: beat.token },
            ...(beat.progress !== undefined ? { progress: beat.progress } : {}),
            onLapsed: 'refuse',
          },
          this.ctx.clock.now(),
        ),
      );
      if (!outcome.renewed) this.ctx.log(`${this.attempt.delegationId}: a relayed heartbeat: ${outcome.error.message}`);
    } catch (err) {
      // A wrong token, an attempt decided meanwhile, a superseded coordinator: the beat is dropped, as the store would.
      if (!BatonError.is(err, 'coordinator.superseded'))
        this.ctx.log(`${this.attempt.delegationId}: a relayed heartbeat was refused: ${(err as Error).message}`);
    }
  }

  stop(): void {
    this.stopped = true;
    this.attempt.cancelTimer('relay');
  }
}
