/**
 * The dashboard's DOM. Built once; `render` redraws a section only when the part of the
 * state it shows changed (by identity), and `tick` moves the clocks on.
 */
import type { GateView, IssueView, TaskDetails, WebviewMessage } from '../../src/protocol/messages';
import { formatSpend } from '../../src/protocol/spend';
import { runElapsed } from '../../src/protocol/time';
import { renderCharts } from './charts';
import { activityClass, clear, clock, h, setText, statusClass } from './dom';
import { QueueList } from './queue';
import { hostNow, STATUS_FILTERS, visibleTasks, type DashboardState, type UiAction } from './state';
import { WorkersPanel } from './workers';

export interface ViewActions {
  post(message: WebviewMessage): void;
  dispatch(action: UiAction): void;
}

const MAX_TIMELINE_ROWS = 300;

export class DashboardView {
  private readonly header = h('header', { class: 'run-header' });
  private readonly progress = h('div', { class: 'progress', role: 'img' });
  private readonly elapsed = h('span', { class: 'elapsed' });
  private readonly filter = h('select', { class: 'filter', ariaLabel: 'Show tasks with status' });
  private readonly queue: QueueList;
  private readonly details = h('section', { class: 'details', ariaLabel: 'Task details' });
  private readonly workers = new WorkersPanel();
  private readonly gates = h('div', { class: 'gates' });
  private readonly charts = h('div', { class: 'charts-host' });
  private readonly issues = h('div', { class: 'issues' });
  private readonly timeline = h('ol', { class: 'timeline', ariaLabel: 'Events, newest first' });
  private readonly notice = h('div', { class: 'notice', role: 'status', attrs: { hidden: '' } });
  private last: DashboardState | undefined;
  private lastChartsAt = 0;
  /** Notes typed into gate fields survive redraws of the gate list. */
  private readonly notes = new Map<string, string>();

  constructor(
    root: HTMLElement,
    private readonly actions: ViewActions,
  ) {
    this.queue = new QueueList((taskId, open) => {
      actions.dispatch({ type: 'select', taskId });
      if (open) actions.post({ type: 'requestTaskDetails', taskId });
    });
    for (const status of STATUS_FILTERS)
      this.filter.append(h('option', { attrs: { value: status } }, status === 'all' ? 'all tasks' : status));
    this.filter.addEventListener('change', () => actions.dispatch({ type: 'filter', filter: this.filter.value }));
    clear(root);
    root.append(
      this.notice,
      this.header,
      h(
        'main',
        { class: 'layout' },
        h(
          'div',
          { class: 'col-main' },
          section(
            'Queue',
            h('div', { class: 'queue' }, h('div', { class: 'queue-tools' }, this.filter), this.queue.element),
          ),
          this.details,
        ),
        h(
          'div',
          { class: 'col-side' },
          section('Workers', this.workers.element),
          section('Gates', this.gates),
          section('Throughput and concurrency', this.charts),
          section('Ingestion issues', this.issues),
          section('Timeline', this.timeline),
        ),
      ),
    );
  }

  render(state: DashboardState): void {
    const now = hostNow(state);
    const last = this.last;
    // Until the snapshot, nothing is drawn from the state: the first connected render draws it all, the restored
    // filter and selection too (a host message can arrive before the snapshot, e.g. a clock tick sent as the panel
    // was hidden).
    this.last = state.connected ? state : undefined;
    if (!state.connected) {
      clear(this.header);
      this.header.append(h('div', { class: 'waiting' }, 'Connecting to Baton…'));
      return;
    }
    if (state.run !== last?.run || !last?.connected) this.renderHeader(state);
    if (state.ui.filter !== last?.ui.filter) this.filter.value = state.ui.filter;
    if (state.tasks !== last?.tasks || state.ui !== last?.ui)
      this.queue.update(visibleTasks(state), state.ui.selectedTask, now);
    if (state.details !== last?.details || state.ui.selectedTask !== last?.ui.selectedTask) this.renderDetails(state);
    this.workers.update(state.runtimes, now);
    if (state.gates !== last?.gates) this.renderGates(state.gates);
    if (state.issues !== last?.issues) this.renderIssues(state.issues);
    if (state.events !== last?.events) this.renderTimeline(state);
    if (state.notice !== last?.notice) this.renderNotice(state);
    if (state.series !== last?.series || state.run !== last?.run) this.drawCharts(state, now);
    this.tick(state);
  }

