import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { paint, table } from '../render';

/**
 * `baton reconcile`: classify every task from the evidence and repair what can be proven. Beside a live coordinator it
 * only reports, and exits 3 (an ownership conflict, as the task-executor seed says): nothing was repaired, the run is
 * another process's to repair.
 */
export async function reconcile(ctx: CommandContext, runId: string | undefined): Promise<number> {
  // Refused before the engine opens (and would create) a store.
  requireStore(ctx);
  return withEngine(ctx, async (engine) => {
    const run = await engine.getRun(runId);
    const report = await engine.reconcile(run.id);
    const exitCode = report.reportOnly ? 3 : 0;
    if (ctx.output.json) {
      printJson(ctx, { ...report, exitCode });
      return exitCode;
    }
    const o = ctx.output;
    if (report.reportOnly)
      o.out(paint(o, 'yellow', `Run ${run.id} is driven by ${report.coordinator}; reporting only, nothing changed.`));
    o.out(
      table(
        o,
        ['TASK', 'DELEGATION', 'EVIDENCE', 'REPAIR'],
        report.entries.map((e) => [
          e.taskId,
          e.delegationId ?? '-',
          e.classification,
          e.repair ? paint(o, 'green', e.repair) : '-',
        ]),
      ),
    );
    return exitCode;
  });
}
