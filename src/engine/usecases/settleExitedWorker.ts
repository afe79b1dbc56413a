import { existsSync } from 'node:fs';
import type { AgentKind } from '../domain/agents/agentActivity';
import { usageLimitInStream, type UsageLimit } from '../domain/agents/usageLimit';
import { parkUntil } from '../domain/parking';
import { readWorkerFileTail } from '../effects/files/safeRead';
import { parkAttempt } from '../operations/delegations/parkAttempt';
import type { Delegation } from '../domain/types';
import type { WorkerExit } from '../effects/processes/spawnSupervised';
import { endRunningAttempt } from '../operations/delegations/endRunningAttempt';
import type { EngineContext } from './context';
import { writeExitCodeResult } from './exitCodeResult';
import { ingestArtifact } from './ingestArtifact';
import { resultOnDisk } from './resultOnDisk';

/** How the attempt's worker hands in its result (docs/workers.md, "The result"). */
export interface ExitedWorker {
  artifactPath: string;
  logPath: string;
  /** A plain command (`"result": "exit-code"`): its exit status is its result. */
  plainCommand?: { command: string; cwd: string; agent: string };
  /**
   * An agent preset: its final message, and the usage limit its CLI reported, when its stream was followed to the end
   * (else both are read from its log).
   */
  agent?: { kind: AgentKind; finalText?: string; usageLimit?: UsageLimit };
  /** What the agent said last when it stopped (a refused request, a model error): quoted in a failure. */
  said?: string;
  /** When it ended, when that was not just now (its exit record, read by the next coordinator). */
  endedAt?: number;
}

/**
 * Settles a RUNNING attempt whose worker ended by itself, from how it ended — the one way, for
 * the coordinator that watched it end (executor/attemptSupervisor.ts) and for the next one,
 * which reads the end from the worker's exit record (reconcileRun.ts): a plain command's exit
 * status becomes its result; a result on disk (the artifact, else the answer in its log) is
 * ingested; with none the attempt fails, saying how the worker ended. The store decides once:
 * ingestion is idempotent and an attempt that is no longer RUNNING refuses the failure.
 * Returns what happened, for a log line.
 */
export async function settleExitedWorker(
  ctx: EngineContext,
  delegation: Delegation,
  worker: ExitedWorker,
  exit: WorkerExit,
): Promise<string> {
  const { runId, id: delegationId, taskId } = delegation;
  if (worker.plainCommand && !existsSync(worker.artifactPath)) {
    const { command, cwd, agent } = worker.plainCommand;
    await writeExitCodeResult(
      ctx,
      { runId, delegationId, taskId, agent, artifactPath: worker.artifactPath },
      { command, cwd, logPath: worker.logPath },
      exit,
    );
  }
  const artifact = resultOnDisk(ctx.workspace, worker.artifactPath, worker.logPath, true, worker.agent);
  // At its usage limit, with no result: parked, not failed — whoever watched it end, or nobody.
  // A reset the CLI named is judged against when it said so: one that passed since lifts the hold at once.
  const saidAt = worker.endedAt ?? ctx.clock.now();
  const usageLimit = artifact || !worker.agent ? undefined : agentUsageLimit(worker.logPath, worker.agent, saidAt);
  if (usageLimit) return parkAtUsageLimit(ctx, delegation, usageLimit, saidAt);
  if (!artifact) {
    const reason = `the worker ${describeExit(exit)} without a result${worker.said ? `: ${worker.said}` : ''}`;
    await ctx.store.transact((tx) =>
      endRunningAttempt(tx, { runId, delegationId, to: 'FAILED', reason }, ctx.clock.now()),
    );
    return `FAILED: ${reason}`;
  }
  const outcome = await ingestArtifact(ctx, delegation, artifact);
  const what = outcome.record.accepted ? `result ${outcome.record.resultStatus}` : 'result rejected';
  return `${what}; ${outcome.delegation.status}`;
}

/** How much of the end of an agent's log is read for a limit its CLI reported: it is the last thing the CLI says. */
const LIMIT_LOG_BYTES = 1024 * 1024;

function agentUsageLimit(
  logPath: string,
  agent: NonNullable<ExitedWorker['agent']>,
  saidAt: number,
): UsageLimit | undefined {
  if (agent.usageLimit) return agent.usageLimit;
  // The log is the worker's: it may have replaced it with a FIFO or a link to a device (read as no limit).
  const log = readWorkerFileTail(logPath, LIMIT_LOG_BYTES);
  return log ? usageLimitInStream(agent.kind, log.toString('utf8').split('\n'), saidAt) : undefined;
}

/**
 * The agent's CLI hit its usage limit and left no result (docs/agents.md, "Usage limits park"): the attempt is parked
 * until the reset the CLI named (else quotaWaitSeconds from now); its worker starts nothing before then.
 */
async function parkAtUsageLimit(
  ctx: EngineContext,
  delegation: Delegation,
  limit: UsageLimit,
  saidAt: number,
): Promise<string> {
  const now = ctx.clock.now();
  const until = parkUntil(limit, saidAt, ctx.config.quotaWaitSeconds);
  const parked = await ctx.store.transact((tx) =>
    parkAttempt(
      tx,
      { runId: delegation.runId, delegationId: delegation.id, cause: 'usage-limit', until, said: limit.said },
      now,
    ),
  );
  return parked ? `parked at its usage limit until ${new Date(until).toISOString()}` : 'settled already';
}

/** "exited with code 1", "was killed by SIGKILL", or "ended" when nobody saw how. */
export function describeExit(exit: WorkerExit): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return exit.exitCode === null ? 'ended' : `exited with code ${exit.exitCode}`;
}
