import {
  counted,
  isFinishedRun,
  isWaitingForLimit,
  type Gate,
  type Run,
  type RunOverview,
  type RunStatus,
} from '../../engine/index';
import { gateKindWords, plain } from './gateNotice';
import { runEndNotice } from './notices';
import { runActivity } from './viewRows';

/**
 * What waits on a person, in one model (docs/extension.md, "Attention"): derived from the runs the window holds, it
 * feeds the Baton view's badge, the status bar item and every notification that asks for a person. No vscode here.
 */

/**
 * - `gate`: an open gate of any kind (a budget gate too: it is decided like the others) — a decision waits;
 * - `question`: an agent's question (a `question` gate) — an answer waits;
 * - `stopped`: a run paused by a stop — Resume waits;
 * - `usage-limit`: a task held until its worker's usage limit resets — it resumes by itself, a person may switch it.
 */
export type AttentionKind = 'gate' | 'question' | 'stopped' | 'usage-limit';

/** Where clicking an item leads: a command with its argument. */
export interface AttentionTarget {
  command: string;
  args?: unknown;
}

export interface AttentionItem {
  /** One thing, once: the same gate, stop or hold has the same key in every window and after a reload. */
  key: string;
  kind: AttentionKind;
  runId: string;
  gateId?: string;
  taskId?: string;
  /** One line in words: what waits, and on what. */
  text: string;
  /** When it began to wait: items are listed oldest first. */
  since: number;
  target: AttentionTarget;
}

/** What the model reads: the runs the window holds, each with its overview once read (the run-state cache). */
export interface AttentionSource {
  readonly runs: readonly Run[];
  overview(runId: string): RunOverview | undefined;
  readonly now: number;
}

const SHOW_GATES: AttentionTarget = { command: 'baton.gates.focus' };
const SHOW_RUNS: AttentionTarget = { command: 'baton.runs.focus' };

/** Everything that waits on a person now, oldest first. A superseded or ended run waits for nothing. */
export function attentionItems(source: AttentionSource): AttentionItem[] {
  const items: AttentionItem[] = [];
  for (const listed of source.runs) {
    const view = source.overview(listed.id);
    const run = view?.run ?? listed;
    if (isFinishedRun(run.status)) continue;
    const titles = new Map(view?.tasks.map((t) => [t.id, t.title]) ?? []);
    for (const gate of view?.gates ?? []) {
      if (gate.status !== 'open') continue;
      items.push(gateItem(gate, gate.taskId ? titles.get(gate.taskId) : undefined));
    }
    if (runActivity(run, view, source.now).kind === 'stopped')
      items.push({
        key: `stopped:${run.id}@${run.updatedAt}`,
        kind: 'stopped',
        runId: run.id,
        text: `${run.id} (${planName(run.planPath)}) is stopped: Resume continues it`,
        since: run.updatedAt,
        target: SHOW_RUNS,
      });
    for (const task of view?.tasks ?? []) {
      if (task.status !== 'ready' || !isWaitingForLimit(task.statusReason)) continue;
      items.push({
        key: `usage-limit:${run.id}/${task.id}@${task.statusReason}`,
        kind: 'usage-limit',
        runId: run.id,
        taskId: task.id,
        text: `${subject(task.id, task.title)} is ${plain(task.statusReason!)} (its worker hit its usage limit; ${run.id})`,
        since: run.updatedAt,
        target: SHOW_RUNS,
      });
    }
  }
  return items.sort((a, b) => a.since - b.since);
}

