import { endRunningAttempt } from '../operations/delegations/endRunningAttempt';
import { recordRuntimeProcess } from '../operations/runtimes/createRuntime';
import { BatonError } from '../domain/errors';
import { counted } from '../domain/plural';
import { renewRuntimeLease } from '../operations/runtimes/renewRuntimeLease';
import { ingestArtifact } from './ingestArtifact';
import { resultOnDisk } from './resultOnDisk';
import { getDelegation } from '../queries/delegations';
import { readRunSettings } from '../queries/runs';
import type { RunSettings } from '../domain/runSettings';
import { readCoordinatorLease } from '../queries/coordinatorLease';
import { openVerifyProcesses } from '../queries/verifyProcesses';
import { endVerifyProcesses } from './endVerifyProcesses';
import {
  findMarkedRoot,
  findProcessesOfWorkers,
  isHeldAtGate,
  isProcessAlive,
  terminateWorker,
  workerMarker,
} from '../effects/processes/processes';
import { type ProcessIdentity } from '../domain/process';
import type { AttemptAgent } from '../domain/agents/agentActivity';
import type { Permissions } from '../domain/agents/presets';
import { agentKindOf, agentModelOf, DEFAULT_PERMISSIONS, exitCodeCommandOf } from '../domain/workerLaunch';
import { readExitRecord, type ExitEvidence } from '../effects/processes/exitRecord';
import { recordWorkerExit } from '../operations/runtimes/recordWorkerExit';
import { describeExit, settleExitedWorker } from './settleExitedWorker';
import { recordSharedTreeAfter } from './sharedTreeSnapshots';
import { runPaths } from '../effects/workspaceLayout';
import { inspectWorktrees } from './cleanupWorktrees';
import type { EngineContext } from './context';

export interface ReconcileEntry {
  taskId: string;
  delegationId?: string;
  /** What the evidence says the task is. */
  classification: string;
  /** What reconcile changed, if it could prove a gap. */
  repair?: string;
}

export interface ReconcileReport {
  runId: string;
  entries: ReconcileEntry[];
}

export interface LiveWorker {
  delegationId: string;
  taskId: string;
  runtimeId: string;
  identity: ProcessIdentity;
  logPath: string;
  artifactPath: string;
  /** When the attempt started (its task timeout counts from here). */
  startedAt?: number;
  /** Its lease length (renewed to now + this). */
  leaseMs: number;
  /** On a shared store: the key its lease watchdog checks deadlines with. */
  watchdogKey?: string;
  /** An agent preset's worker: its event stream is followed from the start of its log. */
  agent?: { agent: AttemptAgent; cwd: string };
  /** A plain command (`"result": "exit-code"`): its exit status is its result. */
  plainCommand?: { command: string; cwd: string; agent: string };
}

export interface ReconcileOptions {
  /**
   * A coordinator taking over adopts live workers (renewing their leases by the authority of
   * its epoch); without it they are ended.
   */
  adopt?: { runId: string; epoch: number; take: (worker: LiveWorker) => void };
  /** Classify only, change nothing (another coordinator is driving the run). */
  reportOnly?: boolean;
}

interface Running {
  delegation_id: string;
  task_id: string;
  task_status: string;
  started_at: number | null;
  runtime_id: string | null;
  pid: number | null;
  pid_start: string | null;
  host: string | null;
  worker: string | null;
  log_path: string | null;
  cwd: string | null;
  agent: string;
  permissions_json: string | null;
  holder: string | null;
  lease_ms: number | null;
  watchdog_key: string | null;
  lease_expires_at: number | null;
  ended_at: number | null;
}

/**
 * Classifies every task of a run from the evidence — the store, live processes (pid and
 * start time, or the runtime marker in their environment), artifacts and logs on disk — and
 * repairs only gaps it can prove: a result on disk that was never ingested is ingested; a
 * RUNNING attempt whose process is gone becomes STALE (and the retry policy applies); a
 * worker that outlived its coordinator is adopted by the next one (its lease renewed at
 * once), or ended. An attempt held by an external worker (claimed with `baton claim`) is
 * left to its lease. Running it twice changes nothing the second time.
 */
