// The merge queue's decisions (docs/isolation.md, "The merge queue"): which commands a passed task's merged tree is
// verified with, which of them still have to run on it, and whether a person already said to integrate anyway.
// Plain values in, plain values out: tested without a repository or a store.

/**
 * The commands a passed task's merged tree is verified with: the run's `verifyIntegrated`, then the task's own verify
 * commands that are not among them already (the same argv runs once). Undefined when the run does not verify merged
 * trees (`verifyIntegrated` absent) — `[]` there still verifies the task's own commands.
 */
export function mergedTreeCommands(
  verifyIntegrated: readonly (readonly string[])[] | undefined,
  taskVerify: readonly (readonly string[])[],
): string[][] | undefined {
  if (verifyIntegrated === undefined) return undefined;
  const commands: string[][] = [];
  const seen = new Set<string>();
  for (const command of [...verifyIntegrated, ...taskVerify]) {
    const key = JSON.stringify(command);
    if (seen.has(key)) continue;
    seen.add(key);
    commands.push([...command]);
  }
  return commands;
}

/**
 * Which commands run on this tree now and which are taken from a receipt: a command that passed on the same tree
 * (the same git tree id: byte for byte the same files) is not run again — after a crash, after a target that moved
 * and came back, or for another task whose merged tree is the same. `passedOnTree`: the argv (as JSON) of the commands
 * with a passing receipt on it.
 */
export function mergedTreeWork(
  commands: readonly string[][],
  passedOnTree: ReadonlySet<string>,
): { toRun: string[][]; reused: string[][] } {
  const toRun: string[][] = [];
  const reused: string[][] = [];
  for (const command of commands) (passedOnTree.has(JSON.stringify(command)) ? reused : toRun).push(command);
  return { toRun, reused };
}

/**
 * The integration_failed gate at which a person approved integrating this very commit anyway, if any: an approval
 * holds for the attempt's source head it was given for; a changed worktree (a new commit) is verified again.
 */
export function approvedDespiteFailure(
  approved: readonly { id: string; details: Record<string, unknown> }[],
  sourceHead: string,
): string | undefined {
  // A refused push's gate (integration: branch) approves pushing again, not skipping the merged tree: its tree passed
  // (its receipts make that free), and a target that moved since is verified again.
  return approved.find((gate) => gate.details.sourceHead === sourceHead && gate.details.push !== true)?.id;
}

/** Whether the passed tasks waiting for integration form a batch now, or wait for others still in flight to join. */
export type BatchCut = { kind: 'batch'; members: string[] } | { kind: 'wait' };

/** How long the first task waiting for a batch waits for others still in flight, at most. */
export const MAX_BATCH_WAIT_MS = 5 * 60_000;

/**
 * Cuts a batch (docs/isolation.md, "Batching with bisection"): the first `size` of the tasks waiting for integration
 * (in plan order, so a bisection is reproducible) once `size` wait, once no other task of the run is still running or
 * verifying its own work — nothing else could join, and waiting longer would only delay — or once the first of them
 * has waited MAX_BATCH_WAIT_MS (a slow task in flight does not hold the finished ones back for long). A dependent
 * task never meets its dependency here: it starts only after that one is integrated.
 */
export function cutIntegrationBatch(
  waiting: readonly string[],
  othersInFlight: number,
  size: number,
  waited = 0,
): BatchCut {
  if (waiting.length === 0) return { kind: 'wait' };
  if (waiting.length >= size || othersInFlight === 0 || waited >= MAX_BATCH_WAIT_MS)
    return { kind: 'batch', members: waiting.slice(0, size) };
  return { kind: 'wait' };
}

/**
 * The next step of a batch's bisection, from what is known so far: `verdicts` maps a number of tasks taken from the
 * front of the batch (merged onto the target as it is now) to whether their merged tree passed.
 * - `integrate`: the longest prefix known to pass moves the target (its tree's receipts make that free);
 * - `verify`: the whole batch at first; after a failure, the first half of the shortest failing prefix;
 * - `culprit`: the first task alone fails on the target — it gets the integration_failed gate;
 * - `done`: nothing left.
 * After `integrate` the caller drops those tasks and shifts the verdicts (verdictsAfterIntegrating); after `culprit`
 * it drops the task and forgets the verdicts (the rest is a new batch on the same target).
 * Two tasks that fail only together: the later one in the batch's order is the culprit (it is verified on the target
 * that holds the earlier one, as it would be one at a time).
 */
export type BisectionStep =
  { kind: 'verify'; take: number } | { kind: 'integrate'; take: number } | { kind: 'culprit' } | { kind: 'done' };

export function nextBisectionStep(size: number, verdicts: ReadonlyMap<number, boolean>): BisectionStep {
  if (size === 0) return { kind: 'done' };
  const failing = Math.min(...[...verdicts].filter(([take, passed]) => !passed && take <= size).map(([take]) => take));
  const passing = Math.max(0, ...[...verdicts].filter(([take, passed]) => passed && take < failing).map(([t]) => t));
  if (passing > 0) return { kind: 'integrate', take: Math.min(passing, size) };
  if (!Number.isFinite(failing)) return { kind: 'verify', take: size };
  if (failing === 1) return { kind: 'culprit' };
  return { kind: 'verify', take: Math.ceil(failing / 2) };
}

/** What is still known after the first `integrated` tasks moved the target: the longer prefixes, now shorter. */
export function verdictsAfterIntegrating<V>(verdicts: ReadonlyMap<number, V>, integrated: number): Map<number, V> {
  return new Map([...verdicts].filter(([take]) => take > integrated).map(([take, v]) => [take - integrated, v]));
}
