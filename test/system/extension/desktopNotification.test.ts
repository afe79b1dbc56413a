// The desktop notification of `baton.notifications.os` (src/extension/desktopNotification.ts): notify-send gets the
// title and body as arguments, never through a shell; where it is not installed nothing else happens.
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { sendDesktopNotification } from '../../../src/extension/desktopNotification';
import { makeTempDir } from '../../support/tempDir';

describe('the desktop notification (notify-send)', () => {
  const path = process.env.PATH;
  afterEach(() => {
    process.env.PATH = path;
  });

  /** A notify-send on PATH that writes each argument on a line of its own. */
  function standIn(exit = 0): string {
    const bin = makeTempDir('baton-notify-');
    const sent = join(bin, 'sent.txt');
    writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${sent}'\nexit ${exit}\n`);
    chmodSync(join(bin, 'notify-send'), 0o755);
    process.env.PATH = `${bin}${delimiter}${path}`;
    return sent;
  }

  it('sends the title and body as they are, urgent for a run that failed', async () => {
    const sent = standIn();
    const title = 'Baton: run blocked';
    const body = 'R-1 blocked: G-1 (risk approval of T1) was rejected by ann (“$(rm -rf ~); not now”)';
    assert.deepEqual(await sendDesktopNotification({ title, body, urgent: true }), { kind: 'sent' });
    assert.deepEqual(readFileSync(sent, 'utf8').split('\n').slice(0, 4), [
      '--app-name=Baton',
      '--urgency=critical',
      title,
      body,
    ]);
  });

  it('says notify-send is absent where it is not installed, and a failure with its message', async () => {
    process.env.PATH = makeTempDir('baton-no-notify-');
    assert.deepEqual(await sendDesktopNotification({ title: 't', body: 'b', urgent: false }), { kind: 'absent' });
    standIn(3);
    const failed = await sendDesktopNotification({ title: 't', body: 'b', urgent: false });
    assert.equal(failed.kind, 'failed');
  });
});
