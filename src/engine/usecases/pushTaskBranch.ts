// `integration: branch` (docs/isolation.md, "Branch and pull request"): a passed task's work leaves by its branch,
// pushed to the run's remote, and a pull request — opened with gh where it can be, suggested otherwise. The target
// branch never moves.
import type { EngineContext } from './context';
import { faultPoint } from '../store/faultPoint';
import { Git } from '../effects/git/git';
import { loadExeca } from '../effects/processes/execa';
import { writeBatonFile } from '../effects/files/safeWrite';
import { runPaths } from '../effects/workspaceLayout';
import { appendEvent } from '../operations/events/appendEvent';
import { markWorktreePushed } from '../operations/worktrees/worktrees';
import { readArtifact } from '../queries/artifacts';
import { parseResultArtifact } from '../domain/result/parseResult';
import { pushRefusedReason } from '../domain/gateReasons';
import {
  ghPullRequestArgs,
  ghReadiness,
  pullRequestText,
  pushAnswerTail,
  pushRefusal,
  shellQuote,
  type PullRequestFacts,
} from '../domain/pullRequest';
import type { AttemptWorktree } from '../domain/isolation';
import type { EventMap } from '../domain/events';
import { holdAtGate } from './integrationGate';
import { cleanUpIntegrated, completeWaitingAttempt, type SourceState } from './integrationSteps';
import type { IntegrationOutcome } from './integrateAttempt';

/** A push that says nothing this long is ended (a remote that does not answer must not hold the integration lock). */
const PUSH_SILENCE_MS = 120_000;
/** gh talks to GitHub: the same bound. */
const GH_TIMEOUT_MS = 120_000;

/**
 * Pushes the attempt's branch at its source head to `remote` under the branch's own name (the merged tree was checked
 * before, as for every strategy), then opens or suggests its pull request and completes the attempt — pushed, not
 * integrated: the worktree goes, the branch stays (the pull request's head). A refused push (the network, a remote
 * that is not there, a non-fast-forward, a hook) holds the attempt at an integration_failed gate with git's answer;
 * nothing is lost. A push repeated after a crash is a no-op for git.
 */
export async function pushTaskBranch(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  source: SourceState,
  where: { repoRoot: string; remote: string; targetBranch: string; targetHead: string },
): Promise<IntegrationOutcome> {
  const { remote, targetBranch, targetHead } = where;
  const branch = worktree.branch;
  let refusal: string | undefined;
  let tail: string;
  try {
    // The commit that was verified, not whatever the local branch points at by then; no force: a remote branch of
    // that name with other commits is refused, never overwritten.
    const pushed = await Git.forRemote(where.repoRoot, PUSH_SILENCE_MS).attempt([
      'push',
      remote,
      `${source.sourceHead}:refs/heads/${branch}`,
    ]);
    tail =
      pushAnswerTail(pushed.stdout, pushed.stderr) ||
      `git push exited with ${pushed.exitCode} without a word (a remote silent for ${PUSH_SILENCE_MS / 1000} s is ended)`;
    if (pushed.exitCode !== 0) refusal = pushRefusal(tail);
  } catch (err) {
    // Not an exit code: git could not run, or the silence bound ended it.
    tail = pushAnswerTail('', (err as Error).message);
    refusal = pushRefusal(tail);
  }
  if (refusal !== undefined) return holdForRefusedPush(ctx, runId, worktree, { remote, refusal, tail, source });
  faultPoint('integration:after-push');

  const facts = await pullRequestFacts(ctx, runId, worktree, targetBranch);
  const text = pullRequestText(facts);
  const bodyFile = runPaths(ctx.workspace, runId).pullRequest(worktree.delegationId);
  const written = writeBody(ctx.workspace, bodyFile, text.body);
  const args = ghPullRequestArgs(text, { branch, targetBranch, bodyFile });
  const pullRequest: EventMap['integration:pull-request'] = {
    delegationId: worktree.delegationId,
    taskId: worktree.taskId,
    branch,
    targetBranch,
    title: text.title,
    bodyFile,
    command: ['gh', ...args].map(shellQuote).join(' '),
    // The branch is pushed either way: a body that could not be written (a link planted there) only costs gh its run.
    ...(written === true
      ? await openPullRequest(where.repoRoot, args)
      : { opened: false, gh: 'failed' as const, detail: `its body was not written: ${written}` }),
  };
  await ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    const key = { runId, delegationId: worktree.delegationId };
    await markWorktreePushed(tx, key, { ...source, targetBefore: targetHead }, now);
    await appendEvent(tx, runId, 'integration:pushed', now, {
      delegationId: worktree.delegationId,
      taskId: worktree.taskId,
      remote,
      branch,
      sourceHead: source.sourceHead,
      targetBranch,
      targetHead,
    });
    await appendEvent(tx, runId, 'integration:pull-request', now, pullRequest);
    const pr = pullRequest.url ? `pull request ${pullRequest.url}` : 'pull request suggested';
    await completeWaitingAttempt(tx, runId, worktree, `pushed to ${remote} as ${branch} (${pr})`, now);
  });
  ctx.log(
    `${worktree.delegationId}: pushed to ${remote} as ${branch}; ${targetBranch} did not move; ${
      pullRequest.url ? `pull request ${pullRequest.url}` : `pull request to open: ${pullRequest.command}`
    }`,
  );
  await cleanUpIntegrated(ctx, runId, worktree, { keepBranch: true });
  return {
    kind: 'pushed',
    remote,
    branch,
    sourceHead: source.sourceHead,
    ...(pullRequest.url ? { url: pullRequest.url } : {}),
  };
}

