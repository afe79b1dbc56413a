import { markWorktreeRemoved } from '../operations/worktrees/worktrees';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../domain/clock';
import type { StorePort } from '../store/port';
import { folderSize } from '../effects/folderSize';
import { Git } from '../effects/git/git';
import { removeWorktree } from '../effects/git/worktrees';
import { listAttemptWorktrees, readRunIsolation } from '../queries/worktrees';
import { worktreesRoot } from '../effects/workspaceLayout';
import { batonFolderState } from '../effects/files/safeRead';
import { type AttemptWorktree } from '../domain/isolation';
import { describeTargetGone, describeTargetMoved } from '../domain/targetHead';
import { checkTargetOf } from './targetBranch';

export interface WorktreeFinding {
  taskId?: string;
  delegationId?: string;
  path: string;
  /** What the evidence says, in a sentence. */
  finding: string;
  /** The finding is about the run's target branch (in the repository at `path`), not a worktree. */
  target?: boolean;
}

export interface CleanupReport {
  removed: Array<WorktreeFinding & { bytes: number }>;
  kept: WorktreeFinding[];
  freedBytes: number;
}

/** Attempts whose worktree must stay: the work is in flight or waits on a person's decision. */
async function keptReason(store: StorePort, runId: string, worktree: AttemptWorktree): Promise<string | undefined> {
  const facts = await store.read(async (r) => ({
    delegation: await r.get<{ status: string }>(`SELECT status FROM delegations WHERE run_id = ? AND id = ?`, [
      runId,
      worktree.delegationId,
    ]),
    gate: await r.get<{ id: string; kind: string }>(
      `SELECT id, kind FROM gates WHERE run_id = ? AND delegation_id = ? AND status = 'open' ORDER BY ordinal DESC LIMIT 1`,
      [runId, worktree.delegationId],
    ),
  }));
  if (facts.gate) return `waits at ${facts.gate.id} (${facts.gate.kind}); decide the gate first`;
  if (facts.delegation?.status === 'RUNNING' || facts.delegation?.status === 'PENDING')
    return 'its attempt is still in flight';
  return undefined;
}

/**
 * `baton cleanup --run` (docs/isolation.md, "Cleanup"): removes the worktrees and branches
 * of the run's attempts that are over — integrated, failed, stale, cancelled, discarded —
 * and folders under the run's worktree folder that no attempt knows. Keeps those still in
 * flight or waiting at an open gate, and says why.
 */
export async function cleanupWorktrees(
  store: StorePort,
  clock: Clock,
  workspace: string,
  runId: string,
): Promise<CleanupReport> {
  const { run, worktrees } = await store.read(async (r) => ({
    run: await readRunIsolation(r, runId),
    worktrees: await listAttemptWorktrees(r, runId),
  }));
  const report: CleanupReport = { removed: [], kept: [], freedBytes: 0 };
  const known = new Set<string>();
  const root = worktreesRoot(workspace, runId);
  const planted = batonFolderState(workspace, root) === 'link';
  for (const worktree of worktrees) {
    known.add(worktree.path);
    if (worktree.removedAt !== undefined) continue;
    const base = { taskId: worktree.taskId, delegationId: worktree.delegationId, path: worktree.path };
    const why = planted ? PLANTED : await keptReason(store, runId, worktree);
    if (why) {
      report.kept.push({ ...base, finding: why });
      continue;
    }
    const bytes = folderSize(worktree.path);
    // A pushed attempt's branch is its pull request's head: only its worktree goes.
    if (run?.repoRoot) await removeWorktree(run.repoRoot, worktree, { keepBranch: worktree.status === 'pushed' });
    else rmSync(worktree.path, { recursive: true, force: true });
    await store.transact(async (tx) => {
      await markWorktreeRemoved(tx, { runId, delegationId: worktree.delegationId }, clock.now(), { retired: true });
    });
    report.removed.push({
      ...base,
      bytes,
      finding:
        worktree.status === 'integrated' || worktree.status === 'pushed'
          ? worktree.status
          : 'attempt over; its work was not integrated',
    });
    report.freedBytes += bytes;
  }
  if (planted && batonFolderState(workspace, worktreesRoot(workspace)) === 'real') {
    // The link at <run> itself goes (rm never follows it); what it points to is not Baton's. A link further up is
    // left to the person: removing it is not cleanup of this run.
    rmSync(root, { force: true });
    report.removed.push({ path: root, bytes: 0, finding: `${PLANTED_ROOT}; removed the link, not what it points to` });
  } else if (planted) report.kept.push({ path: root, finding: PLANTED });
  for (const path of strayFolders(workspace, runId, known)) {
    const bytes = folderSize(path);
    if (run?.repoRoot) await new Git(run.repoRoot).attempt(['worktree', 'remove', '--force', path]);
    rmSync(path, { recursive: true, force: true });
    report.removed.push({ path, bytes, finding: 'no attempt knows this folder' });
    report.freedBytes += bytes;
  }
  if (run?.repoRoot) await new Git(run.repoRoot).attempt(['worktree', 'prune']);
  return report;
}

