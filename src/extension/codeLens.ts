import { relative, sep } from 'node:path';
import * as vscode from 'vscode';
import { isFinishedRun, parsePlan, RESULT_FENCE, type Run } from '../engine/index';
import { lensTitle, resolveArtifact } from './model/artifactOwner';
import { DisposableStore } from './lifecycle';
import type { RunStateCache } from './model/runState';

const TASK_BLOCK = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*baton-task\b/m;

/**
 * On a plan: "▶ Start run" above the first task (with "＋ Start new run" beside it while the
 * plan has a run that goes on) and "▶ Run task T3" on each task. On a result artifact: "Ingest
 * for D-…" (or "Re-ingest") for the delegation of the run it belongs to (resolveArtifact); for
 * an artifact its run no longer takes (an earlier run, a superseded one, a finished attempt) a
 * lens that says so, and explains when clicked.
 */
export class BatonCodeLenses extends DisposableStore implements vscode.CodeLensProvider {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly runState: () => RunStateCache | undefined) {
    super();
    this._register(vscode.languages.registerCodeLensProvider({ language: 'markdown' }, this));
  }

  refresh(): void {
    this.changed.fire();
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const text = document.getText();
    const lenses: vscode.CodeLens[] = [];
    if (TASK_BLOCK.test(text)) {
      const plan = parsePlan(text);
      const first = plan.tasks[0];
      if (first) {
        const top = new vscode.Range(first.range.start.line - 1, 0, first.range.start.line - 1, 0);
        lenses.push(
          new vscode.CodeLens(top, { title: '▶ Start run', command: 'baton.startRun', arguments: [document.uri] }),
        );
        // "Start run" continues the plan's run while it goes on; a new one is a separate, explicit choice.
        const active = this.activeRunOf(document);
        if (active)
          lenses.push(
            new vscode.CodeLens(top, {
              title: '＋ Start new run',
              tooltip: `Start a new run of this plan as it is now (run ${active.id} is ${active.status})`,
              command: 'baton.startNewRun',
              arguments: [document.uri],
            }),
          );
      }
      for (const task of plan.tasks) {
        const line = new vscode.Range(task.range.start.line - 1, 0, task.range.start.line - 1, 0);
        lenses.push(
          new vscode.CodeLens(line, {
            title: `▶ Run task ${task.id}`,
            command: 'baton.runTask',
            arguments: [{ planUri: document.uri.toString(), taskId: task.id }],
          }),
        );
      }
    }
    const cache = this.runState();
    if (cache && RESULT_FENCE.test(text)) {
      const lens = this.ingestLens(cache, document, text);
      if (lens) lenses.push(lens);
    }
    return lenses;
  }

  /** The newest run of this plan that can still go on, as the run-state cache holds it. */
  private activeRunOf(document: vscode.TextDocument): Run | undefined {
    const cache = this.runState();
    if (!cache) return undefined;
    const path = relative(cache.workspace, document.uri.fsPath).split(sep).join('/');
    return cache.runs.find((r) => r.planPath === path && !isFinishedRun(r.status));
  }

  private ingestLens(cache: RunStateCache, document: vscode.TextDocument, text: string): vscode.CodeLens | undefined {
    const resolution = resolveArtifact(cache, document.uri.fsPath, text);
    if (!resolution) return undefined;
    const fenceLine = document.positionAt(text.search(RESULT_FENCE)).line;
    const delegationId = resolution.kind === 'ingest' ? resolution.delegation.id : resolution.delegationId;
    // The command resolves the file again when clicked, with these as what the lens showed.
    return new vscode.CodeLens(new vscode.Range(fenceLine, 0, fenceLine, 0), {
      title: lensTitle(resolution),
      command: 'baton.ingestArtifact',
      arguments: [{ uri: document.uri.toString(), runId: resolution.runId, ...(delegationId ? { delegationId } : {}) }],
    });
  }
}
