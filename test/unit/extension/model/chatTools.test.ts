// Baton's chat tools, their pure parts (docs/extension.md, "Chat tools"): the inputs package.json declares and the
// tools check, the one-line refusals of bad input, what each action tool asks before it acts, and the issues of a
// task's last result with their file and line. The tools themselves run in test/integration/chatTools.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Gate, IngestionRecord } from '../../../../src/engine/index';
import {
  answerQuestionConfirmation,
  CHAT_ACTION_TOOLS,
  CHAT_TOOL_NAMES,
  chatToolJsonSchema,
  decideGateConfirmation,
  parseChatToolInput,
  planInWorkspace,
  startRunConfirmation,
  stopRunConfirmation,
  taskIssuesResult,
} from '../../../../src/extension/model/chatTools';

const ROOT = join(__dirname, '../../../..');

interface ContributedTool {
  name: string;
  displayName: string;
  modelDescription: string;
  toolReferenceName?: string;
  canBeReferencedInPrompt?: boolean;
  inputSchema: unknown;
}

function contributedTools(): ContributedTool[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { languageModelTools?: ContributedTool[] };
  };
  return manifest.contributes.languageModelTools ?? [];
}

const gate = (extra: Partial<Gate> = {}): Gate => ({
  id: 'G-3',
  runId: 'R-20260101-abcd',
  taskId: 'T3',
  kind: 'risk_approval',
  status: 'open',
  reason: 'Task T3 is tagged database; approve it before it runs.',
  details: {},
  openedAt: 1_000,
  ...extra,
});

describe('chat tools: inputs', () => {
  it('package.json declares the eight tools, each with the JSON schema of the input the tool checks', () => {
    const tools = contributedTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      [
        'baton_listRuns',
        'baton_listTasks',
        'baton_listGates',
        'baton_taskIssues',
        'baton_startRun',
        'baton_decideGate',
        'baton_answerQuestion',
        'baton_stopRun',
      ],
    );
    assert.deepEqual(
      tools.map((t) => t.name),
      CHAT_TOOL_NAMES,
    );
    for (const tool of tools) {
      assert.deepEqual(tool.inputSchema, chatToolJsonSchema(tool.name as never), `${tool.name}'s inputSchema`);
      // What VS Code 1.99 refuses a tool for (its languageModelTools extension point).
      assert.match(tool.name, /^(?!copilot_|vscode_)[\w-]+$/);
      assert.ok(tool.displayName && tool.modelDescription, `${tool.name} has a displayName and a modelDescription`);
      if (tool.canBeReferencedInPrompt) assert.match(tool.toolReferenceName ?? '', /^[\w-]+$/);
    }
    // Every tool that changes something says so to the model: the user confirms first.
    for (const name of CHAT_ACTION_TOOLS)
      assert.match(tools.find((t) => t.name === name)!.modelDescription, /The user confirms first\./);
  });

  it('takes a valid input as it is', () => {
    assert.deepEqual(parseChatToolInput('baton_decideGate', { gateId: 'G-3', decision: 'approve' }), {
      ok: true,
      value: { gateId: 'G-3', decision: 'approve' },
    });
    assert.deepEqual(parseChatToolInput('baton_listRuns', undefined), { ok: true, value: {} });
    assert.deepEqual(parseChatToolInput('baton_stopRun', { runId: 'R-20260101-abcd', mode: 'immediate' }), {
      ok: true,
      value: { runId: 'R-20260101-abcd', mode: 'immediate' },
    });
  });

  it('refuses bad input in one line that names the tool and each field at fault', () => {
    const bad = parseChatToolInput('baton_stopRun', { runId: 42, mode: 'now' });
    assert.equal(bad.ok, false);
    const error = (bad as { error: string }).error;
    assert.doesNotMatch(error, /\n/);
    assert.match(error, /^baton_stopRun: invalid input — /);
    assert.match(error, /runId: /);
    assert.match(error, /mode: .*"graceful".*"immediate"/);
  });

  it('refuses a field it does not take by name (strict inputs), and a gate id that is not one', () => {
    const extra = parseChatToolInput('baton_answerQuestion', { gateId: 'G-4', answer: 'yes', token: 'x' });
    assert.match((extra as { error: string }).error, /token: not an input of this tool/);
    const notAGate = parseChatToolInput('baton_decideGate', { gateId: 'T3', decision: 'approve' });
    assert.match((notAGate as { error: string }).error, /gateId: a gate id such as G-3/);
  });

  it('refuses a rejection without a note, an acceptResult on a rejection, and a blank answer', () => {
    assert.deepEqual(parseChatToolInput('baton_decideGate', { gateId: 'G-3', decision: 'reject', note: '  ' }), {
      ok: false,
      error: 'baton_decideGate: invalid input — note: rejecting a gate needs a note that says why.',
    });
    assert.match(
      (
        parseChatToolInput('baton_decideGate', {
          gateId: 'G-3',
          decision: 'reject',
          note: 'no',
          acceptResult: true,
        }) as {
          error: string;
        }
      ).error,
      /acceptResult: only an approval accepts a result/,
    );
    assert.match(
      (parseChatToolInput('baton_answerQuestion', { gateId: 'G-4', answer: '   ' }) as { error: string }).error,
      /answer: an answer has some text/,
    );
  });

  it('takes a plan inside the workspace only, and only a markdown file', () => {
    assert.deepEqual(planInWorkspace('/ws', 'plans/a.plan.md'), { ok: true, value: '/ws/plans/a.plan.md' });
    assert.match((planInWorkspace('/ws', '../elsewhere/plan.md') as { error: string }).error, /not a file inside/);
    assert.match((planInWorkspace('/ws', '/etc/passwd.md') as { error: string }).error, /not a file inside/);
    assert.match((planInWorkspace('/ws', 'package.json') as { error: string }).error, /not a plan/);
  });
});