/**
 * What reconcile and diagnose say about a run's worktrees: a target branch that moved
 * backwards or sideways since Baton last saw it, stray folders, kept worktrees of attempts
 * that are over, recorded ones that are missing, and integrations whose commit is not on the
 * target branch (reported, never redone).
 */
export async function inspectWorktrees(store: StorePort, workspace: string, runId: string): Promise<WorktreeFinding[]> {
  const { run, worktrees } = await store.read(async (r) => ({
    run: await readRunIsolation(r, runId),
    worktrees: await listAttemptWorktrees(r, runId),
  }));
  if (worktrees.length === 0 && !existsSync(worktreesRoot(workspace, runId))) return [];
  const findings: WorktreeFinding[] = [];
  // The target branch itself: moved backwards or sideways since Baton last saw it (a worker can, through shared refs).
  const target = await checkTargetOf(store, run);
  if (
    target &&
    run?.repoRoot &&
    (target.kind === 'backwards' || target.kind === 'sideways' || target.kind === 'gone')
  ) {
    findings.push({
      path: run.repoRoot,
      target: true,
      finding:
        target.kind === 'gone'
          ? `${describeTargetGone(target)} Nothing can be integrated until it is back.`
          : `${describeTargetMoved(target)} Baton integrates nothing into it until a person decides (the next integration opens a target_moved gate).`,
    });
  }
  const git = run?.repoRoot ? new Git(run.repoRoot) : undefined;
  const targetHead =
    git && run?.targetBranch
      ? await git.attempt(['rev-parse', '--verify', '--quiet', `refs/heads/${run.targetBranch}`])
      : undefined;
  for (const worktree of worktrees) {
    const base = { taskId: worktree.taskId, delegationId: worktree.delegationId, path: worktree.path };
    if (worktree.status === 'integrated' && worktree.targetAfter && git && targetHead) {
      const onTarget =
        targetHead.exitCode === 0 && (await git.isAncestor(worktree.targetAfter, targetHead.stdout.trim()));
      if (!onTarget) {
        findings.push({
          ...base,
          finding: `recorded as integrated (${worktree.targetAfter.slice(0, 10)}), but that commit is not on ${run!.targetBranch}: the branch was reset or rewritten. Not redone; integrate it again by hand if it is needed.`,
        });
      }
    }
    if (worktree.removedAt !== undefined) continue;
    const present = existsSync(worktree.path);
    const why = await keptReason(store, runId, worktree);
    if (!present && why) findings.push({ ...base, finding: `its worktree is missing (${why})` });
    else if (present && !why && worktree.status !== 'integrated' && worktree.status !== 'pushed')
      findings.push({
        ...base,
        finding: `kept worktree of an attempt that is over (${folderSize(worktree.path)} bytes); baton cleanup --run ${runId} removes it`,
      });
  }
  if (batonFolderState(workspace, worktreesRoot(workspace, runId)) === 'link')
    findings.push({
      path: worktreesRoot(workspace, runId),
      finding: `${PLANTED_ROOT}; Baton does not look through it. baton cleanup --run ${runId} removes the link`,
    });
  for (const path of strayFolders(workspace, runId, new Set(worktrees.map((w) => w.path)))) {
    findings.push({
      path,
      finding: `a worktree folder no attempt of this run knows (${folderSize(path)} bytes); baton cleanup --run ${runId} removes it`,
    });
  }
  return findings;
}

/** What a link at `.baton/worktrees/<run>` (or above it) is told as: a worker can plant one there. */
const PLANTED_ROOT = "a link (or not a folder) where the run's worktree folder should be";
const PLANTED = `${PLANTED_ROOT}: nothing is removed through it`;

/** Folders under the run's worktree folder that no attempt knows; none when that folder is not a real one. */
function strayFolders(workspace: string, runId: string, known: Set<string>): string[] {
  const root = worktreesRoot(workspace, runId);
  if (batonFolderState(workspace, root) !== 'real') return [];
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(root, e.name))
      .filter((path) => !known.has(path));
  } catch {
    return [];
  }
}
