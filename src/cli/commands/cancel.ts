import { BatonError, counted } from '../../engine/index';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { paint } from '../render';

/**
 * `baton cancel`: ends a run for good — an immediate stop (every worker ended, and proven
 * gone), then its gates closed, its attempts and tasks cancelled, the run `cancelled`.
 * Exit 1 when the end of some worker could not be confirmed, as for `baton stop`.
 */
export async function cancel(ctx: CommandContext, options: { run?: string; note?: string }): Promise<number> {
  requireStore(ctx, () => new BatonError('run.unknown', 'There is no run yet; there is nothing to cancel.'));
  return withEngine(ctx, async (engine) => {
    const run = await engine.getRun(options.run);
    const outcome = await engine.cancelRun({ runId: run.id, ...(options.note ? { note: options.note } : {}) });
    const report = outcome.stop?.report ?? [];
    const unconfirmed = report.filter((e) => !e.confirmed);
    const code = unconfirmed.length > 0 ? 1 : 0;
    if (ctx.output.json) {
      printJson(ctx, { ...outcome, exitCode: code });
      return code;
    }
    const o = ctx.output;
    if (outcome.alreadyCancelled) {
      o.out(`Run ${run.id} was already cancelled; nothing changed.`);
      return 0;
    }
    o.out(
      `Cancelled run ${paint(o, 'bold', run.id)} (was ${outcome.from}): ${counted(outcome.attemptsCancelled.length, 'attempt')} and ${counted(outcome.tasksCancelled, 'task')} cancelled, ${counted(outcome.gatesClosed, 'gate')} closed.`,
    );
    for (const entry of report) {
      const mark = entry.confirmed ? paint(o, 'green', '✓') : paint(o, 'red', '✗');
      const detail =
        entry.note ??
        (entry.confirmed
          ? `${entry.processes.length} process(es) ended, confirmed gone`
          : `still alive: ${entry.survivors.join(', ')}`);
      o.out(`  ${mark} ${entry.delegationId}: ${detail}`);
    }
    return code;
  });
}
