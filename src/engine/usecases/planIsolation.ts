import { resolve } from 'node:path';
import { isolationFromProbe, type IsolationNeed, type RunIsolation } from '../domain/isolation';
import type { Gate } from '../domain/types';
import { isolationGateReason } from '../domain/gateReasons';
import { probeRepository, targetHead } from '../effects/git/worktrees';
import { recordRunIsolation } from '../operations/runs/recordRunIsolation';
import { holdTask } from '../operations/tasks/holdTask';
import type { EngineContext } from './context';

/** Where a decided start runs: the shared working tree, or a new worktree from the target branch's head. */
export type StartIsolation =
  | { mode: 'shared'; recorded?: RunIsolation }
  | { mode: 'worktree'; run: RunIsolation & { repoRoot: string; targetBranch: string }; baseCommit: string }
  /**
   * Not now: the repository needs a person — an isolation gate opened (none when the task was no longer ready) —
   * or its target branch could not be read.
   */
  | { mode: 'gated'; gate?: Gate }
  | { mode: 'later'; why: string };

/**
 * Settles how a decided start is isolated (docs/isolation.md; domain/isolation.ts decides what
 * it needs). The first isolated dispatch of a run checks the repository (git present, a
 * repository, a branch checked out, a clean tree — the run's own plan file and `.baton/` do not
 * count as changes): outside git, `auto` falls back to the shared tree, recorded once for the run;
 * any other problem is a gate, never a silent fallback. A worktree starts from the target
 * branch's head now (its claim records the run's isolation the first time).
 */
export async function isolationForStart(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'workspace' | 'log'>,
  input: { runId: string; taskId: string; planPath: string; need: IsolationNeed },
): Promise<StartIsolation> {
  const { runId, taskId, need } = input;
  if (need.mode === 'none') return { mode: 'shared' };
  let run = need.mode === 'worktree' ? need.run : undefined;
  if (need.mode === 'probe') {
    const probe = await probeRepository(ctx.workspace, { ignore: [resolve(ctx.workspace, input.planPath)] });
    const plan = isolationFromProbe(runId, need, probe);
    if (plan.mode === 'none') return { mode: 'shared' };
    if (plan.mode === 'decided') {
      await ctx.store.transact((tx) => recordRunIsolation(tx, plan.run, ctx.clock.now()));
      ctx.log(`isolation: none (${plan.run.note ?? ''})`);
      return { mode: 'shared', recorded: plan.run };
    }
    if (plan.mode === 'gate') {
      const hold = {
        kind: 'isolation-gate' as const,
        reason: isolationGateReason(taskId, plan.reason),
        problem: plan.problem,
      };
      const gate = await ctx.store.transact((tx) => holdTask(tx, { runId, taskId, hold }, ctx.clock.now()));
      return { mode: 'gated', ...(gate ? { gate } : {}) };
    }
    run = plan.run;
  }
  try {
    return { mode: 'worktree', run: run!, baseCommit: await targetHead(run!) };
  } catch (err) {
    return { mode: 'later', why: `cannot read the target branch ${run!.targetBranch}: ${(err as Error).message}` };
  }
}
