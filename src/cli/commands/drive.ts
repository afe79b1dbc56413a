import { resolve } from 'node:path';
import { BUDGET_UNPRICED, Engine, type CoordinatorOutcome, type EngineEvent, type Run } from '../../engine/index';
import { describeLiveness } from '../../protocol/liveness';
import { PROTOCOL_VERSION, printJson, requireStore, withEngine, type CommandContext } from '../context';
import { oneLine, paint, status } from '../render';
import { formatEvent } from './events';

export interface DriveOptions {
  maxConcurrency?: number;
  worker?: string;
  tasks?: string[];
  /** When another coordinator drives the run: watch only (and take over once it is gone), do not join it. */
  observe?: boolean;
}

/**
 * Exit codes for how a run ended or paused (DESIGN §6): a pause on an integration conflict is the more specific 6. A
 * run paused by a stop request waits for a person's `resume` like one at a gate: 8, as the task-executor seed says.
 */
export function exitCodeFor(outcome: CoordinatorOutcome, openGateKinds: readonly string[] = []): number {
  switch (outcome.kind) {
    case 'finished':
      // A cancel ends the run for good, by a person's decision: not a failure of the run's work, and nothing waits.
      return outcome.status === 'completed' || outcome.status === 'cancelled' ? 0 : 5;
    case 'paused':
      // Paused on a cancel's stop: the run is being cancelled, as a cancel seen afterwards says (0).
      if ((outcome.openGates === 0 && !outcome.stopped) || outcome.cancelling) return 0;
      return openGateKinds.includes('integration_conflict') ? 6 : 8;
    case 'lease-lost':
      return 3;
    default:
      return 0;
  }
}

/** `baton start <plan>`: the plan's active run (or a new one), driven in the foreground. */
export async function start(
  ctx: CommandContext,
  planPath: string,
  options: DriveOptions & {
    fresh?: boolean;
    settings?: {
      isolation?: 'auto' | 'worktree' | 'none';
      integration?: 'merge' | 'rebase' | 'cherry-pick' | 'branch';
    };
  },
): Promise<number> {
  // Refusals write nothing: an unknown or missing worker (or a bad plan or config) is refused
  // before the engine opens the store, so no run, journal line or .baton/store is left behind.
  Engine.refuseUnknownWorkersForPlan({
    workspace: ctx.workspace,
    planPath: resolve(planPath),
    ...(options.worker ? { worker: options.worker } : {}),
  });
  return withEngine(
    ctx,
    async (engine) => {
      // A plan whose last run completed from the same text is not run again by accident: agent work costs money.
      const completed = options.fresh ? undefined : await engine.completedRunOfPlan(resolve(planPath));
      if (completed) {
        if (ctx.output.json) printJson(ctx, { runId: completed.id, status: completed.status, started: false });
        else
          ctx.output.out(
            `Run ${paint(ctx.output, 'bold', completed.id)} of ${completed.planPath} completed, from the plan as it is now. ` +
              `To run every task again: baton start ${planPath} --new`,
          );
        return 0;
      }
      const { run, created } = await engine.runForPlan(resolve(planPath), {
        fresh: Boolean(options.fresh),
        ...(options.settings ? { settings: options.settings } : {}),
      });
      if (!ctx.output.json)
        ctx.output.out(
          `${created ? 'Started' : 'Continuing'} run ${paint(ctx.output, 'bold', run.id)} of ${run.planPath}.`,
        );
      // A dollar limit some worker's spend escapes is not a reason to refuse (tokens still bind), but is said.
      for (const unpriced of engine.configIssues.filter((i) => i.code === BUDGET_UNPRICED))
        ctx.output.err(`baton: warning: ${unpriced.message}`);
      return drive(ctx, engine, run, options);
    },
    { follow: true },
  );
}