export async function reconcileRun(
  ctx: EngineContext,
  runId: string,
  options: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const { tasks, running, settings } = await ctx.store.read(async (r) => ({
    settings: await readRunSettings(r, runId),
    tasks: await r.all<{ id: string; status: string; status_reason: string | null }>(
      `SELECT id, status, status_reason FROM tasks WHERE run_id = ? ORDER BY ordinal`,
      [runId],
    ),
    running: await r.all<Running>(
      `SELECT d.id AS delegation_id, d.task_id, t.status AS task_status, d.started_at, rt.id AS runtime_id, rt.pid, rt.pid_start, rt.host, rt.worker, rt.log_path,
         rt.holder, rt.lease_ms, rt.watchdog_key, rt.lease_expires_at, rt.ended_at,
         rt.cwd, d.agent, t.permissions_json
       FROM delegations d JOIN tasks t ON t.run_id = d.run_id AND t.id = d.task_id
       LEFT JOIN runtimes rt ON rt.run_id = d.run_id AND rt.id = d.runtime_id
       WHERE d.run_id = ? AND d.status = 'RUNNING' ORDER BY d.created_at`,
      [runId],
    ),
  }));
  const entries: ReconcileEntry[] = options.reportOnly ? [] : await endLeftoversOfEndedAttempts(ctx, runId);
  const handled = new Set<string>();
  const scope: Scope = { ctx, runId, options, settings, paths: runPaths(ctx.workspace, runId), now: ctx.clock.now() };
  for (const attempt of running) {
    handled.add(attempt.task_id);
    entries.push(
      attempt.task_status === 'verifying'
        ? await reconcileVerifying(scope, attempt)
        : await reconcileRunningAttempt(scope, attempt),
    );
  }
  for (const task of tasks) {
    if (handled.has(task.id)) continue;
    entries.push({
      taskId: task.id,
      classification:
        task.status === 'verifying'
          ? 'verifying: the coordinator finishes it (passed commands are not run again)'
          : task.status,
    });
  }
  // Worktrees are reported, never repaired here: removing work or redoing an integration is a person's call (baton
  // cleanup).
  for (const finding of await inspectWorktrees(ctx.store, ctx.workspace, runId)) {
    entries.push({
      taskId: finding.taskId ?? '-',
      ...(finding.delegationId ? { delegationId: finding.delegationId } : {}),
      classification: finding.target
        ? `target branch: ${finding.finding}`
        : `worktree ${finding.path}: ${finding.finding}`,
    });
  }
  return { runId, entries };
}

/** What every step of one reconcile shares. */
interface Scope {
  ctx: EngineContext;
  runId: string;
  options: ReconcileOptions;
  settings: RunSettings;
  paths: ReturnType<typeof runPaths>;
  now: number;
}

const baseOf = (attempt: Running) => ({ taskId: attempt.task_id, delegationId: attempt.delegation_id });

/**
 * Its result was ingested; the coordinator finishes the verification (passed commands are not run
 * again). A verify command its coordinator left running is ended first: nothing verifies the
 * attempt twice at once.
 */
async function reconcileVerifying({ ctx, runId, options }: Scope, attempt: Running): Promise<ReconcileEntry> {
  const base = baseOf(attempt);
  const classification = 'verifying: the coordinator finishes it (passed commands are not run again)';
  const open = await ctx.store.read((r) => openVerifyProcesses(r, runId, attempt.delegation_id));
  if (open.length === 0) return { ...base, classification };
  if (options.reportOnly)
    return { ...base, classification: `verifying: ${counted(open.length, 'verify command')} recorded running` };
  const graceMs = ctx.config.stopGraceSeconds * 1000;
  const ended = await endVerifyProcesses(ctx, runId, attempt.delegation_id, 'its coordinator went away', graceMs);
  const processes = ended.reduce((n, e) => n + e.processes.length, 0);
  const confirmed = ended.every((e) => e.confirmed);
  // A record left open by a coordinator that died after its command ended is only closed: nothing still ran.
  return processes === 0 && confirmed
    ? { ...base, classification, repair: 'closed the record of a verify command that had ended' }
    : {
        ...base,
        classification: `${classification}; a verify command of its coordinator still ran`,
        repair: `ended ${processes} process(es)${confirmed ? '' : ', NOT confirmed'}`,
      };
}

