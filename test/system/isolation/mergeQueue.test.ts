// The merge queue (issue 27; docs/isolation.md, "The merge queue"): a passed task's merged tree is verified before
// the target branch moves. Real git, real workers, real verify commands; the verify runs are counted in a file.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';
import { ChildCoordinator, coordinateWhenFree, plan, withWorkerEnv } from '../../fixtures/executor/harness';

const EDIT_WORKER = resolve(__dirname, '../../fixtures/workers/editWorker.js');

/** Requires the library and, where it is there, every caller of it: a caller of a renamed function fails. */
const CHECK_JS = `const fs = require('node:fs');
fs.appendFileSync(process.argv[2], process.cwd() + '\\n');
require('./lib.js');
for (const f of fs.readdirSync('.').filter((f) => f.startsWith('use'))) require('./' + f);
`;

describe('git isolation: the merge queue verifies the merged tree before the target moves', function () {
  // A hang detector: each test is a few seconds of git and node alone, several times that at load 10.
  this.timeout(180_000);
  let fixture: EngineFixture;
  let engine: Engine;
  const children: ChildCoordinator[] = [];
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await fixture.dispose();
  });

  /** A repository whose verify command needs both the library and its callers; the config and plan committed. */
  function repo(tasks: string[], counter: string, more: Record<string, unknown> = {}): string {
    const check = [process.execPath, 'check.js', counter];
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'edit',
        workers: {
          edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true },
        },
        retryBackoffSeconds: 0,
        maxConcurrency: 3,
        isolation: 'worktree',
        verifyIntegrated: [check],
        ...more,
      }),
    );
    // Each task verifies itself with the same command too: on the merged tree it runs once.
    fixture.write('plan.md', plan(tasks.map((id) => ({ id, verify: [check] }))));
    return initRepo(fixture.workspace, { 'lib.js': 'exports.greet = () => "hi";\n', 'check.js': CHECK_JS });
  }

  /** Where each verify run of `node check.js` ran: an attempt's worktree, or a merged tree (`….merged`). */
  function runs(counter: string): { own: number; merged: number } {
    const lines = existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : [];
    const merged = lines.filter((l) => l.endsWith('.merged')).length;
    return { own: lines.length - merged, merged };
  }

  async function drive(runId: string) {
    const taken = await engine.coordinate({
      runId,
      ...(process.env.BATON_TEST_LOG ? { log: (l: string) => console.log(l) } : {}),
    });
    assert.ok('coordinator' in taken, 'the lease is free');
    return taken.coordinator.run();
  }

  /** The repository, the engine and a run of the plan: where the verify runs are counted, and main's first commit. */
  async function begin(tasks: string[], more: Record<string, unknown> = {}) {
    const counter = join(fixture.workspace, '.baton', 'verify-runs.txt');
    const base = repo(tasks, counter, more);
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    return { counter, base, run };
  }

  /** A coordinator in a child process, SIGKILLed at `point` (BATON_FAULT_POINT). */
  async function killedAt(runId: string, env: Record<string, string>, point: string): Promise<void> {
    const child = new ChildCoordinator(
      fixture.workspace,
      runId,
      { leaseMs: 1000 },
      { ...env, BATON_FAULT_POINT: point },
    );
    children.push(child);
    const exit = await child.exited;
    assert.equal(
      exit.signal,
      'SIGKILL',
      `the coordinator died at ${point}: ${child.stderr} ${JSON.stringify(child.messages)}`,
    );
  }

  /** The next coordinator takes the run over once the lease is free and drives it to completion. */
  async function resumeToCompletion(runId: string, env: Record<string, string>): Promise<void> {
    await withWorkerEnv(env, async () => {
      const taken = await coordinateWhenFree(engine, runId);
      assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
    });
  }

  it('A renames greet, B and C call it: each passes alone, their merged trees fail — main stays at A, the gates name them and the command; approve integrates B, reject fails C', async () => {
    const { counter, base, run } = await begin(['A', 'B', 'C']);
    const release = join(fixture.workspace, '.baton', 'release');
    const env = {
      FAKE_EDITS: JSON.stringify({
        A: { 'lib.js': 'exports.hello = () => "hi";\n' },
        B: { 'use-b.js': 'require("./lib.js").greet();\n' },
        C: { 'use-c.js': 'require("./lib.js").greet();\n' },
      }),
      // B and C finish once A is on main: their merged trees are main with A's rename.
      FAKE_HOLD_B: release,
      FAKE_HOLD_C: release,
    };
    const outcome = await withWorkerEnv(env, async () => {
      const running = drive(run.id);
      for (
        let i = 0;
        (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'A')?.status !== 'integrated';
        i++
      ) {
        assert.ok(i < 6000, 'A integrates');
        await new Promise((r) => setTimeout(r, 20));
      }
      writeFileSync(release, '');
      return running;
    });
    assert.equal(outcome.kind, 'paused');
    const afterA = git(fixture.workspace, 'rev-parse', 'main');
    assert.notEqual(afterA, base);
    assert.equal(git(fixture.workspace, 'rev-parse', 'main~1'), base, 'A alone reached main');
    assert.deepEqual(runs(counter), { own: 3, merged: 3 }, 'each task once in its worktree, once merged');

    const gates = await engine.listGates({ runId: run.id, status: 'open' });
    assert.deepEqual(gates.map((g) => [g.kind, g.taskId]).sort(), [
      ['integration_failed', 'B'],
      ['integration_failed', 'C'],
    ]);
    const gateB = gates.find((g) => g.taskId === 'B')!;
    const gateC = gates.find((g) => g.taskId === 'C')!;
    assert.deepEqual(gateB.details.command, [process.execPath, 'check.js', counter]);
    assert.match(String(gateB.details.output), /greet is not a function/, 'the end of its output');
    assert.match(
      gateB.reason,
      /^B passed on its own, but its work merged with main \([0-9a-f]{10}; tree [0-9a-f]{10}\) fails: `.*check\.js .*` exited with 1 \(.*greet is not a function\)\. main did not move/,
    );
    assert.equal(gateB.details.targetHead, afterA);
    assert.equal(readFileSync(join(fixture.workspace, 'lib.js'), 'utf8'), 'exports.hello = () => "hi";\n');
    assert.equal(existsSync(join(fixture.workspace, 'use-b.js')), false, 'the working tree did not move either');
    const events = await engine.listEvents(run.id);
    const failed = events
      .filter((e) => e.type === 'integration:failed')
      .map((e) => e.data as { taskId: string; gateId: string });
    assert.deepEqual(failed.map((f) => f.gateId).sort(), [gateB.id, gateC.id].sort());
    assert.equal(events.filter((e) => e.type === 'integration:verified').length, 1, "A's merged tree passed");
    assert.ok(events.some((e) => e.type === 'integration:verifying' && (e.data as { taskId: string }).taskId === 'B'));
    assert.ok(
      events.some(
        (e) =>
          e.type === 'task:status' &&
          /^verifying merged: main \+ B \(tree [0-9a-f]{8}\)$/.test((e.data as { reason?: string }).reason ?? ''),
      ),
      'status and the Runs view say "verifying merged" while it runs',
    );
    const taskB = (await engine.overview(run.id)).tasks.find((t) => t.id === 'B')!;
    assert.equal(taskB.status, 'gated');
    const wtB = (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'B')!;
    assert.ok(existsSync(join(wtB.path, 'use-b.js')), "B's work is kept in its worktree");
    assert.equal(existsSync(`${wtB.path}.merged`), false, 'the scratch worktree is gone');

    await engine.decideGate({ gateId: gateB.id, decision: 'approved', note: 'I will fix the call next' });
    await engine.decideGate({ gateId: gateC.id, decision: 'rejected' });
    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'failed' });
    assert.equal(git(fixture.workspace, 'rev-parse', 'main~1'), afterA, 'B integrated on top of A');
    assert.equal(readFileSync(join(fixture.workspace, 'use-b.js'), 'utf8'), 'require("./lib.js").greet();\n');
    assert.equal(existsSync(join(fixture.workspace, 'use-c.js')), false, 'C was not integrated');
    assert.deepEqual(runs(counter), { own: 3, merged: 3 }, 'approving does not verify again');
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.tasks.map((t) => [t.id, t.status]),
      [
        ['A', 'completed'],
        ['B', 'completed'],
        ['C', 'failed'],
      ],
    );
    const approved = (await engine.listEvents(run.id)).find(
      (e) => e.type === 'integration:verified' && (e.data as { taskId: string }).taskId === 'B',
    )!;
    assert.equal((approved.data as { approvedAt?: string }).approvedAt, gateB.id, 'the approval is on record');
    const wtC = (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'C')!;
    assert.ok(existsSync(wtC.path), "C's work is kept for baton cleanup");
  });

  it('a message at the integration_failed gate sends B back to its agent: the next attempt starts from its commit, fixes the call, and integrates', async () => {
    const { run } = await begin(['A', 'B']);
    const release = join(fixture.workspace, '.baton', 'release');
    const env = {
      FAKE_EDITS: JSON.stringify({
        A: { 'lib.js': 'exports.hello = () => "hi";\n' },
        B: { 'use-b.js': 'require("./lib.js").greet();\n', 'notes-b.txt': 'written by the first attempt\n' },
      }),
      // The follow-up attempt changes only the call: the notes reach main only if it started from B's first commit.
      FAKE_FOLLOW_UP_EDITS: JSON.stringify({ B: { 'use-b.js': 'require("./lib.js").hello();\n' } }),
      FAKE_HOLD_B: release,
    };
    await withWorkerEnv(env, async () => {
      const running = drive(run.id);
      for (
        let i = 0;
        (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'A')?.status !== 'integrated';
        i++
      ) {
        assert.ok(i < 6000, 'A integrates');
        await new Promise((r) => setTimeout(r, 20));
      }
      writeFileSync(release, '');
      assert.equal((await running).kind, 'paused');
      const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
      assert.deepEqual([gate?.kind, gate?.taskId], ['integration_failed', 'B']);
      const afterA = git(fixture.workspace, 'rev-parse', 'main');

      const sent = await engine.sendFollowUp({
        runId: run.id,
        taskId: 'B',
        message: 'lib.js has hello now, not greet: call hello.',
        by: 'ann',
      });
      assert.equal(sent.action, 'send-back');
      assert.deepEqual(sent.sentBack, {
        delegationId: 'D-B-coder-001',
        gateId: gate!.id,
        gateKind: 'integration_failed',
      });
      const decided = (await engine.listGates({ runId: run.id })).find((g) => g.id === gate!.id)!;
      assert.deepEqual([decided.status, decided.note], ['rejected', `sent back to the agent (${sent.followUp.id})`]);

      assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
      assert.equal(git(fixture.workspace, 'rev-parse', 'main~1'), afterA, 'B integrated on top of A');
      assert.equal(readFileSync(join(fixture.workspace, 'use-b.js'), 'utf8'), 'require("./lib.js").hello();\n');
      assert.equal(
        readFileSync(join(fixture.workspace, 'notes-b.txt'), 'utf8'),
        'written by the first attempt\n',
        "the follow-up started from B's first commit, so its work came along",
      );
      const { delegations } = await engine.listDelegations(run.id);
      assert.deepEqual(
        delegations.filter((d) => d.taskId === 'B').map((d) => `${d.id} ${d.status}${d.followUp ? ' follow-up' : ''}`),
        ['D-B-coder-001 CANCELLED', 'D-B-coder-002 COMPLETED follow-up'],
      );
    });
  });

  it('a coordinator killed after the merged tree passed: the next one reuses the receipt on the same tree and integrates once', async () => {
    const { counter, base, run } = await begin(['A']);
    const env = { FAKE_EDITS: JSON.stringify({ A: { 'use-a.js': 'require("./lib.js").greet();\n' } }) };
    await killedAt(run.id, env, 'integration:merged-verified');
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base, 'nothing integrated yet');
    assert.deepEqual(runs(counter), { own: 1, merged: 1 });
    await engine.refresh();
    const wt = (await engine.listWorktrees(run.id))[0]!;
    assert.ok(existsSync(`${wt.path}.merged`), 'the scratch worktree was left behind');

    await resumeToCompletion(run.id, env);
    assert.deepEqual(runs(counter), { own: 1, merged: 1 }, 'the receipt on the same tree was reused');
    assert.equal(git(fixture.workspace, 'rev-list', '--merges', '--count', `${base}..main`), '1', 'integrated once');
    const events = await engine.listEvents(run.id);
    const verified = events.filter((e) => e.type === 'integration:verified').map((e) => e.data);
    assert.deepEqual(
      verified.map((d) => [(d as { ran: number }).ran, (d as { reused: number }).reused]),
      [[0, 1]],
      'after the crash: nothing ran, one receipt reused',
    );
    const tree = (verified[0] as { tree: string }).tree;
    assert.equal(git(fixture.workspace, 'rev-parse', 'main^{tree}'), tree, 'main has the tree that was verified');
    assert.equal(events.filter((e) => e.type === 'integration:done').length, 1);
    assert.equal(existsSync(`${wt.path}.merged`), false, 'the leftover scratch worktree is gone');
  });

  it('integrationBatch 3: A, B and C are merged and verified once; the batch fails, is split, A+B integrate from their receipt and C is gated as the culprit', async () => {
    const { counter, base, run } = await begin(['A', 'B', 'C'], { integrationBatch: 3 });
    const env = {
      FAKE_EDITS: JSON.stringify({
        A: { 'use-a.js': 'require("./lib.js").greet();\n' },
        B: { 'use-b.js': 'require("./lib.js").greet();\n' },
        // Passes alone (nothing calls greet on main), breaks the batch: A and B call it.
        C: { 'lib.js': 'exports.hello = () => "hi";\n' },
      }),
    };
    const outcome = await withWorkerEnv(env, () => drive(run.id));
    assert.equal(outcome.kind, 'paused');
    // The batch's tree (A+B+C) failed, its first half (A+B) passed and integrated from that receipt.
    assert.deepEqual(runs(counter), { own: 3, merged: 2 }, 'each task once in its worktree; two merged trees');
    assert.equal(git(fixture.workspace, 'rev-list', '--merges', '--count', `${base}..main`), '2', 'A and B merged');
    assert.ok(existsSync(join(fixture.workspace, 'use-a.js')) && existsSync(join(fixture.workspace, 'use-b.js')));
    assert.equal(readFileSync(join(fixture.workspace, 'lib.js'), 'utf8'), 'exports.greet = () => "hi";\n');

    const gates = await engine.listGates({ runId: run.id, status: 'open' });
    assert.deepEqual(
      gates.map((g) => [g.kind, g.taskId]),
      [['integration_failed', 'C']],
    );
    assert.deepEqual(gates[0]!.details.command, [process.execPath, 'check.js', counter]);
    assert.match(String(gates[0]!.details.output), /greet is not a function/);
    assert.deepEqual(gates[0]!.details.batch, ['A', 'B', 'C']);
    assert.equal(gates[0]!.details.targetHead, git(fixture.workspace, 'rev-parse', 'main'), 'named against A+B');

    const events = await engine.listEvents(run.id);
    const batchEvents = events
      .filter((e) => e.type.startsWith('integration:batch') || e.type === 'integration:verified')
      .map((e) => [e.type, e.data] as const);
    assert.deepEqual(
      batchEvents.map(([type, data]) => {
        const d = data as {
          taskIds?: string[];
          failed?: string[];
          next?: string[];
          batch?: string[];
          ran?: number;
          reused?: number;
        };
        return type === 'integration:batch-started'
          ? [type, d.taskIds]
          : type === 'integration:batch-split'
            ? [type, d.failed, d.next]
            : [type, d.batch, d.ran, d.reused];
      }),
      [
        ['integration:batch-started', ['A', 'B', 'C']],
        ['integration:batch-split', ['A', 'B', 'C'], ['A', 'B']],
        ['integration:verified', ['A', 'B'], 1, 0],
        ['integration:verified', ['A', 'B'], 0, 1],
      ],
      'one batch, split once; the passing half verified once and integrated from its receipt',
    );
    assert.equal(events.filter((e) => e.type === 'integration:done').length, 2);
    const reasons = events
      .filter((e) => e.type === 'task:status')
      .map((e) => (e.data as { reason?: string }).reason ?? '');
    // Whichever finished first waited for the others, still in flight (the Runs view's tooltip, `baton status`).
    assert.ok(reasons.some((r) => /^queued for integration: 1 of 3 waiting \(\w, \w still in flight\)$/.test(r)));
    assert.ok(reasons.some((r) => /^verifying merged: main \+ A, B, C \(tree [0-9a-f]{8}\)$/.test(r)));
    assert.deepEqual(
      (await engine.overview(run.id)).tasks.map((t) => [t.id, t.status]),
      [
        ['A', 'completed'],
        ['B', 'completed'],
        ['C', 'gated'],
      ],
    );
  });

  it('integrationBatch: a coordinator killed after the batch moved the target and before it recorded the tasks — the next one records each once, already on the target', async () => {
    const { counter, base, run } = await begin(['A', 'B'], { integrationBatch: 2 });
    const env = {
      FAKE_EDITS: JSON.stringify({
        A: { 'use-a.js': 'require("./lib.js").greet();\n' },
        B: { 'use-b.js': 'require("./lib.js").greet();\n' },
      }),
    };
    await killedAt(run.id, env, 'integration:batch-advanced');
    const moved = git(fixture.workspace, 'rev-parse', 'main');
    assert.equal(
      git(fixture.workspace, 'rev-list', '--merges', '--count', `${base}..main`),
      '2',
      'the batch moved main',
    );
    assert.deepEqual(runs(counter), { own: 2, merged: 1 }, 'the batch was verified once');

    await resumeToCompletion(run.id, env);
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), moved, 'nothing integrated twice');
    assert.deepEqual(runs(counter), { own: 2, merged: 1 }, 'nothing verified again');
    const done = (await engine.listEvents(run.id)).filter((e) => e.type === 'integration:done');
    assert.deepEqual(
      done.map((e) => [
        (e.data as { taskId: string }).taskId,
        (e.data as { alreadyOnTarget?: boolean }).alreadyOnTarget,
      ]),
      [
        ['A', true],
        ['B', true],
      ],
    );
  });
});
