// A `usd` budget that a worker's spend escapes (issue 25, item 5): Codex reports tokens but no
// cost, and with no price for its model a dollar limit never binds it. validate, doctor and the
// run's start each say so in a warning that names the worker and the model; none refuses.
import assert from 'node:assert/strict';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  STACK_FRAME,
  writeFile,
} from '../../support/cli';

const WARNING = /The usd budget does not bind worker "cx": Codex reports tokens but no cost, .*model gpt-5-codex/;

describe('baton CLI: a usd budget on a model with no price', function () {
  this.timeout(120_000);
  let ws: string;

  before(() => ensureCliBuilt());
  beforeEach(() => {
    ws = makeWorkspace('baton-unpriced-');
    writeFile(ws, 'plan.md', planText([{ id: 'T1' }]));
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'sh',
        workers: {
          sh: { type: 'process', command: 'true', args: [], result: 'exit-code' },
          cx: { type: 'codex', executable: 'baton-no-such-codex', model: 'gpt-5-codex' },
        },
        budget: { run: { usd: 1 } },
      }),
    );
  });
  afterEach(() => removeWorkspace(ws));

  it('validate, doctor and start warn naming the worker and its model, and go on', async () => {
    const validated = await runCli(['validate', '.baton/config.json'], { cwd: ws });
    assert.equal(validated.code, 0, describeResult(validated));
    assert.match(validated.stdout, /valid config, 1 warning/, describeResult(validated));
    assert.match(validated.stdout + validated.stderr, WARNING, describeResult(validated));

    const doctor = await runCli(['doctor'], { cwd: ws });
    assert.equal(doctor.code, 0, describeResult(doctor));
    assert.match(doctor.stdout, WARNING, describeResult(doctor));

    const started = await runCli(['start', 'plan.md'], { cwd: ws });
    assert.equal(started.code, 0, describeResult(started));
    assert.match(started.stderr, new RegExp(`^baton: warning: ${WARNING.source}`, 'm'), describeResult(started));
    assert.doesNotMatch(started.stdout + started.stderr, STACK_FRAME);
  });
});
