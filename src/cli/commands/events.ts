import { Engine, type EngineEvent } from '../../engine/index';
import { PROTOCOL_VERSION, printJson, withEngine, type CommandContext } from '../context';
import { oneLine, paint, timestamp } from '../render';

/**
 * Prints a run's event log. With --follow it keeps printing as events arrive from any
 * process (NDJSON with --json), until interrupted.
 */
export async function events(ctx: CommandContext, options: { run?: string; follow?: boolean; after?: number }): Promise<void> {
  if (!Engine.hasStore(ctx.workspace) && !options.follow) {
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
    { follow: Boolean(options.follow) },
  );
}

export function formatEvent(ctx: CommandContext, e: EngineEvent): string {
  const o = ctx.output;
  const d = e.data;
  const text = (key: string): string => (typeof d[key] === 'string' ? oneLine(d[key] as string, 100) : '');
  let what: string;
  switch (e.type) {
    case 'run:created':
      what = `run created from ${text('planPath')} (${String(d.tasks)} tasks)`;
      break;
    case 'run:status':
    case 'task:status':
    case 'delegation:status':
      what = `${text('delegationId') || text('taskId') || 'run'} ${text('from')} → ${text('to')}${d.reason ? `  (${text('reason')})` : ''}`;
      break;
    case 'delegation:created':
      what = `${text('delegationId')} queued (task ${text('taskId')}, attempt ${String(d.attempt)})`;
      break;
    case 'delegation:claimed':
      what = `${text('delegationId')} claimed by runtime ${text('runtimeId')} (epoch ${String(d.epoch)})`;
      break;
    case 'runtime:heartbeat':
      what = `${text('runtimeId')} heartbeat ${String(d.heartbeatCount)}${d.progress ? `: ${text('progress')}` : ''}`;
      break;
    case 'runtime:stale':
      what = `${text('runtimeId')} went stale (${text('delegationId')})`;
      break;
    case 'gate:opened':
      what = `${text('gateId')} opened (${text('kind')}): ${text('reason')}`;
      break;
    case 'gate:decided':
      what = `${text('gateId')} ${text('decision')} by ${text('by')}${d.note ? `: ${text('note')}` : ''}`;
      break;
    case 'gate:updated':
      what = `${text('gateId')} updated: ${text('reason')}`;
      break;
    case 'ingestion:recorded':
      what = `${text('ingestionId')} ${d.accepted ? `accepted ${text('resultStatus')}` : `rejected (${String(d.issues)} issues)`} for ${text('delegationId')}`;
      break;
    case 'verification:receipt':
      what = `${text('delegationId')} \`${Array.isArray(d.command) ? (d.command as string[]).join(' ') : ''}\` ${d.timedOut ? 'timed out' : `exited ${String(d.exitCode)}`} (${String(d.durationMs)} ms)`;
      break;
    case 'coordinator:acquired':
      what = `coordinated by ${text('holder')} (epoch ${String(d.epoch)})${d.tookOverFrom ? `, taking over from ${text('tookOverFrom')}` : ''}`;
      break;
    case 'coordinator:released':
      what = `coordinator (epoch ${String(d.epoch)}) let go`;
      break;
    case 'stop:requested':
      what = `${text('stopId')} ${text('mode')} stop of ${text('delegationId') || 'the run'} requested by ${text('by')}`;
      break;
    case 'stop:applied':
      what = `${text('stopId')} applied to ${String(d.attempts)} attempt(s)${d.confirmed ? '' : '; some termination NOT confirmed'}`;
      break;
    case 'run:resumed':
      what = 'run resumed';
      break;
    case 'integration:committed':
      what = `${text('delegationId')} committed as ${text('sourceHead').slice(0, 8)} (${String(d.changedFiles)} file(s) changed)`;
      break;
    case 'integration:done':
      what = `${text('delegationId')} ${d.alreadyOnTarget ? 'was already on the target' : `integrated by ${text('strategy')}`}: ${text('targetBefore').slice(0, 8)} → ${text('targetAfter').slice(0, 8)}`;
      break;
    default:
      what = oneLine(JSON.stringify(d), 100);
  }
  const seq = e.seq !== undefined ? String(e.seq).padStart(4) : '   ·';
  return `${paint(o, 'dim', `${seq} ${timestamp(e.at)}`)}  ${paint(o, 'cyan', e.type.padEnd(19))} ${what}`;
}
