import { relative } from 'node:path';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { bytes, paint, table } from '../render';

/** `baton cleanup --run`: removes the worktrees and branches of attempts that are over; says what it kept and why. */
export async function cleanup(ctx: CommandContext, runId: string | undefined): Promise<void> {
  // Refused before the engine opens (and would create) a store.
  requireStore(ctx);
  await withEngine(ctx, async (engine) => {
    const report = await engine.cleanupWorktrees(runId);
    if (ctx.output.json) return printJson(ctx, { ...report });
    const o = ctx.output;
    const shown = (path: string): string => (path.startsWith(ctx.workspace) ? relative(ctx.workspace, path) : path);
    if (report.removed.length === 0 && report.kept.length === 0) {
      o.out(`Run ${report.runId} has no worktrees to clean up.`);
      return;
    }
    const rows = [
      ...report.removed.map((r) => [
        paint(o, 'green', 'removed'),
        r.delegationId ?? '-',
        shown(r.path),
        bytes(r.bytes),
        r.finding,
      ]),
      ...report.kept.map((k) => [paint(o, 'yellow', 'kept'), k.delegationId ?? '-', shown(k.path), '-', k.finding]),
    ];
    o.out(table(o, ['', 'DELEGATION', 'WORKTREE', 'SIZE', 'WHY'], rows));
    o.out(`Freed ${bytes(report.freedBytes)}.`);
  });
}
