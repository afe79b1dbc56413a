import {
  agentStreamParser,
  applyAgentEvent,
  progressOf,
  startingActivity,
  type AgentActivity,
  type AttemptAgent,
} from '../domain/agents/agentActivity';
import type { AgentStreamParser } from '../domain/agents/agentEvents';
import { budgetCrossings, costOf, type BudgetCrossing } from '../domain/agents/budget';
import { usageLimitOf, type UsageLimit } from '../domain/agents/usageLimit';
import { BatonError } from '../domain/errors';
import { silenceOf } from '../domain/parking';
import { appendEvent } from '../operations/events/appendEvent';
import { LogTail } from '../effects/processes/logTail';
import { recordAgentUsage } from '../operations/agentUsage/recordAgentUsage';
import { renewRuntimeLease } from '../operations/runtimes/renewRuntimeLease';
import { spendSoFar } from '../queries/agentUsage';
import { readRunSettings } from '../queries/runs';
import type { StoreTx } from '../store/port';
import type { EngineContext } from '../usecases/context';
import type { Attempt } from './attempt';

/** How often the log is read while the agent works. */
export const STREAM_POLL_MS = 250;
/** At most one heartbeat per this interval carries the activity (a stream emits hundreds of events a second). */
export const ACTIVITY_BEAT_MS = 1000;

export type { AttemptAgent };

export interface StreamFollowerHost {
  runId: string;
  epoch(): number;
  /** The spend crossed a budget line: the supervisor stops the attempt and opens the budget gate. */
  overBudget(attempt: Attempt, crossings: BudgetCrossing[]): void;
  /** The stream was silent for silenceSeconds and silenceAction is `stop`: the supervisor parks the attempt. */
  silent(attempt: Attempt): void;
}

/**
 * Follows an agent preset's event stream while its worker runs (docs/workers.md, "Live
 * activity"): reads the lines its CLI appends to the attempt's log, folds them into the
 * attempt's activity, and — at most once a second, and only when something changed — renews
 * the worker's lease as a heartbeat whose progress says what the agent does now, with the
 * attempt's usage written beside it in the same transaction. After each write the spend is
 * checked against the run's budget. The log stays the full transcript.
 */
