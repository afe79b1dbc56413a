/**
 * The workers: one row per live runtime with a pulse on each heartbeat, the age since the
 * last beat ticking, the lease left as a draining bar, and the last progress text. Rows are
 * keyed by runtime id and updated in place: a heartbeat touches one row, a tick touches
 * text and widths only — never the whole list.
 */
import { describeLiveness } from '../../src/protocol/liveness';
import type { RuntimeView } from '../../src/protocol/messages';
import { formatSpend } from '../../src/protocol/spend';
import { h, setText, statusClass } from './dom';

interface Row {
  element: HTMLElement;
  pulse: HTMLElement;
  status: HTMLElement;
  age: HTMLElement;
  lease: HTMLElement;
  leaseText: HTMLElement;
  progress: HTMLElement;
  spend: HTMLElement;
  runtime: RuntimeView;
}

export class WorkersPanel {
  readonly element: HTMLElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly rows = new Map<string, Row>();
  private runtimes: readonly RuntimeView[] = [];

  constructor() {
    this.list = h('div', { class: 'workers-list', role: 'list' });
    this.empty = h('div', { class: 'empty' }, 'No worker is running.');
    this.element = h('div', { class: 'workers' }, this.empty, this.list);
  }

  update(runtimes: readonly RuntimeView[], now: number): void {
    if (runtimes === this.runtimes) return this.tick(now);
    const live = runtimes.filter((r) => r.status === 'claimed' || r.status === 'active' || r.status === 'stale');
    const keep = new Set(live.map((r) => r.id));
    for (const [id, row] of this.rows) {
      if (keep.has(id)) continue;
      row.element.remove();
      this.rows.delete(id);
    }
    let previous: HTMLElement | null = null;
    for (const runtime of live) {
      let row = this.rows.get(runtime.id);
      if (!row) {
        row = this.createRow(runtime);
        this.rows.set(runtime.id, row);
      } else if (row.runtime.heartbeatCount !== runtime.heartbeatCount) {
        pulse(row.pulse);
      }
      row.runtime = runtime;
      const expected: ChildNode | null = previous ? previous.nextSibling : this.list.firstChild;
      if (expected !== row.element) this.list.insertBefore(row.element, expected);
      previous = row.element;
      setText(row.progress, runtime.progress ?? '');
      // The same words as the Workers view (src/protocol/spend.ts).
      setText(row.spend, runtime.spend ? formatSpend(runtime.spend) : '');
    }
    this.runtimes = runtimes;
    this.empty.hidden = live.length > 0;
    this.tick(now);
  }

  /** Ages and lease bars move on: text and a width per row, nothing else. */
  tick(now: number): void {
    for (const row of this.rows.values()) {
      const r = row.runtime;
      // The same words as the Workers view and `baton status` (src/protocol/liveness.ts).
      const live = describeLiveness(r, now);
      const stale = live.state === 'stale';
      if (row.element.classList.contains('stale') !== stale) row.element.classList.toggle('stale', stale);
      setText(row.status, live.state);
      const chip = `chip ${statusClass(live.state)}`;
      if (row.status.className !== chip) row.status.className = chip;
      setText(row.age, stale ? '' : live.summary);
      if (row.age.title !== live.explanation) row.age.title = live.explanation;
      const left = Math.max(0, r.leaseExpiresAt - now);
      const fraction = r.leaseMs > 0 ? Math.min(1, left / r.leaseMs) : 0;
      // A transform, not a width: the bar drains on the compositor, without a layout.
      const scale = `scaleX(${fraction.toFixed(3)})`;
      if (row.lease.style.transform !== scale) row.lease.style.transform = scale;
      setText(row.leaseText, live.lease);
    }
  }

  private createRow(runtime: RuntimeView): Row {
    const pulse = h('span', { class: 'pulse', ariaLabel: 'heartbeat' });
    const status = h('span', { class: 'chip' });
    const age = h('span', { class: 'w-age' });
    const lease = h('div', { class: 'lease-fill' });
    const leaseText = h('span', { class: 'w-lease-text' });
    const progress = h('div', { class: 'w-progress' });
    const spend = h('span', { class: 'w-spend', title: 'what the agent spent so far' });
    const element = h(
      'div',
      { class: 'worker-row', role: 'listitem', dataset: { runtime: runtime.id } },
      h(
        'div',
        { class: 'w-head' },
        pulse,
        h('span', { class: 'w-task' }, runtime.taskId),
        h('span', { class: 'w-delegation' }, runtime.delegationId),
        status,
        age,
      ),
      h('div', { class: 'lease', title: 'lease remaining' }, lease),
      h('div', { class: 'w-foot' }, leaseText, progress, spend),
    );
    return { element, pulse, status, age, lease, leaseText, progress, spend, runtime };
  }
}

/**
 * One pulse on a heartbeat. The dot alternates between two classes whose animations are the
 * same keyframes under two names: changing the name restarts the animation, with no forced
 * layout (remove, measure, add) and no animation object per beat — 200 workers beating at
 * once stay well inside a frame (docs/benchmarks.md).
 */
function pulse(dot: HTMLElement): void {
  const next = dot.classList.contains('beat-a') ? 'beat-b' : 'beat-a';
  dot.classList.remove('beat-a', 'beat-b');
  dot.classList.add(next, 'beat');
}
