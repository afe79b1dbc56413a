/**
 * A small element builder. Text from the workspace (titles, progress, reasons, artifact
 * content) only ever goes in through `textContent` — never as HTML — so nothing a worker
 * writes can add markup or run script in the dashboard.
 */
export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: {
    class?: string;
    title?: string;
    role?: string;
    tabIndex?: number;
    ariaLabel?: string;
    dataset?: Record<string, string>;
    attrs?: Record<string, string>;
  } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.title) el.title = props.title;
  if (props.role) el.setAttribute('role', props.role);
  if (props.tabIndex !== undefined) el.tabIndex = props.tabIndex;
  if (props.ariaLabel) el.setAttribute('aria-label', props.ariaLabel);
  for (const [k, v] of Object.entries(props.dataset ?? {})) el.dataset[k] = v;
  for (const [k, v] of Object.entries(props.attrs ?? {})) el.setAttribute(k, v);
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Sets text only when it differs (no layout work for an unchanged tick). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function clear(el: Element): void {
  while (el.firstChild) el.firstChild.remove();
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  ...children: SVGElement[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

/** 3s, 4m 05s, 2h 03m: the one format the views and the dashboard share (src/protocol/time.ts). */
export { formatDuration as duration } from '../../src/protocol/time';

export function clock(at: number): string {
  const d = new Date(at);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:${String(d.getSeconds()).padStart(2, '0')}`;
}

/** The CSS class of a status chip: its colour family. */
export function statusClass(status: string): string {
  switch (status) {
    case 'completed':
    case 'COMPLETED':
    case 'approved':
    case 'active':
    case 'alive':
      return 'ok';
    case 'running':
    case 'RUNNING':
    case 'verifying':
    case 'claimed':
    case 'stopping':
      return 'busy';
    case 'failed':
    case 'FAILED':
    case 'STALE':
    case 'stale':
    case 'rejected':
    case 'blocked':
    case 'BLOCKED':
      return 'bad';
    case 'gated':
    case 'open':
    case 'paused':
    case 'gone':
      return 'wait';
    default:
      return 'idle';
  }
}

/** The colour of the run's activity chip: waiting for a person or for a coordinator stands out. */
export function activityClass(kind: string, status: string): string {
  switch (kind) {
    case 'running':
    case 'stopping':
      return 'busy';
    case 'waiting-decision':
    case 'stopped':
    case 'waiting-coordinator':
      return 'wait';
    default:
      return statusClass(status);
  }
}
