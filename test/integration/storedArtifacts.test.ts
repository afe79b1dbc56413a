// A result handed in as content — piped into `baton ingest --artifact -`, or ingested on a team's
// other machine — has no file here: the editor shows its problems on the content from the store
// (a read-only `baton-artifact:` document), and Open Artifact opens that (docs/team-artifacts.md).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import { activateBaton, waitFor, workspacePath } from './support/editor';

const PLAN = '# Stored\n\n```baton-task\nid: S1\ntitle: Stored result\nagent: coder\nworker: manual\n```\n\nDo S1.\n';

describe('a result kept only in the store', function () {
  this.timeout(180_000); // hang detectors, generous enough for a machine at load 10
  let api: BatonApi;

  before(async () => {
    api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
  });

  it('shows its problems on the stored content, at their lines, in a read-only document', async () => {
    const planPath = workspacePath('stored', 'stored.plan.md');
    mkdirSync(dirname(planPath), { recursive: true });
    writeFileSync(planPath, PLAN);
    const engine = await api.session!.engine();
    const claim = await engine.claimTask({ planPath, taskId: 'S1' });
    try {
      // As a resident worker elsewhere would: content only, the wrong task named on line 6.
      const content = [
        '# Result from machine C',
        '',
        '```baton-result',
        'contract: baton-result-v1',
        'agent: coder',
        'task: S9',
        'status: PASS',
        'summary: piped in',
        'artifacts: []',
        '```',
        '',
      ].join('\n');
      const outcome = await engine.ingest({
        delegationId: claim.delegation.id,
        runId: claim.runId,
        token: claim.token,
        artifactContent: Buffer.from(content),
      });
      assert.equal(outcome.record.accepted, false);
      assert.equal(outcome.record.artifactPath, '<stdin>');
      const stored = vscode.Uri.from({
        scheme: 'baton-artifact',
        path: `/${claim.runId}/${outcome.record.id}/result.md`,
      });
      const diagnostics = await waitFor(
        'the problems on the stored artifact',
        () => {
          const found = vscode.languages.getDiagnostics(stored).filter((d) => d.source === 'baton');
          return found.length > 0 ? found : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const mismatch = diagnostics.find((d) => d.code === 'result.task-mismatch');
      assert.ok(mismatch, diagnostics.map((d) => d.code).join(', '));
      assert.equal(mismatch.range.start.line, 5, 'the "task: S9" line (0-based 5)');
      const document = await vscode.workspace.openTextDocument(stored);
      assert.equal(document.getText(), content);
      const editor = await vscode.window.showTextDocument(document);
      assert.equal(editor.document.uri.scheme, 'baton-artifact');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    } finally {
      await engine.cancelRun({ runId: claim.runId, waitMs: 10_000 });
    }
  });
});
