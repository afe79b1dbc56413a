// Show Output's terminal gets whole lines (src/extension/model/terminalLines.ts): the terminal re-wraps
// every line when its panel is resized except the one its cursor is on, whose end a narrower panel
// cuts off for good. So every write must leave the cursor at the start of an empty line — also while a
// worker's log is read in the middle of a line (issue #24, item 8).
import assert from 'node:assert/strict';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LogFollower } from '../../../../src/extension/model/logFollower';
import { TerminalLines } from '../../../../src/extension/model/terminalLines';
import { FakeClock } from '../../../support/fakeClock';
import { makeTempDir } from '../../../support/tempDir';

const POLL_MS = 50;
const HOLD_MS = 1000;

describe("Show Output's terminal text (whole lines, so a resize keeps every character)", () => {
  let dir: string;
  let clock: FakeClock;
  const disposables: Array<{ dispose(): void }> = [];
  beforeEach(() => {
    dir = makeTempDir('baton-lines-');
    clock = new FakeClock();
  });
  afterEach(() => {
    for (const d of disposables.splice(0)) d.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a log read in the middle of its lines reaches the terminal in whole lines, each write ending with \\r\\n', async () => {
    const log = join(dir, 'D-T1-coder-001.log');
    writeFileSync(log, 'a first line, whole\nthe second line is writ');
    const writes: string[] = [];
    const lines = new TerminalLines((text) => writes.push(text), { clock, holdMs: HOLD_MS });
    // As Show Output wires them (attemptViews.ts): the follower's text goes through the lines to the terminal.
    const follower = new LogFollower(log, (text) => lines.push(text), { pollMs: POLL_MS, clock });
    disposables.push(follower, lines);
    await follower.start();
    assert.deepEqual(writes, ['a first line, whole\r\n'], 'the unfinished line is not on the cursor line');
    appendFileSync(log, 'ten in two parts\nand a third ');
    clock.advance(POLL_MS);
    await follower.settled();
    appendFileSync(log, 'line\r\n');
    clock.advance(POLL_MS);
    await follower.settled();
    await follower.finish();
    lines.flush();
    assert.deepEqual(writes, [
      'a first line, whole\r\n',
      'the second line is written in two parts\r\n',
      'and a third line\r\n',
    ]);
    for (const text of writes)
      assert.ok(text.endsWith('\r\n'), `${JSON.stringify(text)} leaves the cursor on a new line`);
  });

  it('a line that waits for its newline is shown after a while on a line of its own; nothing is lost', () => {
    const writes: string[] = [];
    const lines = new TerminalLines((text) => writes.push(text), { clock, holdMs: HOLD_MS });
    disposables.push(lines);
    lines.push('Downloading… 10%');
    clock.advance(HOLD_MS - 1);
    assert.deepEqual(writes, [], 'held back while it may still be completed');
    clock.advance(1);
    assert.deepEqual(writes, ['Downloading… 10%\r\n'], 'shown once it waited long enough, ending the line');
    lines.push(' 100%\nnext');
    lines.flush();
    assert.deepEqual(writes, ['Downloading… 10%\r\n', ' 100%\r\n', 'next\r\n']);
    assert.equal(clock.pendingTimers, 0, 'no hold left once everything was written');
  });

  it('a whole line is written at once, and a flush with nothing held writes nothing', () => {
    const writes: string[] = [];
    const lines = new TerminalLines((text) => writes.push(text), { clock, holdMs: HOLD_MS });
    disposables.push(lines);
    lines.push('one\ntwo\r\n');
    lines.flush();
    assert.deepEqual(writes, ['one\r\ntwo\r\n']);
    assert.equal(clock.pendingTimers, 0);
  });
});
