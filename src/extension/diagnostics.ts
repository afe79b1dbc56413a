import * as vscode from 'vscode';
import {
  parsePlan,
  RESULT_FENCE,
  type Delegation,
  type Engine,
  type IngestionRecord,
  type IngestOutcome,
  type Issue,
} from '../engine/index';
import { DisposableStore } from './lifecycle';
import type { RunStateCache } from './model/runState';
import { artifactDocumentUri } from './storedArtifacts';

const SOURCE = 'baton';

/** Engine issues are 1-based line/column; VS Code positions are 0-based. */
export function toRange(issue: Issue, document?: vscode.TextDocument): vscode.Range {
  if (!issue.range) return new vscode.Range(0, 0, 0, document ? document.lineAt(0).text.length : 0);
  return new vscode.Range(
    issue.range.start.line - 1,
    issue.range.start.column - 1,
    issue.range.end.line - 1,
    issue.range.end.column - 1,
  );
}

export function toDiagnostic(issue: Issue, document?: vscode.TextDocument): vscode.Diagnostic {
  const diagnostic = new vscode.Diagnostic(
    toRange(issue, document),
    issue.recommendation ? `${issue.message} ${issue.recommendation}` : issue.message,
    issue.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
  );
  diagnostic.source = SOURCE;
  diagnostic.code = issue.code;
  return diagnostic;
}

/** What a quick fix and a re-check need to know that the diagnostic itself cannot carry: the attempt it is for. */
interface FixContext {
  expectedTask: string;
  expectedAgent: string;
  runId: string;
  delegationId: string;
}

/** An edit (a quick fix, typing) is re-checked once the artifact's text has been still this long. */
const RECHECK_DELAY_MS = 250;

/**
 * The one diagnostic collection (plans and result artifacts) and the quick fixes for
 * result issues whose fix is clear: the delegation's task id or agent, a missing
 * `contract:` line, a status outside PASS / FAIL / BLOCKED.
 */
