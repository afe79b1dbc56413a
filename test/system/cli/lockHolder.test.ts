import { SCHEMA_VERSION } from '../../../src/engine/store/migrations';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  runCli,
  spawnCli,
  STACK_FRAME,
  storeFingerprint,
  writeFile,
} from '../../support/cli';
import { processesCarrying } from '../../support/processes';
import { config, killQuietly, plan, readTrace, waitFor } from '../../fixtures/executor/harness';

/** The state letter of /proc/<pid>/stat: T when stopped by a signal. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/**
 * Issue 15, item 11: a coordinator stopped (Ctrl-Z) while it holds the store's lock must not
 * lock everyone out. Reading commands answer from what is committed; writing ones say at once
 * who holds the lock and what to do, and write nothing; doing what they say works.
 */
describe('a coordinator stopped while it holds the store lock', function () {
  this.timeout(150_000);
  let workspace: string;
  let holder: ChildProcess | undefined;
  let holderExit: Promise<number | null>;
  const trace = (): string => join(workspace, 'trace.txt');
  const env = (): Record<string, string> => ({ FAKE_TRACE: trace(), FAKE_DELAY_MS: '1500' });
  before(() => ensureCliBuilt());
  beforeEach(async () => {
    workspace = makeWorkspace('baton-lockholder-');
    writeFile(workspace, '.baton/config.json', config());
    writeFile(workspace, 'plan.md', plan([{ id: 'A' }, { id: 'B', depends: ['A'] }]));
    // It stops itself inside a commit, after taking the lock, once its run is under way (Ctrl-Z at the wrong moment):
    // the locked commit after the new store's migrations (one commit each) and the one more that start makes for its
    // frozen-config and claim checks before its run exists.
    const skip = String(SCHEMA_VERSION + 1);
    holder = spawnCli(['start', 'plan.md'], {
      cwd: workspace,
      env: { ...env(), BATON_FAULT_POINT: 'commit:locked', BATON_FAULT_SIGNAL: 'SIGSTOP', BATON_FAULT_SKIP: skip },
    });
    holderExit = new Promise((resolve) => holder!.on('close', (code) => resolve(code)));
    await waitFor('the coordinator to stop holding the lock', () => processState(holder!.pid!) === 'T', 60_000);
  });
  afterEach(() => {
    holder?.kill('SIGCONT');
    holder?.kill('SIGKILL');
    for (const pid of processesCarrying(`BATON_WORKSPACE=${workspace}`)) killQuietly(pid, workspace);
    removeWorkspace(workspace);
  });

  it('status, diagnose and events still answer, and say who holds the lock', async () => {
    for (const args of [['status'], ['status', '--json'], ['diagnose'], ['events']]) {
      const r = await runCli(args, { cwd: workspace, timeoutMs: 60_000 });
      assert.equal(r.code, 0, `baton ${args.join(' ')}: ${describeResult(r)}`);
      assert.match(r.stderr, new RegExp(`locked by pid ${holder!.pid}\\b.*stopped`), describeResult(r));
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    }
    const view = (await runCli(['status', '--json'], { cwd: workspace, timeoutMs: 60_000 })).json<{
      run: { status: string };
    }>();
    assert.equal(view.run.status, 'running');
  });

  for (const args of [['stop', '--mode', 'immediate'], ['resume'], ['approve', 'G-1'], ['reconcile']]) {
    it(`baton ${args.join(' ')} is refused at once with exit 3, names the holder and what to do, and writes nothing`, async () => {
      const before = storeFingerprint(workspace);
      const r = await runCli(args, { cwd: workspace, timeoutMs: 60_000 });
      assert.equal(r.code, 3, describeResult(r));
      assert.doesNotMatch(
        r.stderr,
        /stayed locked/,
        'refused on seeing the stopped holder, not after the lock timeout',
      );
      assert.match(r.stderr, new RegExp(`pid ${holder!.pid}\\b.*stopped`));
      assert.match(r.stderr, new RegExp(`kill -CONT ${holder!.pid}`));
      assert.match(r.stderr, /baton resume/);
      assert.doesNotMatch(r.stderr, STACK_FRAME);
      assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
      assert.deepEqual(storeFingerprint(workspace), before, 'nothing written');
    });
  }

  it('continued (kill -CONT, as the message says), it finishes its run', async () => {
    holder!.kill('SIGCONT');
    assert.equal(await holderExit, 0);
    const view = (await runCli(['status', '--json'], { cwd: workspace, timeoutMs: 60_000 })).json<{
      run: { status: string };
    }>();
    assert.equal(view.run.status, 'completed');
  });

  it('ended (kill -KILL, as the message says), `baton resume` takes its run over and finishes it', async () => {
    holder!.kill('SIGKILL');
    await holderExit;
    const r = await runCli(['resume'], { cwd: workspace, env: env(), timeoutMs: 120_000 });
    assert.equal(r.code, 0, describeResult(r));
    const view = (await runCli(['status', '--json'], { cwd: workspace, timeoutMs: 60_000 })).json<{
      run: { status: string };
    }>();
    assert.equal(view.run.status, 'completed');
    const starts = readTrace(trace()).filter((l) => l.kind === 'start');
    assert.deepEqual(
      [...new Set(starts.map((s) => s.task))].sort(),
      ['A', 'B'],
      'every task ran (a task whose attempt was lost runs again)',
    );
  });
});
