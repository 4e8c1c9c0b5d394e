/**
 * Zones (polygons) and lines drawn over the video, in a 0..1 viewBox laid over the stage, and edited there:
 * `drawZone()` takes a click per vertex until `finish()`, `drawLine()` two clicks, and a vertex handle dragged
 * moves that vertex. The shapes are SVG; the vertex handles and the captions (live counts) are HTML laid over
 * them, so that they keep their size and shape whatever the video's aspect ratio. Every change calls `onChange`;
 * nothing is sent until the panel saves.
 */
import { h, s } from './dom.js';
import { normalizedAt, pointsAttr, type Point, type Rules } from './places-model.js';

export type DrawMode = 'idle' | 'zone' | 'line';

export interface PlacesEditor {
  svg: SVGSVGElement;
  /** The handles and captions, laid over `svg`. */
  layer: HTMLElement;
  rules: Rules;
  mode: DrawMode;
  set(rules: Rules): void;
  drawZone(id: string): void;
  drawLine(id: string): void;
  /** Ends the zone being drawn (kept when it has 3 vertices or more). */
  finish(): void;
  remove(id: string): void;
  /** Per rule id: the text drawn beside it (its live counts). */
  setCaptions(captions: Record<string, string>): void;
}

export function createPlacesEditor(onChange: (rules: Rules, mode: DrawMode) => void): PlacesEditor {
  const svg = s('svg', { class: 'places-editor', viewBox: '0 0 1 1', preserveAspectRatio: 'none' });
  const layer = h('div', { class: 'places-handles' });
  let captions: Record<string, string> = {};
  /** The rule being drawn. */
  let drawing: { kind: 'zone' | 'line'; id: string; points: Point[] } | undefined;
  let drag: { id: string; index: number } | undefined;

  const at = (ev: PointerEvent): Point => normalizedAt(ev.clientX, ev.clientY, svg.getBoundingClientRect());

  /** An HTML element centred on a point of the picture (CSSOM positions: the CSP refuses style attributes). */
  const placed = <E extends HTMLElement>(el: E, [x, y]: Point): E => {
    el.style.left = `${x * 100}%`;
    el.style.top = `${y * 100}%`;
    return el;
  };
  const handle = (id: string, index: number, p: Point) =>
    placed(h('span', { class: 'vertex', 'data-rule': id, 'data-index': index }), p);
  const caption = (id: string, name: string | undefined, p: Point) =>
    placed(
      h('span', { class: 'place-caption', 'data-rule': id }, `${name ?? id}: ${captions[id] ?? '…'}`),
      p,
    );
  /** A zone's caption goes at its topmost vertex. */
  const top = (poly: readonly Point[]): Point => poly.reduce((a, b) => (b[1] < a[1] ? b : a));

  const render = () => {
    const shapes: SVGElement[] = [];
    const over: HTMLElement[] = [];
    for (const z of editor.rules.zones) {
      shapes.push(s('polygon', { class: 'zone', points: pointsAttr(z.polygon), 'data-rule': z.id }));
      over.push(caption(z.id, z.name, top(z.polygon)), ...z.polygon.map((p, i) => handle(z.id, i, p)));
    }
    for (const l of editor.rules.lines) {
      const { start, end } = l;
      shapes.push(
        s('line', { class: 'line', x1: start[0], y1: start[1], x2: end[0], y2: end[1], 'data-rule': l.id }),
      );
      over.push(caption(l.id, l.name, end), handle(l.id, 0, start), handle(l.id, 1, end));
    }
    if (drawing) {
      shapes.push(s('polyline', { class: `drawing ${drawing.kind}`, points: pointsAttr(drawing.points) }));
      over.push(...drawing.points.map((p, i) => handle(drawing!.id, i, p)));
    }
    svg.replaceChildren(...shapes);
    layer.replaceChildren(...over);
    svg.dataset.mode = editor.mode;
  };

  const changed = () => {
    render();
    onChange(editor.rules, editor.mode);
  };

  const commit = () => {
    const d = drawing;
    drawing = undefined;
    editor.mode = 'idle';
    if (d?.kind === 'zone' && d.points.length >= 3) editor.rules.zones.push({ id: d.id, polygon: d.points });
    if (d?.kind === 'line' && d.points.length === 2)
      editor.rules.lines.push({ id: d.id, start: d.points[0], end: d.points[1] });
    changed();
  };

  layer.addEventListener('pointerdown', (ev) => {
    const target = ev.target as HTMLElement;
    if (drawing || !target.classList.contains('vertex')) return;
    drag = { id: target.dataset.rule ?? '', index: Number(target.dataset.index) };
    layer.setPointerCapture(ev.pointerId);
    ev.preventDefault();
  });
  svg.addEventListener('pointerdown', (ev) => {
    if (!drawing) return;
    ev.preventDefault();
    drawing.points.push(at(ev));
    if (drawing.kind === 'line' && drawing.points.length === 2) commit();
    else render();
  });
  layer.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    const p = at(ev);
    const zone = editor.rules.zones.find((z) => z.id === drag!.id);
    if (zone) zone.polygon[drag.index] = p;
    const line = editor.rules.lines.find((l) => l.id === drag!.id);
    if (line) line[drag.index === 0 ? 'start' : 'end'] = p;
    render();
  });
  const endDrag = () => {
    if (!drag) return;
    drag = undefined;
    changed();
  };
  layer.addEventListener('pointerup', endDrag);
  layer.addEventListener('pointercancel', endDrag);

  const editor: PlacesEditor = {
    svg,
    layer,
    rules: { zones: [], lines: [] },
    mode: 'idle',
    set(rules) {
      editor.rules = structuredClone(rules);
      drawing = undefined;
      editor.mode = 'idle';
      render();
    },
    drawZone(id) {
      drawing = { kind: 'zone', id, points: [] };
      editor.mode = 'zone';
      changed();
    },
    drawLine(id) {
      drawing = { kind: 'line', id, points: [] };
      editor.mode = 'line';
      changed();
    },
    finish: commit,
    remove(id) {
      editor.rules.zones = editor.rules.zones.filter((z) => z.id !== id);
      editor.rules.lines = editor.rules.lines.filter((l) => l.id !== id);
      changed();
    },
    setCaptions(c) {
      captions = c;
      if (!drag) render();
    },
  };
  return editor;
}
