/**
 * The queue: every task of the run in a virtualized list — only the rows in view (plus a few)
 * exist in the DOM, so 10,000 tasks cost what 40 do. Keyboard: the list is one tab stop;
 * ↑/↓/Home/End move the selection, Enter opens the task's details.
 */
import type { TaskView } from '../../src/protocol/messages';
import { formatSpend } from '../../src/protocol/spend';
import { runTimeText } from '../../src/protocol/time';
import { clear, h, setText, statusClass } from './dom';

export const ROW_HEIGHT = 24;
const OVERSCAN = 8;

export class QueueList {
  readonly element: HTMLElement;
  private readonly spacer: HTMLElement;
  private tasks: readonly TaskView[] = [];
  private selected: string | undefined;
  private now = 0;
  private drawn = '';
  private frame = 0;

  constructor(private readonly onSelect: (taskId: string, open: boolean) => void) {
    this.spacer = h('div', { class: 'queue-spacer' });
    this.element = h(
      'div',
      { class: 'queue-list', role: 'listbox', tabIndex: 0, ariaLabel: 'Tasks of the run' },
      this.spacer,
    );
    this.element.addEventListener('scroll', () => this.schedule());
    this.element.addEventListener('keydown', (e) => this.onKey(e));
    this.element.addEventListener('click', (e) => {
      const row = (e.target as HTMLElement).closest<HTMLElement>('.queue-row');
      if (row?.dataset.task) this.onSelect(row.dataset.task, true);
    });
  }

  update(tasks: readonly TaskView[], selected: string | undefined, now: number): void {
    const changed = tasks !== this.tasks || selected !== this.selected;
    this.tasks = tasks;
    this.selected = selected;
    this.now = now;
    this.spacer.style.height = `${tasks.length * ROW_HEIGHT}px`;
    if (changed) this.drawn = '';
    this.draw();
  }

  /** Ages in the visible rows (durations of running tasks) move on. */
  tick(now: number): void {
    this.now = now;
    for (const row of Array.from(this.spacer.querySelectorAll<HTMLElement>('.queue-row[data-running]'))) {
      const task = this.tasks[Number(row.dataset.index)];
      const cell = row.querySelector('.q-duration');
      if (task && cell) setText(cell, runTimeText(task, now));
    }
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private draw(): void {
    const height = this.element.clientHeight || 400;
    const first = Math.max(0, Math.floor(this.element.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.tasks.length, Math.ceil((this.element.scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
    const key = `${first}:${last}`;
    if (key === this.drawn) return;
    this.drawn = key;
    clear(this.spacer);
    if (this.tasks.length === 0) {
      this.spacer.append(h('div', { class: 'empty' }, 'No tasks match this filter.'));
      return;
    }
    const fragment = document.createDocumentFragment();
    for (let i = first; i < last; i++) fragment.append(this.row(this.tasks[i]!, i));
    this.spacer.append(fragment);
  }

  private row(task: TaskView, index: number): HTMLElement {
    const selected = task.id === this.selected;
    const row = h(
      'div',
      {
        class: `queue-row${selected ? ' selected' : ''}`,
        role: 'option',
        dataset: { task: task.id, index: String(index), ...(task.runningSince !== undefined ? { running: '1' } : {}) },
        attrs: { 'aria-selected': String(selected), id: `task-${task.id}` },
      },
      h('span', { class: `chip ${statusClass(task.status)}` }, task.status),
      h('span', { class: 'q-id' }, task.id),
      h('span', { class: 'q-title', title: task.reason ? `${task.title}\n${task.reason}` : task.title }, task.title),
      h(
        'span',
        { class: 'q-attempt', title: task.delegationId ?? 'no attempt yet' },
        task.attempt > 0 ? `#${task.attempt}` : '–',
      ),
      h('span', { class: 'q-duration' }, runTimeText(task, this.now)),
      h('span', { class: 'q-spend', title: 'what its agents spent' }, task.spend ? formatSpend(task.spend) : ''),
      h('span', { class: 'q-worker' }, task.worker ?? ''),
      h('span', { class: 'q-isolation' }, task.isolation ?? ''),
    );
    row.style.top = `${index * ROW_HEIGHT}px`;
    if (selected) this.element.setAttribute('aria-activedescendant', row.id);
    return row;
  }

  private onKey(e: KeyboardEvent): void {
    if (this.tasks.length === 0) return;
    const at = Math.max(
      0,
      this.tasks.findIndex((t) => t.id === this.selected),
    );
    const page = Math.max(1, Math.floor(this.element.clientHeight / ROW_HEIGHT) - 1);
    let next: number | undefined;
    if (e.key === 'ArrowDown') next = Math.min(this.tasks.length - 1, this.selected ? at + 1 : 0);
    else if (e.key === 'ArrowUp') next = Math.max(0, at - 1);
    else if (e.key === 'PageDown') next = Math.min(this.tasks.length - 1, at + page);
    else if (e.key === 'PageUp') next = Math.max(0, at - page);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = this.tasks.length - 1;
    else if ((e.key === 'Enter' || e.key === ' ') && this.selected) {
      e.preventDefault();
      this.onSelect(this.selected, true);
      return;
    }
    if (next === undefined) return;
    e.preventDefault();
    const top = next * ROW_HEIGHT;
    if (top < this.element.scrollTop) this.element.scrollTop = top;
    else if (top + ROW_HEIGHT > this.element.scrollTop + this.element.clientHeight)
      this.element.scrollTop = top + ROW_HEIGHT - this.element.clientHeight;
    this.onSelect(this.tasks[next]!.id, false);
  }
}
