// Baton's chat tools through VS Code's own API (docs/extension.md, "Chat tools", issue 24): every read tool called
// with vscode.lm.invokeTool — as Copilot Chat or any chat participant calls it — against a real run with a passed
// task, a risk gate and a rejected result. The action tools ask the person first (a modal dialog outside a chat,
// which a test in the extension host cannot click: test/e2e/chatTools.test.ts clicks it); here they are called with
// input they refuse, which asks nothing, answers one line, and changes nothing.
// Named to run after extension.test.ts, whose first run expects the store's first gate (G-1).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import { activateBaton, waitFor, workspacePath } from './support/editor';

const PLAN = [
  '# Chat tools',
  '',
  '```baton-task',
  'id: C1',
  'title: Write the note',
  'agent: coder',
  '```',
  'Write the note.',
  '',
  '```baton-task',
  'id: C2',
  'title: Migrate the database',
  'agent: coder',
  'depends: C1',
  'risk: [database]',
  '```',
  'A risky task: it waits at an approval gate.',
  '',
  '```baton-task',
  'id: C3',
  'title: Report on the note',
  'agent: reviewer',
  '```',
  'Its worker hands in a result that breaks the contract.',
  '',
].join('\n');

const TOOLS = [
  'baton_listRuns',
  'baton_listTasks',
  'baton_listGates',
  'baton_taskIssues',
  'baton_startRun',
  'baton_decideGate',
  'baton_answerQuestion',
  'baton_stopRun',
];

/** A tool called as a chat participant calls it (no chat request: toolInvocationToken undefined); its text. */
async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { toolInvocationToken: undefined, input });
  return result.content
    .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : JSON.stringify(part)))
    .join('');
}

