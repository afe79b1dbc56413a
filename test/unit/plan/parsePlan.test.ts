import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasErrors } from '../../../src/engine/domain/issue';
import type { Issue, Range } from '../../../src/engine/domain/issue';
import { parsePlan, splitCommandLine } from '../../../src/engine/domain/plan/parsePlan';

function r(startLine: number, startColumn: number, endLine: number, endColumn: number): Range {
  return { start: { line: startLine, column: startColumn }, end: { line: endLine, column: endColumn } };
}

/** The plan's markdown from lines, so line numbers in the tests are easy to read. */
function md(...lines: string[]): string {
  return lines.join('\n') + '\n';
}

function only(issues: Issue[], code: string): Issue {
  const found = issues.filter((i) => i.code === code);
  assert.equal(found.length, 1, `expected one ${code}, got ${JSON.stringify(issues, null, 1)}`);
  return found[0] as Issue;
}

describe('parsePlan', () => {
  describe('a valid plan', () => {
    const plan = md(
      '# Notes feature', //                       1
      '', //                                      2
      'Some preamble that is not a task.', //     3
      '', //                                      4
      '```baton-task', //                         5
      'id: T1', //                                6
      'title: Add the notes store', //            7
      'agent: coder', //                          8
      'files: src/notes/**', //                   9
      '```', //                                   10
      'Create `src/notes/store.ts`.', //          11
      '', //                                      12
      'Keep it small.', //                        13
      '', //                                      14
      '## Second task', //                        15
      '', //                                      16
      '```baton-task', //                         17
      'id: T2', //                                18
      'depends: T1', //                           19
      'worker: manual', //                        20
      'risk: [database, migration]', //           21
      'verify:', //                               22
      '  - [node, -e, "process.exit(0)"]', //     23
      "  - npm run test -- --grep 'notes store'", // 24
      '```', //                                   25
      'Wire the store into the CLI.', //          26
      '', //                                      27
      '```sh', //                                 28
      'baton notes add "x"', //                   29
      '```', //                                   30
      '---', //                                   31
    );

    it('returns every task in file order with its fields, defaults and block range, and no issues', () => {
      const { tasks, issues } = parsePlan(plan);
      assert.deepEqual(issues, []);
      assert.deepEqual(tasks, [
        {
          id: 'T1',
          title: 'Add the notes store',
          agent: 'coder',
          depends: [],
          risk: [],
          files: ['src/notes/**'],
          verify: [],
          instructions: 'Create `src/notes/store.ts`.\n\nKeep it small.',
          range: r(5, 1, 10, 4),
        },
        {
          id: 'T2',
          title: 'T2',
          agent: 'agent',
          worker: 'manual',
          depends: ['T1'],
          risk: ['database', 'migration'],
          files: [],
          verify: [
            ['node', '-e', 'process.exit(0)'],
            ['npm', 'run', 'test', '--', '--grep', 'notes store'],
          ],
          instructions: 'Wire the store into the CLI.\n\n```sh\nbaton notes add "x"\n```',
          range: r(17, 1, 25, 4),
        },
      ]);
    });

    it('produces the same tasks from CRLF line endings', () => {
      const crlf = parsePlan(plan.replace(/\n/g, '\r\n'));
      assert.deepEqual(crlf.issues, []);
      assert.deepEqual(crlf.tasks, parsePlan(plan).tasks);
    });
  });

  describe('instructions', () => {
    it('are the trimmed text up to the next baton-task block, keeping other fenced blocks', () => {
      const { tasks } = parsePlan(
        md(
          '```baton-task',
          'id: A',
          '```',
          '',
          '  Step one.',
          '```js',
          'x()',
          '```',
          'Step two.  ',
          '',
          '```baton-task',
          'id: B',
          '```',
        ),
      );
      assert.equal(tasks[0]?.instructions, 'Step one.\n```js\nx()\n```\nStep two.');
      assert.equal(tasks[1]?.instructions, '');
    });

    it('leave out the heading and thematic break that introduce the next task', () => {
      const { tasks } = parsePlan(
        md(
          '```baton-task',
          'id: A',
          '```',
          'Do A.',
          '',
          '***',
          '',
          '### Task B',
          '```baton-task',
          'id: B',
          '```',
          'Do B.',
          '',
          'Task C',
          '======',
          '```baton-task',
          'id: C',
          '```',
        ),
      );
      assert.deepEqual(
        tasks.map((t) => t.instructions),
        ['Do A.', 'Do B.', ''],
      );
    });

    it('keep headings that are followed by text of the same task', () => {
      const { tasks } = parsePlan(md('```baton-task', 'id: A', '```', '## Notes', 'Use the fast path.'));
      assert.equal(tasks[0]?.instructions, '## Notes\nUse the fast path.');
    });
  });

  describe('field shapes', () => {
    it('splits a depends string at commas and spaces and a risk string at commas, and keeps a files string whole', () => {
      const { tasks, issues } = parsePlan(
        md(
          '```baton-task',
          'id: A',
          '```',
          '```baton-task',
          'id: B',
          '```',
          '```baton-task',
          'id: C',
          'depends: A, B A',
          'risk: db, infra ops',
          'files: "src/{a,b}.ts"',
          '```',
        ),
      );
      assert.deepEqual(issues, []);
      assert.deepEqual(tasks[2]?.depends, ['A', 'B']);
      assert.deepEqual(tasks[2]?.risk, ['db', 'infra ops']);
      assert.deepEqual(tasks[2]?.files, ['src/{a,b}.ts']);
    });

    it('treats an empty value as the default', () => {
      const { tasks, issues } = parsePlan(
        md('```baton-task', 'id: A', 'title:', 'agent:', 'depends:', 'verify: ~', '```'),
      );
      assert.deepEqual(issues, []);
      assert.equal(tasks[0]?.title, 'A');
      assert.equal(tasks[0]?.agent, 'agent');
      assert.deepEqual(tasks[0]?.depends, []);
      assert.deepEqual(tasks[0]?.verify, []);
    });

    it('accepts a single verify string as one command and keeps plain numbers in argv as written', () => {
      const { tasks, issues } = parsePlan(
        md(
          '```baton-task',
          'id: A',
          'verify: node --test',
          '```',
          '```baton-task',
          'id: B',
          'verify: [[sleep, 0.50], [node, -e, "1"]]',
          '```',
        ),
      );
      assert.deepEqual(issues, []);
      assert.deepEqual(tasks[0]?.verify, [['node', '--test']]);
      assert.deepEqual(tasks[1]?.verify, [
        ['sleep', '0.50'],
        ['node', '-e', '1'],
      ]);
    });

    it('accepts an indented block and a tilde fence', () => {
      const { tasks, issues } = parsePlan(md('  ~~~baton-task', '  id: A', '  depends: []', '  ~~~', 'Do it.'));
      assert.deepEqual(issues, []);
      assert.equal(tasks[0]?.id, 'A');
      assert.deepEqual(tasks[0]?.range, r(1, 3, 4, 6));
    });
  });

  describe('issue codes and ranges', () => {
    it('plan.empty: no baton-task block at all', () => {
      const { tasks, issues } = parsePlan(md('# Plan', '```yaml', 'id: T1', '```'));
      assert.deepEqual(tasks, []);
      assert.equal(issues.length, 1);
      assert.equal(issues[0]?.code, 'plan.empty');
      assert.deepEqual(issues[0]?.range, r(1, 1, 1, 7));
      assert.ok(hasErrors(issues));
    });

    it('plan.empty for an empty file, with a range at 1:1', () => {
      const { issues } = parsePlan('');
      assert.deepEqual(
        issues.map((i) => [i.code, i.range]),
        [['plan.empty', r(1, 1, 1, 1)]],
      );
    });

    it('plan.yaml-syntax: points at the YAML error inside the markdown', () => {
      const { tasks, issues } = parsePlan(md('Intro', '```baton-task', 'id: T1', 'title: "unterminated', '```'));
      assert.deepEqual(tasks, []);
      assert.deepEqual(only(issues, 'plan.yaml-syntax').range, r(4, 21, 4, 21));
      assert.ok(hasErrors(issues));
    });

    it('plan.yaml-syntax: a duplicate key is a syntax error at the second key', () => {
      const { issues } = parsePlan(md('```baton-task', 'id: T1', 'id: T2', '```'));
      assert.deepEqual(only(issues, 'plan.yaml-syntax').range, r(3, 1, 3, 2));
    });

    it('plan.yaml-syntax: the id of a broken block still satisfies depends elsewhere', () => {
      const { issues } = parsePlan(
        md('```baton-task', 'id: T1', 'title: [x', '```', '```baton-task', 'id: T2', 'depends: T1', '```'),
      );
      assert.ok(issues.some((i) => i.code === 'plan.yaml-syntax'));
      assert.ok(!issues.some((i) => i.code === 'plan.unknown-dependency'));
    });

    it('plan.not-a-mapping: a list instead of fields, ranged on the list', () => {
      const { tasks, issues } = parsePlan(md('```baton-task', '- id: T1', '```'));
      assert.deepEqual(tasks, []);
      assert.deepEqual(only(issues, 'plan.not-a-mapping').range, r(2, 1, 2, 9));
    });

    it('plan.not-a-mapping: an empty block, ranged on the opening fence', () => {
      const { issues } = parsePlan(md('text', '```baton-task', '```'));
      assert.deepEqual(only(issues, 'plan.not-a-mapping').range, r(2, 1, 2, 14));
    });

    it('plan.missing-id: no id field, ranged on the opening fence', () => {
      const { tasks, issues } = parsePlan(md('```baton-task   ', 'title: Something', '```'));
      assert.deepEqual(tasks, []);
      const i = only(issues, 'plan.missing-id');
      assert.deepEqual(i.range, r(1, 1, 1, 14));
      assert.equal(i.field, 'id');
    });

    it('plan.missing-id: an empty id, ranged on the key', () => {
      const { issues } = parsePlan(md('```baton-task', 'title: x', 'id:', '```'));
      assert.deepEqual(only(issues, 'plan.missing-id').range, r(3, 1, 3, 3));
    });

    it('plan.invalid-id: characters that cannot go into a branch name', () => {
      const { tasks, issues } = parsePlan(md('```baton-task', 'id: "T 1/x"', '```'));
      assert.deepEqual(tasks, []);
      const i = only(issues, 'plan.invalid-id');
      assert.deepEqual(i.range, r(2, 5, 2, 12));
      assert.match(i.message, /T 1\/x/);
    });

    it('plan.invalid-id: a number id, with advice to quote it', () => {
      const { issues } = parsePlan(md('```baton-task', 'id: 12', '```'));
      const i = only(issues, 'plan.invalid-id');
      assert.deepEqual(i.range, r(2, 5, 2, 7));
      assert.match(i.recommendation, /"12"/);
    });

    it('plan.invalid-id: longer than 64 characters', () => {
      const { issues } = parsePlan(md('```baton-task', `id: ${'a'.repeat(65)}`, '```'));
      assert.deepEqual(only(issues, 'plan.invalid-id').range, r(2, 5, 2, 70));
      assert.deepEqual(parsePlan(md('```baton-task', `id: ${'a'.repeat(64)}`, '```')).issues, []);
    });

    it('plan.duplicate-id: ranged on the second id, naming the line of the first', () => {
      const { tasks, issues } = parsePlan(
        md('```baton-task', 'id: T1', '```', 'first', '```baton-task', 'title: again', 'id: T1', '```', 'second'),
      );
      assert.equal(tasks.length, 1);
      assert.equal(tasks[0]?.instructions, 'first');
      const i = only(issues, 'plan.duplicate-id');
      assert.deepEqual(i.range, r(7, 5, 7, 7));
      assert.match(i.message, /line 2\b/);
    });

    it('plan.unknown-dependency: ranged on the entry in a list, with a suggestion', () => {
      const { tasks, issues } = parsePlan(
        md('```baton-task', 'id: build', '```', '```baton-task', 'id: test', 'depends: [build, biuld]', '```'),
      );
      assert.equal(tasks.length, 2);
      const i = only(issues, 'plan.unknown-dependency');
      assert.deepEqual(i.range, r(6, 18, 6, 23));
      assert.equal(i.field, 'depends');
      assert.match(i.recommendation, /"build"/);
    });

    it('plan.unknown-dependency: ranged on the word inside a depends string', () => {
      const { issues } = parsePlan(
        md('```baton-task', 'id: A', 'depends: A2, ghost', '```', '```baton-task', 'id: A2', '```'),
      );
      assert.deepEqual(only(issues, 'plan.unknown-dependency').range, r(3, 14, 3, 19));
    });

    it('plan.dependency-cycle: names the cycle and points at a depends entry in it', () => {
      const { tasks, issues } = parsePlan(
        md(
          '```baton-task',
          'id: T1',
          'depends: [T3]',
          '```',
          '```baton-task',
          'id: T2',
          '```',
          '```baton-task',
          'id: T3',
          'depends:',
          '  - T2',
          '  - T1',
          '```',
        ),
      );
      assert.equal(tasks.length, 3);
      const i = only(issues, 'plan.dependency-cycle');
      assert.match(i.message, /T1 → T3 → T1/);
      assert.deepEqual(i.range, r(3, 11, 3, 13));
    });

    it('plan.dependency-cycle: one issue per cycle, including a self-dependency', () => {
      const { issues } = parsePlan(
        md(
          '```baton-task',
          'id: A',
          'depends: B',
          '```', //      1-4
          '```baton-task',
          'id: B',
          'depends: A',
          '```', //      5-8
          '```baton-task',
          'id: C',
          'depends: C',
          '```', //      9-12
          '```baton-task',
          'id: D',
          'depends: [A, C]',
          '```', // 13-16
        ),
      );
      const cycles = issues.filter((i) => i.code === 'plan.dependency-cycle');
      assert.deepEqual(
        cycles.map((i) => [i.message.match(/: (.*?)\./)?.[1], i.range]),
        [
          ['A → B → A', r(3, 10, 3, 11)],
          ['C → C', r(11, 10, 11, 11)],
        ],
      );
    });

    it('plan.invalid-field: wrong types name the field and the expected type, ranged on the value', () => {
      const { tasks, issues } = parsePlan(
        md(
          '```baton-task',
          'id: T1',
          'depends: {a: 1}', //          3
          'risk: 5', //                  4
          'files: [src/a.ts, 7]', //     5
          'title: [x]', //               6
          'agent: "two words"', //       7
          'worker: ""', //               8
          'verify: 3', //                9
          '```',
        ),
      );
      assert.equal(tasks.length, 1, 'a task with an id is still returned');
      assert.deepEqual(tasks[0]?.files, ['src/a.ts']);
      assert.equal(tasks[0]?.agent, 'agent');
      const invalid = issues.filter((i) => i.code === 'plan.invalid-field');
      assert.deepEqual(
        invalid.map((i) => [i.field, i.range]),
        [
          ['depends', r(3, 10, 3, 16)],
          ['risk', r(4, 7, 4, 8)],
          ['files', r(5, 19, 5, 20)],
          ['title', r(6, 8, 6, 11)],
          ['agent', r(7, 8, 7, 19)],
          ['worker', r(8, 9, 8, 11)],
          ['verify', r(9, 9, 9, 10)],
        ],
      );
      assert.match(invalid[0]?.message ?? '', /"depends" must be a task id or a list of task ids, not a mapping/);
      assert.match(invalid[1]?.message ?? '', /"risk" must be a risk tag or a list of risk tags, not a number/);
      assert.ok(hasErrors(issues));
    });

    it('plan.invalid-field: verify commands that would need a shell or are not commands', () => {
      const { tasks, issues } = parsePlan(
        md(
          '```baton-task',
          'id: T1',
          'verify:',
          '  - npm test && npm run lint', //   4
          '  - "node -e \'x"', //             5
          '  - []', //                         6
          '  - [node, {a: 1}]', //             7
          '  - [-e, x]', //                    8
          '  - node -e "ok | fine"', //        9
          '```',
        ),
      );
      assert.deepEqual(tasks[0]?.verify, [['node', '-e', 'ok | fine']]);
      assert.deepEqual(
        issues.map((i) => [i.code, i.range]),
        [
          ['plan.invalid-field', r(4, 5, 4, 29)],
          ['plan.invalid-field', r(5, 5, 5, 17)],
          ['plan.invalid-field', r(6, 5, 6, 7)],
          ['plan.invalid-field', r(7, 12, 7, 18)],
          ['plan.invalid-field', r(8, 5, 8, 12)],
        ],
      );
      assert.match(issues[0]?.message ?? '', /"&&" is a shell operator/);
    });

    it('plan.invalid-field: a flat verify list of argv words is caught, not run as separate commands', () => {
      const { issues } = parsePlan(md('```baton-task', 'id: T1', 'verify: [node, -e, "process.exit(0)"]', '```'));
      const i = only(issues, 'plan.invalid-field');
      assert.deepEqual(i.range, r(3, 16, 3, 18));
      assert.match(i.recommendation, /own brackets/);
    });

    it('plan.unknown-field: a warning on the key, with a suggestion; the task is still valid', () => {
      const { tasks, issues } = parsePlan(md('```baton-task', 'id: T1', 'dependz: T2', '```'));
      assert.equal(tasks.length, 1);
      const i = only(issues, 'plan.unknown-field');
      assert.equal(i.severity, 'warning');
      assert.deepEqual(i.range, r(3, 1, 3, 8));
      assert.match(i.recommendation, /"depends"/);
      assert.equal(hasErrors(issues), false);
    });

    it('plan.unclosed-block: ranged on the opening fence, and the block is not read as a task', () => {
      const { tasks, issues } = parsePlan(
        md('```baton-task', 'id: T1', '```', 'text', '````baton-task', 'id: T2', '```'),
      );
      assert.deepEqual(
        tasks.map((t) => t.id),
        ['T1'],
      );
      const i = only(issues, 'plan.unclosed-block');
      assert.deepEqual(i.range, r(5, 1, 5, 15));
      assert.match(i.recommendation, /````/);
    });

    it('issues come out sorted by position', () => {
      const { issues } = parsePlan(
        md('```baton-task', 'id: T1', 'depends: [T9]', 'x: 1', '```', '```baton-task', 'id: T1', '```'),
      );
      assert.deepEqual(
        issues.map((i) => i.code),
        ['plan.unknown-dependency', 'plan.unknown-field', 'plan.duplicate-id'],
      );
    });
  });
});

