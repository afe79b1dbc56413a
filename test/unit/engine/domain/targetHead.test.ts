import assert from 'node:assert/strict';
import { describeTargetGone, describeTargetMoved } from '../../../../src/engine/domain/targetHead';

const A = '1'.repeat(40);
const B = '2'.repeat(40);

describe('target head: how Baton says the target branch moved', () => {
  it('backwards: rewound, the missing commits by short hash and subject, and the way back', () => {
    assert.equal(
      describeTargetMoved({
        kind: 'backwards',
        branch: 'main',
        expected: A,
        found: B,
        missing: [{ sha: A, subject: 'add "x"' }],
        missingCount: 1,
      }),
      `main was rewound from 1111111111 to 2222222222, not by Baton or by a commit on top of it: 1 commit went missing from it (1111111111 "add \\"x\\""). They are still reachable by hash: git branch rescue ${A} keeps them; git update-ref refs/heads/main ${A} puts the branch back.`,
    );
  });

  it('sideways, with more missing than shown: says how many more', () => {
    const said = describeTargetMoved({
      kind: 'sideways',
      branch: 'dev',
      expected: A,
      found: B,
      missing: [{ sha: A, subject: 'one' }],
      missingCount: 12,
    });
    assert.match(said, /^dev was moved sideways from 1111111111 to 2222222222 \(not a descendant of it\)/);
    assert.match(said, /12 commits went missing from it \(1111111111 "one" and 11 more\)/);
  });

  it('gone: the first line of what git said, and how to bring it back', () => {
    assert.equal(
      describeTargetGone({ kind: 'gone', branch: 'main', expected: A, detail: 'fatal: bad ref\nmore' }),
      `main cannot be read (fatal: bad ref); Baton expected it at 1111111111: git branch main ${A} brings it back.`,
    );
  });
});
