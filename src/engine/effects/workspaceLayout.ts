import { join, relative } from 'node:path';

/** Where a run keeps its files in the workspace (DESIGN §3 layout). */
export function runPaths(workspace: string, runId: string) {
  const root = join(workspace, '.baton', 'runs', runId);
  return {
    root,
    artifact: (delegationId: string) => join(root, 'artifacts', `${delegationId}.md`),
    prompt: (delegationId: string) => join(root, 'prompts', `${delegationId}.md`),
    log: (delegationId: string) => join(root, 'logs', `${delegationId}.log`),
    verifyLog: (delegationId: string) => join(root, 'logs', `${delegationId}.verify.log`),
  };
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
    path: join(workspace, '.baton', 'worktrees', runId, `${taskId}-${n}`),
    branch: `baton/${runId}/${taskId}/${n}`,
  };
}

export function worktreesRoot(workspace: string, runId?: string): string {
  return runId ? join(workspace, '.baton', 'worktrees', runId) : join(workspace, '.baton', 'worktrees');
}

/** The worker's folder inside a worktree: the workspace's place in the repository, mirrored. */
export function workspaceInWorktree(worktreePath: string, repoRoot: string, workspace: string): string {
  const inside = relative(repoRoot, workspace);
  return inside ? join(worktreePath, inside) : worktreePath;
}
