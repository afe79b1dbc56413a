import { existsSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { AttemptWorktree } from '../domain/isolation';
import { getAttemptWorktree, readRunIsolation } from '../queries/worktrees';
import type { EngineContext } from './context';

/** Where an isolated attempt's worktree is, for a person to open it (the editor's *Open Worktree…*). */
export interface AttemptWorktreePlace {
  delegationId: string;
  taskId: string;
  /** The worktree's top folder. */
  path: string;
  /**
   * The folder the attempt's worker ran in: the workspace's place in the worktree (the same sub-folder when the
   * workspace is a sub-folder of the repository), else the worktree's top.
   */
  folder: string;
  branch: string;
  status: AttemptWorktree['status'];
  /** False once it was removed (integrated, discarded, `baton cleanup`) or deleted by hand. */
  onDisk: boolean;
}

/** The worktree of an attempt, or undefined when the attempt ran in the shared working tree. */
export async function locateAttemptWorktree(
  ctx: Pick<EngineContext, 'store' | 'workspace'>,
  runId: string,
  delegationId: string,
): Promise<AttemptWorktreePlace | undefined> {
  const { worktree, run } = await ctx.store.read(async (r) => ({
    worktree: await getAttemptWorktree(r, runId, delegationId),
    run: await readRunIsolation(r, runId),
  }));
  if (!worktree) return undefined;
  const onDisk = worktree.removedAt === undefined && existsSync(worktree.path);
  const inside = run?.repoRoot ? relative(realPath(run.repoRoot), realPath(ctx.workspace)) : '';
  const folder = inside && !inside.startsWith('..') ? join(worktree.path, inside) : worktree.path;
  return {
    delegationId,
    taskId: worktree.taskId,
    path: worktree.path,
    folder: onDisk && existsSync(folder) ? folder : worktree.path,
    branch: worktree.branch,
    status: worktree.status,
    onDisk,
  };
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
