import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { paint, table } from '../render';

/** `baton reconcile`: classify every task from the evidence and repair what can be proven. */
export async function reconcile(ctx: CommandContext, runId: string | undefined): Promise<void> {
  // Refused before the engine opens (and would create) a store.
  requireStore(ctx);
  await withEngine(ctx, async (engine) => {
    const run = await engine.getRun(runId);
    const report = await engine.reconcile(run.id);
    if (ctx.output.json) return printJson(ctx, { ...report });
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
  });
}
