/** Summary of repeated measurements: the median is the figure, min and max show the spread. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, samples: [] };
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples: [...samples] };
}

/** Rounds a rate for a table: 3 significant figures, thousands separated. */
export function formatRate(value: number): string {
  if (!Number.isFinite(value)) return '—';
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function formatSummary(summary: Summary): string {
  return `${formatRate(summary.median)} (${formatRate(summary.min)}–${formatRate(summary.max)})`;
}

/** Milliseconds since an arbitrary origin, monotonic. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The value below which `p` percent of the samples lie (nearest rank). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** A summary with the 95th percentile, for latencies. */
export function summarizeWithP95(values: readonly number[]): Summary & { p95: number } {
  return { ...summarize(values), p95: percentile(values, 95) };
}
