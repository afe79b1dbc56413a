import assert from 'node:assert/strict';
import { parsePorcelainStatus, parseWorktreeList } from '../../../src/engine/effects/git/git';
import { firstOverlap, globsOverlap } from '../../../src/engine/domain/fileOverlap';
import { parsePlan } from '../../../src/engine/domain/plan/parsePlan';

describe('isolation: parsing git output and globs', () => {
  it('parses `git worktree list --porcelain -z`: main tree, a branch worktree, a detached one, locked and prunable flags, paths with spaces', () => {
    const out = [
      'worktree /repo',
      'HEAD 1111111111111111111111111111111111111111',
      'branch refs/heads/main',
      '',
      'worktree /repo/.baton/worktrees/R-1/T 1-001',
      'HEAD 2222222222222222222222222222222222222222',
      'branch refs/heads/baton/R-1/T1/001',
      'locked reason with spaces',
      '',
      'worktree /tmp/gone',
      'HEAD 3333333333333333333333333333333333333333',
      'detached',
      'prunable gitdir file points to non-existent location',
      '',
    ].join('\0');
    assert.deepEqual(parseWorktreeList(out), [
      {
        path: '/repo',
        head: '1111111111111111111111111111111111111111',
        branch: 'refs/heads/main',
        bare: false,
        detached: false,
        locked: false,
        prunable: false,
      },
      {
        path: '/repo/.baton/worktrees/R-1/T 1-001',
        head: '2222222222222222222222222222222222222222',
        branch: 'refs/heads/baton/R-1/T1/001',
        bare: false,
        detached: false,
        locked: true,
        prunable: false,
      },
      {
        path: '/tmp/gone',
        head: '3333333333333333333333333333333333333333',
        bare: false,
        detached: true,
        locked: false,
        prunable: true,
      },
    ]);
  });

  it('parses `git status --porcelain=v1 -z`, a rename counting once', () => {
    assert.deepEqual(
      parsePorcelainStatus(
        [' M README.md', '?? new file.txt', 'R  after.txt', 'before.txt', 'A  added.ts', ''].join('\0'),
      ),
      ['README.md', 'new file.txt', 'after.txt', 'added.ts'],
    );
    assert.deepEqual(parsePorcelainStatus(''), []);
  });

  it('decides whether two globs can name the same file, erring towards yes', () => {
    const cases: Array<[string, string, boolean]> = [
      ['src/a.ts', 'src/b.ts', false],
      ['src/a.ts', 'src/a.ts', true],
      ['src/**', 'src/x/y.ts', true],
      ['src/*.ts', 'src/a.ts', true],
      ['src/*.ts', 'lib/a.ts', false],
      ['src/*.ts', 'src/sub/a.ts', false],
      ['docs/**/*.md', 'docs/a/b/c.md', true],
      ['**/*.md', 'README.md', true],
      ['src', 'src/auth/login.ts', true],
      ['./src/a.ts', 'src/a.ts', true],
      ['src/{a,b}.ts', 'src/b.ts', true],
      ['src/{a,b}.ts', 'src/c.ts', false],
      ['src/*.js', 'src/*.ts', true],
    ];
    for (const [a, b, expected] of cases) {
      assert.equal(globsOverlap(a, b), expected, `${a} vs ${b}`);
      assert.equal(globsOverlap(b, a), expected, `${b} vs ${a} (symmetric)`);
    }
    assert.deepEqual(firstOverlap(['docs/x.md', 'src/**'], ['lib/y.ts', 'src/z.ts']), ['src/**', 'src/z.ts']);
    assert.equal(firstOverlap(['a.txt'], []), undefined);
  });

  it("reads a task's isolation: field, and reports a wrong value at its place", () => {
    const ok = parsePlan(
      '```baton-task\nid: T1\nisolation: none\n```\n\n```baton-task\nid: T2\nisolation: worktree\n```\n',
    );
    assert.deepEqual(
      ok.tasks.map((t) => t.isolation),
      ['none', 'worktree'],
    );
    const bad = parsePlan('```baton-task\nid: T1\nisolation: sandbox\n```\n');
    const issue = bad.issues.find((i) => i.field === 'isolation')!;
    assert.match(issue.message, /"isolation" is "sandbox"; it must be worktree or none/);
    assert.equal(issue.range?.start.line, 3);
  });
});
