import { join } from 'node:path';
import * as vscode from 'vscode';
import { runPaths, TranscriptRenderer, type AttemptChanges, type Engine } from '../engine/index';
import { attemptEndLine } from './model/attempts';
import { DisposableStore } from './lifecycle';
import { LogFollower } from './model/logFollower';
import { TerminalLines } from './model/terminalLines';
import { workspaceRelative } from './model/reviewDrafts';
import type { ReviewComments } from './reviewComments';
import type { BatonSession } from './session';

/** The scheme of a file's text at a commit Baton recorded (the left side of Show Changes). */
export const ATTEMPT_SCHEME = 'baton-attempt';

/** `baton-attempt:/<repository path>?repo=<folder>&commit=<id>`: read through the engine (git cat-file). */
export function attemptFileUri(repoRoot: string, commit: string, path: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: ATTEMPT_SCHEME,
    path: `/${path}`,
    query: new URLSearchParams({ repo: repoRoot, commit }).toString(),
  });
}

class AttemptFileProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly engine: () => Promise<Engine>) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = new URLSearchParams(uri.query);
    const repo = query.get('repo');
    const commit = query.get('commit');
    if (!repo || !commit) return '';
    return (await (await this.engine()).fileAtCommit(repo, commit, uri.path.slice(1))) ?? '';
  }
}

/**
 * Show Changes and Show Output for one attempt (docs/extension.md, "What a task changed, and
 * its output"): VS Code's own multi-file diff of what the attempt changed, and a terminal that
 * follows its worker's log.
 */
export class AttemptViews extends DisposableStore {
  /** One output terminal per attempt: asking again shows it. */
  private readonly terminals = new Map<string, vscode.Terminal>();
  /** The attempt Show Changes last opened: what Request Changes / Approve Review in its title are about. */
  private shown: { runId: string; taskId: string; delegationId: string } | undefined;

  /** The attempt whose changes Show Changes opened last, if any. */
  get lastShown(): { runId: string; taskId: string; delegationId: string } | undefined {
    return this.shown;
  }

  constructor(
    private readonly session: BatonSession,
    private readonly reviews: ReviewComments,
  ) {
    super();
    this._register(
      vscode.workspace.registerTextDocumentContentProvider(
        ATTEMPT_SCHEME,
        new AttemptFileProvider(() => session.engine()),
      ),
    );
    this._register(
      vscode.window.onDidCloseTerminal((closed) => {
        for (const [key, terminal] of this.terminals) if (terminal === closed) this.terminals.delete(key);
      }),
    );
  }

  /** Opens the multi-file diff of what the attempt changed, or says why it cannot. */
  async showChanges(runId: string, delegationId: string): Promise<void> {
    const changes = await (await this.session.engine()).attemptChanges(runId, delegationId);
    if (!changes.available) {
      void vscode.window.showInformationMessage(changes.reason);
      return;
    }
    if (changes.files.length === 0) {
      void vscode.window.showInformationMessage(`${delegationId} changed no file (${changes.summary}).`);
      return;
    }
    this.shown = { runId, taskId: changes.taskId, delegationId };
    // The diff's title offers Request Changes / Approve Review while the attempt waits at its review gate.
    const held = (await (await this.session.engine()).listGates({ runId, status: 'open' })).some(
      (g) => g.kind === 'review' && g.delegationId === delegationId,
    );
    void vscode.commands.executeCommand('setContext', 'baton.showsHeldReview', held);
    const resources = changes.files.map((file) => changeResource(changes, file));
    // The changed (right-hand) sides take review comments (reviewComments.ts); the left sides and other files do not.
    this.reviews.track(
      changes.files.flatMap((file, i) => {
        const after = resources[i]![2];
        return after
          ? [
              {
                uri: after,
                target: {
                  runId,
                  taskId: changes.taskId,
                  delegationId,
                  path: workspaceRelative(this.session.workspace, changes.repoRoot, file.path),
                },
              },
            ]
          : [];
      }),
    );
    await vscode.commands.executeCommand(
      'vscode.changes',
      `${delegationId} (${changes.taskId}): ${changes.summary}`,
      resources,
    );
    if (changes.note) this.session.log.info(`Show Changes ${delegationId}: ${changes.note}`);
  }

