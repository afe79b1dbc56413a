import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  BatonError,
  counted,
  Engine,
  hasErrors,
  readPlan,
  runPaths,
  type Delegation,
  type IngestOutcome,
} from '../engine/index';
import type { AttemptViews } from './attemptViews';
import { latestStartedAttempt } from './attempts';
import type { ResultDiagnostics } from './diagnostics';
import { eventLine, stopNotice } from './notices';
import { describeError, TrustRequiredError, UserFacingError, type BatonSession } from './session';
import type { GateNode, RunsNode, WorkerNode } from './views';

type Node = RunsNode | GateNode | WorkerNode | undefined;

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

export function registerCommands(
  session: BatonSession,
  diagnostics: ResultDiagnostics,
  attemptViews: AttemptViews,
): vscode.Disposable[] {
  const log = session.log;
  const engine = (): Promise<Engine> => session.engine();

  async function pickRun(node: Node, what: string): Promise<string> {
    if (node && 'runId' in node) return node.runId;
    const runs = (await (await engine()).listRuns()).filter((r) => r.status !== 'superseded');
    if (runs.length === 0) throw new UserFacingError('There is no Baton run in this workspace yet.');
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

  async function startRun(uri?: vscode.Uri): Promise<void> {
    session.requireTrust('start a run');
    const planUri = await pickPlan(uri);
    const plan = readPlan(session.workspace, planUri.fsPath);
    if (hasErrors(plan.parsed.issues)) {
      await vscode.window.showTextDocument(planUri);
      throw new UserFacingError(`${plan.path} has errors (see Problems); fix them to start a run.`);
    }
    const { run, created } = await (await engine()).runForPlan(planUri.fsPath);
    const driving = await session.drive(run.id);
    void vscode.window.showInformationMessage(
      driving
        ? `Baton ${created ? 'started' : 'continues'} run ${run.id} of ${run.planPath}.`
        : `Run ${run.id} is already driven by another window or process; this window shows it.`,
    );
    void vscode.commands.executeCommand('baton.runs.focus');
  }

  async function runTask(arg?: RunsNode | { planUri: string; taskId: string }): Promise<void> {
    session.requireTrust('run a task');
    let runId: string;
    let taskId: string;
    if (arg && 'planUri' in arg) {
      const { run } = await (await engine()).runForPlan(vscode.Uri.parse(arg.planUri).fsPath);
      runId = run.id;
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

  async function decide(node: Node, decision: 'approved' | 'rejected'): Promise<void> {
    const e = await engine();
    const gateId = node?.kind === 'gate' ? node.gateId : await pickGate(e);
    const gate = (await e.listGates({ status: 'open' })).find((g) => g.id === gateId);
    if (!gate) throw new UserFacingError(`Gate ${gateId} is no longer open.`);
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
    const outcome = await e.decideGate({
      gateId: gate.id,
      decision,
      ...(note ? { note } : {}),
      ...(accept ? { accept } : {}),
    });
    log.info(`${gate.id} ${decision}${accept ? ' (accepted)' : ''} by ${outcome.gate.decidedBy}`);
    await session.runState?.refreshNow();
    if (decision === 'approved') await continueIfReleased(gate.runId);
  }

  /** A decision or a result may have released work: keep the run going if nobody drives it. */
  async function continueIfReleased(runId: string): Promise<void> {
    if (!vscode.workspace.isTrusted || session.drivenRuns.includes(runId)) return;
    const run = await (await engine()).getRun(runId);
    if (run.status === 'running') await session.drive(run.id).catch((err: unknown) => log.warn(describeError(err)));
  }

  async function pickGate(e: Engine): Promise<string> {
    const open = await e.listGates({ status: 'open' });
    if (open.length === 0) throw new UserFacingError('No gate is waiting for a decision.');
    const pick = await vscode.window.showQuickPick(
      open.map((g) => ({ label: g.id, description: g.kind, detail: g.reason })),
      { title: 'Baton: which gate?' },
    );
    if (!pick) throw new UserFacingError('No gate chosen.');
    return pick.label;
  }

  async function stopRun(node: Node, mode?: 'graceful' | 'immediate'): Promise<void> {
    const runId = await pickRun(node, 'Stop Run');
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

  async function ingest(
    arg?: vscode.Uri | { delegationId: string; runId: string; uri: string },
  ): Promise<IngestOutcome | undefined> {
    session.requireTrust('ingest a result (verification runs commands)');
    const e = await engine();
    let uri: vscode.Uri;
    let delegationId: string;
    let runId: string | undefined;
    if (arg && !(arg instanceof vscode.Uri)) {
      uri = vscode.Uri.parse(arg.uri);
      delegationId = arg.delegationId;
      runId = arg.runId;
    } else {
      uri =
        arg ??
        vscode.window.activeTextEditor?.document.uri ??
        (() => {
          throw new UserFacingError('Open the result artifact first.');
        })();
      const open = (await e.listRuns()).slice(0, 5);
      const candidates: Delegation[] = [];
      for (const run of open)
        candidates.push(
          ...(await e.overview(run.id)).delegations.filter((d) => d.status === 'RUNNING' || d.status === 'BLOCKED'),
        );
      if (candidates.length === 0) throw new UserFacingError('No delegation is waiting for a result.');
      const pick = await vscode.window.showQuickPick(
        candidates.map((d) => ({ label: d.id, description: `${d.status} · ${d.runId}`, d })),
        { title: 'Ingest for which delegation?' },
      );
      if (!pick) return undefined;
      delegationId = pick.d.id;
      runId = pick.d.runId;
    }
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (document?.isDirty) await document.save();
    const outcome = await e.ingest({ delegationId, artifactPath: uri.fsPath, ...(runId ? { runId } : {}) });
    diagnostics.show(uri, outcome);
    const r = outcome.record;
    if (r.accepted)
      void vscode.window.showInformationMessage(
        `${r.id}: accepted ${r.resultStatus} for ${delegationId}; ${outcome.delegation.status}.`,
      );
    else
      void vscode.window.showWarningMessage(
        `${r.id}: the result for ${delegationId} was rejected (${r.issues.filter((i) => i.severity === 'error').length} issues, see Problems).`,
      );
    await session.runState?.refreshNow();
    if (r.accepted) await continueIfReleased(outcome.delegation.runId);
    return outcome;
  }

  async function openPath(path: string | undefined, what: string): Promise<void> {
    if (!path) throw new UserFacingError(`There is no ${what} for this yet.`);
    const absolute = path.startsWith('/') || /^[A-Za-z]:/.test(path) ? path : join(session.workspace, path);
    await vscode.window.showTextDocument(vscode.Uri.file(absolute), { preview: true });
  }

  return [
    command('baton.startRun', startRun, log),
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
        const runId = await pickRun(node, 'Resume Run');
        await (await engine()).liftStops(runId);
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
        void vscode.window
          .showInformationMessage(
            `Run ${runId} is superseded by ${outcome.run.id}; ${counted(outcome.carried.length, 'completed task')} carried over.`,
            'Resume',
          )
          .then((pick) => {
            if (pick)
              void vscode.commands.executeCommand('baton.resumeRun', {
                kind: 'run',
                id: `run:${outcome.run.id}`,
                runId: outcome.run.id,
              });
          });
        await session.runState?.refreshNow();
      },
      log,
    ),
    command(
      'baton.openArtifact',
      async (node: Node) => openPath((await delegationOf(node)).artifactPath, 'artifact'),
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
