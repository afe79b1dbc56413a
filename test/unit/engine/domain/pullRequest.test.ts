import assert from 'node:assert/strict';
import {
  ghPullRequestArgs,
  ghReadiness,
  pullRequestText,
  pushAnswerTail,
  pushRefusal,
  shellQuote,
  withoutCredentials,
} from '../../../../src/engine/domain/pullRequest';
import { pushRefusedReason } from '../../../../src/engine/domain/gateReasons';
import { approvedDespiteFailure } from '../../../../src/engine/domain/mergeQueue';
import { DEFAULT_CONFIG, parseConfig } from '../../../../src/engine/domain/config';
import { runSettingsFrom, settingsDiffering } from '../../../../src/engine/domain/runSettings';
import { isolationNeed } from '../../../../src/engine/domain/isolation';

const facts = {
  taskId: 'T1',
  title: 'Add the notes store',
  delegationId: 'D-T1-coder-001',
  runId: 'R-1',
  summary: 'Added the store and its tests.',
  artifacts: ['src/notes.ts', 'docs/notes.md'],
  receipts: [
    { command: ['npm', 'test'], exitCode: 0, timedOut: false, durationMs: 1200 },
    { command: ['npm', 'test'], exitCode: 0, timedOut: false, durationMs: 1300, tree: '0123456789abcdef0123' },
  ],
  branch: 'baton/R-1/T1/001',
  targetBranch: 'main',
};

