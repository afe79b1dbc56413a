import { existsSync, readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { isAbsolute, join } from 'node:path';
import {
  BatonError,
  counted,
  Engine,
  hasErrors,
  isFinishedRun,
  readPlan,
  runFolderOf,
  runPaths,
  type Delegation,
  type Gate,
  type IngestOutcome,
  type Run,
  type RunStatus,
} from '../engine/index';
import { artifactDocumentUri } from './storedArtifacts';
import { resolveArtifact } from './model/artifactOwner';
import type { AttemptViews } from './attemptViews';
import { latestStartedAttempt } from './model/attempts';
import type { ResultDiagnostics } from './diagnostics';
import { describeDecision, plain } from './model/gateNotice';
import { eventLine, stopNotice } from './model/notices';
import type { HiddenRuns } from './hiddenRuns';
import { describeError, TrustRequiredError, UserFacingError, type BatonSession } from './session';
import { runsByPlace } from './model/viewRows';
import type { GateNode, RunsNode, WorkerNode } from './views';

type Node = RunsNode | GateNode | WorkerNode | undefined;

/** What a result CodeLens hands the ingest command: the file, and the target the lens showed. */
interface IngestArgs {
  uri: string;
  runId?: string;
  delegationId?: string;
}

/** Every command guards its own preconditions and reports a clear message, never a stack trace. */
function command(
  id: string,
  run: (...args: never[]) => Promise<unknown>,
  log: vscode.LogOutputChannel,
): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: never[]) => {
    try {
      return await run(...args);
    } catch (err) {
      const message = describeError(err);
      log.warn(`${id}: ${message}`);
      if (err instanceof TrustRequiredError)
        void offerTrust(message, () => vscode.commands.executeCommand(id, ...args), log);
      else if (BatonError.is(err, 'worker.missing'))
        // A worker's program is not installed: nothing was dispatched; Doctor says what else is missing.
        void vscode.window.showErrorMessage(message, 'Run Doctor').then((pick) => {
          if (pick) void vscode.commands.executeCommand('baton.doctor');
        });
      else void vscode.window.showErrorMessage(message);
      return undefined;
    }
  });
}

const MANAGE_TRUST = 'Manage Workspace Trust';
/** How long a refused command waits for the trust it asked for before it is forgotten. */
const TRUST_RETRY_WINDOW_MS = 10 * 60_000;

/**
 * The refusal in Restricted Mode carries the way out: VS Code's trust editor. The command
 * the person asked for runs once the workspace is trusted, so trusting is the last click.
 */
async function offerTrust(
  message: string,
  retry: () => Thenable<unknown>,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const pick = await vscode.window.showWarningMessage(message, MANAGE_TRUST);
  if (pick !== MANAGE_TRUST) return;
  const granted = vscode.workspace.onDidGrantWorkspaceTrust(() => {
    granted.dispose();
    clearTimeout(expiry);
    log.info('The workspace is trusted now; running the command that waited for it.');
    void Promise.resolve(retry()).then(undefined, (err: unknown) => log.warn(describeError(err)));
  });
  const expiry = setTimeout(() => granted.dispose(), TRUST_RETRY_WINDOW_MS);
  await vscode.commands.executeCommand('workbench.trust.manage');
}

/** The runs a command applies to, by status (the same rule as the menus' when-clauses, viewRows.runActions). */
const APPLIES: Record<'stop' | 'resume' | 'cancel' | 'any', (status: RunStatus) => boolean> = {
  stop: (status) => status === 'running' || status === 'stopping',
  resume: (status) => !isFinishedRun(status),
  cancel: (status) => !isFinishedRun(status),
  any: (status) => status !== 'superseded',
};

