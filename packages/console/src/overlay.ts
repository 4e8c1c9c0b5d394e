/** Boxes drawn over an image or a video: an SVG laid over the media, in the media's own pixel space. */
import type { DetectedObject } from './api.js';
import { s } from './dom.js';
import { toRect } from './timeline.js';

/** The stroke of every box, in screen pixels (the tests look for it). */
export const STROKE_PX = 3;

/** An SVG overlay for a stage (`.stage` holds the media and this SVG, both at the media's aspect ratio). */
export function createOverlay(): SVGSVGElement {
  return s('svg', { class: 'overlay', preserveAspectRatio: 'none', 'aria-hidden': 'true' });
}

/**
 * Draws `objects` over a `w`×`h` picture. Each box is a group carrying its label, score and track id
 * as data attributes, so what is shown can be read back.
 */
export function drawBoxes(
  svg: SVGSVGElement,
  w: number,
  h: number,
  objects: readonly DetectedObject[],
  colourOf: (o: DetectedObject) => string,
): void {
  svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
  // Captions are 13 screen pixels high whatever the display size (the SVG scales with the media).
  const shown = svg.getBoundingClientRect().width;
  const font = shown > 0 ? (13 * w) / shown : Math.max(10, Math.round(Math.max(w, h) / 45));
  const groups = objects.map((o) => {
    const r = toRect(o.bbox, w, h);
    const colour = colourOf(o);
    const caption = `${o.label} ${o.score.toFixed(2)}${o.track_id ? ` #${o.track_id}` : ''}`;
    const above = r.y >= font * 1.3;
    const ty = above ? r.y - font * 0.3 : r.y + r.height - font * 0.3;
    // Keep the caption inside the picture: right-aligned to the box when it would run past the edge.
    const rightAligned = r.x + caption.length * font * 0.62 > w;
    return s(
      'g',
      {
        class: 'box',
        'data-label': o.label,
        'data-score': o.score,
        'data-track': o.track_id,
        'data-x': r.x.toFixed(2),
        'data-y': r.y.toFixed(2),
        'data-w': r.width.toFixed(2),
        'data-h': r.height.toFixed(2),
      },
      s('rect', {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
        fill: 'none',
        stroke: colour,
        'stroke-width': STROKE_PX,
        'vector-effect': 'non-scaling-stroke',
      }),
      s(
        'text',
        {
          x: rightAligned ? r.x + r.width - 2 : r.x + 2,
          y: ty,
          fill: colour,
          'font-size': font,
          'text-anchor': rightAligned ? 'end' : 'start',
          class: 'caption',
        },
        caption,
      ),
    );
  });
  svg.replaceChildren(...groups);
}
