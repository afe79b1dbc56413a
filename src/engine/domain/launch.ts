import { admissionRefusal, overlapReason } from './admission';
import type { Permissions } from './agents/presets';
import { budgetCrossings, forbiddenProfile, type BudgetCrossing, type SpendSoFar } from './agents/budget';
import type { BatonConfig, WorkerDefinition } from './config';
import { frozenDefinition, type FrozenWorkers } from './frozenWorkers';
import { isolationNeed, type IsolationNeed, type RunIsolation } from './isolation';
import { quotaHoldOf, waitingForLimitReason, type QuotaHold } from './parking';
import type { RunSettings } from './runSettings';
import type { GateKind, Task } from './types';
import { DEFAULT_PERMISSIONS, frozenWorkerFor, isAgentWorker } from './workerLaunch';

/**
 * Launch by decision (docs/architecture.md): one coordinator pass reads a launch snapshot
 * (queries/launchSnapshot.ts) and decides here, with no I/O, each ready candidate's fate — start
 * it, hold it at a gate, or let it wait; the launcher only carries out what was decided, and the
 * claim re-checks the admission rule in its transaction.
 */

/** One ready task the pass may start, with what decides its fate beyond the run's facts. */
export interface LaunchCandidate {
  task: Task;
  /** Until when its retry backoff holds it (null: none). */
  notBefore: number | null;
  /** Permission profiles a person approved for this task at a risk_approval gate. */
  approvedProfiles: readonly string[];
  /** What the run, the task and its agent spent so far (read only when the run has a budget). */
  spent?: SpendSoFar;
}

/** What one coordinator pass reads to decide how each candidate starts, read once for all of them. */
export interface LaunchSnapshot {
  now: number;
  settings: RunSettings;
  planPath: string;
  /** The run's isolation, once decided (recorded at its first isolated dispatch). */
  isolation?: RunIsolation;
  /** Open gates that hold new starts: a config change, the run's isolation question, budget gates. */
  gates: { configChanged?: string; isolation?: string; budget: ReadonlyArray<{ id: string; taskId?: string }> };
  /** The admission facts every candidate shares (domain/admission.ts): who holds a slot, who is in flight. */
  occupying: readonly string[];
  inFlight: ReadonlyArray<{ id: string; files: readonly string[] }>;
  /** The candidates still ready, in the order asked. */
  candidates: readonly LaunchCandidate[];
  /** Workers held by a usage limit (queries/quotaHolds.ts): nothing starts on them until their reset. */
  quotaHolds?: readonly QuotaHold[];
}

/** Why a ready task does not start now (operations/tasks/holdTask.ts writes it). */
export type LaunchHold =
  /** An open gate holds every new start of the run, or every task that needs its answer: the task waits at it. */
  | { kind: 'wait-at-gate'; gateId: string; gate: 'config_changed' | 'budget' | 'isolation' }
  /** The run, the task or its agent is over budget: a budget gate of its own opens. */
  | { kind: 'budget-gate'; crossings: BudgetCrossing[] }
  /** The run's permission policy forbids the task's profile: a risk_approval gate that says why. */
  | { kind: 'permission-gate'; profile: Permissions['profile']; why: string }
  /** The run's first isolated dispatch found a problem in the repository: the isolation question, with its reason. */
  | { kind: 'isolation-gate'; reason: string; problem: string }
  /** Its `files:` overlap those of a task in flight: it stays ready, and its reason says on what it waits. */
  | { kind: 'overlap'; reason: string }
  /** Its worker hit its usage limit: it stays ready, not before the reset, and its reason says until when. */
  | { kind: 'quota'; until: number; reason: string };

/** What the coordinator brings to the launch decision besides the snapshot. */
export interface LaunchView {
  maxConcurrency: number;
  /** `--worker`: every task runs with this worker instead of its own or the default one. */
  worker?: string;
  /** The config this coordinator started with: the permission policy of a run that froze none, the lease length. */
  config: Pick<BatonConfig, 'permissionPolicy' | 'leaseSeconds'>;
  /** The config's workers, frozen: what a run from before frozen workers runs until its first pass froze them. */
  configWorkers: () => FrozenWorkers;
}