/** A RUNNING attempt: held elsewhere, running (adopted or ended), or gone (its result ingested, or STALE). */
async function reconcileRunningAttempt(scope: Scope, attempt: Running): Promise<ReconcileEntry> {
  const { ctx, options, now } = scope;
  const base = baseOf(attempt);
  const leaseLive = attempt.lease_expires_at !== null && attempt.ended_at === null && attempt.lease_expires_at > now;
  let identity: ProcessIdentity | undefined =
    attempt.pid !== null && attempt.host
      ? { pid: attempt.pid, startTime: attempt.pid_start, host: attempt.host }
      : undefined;
  if (!identity && attempt.runtime_id && attempt.worker === null) {
    // Claimed by an external worker (`baton claim`): it heartbeats itself; its lease decides.
    const holder = attempt.holder ?? 'an external worker';
    if (leaseLive)
      return {
        ...base,
        classification: `held by ${holder} (lease until ${new Date(attempt.lease_expires_at!).toISOString()})`,
      };
    if (options.reportOnly) return { ...base, classification: `held by ${holder}; its lease ran out` };
  }
  if (!identity && attempt.holder?.includes('manual') && leaseLive)
    return { ...base, classification: 'waiting for a person (manual hand-off)' };
  if (
    !identity &&
    attempt.runtime_id &&
    attempt.worker !== null &&
    attempt.worker !== 'manual' &&
    !attempt.holder?.includes('manual')
  ) {
    // Its coordinator died between starting the worker and recording its pid: find it by its marker.
    const found = findMarkedRoot(workerMarker(attempt.runtime_id));
    if (found) {
      identity = found;
      if (!options.reportOnly) {
        await ctx.store.transact((tx) =>
          recordRuntimeProcess(tx, attempt.runtime_id!, found, ctx.clock.now(), { onlyIfUnknown: true }),
        );
      }
    }
  }
  const alive = identity ? isProcessAlive(identity) : false;
  if (alive === undefined) {
    return {
      ...base,
      classification: `running on another host (${identity!.host}, pid ${identity!.pid}); cannot be checked from here`,
    };
  }
  if (alive) return reconcileLiveWorker(scope, attempt, identity!);
  return reconcileGoneWorker(scope, attempt, identity);
}