function gateItem(gate: Gate, title: string | undefined): AttentionItem {
  const node = { kind: 'gate', id: `gate:${gate.id}`, runId: gate.runId, gateId: gate.id };
  const question = gate.kind === 'question';
  return {
    // The gate's id with its opening: a store made again from nothing reuses G-1 for another gate.
    key: `gate:${gate.id}@${gate.openedAt}`,
    kind: question ? 'question' : 'gate',
    runId: gate.runId,
    gateId: gate.id,
    ...(gate.taskId ? { taskId: gate.taskId } : {}),
    text: question
      ? `${gate.taskId ? subject(gate.taskId, title) : gate.id} asks: ${oneLine(gate.reason, 120)} (${gate.id})`
      : `${gate.id} ${kindWords(gate)}${gate.taskId ? ` of ${subject(gate.taskId, title)}` : ''} waits for a decision`,
    since: gate.openedAt,
    // Answer… opens the answer box; a decision is taken in the Gates view, where the gate shows with its reason.
    target: question ? { command: 'baton.answerQuestion', args: node } : SHOW_GATES,
  };
}

/** The badge of the Baton views (on the activity bar icon): how many things wait, and what, in its tooltip. */
export function attentionBadge(items: readonly AttentionItem[]): { value: number; tooltip: string } | undefined {
  if (items.length === 0) return undefined;
  return { value: items.length, tooltip: `Baton: ${waitingText(items)} — ${items.map((i) => i.text).join('; ')}` };
}

