import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { makeTempDir } from '../../support/tempDir';
import { plan, withWorkerEnv } from '../../fixtures/executor/harness';
import {
  fifoWhileRunning,
  hostileRepository,
  plantedStoreLinks,
  replacedLogs,
  stolenToken,
} from '../../reliability/boundaryRows';

const PLANTER = resolve(__dirname, '../../fixtures/workers/linkPlanter.js');

interface Trap {
  at: string;
  kind: 'link' | 'hardlink' | 'fifo';
  to?: string;
}

/**
 * Issue 15, item 6: a worker plants links where Baton writes the next task's files under
 * .baton/runs/<run>/. Baton must refuse to write through them (workspace.link-refused), fail
 * the attempt with that reason, and write nothing outside the workspace.
 */
describe('planted links under .baton/runs: Baton writes nothing through them', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let outside: string;
  let victim: string;
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
    outside = makeTempDir('baton-outside-');
    victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'precious\n');
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  /** T1 plants the traps, then T2 runs (its worker in `mode`); returns T2's attempt. */
  async function runAfterTraps(traps: Trap[], mode: 'pass' | 'stdout' = 'pass', verify?: string[][]) {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'next',
        workers: {
          planter: { type: 'process', command: process.execPath, args: [PLANTER, '{taskId}', 'plant'] },
          next: { type: 'process', command: process.execPath, args: [PLANTER, '{taskId}', mode] },
        },
        maxAttempts: 1,
        retryBackoffSeconds: 0,
      }),
    );
    fixture.write(
      'plan.md',
      plan([
        { id: 'T1', worker: 'planter' },
        { id: 'T2', depends: ['T1'], ...(verify ? { verify } : {}) },
      ]),
    );
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv({ PLANT: JSON.stringify(traps) }, async () => {
      const taken = await engine.coordinate({ runId: run.id });
      assert.ok('coordinator' in taken);
      return taken.coordinator.run();
    });
    const view = await engine.overview(run.id);
    const t1 = view.delegations.find((d) => d.taskId === 'T1')!;
    assert.equal(t1.status, 'COMPLETED', 'the planting task itself completed');
    return { outcome, t2: view.delegations.find((d) => d.taskId === 'T2')!, view };
  }

  function assertVictimUntouched(): void {
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n', 'the file outside the workspace is unchanged');
    assert.deepEqual(readdirSync(outside), ['victim.txt'], 'nothing was created outside the workspace');
  }

  it("refuses the next task's prompt when its path is a link out of the workspace", async () => {
    const { outcome, t2 } = await runAfterTraps([{ at: 'prompts/D-T2-coder-001.md', kind: 'link', to: victim }]);
    assert.deepEqual(outcome, { kind: 'finished', status: 'failed' });
    assert.equal(t2.status, 'FAILED');
    assert.match(t2.reason ?? '', /Refused to write .*prompts\/D-T2-coder-001\.md: it is a link/);
    assertVictimUntouched();
  });

  it("refuses the next task's log when its path is a link out of the workspace", async () => {
    const { t2 } = await runAfterTraps([{ at: 'logs/D-T2-coder-001.log', kind: 'link', to: victim }]);
    assert.equal(t2.status, 'FAILED');
    assert.match(t2.reason ?? '', /Refused to write .*logs\/D-T2-coder-001\.log: it is a link/);
    assertVictimUntouched();
  });

  it('refuses a log that is a hard link to a file outside the workspace', async () => {
    const { t2 } = await runAfterTraps([{ at: 'logs/D-T2-coder-001.log', kind: 'hardlink', to: victim }]);
    assert.equal(t2.status, 'FAILED');
    assert.match(t2.reason ?? '', /logs\/D-T2-coder-001\.log: it has another hard link/);
    assertVictimUntouched();
  });

  it('refuses when a folder under .baton/runs/<run>/ was replaced by a link to a folder outside', async () => {
    const { t2 } = await runAfterTraps([{ at: 'prompts', kind: 'link', to: outside }]);
    assert.equal(t2.status, 'FAILED');
    assert.match(t2.reason ?? '', /Refused to write .*\/prompts: it is a link/);
    assertVictimUntouched();
  });

  it('refuses a FIFO planted at the prompt path instead of hanging on it', async () => {
    const { t2 } = await runAfterTraps([{ at: 'prompts/D-T2-coder-001.md', kind: 'fifo' }]);
    assert.equal(t2.status, 'FAILED');
    assert.match(t2.reason ?? '', /prompts\/D-T2-coder-001\.md: it is (a link or )?not a (regular )?file/);
    assertVictimUntouched();
  });

  it("refuses the copy of a worker's printed result when the artifact path is a link out (dangling)", async () => {
    const target = join(outside, 'created.md');
    const { t2 } = await runAfterTraps([{ at: 'artifacts/D-T2-coder-001.md', kind: 'link', to: target }], 'stdout');
    assert.equal(t2.status, 'FAILED');
    assert.match(t2.reason ?? '', /Refused to write .*artifacts\/D-T2-coder-001\.md: it is a link/);
    assert.equal(existsSync(target), false, 'the link target was not created');
    assertVictimUntouched();
  });

  it('a worker that replaced its own log with a FIFO or a link to /dev/zero and printed its result: the run ends, the coordinator stays small', async () => {
    // Items 3.1, 3.2: on main the first hangs the coordinator in open(2), the second grows it until it is killed.
    assert.deepEqual(await replacedLogs(), []);
  });

  it('refuses the verification log when its path is a link; the task does not complete', async () => {
    const { outcome, view } = await runAfterTraps(
      [{ at: 'logs/D-T2-coder-001.verify.log', kind: 'link', to: victim }],
      'pass',
      [[process.execPath, '-e', 'console.log("verified")']],
    );
    assert.notDeepEqual(outcome, { kind: 'finished', status: 'completed' });
    assert.notEqual(view.tasks.find((t) => t.id === 'T2')!.status, 'completed');
    assertVictimUntouched();
  });
});