/** What starting a task needs, decided: its worker, its profile, its lease, how it is isolated. */
export interface StartPlan {
  task: Task;
  workerId: string;
  worker: WorkerDefinition;
  manual: boolean;
  permissions: Permissions;
  leaseMs: number;
  isolation: IsolationNeed;
}

export type LaunchDecision =
  | { kind: 'start'; plan: StartPlan }
  | { kind: 'hold'; task: Task; hold: LaunchHold }
  /** Not now, and nothing to write: no longer ready, its retry backoff, the run's slots. */
  | { kind: 'wait'; taskId: string };

/**
 * One candidate's fate, from the pass's launch snapshot alone (graphile-worker decides a job's
 * eligibility in the statement that locks it; here the claim re-checks the admission rule in its
 * transaction): start it, hold it at a gate — a config change, a budget, the permission policy,
 * the run's isolation question — or let it wait (its backoff, the slots, an overlap). In the
 * order the launcher always checked them.
 */
export function decideLaunch(snapshot: LaunchSnapshot, taskId: string, view: LaunchView): LaunchDecision {
  const candidate = snapshot.candidates.find((c) => c.task.id === taskId);
  if (!candidate) return { kind: 'wait', taskId };
  const { task } = candidate;
  const { gates, settings } = snapshot;
  // While a config_changed gate is open the run starts nothing new (released when a person decides).
  if (gates.configChanged)
    return { kind: 'hold', task, hold: { kind: 'wait-at-gate', gateId: gates.configChanged, gate: 'config_changed' } };
  // The definitions the run froze, never the config file's: a worker can write .baton/config.json
  // (docs/architecture.md, "Trust model").
  const frozen = settings.workers ?? view.configWorkers();
  const asked = view.worker ?? task.worker ?? frozen.defaultWorker;
  const held = workerAtLimit(snapshot, frozen, asked);
  if (held.kind === 'hold') return { kind: 'hold', task, hold: held.hold };
  const { workerId, worker } = held;
  const permissions = task.permissions ?? DEFAULT_PERMISSIONS;
  const budgetHold = budgetHoldOf(snapshot, candidate);
  if (budgetHold) return { kind: 'hold', task, hold: budgetHold };
  if (isAgentWorker(worker)) {
    const why = forbiddenProfile(settings.permissionPolicy ?? view.config.permissionPolicy, {
      profile: permissions.profile,
      risk: task.risk,
    });
    // Once a person approved the profile for the task, it starts.
    if (why && !candidate.approvedProfiles.includes(permissions.profile))
      return { kind: 'hold', task, hold: { kind: 'permission-gate', profile: permissions.profile, why } };
  }
  const refusal = admissionRefusal({
    now: snapshot.now,
    task: { id: task.id, files: task.files, notBefore: candidate.notBefore },
    maxConcurrency: view.maxConcurrency,
    occupying: snapshot.occupying,
    inFlight: snapshot.inFlight,
  });
  if (refusal?.kind === 'overlap') {
    const reason = overlapReason(refusal.otherTaskId, refusal.globs);
    return task.statusReason === reason
      ? { kind: 'wait', taskId }
      : { kind: 'hold', task, hold: { kind: 'overlap', reason } };
  }
  if (refusal) return { kind: 'wait', taskId };
  const manual = worker.type === 'manual';
  // One isolation question per run: while it is open, the other tasks that need the answer wait at it too.
  if (!manual && task.isolation !== 'none' && gates.isolation && !snapshot.isolation)
    return { kind: 'hold', task, hold: { kind: 'wait-at-gate', gateId: gates.isolation, gate: 'isolation' } };
  const isolation: IsolationNeed = manual
    ? { mode: 'none' }
    : isolationNeed(settings, snapshot.isolation, task, view.maxConcurrency);
  // A person gets a long lease; a process's lease is renewed while it lives.
  const leaseMs = manual ? Math.max(view.config.leaseSeconds * 1000, 7 * 86_400_000) : view.config.leaseSeconds * 1000;
  return { kind: 'start', plan: { task, workerId, worker, manual, permissions, leaseMs, isolation } };
}