  private drawCharts(state: DashboardState, now: number): void {
    this.lastChartsAt = now;
    clear(this.charts);
    if (state.run) this.charts.append(renderCharts(state.series, state.run.createdAt, now));
  }

  /** The clocks: elapsed time, heartbeat ages, lease bars, running durations. */
  tick(state: DashboardState): void {
    if (!state.connected || !state.run) return;
    const now = hostNow(state);
    setText(this.elapsed, `elapsed ${runElapsed(state.run, now)}`);
    this.workers.tick(now);
    this.queue.tick(now);
    // The time axis of the charts moves on slowly: redrawn every 10 s, never on a heartbeat.
    if (now - this.lastChartsAt > 10_000) this.drawCharts(state, now);
  }

  private renderHeader(state: DashboardState): void {
    clear(this.header);
    const run = state.run;
    if (!run) {
      this.header.append(
        h('div', { class: 'waiting' }, 'No run yet. Start one from a plan (▶ Start Run in the Runs view).'),
      );
      return;
    }
    const c = run.counts;
    clear(this.progress);
    const parts: Array<[string, number, string]> = [
      ['done', c.done, 'ok'],
      ['running', c.running, 'busy'],
      ['gated', c.gated, 'wait'],
      ['failed', c.failed, 'bad'],
      ['blocked', c.blocked, 'blocked'],
      ['cancelled', c.cancelled, 'cancelled'],
      ['waiting', c.waiting, 'idle'],
    ];
    for (const [label, n, cls] of parts) {
      if (n === 0) continue;
      const part = h('div', { class: `segment ${cls}`, title: `${n} ${label}` });
      part.style.flexGrow = String(n);
      this.progress.append(part);
    }
    this.progress.setAttribute('aria-label', parts.map(([label, n]) => `${n} ${label}`).join(', '));
    // Only what applies now (as the Runs view's menus): no Stop on a run that is stopped, waits or ended.
    const stopGraceful = run.activity.canStop
      ? button('Stop', 'Let running tasks finish, start nothing new', () =>
          this.actions.post({ type: 'stopRun', mode: 'graceful' }),
        )
      : null;
    const stopNow = run.activity.canStop
      ? button(
          'Stop now',
          'End every worker now and prove it',
          () => this.actions.post({ type: 'stopRun', mode: 'immediate' }),
          false,
          'danger',
        )
      : null;
    const resume = run.activity.canResume
      ? button('Resume', 'Continue the run from this window', () => this.actions.post({ type: 'resumeRun' }))
      : null;
    const successor = run.supersededBy;
    const replanned = successor
      ? button(`Show ${successor}`, `This run was replanned: show ${successor} here`, () =>
          this.actions.post({ type: 'showRun', runId: successor }),
        )
      : null;
    const plan = run.planPath.split(/[\\/]/).pop() ?? run.planPath;
    this.header.append(
      h(
        'div',
        { class: 'title-row' },
        h('h1', { title: run.planPath }, plan),
        h(
          'span',
          { class: `chip ${activityClass(run.activity.kind, run.status)}`, title: run.activity.detail },
          run.activity.label,
        ),
        h('span', { class: 'run-id' }, run.id),
        h('span', { class: 'spacer' }),
        stopGraceful,
        stopNow,
        resume,
        replanned,
      ),
      this.progress,
      h(
        'div',
        { class: 'facts' },
        h('span', {}, `${c.done} of ${c.total} done`),
        h('span', {}, `${c.running} running`),
        h('span', {}, `${c.gated} gated`),
        h('span', {}, `${c.failed} failed`),
        c.blocked
          ? h('span', { title: 'could not start: a task they depend on did not complete' }, `${c.blocked} blocked`)
          : null,
        c.cancelled ? h('span', {}, `${c.cancelled} cancelled`) : null,
        h('span', { title: 'attempts in flight of maxConcurrency' }, `slots ${run.slotsInUse}/${run.maxConcurrency}`),
        run.spend
          ? h('span', { class: 'spend', title: 'what the run’s agents spent' }, `spent ${formatSpend(run.spend)}`)
          : null,
        this.elapsed,
        h('span', { class: 'dim activity-detail' }, run.activity.detail),
      ),
    );
  }

