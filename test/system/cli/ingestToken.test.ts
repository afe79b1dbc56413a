import assert from 'node:assert/strict';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  resultText,
  runCli,
  writeFile,
  type CliResult,
} from '../../support/cli';

/**
 * Issue 15, item 9: ingest for a RUNNING attempt under a live lease needs its runtime token;
 * a result after the lease ran out is refused like a late heartbeat. Plan: A, B, C independent.
 */
describe('baton ingest: only the holder of a live lease hands in its result', () => {
  let ws: string;
  const run = (args: string[], env?: Record<string, string>): Promise<CliResult> =>
    runCli(args, { cwd: ws, ...(env ? { env } : {}) });
  const claims: Record<string, { runtimeId: string; token: string; delegationId: string; leaseExpiresAt: number }> = {};
  /** How many ingestion:recorded events name the delegation (baton events prints one line per event). */
  const ingestions = async (delegationId: string): Promise<number> => {
    const r = await run(['events']);
    assert.equal(r.code, 0, describeResult(r));
    return r.stdout.split('\n').filter((l) => l.includes('ingestion:recorded') && l.includes(delegationId)).length;
  };
  const delegationStatus = async (id: string): Promise<string> =>
    (await run(['queue', '--json'])).json().delegations.find((d: { id: string }) => d.id === id)?.status;

  before(async () => {
    ensureCliBuilt();
    ws = makeWorkspace();
    writeFile(
      ws,
      'plan.md',
      planText([
        { id: 'A', agent: 'coder' },
        { id: 'B', agent: 'coder' },
        { id: 'C', agent: 'coder' },
      ]),
    );
    for (const [task, lease] of [
      ['A', '600'],
      ['B', '600'],
      ['C', '1'],
    ] as const) {
      const r = await run(['claim', '--plan', 'plan.md', '--task', task, '--lease-seconds', lease, '--json']);
      assert.equal(r.code, 0, describeResult(r));
      claims[task] = r.json();
      writeFile(ws, `results/${task}.md`, resultText({ task, agent: 'coder', status: 'PASS' }));
    }
  });
  after(() => removeWorkspace(ws));

  it('refuses a forged PASS without a token: exit 3, ingest.token-required, nothing recorded', async () => {
    const r = await run(['ingest', '--delegation', claims.A!.delegationId, '--artifact', 'results/A.md', '--json']);
    assert.equal(r.code, 3, describeResult(r));
    assert.equal(r.json().error.code, 'ingest.token-required');
    assert.match(r.json().error.message, /live lease .* only its worker can hand in its result/);
    const human = await run(['ingest', '--delegation', claims.A!.delegationId, '--artifact', 'results/A.md']);
    assert.equal(human.code, 3);
    assert.equal(human.stderr.trim().split('\n').length, 1, `one line: ${human.stderr}`);
    assert.doesNotMatch(human.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(await delegationStatus(claims.A!.delegationId), 'RUNNING');
    assert.equal(await ingestions(claims.A!.delegationId), 0);
  });

  it("refuses another attempt's token (a worker completing a task not its own): exit 3, runtime.wrong-token", async () => {
    const r = await run([
      'ingest',
      '--delegation',
      claims.A!.delegationId,
      '--artifact',
      'results/A.md',
      '--token',
      claims.B!.token,
      '--json',
    ]);
    assert.equal(r.code, 3, describeResult(r));
    assert.equal(r.json().error.code, 'runtime.wrong-token');
    // The same through the environment, as a Baton-started worker of B would have it.
    const env = await run(['ingest', '--delegation', claims.A!.delegationId, '--artifact', 'results/A.md', '--json'], {
      BATON_RUNTIME_TOKEN: claims.B!.token,
    });
    assert.equal(env.code, 3, describeResult(env));
    assert.equal(env.json().error.code, 'runtime.wrong-token');
    assert.equal(await delegationStatus(claims.A!.delegationId), 'RUNNING');
  });

  it('accepts the result with its own token, from --token or $BATON_RUNTIME_TOKEN', async () => {
    const a = await run(['ingest', '--delegation', claims.A!.delegationId, '--artifact', 'results/A.md', '--json'], {
      BATON_RUNTIME_TOKEN: claims.A!.token,
    });
    assert.equal(a.code, 0, describeResult(a));
    assert.equal(a.json().delegation.status, 'COMPLETED');
    const b = await run([
      'ingest',
      '--delegation',
      claims.B!.delegationId,
      '--artifact',
      'results/B.md',
      '--token',
      claims.B!.token,
      '--json',
    ]);
    assert.equal(b.code, 0, describeResult(b));
    assert.equal(b.json().delegation.status, 'COMPLETED');
  });

  it('refuses a result after the lease ran out, like a late heartbeat: exit 3, runtime.lease-expired, the attempt STALE', async () => {
    await new Promise((r) => setTimeout(r, Math.max(0, claims.C!.leaseExpiresAt + 200 - Date.now())));
    const r = await run([
      'ingest',
      '--delegation',
      claims.C!.delegationId,
      '--artifact',
      'results/C.md',
      '--token',
      claims.C!.token,
      '--json',
    ]);
    assert.equal(r.code, 3, describeResult(r));
    assert.equal(r.json().error.code, 'runtime.lease-expired');
    assert.equal(await delegationStatus(claims.C!.delegationId), 'STALE', 'the refusal made the expiry official');
    assert.equal(await ingestions(claims.C!.delegationId), 0);
  });
});
