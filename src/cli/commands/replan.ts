import { resolve } from 'node:path';
import { BatonError } from '../../engine/index';
import { printJson, withEngine, type CommandContext } from '../context';
import { paint } from '../render';

/** Parses `--map old=new` (and `old=` to drop a task). */
export function parseMapping(entries: readonly string[]): Record<string, string | null> {
  const mapping: Record<string, string | null> = {};
  for (const entry of entries) {
    const match = /^([^=\s]+)=([^=\s]*)$/.exec(entry);
    if (!match)
      throw new BatonError('replan.bad-map', `--map ${entry}: expected old=new (or old= to drop the old task).`);
    mapping[match[1]!] = match[2] ? match[2] : null;
  }
  return mapping;
}

/** `baton replan`: a new run from a new plan, carrying the old run's completed work over. */
export async function replan(
  ctx: CommandContext,
  options: { run?: string; plan: string; map?: string[] },
): Promise<void> {
  const mapping = parseMapping(options.map ?? []);
  await withEngine(ctx, async (engine) => {
    const old = await engine.getRun(options.run);
    const outcome = await engine.replan({ runId: old.id, planPath: resolve(options.plan), mapping });
    if (ctx.output.json) return printJson(ctx, { supersededRun: old.id, run: outcome.run, carried: outcome.carried });
    const o = ctx.output;
    o.out(`Run ${old.id} is superseded by ${paint(o, 'bold', outcome.run.id)} (${outcome.run.planPath}).`);
    for (const c of outcome.carried)
      o.out(
        `  ${paint(o, 'green', '✓')} ${c.to}: completed, carried over from ${old.id}/${c.from}${c.delegationId ? ` (${c.delegationId})` : ''}`,
      );
    if (outcome.carried.length === 0) o.out('  No completed work carried over.');
    o.out(paint(o, 'dim', `Continue it with: baton resume --run ${outcome.run.id}`));
  });
}
