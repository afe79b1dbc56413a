import type { BatonConfig } from '../../domain/config';
import {
  configDigest,
  describeWorkerChange,
  diffWorkers,
  freezeWorkers,
  needsApproval,
  workersInUse,
  type WorkerChange,
} from '../../domain/frozenWorkers';
import { settingsDiffering } from '../../domain/runSettings';
import { isFinishedRun } from '../../domain/types';
import { readRunSettings, readRunStatus } from '../../queries/runs';
import type { StoreTx } from '../../store/port';
import { GATE_COLUMNS, jsonField, toGate, type GateRow } from '../../store/rows';
import { appendEvent } from '../events/appendEvent';
import { freezeRunWorkers, recordConfigSeen } from '../runs/runWorkers';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskStatus } from '../tasks/setTaskStatus';
import { closeGate } from './closeGate';
import { releaseTasksWaitingAt } from './decideGate';
import { openGate, waitsAtGateReason } from './openGate';
import { updateGate } from './updateGate';

export interface NoticeRunConfigInput {
  runId: string;
  /** `.baton/config.json` as it is now: parsed, or why it is not (its first problem, and a digest of its text). */
  current: { config: BatonConfig } | { invalid: string; digest: string };
  /** The coordinator's `--worker`: every task runs with it. */
  override?: string;
  noticedBy: 'coordinator' | 'editor';
  /**
   * A coordinator freezes a run from before frozen workers and opens (or updates, or resolves) the gate; an editor
   * window only tells.
   */
  gate: boolean;
}

export interface ConfigNotice {
  /** The run had no frozen workers (started before Baton froze them): frozen now, from the config. */
  frozeLegacy: boolean;
  /** A `config:changed` event was appended. */
  told: boolean;
  /** What differs in the workers the run's remaining tasks use, and waits for a person. */
  changes: WorkerChange[];
  gate?: { id: string; action: 'opened' | 'updated' | 'waiting' | 'resolved' | 'rejected' };
}

const UNFINISHED = `('pending', 'ready', 'gated', 'running', 'verifying')`;

/**
 * Compares the config file with what a run froze (docs/architecture.md, "Trust model for
 * .baton/ and the config"), in one transaction:
 * - a config the run has not seen yet is told once, as a `config:changed` event;
 * - a coordinator that finds a worker its remaining tasks use defined differently (or a new
 *   one, or another default worker) opens a `config_changed` gate that names each change, and
 *   holds every ready task at it — the run starts nothing new until a person decides. The
 *   frozen definitions keep being the ones that run; an open gate follows the file (updated
 *   when it changes again, resolved when it matches the run again); a change a person
 *   rejected is not asked again.
 */
