import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { FileChange } from '../../domain/changes';
import { BATON_DIR } from '../workspaceLayout';
import { findGit, Git } from './git';

/**
 * The repository whose working tree a shared-tree attempt changes: the one the workspace is in,
 * or undefined without git, outside a repository, or in a folder an outer repository ignores (a
 * scratch copy under node_modules or .cache is not part of it — probeRepository says the same).
 */
export async function sharedTreeRepository(workspace: string): Promise<string | undefined> {
  if (!(await findGit())) return undefined;
  const git = new Git(workspace);
  const top = await git.attempt(['rev-parse', '--show-toplevel']);
  if (top.exitCode !== 0) return undefined;
  if ((await git.attempt(['check-ignore', '--quiet', '--no-index', workspace])).exitCode === 0) return undefined;
  return top.stdout.trim();
}

/**
 * Records a working tree as it is now — tracked and untracked files, not ignored ones, not the
 * workspace's `.baton/` — as a commit that no ref points at, like `git stash create` but with the
 * untracked files. It touches neither the index, nor HEAD, nor any branch: the files are added to
 * a copy of the index (so unchanged files cost a stat, not a read), written as a tree, and
 * committed with HEAD (if any) as parent. Git keeps such a commit at least as long as
 * `gc.pruneExpire` (two weeks by default).
 *
 * `folder` is the top of the working tree (a repository root or a worktree); `workspace`, the
 * folder whose `.baton/` is left out.
 */
export async function snapshotWorkingTree(folder: string, workspace: string, message: string): Promise<string> {
  const git = new Git(folder);
  const indexPath = resolve(folder, (await git.run(['rev-parse', '--git-path', 'index'])).trim());
  const scratch = await mkdtemp(join(tmpdir(), 'baton-snapshot-'));
  try {
    const index = join(scratch, 'index');
    await copyFile(indexPath, index).catch((err: NodeJS.ErrnoException) => {
      // A repository with nothing staged yet has no index: the scratch one starts empty.
      if (err.code !== 'ENOENT') throw err;
    });
    const scratchGit = new Git(folder, { GIT_INDEX_FILE: index });
    const batonDir = relative(folder, join(workspace, BATON_DIR)).split('\\').join('/');
    const inTree = !batonDir.startsWith('..') && !isAbsolute(batonDir);
    // An exclude pathspec naming an ignored folder fails the add ("paths are ignored"), and `.baton/`
    // usually is ignored (worktree isolation puts it in info/exclude): then the add skips it anyway.
    const ignored = inTree && (await git.attempt(['check-ignore', '--quiet', '--no-index', batonDir])).exitCode === 0;
    await scratchGit.run(['add', '--all', '--', ':/', ...(inTree && !ignored ? [`:(exclude)${batonDir}`] : [])]);
    // Files of .baton/ that are tracked (a shared config.json) stay out too: the snapshot is the person's tree.
    if (inTree) await scratchGit.run(['rm', '-r', '--cached', '--quiet', '--ignore-unmatch', '--', batonDir]);
    const tree = (await scratchGit.run(['write-tree'])).trim();
    const head = await git.attempt(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
    const parent = head.exitCode === 0 ? ['-p', head.stdout.trim()] : [];
    // Baton's own identity: this is bookkeeping, never a commit of the person's history.
    const identity = ['-c', 'user.name=Baton', '-c', 'user.email=baton@localhost'];
    return (await git.run([...identity, 'commit-tree', tree, ...parent, '-m', message])).trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What differs between two commits, file by file (renames as a deletion and an addition). */
export async function diffCommits(repoRoot: string, from: string, to: string): Promise<FileChange[]> {
  const out = await new Git(repoRoot).run(['diff', '--name-status', '-z', '--no-renames', from, to, '--']);
  return parseNameStatus(out);
}

/** Parses `git diff --name-status -z`: a status field, then the path. */
export function parseNameStatus(out: string): FileChange[] {
  const fields = out.split('\0');
  const changes: FileChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]!;
    const path = fields[i + 1]!;
    if (!status || !path) continue;
    const change = status.startsWith('A') ? 'added' : status.startsWith('D') ? 'deleted' : 'modified';
    changes.push({ path, change });
  }
  return changes;
}

/** Does the repository still have this commit (git may have pruned an unreferenced one)? */
export async function hasCommit(repoRoot: string, commit: string): Promise<boolean> {
  return (await new Git(repoRoot).attempt(['cat-file', '-e', `${commit}^{commit}`])).exitCode === 0;
}

/** A file's text at a commit; undefined when the commit has no such file. */
export async function readFileAtCommit(repoRoot: string, commit: string, path: string): Promise<string | undefined> {
  const out = await new Git(repoRoot).attempt(['cat-file', 'blob', `${commit}:${path}`]);
  return out.exitCode === 0 ? out.stdout : undefined;
}
