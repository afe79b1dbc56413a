// Show Output's tail (src/extension/model/logFollower.ts) on a real file: what the log holds, then
// each appended line once — a change is read from where the last read ended, never from the start.
// Its poll runs on a fake clock: a test moves the clock past a poll and waits for that read.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LogFollower } from '../../../../src/extension/model/logFollower';
import { FakeClock } from '../../../support/fakeClock';
import { makeTempDir } from '../../../support/tempDir';

const POLL_MS = 50;

describe('following a worker log (Show Output)', () => {
  let dir: string;
  let clock: FakeClock;
  let follower: LogFollower | undefined;
  beforeEach(() => {
    dir = makeTempDir('baton-follow-');
    clock = new FakeClock();
  });

  /** The next poll comes, and what it (or the file watch before it) read is shown. */
  async function poll(): Promise<void> {
    clock.advance(POLL_MS);
    await follower!.settled();
  }
  afterEach(() => {
    follower?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows what is there, then only what was appended: every line once, and each byte read once', async () => {
    const log = join(dir, 'D-T1-coder-001.log');
    writeFileSync(log, 'line 1\nline 2\n');
    let shown = '';
    follower = new LogFollower(log, (text) => (shown += text), { pollMs: POLL_MS, clock });
    await follower.start();
    assert.equal(shown, 'line 1\nline 2\n');
    for (let i = 3; i <= 40; i++) {
      appendFileSync(log, `line ${i}\n`);
      if (i % 5 === 0) {
        await poll();
        assert.ok(shown.endsWith(`line ${i}\n`), `line ${i} shown after the next poll`);
      }
    }
    await follower.finish();
    const expected = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join('');
    assert.equal(shown, expected, 'no line repeated, none missing');
    assert.equal(follower.bytesRead, Buffer.byteLength(expected), 'no byte read twice');
  });

  it('waits for a log that does not exist yet, and keeps a character split between two writes whole', async () => {
    mkdirSync(join(dir, 'logs'));
    const log = join(dir, 'logs', 'late.log');
    let shown = '';
    follower = new LogFollower(log, (text) => (shown += text), { pollMs: POLL_MS, clock });
    await follower.start();
    assert.equal(shown, '');
    const euro = Buffer.from('€\n');
    writeFileSync(log, euro.subarray(0, 1));
    await poll();
    assert.equal(follower.bytesRead, 1, 'the first byte of the character was read');
    assert.equal(shown, '', 'half a character is not shown');
    appendFileSync(log, euro.subarray(1));
    await poll();
    assert.equal(shown, '€\n', 'the whole character');
  });

  it('shows the end of a long log and says what it left out; a log that shrank is shown again from its start', async () => {
    const log = join(dir, 'long.log');
    writeFileSync(log, `${'x'.repeat(1000)}\nthe end\n`);
    let shown = '';
    follower = new LogFollower(log, (text) => (shown += text), { pollMs: POLL_MS, clock, maxBacklogBytes: 8 });
    await follower.start();
    assert.equal(shown, '[Baton: the first 1001 bytes of the log are left out here; Open Log shows them]\nthe end\n');
    shown = '';
    writeFileSync(log, 'new\n');
    await poll();
    assert.ok(shown.endsWith('new\n'), `the rewritten log is shown: ${JSON.stringify(shown)}`);
    assert.match(shown, /was truncated; showing it again from its start/);
  });
});
