import { freezeWorkers } from '../domain/frozenWorkers';
import {
  afterLaunch,
  decideLaunch,
  type LaunchHold,
  type LaunchOutcome,
  type LaunchSnapshot,
  type LaunchView,
  type StartPlan,
} from '../domain/launch';
import { BatonError } from '../domain/errors';
import type { StopRequest } from '../domain/stops';
import { exitCodeCommandOf, isAgentWorker } from '../domain/workerLaunch';
import { sharedTreeRepository } from '../effects/git/treeSnapshot';
import { releaseUnlaunchedAttempt, UNLAUNCHED_REASON } from '../operations/delegations/releaseUnlaunchedAttempt';
import { holdTask } from '../operations/tasks/holdTask';
import { unstartedClaim } from '../queries/delegations';
import { sideEffectPoint } from '../store/faultPoint';
import { claimAttempt } from '../usecases/claimAttempt';
import type { EngineContext } from '../usecases/context';
import { isolationForStart } from '../usecases/planIsolation';
import { startWorker } from '../usecases/startWorker';
import type { AttemptSupervisor } from './attemptSupervisor';
import { isStoreOutage } from './storeOutage';

/** What the launcher needs from the coordinator it serves. */
export interface LauncherHost {
  runId: string;
  /** Who holds the runtimes it claims (host:pid), shown in status views. */
  holder: string;
  maxConcurrency: number;
  /** Run every task with this worker instead of the task's or the default one. */
  worker?: string;
  /** Shutting down or superseded: nothing new starts. */
  halted(): boolean;
  /** Look again at this moment (the target branch could not be read). */
  wakeAt(at: number): void;
  /**
   * The stop a shutdown recorded, if the coordinator is shutting down: a worker that starts meanwhile ends under it.
   */
  shutdownStop(): StopRequest | undefined;
}

/**
 * Carries out what the pass decided (domain/launch.ts): holds a task at its gate, or starts an
 * attempt — where it runs, its claim (one transaction: claimAttempt), its worker (one spawn
 * step, after the fence: startWorker) — and hands it to the supervisor. A person's task opens a
 * manual_handoff gate instead of a process.
 */
export class AttemptLauncher {
  /** The workspace's git repository, asked once per coordinator (undefined outside git). */
  private sharedRepo: Promise<string | undefined> | undefined;
  /** Attempts claimed whose launch a store outage cut off before their worker ran: released when it answers. */
  private readonly unlaunched = new Set<string>();
  /** Tasks whose claim an outage cut off at its commit, which may have landed: their claim, if any, is released too. */
  private readonly claimsInDoubt = new Set<string>();
  private readonly view: LaunchView;

  constructor(
    private readonly ctx: EngineContext,
    private readonly supervisor: AttemptSupervisor,
    private readonly host: LauncherHost,
  ) {
    this.view = {
      maxConcurrency: host.maxConcurrency,
      ...(host.worker ? { worker: host.worker } : {}),
      config: ctx.config,
      configWorkers: () => freezeWorkers(ctx.config),
    };
  }

  /**
   * Decides each candidate's fate from the pass's launch snapshot, in plan order while slots are
   * free, and carries it out; what that changed (a slot taken, files in flight, a gate opened, the
   * run's isolation recorded) is folded in before the next one is decided.
   */
  async launch(candidates: readonly string[], snapshot: LaunchSnapshot): Promise<void> {
    let facts = snapshot;
    for (const taskId of candidates) {
      if (this.host.halted() || this.supervisor.busySlots() >= this.host.maxConcurrency) break;
      const decision = decideLaunch(facts, taskId, this.view);
      let outcome: LaunchOutcome | undefined;
      if (decision.kind === 'start') outcome = await this.start(decision.plan, facts.planPath);
      else if (decision.kind === 'hold') outcome = await this.hold(decision.task.id, decision.hold);
      if (outcome) facts = afterLaunch(facts, outcome);
    }
  }

  /**
   * Releases the attempts whose launch an outage cut off (operations/delegations/releaseUnlaunchedAttempt.ts): not
   * counted, their tasks ready at once — instead of holding a slot for their whole lease with no process behind them.
   * Called first in each pass; while the store is still out of reach it throws, and they wait for the next one.
   */
  async releaseUnlaunched(): Promise<void> {
    const { runId, holder } = this.host;
    for (const taskId of this.claimsInDoubt) {
      // Ours and never launched: claimed by this coordinator, no worker recorded, not one this coordinator supervises.
      const claimed = await this.ctx.store.read((r) => unstartedClaim(r, { runId, taskId, holder }));
      if (claimed && !this.supervisor.ownDelegations().has(claimed)) this.unlaunched.add(claimed);
      this.claimsInDoubt.delete(taskId);
    }
    for (const delegationId of this.unlaunched) {
      try {
        const released = await this.ctx.store.transact((tx) =>
          releaseUnlaunchedAttempt(tx, { runId, delegationId }, this.ctx.clock.now()),
        );
        this.ctx.log(`${delegationId}: ${released ? UNLAUNCHED_REASON : 'its launch was cut off; decided meanwhile'}`);
      } catch (err) {
        if (isStoreOutage(err) || BatonError.is(err, 'coordinator.superseded')) throw err;
        // Never the end of the run: an attempt that cannot be released ends with its lease, as before.
        this.ctx.log(`${delegationId}: its launch was cut off and it could not be released: ${(err as Error).message}`);
      }
      this.unlaunched.delete(delegationId);
    }
  }

