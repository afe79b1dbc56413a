import { describeEvent, Engine, type EngineEvent } from '../../engine/index';
import { PROTOCOL_VERSION, printJson, READING, requireStore, withEngine, type CommandContext } from '../context';
import { paint, timestamp } from '../render';

/**
 * Prints a run's event log. With --follow it keeps printing as events arrive from any
 * process (NDJSON with --json), until interrupted.
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
      let seen = backlog.reduce((max, e) => Math.max(max, e.id), 0);
      backlog.forEach(print);
      await new Promise<void>((resolveFollow) => {
        // The engine's file watch and poll timer do not keep a process alive; following does.
        const keepAlive = setInterval(() => undefined, 1 << 30);
        const subscription = engine.onEvent((e) => {
          if (e.runId !== run.id) return;
          if (e.id !== undefined) {
            if (e.id <= seen) return;
            seen = e.id;
          }
          print(e);
        });
        const stop = (): void => {
          clearInterval(keepAlive);
          subscription.dispose();
          resolveFollow();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    },
    { ...READING, follow: Boolean(options.follow) },
  );
}

export function formatEvent(ctx: CommandContext, e: EngineEvent): string {
  const o = ctx.output;
  const what = describeEvent(e);
  const seq = e.seq !== undefined ? String(e.seq).padStart(4) : '   ·';
  return `${paint(o, 'dim', `${seq} ${timestamp(e.at)}`)}  ${paint(o, 'cyan', e.type.padEnd(19))} ${what}`;
}
