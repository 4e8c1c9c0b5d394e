/**
 * One video task: its status (polled), a stop button, the min_score slider, and either the uploaded
 * video with the detections drawn over it (file tasks) or, for a stream, its latest picture with the boxes over
 * it, the live chart and latest objects. The task's zones and lines are drawn over the video or the stream's
 * picture, edited and saved there, with their counts and events (each with its picture), and the best shot of
 * each track.
 */
import { STOPPABLE, TERMINAL, api, type Task } from '../api.js';
import { createBestShots } from '../best-shots.js';
import { fill, h, type Page } from '../dom.js';
import { FrameFeed } from '../feed.js';
import { createLiveView } from '../live.js';
import { createPlacesPanel, type PlacesPanel } from '../places-panel.js';
import { createPictures } from '../pictures.js';
import { createPlayer, type Player } from '../player.js';
import { createStill, type StillView } from '../still.js';
import { badge, scoreSlider, showError, when } from '../ui.js';
import { hasUpload, videoSource } from '../video-auth.js';

const STATUS_POLL_MS = 2000;

export function taskPage(taskId: string): Page {
  return (root) => {
    const errors = h('div', { class: 'errors' });
    const facts = h('dl', { class: 'facts' });
    const stop = h('button', { type: 'button', class: 'danger', hidden: true }, 'Stop');
    const view = h('div', { class: 'view' }, h('p', { class: 'muted' }, 'Loading…'));
    const frameCount = h('span', { class: 'muted frame-count' });
    const applied = h('span', { class: 'muted applied' });
    let player: Player | undefined;
    let live: ReturnType<typeof createLiveView> | undefined;
    let still: StillView | undefined;
    let timelineAt = 0;
    let release: (() => void) | undefined;
    let places: PlacesPanel | undefined;
    const pictures = createPictures();
    let gone = false;
    let statusTimer: ReturnType<typeof setTimeout> | undefined;

    const feed = new FrameFeed(
      taskId,
      (f) => {
        if (f.applied !== undefined && !sliderTouched) slider.set(f.applied);
        // The service clamps a threshold under the scene's lower bound: say which one applies.
        applied.textContent =
          f.applied !== undefined && Math.abs(f.applied - Number(slider.input.value)) > 1e-9
            ? `applied: ${f.applied.toFixed(2)} (the scene's lower bound)`
            : '';
        frameCount.textContent = `${f.frames.length} frame${f.frames.length === 1 ? '' : 's'}${f.ended ? ' (all)' : ' so far'}`;
        frameCount.dataset.ended = String(f.ended);
        frameCount.dataset.frames = String(f.frames.length);
        player?.redraw();
        live?.update();
        bestShots.update();
        still?.redraw();
        // The live timeline grows with the frames: laid out again at most once a second (its own poll does too).
        if (still && Date.now() - timelineAt >= 1000) {
          timelineAt = Date.now();
          places?.redraw();
        }
      },
      (err) => showError(errors, err),
    );
    let sliderTouched = false;
    const slider = scoreSlider('min score', 0.8, (v) => {
      sliderTouched = true;
      feed.setMinScore(v);
    });
    const bestShots = createBestShots(feed, pictures);

    const showTask = (t: Task) => {
      fill(
        facts,
        h('dt', {}, 'status'),
        h('dd', { class: 'task-status' }, badge(t.status), t.reason ? ` ${t.reason}` : ''),
        h('dt', {}, 'scene'),
        h('dd', {}, t.scene_code),
        h('dt', {}, 'created'),
        h('dd', {}, when(t.created_at)),
        h('dt', {}, 'updated'),
        h('dd', {}, when(t.updated_at)),
        h('dt', {}, 'results until'),
        h('dd', {}, when(t.result_expires_at)),
      );
      stop.hidden = !STOPPABLE.has(t.status);
    };

    const pollStatus = async () => {
      try {
        const r = await api<Task>('GET', `/v1/vision/tasks/${encodeURIComponent(taskId)}`);
        if (gone) return;
        showTask(r.body);
        if (!TERMINAL.has(r.body.status)) statusTimer = setTimeout(() => void pollStatus(), STATUS_POLL_MS);
        else {
          still?.stop();
          places?.lock();
          // The tracks' best shots seen while it ran may have improved since.
          bestShots.refresh();
        }
      } catch (err) {
        if (gone) return;
        showError(errors, err);
        statusTimer = setTimeout(() => void pollStatus(), STATUS_POLL_MS * 5);
      }
    };

    stop.addEventListener('click', () => {
      stop.disabled = true;
      showError(errors);
      void api<Task>('POST', `/v1/vision/tasks/${encodeURIComponent(taskId)}/stop`)
        .then((r) => showTask(r.body))
        .catch((err: unknown) => showError(errors, err))
        .finally(() => {
          stop.disabled = false;
        });
    });

    root.append(
      h(
        'section',
        { class: 'card' },
        h('div', { class: 'row spread' }, h('h2', {}, 'Task ', h('code', {}, taskId)), stop),
        facts,
      ),
      errors,
      pictures.dialog,
      h(
        'section',
        { class: 'card' },
        h('div', { class: 'row spread' }, h('div', { class: 'row' }, slider.el, applied), frameCount),
        view,
      ),
    );

    void (async () => {
      try {
        const first = await api<Task>('GET', `/v1/vision/tasks/${encodeURIComponent(taskId)}`);
        if (gone) return;
        showTask(first.body);
        if (!TERMINAL.has(first.body.status))
          statusTimer = setTimeout(() => void pollStatus(), STATUS_POLL_MS);
        if (await hasUpload(taskId)) {
          const progress = h('progress', { max: 100, value: 0 });
          fill(view, h('p', { class: 'muted' }, 'Loading the video… '), progress);
          const source = await videoSource(taskId, (got, total) => {
            progress.value = total ? Math.round((got / total) * 100) : 0;
          });
          if (gone) return source.release();
          release = source.release;
          player = createPlayer(source.src, feed);
          player.el.dataset.mode = source.mode;
          fill(view, player.el);
          const video = player.video;
          places = createPlacesPanel(
            taskId,
            player.stage,
            {
              endMs: () => (Number.isFinite(video.duration) ? video.duration * 1000 : 0),
              seek: (ms) => {
                video.currentTime = ms / 1000;
              },
            },
            pictures,
            (err) => showError(errors, err),
          );
          video.addEventListener('durationchange', () => places?.redraw());
          root.append(places.el, bestShots.el);
        } else {
          // A stream has no stored video: its zones and lines are drawn on its latest picture.
          live = createLiveView(feed);
          still = createStill(taskId, feed, (err) => showError(errors, err));
          if (TERMINAL.has(first.body.status)) still.stop();
          fill(view, still.el);
          places = createPlacesPanel(
            taskId,
            still.stage,
            { startMs: () => feed.times[0], endMs: () => feed.times[feed.times.length - 1] ?? 0 },
            pictures,
            (err) => showError(errors, err),
          );
          // The editor's buttons right under the picture; the chart and the tracks after them.
          root.append(places.el, h('section', { class: 'card' }, live.el), bestShots.el);
        }
        if (TERMINAL.has(first.body.status)) places.lock();
        // A running task's frames are followed over the results stream; an ended one's are paged in.
        feed.start(!TERMINAL.has(first.body.status));
      } catch (err) {
        if (!gone) {
          showError(errors, err);
          view.replaceChildren();
        }
      }
    })();

    return () => {
      gone = true;
      clearTimeout(statusTimer);
      feed.stop();
      places?.dispose();
      player?.dispose();
      still?.dispose();
      pictures.dispose();
      release?.();
    };
  };
}
