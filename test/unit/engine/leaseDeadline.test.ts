import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  newWatchdogKey,
  readLeaseDeadline,
  writeLeaseDeadline,
} from '../../../src/engine/effects/processes/leaseWatchdog';
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