/**
 * Issue 25, item 3.3: a Claude Code worker replaces its log — the stream its coordinator follows — with a FIFO while it
 * runs. The scenario is row H16's (test/reliability/boundaryRows.ts, fifoWhileRunning); item 3.4, the heartbeat relay
 * on PostgreSQL, is in test/system/cli/postgresStore.test.ts.
 */
describe('a worker that replaces the file its coordinator follows with a FIFO while it runs', function () {
  this.timeout(150_000);
  it("a Claude Code worker's log (its stream): `baton start` ends the run, the attempt failed without a result", async () => {
    // Item 3.3: before a3ed031 the stream follower's open(2) blocked on the FIFO and `baton start` never ended.
    assert.deepEqual(await fifoWhileRunning('stream'), []);
  });
});

describe("a hostile shared .git: Baton's git runs no planted program and writes only where it means to", function () {
  this.timeout(90_000);
  it('hooks, core.fsmonitor and a foreign core.worktree planted from a worktree: none runs, nothing lands outside, both tasks integrate', async () => {
    assert.deepEqual(await hostileRepository(), []);
  });
});

/**
 * Issue 25, items 2.1–2.4: links planted where Baton writes under .baton/store/, .baton/worktrees/ and .git/info/.
 * The scenario is row H11's (test/reliability/boundaryRows.ts, plantedStoreLinks).
 */
describe('planted links under .baton/store, .baton/worktrees and .git/info: nothing written or deleted through', function () {
  this.timeout(60_000);
  it('snapshot temp and checksum links, a journal.mark link, an info/exclude link, a linked worktrees/<run>', async () => {
    await plantedStoreLinks();
  });
});

describe("a runtime token read from another worker's environment: not the reader's to use", function () {
  this.timeout(90_000);
  it("T1's worker hands in a forged PASS for T2 with T2's token: refused; T2's own hand-in with it is taken", async () => {
    // Item 2.7: on main the forged PASS is accepted and T2 completes with it.
    assert.deepEqual(await stolenToken(), []);
  });
});
