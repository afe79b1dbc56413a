import { jsonField } from '../store/rows';
import type { RunIsolation } from '../domain/isolation';
import type { TargetCheck } from '../domain/targetHead';
import { Git } from '../effects/git/git';
import type { StorePort } from '../store/port';
import { readRunIsolation } from '../queries/worktrees';

/** How many of the missing commits a check lists (the newest). */
const MISSING_SHOWN = 10;

/** Compares `found` (the branch now) with `expected`, in the repository at `git`. */
export async function compareTargetHead(
  git: Git,
  branch: string,
  expected: string,
  found: string,
): Promise<TargetCheck> {
  if (found === expected) return { kind: 'as-expected', branch, expected, found };
  if (await git.isAncestor(expected, found)) return { kind: 'forward', branch, expected, found };
  const kind = (await git.isAncestor(found, expected)) ? 'backwards' : 'sideways';
  const count = await git.attempt(['rev-list', '--count', `${found}..${expected}`]);
  const log = await git.attempt(['log', `--max-count=${MISSING_SHOWN}`, '--format=%H %s', `${found}..${expected}`]);
  const missing = log.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ sha: line.slice(0, 40), subject: line.slice(41) }));
  return {
    kind,
    branch,
    expected,
    found,
    missing,
    missingCount: count.exitCode === 0 ? Number(count.stdout.trim()) : missing.length,
  };
}

/** The run's target branch now, against what Baton expects; undefined for a run without a worktree target. */
export async function checkTargetBranch(store: StorePort, runId: string): Promise<TargetCheck | undefined> {
  const run = await store.read((r) => readRunIsolation(r, runId));
  return checkTargetOf(store, run);
}

export async function checkTargetOf(store: StorePort, run: RunIsolation | undefined): Promise<TargetCheck | undefined> {
  const expected = run?.expectedHead ?? run?.baseCommit;
  if (run?.mode !== 'worktree' || !run.repoRoot || !run.targetBranch || !expected) return undefined;
  const git = new Git(run.repoRoot);
  let found: string;
  try {
    found = await git.revParse(`refs/heads/${run.targetBranch}`);
  } catch (err) {
    return { kind: 'gone', branch: run.targetBranch, expected, detail: (err as Error).message };
  }
  const check = await compareTargetHead(git, run.targetBranch, expected, found);
  if (check.kind === 'backwards' || check.kind === 'sideways') {
    if (await putBackAfterApproval(store, git, run.runId, expected, found))
      return { kind: 'forward', branch: run.targetBranch, expected, found };
  }
  return check;
}

/**
 * A person who approved a target_moved gate accepted the branch as it was then (`found`, now
 * the expected head) — or put it back where Baton had it (`git update-ref … <expected>`) and
 * approved. The second is a descendant of the gate's `expected`, not of `found` when the move
 * was sideways: it is accepted too.
 */
export async function putBackAfterApproval(
  store: StorePort,
  git: Git,
  runId: string,
  expected: string,
  targetNow: string,
): Promise<boolean> {
  const gates = await store.read((r) =>
    r.all<{ details_json: string | null }>(
      `SELECT details_json FROM gates WHERE run_id = ? AND kind = 'target_moved' AND status = 'approved'
       ORDER BY ordinal DESC`,
      [runId],
    ),
  );
  const approved = gates.find((g) => jsonField(g.details_json, 'found') === expected);
  const before = approved ? jsonField(approved.details_json, 'expected') : undefined;
  return before !== undefined && (await git.isAncestor(before, targetNow));
}
