import { describeEvent, Engine, isFinishedRun, type EngineEvent, type Run, type RunStatus } from '../../engine/index';
import { PROTOCOL_VERSION, printJson, READING, requireStore, withEngine, type CommandContext } from '../context';
import { paint, timestamp } from '../render';

/**
 * Prints a run's event log. With --follow it keeps printing as events arrive from any
 * process (NDJSON with --json), until interrupted: when a newer run of the same plan starts it
 * moves on to it, saying so; a run named with --run is followed until it finishes.
 */
export async function events(
  ctx: CommandContext,
  options: { run?: string; follow?: boolean; after?: number },
): Promise<void> {
  // --follow without a store is refused (run.unknown) before the engine opens (and would create) one.
  if (options.follow) requireStore(ctx);
  if (!Engine.hasStore(ctx.workspace)) {
    if (ctx.output.json) printJson(ctx, { events: [] });
    else ctx.output.out('No events: there is no Baton run here yet.');
    return;
  }
  await withEngine(
    ctx,
    async (engine) => {
      const run = await engine.getRun(options.run);
      const backlog = await engine.listEvents(run.id, options.after ?? 0);
      if (!options.follow) {
        if (ctx.output.json) return printJson(ctx, { runId: run.id, events: backlog });
        for (const e of backlog) ctx.output.out(formatEvent(ctx, e));
        return;
      }
      const print = (e: EngineEvent): void => {
        if (ctx.output.json) ctx.output.out(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, ...e }));
        else ctx.output.out(formatEvent(ctx, e));
      };
      const say = (line: string): void => {
        if (!ctx.output.json) ctx.output.out(paint(ctx.output, 'dim', line));
      };
      let following: Pick<Run, 'id' | 'planPath'> = run;
      let seen = backlog.reduce((max, e) => Math.max(max, e.id), 0);
      backlog.forEach(print);
      if (options.run !== undefined && isFinishedRun(run.status))
        return say(`Run ${run.id} ${run.status}; nothing more will happen in it.`);
      await new Promise<void>((resolveFollow) => {
        // The engine's file watch and poll timer do not keep a process alive; following does.
        const keepAlive = setInterval(() => undefined, 1 << 30);
        // While a newer run's backlog is read, its live events wait here (printed after it, none twice).
        let held: EngineEvent[] | undefined;
        const take = (e: EngineEvent): void => {
          if (e.id !== undefined) {
            if (e.id <= seen) return;
            seen = e.id;
          }
          print(e);
        };
        const moveTo = async (next: Pick<Run, 'id' | 'planPath'>): Promise<void> => {
          following = next;
          held = [];
          say(`Run ${next.id} of ${next.planPath} started: following it.`);
          seen = 0;
          for (const e of await engine.listEvents(next.id)) take(e);
          const waiting = held;
          held = undefined;
          waiting.forEach(take);
        };
        const subscription = engine.onEvent((e) => {
          const next = nextFollowStep(following, e, { pinned: options.run !== undefined });
          if (next.kind === 'skip') return;
          if (next.kind === 'move') return void moveTo(next.run).catch(stop);
          if (held) return void held.push(e);
          take(e);
          if (next.kind === 'end') {
            say(`Run ${following.id} ${next.status}; nothing more will happen in it.`);
            stop();
          }
        });
        function stop(): void {
          clearInterval(keepAlive);
          subscription.dispose();
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolveFollow();
        }
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    },
    { ...READING, follow: Boolean(options.follow) },
  );
}

type FollowStep =
  { kind: 'print' | 'skip' } | { kind: 'move'; run: Pick<Run, 'id' | 'planPath'> } | { kind: 'end'; status: RunStatus };

/**
 * What `events --follow` does with an event: print it (the followed run's), skip it (another run's), move on to a
 * newer run of the same plan when one starts (a new run or a replan: the log a person watches is the plan's), or —
 * when a run named with --run finishes — print it and end (nothing more will happen in that run).
 */
export function nextFollowStep(
  following: Pick<Run, 'id' | 'planPath'>,
  e: Pick<EngineEvent, 'runId' | 'type' | 'data'>,
  options: { pinned: boolean },
): FollowStep {
  if (e.runId !== following.id) {
    const planPath = e.type === 'run:created' ? (e.data as { planPath?: unknown }).planPath : undefined;
    return !options.pinned && planPath === following.planPath && e.runId
      ? { kind: 'move', run: { id: e.runId, planPath } }
      : { kind: 'skip' };
  }
  const to = e.type === 'run:status' ? (e.data as { to?: RunStatus }).to : undefined;
  return options.pinned && to && isFinishedRun(to) ? { kind: 'end', status: to } : { kind: 'print' };
}

export function formatEvent(ctx: CommandContext, e: EngineEvent): string {
  const o = ctx.output;
  const what = describeEvent(e);
  const seq = e.seq !== undefined ? String(e.seq).padStart(4) : '   ·';
  return `${paint(o, 'dim', `${seq} ${timestamp(e.at)}`)}  ${paint(o, 'cyan', e.type.padEnd(19))} ${what}`;
}
