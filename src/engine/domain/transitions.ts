import type { DelegationStatus, GateStatus, RuntimeStatus, TaskStatus } from './types';

/**
 * Legal delegation transitions. A terminal delegation is never reopened: a retry is a new
 * delegation with the next attempt number. BLOCKED is not terminal: it waits on a gate or
 * on a corrected artifact.
 */
export const DELEGATION_TRANSITIONS: Readonly<Record<DelegationStatus, readonly DelegationStatus[]>> = {
  PENDING: ['RUNNING', 'CANCELLED'],
  RUNNING: ['COMPLETED', 'FAILED', 'BLOCKED', 'STALE', 'CANCELLED'],
  BLOCKED: ['COMPLETED', 'FAILED', 'CANCELLED'],
  COMPLETED: [],
  FAILED: [],
  CANCELLED: [],
  STALE: [],
};

export const TERMINAL_DELEGATION_STATUSES: readonly DelegationStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'STALE'];

export function isTerminalDelegation(status: DelegationStatus): boolean {
  return TERMINAL_DELEGATION_STATUSES.includes(status);
}

export function canTransitionDelegation(from: DelegationStatus, to: DelegationStatus): boolean {
  return DELEGATION_TRANSITIONS[from].includes(to);
}

/**
 * Legal task transitions (docs/architecture.md, "Tasks and the run"). A task waits (`pending`
 * on its dependencies, `gated` on a decision), is dispatched (`ready` → `running`), waits for
 * its verification and integration (`verifying`), and ends `completed`, `failed`, `blocked`
 * (something it depends on cannot complete) or `cancelled`. A replan carries completion to a
 * task of the new run that never ran. The ends are final: a new try of a failed task is a
 * new run (replan). A move to the same status changes only its reason.
 */
export const TASK_TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ['pending', 'ready', 'gated', 'running', 'completed', 'blocked', 'cancelled'],
  ready: ['ready', 'pending', 'gated', 'running', 'completed', 'failed', 'blocked', 'cancelled'],
  gated: ['gated', 'ready', 'pending', 'running', 'verifying', 'completed', 'failed', 'blocked', 'cancelled'],
  running: ['running', 'ready', 'gated', 'verifying', 'completed', 'failed', 'cancelled'],
  verifying: ['verifying', 'ready', 'gated', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  blocked: [],
  skipped: [],
  cancelled: [],
};

export function canTransitionTask(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_TRANSITIONS[from].includes(to);
}

export const GATE_TRANSITIONS: Readonly<Record<GateStatus, readonly GateStatus[]>> = {
  open: ['approved', 'rejected', 'answered'],
  approved: [],
  rejected: [],
  answered: [],
};

export function canTransitionGate(from: GateStatus, to: GateStatus): boolean {
  return GATE_TRANSITIONS[from].includes(to);
}

export interface RuntimeFacts {
  delegationStatus: DelegationStatus;
  heartbeatCount: number;
  leaseExpiresAt: number;
  endedAt?: number | undefined;
}

/**
 * A runtime's status is derived, never stored: stale means the lease ran out while the
 * delegation is still RUNNING.
 */
export function deriveRuntimeStatus(facts: RuntimeFacts, now: number): RuntimeStatus {
  if (facts.endedAt !== undefined || isTerminalDelegation(facts.delegationStatus)) return 'terminal';
  if (facts.delegationStatus === 'BLOCKED') return 'blocked';
  if (facts.delegationStatus !== 'RUNNING') return 'terminal';
  if (now >= facts.leaseExpiresAt) return 'stale';
  return facts.heartbeatCount > 0 ? 'active' : 'claimed';
}

/** Only a live lease (claimed or active) may be renewed. */
export function canHeartbeat(status: RuntimeStatus): boolean {
  return status === 'claimed' || status === 'active';
}