/**
 * The worker a task starts on, given the usage limits (docs/agents.md, "Usage limits park"): the one it asks for, or —
 * while that one waits for its limit to reset — its `fallbackWorker` when that one is free; else the task waits for
 * the reset (a `quota` hold: its backoff set to the reset).
 */
function workerAtLimit(
  snapshot: LaunchSnapshot,
  frozen: FrozenWorkers,
  workerId: string,
): { kind: 'worker'; workerId: string; worker: WorkerDefinition } | { kind: 'hold'; hold: LaunchHold } {
  const worker = frozenWorkerFor(frozen, workerId);
  const holds = snapshot.quotaHolds ?? [];
  const quota = quotaHoldOf(holds, workerId, snapshot.now);
  if (!quota) return { kind: 'worker', workerId, worker };
  const fallbackId = isAgentWorker(worker) ? worker.fallbackWorker : undefined;
  const fallback = fallbackId !== undefined ? frozenDefinition(frozen, fallbackId) : undefined;
  if (fallbackId !== undefined && fallback && !quotaHoldOf(holds, fallbackId, snapshot.now))
    return { kind: 'worker', workerId: fallbackId, worker: fallback };
  const reason = waitingForLimitReason(quota.until, snapshot.now);
  return { kind: 'hold', hold: { kind: 'quota', until: quota.until, reason } };
}

/**
 * A run, task or agent already over its budget starts nothing more (docs/workers.md, "Budgets"):
 * the task waits at a budget gate — its own, or the one already open for the run's budget, which
 * every task then waits at.
 */
function budgetHoldOf(
  snapshot: LaunchSnapshot,
  candidate: LaunchSnapshot['candidates'][number],
): LaunchHold | undefined {
  const budget = snapshot.settings.budget;
  if (!budget || (!budget.run && !budget.task && !budget.agent) || !candidate.spent) return undefined;
  const crossings = budgetCrossings(budget, candidate.spent);
  if (crossings.length === 0) return undefined;
  const runWide = crossings.every((c) => c.scope === 'run')
    ? snapshot.gates.budget.find((g) => g.taskId !== candidate.task.id)
    : undefined;
  return runWide ? { kind: 'wait-at-gate', gateId: runWide.id, gate: 'budget' } : { kind: 'budget-gate', crossings };
}

/** What carrying out a decision changed that later candidates of the same pass must see. */
export interface LaunchOutcome {
  /** An attempt started: its task is in flight, and — unless a person holds it — takes a slot. */
  started?: { taskId: string; files: readonly string[]; slot: boolean };
  /** The run's isolation, as the start (or its probe) recorded it. */
  isolation?: RunIsolation;
  /** A gate it opened. */
  gate?: { id: string; kind: GateKind; taskId: string };
}

/** The snapshot as the pass's later candidates see it, after one was carried out. */
export function afterLaunch(snapshot: LaunchSnapshot, outcome: LaunchOutcome): LaunchSnapshot {
  const { started, gate } = outcome;
  return {
    ...snapshot,
    ...(outcome.isolation ? { isolation: outcome.isolation } : {}),
    gates: {
      ...snapshot.gates,
      ...(gate?.kind === 'isolation' && !snapshot.gates.isolation ? { isolation: gate.id } : {}),
      budget:
        gate?.kind === 'budget'
          ? [...snapshot.gates.budget, { id: gate.id, taskId: gate.taskId }]
          : snapshot.gates.budget,
    },
    occupying: started?.slot ? [...snapshot.occupying, started.taskId] : snapshot.occupying,
    inFlight:
      started && started.files.length > 0
        ? [...snapshot.inFlight, { id: started.taskId, files: started.files }]
        : snapshot.inFlight,
  };
}
