import assert from 'node:assert/strict';
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../../../src/engine/index';
import { readBatonFileTail, readWorkerFileTail } from '../../../src/engine/effects/files/safeRead';
import { LogTail } from '../../../src/engine/effects/processes/logTail';
import { readFenced } from '../../../src/engine/platform/fencedFiles';
import { makeTempDir } from '../../support/tempDir';

const refused = (err: unknown): boolean => BatonError.is(err, 'workspace.link-refused');

/** The end of a verify log goes into a worker's next prompt: it is read only from a file Baton wrote under .baton/. */
describe('safeRead: the end of a file under .baton/, never through a link', () => {
  let workspace: string;
  let secret: string;
  const logs = (...parts: string[]) => join(workspace, '.baton', 'runs', 'R1', 'logs', ...parts);
  beforeEach(() => {
    workspace = makeTempDir('baton-read-');
    secret = join(makeTempDir('baton-outside-'), 'key.txt');
    writeFileSync(secret, 'the private key\n');
    mkdirSync(logs(), { recursive: true });
  });

  it('reads the last bytes and says whether the file holds more', () => {
    writeFileSync(logs('a.log'), 'one\ntwo\nthree\n');
    assert.deepEqual(readBatonFileTail(workspace, logs('a.log'), 100), { text: 'one\ntwo\nthree\n', cut: false });
    assert.deepEqual(readBatonFileTail(workspace, logs('a.log'), 8), { text: 'o\nthree\n', cut: true });
  });

  it('is undefined for a file or folder that is not there', () => {
    assert.equal(readBatonFileTail(workspace, logs('none.log'), 100), undefined);
    assert.equal(
      readBatonFileTail(workspace, join(workspace, '.baton', 'runs', 'R2', 'logs', 'x.log'), 100),
      undefined,
    );
  });

  it('refuses a link as the file or as a folder on the way, a hard link, and a path outside .baton/', () => {
    symlinkSync(secret, logs('link.log'));
    assert.throws(() => readBatonFileTail(workspace, logs('link.log'), 100), refused);
    linkSync(secret, logs('hard.log'));
    assert.throws(() => readBatonFileTail(workspace, logs('hard.log'), 100), /another hard link/);
    writeFileSync(join(secret, '..', 'x.log'), 'outside\n');
    symlinkSync(join(secret, '..'), join(workspace, '.baton', 'runs', 'R3'));
    assert.throws(() => readBatonFileTail(workspace, join(workspace, '.baton', 'runs', 'R3', 'x.log'), 100), refused);
    assert.throws(() => readBatonFileTail(workspace, secret, 100), refused);
  });
});

/** Issue 25, item 3: a file a worker can replace is read without blocking and never without bound. */
describe('reads of files a worker can touch: a device is never read, a regular file by offset or its end', () => {
  let folder: string;
  beforeEach(() => {
    folder = makeTempDir('baton-worker-files-');
  });

  it('a link to /dev/zero in place of a log: the follower reads nothing, the answer read finds none', () => {
    const log = join(folder, 'D-T1-coder-001.log');
    symlinkSync('/dev/zero', log);
    assert.deepEqual(new LogTail(log).rest(), []);
    assert.equal(readWorkerFileTail(log, 1024), undefined);
  });

  it('the device itself (not a link) is refused too: only a regular file is read', () => {
    assert.throws(() => readFenced('/dev', '/dev/zero', 1024), refused);
  });

  it('follows a regular log by offset and reads only its end for an answer', () => {
    const log = join(folder, 'a.log');
    writeFileSync(log, 'one\ntwo\npart');
    const tail = new LogTail(log);
    assert.deepEqual(tail.lines(), ['one', 'two']);
    assert.deepEqual(tail.rest(), ['part']);
    assert.equal(readWorkerFileTail(log, 4)?.toString('utf8'), 'part');
  });
});
