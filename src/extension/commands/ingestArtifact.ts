import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { runFolderOf, runPaths, type Delegation, type Engine, type IngestOutcome } from '../../engine/index';
import { resolveArtifact } from '../model/artifactOwner';
import { plain } from '../model/gateNotice';
import { UserFacingError } from '../session';
import type { RunsNode } from '../views';
import { folderCommand } from './context';
import { continueIfReleased } from './drive';
import { delegationOf } from './pick';

/** What a result CodeLens hands the ingest command: the file, and the target the lens showed. */
interface IngestArgs {
  uri: string;
  runId?: string;
  delegationId?: string;
}

/**
 * Ingest Result Artifact…: hands a result artifact in. The file is resolved to the delegation
 * of the run it belongs to (resolveArtifact): from a CodeLens, the lens's delegation must still
 * be that target; a file another run owns, or whose attempt or run takes no result any more,
 * is refused with a message that names the run, and nothing is written (the engine refuses it too).
 */
export const ingestArtifact = folderCommand(
  async (ctx, arg?: vscode.Uri | IngestArgs | RunsNode): Promise<IngestOutcome | undefined> => {
    const { session, log } = ctx;
    session.requireTrust('ingest a result (verification runs commands)');
    const e = await session.engine();
    const cache = session.runState;
    await cache?.refreshNow();
    let uri: vscode.Uri;
    let chosen: { runId: string; delegationId: string } | undefined;
    if (arg && 'kind' in arg && arg.kind === 'delegation') {
      // From the Runs view: this attempt, with its own result file (or one the person picks).
      const d = await delegationOf(ctx, arg);
      const own = runPaths(session.workspace, d.runId).artifact(d.id);
      const path = d.artifactPath ? join(session.workspace, d.artifactPath) : existsSync(own) ? own : undefined;
      const picked = path
        ? vscode.Uri.file(path)
        : (
            await vscode.window.showOpenDialog({
              title: `The result artifact for ${d.id}`,
              defaultUri: session.folder.uri,
              filters: { Markdown: ['md'] },
            })
          )?.[0];
      if (!picked) return undefined;
      uri = picked;
      chosen = { runId: d.runId, delegationId: d.id };
    } else if (arg && !(arg instanceof vscode.Uri) && 'uri' in arg) {
      uri = vscode.Uri.parse(arg.uri);
    } else {
      const active = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
      if (!active) throw new UserFacingError('Open the result artifact first.');
      uri = active;
    }
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const text = document?.getText() ?? (existsSync(uri.fsPath) ? readFileSync(uri.fsPath, 'utf8') : '');
    const owner = runFolderOf(session.workspace, uri.fsPath);
    if (chosen && owner && owner.runId !== chosen.runId) {
      void vscode.window.showWarningMessage(
        `${vscode.workspace.asRelativePath(uri)} belongs to run ${owner.runId}: it is not ingested for ${chosen.delegationId} of run ${chosen.runId}.`,
      );
      return undefined;
    }
    if (!chosen && cache) {
      const resolution = resolveArtifact(cache, uri.fsPath, text);
      const shown = arg && !(arg instanceof vscode.Uri) && 'uri' in arg ? arg : undefined;
      if (resolution?.kind === 'refuse') {
        log.info(`Not ingested: ${resolution.message}`);
        void vscode.window.showWarningMessage(plain(resolution.message));
        return undefined;
      }
      if (resolution && shown?.delegationId) {
        const same = resolution.runId === shown.runId && resolution.delegation.id === shown.delegationId;
        if (!same) {
          log.info(`Not ingested: ${uri.fsPath} now resolves to ${resolution.delegation.id} of ${resolution.runId}.`);
          void vscode.window.showWarningMessage(
            `Nothing was ingested: this result now goes to ${resolution.delegation.id} of run ${resolution.runId}, not to ${shown.delegationId} of run ${shown.runId ?? '?'} as the lens said. Use the lens again.`,
          );
          return undefined;
        }
      }
      if (resolution) chosen = { runId: resolution.runId, delegationId: resolution.delegation.id };
    }
    if (!chosen) chosen = await pickWaitingDelegation(e, owner?.runId);
    if (!chosen) return undefined;
    // The engine reads the file: it must hold what the person sees. A save that fails, or a file that differs from the
    // editor's text after it (another writer, a save still under way), ingests nothing rather than an older result.
    const name = vscode.workspace.asRelativePath(uri);
    if (document?.isDirty && !(await document.save()))
      throw new UserFacingError(`${name} could not be saved; nothing was ingested. Save it, then ingest it again.`);
    if (document && existsSync(uri.fsPath) && !(await diskHoldsEditorText(uri.fsPath, document)))
      throw new UserFacingError(
        `${name} on disk differs from the editor's text; nothing was ingested. Save it, then ingest it again.`,
      );
    log.info(`Ingesting ${name} for ${chosen.delegationId} of ${chosen.runId}.`);
    const outcome = await e.ingest({ ...chosen, artifactPath: uri.fsPath });
    log.info(
      `${outcome.record.id}: ${outcome.record.accepted ? `accepted ${outcome.record.resultStatus}` : 'rejected'} for ${chosen.delegationId}${outcome.duplicate ? ' (the same result as before: nothing changed)' : ''}.`,
    );
    ctx.diagnostics.show(uri, outcome);
    const r = outcome.record;
    const d = outcome.delegation;
    const errors = r.issues.filter((i) => i.severity === 'error');
    if (outcome.duplicate)
      void vscode.window.showInformationMessage(
        `Nothing changed: this result was already ingested for ${d.id} with the same content and the same findings (${r.accepted ? `accepted ${r.resultStatus}` : `rejected, ${errors.length} problem${errors.length === 1 ? '' : 's'}`}).`,
      );
    else if (r.accepted)
      void vscode.window.showInformationMessage(
        `Accepted the ${r.resultStatus} result for ${d.id}; the attempt is ${d.status}.`,
      );
    else
      void vscode.window.showWarningMessage(
        plain(
          `The result for ${d.id} was rejected: ${errors[0]?.message ?? 'it is not a valid result'}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}. See Problems.`,
        ),
      );
    await session.runState?.refreshNow();
    if (r.accepted && !outcome.duplicate) await continueIfReleased(ctx, d.runId);
    return outcome;
  },
);

