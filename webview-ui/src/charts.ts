/**
 * Two small SVG charts: tasks finished over time (bars) and attempts in flight over time
 * (a step line). Colours come from the theme (--vscode-charts-*), so all themes work.
 */
import type { Series } from '../../src/protocol/messages';
import { h, svg } from './dom';

const WIDTH = 300;
const HEIGHT = 60;
const BUCKETS = 30;

export function renderCharts(series: Series, from: number, to: number): HTMLElement {
  const span = Math.max(1, to - from);
  const bucketMs = span / BUCKETS;
  const finished = new Array<number>(BUCKETS).fill(0);
  for (const at of series.finished) {
    if (at < from) continue;
    finished[Math.min(BUCKETS - 1, Math.floor((at - from) / bucketMs))]! += 1;
  }
  const maxFinished = Math.max(1, ...finished);
  const bars = finished.map((n, i) => {
    const height = (n / maxFinished) * (HEIGHT - 4);
    return svg('rect', {
      x: ((i * WIDTH) / BUCKETS + 0.5).toFixed(1),
      y: (HEIGHT - height).toFixed(1),
      width: (WIDTH / BUCKETS - 1).toFixed(1),
      height: height.toFixed(1),
      class: 'bar',
    });
  });

  // Concurrency: +1 at each start, -1 at each end; sampled as a step line.
  const changes: Array<[number, number]> = [];
  for (const [start, end] of series.spans) {
    changes.push([start, 1]);
    changes.push([end ?? to, -1]);
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let level = 0;
  let peak = 0;
  const points: Array<[number, number]> = [[from, 0]];
  for (const [at, delta] of changes) {
    points.push([at, level]);
    level += delta;
    points.push([at, level]);
    peak = Math.max(peak, level);
  }
  points.push([to, level]);
  const x = (at: number): string => (((Math.min(to, Math.max(from, at)) - from) / span) * WIDTH).toFixed(1);
  const y = (n: number): string => (HEIGHT - (n / Math.max(1, peak)) * (HEIGHT - 4)).toFixed(1);
  const path = points.map(([at, n], i) => `${i === 0 ? 'M' : 'L'}${x(at)},${y(n)}`).join(' ');

  const total = series.finished.length;
  const inFlight = series.spans.filter(([, end]) => end === null).length;
  return h(
    'div',
    { class: 'charts' },
    h(
      'figure',
      { class: 'chart' },
      chart('Tasks finished over time', bars),
      h('figcaption', {}, `Throughput: ${total} finished`),
    ),
    h(
      'figure',
      { class: 'chart' },
      chart('Attempts in flight over time', [svg('path', { d: path, class: 'line' })]),
      h('figcaption', {}, `Concurrency: peak ${peak}, now ${inFlight}`),
    ),
  );
}

function chart(label: string, children: SVGElement[]): SVGSVGElement {
  const el = svg(
    'svg',
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label },
    svg('line', { x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, class: 'axis' }),
    ...children,
  );
  return el;
}
