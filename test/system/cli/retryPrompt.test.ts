import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  runCli,
  writeFile,
  type CliResult,
} from '../../support/cli';

const PLAN = `# Plan

\`\`\`baton-task
id: T1
title: A result with the wrong task id first
agent: coder
\`\`\`
Do T1.

\`\`\`baton-task
id: T2
title: A PASS its verify command turns down first
agent: coder
verify:
  - [node, check.js]
\`\`\`
Do T2.

\`\`\`baton-task
id: T3
title: Too slow first
agent: coder
\`\`\`
Do T3.
`;

// The worker: a plain process with its prompt on stdin. On its first attempt it goes wrong in its task's own way; on
// a retry it does the right thing only when its prompt names what went wrong — otherwise it goes wrong again, so a
// retry prompt without the facts fails the test.
const AGENT =
  String.raw`
const fs = require('node:fs');
const task = process.argv[2];
const artifact = process.env.BATON_ARTIFACT_PATH;
const result = (id) => ['# Result', '', '` +
  '```' +
  String.raw`baton-result', 'contract: baton-result-v1', 'task: ' + id,
  'agent: coder', 'status: PASS', 'summary: done', 'artifacts: []', '` +
  '```' +
  String.raw`', ''].join('\n');
let prompt = '';
process.stdin.on('data', (d) => (prompt += d)).on('end', () => {
  const told = (...facts) => prompt.includes('## What went wrong before') && facts.every((f) => prompt.includes(f));
  if (task === 'T1') {
    // Its wrong result's task: line is line 5, its value at column 7.
    const fixed = told('line 5, column 7: ` +
  '`result.task-mismatch`' +
  String.raw`', 'The result is for task "WRONG", but this delegation is for task "T1".');
    fs.writeFileSync(artifact, result(fixed ? 'T1' : 'WRONG'));
  } else if (task === 'T2') {
    if (told('` +
  '`node check.js`' +
  String.raw` exited with 3', 'MARKER: done.txt is missing')) fs.writeFileSync('done.txt', 'done\n');
    fs.writeFileSync(artifact, result('T2'));
  } else if (told('timed out after 3 s')) {
    fs.writeFileSync(artifact, result('T3'));
  } else {
    setTimeout(() => undefined, 120000);
  }
});
`;

const CHECK = `
const lines = [];
for (let n = 1; n <= 45; n++) lines.push('filler ' + n + ' of 45');
if (require('node:fs').existsSync('done.txt')) process.exit(0);
console.log(lines.join('\\n'));
console.log('MARKER: done.txt is missing');
process.exit(3);
`;

/**
 * Every retry, of every worker type, carries what went wrong before (issue 23; docs/workers.md, "The prompt"): a
 * plain process worker's second attempt is told its first result's issue (code, message, line), its failed verify
 * command with the end of its output, or that it timed out — and repairs itself only with those facts.
 */
describe('a retry’s prompt tells a process worker what went wrong before', function () {
  this.timeout(240_000);
  let ws: string | undefined;
  const run = (args: string[]): Promise<CliResult> =>
    runCli(args, { cwd: ws!, env: { NO_COLOR: '1' }, timeoutMs: 150_000 });

  before(() => {
    ensureCliBuilt();
    ws = makeWorkspace('baton-retry-');
    writeFile(ws, 'plan.md', PLAN);
    writeFile(ws, 'agent.js', AGENT);
    writeFile(ws, 'check.js', CHECK);
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'agent',
        workers: { agent: { type: 'process', command: 'node', args: ['agent.js', '{taskId}'], promptOnStdin: true } },
        taskTimeoutSeconds: 3,
        retryBackoffSeconds: 0,
        stopGraceSeconds: 1,
      }),
    );
  });
  after(() => removeWorkspace(ws));

  it('repairs a rejected result, a failed verification and a timeout on the second attempt', async () => {
    const started = await run(['start', 'plan.md']);
    assert.equal(started.code, 8, describeResult(started));
    const status = (await run(['--json', 'status'])).json<{
      run: { id: string };
      gates: Array<{ id: string; kind: string; taskId: string; status: string }>;
    }>();
    const open = status.gates.filter((g) => g.status === 'open').map((g) => `${g.kind} ${g.taskId}`);
    assert.deepEqual(open.sort(), ['ingestion_failed T1', 'verification_failed T2']);
    for (const gate of status.gates.filter((g) => g.status === 'open'))
      assert.equal((await run(['approve', gate.id, '--note', 'try again'])).code, 0);

    const resumed = await run(['resume']);
    assert.equal(resumed.code, 0, describeResult(resumed));
    const after = (await run(['--json', 'status'])).json<{
      tasks: Array<{ id: string; status: string }>;
      delegations: Array<{ id: string; status: string }>;
    }>();
    assert.deepEqual(
      after.tasks.map((t) => `${t.id} ${t.status}`),
      ['T1 completed', 'T2 completed', 'T3 completed'],
    );
    assert.deepEqual(after.delegations.map((d) => `${d.id} ${d.status}`).sort(), [
      'D-T1-coder-001 FAILED',
      'D-T1-coder-002 COMPLETED',
      'D-T2-coder-001 FAILED',
      'D-T2-coder-002 COMPLETED',
      'D-T3-coder-001 FAILED',
      'D-T3-coder-002 COMPLETED',
    ]);

    const prompt = (delegationId: string): string =>
      readFileSync(join(ws!, '.baton', 'runs', status.run.id, 'prompts', `${delegationId}.md`), 'utf8');
    for (const first of ['D-T1-coder-001', 'D-T2-coder-001', 'D-T3-coder-001'])
      assert.doesNotMatch(prompt(first), /What went wrong before/, `${first} is a first attempt`);
    assert.match(
      prompt('D-T1-coder-002'),
      /### Attempt 1 \(D-T1-coder-001\): FAILED — retry approved at G-\d+: try again\n\nIts result `\.baton\/runs\/R-[^/]+\/artifacts\/D-T1-coder-001\.md` was rejected:\n- line 5, column 7: `result\.task-mismatch` The result is for task "WRONG"/,
    );
    const verify = prompt('D-T2-coder-002');
    assert.match(verify, /Its result said PASS, but its verification failed: `node check\.js` exited with 3\./);
    assert.match(verify, /```text\n(filler \d+ of 45\n){38}MARKER: done\.txt is missing\n\(exit 3\)\n```/);
    assert.doesNotMatch(verify, /filler 7 of 45/, 'the last 40 lines only');
    assert.match(prompt('D-T3-coder-002'), /### Attempt 1 \(D-T3-coder-001\): FAILED — timed out after 3 s\n/);
    // Each section comes before the instructions for the result.
    for (const retry of ['D-T1-coder-002', 'D-T2-coder-002', 'D-T3-coder-002'])
      assert.ok(prompt(retry).indexOf('## What went wrong before') < prompt(retry).indexOf('## When you are done'));
  });
});