/** Its worker still runs here: held at its gate (ended), or running (adopted by a successor, else ended). */
async function reconcileLiveWorker(scope: Scope, attempt: Running, identity: ProcessIdentity): Promise<ReconcileEntry> {
  const { ctx, runId, options } = scope;
  const base = baseOf(attempt);
  if (isHeldAtGate(identity)) {
    // Its coordinator started it held at the gate and went away (or was superseded) before letting it run: it has run
    // nothing. Nobody can let it go any more — the record that must come first is refused to the old epoch — so it is
    // ended, and the attempt retried.
    if (options.reportOnly)
      return { ...base, classification: `claimed; its worker (pid ${identity.pid}) waits at the gate` };
    const report = await terminateWorker(identity, {
      marker: workerMarker(attempt.runtime_id!),
      graceMs: 0,
      clock: ctx.clock,
    });
    await markStale(ctx, runId, attempt.delegation_id, 'it was claimed but its worker never started');
    return {
      ...base,
      classification: 'claimed, never started (its worker waited at the gate)',
      repair: `ended the held worker${report.confirmed ? '' : ' (NOT confirmed)'}; marked STALE; the retry policy applies`,
    };
  }
  if (options.reportOnly) return { ...base, classification: `running (pid ${identity.pid})` };
  if (options.adopt && (await adoptWorker(scope, options.adopt, attempt, identity))) {
    return {
      ...base,
      classification: `running (pid ${identity.pid}) after its coordinator went away`,
      repair: 'adopted: lease renewed by this coordinator',
    };
  }
  const report = await terminateWorker(identity, {
    marker: workerMarker(attempt.runtime_id!),
    graceMs: ctx.config.stopGraceSeconds * 1000,
    clock: ctx.clock,
  });
  const why = options.adopt ? 'its lease ran out before a new coordinator could adopt it' : 'its coordinator went away';
  await markStale(
    ctx,
    runId,
    attempt.delegation_id,
    `${why}; reconcile ended the worker${report.confirmed ? '' : ' (termination NOT confirmed)'}`,
  );
  return {
    ...base,
    classification: `running (pid ${identity.pid}) with no coordinator`,
    repair: `ended ${report.processes.length} process(es)${report.confirmed ? '' : ', NOT confirmed'}; marked STALE`,
  };
}

/**
 * A coordinator taking over adopts a live worker of its predecessor: its lease renewed now (its
 * predecessor's renewals stopped with it) by the authority of the new epoch — a lease that already
 * ran out is lost — then handed to the coordinator. Says whether it was adopted.
 */
async function adoptWorker(
  { ctx, settings, paths }: Scope,
  adopt: NonNullable<ReconcileOptions['adopt']>,
  attempt: Running,
  identity: ProcessIdentity,
): Promise<boolean> {
  const renewed = await ctx.store
    .transact((tx) =>
      renewRuntimeLease(
        tx,
        {
          runtimeId: attempt.runtime_id!,
          authority: { holder: 'coordinator', runId: adopt.runId, epoch: adopt.epoch, withinLease: false },
          beat: false,
          onLapsed: 'refuse',
        },
        ctx.clock.now(),
      ),
    )
    .then(
      (outcome) => outcome.renewed,
      (err: unknown) => {
        if (BatonError.is(err, 'runtime.not-live')) return false; // ended meanwhile
        throw err;
      },
    );
  if (!renewed) return false;
  // The definitions the attempt was started with: the run's frozen ones (the config file may have changed since).
  const agentKind = agentKindOf(settings.workers ?? ctx.config, attempt.worker);
  const model = agentModelOf(settings.workers ?? ctx.config, attempt.worker);
  const plainCommand = plainCommandOf({ ctx, settings }, attempt);
  adopt.take({
    delegationId: attempt.delegation_id,
    taskId: attempt.task_id,
    runtimeId: attempt.runtime_id!,
    identity,
    logPath: attempt.log_path ?? paths.log(attempt.delegation_id),
    artifactPath: paths.artifact(attempt.delegation_id),
    leaseMs: attempt.lease_ms ?? ctx.config.leaseSeconds * 1000,
    ...(attempt.watchdog_key ? { watchdogKey: attempt.watchdog_key } : {}),
    ...(attempt.started_at !== null ? { startedAt: attempt.started_at } : {}),
    ...(plainCommand ? { plainCommand } : {}),
    ...(agentKind
      ? {
          agent: {
            agent: {
              kind: agentKind,
              agent: attempt.agent,
              ...(model ? { model } : {}),
              permissions: attempt.permissions_json
                ? (JSON.parse(attempt.permissions_json) as Permissions)
                : DEFAULT_PERMISSIONS,
            },
            cwd: attempt.cwd ?? ctx.workspace,
          },
        }
      : {}),
  });
  return true;
}

