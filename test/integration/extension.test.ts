import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import type { GateNode, RunsNode } from '../../src/extension/views';
import { activateBaton, batonExtension, messagesShownDuring, waitFor, workspacePath } from './support/editor';

/** Live processes whose environment carries one of these BATON_RUNTIME_IDs (zombies are dead). */
function processesOf(runtimeIds: readonly string[]): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const state = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.[0];
      if (state === 'Z' || state === 'X') continue;
      const environ = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (runtimeIds.some((id) => environ.includes(`BATON_RUNTIME_ID=${id}`))) found.push(Number(name));
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

describe('Baton in the editor', function () {
  this.timeout(180_000); // hang detectors, generous enough for a machine at load 10
  let api: BatonApi;
  const planUri = (): vscode.Uri => vscode.Uri.file(workspacePath('tasks.plan.md'));

  async function overview(runId?: string) {
    return (await api.session!.engine()).overview(runId);
  }

  before(async () => {
    api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
    await vscode.commands.executeCommand('baton.runs.focus');
    process.env.FAKE_WORKER_STEP_MS = '300';
  });

  afterEach(() => {
    delete process.env.FAKE_WORKER_BEHAVIOUR;
  });

  it('shows plan issues as diagnostics at their exact range while the plan is edited', async () => {
    const path = workspacePath('scratch', 'broken.plan.md');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(
      path,
      '# Broken\n\n```baton-task\nid: A\ndepends: [Z]\n```\nDo A.\n\n```baton-task\nid: A\n```\nAgain.\n',
    );
    const document = await vscode.workspace.openTextDocument(path);
    await vscode.window.showTextDocument(document);
    const diagnostics = await waitFor('plan diagnostics', () => {
      const found = vscode.languages.getDiagnostics(document.uri).filter((d) => d.source === 'baton');
      return found.length >= 2 ? found : undefined;
    });
    const byCode = new Map(diagnostics.map((d) => [String(d.code), d]));
    assert.equal(byCode.get('plan.unknown-dependency')?.range.start.line, 4, 'the depends line (0-based 4)');
    assert.equal(byCode.get('plan.duplicate-id')?.range.start.line, 9, 'the second "id: A"');
    // Fixing the text clears the diagnostics as it is typed, without saving.
    const editor = vscode.window.activeTextEditor!;
    await editor.edit((edit) => edit.replace(new vscode.Range(9, 4, 9, 5), 'B'));
    await editor.edit((edit) => edit.replace(new vscode.Range(4, 10, 4, 11), 'B'));
    await waitFor(
      'the diagnostics to clear',
      () =>
        vscode.languages
          .getDiagnostics(document.uri)
          .filter((d) => d.source === 'baton' && d.severity === vscode.DiagnosticSeverity.Error).length === 0,
    );
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('offers CodeLens on a plan: start the run and run each task', async () => {
    // The document must be open, and VS Code 1.99 wants a resolve count ("Illegal argument" otherwise).
    const document = await vscode.workspace.openTextDocument(planUri());
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      document.uri,
      10,
    );
    const titles = lenses.map((l) => l.command?.title);
    assert.ok(titles.includes('▶ Start run'), titles.join(', '));
    for (const id of ['T1', 'T2', 'T3']) assert.ok(titles.includes(`▶ Run task ${id}`), titles.join(', '));
  });

  it('starts a run: the Runs view lists it with its tasks, the Gates view holds the risk gate', async () => {
    await vscode.commands.executeCommand('baton.startRun', planUri());
    const runs = api.views.runs!;
    const runNode = await waitFor('the run in the Runs view', () => runs.getChildren()[0]);
    assert.equal(runNode.kind, 'run');
    const tasks = await waitFor('its tasks', () => {
      const children = runs.getChildren(runNode);
      return children.length === 3 ? children : undefined;
    });
    assert.deepEqual(
      tasks.map((t) => (t as Extract<RunsNode, { kind: 'task' }>).taskId),
      ['T1', 'T2', 'T3'],
    );
    const gates = await waitFor('the risk gate', () => api.views.gates!.getChildren()[0]);
    const gateItem = api.views.gates!.getTreeItem(gates);
    assert.match(String(gateItem.label), /G-1 {2}risk approval · T3/);
    assert.equal(gateItem.contextValue, 'baton.gate kind=risk_approval');
  });

  it('shows a live worker with its heartbeat while T1 runs', async () => {
    const workers = api.views.workers!;
    const node = await waitFor('a worker in the Workers view', () => workers.getChildren()[0], { timeoutMs: 60_000 });
    const item = await waitFor('a heartbeat', () => {
      workers.getChildren();
      const current = workers.getTreeItem(node);
      return /beat \d+s ago/.test(String(current.description)) ? current : undefined;
    });
    assert.match(String(item.label), /^T1 {2}D-T1-coder-001$/);
    assert.match(String(item.description), /lease/);
  });

  it('approving the gate from the Gates view releases T3, and the run completes', async () => {
    const gate = api.views.gates!.getChildren()[0] as GateNode;
    await vscode.commands.executeCommand('baton.approveGate', gate);
    const done = await waitFor(
      'the run to complete',
      async () => {
        const view = await overview();
        return view.run.status === 'completed' ? view : undefined;
      },
      { timeoutMs: 90_000 },
    );
    assert.deepEqual(
      done.tasks.map((t) => `${t.id}:${t.status}`),
      ['T1:completed', 'T2:completed', 'T3:completed'],
    );
    assert.equal((await (await api.session!.engine()).listGates({ status: 'open' })).length, 0);
    await waitFor('the Gates view to empty', () => api.views.gates!.getChildren().length === 0);
  });

  it('acting on a gate decided meanwhile says who decided it, as information, and changes nothing', async () => {
    const engine = await api.session!.engine();
    const gate = (await engine.listGates()).find((g) => g.id === 'G-1')!;
    assert.equal(gate.status, 'approved');
    const node = { kind: 'gate', id: 'gate:G-1', runId: gate.runId, gateId: 'G-1' };
    const events = (await engine.listEvents(gate.runId)).length;
    const shown = await messagesShownDuring(async () => {
      await vscode.commands.executeCommand('baton.approveGate', node);
      await vscode.commands.executeCommand('baton.rejectGate', { ...node, note: 'too late' });
    });
    const said = new RegExp(
      `^G-1 \\(risk approval of T3\\) was already approved by ${gate.decidedBy} (?:\\d+[hms] ?)+ ago; nothing changed\\.$`,
    );
    assert.equal(shown.length, 2, JSON.stringify(shown));
    for (const message of shown) {
      assert.equal(message.level, 'information');
      assert.match(message.message, said);
    }
    assert.equal((await engine.listEvents(gate.runId)).length, events, 'nothing written');
  });

  it('"No gate is waiting" is information, not an error', async () => {
    const shown = await messagesShownDuring(() => vscode.commands.executeCommand('baton.approveGate'));
    assert.deepEqual(shown, [{ level: 'information', message: 'No gate is waiting for a decision.' }]);
  });

  it('Send Message… on a finished task runs it again as a follow-up attempt whose prompt starts with the message (issue 24)', async () => {
    const runs = api.views.runs!;
    const { run } = await overview();
    // The finished run is filed under History.
    const runNode = [...runs.getChildren(), ...runs.getChildren({ kind: 'history', id: 'history' })].find(
      (n) => n.kind === 'run' && n.runId === run.id,
    )!;
    const task = runs.getChildren(runNode).find((n) => n.kind === 'task' && n.taskId === 'T2')!;
    assert.match(String(runs.getTreeItem(task).contextValue), /canMessage/, 'the task row offers Send Message…');
    const { runId } = task as Extract<RunsNode, { kind: 'task' }>;
    const message = 'Also note the change in CHANGES.md.';
    const asked: Array<vscode.InputBoxOptions | undefined> = [];
    const window = vscode.window as unknown as Record<string, unknown>;
    const showInputBox = window.showInputBox;
    window.showInputBox = (options?: vscode.InputBoxOptions) => {
      asked.push(options);
      return Promise.resolve(message);
    };
    let shown;
    try {
      shown = await messagesShownDuring(() => vscode.commands.executeCommand('baton.sendMessage', task));
    } finally {
      window.showInputBox = showInputBox;
    }
    assert.equal(asked.length, 1);
    assert.equal(await asked[0]!.validateInput!('  '), 'A message has some text.');
    assert.deepEqual(
      shown.map((m) => m.level),
      ['information'],
      JSON.stringify(shown),
    );
    assert.match(shown[0]!.message, /^Message \S+ sent to T2: the finished task runs again as a follow-up attempt\.$/);
    // Nobody drove the finished run: this window does, and the follow-up attempt runs and passes.
    const done = await waitFor(
      'the follow-up attempt to pass',
      async () => {
        const view = await overview(runId);
        const attempts = view.delegations.filter((d) => d.taskId === 'T2');
        return view.run.status === 'completed' && attempts.length === 2 ? attempts : undefined;
      },
      { timeoutMs: 90_000 },
    );
    const followUp = done.find((d) => d.attempt === 2)!;
    assert.equal(followUp.status, 'COMPLETED');
    const prompt = readFileSync(workspacePath('.baton', 'runs', runId, 'prompts', `${followUp.id}.md`), 'utf8');
    assert.ok(prompt.includes(message), prompt.slice(0, 400));
  });

  it('a run this window does not drive tells its end when it happens, once (issue 24, attention)', async () => {
    const plan = workspacePath('scratch', 'ends.plan.md');
    mkdirSync(dirname(plan), { recursive: true });
    writeFileSync(plan, '# Ends\n\n```baton-task\nid: E1\ntitle: End\nagent: coder\n```\nDo E1.\n');
    const engine = await api.session!.engine();
    const shown: string[] = [];
    const window = vscode.window as unknown as Record<string, unknown>;
    const showInformationMessage = window.showInformationMessage;
    window.showInformationMessage = (message: string) => {
      shown.push(message);
      return Promise.resolve(undefined);
    };
    try {
      // Driven by a coordinator of its own, not this window's (as another window or `baton start` would).
      const { run } = await engine.runForPlan('scratch/ends.plan.md');
      const taken = await engine.coordinate({ runId: run.id });
      assert.ok('coordinator' in taken, 'the lease is free');
      assert.equal(api.session!.drivenRuns.includes(run.id), false);
      assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
      const told = await waitFor('the end to be told', () => shown.find((m) => m.startsWith(`Baton run ${run.id} `)));
      assert.match(
        told,
        new RegExp(`^Baton run ${run.id} \\(ends\\.plan\\.md\\) completed, driven by .+: 1 of 1 task completed\\.$`),
      );
      await api.session!.runState!.refreshNow();
      assert.equal(shown.filter((m) => m.startsWith(`Baton run ${run.id} `)).length, 1, 'told once');
    } finally {
      window.showInformationMessage = showInformationMessage;
    }
  });

  it('Add Task… appends a well-formed task to the plan as an edit Ctrl+Z takes back (issue 24)', async () => {
    const path = workspacePath('scratch', 'add.plan.md');
    mkdirSync(dirname(path), { recursive: true });
    const before =
      '# Add\n\n```baton-task\nid: T1\nagent: coder\n```\nDo T1.\n\n```baton-task\nid: T2\nagent: coder\n```\nDo T2.\n';
    writeFileSync(path, before);
    const uri = vscode.Uri.file(path);
    const window = vscode.window as unknown as Record<string, unknown>;
    const originals = { input: window.showInputBox, pick: window.showQuickPick };
    const answers = ['Write the changelog: v2', 'List what changed since v1.'];
    const titles: string[] = [];
    window.showInputBox = (options?: vscode.InputBoxOptions) => {
      titles.push(options?.title ?? '');
      return Promise.resolve(answers.shift());
    };
    window.showQuickPick = (items: ReadonlyArray<{ label: string }>, options?: vscode.QuickPickOptions) => {
      titles.push(options?.title ?? '');
      // The worker: the fixture's `fake`; the dependencies: T1.
      return Promise.resolve(
        options?.canPickMany ? items.filter((i) => i.label === 'T1') : items.find((i) => i.label === 'fake'),
      );
    };
    let shown;
    try {
      shown = await messagesShownDuring(() => vscode.commands.executeCommand('baton.addTask', uri));
    } finally {
      window.showInputBox = originals.input;
      window.showQuickPick = originals.pick;
    }
    assert.equal(titles[0], 'Add Task T3 to scratch/add.plan.md');
    assert.deepEqual(shown, [
      { level: 'information', message: 'T3 is added to scratch/add.plan.md (not saved yet; Ctrl+Z takes it back).' },
    ]);
    const document = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === path)!;
    assert.ok(document.isDirty, 'an edit, not a write');
    assert.equal(readFileSync(path, 'utf8'), before, 'the file on disk is unchanged until saved');
    assert.equal(
      document.getText(),
      `${before}\n\`\`\`baton-task\nid: T3\ntitle: "Write the changelog: v2"\nagent: coder\nworker: fake\ndepends: [T1]\n\`\`\`\n\nList what changed since v1.\n`,
    );
    // The plan diagnostics agree: it is a plan without issues.
    await waitFor('the plan checked', () =>
      vscode.languages.getDiagnostics(document.uri).filter((d) => d.source === 'baton').length === 0 ? true : undefined,
    );
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('undo');
    assert.equal(document.getText(), before, 'Ctrl+Z takes the task back');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('shows a rejected result as diagnostics on the artifact, with quick fixes, and a fixed one is accepted', async () => {
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ T1: 'invalid' });
    await vscode.commands.executeCommand('baton.startRun', planUri());
    const blocked = await waitFor(
      'T1 to be rejected',
      async () => {
        const view = await overview();
        const d = view.delegations.find((x) => x.taskId === 'T1');
        return d?.status === 'BLOCKED' ? { view, d } : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const artifact = vscode.Uri.file(workspacePath(blocked.d.artifactPath!));
    const diagnostics = await waitFor('diagnostics on the artifact', () => {
      const found = vscode.languages.getDiagnostics(artifact).filter((d) => d.source === 'baton');
      return found.length > 0 ? found : undefined;
    });
    const document = await vscode.workspace.openTextDocument(artifact);
    const taskLine = document
      .getText()
      .split('\n')
      .findIndex((l) => l.startsWith('task:'));
    const mismatch = diagnostics.find((d) => d.code === 'result.task-mismatch');
    assert.ok(mismatch, diagnostics.map((d) => d.code).join(', '));
    assert.equal(mismatch.range.start.line, taskLine);
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      artifact,
      mismatch.range,
      vscode.CodeActionKind.QuickFix.value,
    );
    const fix = actions.find((a) => a.title === 'Set task: T1');
    assert.ok(fix?.edit, actions.map((a) => a.title).join(', '));
    await vscode.workspace.applyEdit(fix.edit);
    // The quick fix's edit is checked again at once, without an ingestion: the fixed line loses its squiggle.
    const batonProblems = () => vscode.languages.getDiagnostics(artifact).filter((d) => d.source === 'baton');
    await waitFor('the fixed line to lose its problem', () =>
      batonProblems().every((d) => d.code !== 'result.task-mismatch'),
    );
    for (const d of vscode.languages.getDiagnostics(artifact).filter((x) => x.code === 'result.invalid-status')) {
      const statusFixes = await vscode.commands.executeCommand<vscode.CodeAction[]>(
        'vscode.executeCodeActionProvider',
        artifact,
        d.range,
        vscode.CodeActionKind.QuickFix.value,
      );
      await vscode.workspace.applyEdit(statusFixes.find((a) => a.title === 'Set status: PASS')!.edit!);
    }
    await waitFor('no error left before it is handed in again', () =>
      batonProblems().every((d) => d.severity !== vscode.DiagnosticSeverity.Error),
    );
    assert.equal(
      (await overview(blocked.view.run.id)).delegations.find((x) => x.id === blocked.d.id)?.status,
      'BLOCKED',
    );
    await document.save();
    await vscode.commands.executeCommand('baton.ingestArtifact', {
      delegationId: blocked.d.id,
      runId: blocked.view.run.id,
      uri: artifact.toString(),
    });
    await waitFor(
      'the diagnostics to clear',
      () =>
        vscode.languages
          .getDiagnostics(artifact)
          .filter((d) => d.source === 'baton' && d.severity === vscode.DiagnosticSeverity.Error).length === 0,
    );
    const after = await overview(blocked.view.run.id);
    assert.equal(after.delegations.find((x) => x.id === blocked.d.id)?.status, 'COMPLETED');
  });

  it('stop immediate ends every worker process and cancels the attempts', async () => {
    await waitFor('the previous run to settle', async () => (await overview()).run.status !== 'running', {
      timeoutMs: 90_000,
    });
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ T1: 'hang' });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    writeFileSync(
      workspacePath('stop.plan.md'),
      '```baton-task\nid: S1\n```\nHang.\n\n```baton-task\nid: S2\n```\nHang too.\n',
    );
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ S1: 'hang', S2: 'hang' });
    await vscode.commands.executeCommand('baton.startRun', vscode.Uri.file(workspacePath('stop.plan.md')));
    const running = await waitFor('both workers to run', async () => {
      const view = await overview();
      return view.run.planPath === 'stop.plan.md' && view.runtimes.filter((r) => r.status !== 'terminal').length === 2
        ? view
        : undefined;
    });
    const runtimeIds = running.runtimes.map((r) => r.id);
    await waitFor('their processes', () => processesOf(runtimeIds).length >= 2);
    await vscode.commands.executeCommand('baton.stopRunImmediately', {
      kind: 'run',
      id: `run:${running.run.id}`,
      runId: running.run.id,
    });
    const stopped = await waitFor('the attempts to be cancelled', async () => {
      const view = await overview(running.run.id);
      return view.delegations.every((d) => d.status === 'CANCELLED') ? view : undefined;
    });
    assert.equal(stopped.run.status, 'paused');
    assert.deepEqual(processesOf(runtimeIds), [], 'no worker process is left');
  });

  it('closing the window (what deactivation does) hands the run over with its workers running by default; Resume adopts them', async () => {
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ S1: 'hang', S2: 'hang' });
    const runId = (await overview()).run.id;
    await vscode.commands.executeCommand('baton.resumeRun', { kind: 'run', id: `run:${runId}`, runId });
    const running = await waitFor('the workers to run again', async () => {
      const view = await overview();
      const live = view.runtimes.filter((r) => r.status !== 'terminal');
      return live.length === 2 ? live.map((r) => r.id) : undefined;
    });
    // The workers' own processes, as recorded (their `baton heartbeat` children carry the marker too, briefly).
    const pids = await waitFor('their processes', async () => {
      const { workers } = await (await api.session!.engine()).diagnose(runId);
      const found = workers.filter((w) => w.pid && w.alive).map((w) => w.pid!);
      return found.length === 2 && found.every((pid) => processesOf(running).includes(pid)) ? found.sort() : undefined;
    });
    const attempts = (await overview()).delegations.map((d) => d.id).sort();
    assert.equal(vscode.workspace.getConfiguration('baton').get('onWindowClose'), 'keepRunning');
    await api.shutdown();
    assert.deepEqual(
      pids.filter((pid) => processesOf(running).includes(pid)),
      pids,
      'the workers run on',
    );
    const handedOver = await overview();
    assert.deepEqual(handedOver.coordinatorLease?.handedOver, { workers: 2 });
    assert.ok(handedOver.coordinatorLease?.releasedAt !== undefined, 'the lease was released at once');
    assert.ok(
      handedOver.delegations.filter((d) => running.includes(d.runtimeId ?? '')).every((d) => d.status === 'RUNNING'),
    );
    // This window drives it again: the same attempts, the same processes.
    await vscode.commands.executeCommand('baton.resumeRun', { kind: 'run', id: `run:${runId}`, runId });
    await waitFor('the run to be driven here again', () =>
      api.session!.drivenRuns.includes(runId) ? true : undefined,
    );
    await waitFor('the lease to be taken', async () => {
      const lease = (await overview()).coordinatorLease;
      return lease && lease.releasedAt === undefined && lease.epoch > handedOver.coordinatorLease!.epoch
        ? lease
        : undefined;
    });
    assert.deepEqual((await overview()).delegations.map((d) => d.id).sort(), attempts, 'no new attempt');
    assert.deepEqual(
      pids.filter((pid) => processesOf(running).includes(pid)),
      pids,
    );
  });

  it('with baton.onWindowClose: stopImmediately, closing the window ends the workers this window drives', async () => {
    const config = vscode.workspace.getConfiguration('baton');
    await config.update('onWindowClose', 'stopImmediately', vscode.ConfigurationTarget.Workspace);
    try {
      const view = await overview();
      const running = view.runtimes.filter((r) => r.status !== 'terminal').map((r) => r.id);
      assert.equal(running.length, 2, 'the workers adopted by the previous test');
      assert.ok(api.session!.drivenRuns.includes(view.run.id));
      await api.shutdown();
      assert.deepEqual(processesOf(running), []);
      const after = await overview();
      assert.ok(
        after.delegations.filter((d) => running.includes(d.runtimeId ?? '')).every((d) => d.status === 'CANCELLED'),
      );
      assert.equal(after.coordinatorLease?.handedOver, undefined, 'not handed over');
    } finally {
      await config.update('onWindowClose', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('reports a command whose precondition fails as a message, not an exception', async () => {
    const node = { kind: 'gate', id: 'gate:G-999', runId: 'R-none', gateId: 'G-999' };
    // executeCommand rejects when a command throws.
    const shown = await messagesShownDuring(() => vscode.commands.executeCommand('baton.approveGate', node));
    assert.deepEqual(
      shown.filter((m) => m.message.includes('G-999')),
      [{ level: 'error', message: 'There is no gate G-999.' }],
    );
  });

  it('Baton: Doctor checks what a run needs and says so in one message (the worker of this workspace is installed)', async () => {
    let checks: Array<{ name: string; status: string }> = [];
    const shown = await messagesShownDuring(async () => {
      checks = (await vscode.commands.executeCommand('baton.doctor')) as typeof checks;
    });
    assert.deepEqual(
      checks.filter((c) => c.status === 'fail'),
      [],
      'node, config, the fake worker, store, disk: nothing blocks a run here',
    );
    assert.ok(checks.some((c) => c.name === 'store'));
    assert.deepEqual(
      shown.filter((m) => m.message.startsWith('Baton doctor')).map((m) => m.level),
      ['information'],
    );
  });

  it('Doctor, given the plan a Start Run refused, checks the workers that plan names (issue 24, item 1)', async () => {
    // What the refusal's Run Doctor passes (worker.missing carries the plan): this plan's task names a worker whose
    // program is not installed, while the default worker is.
    const plan = workspacePath('scratch', 'ghost.plan.md');
    mkdirSync(dirname(plan), { recursive: true });
    writeFileSync(
      plan,
      '# Ghost\n\n```baton-task\nid: G1\ntitle: Needs a CLI that is not here\nworker: ghost\n```\n\nDo it.\n',
    );
    let checks: Array<{ name: string; status: string }> = [];
    const shown = await messagesShownDuring(async () => {
      checks = (await vscode.commands.executeCommand('baton.doctor', plan)) as typeof checks;
    });
    assert.deepEqual(
      checks.filter((c) => c.status === 'fail').map((c) => c.name),
      ['worker ghost'],
      JSON.stringify(checks),
    );
    assert.deepEqual(
      shown.filter((m) => m.message.startsWith('Baton doctor')).map((m) => m.level),
      ['error'],
      'not "ready to run"',
    );
  });

  it('puts baton on the PATH of the integrated terminals: a new terminal runs the CLI this extension ships (issue 24, item 10)', async () => {
    const out = workspacePath('scratch', 'terminal-baton.txt');
    mkdirSync(dirname(out), { recursive: true });
    const terminal = vscode.window.createTerminal({
      name: 'baton on PATH',
      shellPath: '/bin/sh',
      shellArgs: [
        '-c',
        `command -v baton > '${out}.tmp'; baton --version >> '${out}.tmp' 2>&1; mv '${out}.tmp' '${out}'`,
      ],
    });
    try {
      const text = await waitFor(
        'the terminal to run baton',
        () => {
          try {
            return readFileSync(out, 'utf8');
          } catch {
            return undefined;
          }
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      // The script the extension wrote, found on PATH, runs this extension's CLI.
      assert.match(text, /\/bin\/baton\n/, text);
      assert.match(text, /^\d+\.\d+\.\d+$/m, text);
    } finally {
      terminal.dispose();
    }
  });

  it("Open Documentation: the installed docs' example plans add nothing to Problems; the same text in the workspace does (issue 24, fix 6)", async () => {
    await vscode.commands.executeCommand('baton.openDocs');
    const shipped = vscode.Uri.joinPath(batonExtension().extensionUri, 'docs', 'plan-format.md');
    const text = readFileSync(shipped.fsPath, 'utf8');
    // The person's own copy of the same text: checked as a plan (its example blocks sit inside other fences).
    const copy = workspacePath('scratch', 'plan-format-copy.md');
    mkdirSync(dirname(copy), { recursive: true });
    writeFileSync(copy, text);
    const own = await vscode.workspace.openTextDocument(copy);
    await waitFor('the copy checked as a plan', () =>
      vscode.languages.getDiagnostics(own.uri).some((d) => d.source === 'baton'),
    );
    const doc = await vscode.workspace.openTextDocument(shipped);
    await vscode.window.showTextDocument(doc);
    // The copy opened after it was checked at once; the shipped file, opened later, had the same chance.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(
      vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === 'baton'),
      [],
      "Baton's own docs are not the person's plans",
    );
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Show Changes outside git says, in one message, why the changes cannot be shown, and opens nothing', async () => {
    const view = await overview();
    const attempt = view.delegations.find((d) => d.startedAt !== undefined)!;
    assert.ok(attempt, 'an attempt of the last run started');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const node = {
      kind: 'delegation',
      id: `delegation:${attempt.runId}/${attempt.id}`,
      runId: attempt.runId,
      delegationId: attempt.id,
    };
    const shown = await messagesShownDuring(() => vscode.commands.executeCommand('baton.showChanges', node));
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.equal(shown[0]!.level, 'information');
    assert.match(
      shown[0]!.message,
      new RegExp(
        `^${attempt.id} worked in the shared working tree, and .+ is not in a git repository: Baton records what an attempt changed with git, so it cannot show this one's changes\\.$`,
      ),
    );
    assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, 0, 'no diff was opened');
  });

  it('a worker definition edited during a run: the window tells the run (config:changed in its events) and says so', async () => {
    // A run of its own that waits at a risk gate (no worker starts), so the edit changes nothing that runs.
    writeFileSync(
      workspacePath('config-watch.plan.md'),
      '```baton-task\nid: W1\nagent: coder\nrisk: [database]\n```\nWait.\n',
    );
    const engine = await api.session!.engine();
    const { run } = await engine.runForPlan('config-watch.plan.md');
    const configPath = workspacePath('.baton', 'config.json');
    const original = readFileSync(configPath, 'utf8');
    const edited = JSON.parse(original) as { workers: { fake: { env?: Record<string, string> } } };
    edited.workers.fake.env = { CONFIG_WATCH_KEY: 'not-shown' };
    // The notices shown meanwhile, as they come (messagesShownDuring hands them over only at its end).
    const window = vscode.window as unknown as Record<string, unknown>;
    const showInformationMessage = window.showInformationMessage;
    const notices: string[] = [];
    window.showInformationMessage = (message: string) => {
      notices.push(message);
      return Promise.resolve(undefined);
    };
    try {
      writeFileSync(configPath, JSON.stringify(edited, null, 2));
      const told = await waitFor('the config:changed event in the run', async () =>
        (await engine.listEvents(run.id)).find((e) => e.type === 'config:changed'),
      );
      assert.ok(told.type === 'config:changed');
      assert.equal(told.data.noticedBy, 'editor');
      assert.match(told.data.changes.join('\n'), /worker "fake": .*env keys added: CONFIG_WATCH_KEY/);
      assert.doesNotMatch(JSON.stringify(told.data), /not-shown/, 'never an env value');
      const notice = await waitFor('the reload notice naming the run', () =>
        notices.find((m) => m.startsWith('Baton reloaded .baton/config.json') && m.includes(run.id)),
      );
      assert.match(notice, /keep the settings and worker definitions they froze/);
      assert.deepEqual(
        (await engine.listGates({ runId: run.id, status: 'open' })).map((g) => g.kind),
        ['risk_approval'],
        "the window only tells; a gate is its coordinator's",
      );
    } finally {
      const before = notices.length;
      writeFileSync(configPath, original);
      // The revert is reloaded too: its notice comes here, not among the next test's messages.
      await waitFor('the reload notice of the revert', () =>
        notices.slice(before).find((m) => m.startsWith('Baton reloaded .baton/config.json')),
      ).catch(() => undefined);
      window.showInformationMessage = showInformationMessage;
      await engine.cancelRun({ runId: run.id });
    }
  });
});
