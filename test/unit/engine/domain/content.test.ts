import assert from 'node:assert/strict';
import { contentDigest, textOf } from '../../../../src/engine/domain/content';

describe('content: digest and text of bytes', () => {
  it('names content by its sha256, the same for a string and its UTF-8 bytes', () => {
    const empty = 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    assert.equal(contentDigest(''), empty);
    assert.equal(contentDigest(new Uint8Array()), empty);
    assert.equal(contentDigest('é'), contentDigest(new TextEncoder().encode('é')));
  });

  it('reads UTF-8 text, keeps a byte-order mark, and refuses invalid UTF-8 and NUL', () => {
    assert.equal(textOf(new TextEncoder().encode('# Result ✓\n')), '# Result ✓\n');
    assert.equal(textOf(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), '\ufeffa');
    assert.equal(textOf(new Uint8Array([0xff, 0xfe, 0x61])), undefined);
    assert.equal(textOf(new TextEncoder().encode('a\0b')), undefined);
  });
});
