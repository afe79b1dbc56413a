import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** git in a folder, for tests (argv, no shell); returns trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** Makes `folder` a git repository on branch main with `files` in its first commit. */
export function initRepo(folder: string, files: Record<string, string>): string {
  git(folder, 'init', '--quiet', '--initial-branch=main');
  git(folder, 'config', 'user.name', 'Test');
  git(folder, 'config', 'user.email', 'test@example.invalid');
  git(folder, 'config', 'commit.gpgsign', 'false');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), content);
  }
  git(folder, 'add', '--all');
  git(folder, 'commit', '--quiet', '-m', 'initial');
  return git(folder, 'rev-parse', 'HEAD');
}

/** Whether `rev`'s tree holds `path`. */
export function existsAt(folder: string, rev: string, path: string): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', `${rev}:${path}`], { cwd: folder, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The content of `path` at `rev`. */
export function show(folder: string, rev: string, path: string): string {
  return execFileSync('git', ['show', `${rev}:${path}`], { cwd: folder, encoding: 'utf8' });
}
