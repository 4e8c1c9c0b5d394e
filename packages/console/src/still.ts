/**
 * A live stream task's picture: the latest frame the service decoded (`GET .../snapshot`, a JPEG), read with
 * the key and shown as an object URL, again every few seconds while the task runs, with the boxes of the
 * result frame taken at the same media time drawn over it. Its stage is where the zones and lines are drawn.
 */
import { ApiFailure, getKey } from './api.js';
import { h } from './dom.js';
import type { FrameFeed } from './feed.js';
import { createOverlay, drawBoxes } from './overlay.js';
import { colourOf, formatFrameTime, frameIndexAt } from './timeline.js';

const REFRESH_MS = 5000;
/** Before the first picture (the decoder has not delivered a frame yet): asked again sooner. */
const WAIT_MS = 1500;

export interface StillView {
  el: HTMLElement;
  /** The picture and its overlays (zones and lines are drawn over it too). */
  stage: HTMLElement;
  /** Draws the boxes again (after new result frames came). */
  redraw(): void;
  /** Stops reading pictures (the task ended); the last one stays. */
  stop(): void;
  dispose(): void;
}

export function createStill(taskId: string, feed: FrameFeed, onError: (err: unknown) => void): StillView {
  const path = `/v1/vision/tasks/${encodeURIComponent(taskId)}/snapshot`;
  const img = h('img', { class: 'still', alt: 'the latest picture of the stream' });
  const svg = createOverlay();
  const stage = h('div', { class: 'stage video-stage still-stage' }, img, svg);
  const info = h('p', { class: 'muted still-info' }, 'Waiting for a picture of the stream…');
  let url: string | undefined;
  let frameTimeMs: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const redraw = () => {
    if (!img.naturalWidth || frameTimeMs === undefined) return;
    const i = frameIndexAt(feed.times, frameTimeMs);
    const objects = i >= 0 ? feed.frames[i].objects : [];
    drawBoxes(svg, img.naturalWidth, img.naturalHeight, objects, (o) =>
      colourOf(o.track_id ? `track:${o.track_id}` : o.label),
    );
  };

  const read = async (): Promise<boolean> => {
    const res = await fetch(path, {
      headers: { authorization: `Bearer ${getKey()}` },
      credentials: 'omit',
      cache: 'no-store',
    });
    // 409: no picture yet (or the task is no longer running); 404: the task is gone.
    if (res.status === 409 || res.status === 404) return false;
    if (!res.ok) throw new ApiFailure(res.status, `HTTP-${res.status}`, 'The picture could not be loaded');
    const blob = await res.blob();
    if (stopped) return true;
    const next = URL.createObjectURL(blob);
    await new Promise<void>((resolve) => {
      img.addEventListener('load', () => resolve(), { once: true });
      img.addEventListener('error', () => resolve(), { once: true });
      img.src = next;
    });
    if (url) URL.revokeObjectURL(url);
    url = next;
    frameTimeMs = Number(res.headers.get('x-frame-time-ms') ?? NaN);
    if (!Number.isFinite(frameTimeMs)) frameTimeMs = undefined;
    img.dataset.frameTimeMs = frameTimeMs === undefined ? '' : String(frameTimeMs);
    info.textContent = `Picture of the stream at ${frameTimeMs === undefined ? '?' : formatFrameTime(frameTimeMs)} (${img.naturalWidth}×${img.naturalHeight}); it is read again every ${REFRESH_MS / 1000} s.`;
    redraw();
    return true;
  };

  const loop = async () => {
    timer = undefined;
    let got = false;
    try {
      got = await read();
    } catch (err) {
      onError(err);
    }
    if (!stopped) timer = setTimeout(() => void loop(), got ? REFRESH_MS : WAIT_MS);
  };
  void loop();

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    if (!url) info.textContent = 'The task is not running: there is no picture of its stream to draw on.';
  };

  return {
    el: h('div', { class: 'player-wrap still-wrap' }, stage, info),
    stage,
    redraw,
    stop,
    dispose() {
      stop();
      if (url) URL.revokeObjectURL(url);
    },
  };
}
