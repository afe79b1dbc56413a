// The seeds' contracts where Baton differed (issue 27): a host written for the seed sdd-agent-platform runs as a
// process worker, an sdd-result's artifacts/… paths are the run's files, the exit codes of the task-executor seed's
// table, and a plan whose run completed is not run again by accident.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  ROOT,
  runCli,
  spawnCli,
  waitFor,
  writeFile,
  type CliResult,
} from '../../support/cli';
import { processesCarrying } from '../../support/processes';
import { killQuietly } from '../../fixtures/executor/harness';

/**
 * The host: test/fixtures/seeds/sddHost.js, written from the seed's host contract; or the seed's own fake host script
 * (its `fake-claude-host.mjs`), when $BATON_SEED_FAKE_HOST names a copy of it — it is not in this repository.
 */
const HOST = process.env.BATON_SEED_FAKE_HOST
  ? resolve(process.env.BATON_SEED_FAKE_HOST)
  : join(ROOT, 'test', 'fixtures', 'seeds', 'sddHost.js');
const SDD_WRITER = join(ROOT, 'test', 'fixtures', 'seeds', 'sddResultWriter.js');

/** The seed's test plan: one task, B1, for its implementer agent. */
const PLAN = [
  '# Plan',
  '',
  '```baton-task',
  'id: B1',
  'title: Build B1',
  'agent: implementer',
  '```',
  '',
  'Do B1.',
  '',
].join('\n');

interface StatusView {
  run: { id: string; status: string };
  tasks: Array<{ id: string; status: string }>;
  delegations: Array<{ id: string; status: string; resultStatus?: string }>;
  gates: Array<{ id: string; kind: string; status: string; reason: string }>;
}

