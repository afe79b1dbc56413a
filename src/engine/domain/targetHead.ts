// The run's target branch against the head Baton expects it at (docs/isolation.md, "The
// expected head"): what comparing them can find, and how Baton says it. Comparing is git's
// work (usecases/targetBranch.ts); this is what it finds.

/** A commit the target branch no longer holds: still reachable by its hash. */
export interface MissingCommit {
  sha: string;
  subject: string;
}

/**
 * The run's target branch compared with the head Baton expects it at:
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
      /** The newest missing commits (at most a few), and how many there are in all. */
      missing: MissingCommit[];
      missingCount: number;
    }
  | { kind: 'gone'; branch: string; expected: string; detail: string };

export type TargetMoved = Extract<TargetCheck, { kind: 'backwards' | 'sideways' }>;

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
