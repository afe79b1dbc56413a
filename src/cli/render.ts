/** Human output: plain tables, colour only on a TTY (and never with NO_COLOR). */
export interface Output {
  json: boolean;
  color: boolean;
  out(text: string): void;
  err(text: string): void;
}

export function createOutput(json: boolean): Output {
  const color = !json && Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
  return {
    json,
    color,
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  };
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, dim: 2, bold: 1 } as const;
export type Colour = keyof typeof CODES;

export function paint(output: Output, colour: Colour, text: string): string {
  return output.color ? `\u001b[${CODES[colour]}m${text}\u001b[0m` : text;
}

const STATUS_COLOURS: Record<string, Colour> = {
  completed: 'green',
  COMPLETED: 'green',
  approved: 'green',
  active: 'green',
  alive: 'green',
  running: 'cyan',
  RUNNING: 'cyan',
  claimed: 'cyan',
  ready: 'blue',
  pending: 'dim',
  PENDING: 'dim',
  gated: 'yellow',
  paused: 'yellow',
  open: 'yellow',
  BLOCKED: 'yellow',
  blocked: 'yellow',
  gone: 'yellow',
  stale: 'magenta',
  STALE: 'magenta',
  failed: 'red',
  FAILED: 'red',
  rejected: 'red',
  cancelled: 'dim',
  CANCELLED: 'dim',
  terminal: 'dim',
};

export function status(output: Output, value: string): string {
  const colour = STATUS_COLOURS[value];
  return colour ? paint(output, colour, value) : value;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;
const visibleLength = (s: string): number => s.replace(ANSI, '').length;

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(output: Output, headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visibleLength(r[i] ?? ''))));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) =>
        i === cells.length - 1 ? cell : cell + ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(cell))),
      )
      .join('  ')
      .trimEnd();
  return [paint(output, 'bold', line(headers)), ...rows.map(line)].join('\n');
}

/** "12s", "3m 04s", "2h 05m" — how long ago or how long to go, written as the editor writes it (protocol/time.ts). */
export { formatDuration as duration } from '../protocol/time';

export function timestamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** One line of untrusted text (titles, progress): no control characters reach the terminal. */
export { oneLine } from '../engine/index';

/** A size for people: 812 B, 4.0 KiB, 1.3 MiB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Dollars as agents are billed: four decimals below a dollar. */
export function usd(amount: number): string {
  return amount < 1 ? `$${amount.toFixed(4)}` : `$${amount.toFixed(2)}`;
}

export function tokens(n: number): string {
  return n.toLocaleString('en-US');
}
