import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { GitError, simpleGit, type SimpleGit } from 'simple-git';
import { BatonError } from '../../domain/errors';

/**
 * A git command that exited non-zero: its exit code and both streams, for callers that
 * expect it. (A GitError, so that simple-git passes it through instead of wrapping it.)
 */
export class GitCommandFailed extends GitError {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(
      undefined,
      `git ${args.join(' ')} exited with ${exitCode}: ${(stderr || stdout).trim().split('\n').slice(0, 3).join(' / ')}`,
    );
  }
}

/** One entry of `git worktree list --porcelain`. */
export interface WorktreeEntry {
  path: string;
  head?: string;
  /** Full ref name (refs/heads/…), absent when detached. */
  branch?: string;
  bare: boolean;
  detached: boolean;
  locked: boolean;
  prunable: boolean;
}

/**
 * Git as argv arrays through simple-git (never a shell), for one folder. Every non-zero
 * exit is an error (GitCommandFailed) unless the caller says it expects that exit code.
 */
export class Git {
  private readonly git: SimpleGit;
  private lastRun: { args: readonly string[] } = { args: [] };

  /**
   * `env`: variables on top of the cleaned environment, e.g. GIT_INDEX_FILE for a temporary index. `remote`: this
   * instance talks to a remote (Git.forRemote), so it runs with the user's git as they push themselves.
   */
  constructor(
    readonly cwd: string,
    env: Record<string, string> = {},
    remote?: { timeoutMs: number },
  ) {
    this.git = simpleGit({
      baseDir: cwd,
      maxConcurrentProcesses: 2,
      config: remote ? [...REMOTE_GIT_CONFIG] : [...BATON_GIT_CONFIG],
      // The keys Baton sets to switch a program off (BATON_GIT_CONFIG); simple-git asks for them to be named.
      unsafe: { allowUnsafeHooksPath: true, allowUnsafeFsMonitor: true },
      // A remote that does not answer (a network that drops packets) must not hold the integration lock for ever.
      ...(remote ? { timeout: { block: remote.timeoutMs } } : {}),
      errors: (error, result) => {
        // A process that could not run at all; simple-git's own GitError for a non-zero exit is replaced by ours.
        if (error && !(error instanceof GitError)) return error;
        if (result.exitCode === 0) return undefined;
        return new GitCommandFailed(
          this.lastRun.args,
          result.exitCode,
          Buffer.concat(result.stdOut).toString('utf8'),
          Buffer.concat(result.stdErr).toString('utf8'),
        );
      },
    }).env({ ...gitEnvironment(cwd, remote !== undefined), ...env });
  }

  /**
   * Git for the one command Baton sends to a remote — the push of `integration: branch` (docs/isolation.md, "Branch
   * and pull request"): the repository's hooks run (pre-push is the user's check on what leaves the machine) and the
   * machine's /etc/gitconfig is read (where a credential helper may be set up), because the remote's authentication
   * is git's business and the user's. Never a prompt; `timeoutMs` without output ends it.
   */
  static forRemote(cwd: string, timeoutMs: number): Git {
    return new Git(cwd, {}, { timeoutMs });
  }

  /** Runs `git <args>`; resolves with stdout. */
  async run(args: string[]): Promise<string> {
    this.lastRun = { args };
    try {
      return await this.git.raw(args);
    } catch (err) {
      if (err instanceof GitCommandFailed) throw new GitCommandFailed(args, err.exitCode, err.stdout, err.stderr);
      throw err;
    }
  }

  /** Runs `git <args>` and reports the exit code instead of throwing for the ones expected. */
  async attempt(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    try {
      return { exitCode: 0, stdout: await this.run(args), stderr: '' };
    } catch (err) {
      if (err instanceof GitCommandFailed) return { exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr };
      throw err;
    }
  }

  async revParse(rev: string): Promise<string> {
    return (await this.run(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])).trim();
  }

  async headCommit(): Promise<string> {
    return this.revParse('HEAD');
  }

  /** The branch checked out here (short name), or undefined when HEAD is detached. */
  async currentBranch(): Promise<string | undefined> {
    const out = await this.attempt(['symbolic-ref', '--quiet', '--short', 'HEAD']);
    return out.exitCode === 0 ? out.stdout.trim() : undefined;
  }

  /** Changed and untracked paths (porcelain v1), `.baton/` excluded by the caller's exclude file. */
  async dirtyPaths(): Promise<string[]> {
    const out = await this.run(['status', '--porcelain=v1', '-z', '--untracked-files=all']);
    return parsePorcelainStatus(out);
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await this.attempt(['merge-base', '--is-ancestor', ancestor, descendant])).exitCode === 0;
  }

  async worktrees(): Promise<WorktreeEntry[]> {
    return parseWorktreeList(await this.run(['worktree', 'list', '--porcelain', '-z']));
  }

  /** Files that differ between two commits. */
  async changedFiles(from: string, to: string): Promise<string[]> {
    const out = await this.run(['diff', '--name-only', '-z', '--no-renames', from, to]);
    return out.split('\0').filter(Boolean);
  }

  /** Paths with unmerged entries (a rebase or cherry-pick that stopped on conflicts). */
  async unmergedPaths(): Promise<string[]> {
    const out = await this.run(['diff', '--name-only', '-z', '--diff-filter=U']);
    return [...new Set(out.split('\0').filter(Boolean))];
  }
}

