// A snapshot that fails on close (disk full) after a successful command (issue 15, item 15):
// the command's exit code and output reflect what was committed, the failure is one notice
// on stderr, nothing acknowledged is lost, and the half-written snapshot does not keep the
// space that ran out. The disk is really full: the workspace lives on a small tmpfs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../../../src/engine/index';
import { describeResult, ensureCliBuilt, planText, runCli, STACK_FRAME, writeFile } from '../../support/cli';

/** Fills the file system under `dir` until a write fails with ENOSPC, then frees `leaveBytes`. */
function fillDisk(dir: string, leaveBytes: number): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  const size = readdirSync(dir).includes('filler') ? execFileSync('stat', ['-c', '%s', filler]).toString() : '0';
  execFileSync('truncate', ['-s', String(Math.max(0, Number(size) - leaveBytes)), filler]);
  return filler;
}

describe('baton CLI: a snapshot on close that fails for a full disk', function () {
  this.timeout(180_000);
  let mountPoint: string;
  let ws: string;
  let runtime: { runtimeId: string; token: string };

  before(async function () {
    ensureCliBuilt();
    mountPoint = join(tmpdir(), `baton-full-${process.pid}`);
    mkdirSync(mountPoint, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      rmSync(mountPoint, { recursive: true, force: true });
      this.skip(); // mounting needs root (CAP_SYS_ADMIN); the fault matrix covers the store in-process
    }
    ws = join(mountPoint, 'ws');
    mkdirSync(ws);
    writeFile(ws, 'plan.md', planText([{ id: 'T1' }]));
    const engine = await Engine.open({ workspace: ws });
    try {
      const claimed = await engine.claimTask({ planPath: join(ws, 'plan.md'), taskId: 'T1', leaseSeconds: 3600 });
      runtime = { runtimeId: claimed.runtimeId, token: claimed.token };
    } finally {
      await engine.close();
    }
  });

  after(() => {
    if (!mountPoint) return;
    try {
      execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    } catch {
      // not mounted (skipped)
    }
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it('heartbeat --json and status --json: exit 0, exactly one JSON document, the failure a notice; nothing lost', async () => {
    // More than the 1 MiB of journal after which a closing command snapshots; then the disk
    // fills up, leaving room for a journal line but not for a snapshot.
    const pile = await Engine.open({ workspace: ws });
    for (let i = 0; i < 2200; i++) await pile.heartbeat({ ...runtime, progress: `step ${i} `.padEnd(500, 'x') });
    const filler = fillDisk(mountPoint, 16 * 1024);
    await pile.close(); // in-process: the failed snapshot is a notice, not a rejection
    assert.match(pile.recoveryNotices.join('\n'), /A snapshot on close could not be written \(.*ENOSPC/);

    const beat = await runCli(
      ['heartbeat', '--runtime', runtime.runtimeId, '--token', runtime.token, '--progress', 'last', '--json'],
      { cwd: ws },
    );
    assert.equal(beat.code, 0, describeResult(beat));
    const doc = beat.json();
    assert.equal(doc.protocolVersion, 1, 'exactly one JSON document on stdout');
    assert.match(
      beat.stderr,
      /^baton: A snapshot on close could not be written \(.*ENOSPC.*nothing was lost/m,
      describeResult(beat),
    );
    assert.doesNotMatch(beat.stdout + beat.stderr, STACK_FRAME);
    assert.doesNotMatch(beat.stderr, /process stopped/, 'a full disk is not blamed on a stopped process');
    assert.ok(
      !readdirSync(join(ws, '.baton', 'store')).some((n) => n.endsWith('.tmp')),
      'no temp file keeps the space',
    );

    const status = await runCli(['status', '--json'], { cwd: ws });
    assert.equal(status.code, 0, describeResult(status));
    assert.equal(status.json().protocolVersion, 1);

    rmSync(filler);
    // With room again, everything acknowledged is there: the last heartbeat's progress.
    const reopened = await Engine.open({ workspace: ws });
    try {
      assert.match(
        JSON.stringify(await reopened.overview()),
        /"progress":"last"/,
        'the acknowledged heartbeat is there',
      );
    } finally {
      await reopened.close();
    }
  });
});