describe('chat tools: what an action asks before it acts', () => {
  it('approve names the gate, its kind, its task and its reason', () => {
    const asked = decideGateConfirmation({ gateId: 'G-3', decision: 'approve' }, gate());
    assert.equal(asked.title, 'Approve gate G-3?');
    assert.equal(
      asked.message,
      'Approve G-3 (risk approval of T3, run R-20260101-abcd): Task T3 is tagged database; approve it before it runs.',
    );
    assert.equal(asked.invocationMessage, 'Approving G-3');
  });

  it('reject quotes the note; a verification_failed approval says whether the task is retried or its result accepted', () => {
    const rejected = decideGateConfirmation({ gateId: 'G-3', decision: 'reject', note: 'Not on\nFriday.' }, gate());
    assert.equal(rejected.title, 'Reject gate G-3?');
    assert.match(rejected.message, /With the note: “Not on Friday\.”\.$/);
    const failed = gate({ kind: 'verification_failed', reason: 'npm test exited 1.' });
    assert.match(
      decideGateConfirmation({ gateId: 'G-3', decision: 'approve' }, failed).message,
      /The task is retried \(a new attempt\)\.$/,
    );
    assert.match(
      decideGateConfirmation({ gateId: 'G-3', decision: 'approve', acceptResult: true }, failed).message,
      /The result is accepted as it is, although its verification failed\.$/,
    );
  });

  it('a gate not found, or already decided, is said: nothing would change', () => {
    assert.match(
      decideGateConfirmation({ gateId: 'G-9', decision: 'approve' }, undefined).message,
      /^Approve G-9 \(Baton finds no such gate now: nothing would change\)\.$/,
    );
    assert.match(
      decideGateConfirmation({ gateId: 'G-3', decision: 'approve' }, gate({ status: 'approved' })).message,
      /It is already approved: nothing would change\.$/,
    );
  });

  it('answer quotes who asks, the question and the answer', () => {
    const question = gate({
      id: 'G-4',
      kind: 'question',
      delegationId: 'D-T3-coder-001',
      details: { question: 'Which database?', choices: ['postgres', 'sqlite'] },
    });
    const asked = answerQuestionConfirmation({ gateId: 'G-4', answer: 'sqlite' }, question);
    assert.equal(asked.title, 'Answer G-4?');
    assert.equal(
      asked.message,
      'D-T3-coder-001 asks: “Which database?”. Answer: “sqlite”. The agent gets this answer; the first answer wins.',
    );
    assert.match(answerQuestionConfirmation({ gateId: 'G-5', answer: 'x' }, undefined).message, /no open question/);
  });

  it('stop says what graceful and immediate do to the running workers', () => {
    const graceful = stopRunConfirmation({ runId: 'R-1', mode: 'graceful' });
    assert.equal(graceful.title, 'Stop R-1?');
    assert.match(graceful.message, /nothing new starts, the attempts running now finish/);
    const immediate = stopRunConfirmation({ runId: 'R-1', mode: 'immediate' });
    assert.equal(immediate.title, 'Stop R-1 immediately?');
    assert.match(immediate.message, /every worker process of the run is ended/);
  });

  it('start names the plan and its tasks, and whether the run is new', () => {
    const start = startRunConfirmation({ plan: 'tasks.plan.md' }, 3);
    assert.equal(start.title, 'Start a Baton run?');
    assert.match(start.message, /^Run tasks\.plan\.md \(3 tasks\): its active run continues, or a new one starts/);
    const fresh = startRunConfirmation({ plan: 'tasks.plan.md', newRun: true });
    assert.equal(fresh.title, 'Start a new Baton run?');
    assert.match(fresh.message, /^Start a new run of tasks\.plan\.md as it is now/);
  });
});