describe('the demo plan (examples/demo/plan.md)', () => {
  it('parses into six tasks forming the documented DAG, with no issues', () => {
    const { tasks, issues } = parsePlan(readFileSync(join(__dirname, '../../../examples/demo/plan.md'), 'utf8'));
    assert.deepEqual(issues, []);
    assert.deepEqual(
      tasks.map((t) => [t.id, t.agent, t.depends]),
      [
        ['T1', 'coder', []],
        ['T2', 'coder', ['T1']],
        ['T3', 'coder', ['T1']],
        ['T4', 'coder', ['T2', 'T3']],
        ['T5', 'reviewer', ['T4']],
        ['T6', 'coder', []],
      ],
    );
    assert.deepEqual(tasks[2]?.risk, ['database']);
    assert.deepEqual(tasks[3]?.verify, [
      ['node', '-e', 'process.exit(0)'],
      ['node', 'src/cli.js', '--help'],
    ]);
    assert.ok(tasks.every((t) => t.instructions.split('\n').length >= 2 && !t.instructions.includes('## T')));
  });
});

describe('splitCommandLine', () => {
  it('splits at whitespace and honours single and double quotes without a shell', () => {
    assert.deepEqual(splitCommandLine(`node  -e "console.log('a b')" 'x "y"' a"b c"d`), {
      argv: ['node', '-e', "console.log('a b')", 'x "y"', 'ab cd'],
    });
  });

  it('keeps backslashes outside quotes and unescapes \\" and \\\\ inside double quotes', () => {
    assert.deepEqual(splitCommandLine('C:\\tools\\x.exe "a\\"b\\\\c\\n"'), { argv: ['C:\\tools\\x.exe', 'a"b\\c\\n'] });
  });

  it('keeps an empty quoted argument', () => {
    assert.deepEqual(splitCommandLine(`git commit -m ''`), { argv: ['git', 'commit', '-m', ''] });
  });

  it('refuses unclosed quotes and unquoted shell operators, but allows quoted ones', () => {
    assert.match(splitCommandLine('echo "x').error ?? '', /never closed/);
    assert.match(splitCommandLine("echo 'x").error ?? '', /never closed/);
    assert.match(splitCommandLine('ls > out.txt').error ?? '', /shell operator/);
    assert.deepEqual(splitCommandLine('echo ">"'), { argv: ['echo', '>'] });
  });
});

describe('parsePlan: permissions (agent presets)', () => {
  const block = (permissions: string): string =>
    ['```baton-task', 'id: T1', permissions, '```', '', 'Do it.', ''].join('\n');

  it('takes a profile, or a mapping with tool lists', () => {
    assert.deepEqual(parsePlan(block('permissions: read-only')).tasks[0]!.permissions, { profile: 'read-only' });
    const mapped = parsePlan(block('permissions:\n  profile: edit\n  allow: [Bash(npm test:*)]\n  deny: WebFetch'))
      .tasks[0]!.permissions;
    assert.deepEqual(mapped, { profile: 'edit', allowTools: ['Bash(npm test:*)'], denyTools: ['WebFetch'] });
    assert.equal(parsePlan(block('title: x')).tasks[0]!.permissions, undefined, 'absent: the default profile applies');
  });

  it('refuses an unknown profile with an issue at the value, naming the profiles', () => {
    const parsed = parsePlan(block('permissions: admin'));
    const problem = parsed.issues.find((i) => i.field === 'permissions');
    assert.ok(problem && problem.severity === 'error');
    assert.match(problem.message, /"permissions" is "admin"; it must be read-only, edit, full/);
    assert.equal(problem.range?.start.line, 3, 'the line of the value');
  });
});
