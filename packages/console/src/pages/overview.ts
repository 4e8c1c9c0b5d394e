/** Overview: the scenes (enabled or not, engine, labels) and today's remaining quota of both kinds. */
import { api, type QuotaKind, type Scene } from '../api.js';
import { fill, h } from '../dom.js';
import { showError, when } from '../ui.js';

function quotaCard(title: string, q: QuotaKind): HTMLElement {
  const pct = q.limit > 0 ? Math.round((q.remaining / q.limit) * 100) : 0;
  return h(
    'div',
    { class: 'quota', 'data-kind': title },
    h('h3', {}, title),
    h('p', { class: 'big' }, h('span', { class: 'remaining' }, q.remaining), ` of ${q.limit} left today`),
    h('progress', { max: 100, value: pct }),
    h(
      'p',
      { class: 'muted' },
      `${q.used} used${q.held ? `, ${q.held} held` : ''} · resets ${when(q.resets_at)}`,
    ),
  );
}

function scenesTable(scenes: readonly Scene[]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'scenes' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', {}, 'scene'), h('th', {}, 'state'), h('th', {}, 'engine'), h('th', {}, 'labels')),
      ),
      h(
        'tbody',
        {},
        ...scenes.map((sc) =>
          h(
            'tr',
            { 'data-scene': sc.scene_code, class: sc.enabled ? 'on' : 'off' },
            h('td', {}, h('code', {}, sc.scene_code), h('div', { class: 'muted' }, sc.name)),
            h(
              'td',
              {},
              sc.enabled ? 'enabled' : 'disabled',
              sc.reason ? h('div', { class: 'muted' }, sc.reason) : null,
            ),
            h(
              'td',
              {},
              sc.engine,
              h(
                'div',
                { class: 'muted' },
                `stores ≥ ${sc.lower_bound}, shows ≥ ${sc.default_business_threshold}`,
              ),
            ),
            h(
              'td',
              {},
              h('div', { class: 'labels' }, ...sc.labels.map((l) => h('span', { class: 'chip' }, l))),
            ),
          ),
        ),
      ),
    ),
  );
}

export function overviewPage(root: HTMLElement): () => void {
  const quota = h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Quota today'),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  const scenes = h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Scenes'),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  const errors = h('div', { class: 'errors' });
  root.append(errors, quota, scenes);
  let gone = false;
  void (async () => {
    try {
      const [s, q] = await Promise.all([
        api<{ scenes: Scene[] }>('GET', '/api/op/v1/scenes'),
        api<{ video_tasks: QuotaKind; images: QuotaKind }>('GET', '/v1/vision/quota'),
      ]);
      if (gone) return;
      fill(
        quota,
        h('h2', {}, 'Quota today'),
        h(
          'div',
          { class: 'quotas' },
          quotaCard('video tasks', q.body.video_tasks),
          quotaCard('images', q.body.images),
        ),
      );
      fill(scenes, h('h2', {}, 'Scenes'), scenesTable(s.body.scenes));
    } catch (err) {
      if (!gone) {
        showError(errors, err);
        quota.remove();
        scenes.remove();
      }
    }
  })();
  return () => {
    gone = true;
  };
}
