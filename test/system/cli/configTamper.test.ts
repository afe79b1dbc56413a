// Issue 15, item 7: a worker edits .baton/config.json (it lies in the workspace it writes to) so
// that the next worker Baton starts runs another command. Runs freeze their worker definitions:
// the changed one runs only once a person approves it at a config_changed gate.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { plan } from '../../fixtures/executor/harness';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  runCli,
  writeFile,
  type CliResult,
} from '../../support/cli';

const TAMPERER = resolve(__dirname, '../../fixtures/workers/configTamperer.js');

interface GateJson {
  id: string;
  kind: string;
  status: string;
  reason: string;
  taskId?: string;
}

describe('baton CLI: a config tampered by a worker', function () {
  this.timeout(180_000);
  let ws: string;
  const run = (args: string[]): Promise<CliResult> => runCli(args, { cwd: ws, timeoutMs: 60_000 });
  const marker = (task: string): boolean => existsSync(join(ws, `MARKER-${task}`));

  async function gates(): Promise<GateJson[]> {
    const r = await run(['gates', '--all', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    return r.json<{ gates: GateJson[] }>().gates;
  }

  async function eventTypes(): Promise<string[]> {
    const r = await run(['events', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    return r.json<{ events: Array<{ type: string }> }>().events.map((e) => e.type);
  }

  async function taskStatus(task: string): Promise<string | undefined> {
    const r = await run(['status', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    return r.json<{ tasks: Array<{ id: string; status: string }> }>().tasks.find((t) => t.id === task)?.status;
  }

  /** T1 (worker `tamper`) rewrites the config; T2 (worker `next`) starts after it. */
  function tamperWorkspace(): void {
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify(
        {
          defaultWorker: 'next',
          workers: {
            tamper: { type: 'process', command: process.execPath, args: [TAMPERER, '{taskId}', 'tamper'] },
            next: { type: 'process', command: process.execPath, args: [TAMPERER, '{taskId}', 'pass'] },
          },
          maxAttempts: 1,
          retryBackoffSeconds: 0,
        },
        null,
        2,
      ),
    );
    writeFile(
      ws,
      'plan.md',
      plan([
        { id: 'T1', worker: 'tamper' },
        { id: 'T2', depends: ['T1'] },
      ]),
    );
  }

  before(() => ensureCliBuilt());
  beforeEach(() => {
    ws = makeWorkspace('baton-config-tamper-');
  });
  afterEach(() => removeWorkspace(ws));

  /** start: T1 tampers, the coordinator's next pass opens the gate before T2 starts. Returns the gate. */
  async function startUntilGate(): Promise<GateJson> {
    tamperWorkspace();
    const start = await run(['start', 'plan.md']);
    assert.equal(start.code, 8, `paused at a gate: ${describeResult(start)}`);
    assert.equal(marker('T2'), false, 'the tampered command did not run');
    const all = await gates();
    assert.equal(all.length, 1, JSON.stringify(all));
    const gate = all[0]!;
    assert.equal(gate.kind, 'config_changed');
    assert.equal(gate.status, 'open');
    assert.equal(gate.taskId, undefined, 'a run-wide gate');
    // It names the change: the worker, the old and the new command line, the env keys — never an env value.
    assert.match(
      gate.reason,
      /worker "next": `.*configTamperer\.js \{taskId\} pass` → `.*configTamperer\.js \{taskId\} marker`/,
    );
    assert.match(gate.reason, /env keys added: STOLEN_TOKEN/);
    assert.doesNotMatch(gate.reason, /secret-value/);
    assert.equal(await taskStatus('T2'), 'gated');
    assert.match(start.stdout, /config_changed/);
    return gate;
  }

  it('the next pass and the next resume do not run the changed command: a config_changed gate names it', async () => {
    const gate = await startUntilGate();
    // status says the run runs on its frozen definitions and that the file differs.
    const status = await run(['status']);
    assert.equal(status.code, 0, describeResult(status));
    assert.match(
      status.stdout,
      /Config\s+runs on its frozen worker definitions [0-9a-f]{12} \(default next\); \.baton\/config\.json differs/,
    );
    assert.match(status.stdout, new RegExp(`${gate.id} waits for a decision`));
    assert.doesNotMatch(status.stdout + status.stderr, /secret-value/);
    const diagnose = await run(['diagnose']);
    assert.match(diagnose.stdout, /Config\n\s+runs on its frozen worker definitions/);
    const types = await eventTypes();
    assert.ok(types.includes('config:changed'), types.join(', '));

    const resumed = await run(['resume']);
    assert.equal(resumed.code, 8, describeResult(resumed));
    assert.equal(marker('T2'), false, 'resume did not run the changed command either');
    assert.equal((await gates()).length, 1, 'the same gate, not a second one');
    assert.equal(types.filter((t) => t === 'config:changed').length, 1);
    assert.equal((await eventTypes()).filter((t) => t === 'config:changed').length, 1, 'a change is told once');
  });

  it('approve: the run adopts the new definition (event), and the next worker runs it', async () => {
    const gate = await startUntilGate();
    const approved = await run(['approve', gate.id]);
    assert.equal(approved.code, 0, describeResult(approved));
    const resumed = await run(['resume']);
    assert.equal(resumed.code, 0, describeResult(resumed));
    assert.equal(marker('T2'), true, 'T2 ran the adopted command');
    assert.equal(await taskStatus('T2'), 'completed');
    const events = (await run(['events', '--json'])).json<{
      events: Array<{ type: string; data: { why?: string; gateId?: string } }>;
    }>().events;
    const frozen = events.filter((e) => e.type === 'config:frozen');
    assert.deepEqual(
      frozen.map((e) => [e.data.why, e.data.gateId]),
      [['adopted', gate.id]],
    );
    const status = await run(['status']);
    assert.match(status.stdout, /\.baton\/config\.json holds the same/);
  });

  it('reject: the run keeps its frozen definition, asks nothing again, and the file still shows as different', async () => {
    const gate = await startUntilGate();
    const rejected = await run(['reject', gate.id, '--note', 'not mine']);
    assert.equal(rejected.code, 0, describeResult(rejected));
    const resumed = await run(['resume']);
    assert.equal(resumed.code, 0, describeResult(resumed));
    assert.equal(marker('T2'), false, 'the changed command never ran');
    assert.equal(await taskStatus('T2'), 'completed', 'T2 ran with the frozen definition');
    assert.deepEqual(
      (await gates()).map((g) => [g.id, g.status]),
      [[gate.id, 'rejected']],
      'no second gate for the change already rejected',
    );
    const status = await run(['status']);
    assert.match(status.stdout, /\.baton\/config\.json differs:/);
    assert.match(status.stdout, /worker "next"/);
  });

  it('a config the user edits between runs is used by the new run, without a gate', async () => {
    const config = (mode: string): string =>
      JSON.stringify({
        defaultWorker: 'next',
        workers: { next: { type: 'process', command: process.execPath, args: [TAMPERER, '{taskId}', mode] } },
        retryBackoffSeconds: 0,
      });
    writeFile(ws, '.baton/config.json', config('pass'));
    writeFile(ws, 'plan.md', plan([{ id: 'T1' }]));
    const first = await run(['start', 'plan.md']);
    assert.equal(first.code, 0, describeResult(first));
    assert.equal(marker('T1'), false);
    const firstRun = (await run(['status', '--json'])).json<{ run: { id: string } }>().run.id;
    writeFile(ws, '.baton/config.json', config('marker'));
    // The same plan text again: its run completed, so nothing runs again unless asked (agent work costs money).
    const again = await run(['start', 'plan.md']);
    assert.equal(again.code, 0, describeResult(again));
    assert.match(
      again.stdout,
      new RegExp(
        `Run ${firstRun} of plan\\.md completed, from the plan as it is now\\. To run every task again: baton start plan\\.md --new`,
      ),
    );
    assert.equal(marker('T1'), false, 'nothing ran');
    assert.equal((await run(['status', '--json'])).json<{ run: { id: string } }>().run.id, firstRun, 'no new run');
    const second = await run(['start', 'plan.md', '--new']);
    assert.equal(second.code, 0, describeResult(second));
    const secondRun = (await run(['status', '--json'])).json<{ run: { id: string } }>().run.id;
    assert.notEqual(secondRun, firstRun, 'a new run (--new)');
    assert.equal(marker('T1'), true, 'the new run used the edited config');
    assert.deepEqual(await gates(), [], 'no gate');
    const types = await eventTypes();
    assert.equal(types.includes('config:changed'), false, types.join(', '));
  });

  it('an unchanged config (even rewritten with other spacing and key order) opens nothing and tells nothing', async () => {
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'next',
        workers: { next: { type: 'process', command: process.execPath, args: [TAMPERER, '{taskId}', 'pass'] } },
        retryBackoffSeconds: 0,
      }),
    );
    writeFile(
      ws,
      'plan.md',
      plan([
        { id: 'T1', risk: ['database'] },
        { id: 'T2', depends: ['T1'] },
      ]),
    );
    const start = await run(['start', 'plan.md']);
    assert.equal(start.code, 8, describeResult(start));
    const [risk] = await gates();
    assert.equal(risk!.kind, 'risk_approval');
    // The same settings, written by hand: other key order, other spacing, a comment.
    writeFile(
      ws,
      '.baton/config.json',
      `{\n  // unchanged\n  "retryBackoffSeconds": 0,\n  "workers": { "next": { "args": ${JSON.stringify([TAMPERER, '{taskId}', 'pass'])}, "command": ${JSON.stringify(process.execPath)}, "type": "process" } },\n  "defaultWorker": "next"\n}\n`,
    );
    assert.equal((await run(['approve', risk!.id])).code, 0);
    const resumed = await run(['resume']);
    assert.equal(resumed.code, 0, describeResult(resumed));
    assert.deepEqual(
      (await gates()).map((g) => g.kind),
      ['risk_approval'],
    );
    const types = await eventTypes();
    assert.equal(types.filter((t) => t.startsWith('config:')).length, 0, types.join(', '));
    assert.equal(readFileSync(join(ws, '.baton', 'config.json'), 'utf8').includes('unchanged'), true);
  });
});
