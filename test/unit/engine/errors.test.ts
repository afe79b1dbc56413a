import * as assert from 'node:assert/strict';
import { EXIT_CODES } from '../../../src/cli/main';
import { BatonError, ERROR_CODES, isErrorCode, type ErrorCode } from '../../../src/engine/domain/errors';

describe('error codes: one list, checked by the compiler', () => {
  it('derives the kind (and so the exit code) from the code', () => {
    assert.equal(new BatonError('config.invalid', 'x').kind, 'invalid-input');
    // An id the store does not hold is a mismatch (4), as the task-executor seed says; input wrong in itself is 2.
    assert.equal(EXIT_CODES[new BatonError('run.unknown', 'x').kind], 4);
    assert.equal(EXIT_CODES[new BatonError('config.invalid', 'x').kind], 2);
    assert.equal(EXIT_CODES[new BatonError('coordinator.superseded', 'x').kind], 3);
    assert.equal(EXIT_CODES[new BatonError('task.gated', 'x').kind], 8);
    assert.equal(EXIT_CODES[new BatonError('git.missing', 'x').kind], 7);
  });

  it('BatonError.is narrows on a listed code and refuses other errors', () => {
    const err: unknown = new BatonError('runtime.wrong-token', 'no');
    assert.equal(BatonError.is(err, 'runtime.wrong-token'), true);
    assert.equal(BatonError.is(err, 'runtime.not-live'), false);
    assert.equal(BatonError.is(new Error('plain')), false);
  });

  it('isErrorCode tells listed codes from anything else', () => {
    assert.equal(isErrorCode('store.busy'), true);
    assert.equal(isErrorCode('store.nope'), false);
    assert.equal(isErrorCode('toString'), false, 'not fooled by Object.prototype');
  });

  it('does not compile with a code outside the list (checked by npm run typecheck)', () => {
    // @ts-expect-error 'no.such-code' is not an ErrorCode: this line fails typecheck if it ever compiles.
    const code: ErrorCode = 'no.such-code';
    assert.equal(Object.hasOwn(ERROR_CODES, code), false);
  });
});
