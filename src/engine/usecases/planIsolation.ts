import { resolve } from 'node:path';
import type { IsolationPlan, RunIsolation } from '../domain/isolation';
import type { Task } from '../domain/types';
import { probeRepository } from '../effects/git/worktrees';
import { readRunSettings } from '../queries/runs';
import { findRun } from '../queries/runView';
import { readRunIsolation } from '../queries/worktrees';
import type { StoreReader } from '../store/port';

/**
 * Decides how a task runs (docs/isolation.md): its own `isolation:` wins, else the run's
 * setting; `auto` is a worktree when the workspace is a git repository and more than one
 * task may run at once. The first isolated dispatch of a run checks the repository (git
 * present, a repository, a branch checked out, a clean tree — the run's own plan file and
 * `.baton/` do not count as changes) and records the run's target branch and base commit; a
 * problem is a gate, never a silent fallback.
 */
export async function planIsolation(
  read: <T>(work: (r: StoreReader) => Promise<T>) => Promise<T>,
  workspace: string,
  task: Pick<Task, 'runId' | 'isolation'>,
  maxConcurrency: number,
): Promise<IsolationPlan | { mode: 'decided'; run: RunIsolation }> {
  const { settings, recorded, planPath } = await read(async (r) => ({
    settings: await readRunSettings(r, task.runId),
    recorded: await readRunIsolation(r, task.runId),
    planPath: (await findRun(r, task.runId)).planPath,
  }));
  const setting = settings.isolation ?? 'none';
  if (task.isolation === 'none') return { mode: 'none' };
  if (recorded?.mode === 'none' && task.isolation !== 'worktree') return { mode: 'none' };
  if (recorded?.mode === 'worktree' && recorded.repoRoot && recorded.targetBranch && recorded.baseCommit) {
    return {
      mode: 'worktree',
      run: recorded as RunIsolation & { repoRoot: string; targetBranch: string; baseCommit: string },
    };
  }
  if (recorded?.mode === 'none' && recorded.note?.startsWith('approved')) return { mode: 'none' };
  const explicit = task.isolation === 'worktree' || setting === 'worktree';
  if (!explicit && (setting === 'none' || maxConcurrency <= 1)) return { mode: 'none' };
  const strategy = settings.integration ?? 'merge';
  const probe = await probeRepository(workspace, { ignore: [resolve(workspace, planPath)] });
  if (!probe.ok) {
    if (!explicit && probe.problem !== 'dirty' && probe.problem !== 'detached') {
      // auto outside a git repository (or without git): the shared working tree, recorded once for the run.
      return { mode: 'decided', run: { runId: task.runId, mode: 'none', strategy, note: `auto: ${probe.reason}` } };
    }
    return { mode: 'gate', reason: probe.reason, problem: probe.problem };
  }
  return {
    mode: 'worktree',
    run: {
      runId: task.runId,
      mode: 'worktree',
      strategy,
      repoRoot: probe.repoRoot,
      targetBranch: probe.branch,
      baseCommit: probe.head,
    },
  };
}
