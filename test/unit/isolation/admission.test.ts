// The one admission rule (domain/admission.ts) that both the coordinator's dispatch and
// `baton claim` obey, and the `files:` check at integration (domain/fileOverlap.ts).
import assert from 'node:assert/strict';
import { admissionRefusal, describeRefusal, type AdmissionFacts } from '../../../src/engine/domain/admission';
import { outsideDeclaration } from '../../../src/engine/domain/fileOverlap';

const NOW = Date.UTC(2026, 11, 1, 18, 0, 0);

function facts(over: Partial<AdmissionFacts> = {}): AdmissionFacts {
  return {
    now: NOW,
    task: { id: 'T3', files: [], notBefore: null },
    maxConcurrency: 2,
    occupying: [],
    inFlight: [],
    ...over,
  };
}

describe('admission: when a ready task may start (dispatch and claim alike)', () => {
  it('admits a task with a free slot, no backoff and no overlap', () => {
    assert.equal(admissionRefusal(facts({ occupying: ['T1'] })), undefined);
  });

  it('refuses within the retry backoff, saying until when', () => {
    const refusal = admissionRefusal(facts({ task: { id: 'T3', files: [], notBefore: NOW + 130_000 } }));
    assert.deepEqual(refusal, { kind: 'backoff', taskId: 'T3', notBefore: NOW + 130_000 });
    assert.equal(
      describeRefusal(refusal!),
      'T3 waits for its retry backoff until 2026-12-01 18:02:10Z; claim it again then.',
    );
    assert.equal(
      admissionRefusal(facts({ task: { id: 'T3', files: [], notBefore: NOW } })),
      undefined,
      'over at its end',
    );
  });

  it('refuses when the run holds maxConcurrency attempts, naming them', () => {
    const refusal = admissionRefusal(facts({ occupying: ['T1', 'T2'] }));
    assert.deepEqual(refusal, { kind: 'concurrency', taskId: 'T3', running: 2, limit: 2, holders: ['T1', 'T2'] });
    assert.equal(
      describeRefusal(refusal!),
      '2 of 2 running (maxConcurrency): T1, T2; claim T3 again when one of them ends.',
    );
  });

  it('refuses a task whose files: overlap a task in flight, naming both globs; a task without files: is not held', () => {
    const inFlight = [{ id: 'T2', files: ['src/**'] }];
    const refusal = admissionRefusal(facts({ task: { id: 'T3', files: ['src/b.ts'], notBefore: null }, inFlight }));
    assert.deepEqual(refusal, { kind: 'overlap', taskId: 'T3', otherTaskId: 'T2', globs: ['src/b.ts', 'src/**'] });
    assert.equal(
      describeRefusal(refusal!),
      "T3 overlaps T2's files (src/b.ts / src/**); claim it again when T2 is done.",
    );
    assert.equal(admissionRefusal(facts({ inFlight })), undefined);
  });

  it('does not count the task against itself', () => {
    assert.equal(admissionRefusal(facts({ occupying: ['T3', 'T1'] })), undefined);
  });
});

describe('files: at integration: which changed paths the declaration does not cover', () => {
  const cases: Array<[string[], string[], string[]]> = [
    [['src/**'], ['src/a.ts', 'src/deep/b.ts', 'docs/x.md'], ['docs/x.md']],
    [['src/auth'], ['src/auth/login.ts', 'src/authz.ts'], ['src/authz.ts']], // a folder named plainly: everything in it
    [['src/*'], ['src/a.ts', 'src/lib/b.ts', 'a.ts'], ['a.ts']], // a wildcard that matches a folder covers what is in it
    [['*.md'], ['README.md', 'docs/x.md'], ['docs/x.md']],
    [['**/*.md'], ['README.md', 'docs/x.md', 'src/a.ts'], ['src/a.ts']],
    [['./src/a.ts'], ['src/a.ts', 'src/b.ts'], ['src/b.ts']],
    [['src/{a,b}.ts'], ['src/a.ts', 'src/b.ts', 'src/c.ts'], ['src/c.ts']],
    [['src/**'], ['../outside/x.ts'], ['../outside/x.ts']], // outside the workspace: never covered
    [['.github/**'], ['.github/workflows/ci.yml'], []],
  ];
  for (const [globs, paths, outside] of cases) {
    it(`${JSON.stringify(globs)}: ${JSON.stringify(paths)} → outside ${JSON.stringify(outside)}`, () => {
      assert.deepEqual(outsideDeclaration(paths, globs), outside);
    });
  }
});