describe("baton CLI: the seeds' contracts (issue 27)", function () {
  this.timeout(120_000);
  let ws: string;
  const run = (args: string[], env?: Record<string, string>): Promise<CliResult> =>
    runCli(args, { cwd: ws, timeoutMs: 90_000, ...(env ? { env } : {}) });
  const status = async (): Promise<StatusView> => {
    const r = await run(['status', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    return r.json<StatusView>();
  };
  const configure = (worker: Record<string, unknown>): void => {
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({ defaultWorker: 'w', workers: { w: { type: 'process', ...worker } }, retryBackoffSeconds: 0 }),
    );
  };

  before(() => ensureCliBuilt());
  beforeEach(() => {
    ws = makeWorkspace('baton-seeds-');
    writeFile(ws, 'plan.md', PLAN);
  });
  afterEach(() => removeWorkspace(ws));

  it("item 1: a host written for the seed runs unchanged as a process worker — the prompt's `Queue item id: <run>:<delegation>` line, its sdd-result on stdout, the run completed (exit 0)", async () => {
    // As the seed starts it: the prompt as its argument ({prompt}), the result printed on stdout.
    configure({ command: process.execPath, args: [HOST, '{prompt}'] });
    const started = await run(['start', 'plan.md']);
    assert.equal(started.code, 0, describeResult(started));
    const view = await status();
    assert.equal(view.run.status, 'completed', describeResult(started));
    assert.deepEqual(
      view.delegations.map((d) => [d.id, d.status, d.resultStatus]),
      [['D-B1-implementer-001', 'COMPLETED', 'PASS']],
    );
    const prompt = readFileSync(join(ws, '.baton', 'runs', view.run.id, 'prompts', 'D-B1-implementer-001.md'), 'utf8');
    assert.match(prompt, new RegExp(`^Queue item id: ${view.run.id}:D-B1-implementer-001$`, 'm'));
    // Its result lists itself by the seed's name, artifacts/implementer-B1.md: the result Baton took.
    const artifact = readFileSync(
      join(ws, '.baton', 'runs', view.run.id, 'artifacts', 'D-B1-implementer-001.md'),
      'utf8',
    );
    assert.match(artifact, /```sdd-result\n[\s\S]*- artifacts\/implementer-B1\.md\n```/);
  });

  describe("item 2: an sdd-result's artifacts/… paths are the run's files, as the seed resolves them", () => {
    it('a note the worker filed in .baton/runs/<run>/artifacts/ and listed as artifacts/<name> is found: completed, exit 0', async () => {
      configure({
        command: process.execPath,
        args: [SDD_WRITER, '{taskId}', 'implementer'],
        env: { SDD_WRITE: 'review-B1.md', SDD_LIST: 'implementer-B1.md,review-B1.md' },
      });
      const started = await run(['start', 'plan.md']);
      assert.equal(started.code, 0, describeResult(started));
      const view = await status();
      assert.equal(view.run.status, 'completed');
      assert.deepEqual(view.gates, []);
    });

    it("one the run's folder does not hold is missing there, though the workspace has artifacts/<name>: rejected, exit 8, the message names where it looked", async () => {
      writeFile(ws, 'artifacts/notes.md', 'a file of the workspace, not of the run\n');
      configure({
        command: process.execPath,
        args: [SDD_WRITER, '{taskId}', 'implementer'],
        env: { SDD_LIST: 'notes.md' },
      });
      const started = await run(['start', 'plan.md']);
      assert.equal(started.code, 8, describeResult(started));
      const view = await status();
      assert.deepEqual(
        view.gates.map((g) => [g.kind, g.status]),
        [['ingestion_failed', 'open']],
      );
      const gates = (await run(['gates', '--json'])).json<{ gates: Array<{ details?: unknown }> }>().gates;
      assert.match(
        JSON.stringify(gates),
        new RegExp(`result\\.artifact-missing[^}]*\\.baton/runs/${view.run.id}/artifacts/notes\\.md`),
      );
    });
  });

  describe("item 3: the exit codes of the task-executor seed's table", () => {
    const children: ChildProcess[] = [];
    afterEach(() => {
      for (const child of children.splice(0)) child.kill('SIGKILL');
      // A worker left by a failed test (its start killed before it could end it).
      for (const pid of processesCarrying(`BATON_WORKSPACE=${ws}`)) killQuietly(pid, ws);
    });

    /** `baton start plan.md` left running with a worker that waits, once its attempt runs. */
    async function startWaiting(): Promise<{ exited: Promise<number | null>; output: () => string }> {
      configure({ command: 'sh', args: ['-c', 'touch started.marker; exec sleep 60'] });
      const child = spawnCli(['start', 'plan.md'], { cwd: ws });
      children.push(child);
      let output = '';
      child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
      const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
      await waitFor(() => existsSync(join(ws, 'started.marker')), 'the attempt to start', 60_000);
      return { exited, output: () => output };
    }

    it('reconcile beside a live coordinator reports only and exits 3; the run it stops pauses, and its start exits 8', async () => {
      const driver = await startWaiting();
      const reconciled = await run(['reconcile']);
      assert.equal(reconciled.code, 3, describeResult(reconciled));
      assert.match(reconciled.stdout, /is driven by .*; reporting only, nothing changed\./);
      assert.match(reconciled.stdout, /^B1 +D-B1-implementer-001/m, 'the table is printed all the same');
      const json = await run(['reconcile', '--json']);
      assert.equal(json.code, 3, describeResult(json));
      assert.deepEqual([json.json().reportOnly, json.json().exitCode], [true, 3]);

      const stopped = await run(['stop', '--mode', 'immediate']);
      assert.equal(stopped.code, 0, describeResult(stopped));
      assert.equal(await driver.exited, 8, driver.output());
      assert.match(driver.output(), /Stopped\. Continue with: baton resume --run R-/);
      assert.equal((await status()).run.status, 'paused');
      // With no coordinator left, reconcile repairs what it can: 0.
      const alone = await run(['reconcile']);
      assert.equal(alone.code, 0, describeResult(alone));
    });

    it('an unknown run, task, task mapping or run state exits 4; input wrong in itself stays 2', async () => {
      configure({ command: process.execPath, args: [HOST, '{prompt}'] });
      // No run state at all: a workspace without a store.
      const none = await run(['diagnose', '--json']);
      assert.equal(none.code, 4, describeResult(none));
      assert.equal(none.json().error.code, 'run.unknown');
      const started = await run(['start', 'plan.md']);
      assert.equal(started.code, 0, describeResult(started));
      const refusals: Array<[string[], number, string]> = [
        [['status', '--run', 'R-nope'], 4, 'run.unknown'],
        [['claim', '--plan', 'plan.md', '--task', 'T9'], 4, 'task.unknown'],
        [['approve', 'G-99'], 4, 'gate.unknown'],
        [['replan', '--plan', 'plan.md', '--map', 'B1=T9'], 4, 'replan.invalid-mapping'],
        [['replan', '--plan', 'plan.md', '--map', 'B1'], 2, 'replan.bad-map'],
        [['start', 'plan.md', '--new', '--worker', 'nope'], 2, 'worker.unknown'],
      ];
      for (const [args, exit, code] of refusals) {
        const r = await run([...args, '--json']);
        assert.equal(r.code, exit, `${args.join(' ')}: ${describeResult(r)}`);
        assert.equal(r.json().error.code, code, `${args.join(' ')}: ${describeResult(r)}`);
      }
    });
  });

  it('item 4: start on a plan whose run completed from the same text starts nothing (--json: started false), exit 0; --new runs it again', async () => {
    configure({ command: process.execPath, args: [HOST, '{prompt}'] });
    const first = await run(['start', 'plan.md']);
    assert.equal(first.code, 0, describeResult(first));
    const completed = (await status()).run.id;
    const again = await run(['start', 'plan.md', '--json']);
    assert.equal(again.code, 0, describeResult(again));
    assert.deepEqual(again.json(), { protocolVersion: 1, runId: completed, status: 'completed', started: false });
    const view = await status();
    assert.equal(view.run.id, completed, 'no new run');
    assert.equal(view.delegations.length, 1, 'no attempt again');
    const fresh = await run(['start', 'plan.md', '--new']);
    assert.equal(fresh.code, 0, describeResult(fresh));
    assert.notEqual((await status()).run.id, completed);
  });
});
