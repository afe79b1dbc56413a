// What a cherry-pick integration still has to copy (domain/isolation.ts), from `git cherry`.
import assert from 'node:assert/strict';
import { cherryPicks } from '../../../src/engine/domain/isolation';

describe('cherryPicks: which of an attempt’s commits a cherry-pick integration still copies', () => {
  it('every commit already on the target (a copy a killed coordinator made): on target, nothing to pick', () => {
    assert.deepEqual(cherryPicks('- 1111111111\n- 2222222222\n'), { kind: 'on-target' });
  });

  it('only the commits not on the target, oldest first as git cherry lists them', () => {
    assert.deepEqual(cherryPicks('- 1111111111\n+ 2222222222\n+ 3333333333\n'), {
      kind: 'pick',
      commits: ['2222222222', '3333333333'],
    });
  });

  it('no commits at all: nothing to bring over', () => {
    assert.deepEqual(cherryPicks(''), { kind: 'on-target' });
  });
});
