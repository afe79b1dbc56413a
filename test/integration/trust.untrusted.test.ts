// Runs in a window of its own with workspace trust on and the folder untrusted (files named
// *.untrusted.test.ts; see test/runIntegration.ts). Baton supports untrusted workspaces in
// a limited way: it loads and shows state, and spawns nothing.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import { activateBaton, batonExtension, waitFor, workspacePath } from './support/editor';

describe('Untrusted workspace', () => {
  it('opens the folder untrusted', () => {
    assert.equal(vscode.workspace.isTrusted, false);
  });

  it('still activates Baton (untrustedWorkspaces: limited)', async () => {
    const extension = batonExtension();
    await waitFor('Baton to activate in an untrusted workspace', () => extension.isActive, { timeoutMs: 15_000 });
    assert.equal((await activateBaton()).isActive, true);
  });

  it('runs baton.showLog', async () => {
    await activateBaton();
    await vscode.commands.executeCommand('baton.showLog');
  });

  it('starts no process, whatever command is invoked, and says why', async () => {
    const api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
    const plan = vscode.Uri.file(workspacePath('tasks.plan.md'));
    for (const [command, arg] of [
      ['baton.startRun', plan],
      ['baton.runTask', { planUri: plan.toString(), taskId: 'T1' }],
      ['baton.resumeRun', undefined],
      ['baton.ingestArtifact', plan],
    ] as const) {
      // Each command answers with a message and returns nothing; none throws.
      assert.equal(await vscode.commands.executeCommand(command, arg), undefined);
    }
    const engine = await api.session!.engine();
    const runs = await engine.listRuns();
    for (const run of runs)
      assert.deepEqual((await engine.overview(run.id)).delegations, [], 'no attempt was dispatched');
    await assert.rejects(
      Promise.resolve().then(() => api.session!.requireTrust('run tasks')),
      /Restricted Mode: Baton starts no worker or verify command here, so it cannot run tasks/,
    );
  });
});
