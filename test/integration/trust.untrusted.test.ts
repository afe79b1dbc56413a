// Runs in a window of its own with workspace trust on and the folder untrusted (files named
// *.untrusted.test.ts; see test/runIntegration.ts). Baton supports untrusted workspaces in
// a limited way: it loads and shows state, and spawns nothing.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateBaton, batonExtension, waitFor } from './support/editor';

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
});
