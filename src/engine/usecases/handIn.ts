import { dirname } from 'node:path';
import { sleep, type Clock } from '../domain/clock';
import { BatonError } from '../domain/errors';
import { HAND_IN_LOG_BYTES, type HandIn, type HandInOrder, type SharedStoreAccess } from '../domain/handIn';
import { agentKindOf, exitCodeCommandOf } from '../domain/workerLaunch';
import { readWorkerFileTail } from '../effects/files/safeRead';
import { ensureBatonFolder, writeBatonFile } from '../effects/files/safeWrite';
import { readExitRecord } from '../effects/processes/exitRecord';
import { runPaths } from '../effects/workspaceLayout';
import { recordHandIn } from '../operations/handIns/recordHandIn';
import { recordWorkerExit } from '../operations/runtimes/recordWorkerExit';
import { readFenced } from '../platform/fencedFiles';
import { getDelegation } from '../queries/delegations';
import type { PendingHandIn } from '../queries/handIns';
import { readRunSettings } from '../queries/runs';
import { openStore } from '../store/openStore';
import type { StorePort } from '../store/port';
import type { EngineContext } from './context';
import { describeExit, settleExitedWorker } from './settleExitedWorker';

/**
 * Finished work on a host whose coordinator is gone (docs/team.md, "Finished work on a dead host"; issue 26). Two
 * halves: the worker's lease watchdog hands in what the worker left when it ended (`handInFinishedWork`), and a
 * coordinator on another host settles the attempt from it (`settleHandedIn`) exactly as a coordinator that watched the
 * worker end would have — so a takeover ingests the work instead of running the task again.
 */

/** How long the watchdog waits for the exit waiter's `ended` line once the worker is gone. */
const EXIT_RECORD_WAIT_MS = 5000;

/**
 * The watchdog's half: once its worker ended by itself, reads its exit record (written by its exit waiter, apart from
 * the worker), its artifact and the end of its log — each through the fence, bounded — and records them in the store
 * under the attempt's watchdog key (operations/handIns). Says what happened, for the attempt's log.
 */
export async function handInFinishedWork(
  store: StorePort,
  order: HandInOrder,
  key: string,
  clock: Clock,
): Promise<string> {
  const paths = runPaths(order.workspace, order.runId);
  const owner = { delegationId: order.delegationId, runtimeId: order.runtimeId };
  let evidence = readExitRecord(paths.exitRecord(order.delegationId), owner);
  for (const until = clock.monotonic() + EXIT_RECORD_WAIT_MS; !('exit' in evidence) && clock.monotonic() < until;) {
    if (evidence.none !== 'not-ended' && evidence.none !== 'missing') break;
    await sleep(clock, 100);
    evidence = readExitRecord(paths.exitRecord(order.delegationId), owner);
  }
  if (!('exit' in evidence)) return `nothing handed in: its exit record says no end (${evidence.none})`;
  const artifactPath = paths.artifact(order.delegationId);
  const artifact = readFenced(dirname(artifactPath), artifactPath, order.maxArtifactBytes + 1)?.bytes;
  const logTail = readWorkerFileTail(order.logPath, HAND_IN_LOG_BYTES);
  const handIn: HandIn = {
    runId: order.runId,
    delegationId: order.delegationId,
    runtimeId: order.runtimeId,
    host: order.host,
    exitCode: evidence.exit.exitCode,
    signal: evidence.exit.signal,
    endedAt: evidence.endedAt,
    ...(artifact ? { artifact: artifact.toString('base64') } : {}),
    ...(logTail ? { logTail: logTail.toString('base64') } : {}),
  };
  const recorded = await store.transact((tx) => recordHandIn(tx, handIn, key, clock.now()), { runId: order.runId });
  return recorded
    ? `the worker ${describeExit(evidence.exit)}; what it left was handed to the store${artifact ? '' : ' (no artifact)'}`
    : 'nothing handed in: the attempt had ended in the store, or was handed in already';
}

/**
 * How long a lease watchdog keeps trying to hand its worker's end in while the store is out of reach (a server
 * restart, a network cut): past it, the attempt is left to the takeover rule. A hand-in after the attempt's lease
 * ran out and another host expired it is refused by the store itself (the key check finds no live attempt).
 */
