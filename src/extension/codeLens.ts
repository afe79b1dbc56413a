import { basename, relative, sep } from 'node:path';
import * as vscode from 'vscode';
import { isFinishedRun, parsePlan, RESULT_FENCE, type Run } from '../engine/index';
import { DisposableStore } from './lifecycle';
import type { RunStateCache } from './runState';

const TASK_BLOCK = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*baton-task\b/m;

/**
 * On a plan: "▶ Start run" above the first task (with "＋ Start new run" beside it while the
 * plan has a run that goes on) and "▶ Run task T3" on each task. On a
 * result artifact: "Ingest for D-…" (or "Re-ingest") for the delegation it belongs to — the
 * one its file is named after, else the waiting delegation of the task it names.
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
    const runs = cache.runs.filter((r) => r.status !== 'superseded').slice(0, 5);
    const named = basename(document.uri.fsPath).replace(/\.md$/, '');
    const task = /^\s*task:\s*(\S+)/m.exec(text)?.[1];
    for (const run of runs) {
      const view = cache.overview(run.id);
      if (!view) continue;
      const delegation =
        view.delegations.find((d) => d.id === named) ??
        [...view.delegations]
          .reverse()
          .find((d) => d.taskId === task && (d.status === 'RUNNING' || d.status === 'BLOCKED'));
      if (!delegation) continue;
      const fenceLine = document.positionAt(text.search(RESULT_FENCE)).line;
      const ingested = (cache.ingestions(run.id) ?? []).some((i) => i.delegationId === delegation.id);
      const open = delegation.status === 'RUNNING' || delegation.status === 'BLOCKED';
      const title = !open
        ? `${delegation.id}: ${delegation.status}`
        : `${ingested ? '↻ Re-ingest' : '⤓ Ingest'} for ${delegation.id}`;
      return new vscode.CodeLens(
        new vscode.Range(fenceLine, 0, fenceLine, 0),
        open
          ? {
              title,
              command: 'baton.ingestArtifact',
              arguments: [{ delegationId: delegation.id, runId: run.id, uri: document.uri.toString() }],
            }
          : { title, command: '' },
      );
    }
    return undefined;
  }
}
