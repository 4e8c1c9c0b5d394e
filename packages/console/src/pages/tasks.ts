/** Video tasks: create one from a stream URL or an uploaded file (with a progress bar); the live list. */
import { TERMINAL, api, enabledScenes, uploadWithProgress, type Scene, type Task } from '../api.js';
import { fill, h } from '../dom.js';
import { badge, scenePicker, showError, when } from '../ui.js';

const REFRESH_MS = 2000;

/** Opens the created task's page, or shows the error; the form's button is usable again either way. */
function openCreated(created: Promise<{ body: Task }>, errors: HTMLElement, submit: HTMLButtonElement): void {
  void created
    .then((r) => {
      location.hash = `#/tasks/${r.body.task_id}`;
    })
    .catch((err: unknown) => showError(errors, err))
    .finally(() => {
      submit.disabled = false;
    });
}

function urlForm(scenes: readonly Scene[], errors: HTMLElement): HTMLFormElement {
  const url = h('input', {
    type: 'url',
    name: 'stream_url',
    required: true,
    placeholder: 'rtsp://camera.example/stream',
    autocomplete: 'off',
  });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create');
  const form = h(
    'form',
    { class: 'card create-url' },
    h('h3', {}, 'From a stream address'),
    h('label', {}, 'scene ', scenePicker(scenes, 'scene_code', 'person_vehicle')),
    h('label', { class: 'grow' }, 'stream URL ', url),
    submit,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const scene = (form.querySelector('select') as HTMLSelectElement).value;
    submit.disabled = true;
    showError(errors);
    openCreated(
      api<Task>('POST', '/v1/vision/tasks', {
        json: { scene_code: scene, stream_url: url.value.trim() },
        idempotent: true,
      }),
      errors,
      submit,
    );
  });
  return form;
}

function fileForm(scenes: readonly Scene[], errors: HTMLElement): HTMLFormElement {
  const file = h('input', {
    type: 'file',
    name: 'file',
    accept: 'video/mp4,video/quicktime,.mp4,.mov',
    required: true,
  });
  const progress = h('progress', { max: 100, value: 0, class: 'upload-progress', hidden: true });
  const percent = h('span', { class: 'muted upload-percent' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Upload');
  const form = h(
    'form',
    { class: 'card create-file' },
    h('h3', {}, 'From a video file (MP4 or MOV, up to 512 MB)'),
    h('label', {}, 'scene ', scenePicker(scenes, 'scene_code', 'person_vehicle')),
    h('label', { class: 'grow' }, 'file ', file),
    submit,
    h('div', { class: 'progress-row' }, progress, percent),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    const body = new FormData();
    body.append('scene_code', (form.querySelector('select') as HTMLSelectElement).value);
    body.append('file', chosen, chosen.name);
    submit.disabled = true;
    progress.hidden = false;
    progress.value = 0;
    showError(errors);
    const upload = uploadWithProgress<Task>('/v1/vision/video-tasks', body, (sent, total) => {
      const pct = total ? Math.round((sent / total) * 100) : 0;
      progress.value = pct;
      percent.textContent = `${pct}% of ${(total / 1e6).toFixed(1)} MB`;
    });
    openCreated(upload, errors, submit);
  });
  return form;
}

function taskRow(t: Task): HTMLElement {
  return h(
    'tr',
    { 'data-task': t.task_id },
    h('td', {}, h('a', { href: `#/tasks/${t.task_id}` }, h('code', {}, t.task_id))),
    h('td', {}, t.scene_code),
    h('td', {}, badge(t.status), t.reason ? h('div', { class: 'muted' }, t.reason) : null),
    h('td', { class: 'muted' }, when(t.created_at)),
  );
}

export function tasksPage(root: HTMLElement): () => void {
  const errors = h('div', { class: 'errors' });
  const listErrors = h('div', { class: 'errors' });
  const forms = h('div', { class: 'create' }, h('p', { class: 'muted' }, 'Loading scenes…'));
  const body = h('tbody', {});
  const list = h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Your video tasks'),
    listErrors,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'tasks' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'task'),
            h('th', {}, 'scene'),
            h('th', {}, 'status'),
            h('th', {}, 'created'),
          ),
        ),
        body,
      ),
    ),
  );
  root.append(h('h2', {}, 'New video task'), errors, forms, list);

  let timer: ReturnType<typeof setTimeout> | undefined;
  let gone = false;
  const refresh = async () => {
    try {
      const r = await api<{ items: Task[] }>('GET', '/v1/vision/tasks?kind=video&limit=50');
      if (gone) return;
      showError(listErrors);
      fill(
        body,
        ...(r.body.items.length
          ? r.body.items.map(taskRow)
          : [h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No task yet.'))]),
      );
      // Poll while something is still moving; slower once everything has ended.
      const moving = r.body.items.some((t) => !TERMINAL.has(t.status));
      timer = setTimeout(() => void refresh(), moving ? REFRESH_MS : REFRESH_MS * 5);
    } catch (err) {
      if (gone) return;
      showError(listErrors, err);
      timer = setTimeout(() => void refresh(), REFRESH_MS * 5);
    }
  };
  void refresh();
  void enabledScenes()
    .then((scenes) => {
      if (!gone) fill(forms, fileForm(scenes, errors), urlForm(scenes, errors));
    })
    .catch((err: unknown) => showError(errors, err));
  return () => {
    gone = true;
    clearTimeout(timer);
  };
}