/** "2 gates waiting, 1 run stopped": the count by kind, as the status bar says it. */
export function waitingText(items: readonly AttentionItem[]): string {
  const of = (kinds: AttentionKind[]): number => items.filter((i) => kinds.includes(i.kind)).length;
  const gates = of(['gate', 'question']);
  const stopped = of(['stopped']);
  const held = of(['usage-limit']);
  return [
    gates ? `${counted(gates, 'gate')} waiting` : '',
    stopped ? `${counted(stopped, 'run')} stopped` : '',
    held ? `${counted(held, 'task')} held by a usage limit` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** Where the status bar item leads: to the oldest thing that waits (the Runs view when nothing does). */
export function attentionTarget(items: readonly AttentionItem[]): AttentionTarget {
  const first = items[0];
  // A question's answer box opens only from the item of that question: the status bar leads to the Gates view.
  if (!first) return SHOW_RUNS;
  return first.kind === 'question' ? SHOW_GATES : first.target;
}

/** A notice to give a person once: in this window, and (when the window is not focused) from the OS if set. */
export interface AttentionNotice {
  key: string;
  level: 'info' | 'warning';
  /** The whole sentence, for the window's notification. */
  message: string;
  /** The OS notification's title and body (short: a desktop notification shows a few lines). */
  title: string;
  body: string;
  /**
   * Whether this window shows it as a notification of its own: the open gates and questions are in the one gate
   * notification (gateNotifications.ts), which lists them all and stays current, so they are not said twice.
   */
  inWindow: boolean;
  target: AttentionTarget;
}

/**
 * The notices for what began to wait and has not been told yet (`told`: in this window or before a reload): a gate
 * opened, a question asked, a task held by a usage limit. A stop is the person's own act and is said where it is
 * taken (model/notices.ts, stopNotice); it is in the count, not told again.
 */
export function attentionNotices(items: readonly AttentionItem[], told: (key: string) => boolean): AttentionNotice[] {
  const notices: AttentionNotice[] = [];
  for (const item of items) {
    if (item.kind === 'stopped' || told(item.key)) continue;
    const title =
      item.kind === 'question'
        ? `Baton: a question from ${item.taskId ?? 'an agent'}`
        : item.kind === 'gate'
          ? `Baton: ${item.gateId} waits for a decision`
          : `Baton: ${item.taskId} held by a usage limit`;
    notices.push({
      key: item.key,
      level: 'info',
      message: `Baton: ${item.text}.`,
      title,
      body: item.text,
      inWindow: item.kind === 'usage-limit',
      target: item.target,
    });
  }
  return notices;
}

/**
 * The gate whose decision ended the run: decided in the transaction that moved the run to its end (a decision and
 * the run status it causes are written together, at one `now`). A gate Baton closed itself (a cancel) is no one's
 * decision.
 */
export function endingDecision(view: Pick<RunOverview, 'run' | 'gates'>): Gate | undefined {
  const { run, gates } = view;
  if (!isFinishedRun(run.status)) return undefined;
  return gates.find(
    (g) => g.status !== 'open' && g.decidedAt === run.updatedAt && g.decidedBy !== undefined && g.decidedBy !== 'baton',
  );
}

/**
 * The notice for a run that ended, seen happen (`before` was not an end): completed, failed or blocked — and, when a
 * decision ended it, which one and by whom (*Baton run R-… (plan.md) failed: G-2 (risk approval of T3) was rejected
 * by dave (“not now”); 0 of 1 task completed, 1 failed.*). A cancel or a replan says nothing: the person's own act.
 */
export function runEndAttention(
  view: Pick<RunOverview, 'run' | 'gates' | 'tasks'>,
  before: RunStatus | undefined,
  drivenBy?: string,
): AttentionNotice | undefined {
  const { run } = view;
  const decision = endingDecision(view);
  const said = runEndNotice(run, before, view.tasks, decision ? undefined : drivenBy);
  if (!said) return undefined;
  let message = said.message;
  let body = message.replace(/^Baton run /, '');
  if (decision) {
    const why = decisionWords(decision);
    const head = `Baton run ${run.id} (${planName(run.planPath)}) ${run.status}`;
    // "Baton run R (p) failed: 0 of 1 task completed…" becomes "… failed: G-2 … was rejected by dave; 0 of 1 …".
    message = `${head}: ${why}; ${said.message.slice(head.length + 2)}`;
    body = `${run.id} ${run.status}: ${why}`;
  }
  return {
    key: `end:${run.id}@${run.updatedAt}`,
    level: said.level,
    message,
    title: `Baton: run ${run.status}`,
    body,
    inWindow: true,
    target: SHOW_RUNS,
  };
}

/** "G-2 (risk approval of T3) was rejected by dave (“not now”)". */
export function decisionWords(gate: Gate): string {
  const what = `${gate.id} (${kindWords(gate)}${gate.taskId ? ` of ${gate.taskId}` : ''})`;
  const note = gate.note ? ` (“${oneLine(gate.note, 160)}”)` : '';
  return plain(`${what} was ${gate.status} by ${gate.decidedBy ?? 'someone'}`) + note;
}

/**
 * The keys of what was told, kept across reloads (the host stores them in the workspace's state): a thing is told
 * once. `toldBefore` answers for what was told before this window started — the gate notification comes back after
 * a reload only for a gate not told yet.
 */
export class ToldLedger {
  private readonly keys: string[];
  private readonly set: Set<string>;
  private readonly atStart: ReadonlySet<string>;

  constructor(
    initial: readonly string[],
    private readonly save: (keys: readonly string[]) => void,
    private readonly max = 500,
  ) {
    this.keys = initial.slice(-max);
    this.set = new Set(this.keys);
    this.atStart = new Set(this.keys);
  }

  has(key: string): boolean {
    return this.set.has(key);
  }

  toldBefore(key: string): boolean {
    return this.atStart.has(key);
  }

  add(key: string): void {
    if (this.set.has(key)) return;
    this.keys.push(key);
    this.set.add(key);
    // The oldest go first: what was told long ago is over by now (a gate decided, a run ended).
    while (this.keys.length > this.max) this.set.delete(this.keys.shift()!);
    this.save(this.keys);
  }
}

function kindWords(gate: Gate): string {
  // Any gate kind, one added later too: its id in words when it has none of its own yet.
  return gateKindWords(gate.kind) ?? gate.kind.replace(/_/g, ' ');
}

function subject(taskId: string, title: string | undefined): string {
  return plain(title ? `${taskId} “${title}”` : taskId);
}

function planName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

function oneLine(text: string, max: number): string {
  const line = plain(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
