import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnWorker } from '../../../src/engine/effects/processes/spawnSupervised';
import { workerLaunch, type LaunchValues } from '../../../src/engine/domain/workerLaunch';
import { makeTempDir } from '../../support/tempDir';

/** The launch specs of test/unit/workers/workerLaunch.test.ts, started as real processes. */

const HOSTILE = 'do it; touch pwned && echo $(touch pwned2) `touch pwned3` > pwned4 | tee pwned5';

function values(workspace: string): LaunchValues {
  return {
    prompt: `Task T1\n\n${HOSTILE}\n`,
    promptFile: join(workspace, 'my prompts', 'D-T1 coder 001.md'),
    artifactPath: join(workspace, 'out dir', 'result; rm -rf x.md'),
    taskId: 'T1',
    workspace,
  };
}

describe('workers: launching a real process (argv, stdin)', () => {
  it('starts the worker without a shell: hostile values reach it as single arguments and nothing in them runs', async () => {
    const workspace = makeTempDir('baton-launch-');
    const out = join(workspace, 'argv.json');
    const v = values(workspace);
    const script = `require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(1)))`; // node -e: argv[1] is the first argument
    const launch = workerLaunch(
      'agent',
      {
        type: 'process',
        command: process.execPath,
        args: ['-e', script, '{prompt}', '{artifactPath}', 'id={taskId}; touch pwned'],
        env: {},
      },
      v,
    );
    const worker = await spawnWorker(launch, { cwd: workspace, logPath: join(workspace, 'log.txt'), env: {} });
    assert.deepEqual(await worker.exited, { exitCode: 0, signal: null });
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), [v.prompt, v.artifactPath, 'id=T1; touch pwned']);
    for (const name of ['pwned', 'pwned2', 'pwned3', 'pwned4', 'pwned5'])
      assert.equal(existsSync(join(workspace, name)), false, `${name} must not exist`);
  });

  it('hands the prompt to the worker on stdin and closes it', async () => {
    const workspace = makeTempDir('baton-launch-');
    const out = join(workspace, 'stdin.txt');
    const v = values(workspace);
    const script = `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>require('node:fs').writeFileSync(${JSON.stringify(out)},s))`;
    const launch = workerLaunch(
      'agent',
      { type: 'process', command: process.execPath, args: ['-e', script], env: {} },
      v,
    );
    const worker = await spawnWorker(launch, { cwd: workspace, logPath: join(workspace, 'log.txt'), env: {} });
    assert.deepEqual(await worker.exited, { exitCode: 0, signal: null });
    assert.equal(readFileSync(out, 'utf8'), v.prompt);
    assert.equal(existsSync(join(workspace, 'pwned')), false);
  });
});
