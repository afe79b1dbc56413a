import assert from 'node:assert/strict';
import { BatonError } from '../../../src/engine/index';
import { attemptBindingFrom } from '../../../src/mcp/attemptBinding';

describe('baton mcp is bound to its attempt by the environment Baton gives the worker', () => {
  const env = {
    BATON_RUN_ID: 'R-1',
    BATON_DELEGATION_ID: 'D-T1-coder-001',
    BATON_RUNTIME_ID: 'W-1',
    BATON_RUNTIME_TOKEN: 'secret',
  };

  it('takes run, delegation, runtime and token from BATON_*', () => {
    assert.deepEqual(attemptBindingFrom(env), {
      runId: 'R-1',
      delegationId: 'D-T1-coder-001',
      runtimeId: 'W-1',
      token: 'secret',
    });
  });

  it('refuses to serve without them (mcp.missing-identity, exit 2), naming each missing variable', () => {
    const { BATON_RUNTIME_TOKEN: _t, BATON_RUN_ID: _r, ...partial } = env;
    assert.throws(
      () => attemptBindingFrom({ ...partial, BATON_RUNTIME_TOKEN: '' }),
      (err: unknown) =>
        BatonError.is(err, 'mcp.missing-identity') &&
        err.kind === 'invalid-input' &&
        /BATON_RUN_ID, BATON_RUNTIME_TOKEN are not set/.test(err.message),
    );
  });
});