export class ResultDiagnostics extends DisposableStore implements vscode.CodeActionProvider {
  private readonly collection = this._register(vscode.languages.createDiagnosticCollection(SOURCE));
  private readonly fixes = new Map<string, FixContext>();
  private readonly rechecks = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly workspace: string,
    private readonly engine: () => Promise<Engine>,
    private readonly log: (line: string) => void = () => undefined,
    /** Baton's own install folder: its docs hold example plans, some wrong on purpose, which are not the person's. */
    private readonly extensionUri?: vscode.Uri,
  ) {
    super();
    this._register({ dispose: () => this.rechecks.forEach((timer) => clearTimeout(timer)) });
    this._register(
      vscode.languages.registerCodeActionsProvider({ language: 'markdown' }, this, {
        providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
      }),
    );
    this._register(vscode.workspace.onDidOpenTextDocument((d) => this.checkPlan(d)));
    this._register(
      vscode.workspace.onDidChangeTextDocument((e) => {
        this.checkPlan(e.document);
        if (e.contentChanges.length > 0) this.scheduleRecheck(e.document);
      }),
    );
    this._register(vscode.workspace.onDidCloseTextDocument((d) => this.isPlan(d) && this.collection.delete(d.uri)));
    for (const document of vscode.workspace.textDocuments) this.checkPlan(document);
  }

  private isPlan(document: vscode.TextDocument): boolean {
    return (
      document.languageId === 'markdown' &&
      !this.isBatonsOwn(document.uri) &&
      /^\s{0,3}(`{3,}|~{3,})\s*baton-task\b/m.test(document.getText())
    );
  }

  /** A file of the installed extension (Open Documentation's README and docs): never checked as a plan. */
  private isBatonsOwn(uri: vscode.Uri): boolean {
    if (!this.extensionUri || uri.scheme !== this.extensionUri.scheme) return false;
    const root = this.extensionUri.path.endsWith('/') ? this.extensionUri.path : `${this.extensionUri.path}/`;
    return uri.path.startsWith(root);
  }

  /** Plan issues follow the text as it is typed. */
  checkPlan(document: vscode.TextDocument): void {
    if (!this.isPlan(document)) return;
    this.collection.set(
      document.uri,
      parsePlan(document.getText()).issues.map((i) => toDiagnostic(i, document)),
    );
  }

  /**
   * The artifacts whose problems this collection shows (plan files are not among them), each
   * with the ingestion record they come from: a record already shown is not set again, so a
   * problem the person fixed in the editor (re-checked: scheduleRecheck) does not come back
   * with the next publication.
   */
  private shownRecords = new Map<string, string>();

  /**
   * An ingestion this window just made: a rejected result's problems on its artifact at once;
   * an accepted one leaves none. The run-state cache's next publication confirms it
   * (showCurrentProblems).
   */
  show(uri: vscode.Uri, outcome: Pick<IngestOutcome, 'record' | 'delegation'>): void {
    if (outcome.record.accepted) {
      this.shownRecords.delete(uri.toString());
      this.collection.delete(uri);
      this.fixes.delete(uri.toString());
      return;
    }
    this.shownRecords.set(uri.toString(), outcome.record.id);
    this.collection.set(
      uri,
      outcome.record.issues.map((i) => toDiagnostic(i)),
    );
    this.fixes.set(uri.toString(), {
      expectedTask: outcome.delegation.taskId,
      expectedAgent: outcome.delegation.agent,
      runId: outcome.delegation.runId,
      delegationId: outcome.delegation.id,
    });
  }

  /**
   * A result whose problems are shown is checked again as it is edited — a quick fix, or typing —
   * with the check ingestion makes (Engine.checkResultText), on the editor's text, saved or not:
   * a fixed line loses its squiggle at once, a new mistake gets one. Nothing is ingested; the
   * gate stays open until the result is handed in again (Re-ingest). The ingestion record stays
   * the one shown, so the next publication does not bring its old problems back.
   */
  private scheduleRecheck(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    if (!this.fixes.has(key)) return;
    clearTimeout(this.rechecks.get(key));
    this.rechecks.set(
      key,
      setTimeout(() => void this.recheck(document), RECHECK_DELAY_MS),
    );
  }

  private async recheck(document: vscode.TextDocument): Promise<void> {
    const key = document.uri.toString();
    this.rechecks.delete(key);
    const fix = this.fixes.get(key);
    if (!fix || document.isClosed) return;
    const version = document.version;
    try {
      const issues = await (
        await this.engine()
      ).checkResultText({ delegationId: fix.delegationId, runId: fix.runId, text: document.getText() });
      // Edited again, ingested again, or its problems gone meanwhile: this check is out of date.
      if (document.version !== version || this.fixes.get(key) !== fix) return;
      this.collection.set(
        document.uri,
        issues.map((i) => toDiagnostic(i, document)),
      );
    } catch (err) {
      this.log(`Baton could not check ${document.uri.fsPath} again: ${(err as Error).message}`);
    }
  }

  /**
   * The problems of results that are still current, wherever they were ingested (this window,
   * another, the CLI), mapped from the cache: the rejected result each open ingestion_failed
   * gate waits on (docs/extension.md, "Result problems"). When that gate closes — a corrected
   * result was accepted, the attempt was retried or failed, the run was replanned or stopped —
   * its problems go; after a reload only these come back.
   */
  showCurrentProblems(cache: RunStateCache): void {
    const current = new Map<string, { uri: vscode.Uri; record: IngestionRecord; delegation: Delegation }>();
    for (const run of cache.runs) {
      const view = cache.overview(run.id);
      if (!view || run.status === 'superseded') continue;
      const records = cache.ingestions(run.id) ?? [];
      for (const gate of view.gates) {
        if (gate.status !== 'open' || gate.kind !== 'ingestion_failed') continue;
        const record = records.find((r) => r.id === gate.details.ingestionId);
        const delegation = view.delegations.find((d) => d.id === gate.delegationId);
        if (!record || !delegation) continue;
        // Not on this machine (piped in, or ingested on a team's other machine): on the content from the store.
        const uri = artifactDocumentUri(this.workspace, record);
        current.set(uri.toString(), { uri, record, delegation });
      }
    }
    for (const key of [...this.shownRecords.keys()]) {
      if (current.has(key)) continue;
      this.shownRecords.delete(key);
      this.collection.delete(vscode.Uri.parse(key));
      this.fixes.delete(key);
    }
    for (const [key, { uri, record, delegation }] of current)
      if (this.shownRecords.get(key) !== record.id) this.show(uri, { record, delegation });
  }

  provideCodeActions(
    document: vscode.TextDocument,
    _range: vscode.Range,
    context: vscode.CodeActionContext,
  ): vscode.CodeAction[] {
    const actions: vscode.CodeAction[] = [];
    const fix: Partial<FixContext> = this.fixes.get(document.uri.toString()) ?? {};
    for (const diagnostic of context.diagnostics) {
      if (diagnostic.source !== SOURCE) continue;
      const replace = (title: string, text: string): void => {
        const action = new vscode.CodeAction(title, vscode.CodeActionKind.QuickFix);
        action.edit = new vscode.WorkspaceEdit();
        action.edit.replace(document.uri, diagnostic.range, text);
        action.diagnostics = [diagnostic];
        actions.push(action);
      };
      switch (diagnostic.code) {
        case 'result.task-mismatch':
          if (fix.expectedTask) replace(`Set task: ${fix.expectedTask}`, fix.expectedTask);
          break;
        case 'result.agent-mismatch':
          if (fix.expectedAgent) replace(`Set agent: ${fix.expectedAgent}`, fix.expectedAgent);
          break;
        case 'result.invalid-status':
          for (const status of ['PASS', 'FAIL', 'BLOCKED']) replace(`Set status: ${status}`, status);
          actions[actions.length - 3]!.isPreferred = true;
          break;
        case 'result.missing-field':
          if (/contract/.test(diagnostic.message)) {
            const fence = findFenceAbove(document, diagnostic.range.start.line);
            if (fence !== undefined) {
              const contract = document.lineAt(fence).text.includes('sdd-result') ? 'sdd-result-v1' : 'baton-result-v1';
              const action = new vscode.CodeAction(`Add contract: ${contract}`, vscode.CodeActionKind.QuickFix);
              action.edit = new vscode.WorkspaceEdit();
              action.edit.insert(document.uri, new vscode.Position(fence + 1, 0), `contract: ${contract}\n`);
              action.diagnostics = [diagnostic];
              action.isPreferred = true;
              actions.push(action);
            }
          }
          break;
      }
    }
    return actions;
  }
}

function findFenceAbove(document: vscode.TextDocument, line: number): number | undefined {
  for (let l = Math.min(line, document.lineCount - 1); l >= 0; l--) {
    if (RESULT_FENCE.test(document.lineAt(l).text)) return l;
  }
  for (let l = line + 1; l < document.lineCount; l++) {
    if (RESULT_FENCE.test(document.lineAt(l).text)) return l;
  }
  return undefined;
}
