import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { BatonError, formatIssue, hasErrors, parseConfig, parsePlan, type Issue } from '../../engine/index';
import { printJson, type CommandContext } from '../context';
import { paint } from '../render';

/** Validates a plan (or, for a .json file, a Baton config). Exit 2 when it has errors. */
export function validate(ctx: CommandContext, file: string): number {
  const absolute = resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    throw new BatonError(
      'validate.unreadable',
      `Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  const display = relative(process.cwd(), absolute) || file;
  const isConfig = absolute.endsWith('.json');
  let issues: Issue[];
  let summary: Record<string, unknown>;
  if (isConfig) {
    const parsed = parseConfig(text);
    issues = parsed.issues;
    summary = { kind: 'config', config: parsed.config };
  } else {
    const parsed = parsePlan(text);
    issues = parsed.issues;
    summary = {
      kind: 'plan',
      tasks: parsed.tasks.map((t) => ({
        id: t.id,
        title: t.title,
        agent: t.agent,
        depends: t.depends,
        risk: t.risk,
        line: t.range.start.line,
      })),
    };
  }
  const valid = !hasErrors(issues);
  if (ctx.output.json) {
    printJson(ctx, { file: display, valid, ...summary, issues });
  } else {
    for (const i of issues)
      ctx.output.out(paint(ctx.output, i.severity === 'error' ? 'red' : 'yellow', formatIssue(i, display)));
    const errors = issues.filter((i) => i.severity === 'error').length;
    const warnings = issues.length - errors;
    const what = isConfig
      ? 'config'
      : `plan with ${(summary.tasks as unknown[]).length} task${(summary.tasks as unknown[]).length === 1 ? '' : 's'}`;
    ctx.output.out(
      valid
        ? `${paint(ctx.output, 'green', '✓')} ${display}: valid ${what}${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`
        : `${paint(ctx.output, 'red', '✗')} ${display}: ${errors} error${errors === 1 ? '' : 's'}${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`,
    );
  }
  return valid ? 0 : 2;
}
