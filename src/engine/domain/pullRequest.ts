// `integration: branch` (docs/isolation.md, "Branch and pull request"): what the pull request of a pushed task says,
// whether gh can open it, and what of git's answer may be shown — from plain values, so each is tested alone.

/** What a task's pull request is made of: the task, its result, and the verify commands it passed. */
export interface PullRequestFacts {
  taskId: string;
  title: string;
  delegationId: string;
  runId: string;
  /** The result's summary ('' for an sdd-result block, which has none). */
  summary: string;
  /** The result's artifact paths, as written. */
  artifacts: readonly string[];
  /** The verify receipts of the attempt: its own worktree's, then the merged tree's (`tree`). */
  receipts: readonly {
    command: readonly string[];
    exitCode: number | null;
    timedOut: boolean;
    durationMs: number;
    tree?: string;
  }[];
  branch: string;
  targetBranch: string;
}

export interface PullRequestText {
  title: string;
  body: string;
}

/** Title: the task's title (its id when it has none); body: the summary, artifacts, verify receipts, provenance. */
export function pullRequestText(facts: PullRequestFacts): PullRequestText {
  const title = facts.title.trim() || facts.taskId;
  const lines = [facts.summary.trim() || `${facts.taskId} passed.`, ''];
  if (facts.artifacts.length > 0) lines.push('### Artifacts', '', ...facts.artifacts.map((a) => `- \`${a}\``), '');
  if (facts.receipts.length > 0) {
    lines.push('### Verification', '');
    for (const r of facts.receipts) {
      const how = r.timedOut ? 'timed out' : `exit ${String(r.exitCode)}`;
      const where = r.tree ? ` on the merged tree ${r.tree.slice(0, 10)}` : '';
      lines.push(`- \`${r.command.join(' ')}\`: ${how}, ${r.durationMs} ms${where}`);
    }
    lines.push('');
  }
  lines.push(
    '---',
    `Baton run ${facts.runId}, task ${facts.taskId}, delegation ${facts.delegationId}: branch \`${facts.branch}\` into \`${facts.targetBranch}\`.`,
  );
  return { title, body: `${lines.join('\n')}\n` };
}

/** Whether gh can open the pull request: on PATH (`gh auth status` starts at all) and logged in (it exits 0). */
export type GhReadiness = { kind: 'ready' } | { kind: 'absent' } | { kind: 'unauthenticated'; detail: string };

export function ghReadiness(
  version: { found: boolean },
  auth: { exitCode: number | undefined; output: string } | undefined,
): GhReadiness {
  if (!version.found) return { kind: 'absent' };
  if (auth?.exitCode === 0) return { kind: 'ready' };
  return {
    kind: 'unauthenticated',
    detail: withoutCredentials(lastLine(auth?.output ?? '') ?? 'gh auth status failed'),
  };
}

/** One argument for a POSIX shell, in single quotes: a suggested command is pasted into a terminal as it is. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The gh command that opens the pull request (argv); the body is read from a file, never an argument. */
export function ghPullRequestArgs(
  text: Pick<PullRequestText, 'title'>,
  where: { branch: string; targetBranch: string; bodyFile: string },
): string[] {
  return [
    'pr',
    'create',
    '--head',
    where.branch,
    '--base',
    where.targetBranch,
    '--title',
    text.title,
    '--body-file',
    where.bodyFile,
  ];
}

/**
 * Git's answer with any credentials a remote URL carries (`https://user:token@host/…`) taken out: a remote named by
 * its config may still hold them in its URL, and this text goes into a gate, an event and the log.
 */
export function withoutCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, '$1***@');
}

/** The last lines of git's answer worth keeping (what a push says is short; a hook may say more). */
export function pushAnswerTail(stdout: string, stderr: string, lines = 20): string {
  const all = `${stderr}\n${stdout}`
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  return withoutCredentials(all.slice(-lines).join('\n'));
}

/** The line of git's answer that says why a push was refused, for a one-line reason. */
export function pushRefusal(tail: string): string {
  const lines = tail.split('\n').filter((l) => l.trim() !== '');
  // The ref's own verdict ("! [rejected] … (non-fast-forward)") says more than git's closing "error: failed to push".
  const telling = [/\[(remote )?rejected\]|declined/i, /fatal|denied|could not|unable|timed? ?out/i, /error/i];
  for (const pattern of telling) {
    const line = [...lines].reverse().find((l) => pattern.test(l));
    if (line) return line.trim().replace(/\b([0-9a-f]{10})[0-9a-f]{30}\b/g, '$1');
  }
  return lines.at(-1)?.trim() ?? 'git push failed';
}

function lastLine(text: string): string | undefined {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
}
