#!/usr/bin/env node
// npm run demo:parallel [-- <folder>]
// Copies examples/parallel into a fresh git repository (default .cache/demo-parallel),
// commits it, and runs `baton start plan.md` there: three tasks in three worktrees at once,
// two merged into main, one stopped at the planned integration conflict (exit code 6).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(process.argv[2] ?? join(root, '.cache', 'demo-parallel'));
const cli = join(root, 'dist', 'cli.js');
if (!existsSync(cli))
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });

rmSync(target, { recursive: true, force: true });
cpSync(join(root, 'examples', 'parallel'), target, { recursive: true });
const git = (...args) => execFileSync('git', args, { cwd: target, stdio: 'pipe', encoding: 'utf8' }).trim();
git('init', '--quiet', '--initial-branch=main');
git('config', 'user.name', 'Baton demo');
git('config', 'user.email', 'demo@baton.invalid');
git('add', '--all');
git('commit', '--quiet', '-m', 'The notes app before the plan runs');
console.log(`A fresh repository in ${target} (branch main).\n`);

const run = spawnSync(process.execPath, [cli, 'start', 'plan.md'], { cwd: target, stdio: 'inherit' });
console.log(`\nmain now:\n${git('log', '--oneline', '--graph', 'main')}`);
if (run.status === 6 || run.status === 8) {
  const gates =
    JSON.parse(execFileSync(process.execPath, [cli, '--json', 'gates'], { cwd: target, encoding: 'utf8' })).gates ?? [];
  const conflict = gates.find((g) => g.kind === 'integration_conflict' && g.status === 'open');
  if (conflict) {
    console.log(
      [
        '',
        `${conflict.taskId} waits at ${conflict.id}. Resolve it the way a person would, in the task's worktree:`,
        `  cd ${conflict.details.worktree}`,
        '  git merge main        # conflicts in README.md: keep both titles, then',
        '  git add README.md && git commit --no-edit',
        `  cd ${target}`,
        `  node ${cli} approve ${conflict.id} && node ${cli} resume`,
        `Or discard the attempt: node ${cli} reject ${conflict.id} --note "not needed"`,
      ].join('\n'),
    );
  }
}
process.exit(run.status ?? 1);
