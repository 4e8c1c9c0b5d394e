/**
 * Images: pick or drop 1..10 images, choose a scene, detect; each image is shown with its boxes drawn
 * from `cxcywh_normalized`, a failed one with its error code; a score slider filters what is drawn.
 */
import { api, enabledScenes, type DetectedObject, type ImageResult } from '../api.js';
import { fill, h } from '../dom.js';
import { createOverlay, drawBoxes } from '../overlay.js';
import { colourOf } from '../timeline.js';
import { scenePicker, scoreSlider, showError } from '../ui.js';

const MAX_FILES = 10;
const ACCEPT = 'image/jpeg,image/png,image/webp';

interface Shown {
  file: File;
  url: string;
  img: HTMLImageElement;
  svg: SVGSVGElement;
  count: HTMLElement;
  objects: DetectedObject[];
}

export function imagesPage(root: HTMLElement): () => void {
  let files: File[] = [];
  let shown: Shown[] = [];
  let minScore = 0.5;
  const errors = h('div', { class: 'errors' });
  const picked = h('p', { class: 'muted picked' }, 'No image chosen.');
  const input = h('input', {
    type: 'file',
    accept: ACCEPT,
    multiple: true,
    name: 'files',
    id: 'image-files',
  });
  const drop = h(
    'label',
    { class: 'drop', for: 'image-files' },
    h('strong', {}, 'Drop 1–10 images here'),
    h('span', { class: 'muted' }, ' or click to choose (JPG, PNG, WEBP)'),
    input,
  );
  const sceneSlot = h('span', {}, 'Loading scenes…');
  const detect = h('button', { type: 'submit', class: 'primary', disabled: true }, 'Detect');
  const results = h('div', { class: 'image-grid' });
  const slider = scoreSlider(
    'min score',
    minScore,
    () => undefined,
    (v) => {
      minScore = v;
      redraw();
    },
  );

  const setFiles = (list: File[]) => {
    files = list;
    const tooMany = list.length > MAX_FILES;
    picked.textContent = list.length
      ? `${list.length} image${list.length > 1 ? 's' : ''}: ${list.map((f) => f.name).join(', ')}${tooMany ? ` (at most ${MAX_FILES})` : ''}`
      : 'No image chosen.';
    picked.classList.toggle('warn', tooMany);
    detect.disabled = list.length === 0 || tooMany;
  };
  input.addEventListener('change', () => setFiles(Array.from(input.files ?? [])));
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    setFiles(Array.from(e.dataTransfer?.files ?? []));
  });

  function redraw(): void {
    for (const x of shown) {
      if (!x.img.naturalWidth) continue;
      const visible = x.objects.filter((o) => o.score >= minScore);
      drawBoxes(x.svg, x.img.naturalWidth, x.img.naturalHeight, visible, (o) => colourOf(o.label));
      x.count.textContent = `${visible.length} of ${x.objects.length} objects drawn`;
    }
  }

  function release(): void {
    for (const x of shown) URL.revokeObjectURL(x.url);
    shown = [];
  }

  function card(file: File, r: ImageResult): HTMLElement {
    const url = URL.createObjectURL(file);
    const img = h('img', { src: url, alt: file.name });
    const svg = createOverlay();
    const count = h('span', { class: 'muted count' });
    const x: Shown = { file, url, img, svg, count, objects: r.objects ?? [] };
    shown.push(x);
    img.addEventListener('load', redraw);
    const failed = r.status === 'failed';
    return h(
      'figure',
      { class: `image-card ${failed ? 'failed' : ''}`, 'data-seq': r.seq, 'data-status': r.status },
      h('div', { class: 'stage' }, img, svg),
      h(
        'figcaption',
        {},
        h('span', { class: 'name' }, file.name),
        ' ',
        failed
          ? h('span', { class: 'error-code', 'data-code': r.error_code ?? '' }, r.error_code ?? 'failed')
          : count,
      ),
    );
  }

  const form = h(
    'form',
    { class: 'card' },
    h('h2', {}, 'Detect objects in images'),
    drop,
    picked,
    h('div', { class: 'row' }, h('label', {}, 'scene ', sceneSlot), detect),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const select = form.querySelector('select');
    if (!select || files.length === 0) return;
    const body = new FormData();
    body.append('scene_code', select.value);
    for (const f of files) body.append('files', f, f.name);
    const sent = files;
    detect.disabled = true;
    detect.textContent = 'Detecting…';
    showError(errors);
    void api<{ task_id: string; results: ImageResult[] }>('POST', '/v1/vision/image-detections', {
      form: body,
      idempotent: true,
    })
      .then((r) => {
        release();
        fill(results, ...r.body.results.map((res) => card(sent[res.seq], res)));
        results.dataset.taskId = r.body.task_id;
      })
      .catch((err: unknown) => showError(errors, err))
      .finally(() => {
        detect.disabled = files.length === 0;
        detect.textContent = 'Detect';
      });
  });

  root.append(
    form,
    errors,
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'row spread' }, h('h2', {}, 'Results'), slider.el),
      results,
    ),
  );
  void enabledScenes()
    .then((scenes) => fill(sceneSlot, scenePicker(scenes, 'scene_code', 'person_vehicle')))
    .catch((err: unknown) => showError(errors, err));
  // Captions keep their screen size: draw again when the layout changes size.
  window.addEventListener('resize', redraw);
  return () => {
    window.removeEventListener('resize', redraw);
    release();
  };
}
