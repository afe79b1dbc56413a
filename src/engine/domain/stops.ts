import type { StopMode } from './types';

export interface StopRequest {
  id: string;
  runId: string;
  delegationId?: string;
  mode: StopMode;
  status: 'requested' | 'applied' | 'closed';
  requestedAt: number;
  requestedBy: string;
  appliedAt?: number;
  report: StopReportEntry[];
}

/** What happened to one in-flight attempt when a stop was applied. */
export interface StopReportEntry {
  delegationId: string;
  /** Every process of the worker that was found and signalled. */
  processes: number[];
  /** True when, after TERM, the grace period and KILL, none of them is alive. */
  confirmed: boolean;
  survivors: number[];
  note?: string;
}

/** A stop's entry for an attempt, with what ending its verify commands found added to what ending its worker found. */
export function withVerifyProcesses(entry: StopReportEntry, verifies: readonly StopReportEntry[]): StopReportEntry {
  const mine = verifies.filter((v) => v.delegationId === entry.delegationId);
  if (mine.length === 0) return entry;
  return {
    ...entry,
    processes: [...entry.processes, ...mine.flatMap((v) => v.processes)],
    survivors: [...entry.survivors, ...mine.flatMap((v) => v.survivors)],
    confirmed: entry.confirmed && mine.every((v) => v.confirmed),
  };
}