  /**
   * A terminal that follows the attempt's log live: what it holds now, then each new line once,
   * and a last line when the attempt's worker ended. For an attempt that is over, the whole log.
   */
  async showOutput(runId: string, delegationId: string): Promise<void> {
    const key = `${runId}/${delegationId}`;
    const open = this.terminals.get(key);
    if (open) {
      open.show();
      return;
    }
    const cache = this.session.runState;
    const logPath = runPaths(this.session.workspace, runId).log(delegationId);
    const writeEmitter = new vscode.EventEmitter<string>();
    // Whole lines only: the terminal re-wraps every line on a resize but the one its cursor is on (terminalLines.ts).
    const lines = new TerminalLines((text) => writeEmitter.fire(text));
    const write = (text: string): void => lines.push(text);
    const agentKind = await (await this.session.engine()).attemptAgentKind(runId, delegationId).catch(() => undefined);
    let transcriptEnd: (() => string) | undefined;
    let follower: LogFollower | undefined;
    let watching: vscode.Disposable | undefined;
    let ended = false;
    const end = async (line: string): Promise<void> => {
      if (ended) return;
      ended = true;
      watching?.dispose();
      await follower?.finish();
      if (transcriptEnd) write(transcriptEnd());
      lines.flush();
      write(`\n\u001b[2m── ${line} ──\u001b[0m\n`);
    };
    const checkEnded = (): void => {
      const view = cache?.overview(runId);
      const line = view ? attemptEndLine(view, delegationId) : undefined;
      if (line) void end(line);
    };
    const pty: vscode.Pseudoterminal = {
      onDidWrite: writeEmitter.event,
      open: () => {
        write(`\u001b[2m── ${delegationId}: ${vscode.workspace.asRelativePath(logPath)} ──\u001b[0m\n`);
        // An agent preset's log is its event stream: shown as the transcript a person reads (the file stays raw).
        const transcript = agentKind ? new TranscriptRenderer(agentKind, this.session.workspace) : undefined;
        transcriptEnd = transcript ? () => transcript.end() : undefined;
        follower = new LogFollower(logPath, transcript ? (text) => write(transcript.write(text)) : write);
        void follower.start().then(() => {
          if (cache) {
            watching = cache.onDidChange((change) => {
              const mine = (keys: ReadonlySet<string>): boolean => [...keys].some((k) => k.startsWith(`${runId}/`));
              if (change.structure || change.runs.has(runId) || mine(change.tasks) || mine(change.runtimes))
                checkEnded();
            });
            void cache.load(runId).then(checkEnded);
          }
        });
      },
      close: () => {
        watching?.dispose();
        follower?.dispose();
        lines.dispose();
        writeEmitter.dispose();
      },
    };
    const terminal = vscode.window.createTerminal({
      name: `Baton: ${delegationId}`,
      pty,
      iconPath: new vscode.ThemeIcon('output'),
      isTransient: true,
    });
    this.terminals.set(key, terminal);
    terminal.show();
  }

  override dispose(): void {
    for (const terminal of this.terminals.values()) terminal.dispose();
    this.terminals.clear();
    super.dispose();
  }
}

/** One row of the multi-file diff: its label, the before side, the after side (undefined: added or deleted). */
function changeResource(
  changes: Extract<AttemptChanges, { available: true }>,
  file: { path: string; change: 'added' | 'modified' | 'deleted' },
): [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined] {
  const before = file.change === 'added' ? undefined : attemptFileUri(changes.repoRoot, changes.before, file.path);
  const liveFolder = 'folder' in changes.after ? changes.after.folder : undefined;
  const after =
    file.change === 'deleted'
      ? undefined
      : liveFolder
        ? vscode.Uri.file(join(liveFolder, file.path))
        : attemptFileUri(changes.repoRoot, (changes.after as { commit: string }).commit, file.path);
  return [vscode.Uri.file(join(liveFolder ?? changes.repoRoot, file.path)), before, after];
}