async function holdForRefusedPush(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  push: { remote: string; refusal: string; tail: string; source: SourceState },
): Promise<IntegrationOutcome> {
  const gateId = await holdAtGate(
    ctx,
    runId,
    worktree,
    {
      kind: 'integration_failed',
      why: `push to ${push.remote} refused`,
      reason: pushRefusedReason(worktree, push),
      // sourceHead: an approval pushes this very commit again without verifying its merged tree again (mergeQueue.ts).
      details: { push: true, remote: push.remote, output: push.tail, sourceHead: push.source.sourceHead },
    },
    (tx, id, now) =>
      appendEvent(tx, runId, 'integration:push-failed', now, {
        delegationId: worktree.delegationId,
        taskId: worktree.taskId,
        remote: push.remote,
        branch: worktree.branch,
        refusal: push.refusal,
        gateId: id,
      }),
  );
  ctx.log(
    `${worktree.delegationId}: push of ${worktree.branch} to ${push.remote} refused: ${push.refusal}; ${gateId} opened`,
  );
  return { kind: 'push-refused', remote: push.remote, refusal: push.refusal, gateId };
}

/** Writes the pull request's body under `.baton/` (never through a link); true, or why not. */
function writeBody(workspace: string, path: string, body: string): true | string {
  try {
    writeBatonFile(workspace, path, body);
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The task's title, its accepted result's summary and artifacts, and the attempt's verify receipts. */
async function pullRequestFacts(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  targetBranch: string,
): Promise<PullRequestFacts> {
  return ctx.store.read(async (r) => {
    const task = await r.get<{ title: string }>(`SELECT title FROM tasks WHERE run_id = ? AND id = ?`, [
      runId,
      worktree.taskId,
    ]);
    const accepted = await r.get<{ digest: string }>(
      `SELECT digest FROM ingestions WHERE run_id = ? AND delegation_id = ? AND accepted = 1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [runId, worktree.delegationId],
    );
    const artifact = accepted ? await readArtifact(r, accepted.digest) : undefined;
    const result = artifact ? parseResultArtifact(artifact.content).result : undefined;
    const receipts = await r.all<{
      command_json: string;
      exit_code: number | null;
      timed_out: number;
      duration_ms: number;
      tree_digest: string | null;
    }>(
      `SELECT command_json, exit_code, timed_out, duration_ms, tree_digest FROM verification_receipts
       WHERE run_id = ? AND delegation_id = ? ORDER BY id`,
      [runId, worktree.delegationId],
    );
    return {
      taskId: worktree.taskId,
      title: task?.title ?? '',
      delegationId: worktree.delegationId,
      runId,
      summary: result?.summary ?? '',
      artifacts: result?.artifacts ?? [],
      receipts: receipts.map((x) => ({
        command: JSON.parse(x.command_json) as string[],
        exitCode: x.exit_code,
        timedOut: x.timed_out === 1,
        durationMs: x.duration_ms,
        ...(x.tree_digest ? { tree: x.tree_digest } : {}),
      })),
      branch: worktree.branch,
      targetBranch,
    };
  });
}

/**
 * Opens the pull request with gh where it is installed and logged in; otherwise says why not. Never a failure of the
 * task: the branch is pushed, the pull request is one command away.
 */
async function openPullRequest(
  repoRoot: string,
  args: string[],
): Promise<Pick<EventMap['integration:pull-request'], 'opened' | 'url' | 'gh' | 'detail'>> {
  const { execa } = await loadExeca();
  const gh = (ghArgs: string[]) =>
    execa('gh', ghArgs, { cwd: repoRoot, reject: false, timeout: GH_TIMEOUT_MS, stdin: 'ignore', all: true });
  const auth = await gh(['auth', 'status']);
  const readiness = ghReadiness(
    { found: auth.code !== 'ENOENT' },
    { exitCode: auth.exitCode, output: String(auth.all ?? '') },
  );
  if (readiness.kind === 'absent') return { opened: false, gh: 'absent' };
  if (readiness.kind === 'unauthenticated') return { opened: false, gh: 'unauthenticated', detail: readiness.detail };
  const created = await gh(args);
  const out = String(created.all ?? '');
  if (created.exitCode !== 0)
    return { opened: false, gh: 'failed', detail: out.trim().split('\n').at(-1) ?? 'gh pr create failed' };
  const url = /https?:\/\/\S+/.exec(String(created.stdout ?? ''))?.[0];
  return { opened: true, ...(url ? { url } : {}) };
}
