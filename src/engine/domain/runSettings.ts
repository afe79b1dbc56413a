import type { BatonConfig } from './config';
import type { IdSource } from './clock';
import { canonicalJson, freezeWorkers, type FrozenWorkers } from './frozenWorkers';

/** What every operation gets besides its input: the time of the transaction and the id source. */
export interface OperationContext {
  now: number;
  ids: IdSource;
}

/**
 * Settings frozen into a run when it starts (a later config edit does not change a running
 * run). The budget changes only when a person approves a budget gate (it is raised), the
 * worker definitions only when a person approves a config_changed gate; runs started before
 * budgets or frozen workers existed have none (a run's first resume freezes its workers).
 */
export type RunSettings = Pick<BatonConfig, 'riskTags' | 'leaseSeconds' | 'maxAttempts' | 'retryBackoffSeconds'> &
  Partial<
    Pick<
      BatonConfig,
      | 'isolation'
      | 'integration'
      | 'integrationRemote'
      | 'budget'
      | 'permissionPolicy'
      | 'maxArtifactBytes'
      | 'verifyIntegrated'
      | 'integrationBatch'
      | 'repairRounds'
      | 'review'
    >
  > & {
    workers?: FrozenWorkers;
  };

/** The frozen settings besides the workers, each compared with the config: which ones the file now sets otherwise. */
export function settingsDiffering(settings: RunSettings, config: BatonConfig): string[] {
  const keys = [
    'riskTags',
    'leaseSeconds',
    'maxAttempts',
    'retryBackoffSeconds',
    'isolation',
    'integration',
    'integrationRemote',
    'budget',
    'permissionPolicy',
    'maxArtifactBytes',
    'verifyIntegrated',
    'integrationBatch',
    'repairRounds',
    'review',
  ] as const;
  return keys.filter(
    (key) => settings[key] !== undefined && canonicalJson(settings[key]) !== canonicalJson(config[key]),
  );
}

export function runSettingsFrom(config: BatonConfig): RunSettings {
  return {
    riskTags: config.riskTags,
    leaseSeconds: config.leaseSeconds,
    maxAttempts: config.maxAttempts,
    retryBackoffSeconds: config.retryBackoffSeconds,
    isolation: config.isolation,
    integration: config.integration,
    // Where a passed task's branch goes (integration: branch): part of where the run's work ends up.
    integrationRemote: config.integrationRemote,
    budget: config.budget,
    permissionPolicy: config.permissionPolicy,
    // Frozen so that every machine of a team holds a result to the run's limit, not to its own config's.
    maxArtifactBytes: config.maxArtifactBytes,
    // Read by the attempt's own stop hook: a worker's edit of the file does not change how often it is sent back.
    repairRounds: config.repairRounds,
    // Commands Baton runs: frozen like the workers, so an edit to the file (by a worker too) does not change the run.
    ...(config.verifyIntegrated ? { verifyIntegrated: config.verifyIntegrated } : {}),
    // Frozen beside it: how the merge queue batches is part of how the run verifies.
    integrationBatch: config.integrationBatch,
    // Whether a passed task waits for a person before it integrates: a later edit does not let held work through.
    review: config.review,
    workers: freezeWorkers(config),
  };
}

/**
 * Wait before attempt `attempt` (2, 3, …): the base, doubling per further attempt, at most 10 minutes.
 * Whole milliseconds: it ends up in an INTEGER column, and PostgreSQL's BIGINT refuses 1000.5
 * (retryBackoffSeconds may have fractions; SQLite would quietly keep a REAL).
 */
export function retryDelayMs(settings: RunSettings, attempt: number): number {
  const base = (settings.retryBackoffSeconds ?? 0) * 1000;
  return Math.round(Math.min(base * 2 ** Math.max(0, attempt - 2), 600_000));
}

export function delegationId(taskId: string, agent: string, attempt: number): string {
  return `D-${taskId}-${agent}-${String(attempt).padStart(3, '0')}`;
}
