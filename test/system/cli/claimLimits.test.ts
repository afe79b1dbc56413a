// Issue 15, item 17: `baton claim` obeys the limits driven workers obey — maxConcurrency, the
// `files:` overlap rule and the retry backoff — by the same rule (domain/admission.ts), and a
// driven coordinator plus external claimers together never hold more than maxConcurrency.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  resultText,
  runCli,
  spawnCli,
  STACK_FRAME,
  storeFingerprint,
  writeFile,
  type CliResult,
} from '../../support/cli';

const ATTEMPT_WORKER = resolve(__dirname, '../../fixtures/workers/attemptWorker.js');

function plan(tasks: Array<{ id: string; files?: string[] }>): string {
  return tasks
    .map((t) =>
      [
        '```baton-task',
        `id: ${t.id}`,
        'agent: coder',
        ...(t.files ? [`files: [${t.files.join(', ')}]`] : []),
        '```',
        '',
        `Do ${t.id}.`,
        '',
      ].join('\n'),
    )
    .join('\n');
}

interface ClaimJson {
  runId: string;
  delegationId: string;
  runtimeId: string;
  token: string;
  leaseExpiresAt: number;
}

interface RefusalJson {
  protocolVersion: number;
  error: { code: string; message: string; refusal: Record<string, unknown> };
}