export function registerCommands(
  session: BatonSession,
  diagnostics: ResultDiagnostics,
  attemptViews: AttemptViews,
  hidden: HiddenRuns,
): vscode.Disposable[] {
  const log = session.log;
  const engine = (): Promise<Engine> => session.engine();

  /**
   * The run a command is for: the node's, else a quick pick of the runs it applies to. A run
   * given that it does not apply to (a stale menu, a palette argument) is refused with why.
   */
  async function pickRun(node: Node, what: string, applies: keyof typeof APPLIES = 'any'): Promise<string> {
    if (node && 'runId' in node) {
      const run = await (await engine()).getRun(node.runId);
      if (!APPLIES[applies](run.status))
        throw new UserFacingError(`Run ${run.id} is ${run.status}: ${what} does not apply to it.`);
      return run.id;
    }
    const runs = (await (await engine()).listRuns()).filter((r) => APPLIES[applies](r.status));
    if (runs.length === 0)
      throw new UserFacingError(
        applies === 'any'
          ? 'There is no Baton run in this workspace yet.'
          : `No run is in a state to ${what.toLowerCase()}.`,
      );
    if (runs.length === 1) return runs[0]!.id;
    const pick = await vscode.window.showQuickPick(
      runs.map((r) => ({ label: r.id, description: `${r.status} · ${r.planPath}` })),
      { title: `Baton: ${what}`, placeHolder: 'Which run?' },
    );
    if (!pick) throw new UserFacingError('No run chosen.');
    return pick.label;
  }

  async function pickPlan(uri?: vscode.Uri): Promise<vscode.Uri> {
    if (uri instanceof vscode.Uri) return uri;
    const active = vscode.window.activeTextEditor?.document;
    if (active?.languageId === 'markdown' && active.getText().includes('```baton-task')) return active.uri;
    const candidates: vscode.Uri[] = [];
    for (const file of await vscode.workspace.findFiles(
      new vscode.RelativePattern(session.folder, '**/*.md'),
      '{**/node_modules/**,**/.baton/**}',
      200,
    )) {
      const text = Buffer.from(await vscode.workspace.fs.readFile(file)).toString('utf8');
      if (text.includes('```baton-task')) candidates.push(file);
    }
    if (candidates.length === 0)
      throw new UserFacingError(
        'No plan found: a plan is a markdown file with ```baton-task blocks. Run "Baton: Create Example Plan" to get one.',
      );
    if (candidates.length === 1) return candidates[0]!;
    const pick = await vscode.window.showQuickPick(
      candidates.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u })),
      { title: 'Baton: Start Run', placeHolder: 'Which plan?' },
    );
    if (!pick) throw new UserFacingError('No plan chosen.');
    return pick.uri;
  }

  async function delegationOf(node: Node): Promise<Delegation> {
    const e = await engine();
    if (node?.kind === 'delegation') {
      const found = (await e.overview(node.runId)).delegations.find((d) => d.id === node.delegationId);
      if (found) return found;
    }
    if (node?.kind === 'runtime') {
      const view = await e.overview(node.runId);
      const runtime = view.runtimes.find((r) => r.id === node.runtimeId);
      const found = view.delegations.find((d) => d.id === runtime?.delegationId);
      if (found) return found;
    }
    throw new UserFacingError('Choose a delegation in the Runs view.');
  }

  /** The attempt a node stands for: a delegation, a worker's, a task's latest; else picked from the newest runs. */
  async function attemptOf(node: Node, what: string): Promise<{ runId: string; delegationId: string }> {
    if (node?.kind === 'delegation') return { runId: node.runId, delegationId: node.delegationId };
    const e = await engine();
    if (node?.kind === 'runtime' || node?.kind === 'task') {
      const view = await e.overview(node.runId);
      const found =
        node.kind === 'task'
          ? latestStartedAttempt(view, node.taskId)
          : view.delegations.find((d) => d.id === view.runtimes.find((r) => r.id === node.runtimeId)?.delegationId);
      if (!found)
        throw new UserFacingError(
          node.kind === 'task' ? `${node.taskId} has not started yet.` : 'That worker is gone.',
        );
      return { runId: found.runId, delegationId: found.id };
    }
    const attempts: Delegation[] = [];
    for (const run of (await e.listRuns()).slice(0, 3))
      attempts.push(...(await e.overview(run.id)).delegations.filter((d) => d.startedAt !== undefined).reverse());
    if (attempts.length === 0) throw new UserFacingError('No attempt has started yet.');
    const pick = await vscode.window.showQuickPick(
      attempts.map((d) => ({ label: d.id, description: `${d.status} · ${d.runId}`, d })),
      { title: `Baton: ${what}`, placeHolder: 'Which attempt?' },
    );
    if (!pick) throw new UserFacingError('No attempt chosen.');
    return { runId: pick.d.runId, delegationId: pick.d.id };
  }

  /**
   * A plan the person chose, checked: with errors it is opened and refused (the errors are in
   * Problems). An edit left unsaved in an editor is saved first: a run is of the plan as the
   * person sees it, not of an older text on disk (as Ingest saves an artifact first).
   */
  async function validPlan(uri?: vscode.Uri): Promise<{ uri: vscode.Uri; path: string }> {
    const planUri = await pickPlan(uri);
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === planUri.toString());
    if (open?.isDirty && !(await open.save()))
      throw new UserFacingError(
        `${vscode.workspace.asRelativePath(planUri)} could not be saved; save it to start a run.`,
      );
    const plan = readPlan(session.workspace, planUri.fsPath);
    if (hasErrors(plan.parsed.issues)) {
      await vscode.window.showTextDocument(planUri);
      throw new UserFacingError(`${plan.path} has errors (see Problems); fix them to start a run.`);
    }
    return { uri: planUri, path: plan.path };
  }

  /** Coordinates the run from this window and says so (or who drives it instead). */
  async function driveAndTell(run: Run, verb: string): Promise<void> {
    const driving = await session.drive(run.id);
    void vscode.window.showInformationMessage(
      driving
        ? `Baton ${verb} run ${run.id} of ${run.planPath}.`
        : `Run ${run.id} is already driven by another window or process; this window shows it.`,
    );
    void vscode.commands.executeCommand('baton.runs.focus');
  }

  /**
   * The plan's run to go on with: its active run, or a new one. When the plan changed since its
   * active run started, the person chooses: a new run of the plan as it is now, or a replan of
   * that run (its completed tasks carry over); undefined when they choose neither. Never the
   * engine's "start fresh with --new", a CLI flag (issue #14).
   */
  async function runOfPlan(plan: { uri: vscode.Uri; path: string }): Promise<{ run: Run; verb: string } | undefined> {
    const e = await engine();
    try {
      const opened = await e.runForPlan(plan.uri.fsPath);
      return { run: opened.run, verb: opened.created ? 'started' : 'continues' };
    } catch (err) {
      if (!BatonError.is(err, 'run.plan-changed')) throw err;
    }
    const active = (await e.listRuns()).find((r) => r.planPath === plan.path && !isFinishedRun(r.status));
    const NEW = 'Start a New Run';
    const REPLAN = 'Replan';
    const pick = await vscode.window.showWarningMessage(
      `${plan.path} changed since run ${active?.id ?? ''} started from it. Start a new run of the plan as it is now, or replan ${active?.id ?? 'that run'} (its completed tasks carry over)?`,
      NEW,
      ...(active ? [REPLAN] : []),
    );
    if (pick === NEW) return { run: (await e.runForPlan(plan.uri.fsPath, { fresh: true })).run, verb: 'started a new' };
    if (pick === REPLAN && active) return replan(active.id, plan.uri);
    return undefined;
  }

  /** Continues the plan's active run, or starts one (asking when the plan changed since that run started). */
  async function startRun(uri?: vscode.Uri): Promise<void> {
    session.requireTrust('start a run');
    const opened = await runOfPlan(await validPlan(uri));
    if (opened) await driveAndTell(opened.run, opened.verb);
  }

  /** Always a new run of the plan (the CLI's `start --new`), whatever its other runs are doing. */
  async function startNewRun(arg?: vscode.Uri | Node): Promise<void> {
    session.requireTrust('start a run');
    let uri: vscode.Uri | undefined;
    if (arg instanceof vscode.Uri) uri = arg;
    else if (arg && 'runId' in arg) {
      const { planPath } = await (await engine()).getRun(arg.runId);
      uri = vscode.Uri.file(isAbsolute(planPath) ? planPath : join(session.workspace, planPath));
    }
    const plan = await validPlan(uri);
    const { run } = await (await engine()).runForPlan(plan.uri.fsPath, { fresh: true });
    await driveAndTell(run, 'started a new');
  }

  /** Maps a run onto a plan (its completed tasks carry over); the caller drives the new run. */
  async function replan(runId: string, planUri: vscode.Uri): Promise<{ run: Run; verb: string }> {
    const outcome = await (await engine()).replan({ runId, planPath: planUri.fsPath });
    const carried = counted(outcome.carried.length, 'completed task');
    log.info(`${runId} replanned as ${outcome.run.id}; ${carried} carried over`);
    await session.runState?.refreshNow();
    return { run: outcome.run, verb: `replanned ${runId} (${carried} carried over) as` };
  }

  /**
   * Ends a run for good, after the person confirms: its workers are ended (and proven gone),
   * its gates closed, its attempts and tasks cancelled (Engine.cancelRun).
   */
  async function cancelRun(node: Node): Promise<void> {
    const runId = await pickRun(node, 'Cancel Run', 'cancel');
    const CANCEL = 'Cancel Run';
    const confirmed = await vscode.window.showWarningMessage(
      `Cancel run ${runId}? Its workers are ended, its open gates closed and its unfinished tasks cancelled. A cancelled run cannot be resumed; its plan can be started again.`,
      { modal: true },
      CANCEL,
    );
    if (confirmed !== CANCEL) return;
    const outcome = await (await engine()).cancelRun({ runId, by: 'VS Code' });
    await session.runState?.refreshNow();
    const report = outcome.stop?.report ?? [];
    const unconfirmed = report.filter((entry) => !entry.confirmed);
    const message = outcome.alreadyCancelled
      ? `Run ${runId} was already cancelled.`
      : `Cancelled run ${runId}: ${counted(outcome.attemptsCancelled.length, 'attempt')} ended${report.length ? (unconfirmed.length ? `, ${unconfirmed.length} NOT confirmed gone` : ', their processes are gone') : ''}; ${counted(outcome.tasksCancelled, 'task')} cancelled, ${counted(outcome.gatesClosed, 'gate')} closed.`;
    if (unconfirmed.length) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  }

  /** Finished runs leave the Runs view (hidden in this workspace's editor state; the store keeps them). */
  async function removeRuns(node: Node): Promise<void> {
    const cache = session.runState;
    if (!cache) return;
    let ids: string[];
    if (node?.kind === 'history') ids = runsByPlace(cache, (id) => hidden.has(id)).history.map((r) => r.id);
    else {
      const runId = await pickRun(node, 'Remove from View');
      const run = cache.runs.find((r) => r.id === runId) ?? (await (await engine()).getRun(runId));
      if (!isFinishedRun(run.status))
        throw new UserFacingError(`Run ${runId} is ${run.status}; only a finished run can be removed from the view.`);
      ids = [runId];
    }
    await hidden.hide(ids);
    log.info(`Removed from the Runs view: ${ids.join(', ')} (Show Removed Runs brings them back).`);
  }

  /** "Check Again" on an isolation gate: closes by itself when the tree is clean now, and the run goes on. */
  async function recheckIsolation(node: Node): Promise<void> {
    const e = await engine();
    const gateId =
      node?.kind === 'gate'
        ? node.gateId
        : ((await e.listGates({ status: 'open' })).find((g) => g.kind === 'isolation')?.id ??
          (() => {
            throw new UserFacingError('No isolation gate is open.');
          })());
    const [checked] = await e.recheckIsolation({ gateId });
    await session.runState?.refreshNow();
    if (!checked) return;
    if (!checked.resolved) {
      void vscode.window.showWarningMessage(`${checked.gate.id} still waits: ${checked.reason}`);
      return;
    }
    void vscode.window.showInformationMessage(`${checked.gate.id} closed: ${checked.reason}.`);
    await continueIfReleased(checked.gate.runId);
  }

  async function runTask(arg?: RunsNode | { planUri: string; taskId: string }): Promise<void> {
    session.requireTrust('run a task');
    let runId: string;
    let taskId: string;
    if (arg && 'planUri' in arg) {
      const opened = await runOfPlan(await validPlan(vscode.Uri.parse(arg.planUri)));
      if (!opened) return;
      runId = opened.run.id;
      taskId = arg.taskId;
    } else if (arg?.kind === 'task') {
      runId = arg.runId;
      taskId = arg.taskId;
    } else throw new UserFacingError('Choose a task in the Runs view or in its plan.');
    const driving = await session.drive(runId, { tasks: [taskId] });
    if (!driving)
      void vscode.window.showInformationMessage(
        `Run ${runId} is driven by another window or process; it dispatches ${taskId} when it is ready.`,
      );
  }

  /**
   * Decides a gate. A gate decided meanwhile (elsewhere, or from a notification that had not
   * caught up) is not an error: the person is told who decided it, and nothing changes.
   */
  async function decide(node: Node, decision: 'approved' | 'rejected'): Promise<void> {
    const e = await engine();
    const gateId = node?.kind === 'gate' ? node.gateId : await pickGate(e);
    if (!gateId) return;
    const runId = node?.kind === 'gate' ? node.runId : undefined;
    const gate = (await e.listGates(runId ? { runId } : {})).find((g) => g.id === gateId);
    if (!gate) throw new UserFacingError(`There is no gate ${gateId}.`);
    if (gate.status !== 'open') return alreadyDecided(gate, decision);
    let accept = false;
    let note: string | undefined;
    const givenAccept = (node as { accept?: unknown } | undefined)?.accept;
    if (decision === 'approved' && gate.kind === 'verification_failed' && typeof givenAccept === 'boolean')
      accept = givenAccept;
    else if (decision === 'approved' && gate.kind === 'verification_failed') {
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'Retry the task', description: 'a new attempt', accept: false },
          { label: 'Accept the result', description: 'as it is, although verification failed', accept: true },
        ],
        { title: `Approve ${gate.id}` },
      );
      if (!pick) return;
      accept = pick.accept;
    }
    const given = (node as { note?: unknown } | undefined)?.note;
    if (typeof given === 'string' && given.trim()) note = given.trim();
    else if (decision === 'rejected') {
      note = await vscode.window.showInputBox({
        title: `Reject ${gate.id}`,
        prompt: gate.reason,
        placeHolder: 'Why? (kept with the decision)',
        validateInput: (v) => (v.trim() ? undefined : 'Say why, for the record.'),
      });
      if (note === undefined) return;
    }
    let outcome: Awaited<ReturnType<Engine['decideGate']>>;
    try {
      outcome = await e.decideGate({
        gateId: gate.id,
        decision,
        ...(note ? { note } : {}),
        ...(accept ? { accept } : {}),
      });
    } catch (err) {
      // Decided by someone else while the quick pick or the note was open.
      if (!BatonError.is(err, 'gate.already-decided')) throw err;
      const now = (await e.listGates({ runId: gate.runId })).find((g) => g.id === gate.id);
      if (!now || now.status === 'open') throw err;
      return alreadyDecided(now, decision);
    }
    if (outcome.alreadyDecided) return alreadyDecided(outcome.gate, decision);
    log.info(`${gate.id} ${decision}${accept ? ' (accepted)' : ''} by ${outcome.gate.decidedBy}`);
    await session.runState?.refreshNow();
    // Either way: a rejection releases work too (an isolation gate's other tasks, a task's siblings).
    await continueIfReleased(gate.runId);
  }

  /**
   * The gate was decided before this decision arrived: say by whom, change nothing. When it was
   * approved, as this person wanted, the run goes on here if nobody drives it.
   */
  async function alreadyDecided(gate: Gate, wanted: 'approved' | 'rejected'): Promise<void> {
    const said = describeDecision(gate, (await engine()).now());
    log.info(`${wanted === 'approved' ? 'Approve' : 'Reject'} ${gate.id}: ${said}`);
    void vscode.window.showInformationMessage(said);
    await session.runState?.refreshNow();
    if (wanted === 'approved' && gate.status === 'approved') await continueIfReleased(gate.runId);
  }

  /**
   * A decision taken here (approve, reject, the isolation answer, a replan, a result ingested)
   * may have released work: when nothing drives the run, this window drives it on — in a
   * trusted workspace. A run another window or process drives is left to it.
   */
  async function continueIfReleased(runId: string): Promise<void> {
    if (!vscode.workspace.isTrusted || session.drivenRuns.includes(runId)) return;
    const run = await (await engine()).getRun(runId);
    if (run.status !== 'running') return;
    await session.drive(run.id).catch((err: unknown) => log.warn(describeError(err)));
  }

  /** A gate to decide, from a quick pick; none waiting is information, not an error. */
  async function pickGate(e: Engine): Promise<string | undefined> {
    const open = await e.listGates({ status: 'open' });
    if (open.length === 0) {
      void vscode.window.showInformationMessage('No gate is waiting for a decision.');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      open.map((g) => ({ label: g.id, description: g.kind, detail: g.reason })),
      { title: 'Baton: which gate?' },
    );
    return pick?.label;
  }

  async function stopRun(node: Node, mode?: 'graceful' | 'immediate'): Promise<void> {
    const runId = await pickRun(node, 'Stop Run', 'stop');
    const chosen =
      mode ??
      (
        await vscode.window.showQuickPick(
          [
            { label: 'Graceful', description: 'finish what runs, start nothing new', mode: 'graceful' as const },
            { label: 'Immediate', description: 'end every worker process now', mode: 'immediate' as const },
          ],
          { title: `Stop ${runId}` },
        )
      )?.mode;
    if (!chosen) return;
    const outcome = await (await engine()).requestStop({ runId, mode: chosen, by: 'VS Code' });
    const notice = stopNotice(runId, outcome);
    log.info(notice.message);
    if (notice.level === 'warning') void vscode.window.showWarningMessage(notice.message);
    else void vscode.window.showInformationMessage(notice.message);
    await session.runState?.refreshNow();
  }

  async function stopDelegation(node: Node): Promise<void> {
    const delegation = await delegationOf(node);
    const { request } = await (
      await engine()
    ).requestStop({ runId: delegation.runId, delegationId: delegation.id, mode: 'immediate', by: 'VS Code' });
    void vscode.window.showInformationMessage(
      `Stopped ${delegation.id}${request.report.every((r) => r.confirmed) ? '; its processes are gone' : '; termination NOT confirmed'}.`,
    );
    await session.runState?.refreshNow();
  }

  /**
   * Hands a result artifact in. The file is resolved to the delegation of the run it belongs
   * to (resolveArtifact): from a CodeLens, the lens's delegation must still be that target; a
   * file another run owns, or whose attempt or run takes no result any more, is refused with
   * a message that names the run, and nothing is written (the engine refuses it too).
   */
  async function ingest(arg?: vscode.Uri | IngestArgs | RunsNode): Promise<IngestOutcome | undefined> {
    session.requireTrust('ingest a result (verification runs commands)');
    const e = await engine();
    const cache = session.runState;
    await cache?.refreshNow();
    let uri: vscode.Uri;
    let chosen: { runId: string; delegationId: string } | undefined;
    if (arg && 'kind' in arg && arg.kind === 'delegation') {
      // From the Runs view: this attempt, with its own result file (or one the person picks).
      const d = await delegationOf(arg);
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
    if (document?.isDirty) await document.save();
    log.info(`Ingesting ${vscode.workspace.asRelativePath(uri)} for ${chosen.delegationId} of ${chosen.runId}.`);
    const outcome = await e.ingest({ ...chosen, artifactPath: uri.fsPath });
    log.info(
      `${outcome.record.id}: ${outcome.record.accepted ? `accepted ${outcome.record.resultStatus}` : 'rejected'} for ${chosen.delegationId}${outcome.duplicate ? ' (the same result as before: nothing changed)' : ''}.`,
    );
    diagnostics.show(uri, outcome);
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
    if (r.accepted && !outcome.duplicate) await continueIfReleased(d.runId);
    return outcome;
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

  async function openPath(path: string | undefined, what: string): Promise<void> {
    if (!path) throw new UserFacingError(`There is no ${what} for this yet.`);
    const absolute = path.startsWith('/') || /^[A-Za-z]:/.test(path) ? path : join(session.workspace, path);
    await vscode.window.showTextDocument(vscode.Uri.file(absolute), { preview: true });
  }

  return [
    command('baton.startRun', startRun, log),
    command('baton.startNewRun', startNewRun, log),
    command('baton.cancelRun', cancelRun, log),
    command('baton.removeRun', removeRuns, log),
    command(
      'baton.showRemovedRuns',
      async () => {
        await hidden.showAll();
      },
      log,
    ),
    command('baton.recheckIsolation', recheckIsolation, log),
    command('baton.runTask', runTask, log),
    command('baton.approveGate', (node: Node) => decide(node, 'approved'), log),
    command('baton.rejectGate', (node: Node) => decide(node, 'rejected'), log),
    command(
      'baton.stopRun',
      (node: Node, mode?: unknown) => stopRun(node, mode === 'graceful' || mode === 'immediate' ? mode : undefined),
      log,
    ),
    command('baton.stopRunImmediately', (node: Node) => stopRun(node, 'immediate'), log),
    command('baton.stopDelegation', stopDelegation, log),
    command('baton.ingestArtifact', ingest, log),
    command(
      'baton.resumeRun',
      async (node: Node) => {
        const runId = await pickRun(node, 'Resume Run', 'resume');
        const e = await engine();
        // What kept a task out of its worktree may be fixed by now: its isolation gate closes by itself.
        for (const checked of await e.recheckIsolation({ runId }))
          log.info(`${checked.gate.id}: ${checked.resolved ? 'closed' : 'still waits'}: ${checked.reason}`);
        await e.liftStops(runId);
        if (!(await session.drive(runId)))
          void vscode.window.showInformationMessage(`Run ${runId} is driven by another window or process.`);
      },
      log,
    ),
    command(
      'baton.reconcileRun',
      async (node: Node) => {
        const report = await (await engine()).reconcile(await pickRun(node, 'Reconcile Run'));
        for (const entry of report.entries)
          log.info(
            `reconcile ${entry.taskId}${entry.delegationId ? ` ${entry.delegationId}` : ''}: ${entry.classification}${entry.repair ? ` → ${entry.repair}` : ''}`,
          );
        const repairs = report.entries.filter((x) => x.repair).length;
        void vscode.window.showInformationMessage(
          report.reportOnly
            ? `Run ${report.runId} is driven by ${report.coordinator}; nothing changed (see the Baton log).`
            : `Reconciled ${report.runId}: ${repairs} repair${repairs === 1 ? '' : 's'} (see the Baton log).`,
        );
        await session.runState?.refreshNow();
      },
      log,
    ),
    command(
      'baton.replanRun',
      async (node: Node) => {
        const runId = await pickRun(node, 'Replan Run');
        const picked = await vscode.window.showOpenDialog({
          title: `Replan ${runId}: the new plan`,
          defaultUri: session.folder.uri,
          filters: { Markdown: ['md'] },
          canSelectMany: false,
        });
        if (!picked?.[0]) return;
        const outcome = await (await engine()).replan({ runId, planPath: picked[0].fsPath });
        await session.runState?.refreshNow();
        const replanned = `Run ${runId} is superseded by ${outcome.run.id}; ${counted(outcome.carried.length, 'completed task')} carried over`;
        await continueIfReleased(outcome.run.id);
        if (session.drivenRuns.includes(outcome.run.id)) {
          void vscode.window.showInformationMessage(`${replanned}; this window drives it.`);
          return;
        }
        void vscode.window.showInformationMessage(`${replanned}.`, 'Resume').then((pick) => {
          if (pick)
            void vscode.commands.executeCommand('baton.resumeRun', {
              kind: 'run',
              id: `run:${outcome.run.id}`,
              runId: outcome.run.id,
            });
        });
      },
      log,
    ),
    command(
      'baton.openArtifact',
      async (node: Node) => {
        const d = await delegationOf(node);
        // The newest result of this attempt: its file when it is here, else its content from the store.
        const record = [...(session.runState?.ingestions(d.runId) ?? [])]
          .reverse()
          .find((r) => r.delegationId === d.id);
        if (!record) return openPath(d.artifactPath, 'artifact');
        await vscode.window.showTextDocument(artifactDocumentUri(session.workspace, record), { preview: true });
      },
      log,
    ),
    command(
      'baton.openLog',
      async (node: Node) => {
        const d = await delegationOf(node);
        await openPath(runPaths(session.workspace, d.runId).log(d.id), 'log');
      },
      log,
    ),
    command(
      'baton.showEvents',
      async (node: Node) => {
        const e = await engine();
        const runId = await pickRun(node, 'Show Events');
        log.info(`── events of ${runId} ──`);
        for (const ev of await e.listEvents(runId)) log.info(eventLine(ev));
        log.show(true);
      },
      log,
    ),
    command(
      'baton.doctor',
      async () => {
        const checks = await Engine.doctor({ workspace: session.workspace });
        log.info('── Baton doctor ──');
        for (const check of checks) {
          const line = `${check.status === 'ok' ? '✓' : check.status === 'warn' ? '!' : '✗'} ${check.name}: ${check.detail}`;
          if (check.status === 'fail') log.error(line);
          else if (check.status === 'warn') log.warn(line);
          else log.info(line);
        }
        const failed = checks.filter((c) => c.status === 'fail');
        const warned = checks.filter((c) => c.status === 'warn').length;
        const summary = failed.length
          ? `Baton doctor: ${failed.map((c) => c.name).join(', ')} ${failed.length === 1 ? 'blocks' : 'block'} a run — ${failed[0]!.detail}`
          : `Baton doctor: ready to run${warned ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}.`;
        const shown = failed.length
          ? vscode.window.showErrorMessage(summary, 'Show Log')
          : vscode.window.showInformationMessage(summary, 'Show Log');
        void shown.then((pick) => pick && log.show(true));
        return checks;
      },
      log,
    ),
    command('baton.refresh', async () => session.runState?.refreshNow(), log),
    command(
      'baton.showChanges',
      async (node: Node) => {
        const { runId, delegationId } = await attemptOf(node, 'Show Changes');
        await attemptViews.showChanges(runId, delegationId);
      },
      log,
    ),
    command(
      'baton.showOutput',
      async (node: Node) => {
        const { runId, delegationId } = await attemptOf(node, 'Show Output');
        await attemptViews.showOutput(runId, delegationId);
      },
      log,
    ),
  ];
}
