import fc from 'fast-check';
import assert from 'node:assert/strict';
import type { Range } from '../../../src/engine/domain/issue';

/**
 * Edits for property tests of the markdown parsers: characters and whole lines
 * inserted, deleted, replaced, duplicated and swapped, biased towards the
 * characters that matter to fences and YAML.
 */
export type TextMutation =
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'replace'; at: number; text: string }
  | { kind: 'deleteLine'; at: number }
  | { kind: 'duplicateLine'; at: number }
  | { kind: 'swapLines'; at: number; other: number };

const snippet = fc.constantFrom(
  '`',
  '```',
  '````',
  '~~~',
  '\n',
  '\r\n',
  '\r',
  ' ',
  '    ',
  '\t',
  '-',
  '- ',
  ':',
  ': ',
  '[',
  ']',
  '{',
  '}',
  '"',
  "'",
  '#',
  '&a ',
  '*a',
  '!!str ',
  '!!int ',
  '|',
  '>',
  '? ',
  '---\n',
  'id: ',
  'depends: ',
  'T1',
  'T2',
  'x y',
  ',',
  '<!--',
  '-->',
  '```baton-task\n',
  '```baton-result\n',
  '```sdd-result\n',
  'verify:\n  - ',
  'status: ',
  'PASS',
  '\\',
  '%YAML 1.2\n',
  'é',
  '\u0000',
  '\uFEFF',
  '\u2028',
  '😀',
);

export const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(snippet, fc.string({ maxLength: 6, unit: 'binary-ascii' })),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), text: snippet }),
  fc.record({ kind: fc.constant('deleteLine' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('duplicateLine' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('swapLines' as const), at: fc.nat(), other: fc.nat() }),
);

export function applyMutation(text: string, m: TextMutation): string {
  const pos = text.length === 0 ? 0 : m.at % (text.length + 1);
  const lines = text.split('\n');
  const line = m.at % lines.length;
  switch (m.kind) {
    case 'insert':
      return text.slice(0, pos) + m.text + text.slice(pos);
    case 'delete':
      return text.slice(0, pos) + text.slice(pos + m.length);
    case 'replace':
      return text.slice(0, pos) + m.text + text.slice(pos + 1);
    case 'deleteLine':
      lines.splice(line, 1);
      return lines.join('\n');
    case 'duplicateLine':
      lines.splice(line, 0, lines[line] ?? '');
      return lines.join('\n');
    case 'swapLines': {
      const other = m.other % lines.length;
      const a = lines[line] ?? '';
      lines[line] = lines[other] ?? '';
      lines[other] = a;
      return lines.join('\n');
    }
  }
}

/** A valid text with 1–4 random edits applied. */
export function mutatedText(base: string): fc.Arbitrary<string> {
  return fc.array(textMutation, { minLength: 1, maxLength: 4 }).map((ms) => ms.reduce(applyMutation, base));
}

/**
 * Fails unless the range lies inside the text: 1-based lines that exist, columns up to one past the line's end, start
 * before end.
 */
export function assertRangeInBounds(text: string, range: Range | undefined, what: string): void {
  assert.ok(range, `${what}: has no range`);
  const lines = text.split('\n');
  for (const p of [range.start, range.end]) {
    assert.ok(
      Number.isInteger(p.line) && p.line >= 1 && p.line <= lines.length,
      `${what}: line ${p.line} outside 1..${lines.length}`,
    );
    const length = (lines[p.line - 1] ?? '').length;
    assert.ok(
      Number.isInteger(p.column) && p.column >= 1 && p.column <= length + 1,
      `${what}: column ${p.column} outside 1..${length + 1} on line ${p.line}`,
    );
  }
  const ordered =
    range.start.line < range.end.line ||
    (range.start.line === range.end.line && range.start.column <= range.end.column);
  assert.ok(ordered, `${what}: starts after it ends`);
}

/** The text a (1-based, end-exclusive) range covers. */
export function textAt(text: string, range: Range): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  const offset = (p: Range['start']): number => (starts[p.line - 1] ?? 0) + p.column - 1;
  return text.slice(offset(range.start), offset(range.end));
}
