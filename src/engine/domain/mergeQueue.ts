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
  return approved.find((gate) => gate.details.sourceHead === sourceHead)?.id;
}