describe('integration branch: the pull request of a pushed task', () => {
  it('title is the task title; the body holds the summary, artifacts, verify receipts (own and merged tree) and provenance', () => {
    const text = pullRequestText(facts);
    assert.equal(text.title, 'Add the notes store');
    assert.equal(
      text.body,
      [
        'Added the store and its tests.',
        '',
        '### Artifacts',
        '',
        '- `src/notes.ts`',
        '- `docs/notes.md`',
        '',
        '### Verification',
        '',
        '- `npm test`: exit 0, 1200 ms',
        '- `npm test`: exit 0, 1300 ms on the merged tree 0123456789',
        '',
        '---',
        'Baton run R-1, task T1, delegation D-T1-coder-001: branch `baton/R-1/T1/001` into `main`.',
        '',
      ].join('\n'),
    );
  });

  it('no title, no summary, nothing verified: the id, a line that it passed, and no empty sections', () => {
    const text = pullRequestText({ ...facts, title: ' ', summary: '', artifacts: [], receipts: [] });
    assert.equal(text.title, 'T1');
    assert.doesNotMatch(text.body, /###/);
    assert.match(text.body, /^T1 passed\.\n/);
  });

  it('gh opens it only when it starts and `gh auth status` exits 0; otherwise says which', () => {
    assert.deepEqual(ghReadiness({ found: false }, undefined), { kind: 'absent' });
    assert.deepEqual(ghReadiness({ found: true }, { exitCode: 0, output: 'Logged in' }), { kind: 'ready' });
    assert.deepEqual(
      ghReadiness({ found: true }, { exitCode: 1, output: 'github.com\n  X Not logged in to any hosts\n' }),
      { kind: 'unauthenticated', detail: 'X Not logged in to any hosts' },
    );
  });

  it('the gh command carries the body by file, and its suggested form is safe to paste into a shell', () => {
    const args = ghPullRequestArgs(
      { title: "Fix the user's $(rm -rf ~) title" },
      { branch: 'baton/R-1/T1/001', targetBranch: 'main', bodyFile: '/ws/.baton/runs/R-1/pull-requests/D.md' },
    );
    assert.deepEqual(args, [
      'pr',
      'create',
      '--head',
      'baton/R-1/T1/001',
      '--base',
      'main',
      '--title',
      "Fix the user's $(rm -rf ~) title",
      '--body-file',
      '/ws/.baton/runs/R-1/pull-requests/D.md',
    ]);
    assert.equal(shellQuote('baton/R-1/T1/001'), 'baton/R-1/T1/001');
    assert.equal(shellQuote("Fix the user's $(rm -rf ~) title"), `'Fix the user'\\''s $(rm -rf ~) title'`);
  });

  it("git's answer loses the credentials a remote URL carries, and keeps its last lines", () => {
    assert.equal(
      withoutCredentials("fatal: unable to access 'https://me:ghp_secret@github.com/o/r.git/': 403"),
      "fatal: unable to access 'https://***@github.com/o/r.git/': 403",
    );
    assert.equal(withoutCredentials('ssh://git@host/r.git'), 'ssh://***@host/r.git');
    const tail = pushAnswerTail('', 'a\nb\nc\n', 2);
    assert.equal(tail, 'b\nc');
  });

  it("the refusal line is the ref's own verdict, then git's fatal line, then its error line", () => {
    const sha = '0123456789abcdef0123456789abcdef01234567';
    assert.equal(
      pushRefusal(
        `remote: no\nTo /r.git\n ! [remote rejected] ${sha} -> baton/R/T/001 (pre-receive hook declined)\nerror: failed to push some refs to '/r.git'`,
      ),
      '! [remote rejected] 0123456789 -> baton/R/T/001 (pre-receive hook declined)',
    );
    assert.equal(
      pushRefusal(
        " ! [rejected]        abc -> baton/R/T/001 (non-fast-forward)\nerror: failed to push some refs to 'x'",
      ),
      '! [rejected]        abc -> baton/R/T/001 (non-fast-forward)',
    );
    assert.equal(
      pushRefusal(
        "fatal: '/gone.git' does not appear to be a git repository\nfatal: Could not read from remote repository.",
      ),
      'fatal: Could not read from remote repository.',
    );
    assert.equal(pushRefusal(''), 'git push failed');
  });

  it('the refused push gate says where, why, that nothing is lost, and what approve and reject do', () => {
    assert.equal(
      pushRefusedReason(
        { taskId: 'T1', path: '/ws/.baton/worktrees/R-1/T1-001', branch: 'baton/R-1/T1/001' },
        { remote: 'origin', refusal: '! [rejected] abc -> baton/R-1/T1/001 (non-fast-forward)' },
      ),
      'T1 passed, but pushing its branch baton/R-1/T1/001 to origin failed: ! [rejected] abc -> baton/R-1/T1/001 (non-fast-forward). Nothing was pushed; the branch and the work are kept in /ws/.baton/worktrees/R-1/T1-001. Fix what is in the way (the remote, the network, a branch of that name there) and approve to push again; reject to fail T1 (its branch stays until baton cleanup).',
    );
  });

  it('approving a refused push pushes again; it does not let the merged tree skip verification', () => {
    assert.equal(approvedDespiteFailure([{ id: 'G-2', details: { sourceHead: 'aaa', push: true } }], 'aaa'), undefined);
  });

  it('config: integration branch and integrationRemote (a remote name, default origin, never a URL), frozen into the run', () => {
    const { config, issues } = parseConfig('{ "integration": "branch", "integrationRemote": "upstream" }');
    assert.deepEqual(issues, []);
    assert.equal(config.integration, 'branch');
    assert.equal(parseConfig('{}').config.integrationRemote, 'origin');
    for (const bad of ['"https://me:token@github.com/o/r.git"', '"-oProxyCommand=x"', '""'])
      assert.ok(
        parseConfig(`{ "integrationRemote": ${bad} }`).issues.some((i) => i.severity === 'error'),
        `${bad} is refused`,
      );
    const frozen = runSettingsFrom(config);
    assert.equal(frozen.integrationRemote, 'upstream');
    assert.deepEqual(settingsDiffering(frozen, DEFAULT_CONFIG), ['integration', 'integrationRemote']);
  });
});

describe('integration branch: every task gets a branch', () => {
  it('isolation auto asks for a worktree even with one task at a time (explicitly: a problem is a gate); none stays none', () => {
    const branch = { isolation: 'auto' as const, integration: 'branch' as const };
    assert.deepEqual(isolationNeed(branch, undefined, {}, 1), { mode: 'probe', explicit: true, strategy: 'branch' });
    assert.deepEqual(isolationNeed({ isolation: 'auto', integration: 'merge' }, undefined, {}, 1), { mode: 'none' });
    assert.deepEqual(isolationNeed({ isolation: 'none', integration: 'branch' }, undefined, {}, 4), { mode: 'none' });
    assert.deepEqual(isolationNeed(branch, undefined, { isolation: 'none' }, 4), { mode: 'none' });
  });
});
