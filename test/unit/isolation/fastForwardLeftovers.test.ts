// Whether what is in the way of a fast-forward was left by an interrupted one (domain/isolation.ts).
import assert from 'node:assert/strict';
import { leftOverByFastForward, type ForwardedPath } from '../../../src/engine/domain/isolation';

const written = (over: Partial<ForwardedPath>): ForwardedPath => ({
  path: 'big.txt',
  present: undefined,
  incoming: 'line one\nline two\n',
  absent: false,
  ...over,
});

describe('leftOverByFastForward: changes in the way that a failed fast-forward left', () => {
  it('a half-written, an empty and a whole new file are left over', () => {
    assert.equal(
      leftOverByFastForward([
        written({ present: 'line one\nli' }),
        written({ path: 'a.txt', present: '' }),
        written({ path: 'b.txt', present: 'line one\nline two\n' }),
      ]),
      true,
    );
  });

  it('a file cut inside a character (decoded with a trailing U+FFFD) is left over', () => {
    assert.equal(leftOverByFastForward([written({ incoming: 'naïve\n', present: 'na\uFFFD' })]), true);
  });

  it('a file deleted where the move deletes it is left over; one the move writes is not', () => {
    assert.equal(leftOverByFastForward([written({ absent: true, incoming: undefined })]), true);
    assert.equal(leftOverByFastForward([written({ absent: true })]), false);
  });

  it('a person’s content, a file longer than what is written, or one that is not a plain file stops it all', () => {
    assert.equal(leftOverByFastForward([written({ present: 'line one\n' }), written({ present: 'mine\n' })]), false);
    assert.equal(leftOverByFastForward([written({ present: 'line one\nline two\nmore\n' })]), false);
    assert.equal(leftOverByFastForward([written({ present: undefined })]), false);
    assert.equal(leftOverByFastForward([written({ present: 'x', incoming: undefined })]), false);
  });
});
