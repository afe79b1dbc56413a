import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';

/** Plain commands as workers ("result": "exit-code"): no result block; the exit code and changes are the result. */
describe('plain command workers: exit 0 is PASS with the changed files, anything else FAIL', function () {
  this.timeout(120_000);
  let fixture: EngineFixture;
  let engine: Engine;
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(() => fixture.dispose());

  const script = (body: string): string[] => ['-e', body];

  it('takes a formatter that rewrote one file and added another as PASS listing both; a failing command as FAIL', async () => {
    initRepo(fixture.workspace, { 'src/a.js': 'let  a =1\n', 'README.md': '# r\n' });
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        maxAttempts: 1,
        isolation: 'none',
        workers: {
          fmt: {
            type: 'process',
            command: process.execPath,
            args: script(
              "const fs=require('fs');fs.writeFileSync('src/a.js','let a = 1;\\n');fs.writeFileSync('src/b.js','// new\\n')",
            ),
            result: 'exit-code',
          },
          broken: {
            type: 'process',
            command: process.execPath,
            args: script(
              "console.log('building');console.error('\\u001b[31mError: cannot find module ./db\\u001b[0m');process.exit(3)",
            ),
            result: 'exit-code',
          },
        },
      }),
    );
    fixture.write(
      'plan.md',
      [
        '```baton-task\nid: F\nagent: formatter\nworker: fmt\n```\nFormat.\n',
        '```baton-task\nid: B\nagent: formatter\nworker: broken\ndepends: [F]\n```\nBreak.\n',
      ].join('\n'),
    );
    git(fixture.workspace, 'add', '-A');
    git(fixture.workspace, 'commit', '-qm', 'plan');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'failed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}:${d.resultStatus ?? '-'}`),
      ['D-F-formatter-001:COMPLETED:PASS', 'D-B-formatter-001:FAILED:FAIL'],
    );
    const artifact = readFileSync(
      join(fixture.workspace, '.baton', 'runs', run.id, 'artifacts', 'D-F-formatter-001.md'),
      'utf8',
    );
    assert.match(artifact, /status: PASS/);
    assert.match(artifact, /artifacts:\n {2}- "src\/a\.js"\n {2}- "src\/b\.js"\n```/);
    const failed = readFileSync(
      join(fixture.workspace, '.baton', 'runs', run.id, 'artifacts', 'D-B-formatter-001.md'),
      'utf8',
    );
    assert.match(failed, /status: FAIL/);
    assert.match(failed, /exited with code 3/);
    assert.match(failed, /artifacts: \[\]/);
    // What the views, status and diagnose show of the failure: its exit code and the last line it printed (issue 24,
    // item 5), without the terminal's colour codes.
    const broken = view.delegations.find((d) => d.id === 'D-B-formatter-001')!;
    assert.match(broken.reason ?? '', /^result FAIL: .* exited with code 3: Error: cannot find module \.\/db$/);
    assert.match(
      view.tasks.find((t) => t.id === 'B')!.statusReason ?? '',
      /^D-B-formatter-001 reported FAIL: .* exited with code 3: Error: cannot find module \.\/db; no attempts left/,
    );
  });

  it('outside git: PASS with no artifacts, and the summary says its changes are not known', async () => {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        isolation: 'none',
        defaultWorker: 'touch',
        workers: {
          touch: {
            type: 'process',
            command: process.execPath,
            args: script("require('fs').writeFileSync('x.txt','x')"),
            result: 'exit-code',
          },
        },
      }),
    );
    fixture.write('plan.md', '```baton-task\nid: T\nagent: coder\n```\nTouch.\n');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
    const artifact = readFileSync(
      join(fixture.workspace, '.baton', 'runs', run.id, 'artifacts', 'D-T-coder-001.md'),
      'utf8',
    );
    assert.match(artifact, /summary: ".*exited with code 0; its changed files are not known/);
    assert.match(artifact, /artifacts: \[\]/);
  });
});
