import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';

const WORKER = resolve(__dirname, '../../fixtures/workers/resultWriter.js');

function plan(tasks: Array<{ id: string; depends?: string[]; risk?: string[]; verify?: string[][] }>): string {
  return tasks
    .map((t) =>
      [
        '```baton-task',
        `id: ${t.id}`,
        'agent: coder',
        ...(t.depends ? [`depends: [${t.depends.join(', ')}]`] : []),
        ...(t.risk ? [`risk: [${t.risk.join(', ')}]`] : []),
        ...(t.verify ? ['verify:', ...t.verify.map((c) => `  - [${c.map((a) => JSON.stringify(a)).join(', ')}]`)] : []),
        '```',
        `Do ${t.id}.`,
        '',
      ].join('\n'),
    )
    .join('\n');
}

function config(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    defaultWorker: 'fake',
    workers: { fake: { type: 'process', command: process.execPath, args: [WORKER, '{taskId}'], promptOnStdin: true } },
    retryBackoffSeconds: 0,
    ...extra,
  });
}

function trace(path: string): Array<{ kind: string; task: string; at: number }> {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [kind, task, at] = line.split(' ');
      return { kind: kind!, task: task!, at: Number(at) };
    });
}

/** The largest number of tasks that were between start and end at the same moment. */
function peakParallelism(events: ReturnType<typeof trace>): number {
  let running = 0;
  let peak = 0;
  for (const e of [...events].sort((a, b) => a.at - b.at || (a.kind === 'end' ? -1 : 1))) {
    running += e.kind === 'start' ? 1 : -1;
    peak = Math.max(peak, running);
  }
  return peak;
}

describe('coordinator: dispatch to real worker processes', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(() => fixture.dispose());

  async function drive(runId: string, options: { maxConcurrency?: number } = {}) {
    const taken = await engine.coordinate({ runId, ...options });
    assert.ok('coordinator' in taken, 'the lease is free');
    return taken.coordinator.run();
  }

  it('runs independent tasks in parallel up to the cap and dependents after their dependencies', async () => {
    fixture.write('.baton/config.json', config());
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }, { id: 'C' }, { id: 'D' }, { id: 'E', depends: ['A', 'B'] }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    process.env.FAKE_TRACE = tracePath;
    process.env.FAKE_DELAY_MS = '300';
    try {
      engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const outcome = await drive(run.id, { maxConcurrency: 2 });
      assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
    } finally {
      delete process.env.FAKE_TRACE;
      delete process.env.FAKE_DELAY_MS;
    }
    const events = trace(tracePath);
    assert.equal(peakParallelism(events), 2, 'two at a time, never more');
    const endOf = (t: string) => events.find((e) => e.kind === 'end' && e.task === t)!.at;
    const startOfE = events.find((e) => e.kind === 'start' && e.task === 'E')!.at;
    assert.ok(startOfE >= endOf('A') && startOfE >= endOf('B'), 'E starts after A and B ended');
    const view = await engine.overview();
    assert.deepEqual(
      view.delegations.map((d) => `${d.taskId}:${d.status}`).sort(),
      ['A:COMPLETED', 'B:COMPLETED', 'C:COMPLETED', 'D:COMPLETED', 'E:COMPLETED'],
    );
  });
});