/** `baton resume`: reconcile, take the lease, and continue the run to its end. */
export async function resume(ctx: CommandContext, runId: string | undefined, options: DriveOptions): Promise<number> {
  requireStore(ctx);
  return withEngine(
    ctx,
    async (engine) => {
      const run = await engine.getRun(runId);
      // Checked before the user's stop is lifted: a refused resume leaves the run stopped.
      await engine.refuseUnknownWorkers(run.id, options.worker);
      await engine.liftStops(run.id);
      if (!ctx.output.json) ctx.output.out(`Resuming run ${paint(ctx.output, 'bold', run.id)} of ${run.planPath}.`);
      // What kept a task out of its worktree may be fixed by now (the tree committed): its gate closes by itself.
      for (const checked of await engine.recheckIsolation({ runId: run.id }))
        if (!ctx.output.json && checked.resolved) ctx.output.out(`${checked.gate.id} closed: ${checked.reason}.`);
      return drive(ctx, engine, await engine.getRun(run.id), options);
    },
    { follow: true },
  );
}

type Taken = Awaited<ReturnType<Engine['coordinate']>>;
type Driving = Exclude<Taken, { heldBy: unknown }>;

async function drive(ctx: CommandContext, engine: Engine, run: Run, options: DriveOptions): Promise<number> {
  const o = ctx.output;
  const take = (join?: boolean): Promise<Taken> =>
    engine.coordinate({
      runId: run.id,
      ...(options.maxConcurrency ? { maxConcurrency: options.maxConcurrency } : {}),
      ...(options.worker ? { worker: options.worker } : {}),
      ...(options.tasks?.length ? { tasks: options.tasks } : {}),
      ...(join ? { join } : {}),
    });
  let taken = await take();
  // Another machine drives the run: this one joins it and runs tasks too (docs/team.md, "Every machine works").
  const whyNot = 'heldBy' in taken && !options.observe ? await engine.whyNotJoin(run.id) : 'observing';
  if ('heldBy' in taken && whyNot === undefined) {
    const joined = await take(true);
    if (!('heldBy' in joined)) {
      if (o.json)
        printJson(ctx, {
          runId: run.id,
          joined: true,
          coordinator: taken.heldBy.holder,
          epoch: joined.coordinator.leaseEpoch,
        });
      else
        o.out(
          `Run ${run.id} is driven by ${taken.heldBy.holder}; this process joins it and runs its tasks too (--observe only watches).`,
        );
      const { code, outcome } = await driveTaken(ctx, engine, run, joined);
      if (outcome.kind !== 'holder-gone') return code;
      if (o.json) o.out(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, type: 'holder-gone', runId: run.id }));
      else o.out(`The coordinator that held run ${run.id} is gone: this process takes the run over.`);
      taken = await take();
    }
  } else if ('heldBy' in taken && whyNot !== 'observing' && !o.json) {
    o.out(`This process does not join run ${run.id}: ${whyNot}.`);
  }
  if ('heldBy' in taken) {
    if (o.json) printJson(ctx, { runId: run.id, observing: true, coordinator: taken.heldBy.holder, why: taken.why });
    else
      o.out(
        `Run ${run.id} is driven by ${taken.heldBy.holder} (${taken.why}). This process observes; approve, stop and ingest from anywhere.`,
      );
    const observed = await observe(ctx, engine, run.id, take);
    if ('exitCode' in observed) return observed.exitCode;
    taken = observed.taken;
    if (o.json) o.out(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, type: 'takeover', runId: run.id }));
    else o.out(`Its coordinator let go of run ${run.id} or is gone: this process drives it now.`);
  }
  return (await driveTaken(ctx, engine, run, taken)).code;
}

