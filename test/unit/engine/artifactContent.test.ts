// A result's artifact travels as content (issue 17): its bytes are kept in the store with the
// ingestion, by digest, so a machine where the artifact's path means nothing reads it from there;
// handed in over the run's size limit, or not UTF-8 text, it is refused and nothing is written.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError, type Engine } from '../../../src/engine/index';
import type { EngineContext } from '../../../src/engine/usecases/context';
import { ingestArtifact } from '../../../src/engine/usecases/ingestArtifact';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

const storeBytes = (workspace: string): Record<string, string> => {
  const dir = join(workspace, '.baton', 'store');
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n)).toString('base64')]));
};

const LIMIT = 4096;

describe('result artifacts as content', () => {
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    fixture.write('.baton/config.json', JSON.stringify({ maxArtifactBytes: LIMIT }));
    engine = await fixture.open();
  });
  afterEach(() => fixture.dispose());

  const artifactRows = async (): Promise<Array<{ digest: string; bytes: number }>> => {
    const store = (engine as unknown as { store: EngineContext['store'] }).store;
    return store.read((r) => r.all<{ digest: string; bytes: number }>(`SELECT digest, bytes FROM artifacts`));
  };

  it('keeps content handed in (stdin) with its ingestion, and gives it back byte for byte', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const content = readFileSync(fixture.writeResult('T1.md', { task: 'T1', summary: 'naïve café ✓' }));
    rmSync(join(fixture.workspace, 'results'), { recursive: true });
    const outcome = await engine.ingest({
      delegationId: claim.delegation.id,
      token: claim.token,
      artifactContent: content,
    });
    assert.equal(outcome.record.accepted, true);
    assert.equal(outcome.record.artifactPath, '<stdin>');
    assert.equal(outcome.delegation.status, 'COMPLETED');
    const shown = await engine.ingestionArtifact(outcome.record.id);
    assert.equal(shown.artifact?.content, content.toString('utf8'));
    assert.equal(shown.artifact?.bytes, content.byteLength);
    assert.equal(shown.artifact?.digest, outcome.record.digest);
  });

  it('keeps the content of a file ingested by path: the record no longer needs the file', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const path = fixture.writeResult('T1.md', { task: 'T1' });
    const text = readFileSync(path, 'utf8');
    const outcome = await engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: path });
    rmSync(path);
    assert.equal(outcome.record.artifactPath, 'results/T1.md');
    assert.equal((await engine.ingestionArtifact(outcome.record.id, claim.runId)).artifact?.content, text);
    const [view] = await engine.listIngestionViews(claim.runId);
    assert.equal(view?.artifactContent, text);
    assert.equal(view?.artifactBytes, Buffer.byteLength(text));
  });

  it('stores the same bytes once, whichever delegations ingest them', async () => {
    const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const second = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
    const bytes = readFileSync(fixture.writeResult('T1.md', { task: 'T1' }));
    const a = await engine.ingest({ delegationId: first.delegation.id, token: first.token, artifactContent: bytes });
    // The same bytes for T5: a rejected result (it names T1), recorded, its content the same row.
    const b = await engine.ingest({ delegationId: second.delegation.id, token: second.token, artifactContent: bytes });
    assert.equal(b.record.accepted, false);
    assert.notEqual(a.record.id, b.record.id);
    assert.equal(a.record.digest, b.record.digest);
    assert.deepEqual(await artifactRows(), [{ digest: a.record.digest, bytes: bytes.byteLength }]);
    // The same bytes again for T5, same findings: a duplicate, nothing written at all.
    const before = storeBytes(fixture.workspace);
    const again = await engine.ingest({ delegationId: second.delegation.id, artifactContent: bytes });
    assert.equal(again.duplicate, true);
    assert.deepEqual(storeBytes(fixture.workspace), before);
  });

  it('lists each delegation’s newest result with its content, older ones by size only', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const wrong = Buffer.from(readFileSync(fixture.writeResult('bad.md', { task: 'T9' }), 'utf8'));
    const right = readFileSync(fixture.writeResult('T1.md', { task: 'T1' }));
    await engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactContent: wrong });
    await engine.ingest({ delegationId: claim.delegation.id, artifactContent: right });
    const views = await engine.listIngestionViews(claim.runId);
    assert.deepEqual(
      views.map((v) => [v.accepted, v.artifactBytes, v.artifactContent]),
      [
        [false, wrong.byteLength, undefined],
        [true, right.byteLength, right.toString('utf8')],
      ],
    );
  });

  describe('refused, nothing written', () => {
    it('content over the run’s maxArtifactBytes, from stdin or a file, with one line naming the sizes', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const path = fixture.writeResult('T1.md', { task: 'T1' });
      writeFileSync(path, readFileSync(path, 'utf8') + 'x'.repeat(LIMIT));
      const before = storeBytes(fixture.workspace);
      const refused = (err: unknown): boolean => {
        assert.ok(BatonError.is(err, 'ingest.artifact-too-large'), String(err));
        assert.equal(err.kind, 'invalid-input');
        assert.match(
          err.message,
          new RegExp(`is ${readFileSync(path).byteLength} bytes; this run's limit is ${LIMIT} bytes`),
        );
        assert.doesNotMatch(err.message, /\n/);
        return true;
      };
      await assert.rejects(
        engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: path }),
        refused,
      );
      await assert.rejects(
        engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactContent: readFileSync(path) }),
        refused,
      );
      assert.deepEqual(storeBytes(fixture.workspace), before);
      // At the limit exactly, it is taken.
      writeFileSync(path, readFileSync(path).subarray(0, LIMIT));
      await assert.doesNotReject(
        engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: path }),
      );
    });

    it('holds a result to the limit frozen into its run, not to a larger one in the ingesting machine’s config', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.close();
      fixture.write('.baton/config.json', JSON.stringify({ maxArtifactBytes: 1024 * 1024 }));
      engine = await fixture.open();
      const big = Buffer.from(readFileSync(fixture.writeResult('T1.md', { task: 'T1' }), 'utf8') + 'x'.repeat(LIMIT));
      await assert.rejects(
        engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactContent: big }),
        (err) => BatonError.is(err, 'ingest.artifact-too-large'),
      );
    });

    for (const [what, bytes] of [
      ['invalid UTF-8', Buffer.from([0x23, 0x20, 0xc3, 0x28, 0x0a])],
      ['a NUL byte', Buffer.from('# Result\n\0\n')],
      ['a binary file', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d])],
    ] as const) {
      it(`content that is not UTF-8 text: ${what}`, async () => {
        const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
        const before = storeBytes(fixture.workspace);
        await assert.rejects(
          engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactContent: bytes }),
          (err) =>
            BatonError.is(err, 'ingest.artifact-not-text') &&
            err.kind === 'invalid-input' &&
            /not UTF-8 text/.test(err.message),
        );
        assert.deepEqual(storeBytes(fixture.workspace), before);
      });
    }
  });

  it('the coordinator records a worker’s oversized result as rejected, without its content, so the attempt waits at a gate', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const path = fixture.writeResult('T1.md', { task: 'T1' });
    writeFileSync(path, readFileSync(path, 'utf8') + 'x'.repeat(LIMIT));
    const ctx = (engine as unknown as { engineContext(): EngineContext }).engineContext();
    const outcome = await ingestArtifact(ctx, claim.delegation, path);
    assert.deepEqual(
      outcome.record.issues.map((i) => i.code),
      ['result.artifact-too-large'],
    );
    assert.equal(outcome.delegation.status, 'BLOCKED');
    assert.deepEqual(await artifactRows(), []);
    assert.equal((await engine.ingestionArtifact(outcome.record.id)).artifact, undefined);
  });

  it('an unknown ingestion id is bad input', async () => {
    await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    await assert.rejects(engine.ingestionArtifact('I-404'), (err) => BatonError.is(err, 'ingestion.unknown'));
  });
});
