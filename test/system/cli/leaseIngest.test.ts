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

/** Stale leases and rejected results through the built CLI. Plan: A and B, independent. */
describe('baton CLI: stale leases and result ingestion', () => {
  let ws: string;
  const run = (args: string[]): Promise<CliResult> => runCli(args, { cwd: ws });

  before(() => {
    ensureCliBuilt();
    ws = makeWorkspace();
    writeFile(
      ws,
      'plan.md',
      planText([
        { id: 'A', agent: 'coder' },
        { id: 'B', agent: 'writer' },
      ]),
    );
    // A claim obeys the retry backoff (docs/cli.md, `baton claim`): the retry below is claimed at once.
    writeFile(ws, '.baton/config.json', JSON.stringify({ retryBackoffSeconds: 0 }));
  });
  after(() => removeWorkspace(ws));

  describe('a lease that runs out', () => {
    let claim: { runtimeId: string; token: string; delegationId: string; epoch: number; leaseExpiresAt: number };

    it('shows the runtime as stale in queue --json once the lease has run out, the delegation still RUNNING', async () => {
      const r = await run(['claim', '--plan', 'plan.md', '--task', 'A', '--lease-seconds', '1', '--json']);
      assert.equal(r.code, 0, describeResult(r));
      claim = r.json();
      assert.equal(claim.delegationId, 'D-A-coder-001');
      const fresh = (await run(['queue', '--json'])).json();
      if (fresh.now < claim.leaseExpiresAt) {
        assert.equal(
          fresh.runtimes.find((x: { id: string }) => x.id === claim.runtimeId)?.status,
          'claimed',
          'not stale while the lease holds',
        );
      }
      // ~1.2 s after the claim: past the 1 s lease
      await new Promise((r) => setTimeout(r, Math.max(0, claim.leaseExpiresAt + 200 - Date.now())));
      const q = await run(['queue', '--json']);
      assert.equal(q.code, 0, describeResult(q));
      const doc = q.json();
      assert.equal(doc.protocolVersion, 1);
      assert.equal(doc.runtimes.find((x: { id: string }) => x.id === claim.runtimeId)?.status, 'stale');
      assert.equal(doc.delegations.find((d: { id: string }) => d.id === claim.delegationId)?.status, 'RUNNING');
    });

    it('refuses a late heartbeat with exit 3 and the JSON error document {protocolVersion, error: {code: runtime.lease-expired, message}}', async () => {
      const r = await run([
        'heartbeat',
        '--runtime',
        claim.runtimeId,
        '--token',
        claim.token,
        '--progress',
        'too late',
        '--json',
      ]);
      assert.equal(r.code, 3, describeResult(r));
      const doc = r.json();
      assert.equal(doc.protocolVersion, 1);
      assert.equal(doc.error.code, 'runtime.lease-expired');
      assert.equal(typeof doc.error.message, 'string');
      assert.match(doc.error.message, /STALE/);
      const q = (await run(['queue', '--json'])).json();
      assert.equal(
        q.delegations.find((d: { id: string }) => d.id === claim.delegationId)?.status,
        'STALE',
        'the refused heartbeat made the expiry official',
      );
    });

    it('claiming the task again gives attempt 002', async () => {
      const r = await run(['claim', '--plan', 'plan.md', '--task', 'A', '--json']);
      assert.equal(r.code, 0, describeResult(r));
      const doc = r.json();
      assert.equal(doc.runCreated, false);
      assert.equal(doc.delegationId, 'D-A-coder-002');
      assert.equal(doc.attempt, 2);
      assert.notEqual(doc.runtimeId, claim.runtimeId);
      assert.ok(doc.epoch > claim.epoch, 'a new lease has a newer epoch');
    });
  });

  describe('an invalid result artifact', () => {
    let firstRecordId: string;
    let token: string;

    before(async () => {
      const r = await run(['claim', '--plan', 'plan.md', '--task', 'B', '--json']);
      assert.equal(r.code, 0, describeResult(r));
      token = r.json().token;
      assert.equal(r.json().delegationId, 'D-B-writer-001');
      writeFile(ws, 'results/B.md', resultText({ task: 'A', agent: 'writer', status: 'DONE' }));
    });

    it('with the wrong task id and status DONE exits 4; the record is not accepted and every issue has a range', async () => {
      const r = await run([
        'ingest',
        '--delegation',
        'D-B-writer-001',
        '--artifact',
        'results/B.md',
        '--token',
        token,
        '--json',
      ]);
      assert.equal(r.code, 4, describeResult(r));
      const doc = r.json();
      assert.equal(doc.protocolVersion, 1);
      assert.equal(doc.record.accepted, false);
      assert.equal(doc.duplicate, false);
      const codes = doc.record.issues.map((i: { code: string }) => i.code).sort();
      assert.deepEqual(codes, ['result.invalid-status', 'result.task-mismatch']);
      for (const i of doc.record.issues)
        assert.ok(i.range?.start.line >= 1 && i.range.start.column >= 1, `ranged: ${JSON.stringify(i)}`);
      // the block starts at line 5 of the artifact: task on 7, status on 9
      assert.equal(
        doc.record.issues.find((i: { code: string }) => i.code === 'result.task-mismatch').range.start.line,
        7,
      );
      assert.equal(
        doc.record.issues.find((i: { code: string }) => i.code === 'result.invalid-status').range.start.line,
        9,
      );
      assert.equal(doc.delegation.status, 'BLOCKED');
      firstRecordId = doc.record.id;
    });

    it('blocks the delegation behind an open ingestion_failed gate', async () => {
      const gates = (await run(['gates', '--json'])).json().gates;
      const gate = gates.find((g: { kind: string }) => g.kind === 'ingestion_failed');
      assert.ok(gate, JSON.stringify(gates));
      assert.equal(gate.status, 'open');
      assert.equal(gate.taskId, 'B');
      const q = (await run(['queue', '--json'])).json();
      assert.equal(q.delegations.find((d: { id: string }) => d.id === 'D-B-writer-001')?.status, 'BLOCKED');
    });

    it('prints the issues as file:line:col lines in human output, and ingesting the same file again returns the same record with duplicate true', async () => {
      const human = await run(['ingest', '--delegation', 'D-B-writer-001', '--artifact', 'results/B.md']);
      assert.equal(human.code, 4, describeResult(human));
      assert.match(human.stdout, /^results\/B\.md:7:\d+: error result\.task-mismatch: /m);
      assert.match(human.stdout, /already ingested/);
      const again = await run(['ingest', '--delegation', 'D-B-writer-001', '--artifact', 'results/B.md', '--json']);
      assert.equal(again.code, 4, describeResult(again));
      const doc = again.json();
      assert.equal(doc.duplicate, true);
      assert.equal(doc.record.id, firstRecordId);
      const gates = (await run(['gates', '--json'])).json().gates;
      assert.equal(
        gates.filter((g: { kind: string }) => g.kind === 'ingestion_failed').length,
        1,
        'still one gate, not one per attempt to ingest',
      );
    });

    it('a corrected artifact completes the delegation and closes the ingestion_failed gate', async () => {
      writeFile(
        ws,
        'results/B.md',
        resultText({ task: 'B', agent: 'writer', status: 'PASS', summary: 'README tidied' }),
      );
      const r = await run(['ingest', '--delegation', 'D-B-writer-001', '--artifact', 'results/B.md', '--json']);
      assert.equal(r.code, 0, describeResult(r));
      const doc = r.json();
      assert.equal(doc.record.accepted, true);
      assert.notEqual(doc.record.id, firstRecordId);
      assert.equal(doc.delegation.status, 'COMPLETED');
      const open = (await run(['gates', '--json'])).json().gates;
      assert.deepEqual(open, [], 'the ingestion_failed gate is resolved');
    });
  });

  describe('an artifact of an earlier run of the plan', () => {
    let ws2: string;
    const run2 = (args: string[]): Promise<CliResult> => runCli(args, { cwd: ws2 });
    let firstRun = '';
    let secondRun = '';
    let secondToken = '';

    before(async () => {
      ws2 = makeWorkspace();
      writeFile(ws2, 'plan.md', planText([{ id: 'A', agent: 'coder' }]));
      const first = await run2(['claim', '--plan', 'plan.md', '--task', 'A', '--json']);
      assert.equal(first.code, 0, describeResult(first));
      firstRun = first.json().runId;
      const artifact = `.baton/runs/${firstRun}/artifacts/D-A-coder-001.md`;
      writeFile(ws2, artifact, resultText({ task: 'A', agent: 'coder', status: 'PASS' }));
      const token = ['--token', first.json().token as string];
      const done = await run2(['ingest', '--delegation', 'D-A-coder-001', '--artifact', artifact, ...token, '--json']);
      assert.equal(done.code, 0, describeResult(done));
      // The first run is completed: claiming the task again starts a second run, with its own D-A-coder-001.
      const second = await run2(['claim', '--plan', 'plan.md', '--task', 'A', '--json']);
      assert.equal(second.code, 0, describeResult(second));
      secondRun = second.json().runId;
      secondToken = second.json().token as string;
      assert.notEqual(secondRun, firstRun);
      assert.equal(second.json().delegationId, 'D-A-coder-001');
    });
    after(() => removeWorkspace(ws2));

    it('is refused (exit 4, ingest.artifact-of-other-run) for the newest run’s delegation of the same id, in one line naming both runs; that attempt stays RUNNING', async () => {
      const artifact = `.baton/runs/${firstRun}/artifacts/D-A-coder-001.md`;
      // Handed in with the new attempt's own token (its worker, say): still not its result.
      const token = ['--token', secondToken];
      const human = await run2(['ingest', '--delegation', 'D-A-coder-001', '--artifact', artifact, ...token]);
      assert.equal(human.code, 4, describeResult(human));
      const lines = human.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line: ${human.stderr}`);
      assert.match(lines[0]!, new RegExp(`belongs to run ${firstRun}, not to run ${secondRun}`));
      assert.doesNotMatch(human.stderr, /\bat .*\.(js|ts):\d+/, 'no stack trace');
      const json = await run2(['ingest', '--delegation', 'D-A-coder-001', '--artifact', artifact, ...token, '--json']);
      assert.equal(json.code, 4, describeResult(json));
      assert.equal(json.json().error.code, 'ingest.artifact-of-other-run');
      const queue = (await run2(['queue', '--run', secondRun, '--json'])).json();
      assert.equal(queue.delegations.find((d: { id: string }) => d.id === 'D-A-coder-001')?.status, 'RUNNING');
    });
  });
});
