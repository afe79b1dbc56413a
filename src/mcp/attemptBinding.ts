import { BatonError, type AttemptCredential } from '../engine/index';

/** The variables Baton sets for every worker (docs/workers.md, "How a worker is started") that bind `baton mcp`. */
export const BINDING_VARIABLES = [
  'BATON_RUN_ID',
  'BATON_DELEGATION_ID',
  'BATON_RUNTIME_ID',
  'BATON_RUNTIME_TOKEN',
] as const;

/**
 * The attempt `baton mcp` serves, from its environment — never from a tool's arguments or the
 * prompt, so an agent cannot act for another attempt by naming it. A variable missing is
 * `mcp.missing-identity` (exit 2): the server is started by Baton's worker, or by hand with them set.
 */
export function attemptBindingFrom(env: NodeJS.ProcessEnv): AttemptCredential {
  const missing = BINDING_VARIABLES.filter((name) => !env[name]);
  if (missing.length > 0)
    throw new BatonError(
      'mcp.missing-identity',
      `baton mcp serves one attempt, named by the environment Baton gives its worker; ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set. Start it from the worker's process (an agent preset configures it), not by hand.`,
    );
  return {
    runId: env.BATON_RUN_ID!,
    delegationId: env.BATON_DELEGATION_ID!,
    runtimeId: env.BATON_RUNTIME_ID!,
    token: env.BATON_RUNTIME_TOKEN!,
  };
}
