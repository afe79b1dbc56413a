import assert from 'node:assert/strict';
import { continuesSession } from '../../../src/engine/domain/parking';
import { join } from 'node:path';
import { DEFAULT_CONFIG, parseConfig } from '../../../src/engine/domain/config';
import { BatonError } from '../../../src/engine/index';
import { resolveWorker, workerLaunch, type LaunchValues } from '../../../src/engine/domain/workerLaunch';

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

describe('workers: launch (argv, stdin, placeholders)', () => {
  it('substitutes every placeholder inside its own argv element; a value with spaces or shell syntax stays one argument', () => {
    const v = values('/work space');
    const launch = workerLaunch(
      'agent',
      {
        type: 'process',
        command: 'agent-cli',
        args: [
          '--task={taskId}',
          '--cwd',
          '{workspace}',
          '--out',
          '{artifactPath}',
          '--prompt',
          '{prompt}',
          '--file={promptFile}',
        ],
        env: { X: '1' },
      },
      v,
    );
    assert.deepEqual(launch.argv, [
      'agent-cli',
      '--task=T1',
      '--cwd',
      '/work space',
      '--out',
      v.artifactPath,
      '--prompt',
      v.prompt,
      `--file=${v.promptFile}`,
    ]);
    assert.equal(launch.stdin, undefined, 'a prompt passed by argument is not also sent on stdin');
    assert.deepEqual(launch.env, { X: '1' });
  });

  it('substitutes once: placeholder-like text and $-patterns inside a value are taken literally', () => {
    const v = { ...values('/ws'), taskId: '{workspace}$&$1', prompt: 'see {promptFile} and $`' };
    const launch = workerLaunch(
      'agent',
      { type: 'process', command: 'a', args: ['{taskId}', 'x{prompt}y'], env: {} },
      v,
    );
    assert.deepEqual(launch.argv, ['a', '{workspace}$&$1', 'xsee {promptFile} and $`y']);
  });

  it('sends the prompt on stdin by default, and as configured by promptOnStdin', () => {
    const v = values('/ws');
    const plain = workerLaunch('agent', { type: 'process', command: 'a', args: ['--task', '{taskId}'], env: {} }, v);
    assert.equal(plain.stdin, v.prompt, 'no {prompt}/{promptFile} argument: stdin');
    const byFile = workerLaunch('agent', { type: 'process', command: 'a', args: ['{promptFile}'], env: {} }, v);
    assert.equal(byFile.stdin, undefined);
    const both = workerLaunch(
      'agent',
      { type: 'process', command: 'a', args: ['{promptFile}'], promptOnStdin: true, env: {} },
      v,
    );
    assert.equal(both.stdin, v.prompt);
    const none = workerLaunch('agent', { type: 'process', command: 'a', args: [], promptOnStdin: false, env: {} }, v);
    assert.equal(none.stdin, undefined);
  });

  it('launches claude-code as its preset: the stream-json event stream, the model, the task profile, extra arguments, then `--` and the prompt on stdin', () => {
    const v = { ...values('/ws'), permissions: { profile: 'edit' as const, denyTools: ['WebFetch'] } };
    const launch = workerLaunch(
      'claude',
      {
        type: 'claude-code',
        executable: '/opt/claude',
        model: 'opus',
        args: ['--add-dir', '{workspace}'],
        env: { EXTRA: '1' },
        continueSession: false,
      },
      v,
    );
    assert.deepEqual(launch.argv, [
      '/opt/claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'opus',
      '--permission-mode',
      'acceptEdits',
      '--disallowedTools',
      'Bash', // `edit` runs no command
      'WebFetch',
      '--add-dir',
      '/ws',
      '--',
    ]);
    assert.equal(launch.stdin, v.prompt);
    assert.equal(launch.env.EXTRA, '1');
    assert.deepEqual(launch.agent?.kind, 'claude-code');
    assert.equal(launch.agent?.effective.profile, 'edit');
  });

  it('continues the session its claim decided on; a retry does when its worker asks, the attempt after a parked one always', () => {
    const base = { type: 'claude-code' as const, executable: 'claude', args: [], env: {}, continueSession: false };
    assert.ok(!workerLaunch('c', base, values('/ws')).argv.includes('--resume'));
    const resumed = workerLaunch('c', base, { ...values('/ws'), resumeSession: 'sess-1' }).argv;
    assert.deepEqual(resumed.slice(resumed.indexOf('--resume'), resumed.indexOf('--resume') + 2), [
      '--resume',
      'sess-1',
    ]);
    assert.equal(continuesSession({ continueSession: false }, 2, false), false);
    assert.equal(continuesSession({ continueSession: true }, 2, false), true);
    assert.equal(continuesSession({ continueSession: false }, 2, true), true);
    assert.equal(continuesSession({ continueSession: true }, 1, false), false, 'a first attempt has no session yet');
  });

  it('does not launch a manual worker, and names the known workers for an unknown id', () => {
    assert.throws(
      () => workerLaunch('manual', { type: 'manual' }, values('/ws')),
      (err: unknown) =>
        BatonError.is(err, 'worker.not-launched') && /A manual worker is not launched/.test(err.message),
    );
    const { config } = parseConfig(JSON.stringify({ workers: { mine: { type: 'process', command: 'x' } } }));
    assert.equal(resolveWorker(config, 'mine').type, 'process');
    assert.equal(resolveWorker(DEFAULT_CONFIG, 'claude-code').type, 'claude-code');
    assert.throws(
      () => resolveWorker(config, 'nope'),
      (err: unknown) =>
        BatonError.is(err, 'worker.unknown') && /known workers: mine, claude-code, manual/.test(err.message),
    );
    // A plan's worker name is looked up among the definitions only, never among Object's members.
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
      assert.throws(
        () => resolveWorker(config, name),
        (err: unknown) => BatonError.is(err, 'worker.unknown'),
        name,
      );
  });
});
