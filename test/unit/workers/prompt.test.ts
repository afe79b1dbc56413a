import assert from 'node:assert/strict';
import type { Task } from '../../../src/engine/index';
import { parseResultArtifact } from '../../../src/engine/domain/result/parseResult';
import { batonMcpTools } from '../../../src/engine/domain/agents/presets';
import { buildPrompt } from '../../../src/engine/domain/prompt';

function task(overrides: Partial<Task> = {}): Task {
  return {
    runId: 'R-1',
    id: 'T2',
    title: 'Migrate the schema',
    agent: 'coder',
    depends: ['T1'],
    risk: [],
    files: ['src/db/**', 'migrations/*.sql'],
    verify: [['npm', 'test', '--', '--grep', 'schema']],
    instructions: 'Add the table `users`.\n\nKeep it small.',
    line: 1,
    status: 'running',
    ...overrides,
  };
}

describe('workers: the prompt a worker receives', () => {
  const input = {
    task: task(),
    delegationId: 'D-T2-coder-001',
    agent: 'coder',
    artifactPath: '.baton/runs/R-1/artifacts/D-T2-coder-001.md',
    dependencies: [{ id: 'T1', title: 'Lay the ground' }],
  };

  it('carries the task, its instructions, the files it may change, what it builds on and how it is verified', () => {
    const prompt = buildPrompt(input);
    assert.match(
      prompt,
      /You are the "coder" agent\. Baton delegated task T2 of a plan to you \(attempt D-T2-coder-001\)\./,
    );
    // The seed's queue item id (sdd-agent-platform): `<run>:<delegation>`, on a line of its own.
    assert.match(prompt, /^Queue item id: R-1:D-T2-coder-001$/m);
    assert.match(prompt, /^# T2: Migrate the schema$/m);
    assert.match(prompt, /Add the table `users`\.\n\nKeep it small\./);
    assert.match(prompt, /## Files\n\nChange only files matching:\n- `src\/db\/\*\*`\n- `migrations\/\*\.sql`/);
    assert.match(prompt, /## Already done\n\nThis task builds on completed tasks:\n- T1: Lay the ground/);
    assert.match(prompt, /## Verification[\s\S]*- `npm test -- --grep schema`/);
  });

  it('says where to write the result and shows a result block that passes the contract for this task and agent', () => {
    const prompt = buildPrompt(input);
    assert.match(prompt, /Write your result to `\.baton\/runs\/R-1\/artifacts\/D-T2-coder-001\.md`/);
    assert.match(prompt, /print the report with its block on standard output instead/);
    assert.match(prompt, /baton heartbeat --progress/);
    const example = prompt.replace('  - path/of/a/file/you/created/or/changed', '');
    const parsed = parseResultArtifact(example, { taskId: 'T2', agent: 'coder' });
    assert.deepEqual(
      parsed.issues.filter((i) => i.severity === 'error'),
      [],
    );
    assert.equal(parsed.result?.status, 'PASS');
  });

  it('leaves out empty sections and says so when the plan gives no instructions', () => {
    const prompt = buildPrompt({
      ...input,
      task: task({ files: [], verify: [], instructions: '   ' }),
      dependencies: [],
    });
    assert.match(prompt, /\(The plan gives no further instructions for this task\.\)/);
    assert.doesNotMatch(prompt, /## Files|## Already done|## Verification/);
  });

  it('tells an agent preset the attempt’s MCP tools it may call instead of the `baton` commands; a plain process keeps the commands', () => {
    const agent = buildPrompt({ ...input, batonTools: batonMcpTools('edit') });
    const tail = agent.slice(agent.indexOf('Baton keeps your lease'));
    for (const tool of ['baton_task', 'baton_progress', 'baton_check_result', 'baton_submit_result', 'baton_ask'])
      assert.match(tail, new RegExp(`^- \`${tool}\`: \\S`, 'm'), tool);
    assert.doesNotMatch(agent, /baton heartbeat|baton ingest/);
    // A read-only task is not told of the hand-in it may not call.
    assert.doesNotMatch(buildPrompt({ ...input, batonTools: batonMcpTools('read-only') }), /baton_submit_result/);
    // Everything before the last paragraph is the same prompt.
    const plain = buildPrompt(input);
    assert.equal(
      agent.slice(0, agent.indexOf('Baton keeps your lease')),
      plain.slice(0, plain.indexOf('Baton keeps your lease')),
    );
    assert.match(plain, /run `baton heartbeat --progress "<a few words>"`/);
    assert.doesNotMatch(plain, /baton_progress/);
  });
});
