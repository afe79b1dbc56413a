import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  newWatchdogKey,
  readLeaseDeadline,
  unsettledAfterExit,
  writeAttemptSettled,
  watchdogProgram,
  writeLeaseDeadline,
  type WatchedWorker,
} from '../../../src/engine/effects/processes/leaseWatchdog';
import { selfIdentity } from '../../../src/engine/effects/processes/processes';
import { makeTempDir } from '../../support/tempDir';

describe("a lease watchdog's deadline file: only what its coordinators signed counts (issue 25, item 4.3)", () => {
  let workspace: string;
  let file: string;
  const key = newWatchdogKey();
  const signing = { key, subject: 'D-T1-coder-001' };
  beforeEach(() => {
    workspace = makeTempDir('baton-deadline-');
    file = join(workspace, '.baton/runs/R-1/leases/D-T1-coder-001.deadline');
  });
  afterEach(() => rmSync(workspace, { recursive: true, force: true }));

  it('reads back the deadline its coordinator signed', () => {
    writeLeaseDeadline(workspace, file, 1_800_000_000_000, signing);
    assert.equal(readLeaseDeadline(file, signing), 1_800_000_000_000);
  });

  it('takes no deadline a worker wrote: unsigned, a signature moved to another deadline, or signed for another attempt', () => {
    writeLeaseDeadline(workspace, file, 1_800_000_000_000, signing);
    const [, signature] = readFileSync(file, 'utf8').trim().split(' ');
    writeFileSync(file, '1900000000000\n');
    assert.equal(readLeaseDeadline(file, signing), undefined, 'unsigned');
    writeFileSync(file, `1900000000000 ${signature}\n`);
    assert.equal(readLeaseDeadline(file, signing), undefined, 'a signature of another deadline');
    writeLeaseDeadline(workspace, file, 1_900_000_000_000, { key, subject: 'D-T2-coder-001' });
    assert.equal(readLeaseDeadline(file, signing), undefined, "another attempt's deadline");
    writeLeaseDeadline(workspace, file, 1_900_000_000_000, { key: newWatchdogKey(), subject: signing.subject });
    assert.equal(readLeaseDeadline(file, signing), undefined, 'another key');
    for (const junk of ['', 'x', '-5', '1e30', '1900000000000 ab cd', '0x10']) {
      writeFileSync(file, `${junk}\n`);
      assert.equal(readLeaseDeadline(file, signing), undefined, junk);
    }
  });

  it('without a key (a verify command watched by its coordinator lease) takes an unsigned deadline only', () => {
    writeLeaseDeadline(workspace, file, 1_800_000_000_000);
    assert.equal(readLeaseDeadline(file), 1_800_000_000_000);
    writeLeaseDeadline(workspace, file, 1_800_000_000_000, signing);
    assert.equal(readLeaseDeadline(file), undefined);
  });
});

describe('after its worker ended, a watchdog hands in only what no living coordinator took (issue 26)', () => {
  let workspace: string;
  let file: string;
  const key = newWatchdogKey();
  const subject = 'D-T1-coder-001';
  const alive = selfIdentity();
  // A process that is certainly gone: a pid above the kernel's largest (pid_max is at most 2^22).
  const gone = { pid: 2 ** 22 + 17, startTime: '1', host: alive.host };
  const watched = (coordinator: typeof alive): WatchedWorker => ({
    kind: 'worker',
    workspace,
    delegationId: subject,
    identity: alive,
    marker: 'BATON_RUNTIME_ID=W-1',
    deadlinePath: file,
    logPath: join(workspace, 'log'),
    graceMs: 0,
    coordinator,
  });
  beforeEach(() => {
    workspace = makeTempDir('baton-settled-');
    file = join(workspace, '.baton/runs/R-1/leases/D-T1-coder-001.deadline');
  });
  afterEach(() => rmSync(workspace, { recursive: true, force: true }));

  it('nothing to hand in once its coordinator marked the attempt settled, with its key', async () => {
    writeLeaseDeadline(workspace, file, Date.now() + 60_000, { key, subject });
    writeAttemptSettled(workspace, file, { key, subject });
    assert.equal(await unsettledAfterExit(watched(gone), key), false);
  });

  it('a mark the worker wrote does not count: unsigned, or signed with another key', async () => {
    writeLeaseDeadline(workspace, file, Date.now() + 60_000, { key, subject });
    writeFileSync(file, 'settled\n');
    assert.equal(await unsettledAfterExit(watched(gone), key), true, 'unsigned');
    writeAttemptSettled(workspace, file, { key: newWatchdogKey(), subject });
    assert.equal(await unsettledAfterExit(watched(gone), key), true, 'another key');
  });

  it('hands in when its coordinator is gone; waits for it while it lives, until the lease ran out', async () => {
    writeLeaseDeadline(workspace, file, Date.now() + 60_000, { key, subject });
    assert.equal(await unsettledAfterExit(watched(gone), key), true, 'the coordinator is gone');
    writeLeaseDeadline(workspace, file, Date.now() - 1, { key, subject });
    assert.equal(await unsettledAfterExit(watched(alive), key), true, 'it lives, but the lease ran out unmarked');
    writeLeaseDeadline(workspace, file, Date.now() + 60_000, { key, subject });
    const waiting = unsettledAfterExit(watched(alive), key);
    setTimeout(() => writeAttemptSettled(workspace, file, { key, subject }), 300);
    assert.equal(await waiting, false, 'it lives and marks the attempt settled');
  });
});

describe('how a lease watchdog is started', () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir('baton-watchdog-program-');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the watchdog's own program beside the CLI (the build's dist/baton-watchdog.js), not the whole CLI", () => {
    const cli = join(dir, 'cli.js');
    writeFileSync(join(dir, 'baton-watchdog.js'), '');
    assert.deepEqual(watchdogProgram(cli), [join(dir, 'baton-watchdog.js')]);
  });

  it("falls back to the CLI's hidden lease-watchdog command where there is no such program", () => {
    const cli = join(dir, 'cli.js');
    assert.deepEqual(watchdogProgram(cli), [cli, 'lease-watchdog']);
  });
});