async function driveTaken(
  ctx: CommandContext,
  engine: Engine,
  run: Run,
  taken: Driving,
): Promise<{ code: number; outcome: CoordinatorOutcome }> {
  const o = ctx.output;
  const { coordinator, reconcile } = taken;
  for (const entry of reconcile.entries.filter((e) => e.repair)) {
    if (o.json) o.out(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, type: 'reconcile', ...entry }));
    else
      o.out(
        `${paint(o, 'yellow', 'reconcile')} ${entry.taskId}${entry.delegationId ? ` (${entry.delegationId})` : ''}: ${entry.classification} → ${entry.repair}`,
      );
  }
  const display = new ProgressDisplay(ctx, engine, run.id);
  let shuttingDown: Promise<unknown> | undefined;
  const interrupt = (): void => {
    if (!o.json) o.err('\nStopping: ending the workers this process started…');
    shuttingDown = coordinator.shutdown('baton start interrupted');
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let outcome: CoordinatorOutcome;
  try {
    outcome = await coordinator.run();
    // The loop returns as soon as shutdown begins; the workers are ended (and recorded) before this process exits.
    await shuttingDown;
  } finally {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
    display.dispose();
  }
  // A joined coordinator whose lease holder is gone: its caller takes the run over, and tells how it ends then.
  if (outcome.kind === 'holder-gone') return { code: 0, outcome };
  const final = await engine.overview(run.id);
  const code = exitCodeFor(
    outcome,
    final.gates.filter((g) => g.status === 'open').map((g) => g.kind),
  );
  if (o.json) {
    o.out(
      JSON.stringify({
        protocolVersion: PROTOCOL_VERSION,
        type: 'outcome',
        runId: run.id,
        outcome,
        status: final.run.status,
        exitCode: code,
      }),
    );
    return { code, outcome };
  }
  const done = final.tasks.filter((t) => t.status === 'completed').length;
  const open = final.gates.filter((g) => g.status === 'open');
  o.out(`\nRun ${run.id} ${status(o, final.run.status)}: ${done}/${final.tasks.length} tasks completed.`);
  if (outcome.kind === 'paused' && outcome.stopped) {
    o.out(paint(o, 'dim', `Stopped. Continue with: baton resume --run ${run.id}`));
  } else if (outcome.kind === 'paused' && open.length > 0) {
    for (const g of open)
      o.out(`  ${paint(o, 'yellow', g.id)} ${g.kind}${g.taskId ? ` (${g.taskId})` : ''}: ${oneLine(g.reason, 110)}`);
    o.out(
      paint(o, 'dim', `Decide with baton approve <gate> / baton reject <gate>, then baton resume --run ${run.id}.`),
    );
    if (open.some((g) => g.kind === 'isolation'))
      o.out(
        paint(o, 'dim', 'An isolation gate closes by itself once its problem is fixed: commit, then baton recheck.'),
      );
    if (open.some((g) => g.kind === 'config_changed'))
      o.out(
        paint(
          o,
          'dim',
          `The run keeps its frozen worker definitions until you approve the config's (baton status --run ${run.id} shows each change).`,
        ),
      );
  } else if (outcome.kind === 'lease-lost') {
    o.out(`This process lost the coordinator lease: ${outcome.detail}`);
  } else if (outcome.kind === 'idle') {
    o.out(outcome.reason);
  }
  return { code, outcome };
}

/** How often an observer tries to take the run over: a lease can run out, or its holder die, without any event. */
const TAKEOVER_POLL_MS = 1000;

/**
 * Someone else drives the run: follow its events until it finishes or pauses — and take it
 * over as soon as its coordinator lets go (a `start --task` beside this one that is done with
 * its tasks) or its lease has run out with the holder proven gone (crashed, killed, stopped by
 * a signal). Ends with the exit code the coordinating process would have given.
 */
async function observe(
  ctx: CommandContext,
  engine: Engine,
  runId: string,
  take: () => Promise<Taken>,
): Promise<{ exitCode: number } | { taken: Driving }> {
  return new Promise((resolveObserve) => {
    let settled = false;
    let finishing = false;
    let trying: Promise<void> | undefined;
    const settle = (outcome: { exitCode: number } | { taken: Driving }): void => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      subscription.dispose();
      process.removeListener('SIGINT', interrupted);
      resolveObserve(outcome);
    };
    // A takeover under way wins over the end: once it holds the run, this process drives it.
    const finish = async (): Promise<void> => {
      finishing = true;
      await trying;
      if (settled) return;
      settle({ exitCode: await observedExitCode(engine, runId).catch(() => 1) });
    };
    const tryTakeOver = (): void => {
      if (settled || finishing || trying) return;
      trying = take()
        .then(
          (taken) => {
            if (!('heldBy' in taken)) settle({ taken });
          },
          (err: unknown) => ctx.output.err(`baton: could not take the run over: ${(err as Error).message}`),
        )
        .finally(() => (trying = undefined));
    };
    const poll = setInterval(tryTakeOver, TAKEOVER_POLL_MS);
    const subscription = engine.onEvent((e) => {
      if (e.runId !== runId || settled) return;
      if (ctx.output.json) ctx.output.out(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, ...e }));
      else ctx.output.out(formatEvent(ctx, e));
      if (
        e.type === 'run:status' &&
        ['completed', 'cancelled', 'failed', 'blocked', 'paused', 'superseded'].includes(e.data.to)
      )
        void finish();
      else if (e.type === 'coordinator:released') tryTakeOver();
    });
    const interrupted = (): void => settle({ exitCode: 0 });
    process.once('SIGINT', interrupted);
  });
}

