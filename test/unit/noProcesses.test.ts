import assert from 'node:assert/strict';
import childProcess, { execFileSync, spawn } from 'node:child_process';
import { forbidProcesses, ProcessInUnitTier } from '../support/noProcesses';

describe('the unit tier starts no process (test/support/noProcesses.ts, loaded by npm run test:unit)', () => {
  it('makes every child_process starter throw, naming test/system, also through execa, and puts them back after', async () => {
    const before = childProcess.spawn;
    const restore = forbidProcesses();
    try {
      assert.throws(() => spawn('true'), ProcessInUnitTier);
      assert.throws(
        () => execFileSync('true'),
        /in the unit tier: a test that starts a process belongs in test\/system/,
      );
      const { execa } = await import('execa');
      await assert.rejects(execa('true'), (err: Error) => err.cause instanceof ProcessInUnitTier);
    } finally {
      restore();
    }
    assert.equal(childProcess.spawn, before);
  });
});
