import { jsonField } from '../store/rows';
import type { RunIsolation } from '../domain/isolation';
import { Git } from '../effects/git/git';
import type { StorePort } from '../store/port';
import { readRunIsolation } from '../queries/worktrees';

/** A commit the target branch no longer holds: still reachable by its hash. */
export interface MissingCommit {
  sha: string;
  subject: string;
}

/**
 * The run's target branch compared with the head Baton expects it at (docs/isolation.md,
 * "The expected head"):
 * - `as-expected`: where Baton left it;
 * - `forward`: the expected head is an ancestor (someone committed on top): fine;
 * - `backwards` (the branch was rewound: the found head is an ancestor of the expected one) or
 *   `sideways` (neither contains the other: reset to another line of history): commits went
 *   missing from the branch; Baton does not move it until a person decides;
 * - `gone`: the branch cannot be read.
 */
export type TargetCheck =
  | { kind: 'as-expected' | 'forward'; branch: string; expected: string; found: string }
  | {
      kind: 'backwards' | 'sideways';
      branch: string;
      expected: string;
      found: string;
      /** The newest missing commits (at most MISSING_SHOWN), and how many there are in all. */
      missing: MissingCommit[];
      missingCount: number;
    }
  | { kind: 'gone'; branch: string; expected: string; detail: string };

export type TargetMoved = Extract<TargetCheck, { kind: 'backwards' | 'sideways' }>;

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

/** One sentence on a target that moved the wrong way, with the way back (the commits are still there by hash). */
export function describeTargetMoved(moved: TargetMoved): string {
  const how =
    moved.kind === 'backwards'
      ? `was rewound from ${short(moved.expected)} to ${short(moved.found)}`
      : `was moved sideways from ${short(moved.expected)} to ${short(moved.found)} (not a descendant of it)`;
  const shown = moved.missing.map((c) => `${short(c.sha)} ${JSON.stringify(c.subject)}`).join(', ');
  const more =
    moved.missingCount > moved.missing.length ? ` and ${moved.missingCount - moved.missing.length} more` : '';
  return `${moved.branch} ${how}, not by Baton or by a commit on top of it: ${moved.missingCount} commit${moved.missingCount === 1 ? '' : 's'} went missing from it (${shown}${more}). They are still reachable by hash: git branch rescue ${moved.expected} keeps them; git update-ref refs/heads/${moved.branch} ${moved.expected} puts the branch back.`;
}

/** The same for a branch that is gone. */
export function describeTargetGone(gone: Extract<TargetCheck, { kind: 'gone' }>): string {
  return `${gone.branch} cannot be read (${gone.detail.split('\n')[0]}); Baton expected it at ${short(gone.expected)}: git branch ${gone.branch} ${gone.expected} brings it back.`;
}

function short(sha: string): string {
  return sha.slice(0, 10);
}