  private async hold(taskId: string, hold: LaunchHold): Promise<LaunchOutcome> {
    const { runId } = this.host;
    const gate = await this.ctx.store.transact((tx) => holdTask(tx, { runId, taskId, hold }, this.ctx.clock.now()));
    return gate ? { gate: { id: gate.id, kind: gate.kind, taskId } } : {};
  }

  /** One start: where it runs, its claim, its worker, the hand-over. */
  private async start(plan: StartPlan, planPath: string): Promise<LaunchOutcome | undefined> {
    const { runId } = this.host;
    const { task } = plan;
    const where = await isolationForStart(this.ctx, { runId, taskId: task.id, planPath, need: plan.isolation });
    if (where.mode === 'gated')
      return where.gate && { gate: { id: where.gate.id, kind: 'isolation', taskId: task.id } };
    if (where.mode === 'later') {
      this.ctx.log(`${task.id}: not started: ${where.why}`);
      this.host.wakeAt(this.ctx.clock.now() + 5000);
      return undefined;
    }
    const decided = where.mode === 'shared' ? where.recorded : undefined;
    const { holder, maxConcurrency } = this.host;
    let claimed;
    try {
      claimed = await claimAttempt(this.ctx, { runId, plan, where, holder, maxConcurrency });
    } catch (err) {
      // Its commit may have landed with only the answer lost: looked for once the store answers (releaseUnlaunched).
      if (isStoreOutage(err) && !plan.manual) this.claimsInDoubt.add(task.id);
      throw err;
    }
    if (!claimed) return decided ? { isolation: decided } : undefined;
    const isolation = decided ?? (where.mode === 'worktree' ? where.run : undefined);
    const outcome = {
      started: { taskId: task.id, files: task.files, slot: !plan.manual },
      ...(isolation ? { isolation } : {}),
    };
    const { delegation, runtimeId, artifactPath, logPath, leaseUntilMono, cwd, watchdogKey } = claimed;
    const { manual, leaseMs, permissions } = plan;
    const identity = {
      delegationId: delegation.id,
      taskId: task.id,
      runtimeId,
      artifactPath,
      logPath,
      manual,
      leaseMs,
      ...(watchdogKey ? { watchdogKey } : {}),
    };
    if (manual) {
      this.supervisor.trackManual(identity, leaseUntilMono);
      return outcome;
    }
    const sharedRepo = () => this.sharedRepository();
    let worker;
    try {
      worker = await startWorker(this.ctx, claimed, { runId, ...plan, sharedRepo });
    } catch (err) {
      // Claimed, and no worker ran: released once the store answers (the coordinator waits out the outage meanwhile).
      if (isStoreOutage(err)) this.unlaunched.add(delegation.id);
      throw err;
    }
    if (!worker) return isolation ? { isolation } : undefined;
    // Handed over before it is let go: its lease is renewed, its exit taken as its result, its timeout kept.
    const plain = exitCodeCommandOf(plan.worker);
    const model = isAgentWorker(plan.worker) ? plan.worker.model : undefined;
    const agent = worker.agent && {
      kind: worker.agent.kind,
      agent: delegation.agent,
      permissions,
      ...(model ? { model } : {}),
      ...(claimed.sessionTotals ? { priorTotals: claimed.sessionTotals } : {}),
    };
    const attempt = this.supervisor.supervise(identity, leaseUntilMono, worker, {
      ...(plain ? { plainCommand: { command: plain, cwd, agent: delegation.agent } } : {}),
      ...(agent ? { agent: { agent, cwd } } : {}),
    });
    await sideEffectPoint('launch:before-release');
    worker.release();
    this.ctx.log(`${delegation.id}: started ${plan.workerId} (pid ${worker.identity.pid})`);
    // Shutdown's stop was applied while this worker was starting: it ends like the others.
    const stop = this.host.shutdownStop();
    if (stop) await this.supervisor.endUnderStop(attempt, stop);
    return outcome;
  }

  private sharedRepository(): Promise<string | undefined> {
    this.sharedRepo ??= sharedTreeRepository(this.ctx.workspace).catch((err: unknown) => {
      this.ctx.log(`the working tree's repository could not be read: ${(err as Error).message}`);
      return undefined;
    });
    return this.sharedRepo;
  }
}