/**
 * How long the file on disk may lag the editor's text after a save before the ingest is refused. In a remote window
 * (code-server, a remote host) the write travels from the workbench to the host's disk, and the file was seen to reach
 * the disk after the save's promise had resolved; a lag past this is another writer, not the save.
 */
const SAVE_SETTLE_MS = 3_000;

/** True once the file on disk holds the editor's text (a BOM aside); false if it still differs after SAVE_SETTLE_MS. */
async function diskHoldsEditorText(path: string, document: vscode.TextDocument): Promise<boolean> {
  const holds = (): boolean =>
    existsSync(path) && readFileSync(path, 'utf8').replace(/^\uFEFF/, '') === document.getText();
  const until = Date.now() + SAVE_SETTLE_MS;
  while (!holds()) {
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** No file resolves to a delegation: the person picks one that waits for a result (of the run that owns the file). */
async function pickWaitingDelegation(
  e: Engine,
  onlyRun: string | undefined,
): Promise<{ runId: string; delegationId: string } | undefined> {
  const runs = (await e.listRuns()).filter((r) => r.status !== 'superseded' && (!onlyRun || r.id === onlyRun));
  const candidates: Delegation[] = [];
  for (const run of runs.slice(0, 5))
    candidates.push(
      ...(await e.overview(run.id)).delegations.filter((d) => d.status === 'RUNNING' || d.status === 'BLOCKED'),
    );
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(
      onlyRun
        ? `No delegation of run ${onlyRun} (the run this file belongs to) is waiting for a result.`
        : 'No delegation is waiting for a result.',
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    candidates.map((d) => ({ label: d.id, description: `${d.status} · run ${d.runId}`, d })),
    { title: 'Ingest for which delegation?' },
  );
  return pick ? { runId: pick.d.runId, delegationId: pick.d.id } : undefined;
}
