import { join, relative, sep } from 'node:path';

/** Baton's folder in a workspace (DESIGN §3 layout): the store, runs' files, worktrees, the config. */
export const BATON_DIR = '.baton';

export function storeDirOf(workspace: string): string {
  return join(workspace, BATON_DIR, 'store');
}

export function configPathOf(workspace: string): string {
  return join(workspace, BATON_DIR, 'config.json');
}

/** Where a run keeps its files in the workspace (DESIGN §3 layout). */
export function runPaths(workspace: string, runId: string) {
  const root = join(workspace, BATON_DIR, 'runs', runId);
  return {
    root,
    artifact: (delegationId: string) => join(root, 'artifacts', `${delegationId}.md`),
    prompt: (delegationId: string) => join(root, 'prompts', `${delegationId}.md`),
    log: (delegationId: string) => join(root, 'logs', `${delegationId}.log`),
    verifyLog: (delegationId: string) => join(root, 'logs', `${delegationId}.verify.log`),
    /** The body of a pushed task's pull request (`integration: branch`), for `gh pr create --body-file`. */
    pullRequest: (delegationId: string) => join(root, 'pull-requests', `${delegationId}.md`),
    /** Until when (wall clock) an attempt's lease runs, for its watchdog (effects/processes/leaseWatchdog.ts). */
    leaseDeadline: (delegationId: string) => join(root, 'leases', `${delegationId}.deadline`),
    /** Until when this host's coordinator holds the run, for its verify commands' watchdogs (leaseWatchdog.ts). */
    coordinatorLeaseDeadline: join(root, 'leases', 'coordinator.deadline'),
    /** How an attempt's worker ended, left by its exit waiter for whoever settles it (domain/exitRecord.ts). */
    exitRecord: (delegationId: string) => join(root, 'exits', `${delegationId}.exit`),
    /** A worker's `baton heartbeat` leaves its beats here on a shared store (executor/heartbeatRelay.ts). */
    heartbeatRelay: (delegationId: string) => join(root, 'relay', `${delegationId}.ndjson`),
    /** An attempt's agent CLI configuration files, which the CLI reads at its start (domain/agents/presets.ts). */
    agentConfig: (delegationId: string) => join(root, 'agents', delegationId),
    /** A task's own home for its agent CLI, kept across its attempts (Gemini CLI's, domain/agents/presets.ts). */
    agentHome: (taskId: string) => join(root, 'agent-homes', taskId),
  };
}

/**
 * The run whose folder (`.baton/runs/<run>/`) holds `path`, and the delegation a file there is
 * named after (`artifacts/<delegation>.md`, `logs/<delegation>.log`). Undefined for a path
 * outside every run's folder. Lexical: the caller resolves links first where it matters.
 */
export function runFolderOf(workspace: string, path: string): { runId: string; delegationId?: string } | undefined {
  const [top, runs, runId, ...inside] = relative(workspace, path).split(sep);
  if (top !== BATON_DIR || runs !== 'runs' || !runId || inside.length === 0) return undefined;
  const named = /^(?:artifacts\/([^/]+)\.md|logs\/([^/]+)\.log)$/.exec(inside.join('/'));
  const delegationId = named?.[1] ?? named?.[2];
  return { runId, ...(delegationId ? { delegationId } : {}) };
}

/** Where an attempt's worktree lives, and its branch (docs/isolation.md). */
export function worktreeLocation(
  workspace: string,
  runId: string,
  taskId: string,
  attempt: number,
): { path: string; branch: string } {
  const n = String(attempt).padStart(3, '0');
  return {
    path: join(workspace, BATON_DIR, 'worktrees', runId, `${taskId}-${n}`),
    branch: `baton/${runId}/${taskId}/${n}`,
  };
}

/**
 * Where an attempt's merged tree (the target plus its work) is checked out to be verified before integration: beside
 * its worktree, in the run's worktree folder, so that cleanup finds a leftover (docs/isolation.md, "The merge queue").
 */
export function mergedTreeLocation(worktreePath: string): string {
  return `${worktreePath}.merged`;
}

export function worktreesRoot(workspace: string, runId?: string): string {
  return runId ? join(workspace, BATON_DIR, 'worktrees', runId) : join(workspace, BATON_DIR, 'worktrees');
}

/** The worker's folder inside a worktree: the workspace's place in the repository, mirrored. */
export function workspaceInWorktree(worktreePath: string, repoRoot: string, workspace: string): string {
  const inside = relative(repoRoot, workspace);
  return inside ? join(worktreePath, inside) : worktreePath;
}