/**
 * The exit code of the coordinating process for the state an observer saw the run end in
 * (exitCodeFor): 0 completed or cancelled, or paused with nothing to decide; 5 failed or
 * blocked; 6 paused at an integration conflict; 8 paused by a stop or at any other gate.
 */
async function observedExitCode(engine: Engine, runId: string): Promise<number> {
  const view = await engine.overview(runId);
  const status = view.run.status;
  if (status === 'running') return 0; // not reached: an observer ends on a pause or an end
  if (status !== 'paused' && status !== 'stopping') return exitCodeFor({ kind: 'finished', status });
  const open = view.gates.filter((g) => g.status === 'open').map((g) => g.kind);
  const stopped = (await engine.diagnose(runId)).stops.some((s) => s.status !== 'closed' && !s.delegationId);
  return exitCodeFor({ kind: 'paused', status, openGates: open.length, stopped }, open);
}

/**
 * Live progress. On a terminal: a line per running task with its heartbeat age, and a
 * progress bar, redrawn in place. Otherwise: one line per event (NDJSON with --json).
 */
class ProgressDisplay {
  private readonly subscription;
  private readonly timer: NodeJS.Timeout | undefined;
  private drawnLines = 0;
  private drawing = false;

  constructor(
    private readonly ctx: CommandContext,
    private readonly engine: Engine,
    private readonly runId: string,
  ) {
    const live = Boolean(process.stdout.isTTY) && !ctx.output.json;
    this.subscription = engine.onEvent((e) => this.onEvent(e, live));
    this.timer = live ? setInterval(() => void this.draw(), 500) : undefined;
  }

  private onEvent(e: EngineEvent, live: boolean): void {
    if (e.runId !== this.runId) return;
    if (this.ctx.output.json) this.ctx.output.out(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, ...e }));
    else if (!live) this.ctx.output.out(formatEvent(this.ctx, e));
    else if (e.type !== 'runtime:heartbeat' && e.type !== 'task:status') {
      this.clear();
      this.ctx.output.out(formatEvent(this.ctx, e));
      void this.draw();
    }
  }

  private clear(): void {
    if (this.drawnLines > 0) process.stdout.write(`\u001b[${this.drawnLines}F\u001b[J`);
    this.drawnLines = 0;
  }

  private async draw(): Promise<void> {
    if (this.drawing) return;
    this.drawing = true;
    try {
      const view = await this.engine.overview(this.runId);
      const now = this.engine.now();
      const o = this.ctx.output;
      const total = view.tasks.length;
      const done = view.tasks.filter((t) => t.status === 'completed').length;
      const width = 30;
      const filled = total ? Math.round((done / total) * width) : 0;
      const lines = [
        `${paint(o, 'green', '█'.repeat(filled))}${paint(o, 'dim', '░'.repeat(width - filled))} ${done}/${total} completed  ${status(o, view.run.status)}`,
      ];
      for (const r of view.runtimes.filter(
        (rt) => rt.status === 'claimed' || rt.status === 'active' || rt.status === 'stale',
      )) {
        const d = view.delegations.find((x) => x.id === r.delegationId);
        const live = describeLiveness(r, now);
        const seen = live.state === 'stale' ? live.lease : live.summary;
        lines.push(
          `  ${paint(o, 'cyan', '▶')} ${d?.taskId ?? '?'} ${r.delegationId}  ${seen}  ${status(o, live.state)}  ${oneLine(r.progress ?? '', 50)}`,
        );
      }
      this.clear();
      process.stdout.write(`${lines.join('\n')}\n`);
      this.drawnLines = lines.length;
    } catch {
      // the store is closing
    } finally {
      this.drawing = false;
    }
  }

  dispose(): void {
    this.subscription.dispose();
    if (this.timer) clearInterval(this.timer);
    this.clear();
  }
}
