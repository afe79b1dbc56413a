import assert from 'node:assert/strict';
import {
  ANSI_ESCAPE,
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
 * The by-hand flow of docs/cli.md ("Driving a run by hand"), one command per process, on
 * one workspace: each step starts from the state the previous step left.
 *
 * Plan: T1; T2 depends on T1 and carries risk [database] (a risk_approval gate);
 * T3 depends on T1; T4 is independent.
 */
describe('baton CLI: driving a run by hand', () => {
  let ws: string;
  const run = (args: string[], env?: Record<string, string>): Promise<CliResult> =>
    runCli(args, { cwd: ws, ...(env ? { env } : {}) });
  let claim: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  const task = async (id: string): Promise<{ status: string }> => {
    const r = await run(['status', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    const t = r.json().tasks.find((x: { id: string }) => x.id === id);
    assert.ok(t, `task ${id} in status --json`);
    return t;
  };

  before(() => {
    ensureCliBuilt();
    ws = makeWorkspace();
    writeFile(
      ws,
      'plan.md',
      planText([
        { id: 'T1', title: 'Write the schema notes', agent: 'coder' },
        { id: 'T2', title: 'Migrate the database', agent: 'coder', depends: ['T1'], risk: ['database'] },
        { id: 'T3', title: 'Document the API', agent: 'writer', depends: ['T1'] },
        { id: 'T4', title: 'Tidy the README', agent: 'writer' },
      ]),
    );
  });
  after(() => removeWorkspace(ws));

  it('claim --plan --task T1 --json starts the run and returns run, delegation D-T1-coder-001, runtime, token, epoch and lease (exit 0)', async () => {
    const before = Date.now();
    const r = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    claim = r.json();
    assert.equal(claim.protocolVersion, 1);
    assert.match(claim.runId, /^R-/);
    assert.equal(claim.runCreated, true);
    assert.equal(claim.delegationId, 'D-T1-coder-001');
    assert.equal(claim.taskId, 'T1');
    assert.equal(claim.attempt, 1);
    assert.match(claim.runtimeId, /\S/);
    assert.ok(typeof claim.token === 'string' && claim.token.length >= 16, 'a token long enough not to be guessed');
    assert.ok(Number.isInteger(claim.epoch) && claim.epoch >= 1);
    // the default lease is leaseSeconds (120) from the default config
    assert.ok(
      claim.leaseExpiresAt >= before + 110_000 && claim.leaseExpiresAt <= Date.now() + 121_000,
      `lease ends ~120 s from now: ${claim.leaseExpiresAt}`,
    );
  });

  it('claiming T1 again is an ownership conflict: exit 3, task.already-claimed', async () => {
    const r = await run(['claim', '--plan', 'plan.md', '--task', 'T1', '--json']);
    assert.equal(r.code, 3, describeResult(r));
    assert.equal(r.json().error.code, 'task.already-claimed');
  });

  it('claiming T3 before T1 completes is a plan mismatch: exit 4, task.dependencies-unmet', async () => {
    const r = await run(['claim', '--plan', 'plan.md', '--task', 'T3', '--json']);
    assert.equal(r.code, 4, describeResult(r));
    const doc = r.json();
    assert.equal(doc.error.code, 'task.dependencies-unmet');
    assert.match(doc.error.message, /T1/);
  });

  it('claiming T2 (risk: database) waits for a human: exit 8, task.gated, naming the gate to approve', async () => {
    const r = await run(['claim', '--plan', 'plan.md', '--task', 'T2']);
    assert.equal(r.code, 8, describeResult(r));
    assert.match(r.stderr, /^baton: Task T2 waits at gate G-1 \(risk_approval\).*baton approve G-1/);
    assert.equal(r.stdout, '');
  });

  it('heartbeat --runtime --token --progress exits 0, and status --json shows the progress with the runtime active', async () => {
    const r = await run([
      'heartbeat',
      '--runtime',
      claim.runtimeId,
      '--token',
      claim.token,
      '--progress',
      'schema notes half written',
      '--json',
    ]);
    assert.equal(r.code, 0, describeResult(r));
    assert.equal(r.json().runtime.heartbeatCount, 1);
    const s = await run(['status', '--json']);
    assert.equal(s.code, 0, describeResult(s));
    const runtime = s.json().runtimes.find((x: { id: string }) => x.id === claim.runtimeId);
    assert.equal(runtime?.status, 'active');
    assert.equal(runtime?.progress, 'schema notes half written');
    assert.equal(runtime?.heartbeatCount, 1);
  });

  it('heartbeat takes the runtime and token from BATON_RUNTIME_ID / BATON_RUNTIME_TOKEN', async () => {
    const r = await run(['heartbeat', '--progress', 'nearly there', '--json'], {
      BATON_RUNTIME_ID: claim.runtimeId,
      BATON_RUNTIME_TOKEN: claim.token,
    });
    assert.equal(r.code, 0, describeResult(r));
    const runtime = r.json().runtime;
    assert.equal(runtime.id, claim.runtimeId);
    assert.equal(runtime.heartbeatCount, 2);
    assert.equal(runtime.progress, 'nearly there');
  });

  it('a heartbeat with the wrong token is refused: exit 3, runtime.wrong-token, lease unchanged', async () => {
    const r = await run(['heartbeat', '--runtime', claim.runtimeId, '--token', 'not-the-token', '--json']);
    assert.equal(r.code, 3, describeResult(r));
    assert.equal(r.json().error.code, 'runtime.wrong-token');
    const s = (await run(['status', '--json'])).json();
    assert.equal(
      s.runtimes.find((x: { id: string }) => x.id === claim.runtimeId).heartbeatCount,
      2,
      'the refused heartbeat counted for nothing',
    );
  });

  it('ingest of a valid PASS artifact exits 0, completes T1 and makes T3 ready', async () => {
    writeFile(
      ws,
      'results/T1.md',
      resultText({ task: 'T1', agent: 'coder', status: 'PASS', summary: 'notes written' }),
    );
    const r = await run([
      'ingest',
      '--delegation',
      'D-T1-coder-001',
      '--artifact',
      'results/T1.md',
      '--token',
      claim.token,
      '--json',
    ]);
    assert.equal(r.code, 0, describeResult(r));
    const doc = r.json();
    assert.equal(doc.protocolVersion, 1);
    assert.equal(doc.record.accepted, true);
    assert.equal(doc.record.resultStatus, 'PASS');
    assert.equal(doc.duplicate, false);
    assert.deepEqual(doc.delegation, { id: 'D-T1-coder-001', status: 'COMPLETED', taskId: 'T1' });
    assert.equal((await task('T1')).status, 'completed');
    assert.equal((await task('T3')).status, 'ready');
    assert.equal((await task('T2')).status, 'gated', 'T2 still waits at its gate');
  });

  it('gates --json lists the open risk_approval gate G-1 for T2', async () => {
    const r = await run(['gates', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    const doc = r.json();
    assert.equal(doc.protocolVersion, 1);
    assert.equal(doc.gates.length, 1, JSON.stringify(doc.gates));
    assert.equal(doc.gates[0].id, 'G-1');
    assert.equal(doc.gates[0].kind, 'risk_approval');
    assert.equal(doc.gates[0].status, 'open');
    assert.equal(doc.gates[0].taskId, 'T2');
  });

  it('approve G-1 --note ok exits 0, records the note, and T2 (whose dependency is done) becomes ready', async () => {
    const r = await run(['approve', 'G-1', '--note', 'ok', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    const doc = r.json();
    assert.equal(doc.alreadyDecided, false);
    assert.equal(doc.gate.status, 'approved');
    assert.equal(doc.gate.note, 'ok');
    assert.equal((await task('T2')).status, 'ready');
    const open = (await run(['gates', '--json'])).json().gates;
    assert.deepEqual(open, [], 'no gate is open any more');
  });

  it('approving G-1 again is a no-op: exit 0, alreadyDecided true', async () => {
    const r = await run(['approve', 'G-1', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    const doc = r.json();
    assert.equal(doc.alreadyDecided, true);
    assert.equal(doc.gate.note, 'ok', 'the first decision stands');
    const human = await run(['approve', 'G-1']);
    assert.equal(human.code, 0, describeResult(human));
    assert.match(human.stdout, /already approved.*nothing changed/);
  });

  it('rejecting the already approved G-1 is an approval mismatch: exit 4, gate.already-decided', async () => {
    const r = await run(['reject', 'G-1', '--note', 'changed my mind', '--json']);
    assert.equal(r.code, 4, describeResult(r));
    assert.equal(r.json().error.code, 'gate.already-decided');
    assert.equal((await task('T2')).status, 'ready', 'the refused rejection changed nothing');
  });

  it('ingest for a COMPLETED delegation with different content is refused: exit 4, ingest.delegation-terminal', async () => {
    writeFile(
      ws,
      'results/T1-again.md',
      resultText({ task: 'T1', agent: 'coder', status: 'FAIL', preface: 'Second thoughts.' }),
    );
    const r = await run(['ingest', '--delegation', 'D-T1-coder-001', '--artifact', 'results/T1-again.md', '--json']);
    assert.equal(r.code, 4, describeResult(r));
    const doc = r.json();
    assert.equal(doc.protocolVersion, 1);
    assert.equal(doc.error.code, 'ingest.delegation-terminal');
    assert.ok(
      doc.error.issues?.some((i: { code: string }) => i.code === 'ingest.delegation-terminal'),
      JSON.stringify(doc.error),
    );
    assert.equal((await task('T1')).status, 'completed', 'a finished attempt is never reopened');
  });

  it("events --json returns the run's events in order of strictly increasing seq", async () => {
    const r = await run(['events', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    const doc = r.json();
    assert.equal(doc.protocolVersion, 1);
    assert.equal(doc.runId, claim.runId);
    const seqs: number[] = doc.events.map((e: { seq: number }) => e.seq);
    assert.ok(seqs.length >= 10, `the flow so far logged its steps: ${seqs.length} events`);
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, `seq increases: ${seqs.join(',')}`);
    const types = doc.events.map((e: { type: string }) => e.type);
    for (const t of ['run:created', 'gate:opened', 'delegation:claimed', 'ingestion:recorded', 'gate:decided'])
      assert.ok(types.includes(t), `${t} in ${types.join(', ')}`);
    const after = await run(['events', '--json', '--after', String(seqs[seqs.length - 3])]);
    assert.deepEqual(
      after.json().events.map((e: { seq: number }) => e.seq),
      seqs.slice(-2),
      '--after <seq> returns only the later events',
    );
  });

  it('human output (stdout not a TTY) is plain text: no ANSI escape codes from status, queue, gates, events, claim', async () => {
    const outputs = await Promise.all([
      run(['status']),
      run(['queue']),
      run(['gates', '--all']),
      run(['events']),
      run(['claim', '--plan', 'plan.md', '--task', 'T4']),
    ]);
    for (const r of outputs) {
      assert.equal(r.code, 0, describeResult(r));
      assert.ok(r.stdout.length > 0, describeResult(r));
      assert.doesNotMatch(r.stdout + r.stderr, ANSI_ESCAPE, describeResult(r));
    }
    const [status, queue, gates, , claimed] = outputs as [CliResult, CliResult, CliResult, CliResult, CliResult];
    assert.match(status.stdout, /^TASK +STATUS/m, 'status prints a plain table');
    assert.match(
      queue.stdout,
      /^DELEGATION +TASK/m,
      'queue prints a plain table (its width depends on the claim running beside it)',
    );
    assert.match(gates.stdout, /^G-1 +approved +risk_approval/m);
    assert.match(claimed.stdout, /Claimed D-T4-writer-001 \(task T4, attempt 1\)/);
  });
});
