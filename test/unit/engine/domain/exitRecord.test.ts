import assert from 'node:assert/strict';
import { exitFromStatus, exitRecordHeader, readExitRecordText } from '../../../../src/engine/domain/exitRecord';

describe('exit record: how a worker ended, for the coordinator that did not watch', () => {
  const owner = { delegationId: 'D-T1-coder-001', runtimeId: 'W-abc' };
  const header = exitRecordHeader(owner);

  it('reads the exit code of the attempt it names', () => {
    assert.deepEqual(readExitRecordText(`${header}started\nended status=1\n`, owner), {
      exit: { exitCode: 1, signalNumber: null },
    });
  });

  it('reads 128+n of a fatal signal as that signal, and of a signal that does not end a process as the code', () => {
    assert.deepEqual(exitFromStatus(137), { exitCode: null, signalNumber: 9 });
    assert.deepEqual(exitFromStatus(143), { exitCode: null, signalNumber: 15 });
    assert.deepEqual(exitFromStatus(148), { exitCode: 148, signalNumber: null }, 'SIGTSTP stops, it does not end');
    assert.deepEqual(exitFromStatus(255), { exitCode: 255, signalNumber: null });
    assert.deepEqual(exitFromStatus(0), { exitCode: 0, signalNumber: null });
  });

  it("ignores a record of another attempt (another delegation, or the same one's earlier runtime)", () => {
    const ended = 'started\nended status=0\n';
    assert.deepEqual(readExitRecordText(`${header}${ended}`, { ...owner, runtimeId: 'W-other' }), {
      none: 'another-attempt',
    });
    assert.deepEqual(readExitRecordText(`${header}${ended}`, { ...owner, delegationId: 'D-T1-coder-002' }), {
      none: 'another-attempt',
    });
  });

  it('is no evidence when the gate never let the worker go, when no end is written yet, or when the end was cut', () => {
    assert.deepEqual(readExitRecordText(`${header}ended status=125\n`, owner), { none: 'never-started' });
    assert.deepEqual(readExitRecordText(`${header}started\n`, owner), { none: 'not-ended' });
    assert.deepEqual(readExitRecordText(`${header}started\nended status=0`, owner), { none: 'not-ended' });
    assert.deepEqual(readExitRecordText('', owner), { none: 'unreadable' });
    assert.deepEqual(readExitRecordText('ended status=0\n', owner), { none: 'unreadable' });
  });
});
