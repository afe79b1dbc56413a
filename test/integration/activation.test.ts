import * as assert from 'node:assert/strict';
import { existsSync, realpathSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  activateBaton,
  batonExtension,
  expectedWorkspace,
  showBatonLog,
  waitFor,
  workspaceFolder,
  workspacePath,
} from './support/editor';

interface Contributions {
  commands?: Array<{ command: string }>;
  views?: Record<string, Array<{ id: string }>>;
}

describe('Activation', () => {
  it('opens the workspace it was given: a fresh copy of the fixture', () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 1);
    const folder = realpathSync(workspaceFolder().uri.fsPath);
    const expected = expectedWorkspace();
    if (expected) assert.equal(folder, expected);
    assert.ok(existsSync(workspacePath('.baton', 'config.json')), 'the fixture has .baton/config.json');
    assert.ok(existsSync(workspacePath('tasks.plan.md')), 'the fixture has tasks.plan.md');
    assert.ok(
      !folder.includes('/test/integration/fixtures/'),
      `tests must not run in the repository's fixture (${folder})`,
    );
  });

  it('activates by itself on a workspace with .baton/config.json', async () => {
    const extension = batonExtension();
    await waitFor(
      'Baton to activate (activation event workspaceContains:.baton/config.json)',
      () => extension.isActive,
      { timeoutMs: 60_000 },
    );
    assert.equal((await activateBaton()).isActive, true);
  });

  it('registers every command it contributes', async () => {
    await activateBaton();
    const contributed = (
      (batonExtension().packageJSON as { contributes?: Contributions }).contributes?.commands ?? []
    ).map((c) => c.command);
    assert.ok(contributed.includes('baton.showLog'));
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(
      contributed.filter((command) => !registered.has(command)),
      [],
      'contributed commands without a handler',
    );
  });

  it('baton.showLog reveals the Baton log in the Output panel, with what activation logged', async () => {
    await activateBaton();
    const log = await showBatonLog();
    assert.match(log.document.getText(), /\[info\] Baton activated for .+ \(workspace trusted: true\)/);
  });

  it('shows the Baton container and its Runs view', async () => {
    await activateBaton();
    const views = (batonExtension().packageJSON as { contributes?: Contributions }).contributes?.views?.baton ?? [];
    assert.ok(
      views.some((view) => view.id === 'baton.runs'),
      'package.json contributes baton.runs',
    );
    await vscode.commands.executeCommand('workbench.view.extension.baton');
    // The workbench registers `<view id>.focus` for every contributed view.
    for (const view of views) await vscode.commands.executeCommand(`${view.id}.focus`);
  });
});