export const HAND_IN_PATIENCE_MS = 10 * 60_000;

/**
 * handInFinishedWork from a lease watchdog: opens the shared store with the access it was given, for one write — again,
 * backing off up to 30 s, while the store is out of reach, for HAND_IN_PATIENCE_MS.
 */
export async function handInFromWatchdog(
  order: HandInOrder,
  key: string,
  access: SharedStoreAccess,
  clock: Clock,
  patienceMs = HAND_IN_PATIENCE_MS,
): Promise<string> {
  const giveUpAt = clock.monotonic() + patienceMs;
  for (let waitMs = 1000; ; waitMs = Math.min(2 * waitMs, 30_000)) {
    try {
      return await handInOnce(order, key, access, clock);
    } catch (err) {
      if (!BatonError.is(err, 'store.unreachable') || clock.monotonic() + waitMs > giveUpAt) throw err;
      await sleep(clock, waitMs);
    }
  }
}

async function handInOnce(order: HandInOrder, key: string, access: SharedStoreAccess, clock: Clock): Promise<string> {
  const store = await openStore(
    access.password !== undefined
      ? {
          kind: 'postgres',
          url: access.url,
          schema: access.schema,
          secrets: [access.password],
          password: access.password,
        }
      : { kind: 'postgres', url: access.url, schema: access.schema, secrets: [] },
    { follow: false },
  );
  try {
    return await handInFinishedWork(store, order, key, clock);
  } finally {
    await store.close();
  }
}

/**
 * A coordinator's half, for a worker that ran on another host: writes what was handed in where this host keeps an
 * attempt's files (its artifact, the end of its log), tells the run how the worker ended, and settles the attempt
 * (settleExitedWorker) — once: an attempt no longer RUNNING is never settled again. Returns a line for the log.
 */
export async function settleHandedIn(ctx: EngineContext, handIn: PendingHandIn): Promise<string> {
  const { runId, delegationId } = handIn;
  const paths = runPaths(ctx.workspace, runId);
  const artifactPath = paths.artifact(delegationId);
  const logPath = paths.log(delegationId);
  ensureBatonFolder(ctx.workspace, dirname(artifactPath));
  ensureBatonFolder(ctx.workspace, dirname(logPath));
  if (handIn.artifact !== undefined)
    writeBatonFile(ctx.workspace, artifactPath, Buffer.from(handIn.artifact, 'base64'));
  writeBatonFile(ctx.workspace, logPath, handIn.logTail !== undefined ? Buffer.from(handIn.logTail, 'base64') : '');
  const exit = { exitCode: handIn.exitCode, signal: handIn.signal };
  const told = await ctx.store.transact((tx) =>
    recordWorkerExit(
      tx,
      { runId, delegationId, runtimeId: handIn.runtimeId, ...exit, endedAt: handIn.endedAt, handedInBy: handIn.host },
      ctx.clock.now(),
    ),
  );
  const { delegation, settings } = await ctx.store.read(async (r) => ({
    delegation: await getDelegation(r, runId, delegationId),
    settings: await readRunSettings(r, runId),
  }));
  const where = `its worker ${describeExit(exit)} on ${handIn.host} while no coordinator watched there`;
  if (!told || delegation?.status !== 'RUNNING') return `${delegationId}: ${where}; settled already`;
  const definitions = settings.workers ?? ctx.config;
  const command = exitCodeCommandOf({ definitions, workerId: handIn.worker });
  const agentKind = agentKindOf(definitions, handIn.worker);
  const settled = await settleExitedWorker(
    ctx,
    delegation,
    {
      artifactPath,
      logPath,
      ...(command !== undefined ? { plainCommand: { command, cwd: ctx.workspace, agent: handIn.agent } } : {}),
      ...(agentKind ? { agent: { kind: agentKind } } : {}),
      endedAt: handIn.endedAt,
    },
    exit,
  );
  return `${delegationId}: ${where}; settled from what its lease watchdog handed in: ${settled}`;
}