describe('chat tools: results', () => {
  const ingestion = (extra: Partial<IngestionRecord>): IngestionRecord => ({
    id: 'I-1',
    runId: 'R-1',
    delegationId: 'D-T1-coder-001',
    artifactPath: '.baton/runs/R-1/artifacts/D-T1-coder-001.md',
    digest: 'x',
    accepted: false,
    issues: [],
    createdAt: Date.UTC(2026, 0, 1),
    ...extra,
  });

  it("a task's issues are its LAST result's, each at its file (the artifact's, or the issue's own) and 1-based line", () => {
    const older = ingestion({
      issues: [{ code: 'old.issue', severity: 'error', field: '', message: 'old', recommendation: '' }],
    });
    const last = ingestion({
      id: 'I-2',
      issues: [
        {
          code: 'result.task-mismatch',
          severity: 'error',
          field: 'task',
          message: 'The result is for task T-other.',
          recommendation: 'Set task: T1.',
          range: { start: { line: 5, column: 7 }, end: { line: 5, column: 14 } },
        },
        {
          code: 'result.artifact-missing',
          severity: 'error',
          field: 'artifacts[0]',
          message: 'notes.md does not exist.',
          recommendation: 'Create it.',
          file: 'notes.md',
        },
      ],
    });
    const result = JSON.parse(taskIssuesResult({ id: 'R-1', planPath: 'p.md' }, 'T1', [older, last]));
    assert.equal(
      result.summary,
      "T1's last result (D-T1-coder-001, .baton/runs/R-1/artifacts/D-T1-coder-001.md) was rejected with 2 issues: .baton/runs/R-1/artifacts/D-T1-coder-001.md:5 result.task-mismatch; notes.md result.artifact-missing.",
    );
    assert.deepEqual(
      result.issues.map((i: { code: string; file: string; line?: number; column?: number }) => [
        i.code,
        i.file,
        i.line,
        i.column,
      ]),
      [
        ['result.task-mismatch', '.baton/runs/R-1/artifacts/D-T1-coder-001.md', 5, 7],
        ['result.artifact-missing', 'notes.md', undefined, undefined],
      ],
    );
    assert.deepEqual(result.result, {
      delegationId: 'D-T1-coder-001',
      artifact: '.baton/runs/R-1/artifacts/D-T1-coder-001.md',
      accepted: false,
      ingestedAt: '2026-01-01T00:00:00.000Z',
    });
  });

  it('a task with no result yet has no issues, and says so', () => {
    const result = JSON.parse(taskIssuesResult({ id: 'R-1', planPath: 'p.md' }, 'T2', []));
    assert.equal(result.summary, 'T2 of run R-1 has no result ingested yet: no issues.');
    assert.deepEqual(result.issues, []);
  });
});
