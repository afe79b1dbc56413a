import {
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { UnfinishedResolution } from '../../domain/conflictResolution';
import type { AttemptWorktree, RepositoryProbe } from '../../domain/isolation';
import { createFenced, openFenced, readFenced } from '../../platform/fencedFiles';
import { writeThrough } from '../files/safeWrite';
import { BATON_DIR } from '../workspaceLayout';
import { findGit, Git, workTreeOf } from './git';

/**
 * Can this workspace's tasks run in worktrees? Says exactly why not. `ignore` (absolute paths)
 * are files that do not count as uncommitted work: the run's plan — a worker gets its task
 * from the plan text frozen into the run, not from the file — like everything under `.baton/`.
 */
export async function probeRepository(
  workspace: string,
  options: { ignore?: readonly string[] } = {},
): Promise<RepositoryProbe> {
  if (!(await findGit()))
    return {
      ok: false,
      problem: 'git-missing',
      reason: 'git is not installed or not on PATH, so tasks cannot get worktrees of their own.',
    };
  const git = new Git(workspace);
  const top = await git.attempt(['rev-parse', '--show-toplevel']);
  if (top.exitCode !== 0)
    return {
      ok: false,
      problem: 'not-a-repository',
      reason: `${workspace} is not in a git repository, so tasks cannot get worktrees of their own.`,
    };
  const repoRoot = top.stdout.trim();
  // A workspace in an ignored folder of some outer repository (a scratch copy under node_modules or .cache) is not part
  // of it.
  if ((await git.attempt(['check-ignore', '--quiet', '--no-index', workspace])).exitCode === 0) {
    return {
      ok: false,
      problem: 'not-a-repository',
      reason: `${workspace} is in a folder the git repository at ${repoRoot} ignores, so tasks cannot get worktrees of their own.`,
    };
  }
  const head = await git.attempt(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (head.exitCode !== 0)
    return {
      ok: false,
      problem: 'no-commit',
      reason: `The repository at ${repoRoot} has no commit yet; worktrees start from a commit. Commit once first.`,
    };
  const branch = await git.currentBranch();
  if (!branch)
    return {
      ok: false,
      problem: 'detached',
      reason: `HEAD is detached in ${repoRoot}; Baton integrates finished tasks into a branch. Check out a branch first.`,
    };
  ensureBatonExcluded(repoRoot);
  // git prints the repository root with links resolved; so are these paths before comparing.
  const batonDir = toGitPath(relative(repoRoot, join(realPath(workspace), BATON_DIR)));
  const ignored = new Set((options.ignore ?? []).map((path) => toGitPath(relative(repoRoot, realPath(path)))));
  // `.baton/` is excluded above; a tracked file under it (a committed config.json) still is not the user's work.
  const dirty = (await git.dirtyPaths()).filter((path) => !ignored.has(path) && !path.startsWith(`${batonDir}/`));
  if (dirty.length > 0) {
    const shown = dirty.slice(0, 5).join(', ') + (dirty.length > 5 ? ` and ${dirty.length - 5} more` : '');
    return {
      ok: false,
      problem: 'dirty',
      reason: `The working tree has uncommitted changes (${shown}); isolated tasks start from the last commit on ${branch} and would not see them. Commit or stash them first.`,
    };
  }
  return { ok: true, repoRoot, branch, head: head.stdout.trim() };
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // not there (any more): as given
  }
}

/** Paths as git prints them: relative to the repository root, with `/`. */
function toGitPath(path: string): string {
  return path.split(sep).join('/');
}

/**
 * Before Baton's first write to a workspace (the store opens, `baton init`): when the
 * workspace is in a git repository, what `.baton/` holds goes into that repository's info/exclude
 * (all but config.json), so the store, logs and worktrees never show as untracked files in Source
 * Control — not only once a task first runs in a worktree. Returns the repository root, if any.
 */
export function excludeBatonFromRepository(workspace: string): string | undefined {
  const repoRoot = workTreeOf(workspace);
  if (repoRoot) ensureBatonExcluded(repoRoot);
  return repoRoot;
}

/**
 * Every `.baton/` folder's contents (the workspace may be a sub-folder of the repository): the store, logs,
 * artifacts and worktrees are never the user's work — but `config.json` is meant to be committed and shared
 * (docs/config.md), so it is left visible to Source Control. (Git cannot re-include a file whose folder is excluded:
 * the pattern excludes what is in `.baton/`, not the folder.)
 */
const BATON_EXCLUDE = [
  "# Baton's store, logs and task worktrees; .baton/config.json is meant to be committed",
  '**/.baton/*',
  '!**/.baton/config.json',
] as const;

/** What Baton wrote before config.json was left visible: replaced by BATON_EXCLUDE where found as written. */
const EARLIER_BATON_EXCLUDE = [
  "# Baton's store, logs and task worktrees (baton init: commit config.json with git add -f)",
  '.baton/',
] as const;

/**
 * How the repository's info/exclude must change so that Baton's state is excluded and its config is not: nothing
 * (Baton's lines are there, or the person excluded `.baton/` in their own words — theirs to decide), Baton's lines
 * appended, or the file rewritten with Baton's earlier lines replaced in place.
 */
export function batonExcludeEdit(current: string): { kind: 'none' } | { kind: 'append' | 'rewrite'; text: string } {
  const lines = current.split('\n');
  const trimmed = lines.map((line) => line.trim());
  if (BATON_EXCLUDE.slice(1).every((line) => trimmed.includes(line))) return { kind: 'none' };
  const earlier = trimmed.findIndex(
    (line, i) => line === EARLIER_BATON_EXCLUDE[0] && trimmed[i + 1] === EARLIER_BATON_EXCLUDE[1],
  );
  if (earlier >= 0)
    return {
      kind: 'rewrite',
      text: [...lines.slice(0, earlier), ...BATON_EXCLUDE, ...lines.slice(earlier + 2)].join('\n'),
    };
  if (trimmed.some((line) => line === '.baton/' || line === '.baton' || line === '**/.baton/*'))
    return { kind: 'none' };
  return {
    kind: 'append',
    text: `${current === '' || current.endsWith('\n') ? '' : '\n'}${BATON_EXCLUDE.join('\n')}\n`,
  };
}

/**
 * `.baton/`'s state (store, logs, worktrees) is never part of the user's history: it goes into the
 * repository's info/exclude (never into a file the user commits).
 */
export function ensureBatonExcluded(repoRoot: string): void {
  const gitPath = join(repoRoot, '.git');
  let gitDir = gitPath;
  try {
    // A worktree or submodule has a .git file pointing at the real folder.
    const text = readFileSync(gitPath, 'utf8');
    const match = /^gitdir: (.+)$/m.exec(text);
    if (match) {
      const own = resolve(repoRoot, match[1]!.trim());
      gitDir = existsSync(join(own, 'commondir'))
        ? resolve(own, readFileSync(join(own, 'commondir'), 'utf8').trim())
        : own;
    }
  } catch {
    // .git is a folder (the usual case)
  }
  // info/ and info/exclude are writable from every worktree: read and written through the fence (a link there, to a
  // file outside, is refused — workspace.link-refused — never written through). The git folder itself is trusted as
  // the repository has it (a linked .git is the user's setup).
  const root = realpathSync(gitDir);
  const exclude = join(root, 'info', 'exclude');
  const edit = batonExcludeEdit(readFenced(root, exclude, MAX_EXCLUDE_BYTES)?.bytes.toString('utf8') ?? '');
  if (edit.kind === 'append')
    writeThrough(
      openFenced(root, exclude, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, {
        purpose: 'write',
        createFolders: true,
      }),
      edit.text,
    );
  else if (edit.kind === 'rewrite') {
    // The person's own lines are in this file: a new one is written beside it and renamed over it, so a crash leaves
    // the old file or the new one, never half of either.
    const next = `${exclude}.baton-${process.pid}`;
    const fd = createFenced(root, next, constants.O_WRONLY);
    try {
      writeSync(fd, edit.text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(next, exclude);
  }
}

/** More than any exclude file a person writes; Baton's line is looked for in this much. */
const MAX_EXCLUDE_BYTES = 1024 * 1024;

/**
 * Creates the attempt's worktree on a new branch from the target branch's head now (so a
 * task sees the integrated work of the tasks it depends on). A leftover of the same name
 * (a crash between creating and recording) is removed first.
 */
export async function createWorktree(
  repoRoot: string,
  location: { path: string; branch: string },
  baseCommit: string,
): Promise<void> {
  await removeWorktree(repoRoot, location);
  mkdirSync(join(location.path, '..'), { recursive: true });
  await new Git(repoRoot).run(['worktree', 'add', '--quiet', '-b', location.branch, location.path, baseCommit]);
}

/** The commit a new attempt starts from: the target branch's head now. */
export async function targetHead(run: { repoRoot: string; targetBranch: string }): Promise<string> {
  return new Git(run.repoRoot).revParse(`refs/heads/${run.targetBranch}`);
}

/** Removes an attempt's worktree and its branch; what is already gone is fine. */
export async function removeWorktree(
  repoRoot: string,
  worktree: Pick<AttemptWorktree, 'path' | 'branch'>,
  options: { keepBranch?: boolean } = {},
): Promise<void> {
  const git = new Git(repoRoot);
  if (existsSync(worktree.path)) await git.attempt(['worktree', 'remove', '--force', worktree.path]);
  await git.attempt(['worktree', 'prune']);
  if (
    !options.keepBranch &&
    (await git.attempt(['rev-parse', '--verify', '--quiet', `refs/heads/${worktree.branch}`])).exitCode === 0
  )
    await git.attempt(['branch', '-D', worktree.branch]);
}

/**
 * A scratch worktree on a detached HEAD at `commit`, Baton's own, to verify a merged tree in before the target moves
 * (docs/isolation.md, "The merge queue"). A leftover at the same path (a coordinator killed while verifying) is
 * removed first.
 */
export async function createScratchWorktree(repoRoot: string, path: string, commit: string): Promise<void> {
  await removeScratchWorktree(repoRoot, path);
  mkdirSync(join(path, '..'), { recursive: true });
  await new Git(repoRoot).run(['worktree', 'add', '--quiet', '--detach', path, commit]);
}

/** Removes a scratch worktree (what is already gone is fine); it has no branch. */
export async function removeScratchWorktree(repoRoot: string, path: string): Promise<void> {
  const git = new Git(repoRoot);
  if (existsSync(path)) await git.attempt(['worktree', 'remove', '--force', path]);
  await git.attempt(['worktree', 'prune']);
}

/**
 * A merge, rebase or cherry-pick git is in the middle of in this working tree (a person or an agent resolving a
 * conflict there), with the files still in conflict; undefined when none is.
 */
export async function readUnfinishedResolution(git: Git): Promise<UnfinishedResolution | undefined> {
  const gitDir = resolve(git.cwd, (await git.run(['rev-parse', '--git-dir'])).trim());
  const operation =
    existsSync(join(gitDir, 'rebase-merge')) || existsSync(join(gitDir, 'rebase-apply'))
      ? 'rebase'
      : existsSync(join(gitDir, 'CHERRY_PICK_HEAD'))
        ? 'cherry-pick'
        : existsSync(join(gitDir, 'MERGE_HEAD'))
          ? 'merge'
          : undefined;
  const unmerged = await git.unmergedPaths();
  if (!operation && unmerged.length === 0) return undefined;
  return { operation: operation ?? 'merge', unmerged };
}
