import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCliBuilt, makeWorkspace, removeWorkspace } from '../../support/cli';

const DIST = join(__dirname, '..', '..', '..', 'dist');

/** `baton` starts from V8's code cache the build wrote (src/cli/bin.ts), and never depends on it. */
describe('baton CLI: its start from the code cache', function () {
  let copy: string;
  before(() => ensureCliBuilt());
  beforeEach(() => {
    // A copy of the two files and the cache, so that spoiling the cache spoils nothing else.
    copy = makeWorkspace('baton-cli-start-');
    for (const file of ['cli.js', 'baton-cli.js', 'baton-cli.js.cache', 'sql-wasm.wasm'])
      copyFileSync(join(DIST, file), join(copy, file));
  });
  afterEach(() => removeWorkspace(copy));

  const version = (): { status: number | null; stdout: string; stderr: string } => {
    const { status, stdout, stderr } = spawnSync(process.execPath, [join(copy, 'cli.js'), '--version'], {
      encoding: 'utf8',
    });
    return { status, stdout, stderr };
  };

  it('the build leaves a cache this Node takes for the bundle it was made from', () => {
    // The same check bin.ts makes, then V8's own: a cache V8 rejects would only cost its size. V8 takes a cache only
    // under the flags it was made with: bin.ts's (--liftoff-only), which this process has as well.
    const accepted = execFileSync(
      process.execPath,
      [
        '--liftoff-only',
        '-e',
        `const { readFileSync } = require('node:fs'); const { createHash } = require('node:crypto');
         const { Script } = require('node:vm'); const { wrap } = require('node:module');
         const source = readFileSync(process.argv[1], 'utf8'); const cache = readFileSync(process.argv[1] + '.cache');
         const digest = createHash('sha256').update(source).digest();
         if (!cache.subarray(0, 32).equals(digest)) { console.log('digest differs'); process.exit(0); }
         const script = new Script(wrap(source), { filename: process.argv[1], cachedData: cache.subarray(32) });
         console.log(script.cachedDataRejected ? 'rejected' : 'accepted');`,
        join(copy, 'baton-cli.js'),
      ],
      { encoding: 'utf8' },
    ).trim();
    assert.equal(accepted, 'accepted');
  });

  it('a cache for another bundle, or one V8 cannot read, is ignored: the command runs as without one', () => {
    const expected = version();
    assert.equal(expected.status, 0, expected.stderr);
    const cache = readFileSync(join(copy, 'baton-cli.js.cache'));
    // Another bundle's digest: bin.ts does not hand the cache to V8 at all.
    writeFileSync(join(copy, 'baton-cli.js.cache'), Buffer.concat([Buffer.alloc(32, 7), cache.subarray(32)]));
    assert.deepEqual(version(), expected);
    // The right digest, spoiled data: V8 rejects it and compiles.
    writeFileSync(join(copy, 'baton-cli.js.cache'), Buffer.concat([cache.subarray(0, 32), Buffer.alloc(4096, 1)]));
    assert.deepEqual(version(), expected);
    // No cache at all.
    rmSync(join(copy, 'baton-cli.js.cache'));
    assert.deepEqual(version(), expected);
  });
});
