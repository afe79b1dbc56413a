import { type StopMode } from '../../engine/index';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { paint } from '../render';

/** `baton stop`: graceful (finish in-flight work, dispatch nothing new) or immediate (end it now, and prove it). */
export async function stop(
  ctx: CommandContext,
  options: { run?: string; mode: StopMode; delegation?: string },
): Promise<number> {
  // Refused before the engine opens (and would create) a store.
  requireStore(ctx);
  return withEngine(ctx, async (engine) => {
    const run = await engine.getRun(options.run);
    const { request, repeated, appliedBy } = await engine.requestStop({
      runId: run.id,
      mode: options.mode,
      ...(options.delegation ? { delegationId: options.delegation } : {}),
    });
    const unconfirmed = request.report.filter((e) => !e.confirmed && !e.note?.includes('graceful'));
    if (ctx.output.json) {
      printJson(ctx, { request, repeated, appliedBy });
      return unconfirmed.length > 0 ? 1 : 0;
    }
    const o = ctx.output;
    const what = request.delegationId ? `delegation ${request.delegationId}` : `run ${run.id}`;
    if (repeated)
      o.out(
        `${what} was already asked to stop (${request.id}, ${request.mode}, by ${request.requestedBy}); nothing new was done.`,
      );
    else
      o.out(
        `Stop ${request.id} (${request.mode}) for ${what}: ${appliedBy === 'pending' ? 'recorded; the coordinator has not applied it yet' : `applied by ${appliedBy}`}.`,
      );
    for (const entry of request.report) {
      const mark = entry.confirmed ? paint(o, 'green', '✓') : paint(o, 'red', '✗');
      const detail =
        entry.note ??
        (entry.confirmed
          ? `${entry.processes.length} process(es) ended, confirmed gone`
          : `still alive: ${entry.survivors.join(', ')}`);
      o.out(`  ${mark} ${entry.delegationId}: ${detail}`);
    }
    return unconfirmed.length > 0 ? 1 : 0;
  });
}
