import { realpathSync } from 'node:fs';
import { BatonError } from '../domain/errors';
import { Git } from '../effects/git/git';
import { thisHost } from '../effects/processes/processes';
import { readCoordinatorLease } from '../queries/coordinatorLease';
import { readRunIsolation } from '../queries/worktrees';
import type { StorePort } from '../store/port';

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // not on this machine: compared as written
  }
}

/**
 * A run isolated in worktrees works in one git repository — the clone that started it: its
 * worktrees, branches and integrations live there (docs/team.md, "Git across clones"). A
 * coordinator in any other clone (another machine's, or another folder on this one) is refused
 * before it takes the run: it would integrate into a branch that lacks the run's work. So is
 * one in a repository that lacks the commit the run's target branch must contain. Observing,
 * deciding gates and stopping work from every clone; a shared-tree run has no repository of
 * its own and may be driven from any.
 */
export async function assertRunRepositoryHere(store: StorePort, workspace: string, runId: string): Promise<void> {
  const { run, lastHolder } = await store.read(async (r) => ({
    run: await readRunIsolation(r, runId),
    lastHolder: await readCoordinatorLease(r, runId),
  }));
  if (run?.mode !== 'worktree' || !run.repoRoot) return;
  const top = await new Git(workspace).attempt(['rev-parse', '--show-toplevel']);
  const here = top.exitCode === 0 ? canonical(top.stdout.trim()) : undefined;
  const required = run.expectedHead ?? run.baseCommit;
  const elsewhere = `Run ${runId} works in worktrees of the git repository at ${run.repoRoot}, the clone that started it`;
  if (here !== canonical(run.repoRoot))
    throw new BatonError(
      'run.other-clone',
      `${elsewhere}; this workspace is ${here ? `in ${here}` : 'not in a git repository'}. Drive it from that clone (this one can observe it, decide its gates and stop it).`,
    );
  // Another machine with its clone at the same path: it must hold what the run integrated there.
  const fromAnotherHost = lastHolder !== undefined && lastHolder.identity.host !== thisHost();
  if (
    fromAnotherHost &&
    required &&
    (await new Git(here).attempt(['cat-file', '-e', `${required}^{commit}`])).exitCode !== 0
  )
    throw new BatonError(
      'run.other-clone',
      `${elsewhere}; this repository lacks commit ${required.slice(0, 10)}, which its ${run.targetBranch ?? 'target'} branch must contain. Fetch it, or drive the run from the clone that has it.`,
    );
}
