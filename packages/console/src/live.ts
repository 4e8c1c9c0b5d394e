/** A live task's view: detections per label over time (an SVG line chart) and the latest frames' objects. */
import type { Frame } from './api.js';
import { fill, h, s } from './dom.js';
import type { FrameFeed } from './feed.js';
import { formatFrameTime } from './timeline.js';

/** Distinct line colours, one per label of the chart (in label order). */
const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#bcbd22',
  '#7f7f7f',
];
const colourAt = (labels: readonly string[], label: string) =>
  PALETTE[labels.indexOf(label) % PALETTE.length];

const W = 640;
const H = 220;
const PAD = { left: 34, right: 10, top: 10, bottom: 24 };
/** Frames shown in the chart: the most recent ones. */
const CHART_FRAMES = 600;
const LATEST = 5;

function chart(frames: readonly Frame[]): SVGSVGElement {
  const svg = s('svg', {
    class: 'chart',
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    'aria-label': 'detections per label over time',
  });
  if (frames.length === 0) return svg;
  const labels = [...new Set(frames.flatMap((f) => f.objects.map((o) => o.label)))].sort();
  const counts = frames.map((f) => {
    const c: Record<string, number> = {};
    for (const o of f.objects) c[o.label] = (c[o.label] ?? 0) + 1;
    return c;
  });
  const t0 = frames[0].frame_time_ms;
  const t1 = Math.max(frames[frames.length - 1].frame_time_ms, t0 + 1);
  const max = Math.max(1, ...counts.flatMap((c) => Object.values(c)));
  const x = (t: number) => PAD.left + ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (n: number) => H - PAD.bottom - (n / max) * (H - PAD.top - PAD.bottom);
  svg.append(
    s('line', { x1: PAD.left, y1: y(0), x2: W - PAD.right, y2: y(0), class: 'axis' }),
    s('line', { x1: PAD.left, y1: y(0), x2: PAD.left, y2: PAD.top, class: 'axis' }),
    s('text', { x: PAD.left - 4, y: y(max) + 4, 'text-anchor': 'end', class: 'tick' }, max),
    s('text', { x: PAD.left - 4, y: y(0), 'text-anchor': 'end', class: 'tick' }, 0),
    s('text', { x: PAD.left, y: H - 6, class: 'tick' }, formatFrameTime(t0)),
    s('text', { x: W - PAD.right, y: H - 6, 'text-anchor': 'end', class: 'tick' }, formatFrameTime(t1)),
  );
  for (const label of labels) {
    const points = frames.map(
      (f, i) => `${x(f.frame_time_ms).toFixed(1)},${y(counts[i][label] ?? 0).toFixed(1)}`,
    );
    svg.append(
      s('polyline', {
        points: points.join(' '),
        fill: 'none',
        stroke: colourAt(labels, label),
        'stroke-width': 2,
        'data-label': label,
      }),
    );
  }
  return svg;
}

export function createLiveView(feed: FrameFeed): { el: HTMLElement; update(): void } {
  const chartSlot = h('div', { class: 'chart-wrap' });
  const legend = h('div', { class: 'legend' });
  const latest = h('div', { class: 'latest' });
  const el = h(
    'div',
    { class: 'live' },
    h('h3', {}, 'Detections per label'),
    chartSlot,
    legend,
    h('h3', {}, 'Latest frames'),
    latest,
  );
  const update = () => {
    const frames = feed.frames.slice(-CHART_FRAMES);
    fill(chartSlot, chart(frames));
    const labels = [...new Set(frames.flatMap((f) => f.objects.map((o) => o.label)))].sort();
    fill(
      legend,
      ...labels.map((l) => {
        const chip = h('span', { class: 'chip' }, l);
        chip.style.borderColor = colourAt(labels, l); // CSSOM: allowed by the console's style-src 'self'
        return chip;
      }),
    );
    const last = feed.frames.slice(-LATEST).reverse();
    fill(
      latest,
      last.length === 0
        ? h('p', { class: 'muted' }, 'No frame yet.')
        : h(
            'ul',
            { class: 'frames' },
            ...last.map((f) =>
              h(
                'li',
                { 'data-frame': f.frame_id },
                h('strong', {}, formatFrameTime(f.frame_time_ms)),
                ' ',
                f.objects.length
                  ? f.objects
                      .map((o) => `${o.label} ${o.score.toFixed(2)}${o.track_id ? ` #${o.track_id}` : ''}`)
                      .join(', ')
                  : h('span', { class: 'muted' }, 'nothing'),
              ),
            ),
          ),
    );
  };
  update();
  return { el, update };
}