  private renderDetails(state: DashboardState): void {
    clear(this.details);
    const taskId = state.ui.selectedTask;
    if (!taskId) {
      this.details.append(h('p', { class: 'dim' }, 'Select a task to see its attempts, receipts, result and log.'));
      return;
    }
    const task = state.tasks.find((t) => t.id === taskId);
    const d = state.details;
    this.details.append(h('h2', {}, `${taskId}${task ? `: ${task.title}` : ''}`));
    if (task?.reason) this.details.append(h('p', { class: 'reason' }, task.reason));
    if (!d) {
      this.details.append(h('p', { class: 'dim' }, 'Loading…'));
      return;
    }
    this.details.append(
      h('h3', {}, 'Attempts'),
      d.delegations.length === 0
        ? h('p', { class: 'dim' }, 'None yet.')
        : h(
            'ul',
            { class: 'attempts' },
            ...d.delegations.map((a) =>
              h(
                'li',
                {},
                h('span', { class: `chip ${statusClass(a.status)}` }, a.status),
                ` ${a.id}`,
                a.resultStatus ? ` · ${a.resultStatus}` : '',
                a.reason ? ` · ${a.reason}` : '',
                ...(a.startedAt !== undefined
                  ? [
                      ' ',
                      button('Changes', `Show what ${a.id} changed`, () =>
                        this.actions.post({ type: 'showChanges', delegationId: a.id }),
                      ),
                      button('Output', `Follow the output of ${a.id}`, () =>
                        this.actions.post({ type: 'showOutput', delegationId: a.id }),
                      ),
                    ]
                  : []),
              ),
            ),
          ),
    );
    if (d.receipts.length > 0) {
      this.details.append(
        h('h3', {}, 'Verification receipts'),
        h(
          'ul',
          { class: 'receipts' },
          ...d.receipts.map((r) =>
            h(
              'li',
              {},
              `${r.exitCode === 0 ? '✓' : '✗'} ${r.command.join(' ')} · exit ${r.exitCode ?? '–'} · ${r.durationMs} ms`,
            ),
          ),
        ),
      );
    }
    if (d.issues.length > 0) this.details.append(h('h3', {}, 'Issues'), this.issueList(d.issues));
    if (d.reviews?.length) this.details.append(h('h3', {}, 'Review comments sent'), this.reviewList(d.reviews));
    if (d.artifact) {
      this.details.append(
        h(
          'h3',
          {},
          'Result artifact ',
          link(d.artifact.path, () => this.actions.post({ type: 'openArtifact', path: d.artifact!.path })),
        ),
        h('pre', { class: 'artifact' }, d.artifact.text),
      );
    }
    this.details.append(h('h3', {}, 'Log (last lines)'), h('pre', { class: 'log' }, d.logTail || '(empty)'));
  }