describe('baton claim: the limits driven workers obey', function () {
  this.timeout(90_000);
  let ws: string | undefined;
  // A CLI process takes a while to start on a loaded machine; none of these should take long once it runs.
  const run = (args: string[], env?: Record<string, string>): Promise<CliResult> =>
    runCli(args, { cwd: ws!, timeoutMs: 60_000, ...(env ? { env } : {}) });
  before(() => ensureCliBuilt());
  afterEach(() => {
    removeWorkspace(ws);
    ws = undefined;
  });

  function workspace(planText: string, config: Record<string, unknown>): void {
    ws = makeWorkspace('baton-claim-limits-');
    writeFile(ws, 'plan.md', planText);
    writeFile(ws, '.baton/config.json', JSON.stringify(config));
  }

  /** A refused claim: exit 3, one readable line, no stack; --json gives the code and reason; the store unchanged. */
  async function refused(args: string[], code: string): Promise<{ line: string; json: RefusalJson }> {
    const before = storeFingerprint(ws!);
    const plain = await run(args);
    assert.equal(plain.code, 3, describeResult(plain));
    assert.equal(plain.stdout, '');
    assert.equal(plain.stderr.trim().split('\n').length, 1, plain.stderr);
    assert.doesNotMatch(plain.stderr, STACK_FRAME);
    const json = await run([...args, '--json']);
    assert.equal(json.code, 3, describeResult(json));
    const doc = json.json<RefusalJson>();
    assert.equal(doc.error.code, code);
    assert.deepEqual(storeFingerprint(ws!), before, 'a refused claim writes nothing');
    return { line: plain.stderr.trim(), json: doc };
  }

  it('maxConcurrency: a third claim with 2 of 2 running is refused (exit 3, claim.max-concurrency); once one ends it is granted', async () => {
    workspace(plan([{ id: 'T1' }, { id: 'T2' }, { id: 'T3' }]), { maxConcurrency: 2 });
    const claims: ClaimJson[] = [];
    for (const task of ['T1', 'T2']) {
      const r = await run(['claim', '--plan', 'plan.md', '--task', task, '--json']);
      assert.equal(r.code, 0, describeResult(r));
      claims.push(r.json<ClaimJson>());
    }
    const { line, json } = await refused(['claim', '--run', claims[0]!.runId, '--task', 'T3'], 'claim.max-concurrency');
    assert.equal(line, 'baton: 2 of 2 running (maxConcurrency): T1, T2; claim T3 again when one of them ends.');
    assert.deepEqual(json.error.refusal, {
      kind: 'concurrency',
      taskId: 'T3',
      running: 2,
      limit: 2,
      holders: ['T1', 'T2'],
    });

    writeFile(ws!, 'T1.md', resultText({ task: 'T1', agent: 'coder', status: 'PASS' }));
    const ingested = await run([
      'ingest',
      '--delegation',
      claims[0]!.delegationId,
      '--artifact',
      'T1.md',
      '--token',
      claims[0]!.token,
    ]);
    assert.equal(ingested.code, 0, describeResult(ingested));
    const third = await run(['claim', '--run', claims[0]!.runId, '--task', 'T3', '--json']);
    assert.equal(third.code, 0, describeResult(third));
    assert.equal(third.json<ClaimJson>().delegationId, 'D-T3-coder-001');
  });

  it('files: overlap: a task whose files overlap a claimed one is refused (claim.files-overlap) until that one is done; a task without overlap is granted', async () => {
    workspace(
      plan([
        { id: 'T1', files: ['src/**'] },
        { id: 'T2', files: ['src/b.ts'] },
        { id: 'T3', files: ['docs/**'] },
      ]),
      {},
    );
    const first = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--json']);
    assert.equal(first.code, 0, describeResult(first));
    const t1 = first.json<ClaimJson>();
    const { line, json } = await refused(['claim', '--run', t1.runId, '--task', 'T2'], 'claim.files-overlap');
    assert.equal(line, "baton: T2 overlaps T1's files (src/b.ts / src/**); claim it again when T1 is done.");
    assert.deepEqual(json.error.refusal, {
      kind: 'overlap',
      taskId: 'T2',
      otherTaskId: 'T1',
      globs: ['src/b.ts', 'src/**'],
    });
    const t3 = await run(['claim', '--run', t1.runId, '--task', 'T3']);
    assert.equal(t3.code, 0, describeResult(t3));

    writeFile(ws!, 'T1.md', resultText({ task: 'T1', agent: 'coder', status: 'FAIL' }));
    const failed = await run(['ingest', '--delegation', t1.delegationId, '--artifact', 'T1.md', '--token', t1.token]);
    assert.equal(failed.code, 0, describeResult(failed));
    const t2 = await run(['claim', '--run', t1.runId, '--task', 'T2']);
    assert.equal(t2.code, 0, `T1 is no longer in flight: ${describeResult(t2)}`);
  });

  it('retry backoff: the next attempt after a lease ran out is refused until the backoff ends (claim.retry-backoff, retryAt); the expiry itself is recorded', async function () {
    // The backoff outlasts the three CLI processes that must see it still running, even on a machine at load 10.
    this.timeout(240_000);
    workspace(plan([{ id: 'T1' }]), { retryBackoffSeconds: 60 });
    const first = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--lease-seconds', '1', '--json']);
    assert.equal(first.code, 0, describeResult(first));
    const claim = first.json<ClaimJson>();
    await new Promise((r) => setTimeout(r, Math.max(0, claim.leaseExpiresAt + 100 - Date.now())));

    // The first claim after the lease ran out makes the expiry official (STALE) and is refused by the backoff.
    const expired = await run(['claim', '--run', claim.runId, '--task', 'T1', '--json']);
    assert.equal(expired.code, 3, describeResult(expired));
    const doc = expired.json<RefusalJson>();
    assert.equal(doc.error.code, 'claim.retry-backoff');
    const retryAt = Date.parse(String(doc.error.refusal.retryAt));
    assert.ok(retryAt > Date.now(), `retryAt ${String(doc.error.refusal.retryAt)} is still to come`);
    assert.match(
      doc.error.message,
      /^T1 waits for its retry backoff until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ; claim it again then\.$/,
    );
    const queue = (await run(['queue', '--json'])).json<{ delegations: Array<{ id: string; status: string }> }>();
    assert.equal(queue.delegations.find((d) => d.id === claim.delegationId)?.status, 'STALE');

    // Refused again (nothing written), the same retry time: the backoff runs from the expiry, not from each claim.
    const again = await refused(['claim', '--run', claim.runId, '--task', 'T1'], 'claim.retry-backoff');
    assert.equal(again.json.error.refusal.retryAt, doc.error.refusal.retryAt);
    assert.match(again.line, /^baton: T1 waits for its retry backoff until /);

    await new Promise((r) => setTimeout(r, Math.max(0, retryAt + 100 - Date.now())));
    const granted = await run(['claim', '--run', claim.runId, '--task', 'T1', '--json']);
    assert.equal(granted.code, 0, describeResult(granted));
    assert.equal(granted.json<ClaimJson>().delegationId, 'D-T1-coder-002');
  });

  it('a driven coordinator (baton start) and external claimers together never hold more than maxConcurrency', async () => {
    const tasks = Array.from({ length: 8 }, (_, i) => ({ id: `T${i + 1}` }));
    workspace(plan(tasks), {
      maxConcurrency: 2,
      retryBackoffSeconds: 0,
      defaultWorker: 'slow',
      workers: { slow: { type: 'process', command: process.execPath, args: [ATTEMPT_WORKER, '{taskId}'] } },
    });
    const coordinator = spawnCli(['start', 'plan.md', '--json'], {
      cwd: ws!,
      env: { FAKE_DELAY_MS: '2500' },
    });
    const exited = new Promise<number | null>((r) => coordinator.on('exit', (code) => r(code)));
    let done = false;
    void exited.then(() => (done = true));
    try {
      // External workers keep trying to take the tasks the coordinator has not started. The coordinator's workers take
      // 2.5 s, and it fills a slot again as soon as one ends; a claimer holds its claim until a claim met the limit
      // (at most 8 s): with one slot held by a claimer and the other by the coordinator, the other claimer's tries meet
      // full slots, however slow a loaded machine makes each CLI process.
      const claimed: Array<{ runId: string; delegationId: string }> = [];
      const refusedCodes = new Set<string>();
      const claimer = async (): Promise<void> => {
        while (!done) {
          // From the last task back, while the coordinator dispatches from the first: they meet in the middle.
          for (const task of [...tasks].reverse()) {
            if (done) return;
            const r = await run(['claim', '--plan', 'plan.md', '--task', task.id, '--json']);
            if (r.code !== 0) {
              refusedCodes.add(r.json<{ error: { code: string } }>().error.code);
              continue;
            }
            const c = r.json<ClaimJson>();
            claimed.push({ runId: c.runId, delegationId: c.delegationId });
            const heldSince = Date.now();
            while (!refusedCodes.has('claim.max-concurrency') && Date.now() - heldSince < 8_000)
              await new Promise((res) => setTimeout(res, 100));
            await new Promise((res) => setTimeout(res, 500));
            writeFile(ws!, `${c.delegationId}.md`, resultText({ task: task.id, agent: 'coder', status: 'PASS' }));
            const ingested = await run([
              'ingest',
              '--delegation',
              c.delegationId,
              '--artifact',
              `${c.delegationId}.md`,
              '--token',
              c.token,
            ]);
            assert.equal(ingested.code, 0, describeResult(ingested));
          }
          await new Promise((res) => setTimeout(res, 50));
        }
      };
      await Promise.all([claimer(), claimer(), exited]);
      assert.equal(await exited, 0, 'the run completed');
      assert.ok(claimed.length > 0, 'external workers took some tasks');
      // The run both drove. A claim still on its way when that run completed starts a new run of the plan (as
      // `baton claim --plan` does once a plan's run is finished): that one is not the run under test.
      const runId = claimed[0]!.runId;
      const claimedInRun = claimed.filter((c) => c.runId === runId);

      // Every attempt's lease, claimed → ended, from the store: never more than 2 at once.
      const queue = (await run(['queue', '--run', runId, '--json'])).json<{
        runtimes: Array<{ id: string; claimedAt: number; endedAt?: number; holder?: string }>;
        delegations: Array<{ id: string; status: string }>;
      }>();
      const edges = queue.runtimes.flatMap((rt) => [
        { at: rt.claimedAt, d: +1 },
        { at: rt.endedAt ?? Infinity, d: -1 },
      ]);
      // An end and a claim at the same millisecond: the end came first (one transaction at a time).
      edges.sort((a, b) => a.at - b.at || a.d - b.d);
      let held = 0;
      let most = 0;
      for (const e of edges) {
        held += e.d;
        most = Math.max(most, held);
      }
      assert.ok(most <= 2, `at most 2 attempts held at once, saw ${most}`);
      assert.equal(most, 2, 'both slots were used');
      assert.ok(
        refusedCodes.has('claim.max-concurrency'),
        `some claims met the limit: ${[...refusedCodes].join(', ')}`,
      );
      assert.ok(claimedInRun.length < tasks.length, 'and the coordinator drove the others');
      assert.ok(
        queue.delegations.every((d) => d.status === 'COMPLETED'),
        JSON.stringify(queue.delegations.map((d) => `${d.id}:${d.status}`)),
      );
    } finally {
      if (!done) coordinator.kill('SIGKILL');
    }
  });
});