describe('chat tools: vscode.lm.invokeTool (issue 24)', function () {
  this.timeout(180_000); // hang detectors, generous enough for a machine at load 10
  let api: BatonApi;
  let runId: string;

  before(async () => {
    api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
    const planPath = workspacePath('chat-plan', 'chat.plan.md');
    mkdirSync(dirname(planPath), { recursive: true });
    writeFileSync(planPath, PLAN);
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ C3: 'invalid' });
    const engine = await api.session!.engine();
    const { run } = await engine.runForPlan('chat-plan/chat.plan.md');
    runId = run.id;
    await api.session!.drive(run.id);
    await waitFor(
      'C1 to pass, C2 to wait at its risk gate and C3 to be rejected',
      async () => {
        const view = await engine.overview(run.id);
        const status = (id: string) => view.tasks.find((t) => t.id === id)?.status;
        return status('C1') === 'completed' &&
          view.gates.filter((g) => g.status === 'open').length === 2 &&
          view.delegations.some((d) => d.taskId === 'C3' && d.status === 'BLOCKED')
          ? view
          : undefined;
      },
      { timeoutMs: 90_000 },
    );
  });

  after(async () => {
    delete process.env.FAKE_WORKER_BEHAVIOUR;
    const engine = await api.session!.engine();
    if (runId) await engine.cancelRun({ runId, by: 'the chat tools test' });
    rmSync(workspacePath('chat-plan'), { recursive: true, force: true });
  });

  it('the eight tools are contributed (package.json) for every chat participant to see, with their input schemas', () => {
    const baton = vscode.lm.tools.filter((t) => t.name.startsWith('baton_'));
    assert.deepEqual(baton.map((t) => t.name).sort(), [...TOOLS].sort());
    const decide = baton.find((t) => t.name === 'baton_decideGate')!;
    assert.deepEqual((decide.inputSchema as { required?: string[] }).required, ['gateId', 'decision']);
  });

  it('baton_listRuns: the run, its plan, status, task counts and open gates, driven by this window', async () => {
    const result = JSON.parse(await invoke('baton_listRuns', {}));
    const run = result.runs.find((r: { id: string }) => r.id === runId);
    assert.ok(run, `${runId} is listed: ${JSON.stringify(result.runs.map((r: { id: string }) => r.id))}`);
    assert.equal(run.plan, 'chat-plan/chat.plan.md');
    // Open gates and nothing else to run: the run waits for a decision.
    assert.equal(run.status, 'paused');
    assert.equal(run.tasks.total, 3);
    assert.equal(run.tasks.completed, 1);
    assert.equal(run.openGates, 2);
    assert.equal(run.drivenByThisWindow, api.session!.drivenRuns.includes(runId));
    assert.match(result.summary, new RegExp(`${runId} paused \\(1/3 tasks completed\\)`));
  });

  it('baton_listTasks: each task with its status, latest attempt and the gate it waits at', async () => {
    const gates = await (await api.session!.engine()).listGates({ runId, status: 'open' });
    const riskGate = gates.find((g) => g.kind === 'risk_approval')!;
    const result = JSON.parse(await invoke('baton_listTasks', { runId }));
    assert.equal(result.run.id, runId);
    const byId = new Map<string, Record<string, unknown>>(
      result.tasks.map((t: Record<string, unknown>) => [t.id as string, t]),
    );
    assert.deepEqual([...byId.keys()], ['C1', 'C2', 'C3']);
    assert.equal(byId.get('C1')!.status, 'completed');
    const c1 = byId.get('C1')!.latestAttempt as Record<string, string>;
    assert.deepEqual([c1.id, c1.status, c1.result], ['D-C1-coder-001', 'COMPLETED', 'PASS']);
    assert.match(c1.artifact!, /^\.baton\/runs\/R-[^/]+\/artifacts\/D-C1-coder-001\.md$/);
    assert.equal(byId.get('C2')!.status, 'gated');
    assert.deepEqual(byId.get('C2')!.risk, ['database']);
    assert.equal(byId.get('C2')!.waitsAtGate, riskGate.id);
    assert.equal(byId.get('C2')!.attempts, 0);
    assert.equal((byId.get('C3')!.latestAttempt as { status: string }).status, 'BLOCKED');
    assert.match(result.summary, new RegExp(`^Run ${runId} of chat-plan/chat.plan.md is paused: 3 tasks \\(`));
  });

  it('baton_listGates: the open gates, what each waits for and what it takes', async () => {
    const result = JSON.parse(await invoke('baton_listGates', { runId }));
    const gates = result.gates as Array<Record<string, unknown>>;
    assert.deepEqual(gates.map((g) => [g.kind, g.taskId]).sort(), [
      ['ingestion_failed', 'C3'],
      ['risk_approval', 'C2'],
    ]);
    const risk = gates.find((g) => g.kind === 'risk_approval')!;
    assert.equal(risk.runId, runId);
    assert.equal(risk.taskTitle, 'Migrate the database');
    assert.match(String(risk.reason), /database/);
    assert.equal(risk.takes, 'a decision (baton_decideGate: approve or reject)');
    assert.match(result.summary, /^2 open gates: /);
  });

  it("baton_taskIssues: the rejected result's issues, each at the artifact's file and line", async () => {
    const result = JSON.parse(await invoke('baton_taskIssues', { taskId: 'C3', runId }));
    assert.equal(result.result.accepted, false);
    assert.equal(result.result.delegationId, 'D-C3-reviewer-001');
    const artifact = result.result.artifact as string;
    const taskLine =
      readFileSync(workspacePath(artifact), 'utf8')
        .split('\n')
        .findIndex((l) => l.startsWith('task:')) + 1;
    const mismatch = result.issues.find((i: { code: string }) => i.code === 'result.task-mismatch');
    assert.ok(mismatch, JSON.stringify(result.issues.map((i: { code: string }) => i.code)));
    assert.equal(mismatch.file, artifact);
    assert.equal(mismatch.line, taskLine);
    assert.ok(mismatch.line > 1);
    assert.equal(mismatch.severity, 'error');
    assert.match(result.summary, /^C3's last result \(D-C3-reviewer-001, .*\) was rejected with \d+ issues?: /);
    // A task whose result was accepted: no issues.
    assert.deepEqual(JSON.parse(await invoke('baton_taskIssues', { taskId: 'C1', runId })).issues, []);
  });

  it('bad input, an unknown run or task: one line as the result, never a stack', async () => {
    const cases: Array<[string, object, RegExp]> = [
      ['baton_listTasks', { runId: 7 }, /^baton_listTasks: invalid input — runId: /],
      ['baton_taskIssues', {}, /^baton_taskIssues: invalid input — taskId: /],
      ['baton_listTasks', { runId: 'R-nope' }, /^baton_listTasks: There is no run R-nope\b/],
      ['baton_taskIssues', { taskId: 'C9', runId }, new RegExp(`^baton_taskIssues: run ${runId} has no task C9 `)],
    ];
    for (const [name, input, expected] of cases) {
      const text = await invoke(name, input);
      assert.match(text, expected);
      assert.doesNotMatch(text, /\n/, `${name}: one line`);
    }
  });

  it('an action tool given input it refuses asks nothing, says why in one line, and changes nothing', async () => {
    const engine = await api.session!.engine();
    const risk = (await engine.listGates({ runId, status: 'open' })).find((g) => g.kind === 'risk_approval')!;
    const events = (await engine.listEvents(runId)).length;
    assert.equal(
      await invoke('baton_decideGate', { gateId: risk.id, decision: 'reject' }),
      'baton_decideGate: invalid input — note: rejecting a gate needs a note that says why.',
    );
    assert.match(
      await invoke('baton_stopRun', { runId, mode: 'now' }),
      /^baton_stopRun: invalid input — mode: .*"graceful".*"immediate"/,
    );
    assert.match(
      await invoke('baton_startRun', { plan: 'chat-plan/chat.plan.md', force: true }),
      /^baton_startRun: invalid input — force: not an input of this tool\.$/,
    );
    assert.match(
      await invoke('baton_answerQuestion', { gateId: risk.id }),
      /^baton_answerQuestion: invalid input — answer: /,
    );
    assert.equal((await engine.listGates({ runId })).find((g) => g.id === risk.id)?.status, 'open');
    assert.equal((await engine.getRun(runId)).status, 'paused');
    assert.equal((await engine.listEvents(runId)).length, events, 'nothing written');
  });
});