/** A plain command's result is its exit status: what its result says of it, by the run's frozen definition. */
function plainCommandOf(
  { ctx, settings }: Pick<Scope, 'ctx' | 'settings'>,
  attempt: Running,
): { command: string; cwd: string; agent: string } | undefined {
  const command = exitCodeCommandOf({ definitions: settings.workers ?? ctx.config, workerId: attempt.worker });
  return command !== undefined ? { command, cwd: attempt.cwd ?? ctx.workspace, agent: attempt.agent } : undefined;
}

/**
 * Its process is gone (or never started). A worker that left its exit record ended while no
 * coordinator watched: its attempt is settled from the record, as the coordinator that watched it
 * end would have. Otherwise a result on disk is ingested, else the attempt is STALE: its work is
 * unknown.
 */
async function reconcileGoneWorker(
  scope: Scope,
  attempt: Running,
  identity: ProcessIdentity | undefined,
): Promise<ReconcileEntry> {
  const { ctx, runId, options, settings, paths } = scope;
  const base = baseOf(attempt);
  const evidence =
    identity && attempt.runtime_id
      ? readExitRecord(paths.exitRecord(attempt.delegation_id), {
          delegationId: attempt.delegation_id,
          runtimeId: attempt.runtime_id,
        })
      : undefined;
  if (evidence && 'exit' in evidence) return settleFromExitRecord(scope, attempt, evidence);
  const agentKind = agentKindOf(settings.workers ?? ctx.config, attempt.worker);
  const result = resultOnDisk(
    ctx.workspace,
    paths.artifact(attempt.delegation_id),
    attempt.log_path ?? paths.log(attempt.delegation_id),
    !options.reportOnly,
    agentKind ? { kind: agentKind } : undefined,
  );
  if (options.reportOnly)
    return {
      ...base,
      classification: result ? 'process gone; a result is on disk, not yet ingested' : 'process gone; no result',
    };
  if (result) {
    const delegation = await ctx.store.read((r) => getDelegation(r, runId, attempt.delegation_id));
    const outcome = await ingestArtifact(ctx, delegation!, result);
    return {
      ...base,
      classification: 'process gone; a result is on disk, not yet ingested',
      repair: `ingested ${outcome.record.id} (${outcome.record.accepted ? outcome.record.resultStatus : 'rejected'}); delegation ${outcome.delegation.status}`,
    };
  }
  const external = attempt.worker === null && attempt.runtime_id !== null;
  const manual = !identity && Boolean(attempt.holder?.includes('manual'));
  const [classification, reason] = identity
    ? evidence && 'none' in evidence && evidence.none === 'never-started'
      ? ['claimed, never started (its gate never opened)', 'it was claimed but its worker never started']
      : [`process gone (pid ${identity.pid}); no result`, 'its process is gone and left no result']
    : external
      ? ['lease ran out', 'its lease ran out without a heartbeat']
      : manual
        ? ['manual hand-off expired', 'the manual hand-off expired without a result']
        : ['claimed, never started', 'it was claimed but its process never started'];
  await markStale(ctx, runId, attempt.delegation_id, reason);
  return { ...base, classification, repair: 'marked STALE; the retry policy applies' };
}

/**
 * Its worker ended while no coordinator watched and left its exit record: the run is told how it
 * ended (`runtime:exited`), and the attempt is settled exactly as a watching coordinator would
 * have settled it (settleExitedWorker) — no new attempt, no retry used. Once: an attempt that is
 * no longer RUNNING is never settled again, so a second reconcile, or a second coordinator, finds
 * nothing to do.
 */
