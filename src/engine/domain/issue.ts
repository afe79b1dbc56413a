/**
 * Every validation in Baton (plan, result artifact, config, message) returns issues
 * instead of throwing. Positions are 1-based (line and column as editors and
 * compilers print them); adapters convert to their own convention.
 */
export interface Position {
  line: number;
  column: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export type IssueSeverity = 'error' | 'warning';

export interface Issue {
  /** Stable, dotted code, e.g. `plan.duplicate-id`; documented in docs/. */
  code: string;
  severity: IssueSeverity;
  /** The field the issue is about (`tasks[2].depends`, `status`), or '' for the whole document. */
  field: string;
  message: string;
  recommendation: string;
  range?: Range;
  /** The file the range points into, when it is not the document being validated. */
  file?: string;
}

export function hasErrors(issues: readonly Issue[]): boolean {
  return issues.some((i) => i.severity === 'error');
}

export function issue(
  code: string,
  field: string,
  message: string,
  recommendation: string,
  range?: Range,
  severity: IssueSeverity = 'error',
): Issue {
  return range
    ? { code, severity, field, message, recommendation, range }
    : { code, severity, field, message, recommendation };
}

/** `file:line:column: severity code message` — how the CLI prints one issue. */
export function formatIssue(i: Issue, file?: string): string {
  const where = i.range
    ? `${i.file ?? file ?? ''}:${i.range.start.line}:${i.range.start.column}`
    : (i.file ?? file ?? '');
  return `${where ? where + ': ' : ''}${i.severity} ${i.code}: ${i.message}${i.recommendation ? ` (${i.recommendation})` : ''}`;
}