/**
 * Variables that make git run another program (an editor, a pager, an ssh or credential
 * helper) or read other config. Baton's git commands need none of them — none opens an
 * editor or talks to a remote — and simple-git refuses to run with them set.
 */
const PROGRAM_VARIABLES =
  /^(editor|pager|prefix|ssh_askpass|git_(editor|sequence_editor|pager|askpass|ssh|ssh_command|proxy_command|external_diff|template_dir|exec_path|config.*))$/i;

/**
 * What every git command Baton issues runs with, whatever the repository's config says: the
 * shared `.git/config` and `.git/hooks` are writable from every worker's worktree, so nothing in
 * them may make Baton's own commands run a program (docs/isolation.md, "The git Baton runs").
 * Command-line `-c` outranks every config file.
 */
export const BATON_GIT_CONFIG = [
  'core.quotepath=off',
  // No hook runs (commit, merge, checkout, rebase, reference-transaction…): /dev/null/<hook> is never a file.
  'core.hooksPath=/dev/null',
  // No fsmonitor program is asked which files changed (add, status, write-tree, checkout).
  'core.fsmonitor=false',
  // Merge, rebase and cherry-pick commits are never signed: signing runs gpg.program.
  'commit.gpgSign=false',
] as const;

/** The push's settings (Git.forRemote): BATON_GIT_CONFIG but for the hooks, which are the user's there. */
const REMOTE_GIT_CONFIG = BATON_GIT_CONFIG.filter((setting) => !setting.startsWith('core.hooksPath='));

function gitEnvironment(cwd: string, remote: boolean): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !PROGRAM_VARIABLES.test(key) && !/^git_(work_tree|dir|common_dir)$/i.test(key))
      env[key] = value;
  const workTree = workTreeOf(cwd);
  return {
    ...env,
    // Messages Baton parses in a fixed language; never a prompt.
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_MERGE_AUTOEDIT: 'no',
    // The machine's /etc/gitconfig is not the user's either (a worker cannot write it, but it may name programs) —
    // except for a push, which may need the credential helper set up there.
    ...(remote ? {} : { GIT_CONFIG_NOSYSTEM: '1' }),
    // The working tree is the folder that holds `.git`, never the repository's `core.worktree`: a worker that sets it
    // in the shared config would have the integration's checkout write the run's files wherever it points.
    ...(workTree ? { GIT_WORK_TREE: workTree } : {}),
  };
}

/**
 * The top of the working tree `cwd` is in, found as git finds its repository but without running git (the unit tier
 * starts no process, and opening the store asks it) or reading its config: the nearest folder upwards that holds
 * `.git` (a folder, or the file of a linked worktree). Undefined outside a repository.
 */
export function workTreeOf(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Parses `git status --porcelain=v1 -z`: entries are "XY path", a rename carries its source as the next entry. */
export function parsePorcelainStatus(out: string): string[] {
  const paths: string[] = [];
  const entries = out.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.length < 4) continue;
    paths.push(entry.slice(3));
    if (entry[0] === 'R' || entry[0] === 'C') i++; // the next entry is the source path
  }
  return paths;
}

/**
 * Parses `git worktree list --porcelain -z`: records separated by an empty field, each a
 * `worktree <path>` line followed by attribute lines (HEAD, branch, bare, detached, locked, prunable).
 */
export function parseWorktreeList(out: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | undefined;
  for (const field of out.split('\0')) {
    if (field === '') {
      if (current) entries.push(current);
      current = undefined;
      continue;
    }
    const space = field.indexOf(' ');
    const key = space < 0 ? field : field.slice(0, space);
    const value = space < 0 ? '' : field.slice(space + 1);
    if (key === 'worktree') {
      if (current) entries.push(current);
      current = { path: value, bare: false, detached: false, locked: false, prunable: false };
      continue;
    }
    if (!current) continue;
    if (key === 'HEAD') current.head = value;
    else if (key === 'branch') current.branch = value;
    else if (key === 'bare') current.bare = true;
    else if (key === 'detached') current.detached = true;
    else if (key === 'locked') current.locked = true;
    else if (key === 'prunable') current.prunable = true;
  }
  if (current) entries.push(current);
  return entries;
}

/** Is git on PATH? (Asked once per process; the answer does not change while Baton runs.) */
let gitVersion: Promise<string | undefined> | undefined;
export function findGit(): Promise<string | undefined> {
  gitVersion ??= simpleGit()
    .version()
    .then((v) => (v.installed ? `${v.major}.${v.minor}.${v.patch}` : undefined))
    .catch(() => undefined);
  return gitVersion;
}

/** For tests: forget the cached answer (PATH changed). */
export function forgetGit(): void {
  gitVersion = undefined;
}

export function gitMissing(): BatonError {
  return new BatonError(
    'git.missing',
    'git is not installed or not on PATH; worktree isolation needs it (install git, or run with --isolation none).',
  );
}