async function settleFromExitRecord(
  { ctx, runId, options, settings, paths }: Scope,
  attempt: Running,
  evidence: ExitEvidence,
): Promise<ReconcileEntry> {
  const base = baseOf(attempt);
  const how = `${describeExit(evidence.exit)} at ${new Date(evidence.endedAt).toISOString()}`;
  const classification = `process gone; its worker ${how} while no coordinator watched (its exit record)`;
  if (options.reportOnly) return { ...base, classification };
  const delegationId = attempt.delegation_id;
  // As the coordinator that watched would have, before the result is taken (dependents may change the shared tree).
  await recordSharedTreeAfter(ctx, { runId, delegationId });
  const told = await ctx.store.transact((tx) =>
    recordWorkerExit(
      tx,
      { runId, delegationId, runtimeId: attempt.runtime_id!, ...evidence.exit, endedAt: evidence.endedAt },
      ctx.clock.now(),
    ),
  );
  const delegation = await ctx.store.read((r) => getDelegation(r, runId, delegationId));
  if (!told || delegation?.status !== 'RUNNING')
    return { ...base, classification: `${classification}; settled already` };
  const agentKind = agentKindOf(settings.workers ?? ctx.config, attempt.worker);
  const plainCommand = plainCommandOf({ ctx, settings }, attempt);
  const settled = await settleExitedWorker(
    ctx,
    delegation,
    {
      artifactPath: paths.artifact(delegationId),
      logPath: attempt.log_path ?? paths.log(delegationId),
      ...(plainCommand ? { plainCommand } : {}),
      ...(agentKind ? { agent: { kind: agentKind } } : {}),
      endedAt: evidence.endedAt,
    },
    evidence.exit,
  );
  return { ...base, classification, repair: `settled from its exit record: ${settled}` };
}

/**
 * A coordinator decides an attempt's end in the store first and ends its processes after
 * (docs/architecture.md, "Fenced side effects"); one that died or was superseded in between
 * leaves a decided attempt whose worker still runs, or what an exited worker left behind
 * before its sweep. Since the chain of coordinators without a clean release began, every
 * ended attempt of a worker Baton started is looked over in one look at /proc, and whatever
 * still runs is ended (pid and start time, or its marker) — before anything new is dispatched.
 */
async function endLeftoversOfEndedAttempts(ctx: EngineContext, runId: string): Promise<ReconcileEntry[]> {
  const ended = await ctx.store.read(async (r) => {
    const lease = await readCoordinatorLease(r, runId);
    if (!lease || lease.releasedAt !== undefined) return [];
    return r.all<{
      runtime_id: string;
      delegation_id: string;
      task_id: string;
      status: string;
      pid: number | null;
      pid_start: string | null;
      host: string | null;
    }>(
      `SELECT rt.id AS runtime_id, rt.delegation_id, d.task_id, d.status, rt.pid, rt.pid_start, rt.host
       FROM runtimes rt JOIN delegations d ON d.run_id = rt.run_id AND d.id = rt.delegation_id
       WHERE rt.ended_at >= ? AND rt.run_id = ? AND rt.worker IS NOT NULL AND rt.worker <> 'manual'`,
      [lease.chainSince ?? 0, runId],
    );
  });
  if (ended.length === 0) return [];
  const workers = ended.map((e) => ({
    root: e.pid !== null && e.host ? { pid: e.pid, startTime: e.pid_start, host: e.host } : undefined,
    marker: workerMarker(e.runtime_id),
  }));
  const found = findProcessesOfWorkers(workers);
  const entries: ReconcileEntry[] = [];
  for (const [i, attempt] of ended.entries()) {
    if (found[i]!.length === 0) continue;
    const report = await terminateWorker(workers[i]!.root, {
      marker: workers[i]!.marker,
      graceMs: ctx.config.stopGraceSeconds * 1000,
      clock: ctx.clock,
    });
    entries.push({
      taskId: attempt.task_id,
      delegationId: attempt.delegation_id,
      classification: `${attempt.status}, yet ${found[i]!.length} of its process(es) still ran`,
      repair: `ended ${report.processes.length} process(es)${report.confirmed ? '' : ', NOT confirmed'}`,
    });
  }
  return entries;
}

async function markStale(ctx: EngineContext, runId: string, delegationId: string, reason: string): Promise<void> {
  await ctx.store.transact((tx) =>
    endRunningAttempt(tx, { runId, delegationId, to: 'STALE', reason }, ctx.clock.now()),
  );
}
