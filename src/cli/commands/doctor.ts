import { Engine } from '../../engine/index';
import { printJson, type CommandContext } from '../context';
import { paint } from '../render';

/** Exit 7 (runtime not qualified) when a check fails: something a run needs is missing. */
const NOT_QUALIFIED = 7;

/** `baton doctor`: what a run needs before it starts, one line per check; nothing is changed. */
export async function doctor(ctx: CommandContext, planPath?: string): Promise<number> {
  const checks = await Engine.doctor({ workspace: ctx.workspace, ...(planPath ? { planPath } : {}) });
  const failed = checks.filter((c) => c.status === 'fail').length;
  if (ctx.output.json) {
    printJson(ctx, { workspace: ctx.workspace, ok: failed === 0, checks });
    return failed ? NOT_QUALIFIED : 0;
  }
  const o = ctx.output;
  const mark = { ok: paint(o, 'green', '✓'), warn: paint(o, 'yellow', '!'), fail: paint(o, 'red', '✗') };
  const width = Math.max(...checks.map((c) => c.name.length));
  for (const check of checks) {
    const [first = '', ...rest] = check.detail.split('\n');
    o.out(`${mark[check.status]} ${check.name.padEnd(width)}  ${first}`);
    for (const line of rest) o.out(`  ${' '.repeat(width)}  ${line}`);
  }
  const warned = checks.filter((c) => c.status === 'warn').length;
  o.out(
    failed
      ? `\n${failed} check${failed === 1 ? '' : 's'} failed: a run cannot start until ${failed === 1 ? 'it is' : 'they are'} fixed.`
      : `\nReady to run${warned ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}.`,
  );
  return failed ? NOT_QUALIFIED : 0;
}