  /** Each review sent to the task's agent: who, which attempt it was on and which carried it, and every comment. */
  private reviewList(reviews: NonNullable<TaskDetails['reviews']>): HTMLElement {
    return h(
      'ul',
      { class: 'reviews' },
      ...reviews.map((r) =>
        h(
          'li',
          {},
          h(
            'div',
            {},
            `${r.by}${r.reviewed ? ` on ${r.reviewed}` : ''} · message ${r.followUpId}`,
            r.deliveredTo
              ? ` → ${r.deliveredTo}${r.outcome ? ` (${r.outcome})` : ''}`
              : ' · waiting for the next attempt',
          ),
          h(
            'ol',
            {},
            ...r.comments.map((c) =>
              h(
                'li',
                {},
                link(`${c.path}:${c.line}${c.endLine && c.endLine > c.line ? `–${c.endLine}` : ''}`, () =>
                  this.actions.post({ type: 'openArtifact', path: c.path, line: c.line }),
                ),
                c.quote ? h('pre', { class: 'quote' }, c.quote) : '',
                h('p', {}, c.text),
              ),
            ),
          ),
        ),
      ),
    );
  }

  private renderGates(gates: readonly GateView[]): void {
    clear(this.gates);
    const open = gates.filter((g) => g.status === 'open');
    const decided = gates
      .filter((g) => g.status !== 'open')
      .slice(-20)
      .reverse();
    if (open.length === 0) this.gates.append(h('p', { class: 'dim' }, 'No decision is waiting.'));
    for (const gate of open) {
      this.gates.append(gate.kind === 'question' ? this.questionGate(gate) : this.decisionGate(gate));
    }
    if (decided.length > 0) {
      this.gates.append(
        h(
          'details',
          { class: 'decided' },
          h('summary', {}, `${decided.length} decided`),
          ...decided.map((g) =>
            h(
              'div',
              { class: 'gate' },
              h('span', { class: `chip ${statusClass(g.status)}` }, g.status),
              ` ${g.id} ${g.kind}${g.taskId ? ` (${g.taskId})` : ''} by ${g.decidedBy ?? '?'}${g.decidedAt ? ` at ${clock(g.decidedAt)}` : ''}${g.note ? ` — ${g.note}` : ''}`,
            ),
          ),
        ),
      );
    }
  }

  /** An open gate that waits for a decision: a note, Approve, Reject (with the note). */
  private decisionGate(gate: GateView): HTMLElement {
    const note = h('input', {
      class: 'note',
      ariaLabel: `Note for ${gate.id}`,
      attrs: { type: 'text', placeholder: 'Note (needed to reject)', maxlength: '2000' },
    });
    note.value = this.notes.get(gate.id) ?? '';
    const reject = button(
      'Reject',
      'Reject with the note',
      () => this.actions.post({ type: 'rejectGate', gateId: gate.id, note: note.value.trim() }),
      note.value.trim() === '',
      'danger',
    );
    note.addEventListener('input', () => {
      this.notes.set(gate.id, note.value);
      reject.disabled = note.value.trim() === '';
    });
    const approve = button('Approve', `Approve ${gate.id}`, () =>
      this.actions.post({
        type: 'approveGate',
        gateId: gate.id,
        ...(note.value.trim() ? { note: note.value.trim() } : {}),
      }),
    );
    // An integration conflict is resolved before it is approved: in the merge editor, or by the agent.
    const resolve =
      gate.kind === 'integration_conflict'
        ? [
            button('Resolve Conflict…', `Resolve ${gate.id}: the merge editor, or the agent`, () =>
              this.actions.post({ type: 'resolveConflict', gateId: gate.id }),
            ),
          ]
        : [];
    return this.openGate(gate, note, ...resolve, approve, reject);
  }

  /** An open question an agent asked: answered, not approved — Answer… asks for it in the editor. */
  private questionGate(gate: GateView): HTMLElement {
    const answer = button('Answer…', `Answer ${gate.id}`, () =>
      this.actions.post({ type: 'answerQuestion', gateId: gate.id }),
    );
    return this.openGate(gate, answer);
  }

