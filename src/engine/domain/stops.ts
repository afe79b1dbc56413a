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