export async function noticeRunConfig(tx: StoreTx, input: NoticeRunConfigInput, now: number): Promise<ConfigNotice> {
  const { runId } = input;
  const quiet: ConfigNotice = { frozeLegacy: false, told: false, changes: [] };
  if (isFinishedRun(await readRunStatus(tx, runId))) return quiet;
  const settings = await readRunSettings(tx, runId);
  const config = 'config' in input.current ? input.current.config : undefined;
  if (!settings.workers) {
    // A run started before Baton froze worker definitions: its first coordinator freezes them as the config is now.
    if (!input.gate || !config) return quiet;
    await freezeRunWorkers(tx, { runId, workers: freezeWorkers(config), why: 'legacy' }, now);
    return { ...quiet, frozeLegacy: true };
  }
  const frozen = settings.workers;
  const candidate = config ? freezeWorkers(config) : undefined;
  const seen = config ? configDigest(config) : (input.current as { digest: string }).digest;
  let told = false;
  if (seen !== frozen.configSeen) {
    await appendEvent(tx, runId, 'config:changed', now, {
      configDigest: seen,
      frozenDigest: frozen.digest,
      changes: candidate ? diffWorkers(frozen, candidate).map(describeWorkerChange) : [],
      settings: config ? settingsDiffering(settings, config) : [],
      ...('invalid' in input.current ? { invalid: input.current.invalid } : {}),
      noticedBy: input.noticedBy,
    });
    await recordConfigSeen(tx, runId, seen);
    told = true;
  }
  if (!input.gate || !candidate) return { ...quiet, told };

  const tasks = await tx.all<{ worker: string | null }>(
    `SELECT worker FROM tasks WHERE run_id = ? AND status IN ${UNFINISHED}`,
    [runId],
  );
  const changes = diffWorkers(frozen, candidate, workersInUse(tasks, input.override)).filter(needsApproval);
  const openRow = await tx.get<GateRow>(
    `SELECT ${GATE_COLUMNS} FROM gates WHERE run_id = ? AND kind = 'config_changed' AND status = 'open' ORDER BY ordinal DESC LIMIT 1`,
    [runId],
  );
  const open = openRow ? toGate(openRow) : undefined;
  if (changes.length === 0) {
    if (!open) return { ...quiet, told };
    // The file matches what the run froze again (or what differs is no longer used): nobody needs to decide.
    await closeGate(
      tx,
      open,
      { decision: 'approved', by: 'baton', note: "resolved: .baton/config.json matches the run's worker definitions" },
      now,
    );
    await releaseTasksWaitingAt(tx, open, now);
    await refreshRunStatus(tx, runId, now);
    return { ...quiet, told, gate: { id: open.id, action: 'resolved' } };
  }
  const details = { frozenDigest: frozen.digest, proposedDigest: candidate.digest, changes };
  const reason = configGateReason(runId, changes);
  if (open) {
    if (open.details.proposedDigest === candidate.digest)
      return { ...quiet, told, changes, gate: { id: open.id, action: 'waiting' } };
    await updateGate(tx, open, { reason, details }, now);
    return { ...quiet, told, changes, gate: { id: open.id, action: 'updated' } };
  }
  // The digest is taken apart in TypeScript: JSON functions are not in the portable SQL subset (docs/architecture.md).
  const rejected = (
    await tx.all<{ id: string; details_json: string | null }>(
      `SELECT id, details_json FROM gates WHERE run_id = ? AND kind = 'config_changed' AND status = 'rejected'
       ORDER BY ordinal DESC`,
      [runId],
    )
  ).find((g) => jsonField(g.details_json, 'proposedDigest') === candidate.digest);
  // A person said no to exactly this: the run keeps its frozen definitions without asking again.
  if (rejected) return { ...quiet, told, changes, gate: { id: rejected.id, action: 'rejected' } };
  const gate = await openGate(tx, { runId, kind: 'config_changed', reason, details }, now);
  await holdReadyTasksAt(tx, runId, gate.id, now);
  await refreshRunStatus(tx, runId, now);
  return { ...quiet, told, changes, gate: { id: gate.id, action: 'opened' } };
}

/** Nothing new starts while a config_changed gate is open: each ready task waits at it (released at the decision). */
export async function holdReadyTasksAt(tx: StoreTx, runId: string, gateId: string, now: number): Promise<void> {
  const ready = await tx.all<{ id: string }>(`SELECT id FROM tasks WHERE run_id = ? AND status = 'ready'`, [runId]);
  for (const { id } of ready)
    await setTaskStatus(tx, runId, id, 'gated', waitsAtGateReason(gateId, 'config_changed'), now);
}

/** What the gate says: each change (command lines, env keys without values) and what each decision does. */
export function configGateReason(runId: string, changes: readonly WorkerChange[]): string {
  let listed = changes.map(describeWorkerChange).join('; ');
  if (listed.length > 1500) listed = `${listed.slice(0, 1499)}…`;
  return `.baton/config.json no longer matches the worker definitions run ${runId} froze: ${listed}. Nothing new starts until you decide: approve to run with the config's definitions from now on, reject to keep the ones the run froze.`;
}
