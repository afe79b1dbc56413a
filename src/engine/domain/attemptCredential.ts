import { BatonError } from './errors';
import { runsUnderWorker, type Presenter } from './process';
import type { WorkerRuntime } from './types';

/**
 * What binds a caller to one attempt: the ids and the runtime token Baton gave its worker in the
 * environment (BATON_RUN_ID, BATON_DELEGATION_ID, BATON_RUNTIME_ID, BATON_RUNTIME_TOKEN). The MCP
 * server of an attempt (`baton mcp`, docs/agents.md) takes it from there, never from a tool's arguments.
 */
export interface AttemptCredential {
  runId: string;
  delegationId: string;
  runtimeId: string;
  token: string;
}

/**
 * Whether a credential may act for its attempt now, decided on the runtime's row: the runtime
 * must exist in the run, hold that delegation, match the token, and hold a live lease. The
 * codes are the CLI's (`baton heartbeat`, `baton ingest`), so a refusal reads the same wherever
 * it comes from. A lease that ran out is refused here without being made official: a caller
 * that writes (a heartbeat, an ingestion) does that in its own transaction.
 */
export function attemptAccessRefusal(
  runtime: (WorkerRuntime & { tokenHash: string }) | undefined,
  credential: AttemptCredential,
  presentedTokenHash: string,
  /** The process presenting the credential; runtimes Baton started take it only from their own worker's processes. */
  presenter: Presenter,
): BatonError | undefined {
  const { runtimeId, delegationId, runId } = credential;
  if (!runtime) return new BatonError('runtime.unknown', `There is no worker runtime ${runtimeId} in run ${runId}.`);
  if (runtime.tokenHash !== presentedTokenHash)
    return new BatonError(
      'runtime.wrong-token',
      `The token does not match runtime ${runtimeId}; only the holder of its lease can act for ${delegationId}.`,
    );
  if (runtime.delegationId !== delegationId)
    return new BatonError(
      'runtime.wrong-token',
      `Runtime ${runtimeId} holds ${runtime.delegationId}, not ${delegationId}: its token acts only for its own attempt.`,
    );
  if (runtime.status === 'stale')
    return new BatonError(
      'runtime.lease-expired',
      `The lease of runtime ${runtimeId} expired at ${new Date(runtime.leaseExpiresAt).toISOString()}; ${delegationId} is over for this worker. Claim the task again for a new attempt.`,
    );
  if (runtime.status !== 'claimed' && runtime.status !== 'active')
    return new BatonError(
      'runtime.not-live',
      `Runtime ${runtimeId} is ${runtime.status}: ${delegationId} has ended (its result was handed in, or it was stopped); nothing more is taken for it.`,
    );
  return notItsWorker(runtime, presenter);
}

/**
 * The refusal of a token presented from outside the worker it belongs to (domain/process.ts,
 * `runsUnderWorker`): read from another process's environment, it is not the worker's to use.
 */
export function notItsWorker(runtime: WorkerRuntime, presenter: Presenter): BatonError | undefined {
  if (runsUnderWorker(runtime, presenter)) return undefined;
  return new BatonError(
    'runtime.not-its-worker',
    `Only the processes of ${runtime.delegationId}'s own worker (pid ${runtime.pid} on ${runtime.host ?? 'its host'}) can act for it with runtime ${runtime.id}'s token, and this process does not run under it.`,
  );
}
