// Issue 15, item 17, in-process: a claim obeys the run's slots, the files: overlap and the retry
// backoff (domain/admission.ts), writes nothing when refused, and the backoff runs from the
// expiry, not from each refused claim. The CLI side: test/system/cli/claimLimits.test.ts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError, type Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';

const storeBytes = (workspace: string): Record<string, string> => {
  const dir = join(workspace, '.baton', 'store');
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n)).toString('base64')]));
};

function plan(tasks: Array<{ id: string; files?: string[] }>): string {
  return tasks
    .map(
      (t) =>
        `\`\`\`baton-task\nid: ${t.id}\nagent: coder\n${t.files ? `files: [${t.files.join(', ')}]\n` : ''}\`\`\`\nDo ${t.id}.\n`,
    )
    .join('\n');
}

describe('engine: a claim obeys the limits driven workers obey', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  afterEach(() => fixture.dispose());

  async function open(planText: string, config: Record<string, unknown>): Promise<void> {
    fixture = new EngineFixture();
    fixture.write('plan.md', planText);
    fixture.write('.baton/config.json', JSON.stringify(config));
    engine = await fixture.open();
  }

  const refusal = (code: string) => (err: unknown) => {
    assert.ok(BatonError.is(err), String(err));
    assert.equal(err.code, code, err.message);
    assert.equal(err.kind, 'conflict');
    return true;
  };

  it('maxConcurrency: refused while the run holds as many attempts, nothing written; a hand-off of a result frees a slot', async () => {
    await open(plan([{ id: 'A' }, { id: 'B' }, { id: 'C' }]), { maxConcurrency: 2 });
    const a = await engine.claimTask({ planPath: 'plan.md', taskId: 'A' });
    await engine.claimTask({ runId: a.runId, taskId: 'B' });
    const before = storeBytes(fixture.workspace);
    await assert.rejects(engine.claimTask({ runId: a.runId, taskId: 'C' }), (err: unknown) => {
      refusal('claim.max-concurrency')(err);
      assert.deepEqual((err as BatonError).details, {
        refusal: { kind: 'concurrency', taskId: 'C', running: 2, limit: 2, holders: ['A', 'B'] },
      });
      return true;
    });
    assert.deepEqual(storeBytes(fixture.workspace), before, 'the refused claim wrote nothing');
    const artifact = fixture.writeResult('A.md', { task: 'A' });
    await engine.ingest({ runId: a.runId, delegationId: a.delegation.id, token: a.token, artifactPath: artifact });
    const c = await engine.claimTask({ runId: a.runId, taskId: 'C' });
    assert.equal(c.delegation.id, 'D-C-coder-001');
  });

  it('files: overlap with a task in flight is refused until that task is over', async () => {
    await open(
      plan([
        { id: 'A', files: ['src/**'] },
        { id: 'B', files: ['src/b.ts'] },
      ]),
      {},
    );
    const a = await engine.claimTask({ planPath: 'plan.md', taskId: 'A' });
    await assert.rejects(engine.claimTask({ runId: a.runId, taskId: 'B' }), (err: unknown) => {
      refusal('claim.files-overlap')(err);
      assert.equal((err as Error).message, "B overlaps A's files (src/b.ts / src/**); claim it again when A is done.");
      return true;
    });
    const artifact = fixture.writeResult('A.md', { task: 'A', status: 'FAIL' });
    await engine.ingest({ runId: a.runId, delegationId: a.delegation.id, token: a.token, artifactPath: artifact });
    await engine.claimTask({ runId: a.runId, taskId: 'B' });
  });

  it('retry backoff: the expiry is recorded by the refused claim and the backoff runs from it', async () => {
    await open(plan([{ id: 'A' }]), { retryBackoffSeconds: 20 });
    const clock = fixture.fakeClock;
    const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'A', leaseSeconds: 10 });
    clock.advance(11_000);
    const expiredAt = clock.now();
    await assert.rejects(engine.claimTask({ runId: first.runId, taskId: 'A' }), (err: unknown) => {
      refusal('claim.retry-backoff')(err);
      const r = (err as BatonError).details!.refusal as { notBefore: number; retryAt: string };
      assert.equal(r.notBefore, expiredAt + 20_000);
      assert.equal(r.retryAt, new Date(expiredAt + 20_000).toISOString());
      return true;
    });
    const view = await engine.overview(first.runId);
    assert.equal(view.delegations[0]!.status, 'STALE', 'the expiry stands though the claim was refused');
    clock.advance(10_000);
    await assert.rejects(engine.claimTask({ runId: first.runId, taskId: 'A' }), refusal('claim.retry-backoff'));
    clock.advance(10_000);
    const second = await engine.claimTask({ runId: first.runId, taskId: 'A' });
    assert.equal(second.delegation.id, 'D-A-coder-002');
  });
});