export class AgentStreamFollower {
  private readonly tail: LogTail;
  private readonly parser: AgentStreamParser;
  private activity: AgentActivity;
  /** Changed since the last heartbeat. */
  private dirty = false;
  private lastBeatMono = -Infinity;
  /** What the agent was doing at the last beat that said so (its `current`). */
  private toldCurrent: string | undefined;
  /** When (wall clock) the stream first said what the agent does now (its `current`). */
  private currentSince = 0;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;
  private overBudgetReported = false;
  private limit: UsageLimit | undefined;
  /** When (monotonic) the stream last said something: its silence is measured from here. */
  private lastLineMono: number;
  /** What the last beat said of the stream's silence ("silent 5m"); undefined while it speaks. */
  private toldSilence: string | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly host: StreamFollowerHost,
    private readonly attempt: Attempt,
    readonly agent: AttemptAgent,
    cwd: string,
  ) {
    this.tail = new LogTail(attempt.logPath);
    this.lastLineMono = ctx.clock.monotonic();
    this.activity = startingActivity(agent);
    this.parser = agentStreamParser(agent.kind, {
      cwd,
      ...(agent.priorTotals ? { priorTotals: agent.priorTotals } : {}),
    });
  }

  /** Reads the stream every STREAM_POLL_MS until stopped. */
  start(): void {
    const poll = (): void => {
      this.attempt.setTimer(
        'stream',
        this.ctx.clock.setTimer(STREAM_POLL_MS, () => {
          if (this.stopped) return;
          const lines = this.tail.lines();
          const mono = this.ctx.clock.monotonic();
          if (lines.length > 0) {
            this.read(lines);
            this.lastLineMono = mono;
            // It speaks again: the next beat says what it does (and a later silence is seen anew).
            if (this.toldSilence) this.toldCurrent = this.toldSilence = undefined;
          }
          if (this.attempt.ending) return poll();
          const silence = silenceOf(mono - this.lastLineMono, this.ctx.config.silenceSeconds);
          if (silence && silence !== this.toldSilence && mono - this.lastBeatMono >= ACTIVITY_BEAT_MS) {
            const first = this.toldSilence === undefined;
            this.toldSilence = silence;
            this.lastBeatMono = mono;
            this.writing = this.writing.then(() => this.beat(silence, first ? mono - this.lastLineMono : undefined));
          } else if (this.dirty && mono - this.lastBeatMono >= ACTIVITY_BEAT_MS) {
            this.dirty = false;
            this.lastBeatMono = mono;
            this.writing = this.writing.then(() => this.beat());
          }
          poll();
        }),
      );
    };
    poll();
  }

  stop(): void {
    this.stopped = true;
    this.attempt.cancelTimer('stream');
  }

  /** The worker exited: the rest of its stream is read and the attempt's final usage recorded. */
  async finish(): Promise<AgentActivity> {
    this.stop();
    await this.writing;
    this.read(this.tail.rest());
    for (const event of this.parser.end()) {
      this.activity = applyAgentEvent(this.activity, event);
      this.limit = usageLimitOf(this.agent.kind, event, this.ctx.clock.now()) ?? this.limit;
    }
    await this.ctx.store.transact((tx) => this.recordUsage(tx, true));
    return this.activity;
  }

  current(): AgentActivity {
    return this.activity;
  }

  usageLimit(): UsageLimit | undefined {
    return this.limit;
  }

  private read(lines: string[]): void {
    for (const line of lines) {
      for (const event of this.parser.feed(line)) {
        const before = this.activity.current;
        this.activity = applyAgentEvent(this.activity, event);
        if (this.activity.current !== before) this.currentSince = this.ctx.clock.now();
        this.limit = usageLimitOf(this.agent.kind, event, this.ctx.clock.now()) ?? this.limit;
        this.dirty = true;
      }
    }
  }

  private async recordUsage(tx: StoreTx, final = false): Promise<void> {
    const { attempt, agent } = this;
    const cost = costOf(this.activity, this.ctx.config.prices);
    await recordAgentUsage(
      tx,
      {
        runId: this.host.runId,
        delegationId: attempt.delegationId,
        taskId: attempt.taskId,
        agent: agent.agent,
        kind: agent.kind,
        permissions: agent.permissions,
        activity: this.activity,
        final,
        ...(cost.source ? { costSource: cost.source, costUsd: cost.costUsd } : {}),
      },
      this.ctx.clock.now(),
    );
  }

  /**
   * One heartbeat with the agent's activity, its usage beside it; then the budget. `silence`: the stream has said
   * nothing that long ("silent 5m", shown before what it did last); `silentMs` at the first beat of a silence, which
   * is an `attempt:silent` event — and, with silenceAction `stop`, the supervisor's to park.
   */
  private async beat(silence?: string, silentMs?: number): Promise<void> {
    const { attempt } = this;
    try {
      let renewedAtMono = 0;
      const crossings = await this.ctx.store.transact(async (tx) => {
        renewedAtMono = this.ctx.clock.monotonic();
        const authority = {
          holder: 'coordinator' as const,
          runId: this.host.runId,
          epoch: this.host.epoch(),
          withinLease: renewedAtMono < attempt.leaseUntilMono,
        };
        const now = this.ctx.clock.now();
        const { current } = this.activity;
        // A lease that ran out is the supervisor's to judge (its renewal makes it official): nothing is written here.
        const outcome = await renewRuntimeLease(
          tx,
          {
            runtimeId: attempt.runtimeId,
            authority,
            // Progress only when what the agent does changed: a beat for counts or usage alone does not replace a
            // note the agent sent itself (baton_progress) with an older description — nor does a description of
            // what it began before that note (the beat was throttled while the agent went on and sent it).
            ...(silence
              ? { progress: `${silence} · ${progressOf(this.activity)}` }
              : current !== this.toldCurrent
                ? { progress: progressOf(this.activity), describesSince: this.currentSince }
                : {}),
            onLapsed: 'refuse',
          },
          now,
        );
        if (!outcome.renewed) return [];
        this.toldCurrent = current;
        if (silentMs !== undefined)
          await appendEvent(tx, this.host.runId, 'attempt:silent', now, {
            delegationId: attempt.delegationId,
            taskId: attempt.taskId,
            silentSeconds: Math.floor(silentMs / 1000),
            action: this.ctx.config.silenceAction,
          });
        await this.recordUsage(tx);
        return this.budgetCrossings(tx);
      });
      if (renewedAtMono > 0) attempt.leaseUntilMono = Math.max(attempt.leaseUntilMono, renewedAtMono + attempt.leaseMs);
      if (silentMs !== undefined && this.ctx.config.silenceAction === 'stop' && !attempt.ending && !this.activity.ended)
        this.host.silent(attempt);
      // An agent that already gave its answer is not stopped: its result is taken, and nothing more starts.
      if (crossings.length > 0 && !this.overBudgetReported && !attempt.ending && !this.activity.ended) {
        this.overBudgetReported = true;
        this.host.overBudget(attempt, crossings);
      }
    } catch (err) {
      // Superseded, or the attempt was decided elsewhere: the supervisor's own renewal and pass act on it.
      if (!BatonError.is(err, 'coordinator.superseded') && !BatonError.is(err, 'runtime.not-live')) {
        this.ctx.log(`${attempt.delegationId}: activity not recorded: ${(err as Error).message}`);
      }
    }
  }

  private async budgetCrossings(tx: StoreTx): Promise<BudgetCrossing[]> {
    const budget = (await readRunSettings(tx, this.host.runId)).budget ?? this.ctx.config.budget;
    if (!budget.run && !budget.task && !budget.agent) return [];
    const spent = await spendSoFar(tx, this.host.runId, {
      taskId: this.attempt.taskId,
      agent: this.agent.agent,
    });
    return budgetCrossings(budget, spent);
  }
}
