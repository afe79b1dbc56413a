import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import type { RunsNode } from '../../src/extension/views';
import { activateBaton, waitFor, workspacePath } from './support/editor';

interface Asked {
  message: string;
  buttons: string[];
}

/**
 * Runs `body` with Baton's questions (show{Information,Warning,Error}Message with buttons)
 * answered by `answer`, as if the person clicked that button; returns what was asked.
 */
async function answering(
  answer: (asked: Asked) => string | undefined,
  body: () => PromiseLike<unknown>,
): Promise<Asked[]> {
  const window = vscode.window as unknown as Record<string, unknown>;
  const names = ['showInformationMessage', 'showWarningMessage', 'showErrorMessage'];
  const originals = names.map((name) => [name, window[name]] as const);
  const asked: Asked[] = [];
  for (const name of names)
    window[name] = (message: string, ...rest: unknown[]) => {
      const buttons = rest.filter((r): r is string => typeof r === 'string');
      const question = { message, buttons };
      asked.push(question);
      return Promise.resolve(answer(question));
    };
  try {
    await body();
  } finally {
    for (const [name, original] of originals) window[name] = original;
  }
  return asked;
}

/** One task behind a risk gate: its run waits (paused) without starting a worker. */
const GATED_PLAN = (title: string): string =>
  `# Lifecycle\n\n\`\`\`baton-task\nid: L1\ntitle: ${title}\nagent: coder\nrisk: [database]\n\`\`\`\n\nChange the storage.\n`;

describe('Baton in the editor: a run’s lifecycle, the example plan, the documentation', function () {
  this.timeout(180_000); // hang detectors, generous enough for a machine at load 10
  let api: BatonApi;
  const planPath = workspacePath('lifecycle.plan.md');
  const engine = () => api.session!.engine();
  const runsOfPlan = async () => (await (await engine()).listRuns()).filter((r) => r.planPath === 'lifecycle.plan.md');

  before(async () => {
    api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
  });

  after(async () => {
    // Nothing of this file waits at a gate for the files after it.
    const e = await engine();
    for (const run of await runsOfPlan())
      if (run.status === 'paused' || run.status === 'running') await e.cancelRun({ runId: run.id, by: 'the test' });
    rmSync(planPath, { force: true });
  });

  it('Start Run on a plan edited since its active run says so and offers a new run or a replan, not a CLI flag', async () => {
    writeFileSync(planPath, GATED_PLAN('Change the storage'));
    await answering(
      () => undefined,
      () => vscode.commands.executeCommand('baton.startRun', vscode.Uri.file(planPath)),
    );
    const [first] = await waitFor('the first run, waiting at its risk gate', async () => {
      const runs = await runsOfPlan();
      return runs.length === 1 && runs[0]!.status === 'paused' ? runs : undefined;
    });

    writeFileSync(planPath, GATED_PLAN('Change the storage, carefully'));
    const asked = await answering(
      ({ buttons }) => (buttons.includes('Start a New Run') ? 'Start a New Run' : undefined),
      () => vscode.commands.executeCommand('baton.startRun', vscode.Uri.file(planPath)),
    );
    const question = asked.find((a) => a.buttons.includes('Start a New Run'));
    assert.ok(question, `asked: ${JSON.stringify(asked)}`);
    assert.deepEqual(question.buttons, ['Start a New Run', 'Replan']);
    assert.match(question.message, new RegExp(`lifecycle\\.plan\\.md changed since run ${first!.id} started`));
    assert.doesNotMatch(question.message, /--new/);
    const runs = await waitFor('a second run of the plan as it is now', async () => {
      const all = await runsOfPlan();
      return all.length === 2 ? all : undefined;
    });
    const second = runs.find((r) => r.id !== first!.id)!;
    assert.notEqual(second.planDigest, first!.planDigest, 'the new run froze the edited plan');
  });

  it('Cancel Run… (confirmed) closes the run’s gate and cancels it for good; Resume then refuses with why', async () => {
    const run = (await runsOfPlan()).find((r) => r.status === 'paused');
    assert.ok(run, 'a paused run of the plan from the test before');
    const node: RunsNode = { kind: 'run', id: `run:${run.id}`, runId: run.id };
    const asked = await answering(
      ({ buttons }) => (buttons.includes('Cancel Run') ? 'Cancel Run' : undefined),
      () => vscode.commands.executeCommand('baton.cancelRun', node),
    );
    assert.match(asked[0]!.message, new RegExp(`^Cancel run ${run.id}\\?`));
    assert.match(asked.at(-1)!.message, new RegExp(`^Cancelled run ${run.id}: .*1 gate closed`));
    const e = await engine();
    assert.equal((await e.getRun(run.id)).status, 'cancelled');
    assert.deepEqual(
      (await e.listGates({ status: 'open' })).filter((g) => g.runId === run.id),
      [],
      'no gate of the run is open',
    );

    const refused = await answering(
      () => undefined,
      () => vscode.commands.executeCommand('baton.resumeRun', node),
    );
    assert.deepEqual(
      refused.map((a) => a.message),
      [`Run ${run.id} is cancelled: Resume Run does not apply to it.`],
    );
  });

  it('Create Example Plan never overwrites a file: the second one goes to baton-plan-2.md', async () => {
    const mine = '# My own plan\n\nNot to be lost.\n';
    writeFileSync(workspacePath('baton-plan.md'), mine);
    try {
      await vscode.commands.executeCommand('baton.createExamplePlan');
      const opened = await waitFor('the example plan in an editor', () =>
        vscode.window.activeTextEditor?.document.uri.fsPath.endsWith('baton-plan-2.md')
          ? vscode.window.activeTextEditor
          : undefined,
      );
      assert.equal(readFileSync(workspacePath('baton-plan.md'), 'utf8'), mine, 'the person’s file is untouched');
      assert.match(opened.document.getText(), /```baton-task/);
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    } finally {
      for (const name of ['baton-plan.md', 'baton-plan-2.md'])
        if (existsSync(workspacePath(name))) rmSync(workspacePath(name));
    }
  });

  it('Open Documentation shows the extension’s README in the Markdown preview', async () => {
    await vscode.commands.executeCommand('baton.openDocs');
    const tab = await waitFor('a Markdown preview of the README', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find(
          (t) =>
            t.input instanceof vscode.TabInputWebview &&
            t.input.viewType.includes('markdown.preview') &&
            /README\.md/.test(t.label),
        ),
    );
    await vscode.window.tabGroups.close(tab);
  });
});