  private openGate(gate: GateView, ...actions: HTMLElement[]): HTMLElement {
    return h(
      'div',
      { class: 'gate open', dataset: { gate: gate.id } },
      h(
        'div',
        { class: 'g-head' },
        h('span', { class: 'chip wait' }, gate.kind),
        h('strong', {}, gate.id),
        gate.taskId ? h('span', {}, gate.taskId) : null,
        ...gate.risk.map((tag) => h('span', { class: 'tag' }, tag)),
      ),
      h('p', { class: 'g-reason' }, gate.reason),
      h('div', { class: 'g-actions' }, ...actions),
    );
  }
  private renderIssues(issues: readonly IssueView[]): void {
    clear(this.issues);
    if (issues.length === 0) {
      this.issues.append(h('p', { class: 'dim' }, 'No ingestion issues.'));
      return;
    }
    const byArtifact = new Map<string, IssueView[]>();
    for (const issue of issues)
      byArtifact.set(issue.artifactPath, [...(byArtifact.get(issue.artifactPath) ?? []), issue]);
    for (const [path, list] of byArtifact) {
      this.issues.append(
        h(
          'div',
          { class: 'artifact-issues' },
          h('div', { class: 'a-path' }, `${list[0]!.delegationId} · ${path}`),
          this.issueList(list),
        ),
      );
    }
  }

  private issueList(issues: readonly IssueView[]): HTMLElement {
    return h(
      'ul',
      { class: 'issue-list' },
      ...issues.map((issue) => {
        const where = issue.line ? `${issue.line}:${issue.column ?? 1}` : '';
        const open = (): void =>
          this.actions.post({
            type: 'openArtifact',
            path: issue.artifactPath,
            ...(issue.line ? { line: issue.line } : {}),
            ...(issue.column ? { column: issue.column } : {}),
          });
        const item = h(
          'button',
          {
            class: `issue ${issue.severity}`,
            title: `Open ${issue.artifactPath}${where ? ` at ${where}` : ''}`,
            dataset: { code: issue.code, ...(issue.line ? { line: String(issue.line) } : {}) },
            attrs: { type: 'button' },
          },
          h('span', { class: 'i-sev' }, issue.severity === 'error' ? '✗' : '!'),
          h('span', { class: 'i-where' }, where),
          h('span', { class: 'i-msg' }, issue.message),
          h('span', { class: 'i-code' }, issue.code),
          h('span', { class: 'i-rec' }, issue.recommendation),
        );
        item.addEventListener('click', open);
        return h('li', {}, item);
      }),
    );
  }

  private renderTimeline(state: DashboardState): void {
    clear(this.timeline);
    const shown = state.events.slice(0, MAX_TIMELINE_ROWS);
    for (const e of shown)
      this.timeline.append(
        h(
          'li',
          { class: `ev ev-${e.type.split(':')[0]}` },
          h('span', { class: 'ev-seq' }, String(e.seq)),
          h('span', { class: 'ev-at' }, clock(e.at)),
          h('span', { class: 'ev-type' }, e.type),
          h('span', { class: 'ev-text' }, e.text),
        ),
      );
    if (state.events.length > shown.length)
      this.timeline.append(
        h(
          'li',
          { class: 'dim' },
          `${state.events.length - shown.length} older events: baton events --run ${state.run?.id ?? ''}`,
        ),
      );
  }

  private renderNotice(state: DashboardState): void {
    clear(this.notice);
    this.notice.hidden = !state.notice;
    if (!state.notice) return;
    this.notice.className = `notice ${state.notice.level}`;
    this.notice.append(
      h('span', {}, state.notice.message),
      button('Dismiss', 'Dismiss', () => this.actions.dispatch({ type: 'dismissNotice' })),
    );
  }
}

function section(title: string, body: HTMLElement): HTMLElement {
  return h('section', { class: 'panel', ariaLabel: title }, h('h2', {}, title), body);
}

function button(label: string, title: string, onClick: () => void, disabled = false, kind = ''): HTMLButtonElement {
  const b = h('button', { class: `btn ${kind}`.trim(), title, attrs: { type: 'button' } }, label);
  b.disabled = disabled;
  b.addEventListener('click', onClick);
  return b;
}

function link(label: string, onClick: () => void): HTMLButtonElement {
  const b = h('button', { class: 'link', title: `Open ${label}`, attrs: { type: 'button' } }, label);
  b.addEventListener('click', onClick);
  return b;
}
