// Runs in a window of its own with workspace trust on and the folder untrusted (files named
// *.untrusted.test.ts; see test/runIntegration.ts). Baton supports untrusted workspaces in
// a limited way: it loads and shows state, and spawns nothing.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import {
  activateBaton,
  batonExtension,
  messagesShownDuring,
  showBatonLog,
  waitFor,
  workspacePath,
} from './support/editor';

describe('Untrusted workspace', () => {
  it('opens the folder untrusted', () => {
    assert.equal(vscode.workspace.isTrusted, false);
  });

  it('still activates Baton (untrustedWorkspaces: limited)', async () => {
    const extension = batonExtension();
    await waitFor('Baton to activate in an untrusted workspace', () => extension.isActive, { timeoutMs: 60_000 });
    assert.equal((await activateBaton()).isActive, true);
  });

  it('baton.showLog reveals the Baton log, which says the workspace is untrusted', async () => {
    await activateBaton();
    const log = await showBatonLog();
    assert.match(log.document.getText(), /\[info\] Baton activated for .+ \(workspace trusted: false\)/);
  });

  it('starts no process, whatever command is invoked, and says why: Restricted Mode, and what it cannot do', async () => {
    const api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
    const plan = vscode.Uri.file(workspacePath('tasks.plan.md'));
    const engine = await api.session!.engine();
    // A run to resume: recording it starts nothing.
    const { run } = await engine.runForPlan(plan.fsPath);
    const refusals: Array<[command: string, arg: unknown, cannot: string]> = [
      ['baton.startRun', plan, 'start a run'],
      ['baton.runTask', { planUri: plan.toString(), taskId: 'T1' }, 'run a task'],
      ['baton.resumeRun', { kind: 'run', id: `run:${run.id}`, runId: run.id }, 'run tasks'],
      ['baton.ingestArtifact', plan, 'ingest a result (verification runs commands)'],
    ];
    for (const [command, arg, cannot] of refusals) {
      // executeCommand rejects when a command throws: each one answers with its refusal instead.
      const shown = await messagesShownDuring(() => vscode.commands.executeCommand(command, arg));
      assert.deepEqual(
        shown,
        [
          {
            level: 'warning',
            message: `This workspace is in Restricted Mode: Baton starts no worker or verify command here, so it cannot ${cannot}. Trust the workspace to run tasks.`,
          },
        ],
        command,
      );
    }
    for (const { id } of await engine.listRuns())
      assert.deepEqual((await engine.overview(id)).delegations, [], 'no attempt was dispatched');
  });
});
