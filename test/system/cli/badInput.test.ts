// Bad input gets one clear line (issue 15, item 18): a config nested 100,000 levels deep, a
// byte order mark in config.json, a reader that closes the pipe, files past the size limits,
// a FIFO handed in as an artifact.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLI,
  cleanEnv,
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  STACK_FRAME,
  storeFingerprint,
  writeFile,
  type CliResult,
} from '../../support/cli';

describe('baton CLI: bad input gets one clear line', function () {
  this.timeout(120_000);
  let ws: string;
  const run = (args: string[]): Promise<CliResult> => runCli(args, { cwd: ws });
  const oneLine = (r: CliResult, exit: number, message: RegExp): void => {
    assert.equal(r.code, exit, describeResult(r));
    assert.doesNotMatch(r.stdout + r.stderr, STACK_FRAME, describeResult(r));
    assert.match(r.stderr.split('\n')[0]!, message, describeResult(r));
  };

  before(() => ensureCliBuilt());
  beforeEach(() => {
    ws = makeWorkspace('baton-bad-input-');
    writeFile(ws, 'plan.md', planText([{ id: 'T1' }]));
  });
  afterEach(() => removeWorkspace(ws));

  it('a config nested 100,000 levels deep: exit 2 config.invalid (config.too-deep), no stack overflow, no store', async () => {
    writeFile(ws, '.baton/config.json', `{"workers":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    const claim = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--json']);
    assert.equal(claim.code, 2, describeResult(claim));
    assert.equal(claim.json().error.code, 'config.invalid');
    assert.equal(claim.json().error.issues[0].code, 'config.too-deep');
    const start = await run(['start', 'plan.md']);
    oneLine(start, 2, /^baton: .*config\.json is invalid\.$/);
    assert.match(start.stderr, /nest more than 32 levels deep/);
    const validate = await run(['validate', '.baton/config.json']);
    assert.equal(validate.code, 2, describeResult(validate));
    assert.doesNotMatch(validate.stderr + validate.stdout, STACK_FRAME);
    assert.equal(existsSync(join(ws, '.baton', 'store')), false);
  });

  it('a byte order mark in config.json is accepted, as in plans', async () => {
    writeFile(ws, '.baton/config.json', `\uFEFF${JSON.stringify({ leaseSeconds: 120 })}`);
    const validate = await run(['validate', '.baton/config.json']);
    assert.equal(validate.code, 0, describeResult(validate));
    const claim = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--json']);
    assert.equal(claim.code, 0, describeResult(claim));
  });

  it('a config over 256 KiB and a plan over 1 MiB are refused with one line, and nothing is stored', async () => {
    writeFile(ws, 'big.md', `${planText([{ id: 'T1' }])}\n${'words and more words\n'.repeat(60_000)}`);
    const plan = await run(['claim', '--plan', 'big.md', '--task', 'T1']);
    oneLine(plan, 2, /^baton: big\.md has 1 error/);
    assert.match(plan.stderr, /The plan is \d+ bytes; the limit is 1048576 bytes \(1 MiB\)/);
    const validate = await run(['validate', 'big.md', '--json']);
    assert.equal(validate.code, 2, describeResult(validate));
    assert.match(validate.stdout, /plan\.too-large/);
    assert.equal(existsSync(join(ws, '.baton', 'store')), false);

    writeFile(ws, '.baton/config.json', JSON.stringify({ leaseSeconds: 60, pad: 'x'.repeat(300 * 1024) }));
    const config = await run(['claim', '--plan', 'plan.md', '--task', 'T1']);
    oneLine(config, 2, /config\.json is invalid\.$/);
    assert.match(config.stderr, /The config is \d+ bytes; the limit is 262144 bytes \(256 KiB\)/);
    assert.equal(existsSync(join(ws, '.baton', 'store')), false);
  });

  it('baton status | head -c1: no EPIPE stack trace, the reader gets its byte', async () => {
    const claimed = await run(['claim', '--plan', 'plan.md', '--task', 'T1']);
    assert.equal(claimed.code, 0, describeResult(claimed));
    // Large enough output that the writer is still writing when head has gone.
    for (const args of ['status', 'diagnose', 'events', 'status --json']) {
      const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" ${args} | head -c1`], {
        cwd: ws,
        env: cleanEnv(),
        encoding: 'utf8',
      });
      assert.equal(r.stdout.length, 1, `${args}: ${r.stdout}`);
      assert.doesNotMatch(r.stderr, /EPIPE|STACK|^\s+at /m, `${args}: ${r.stderr}`);
    }
  });

  it('a FIFO given as an artifact: "not a regular file", exit 2, never opened (no hang), store unchanged', async () => {
    const claimed = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--json']);
    const delegation = claimed.json().delegationId as string;
    assert.equal(spawnSync('mkfifo', [join(ws, 'result.fifo')]).status, 0);
    const before = storeFingerprint(ws);
    const r = await run(['ingest', '--delegation', delegation, '--artifact', 'result.fifo']);
    oneLine(r, 2, /^baton: Cannot read the artifact .*result\.fifo: it is not a regular file\.$/);
    assert.doesNotMatch(r.stderr, /EISDIR/);
    assert.deepEqual(storeFingerprint(ws), before);
    const folder = await run(['ingest', '--delegation', delegation, '--artifact', '.']);
    oneLine(folder, 2, /: it is a folder\.$/);
  });

  it('an artifact over maxArtifactBytes or not UTF-8 text, from a file or stdin: one line, exit 2, store unchanged', async () => {
    writeFile(ws, '.baton/config.json', JSON.stringify({ maxArtifactBytes: 2048 }));
    const claimed = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--json']);
    const { delegationId, token } = claimed.json<{ delegationId: string; token: string }>();
    const before = storeFingerprint(ws);
    writeFile(ws, 'big.md', `# Result\n\n${'x'.repeat(4096)}\n`);
    const ingest = (artifact: string, input?: Buffer): Promise<CliResult> =>
      runCli(['ingest', '--delegation', delegationId, '--token', token, '--artifact', artifact], {
        cwd: ws,
        ...(input ? { input } : {}),
      });
    oneLine(await ingest('big.md'), 2, /^baton: big\.md: The artifact is 4107 bytes; this run's limit is 2048 bytes/);
    oneLine(
      await ingest('-', Buffer.alloc(3000, 0x78)),
      2,
      /^baton: <stdin>: The artifact is 3000 bytes; this run's limit is 2048 bytes/,
    );
    oneLine(
      await ingest('-', Buffer.from([0x23, 0xff, 0xfe, 0x0a])),
      2,
      /^baton: <stdin>: The artifact is not UTF-8 text/,
    );
    assert.deepEqual(storeFingerprint(ws), before);
    // An empty stdin is content too: an empty result, rejected by the contract (recorded, exit 4), not a hang.
    const empty = await ingest('-', Buffer.alloc(0));
    assert.equal(empty.code, 4, describeResult(empty));
  });
});
