/**
 * The uploaded video with its detections drawn over it in sync: for each frame the browser presents
 * (requestVideoFrameCallback), the overlay shows the boxes of the result frame with the greatest
 * `frame_time_ms` <= the presented frame's media time (its PTS). A track keeps its colour.
 */
import type { DetectedObject } from './api.js';
import { h } from './dom.js';
import type { FrameFeed } from './feed.js';
import { createOverlay, drawBoxes } from './overlay.js';
import { colourOf, formatFrameTime, frameIndexAt } from './timeline.js';

const colourOfObject = (o: DetectedObject) => colourOf(o.track_id ? `track:${o.track_id}` : o.label);

export interface Player {
  el: HTMLElement;
  /** The video and its overlays (zones and lines are drawn over it too). */
  stage: HTMLElement;
  video: HTMLVideoElement;
  /** Draws again for the frame on screen (after the frames were re-read). */
  redraw(): void;
  dispose(): void;
}

export function createPlayer(src: string, feed: FrameFeed): Player {
  const video = h('video', {
    src,
    controls: true,
    muted: true,
    playsinline: true,
    preload: 'auto',
    class: 'player',
  });
  const hasFrameCallbacks =
    typeof (video as { requestVideoFrameCallback?: unknown }).requestVideoFrameCallback === 'function';
  video.muted = true;
  const svg = createOverlay();
  const info = h('p', { class: 'muted frame-info' }, 'Loading the video…');
  let mediaTimeMs: number | undefined;
  let handle: number | undefined;

  const draw = () => {
    if (!video.videoWidth) return;
    const t = mediaTimeMs ?? video.currentTime * 1000;
    // Frame times are whole milliseconds: compare against the presented time, a microsecond of slack.
    const i = frameIndexAt(feed.times, Math.floor(t + 1e-3));
    const frame = i >= 0 ? feed.frames[i] : undefined;
    drawBoxes(svg, video.videoWidth, video.videoHeight, frame?.objects ?? [], colourOfObject);
    svg.dataset.mediaTime = t.toFixed(3);
    svg.dataset.frameId = frame?.frame_id ?? '';
    svg.dataset.frameTime = frame ? String(frame.frame_time_ms) : '';
    info.textContent = frame
      ? `at ${formatFrameTime(t)}: frame ${formatFrameTime(frame.frame_time_ms)}, ${frame.objects.length} object${frame.objects.length === 1 ? '' : 's'}${frame.objects_total !== undefined ? ` of ${frame.objects_total}` : ''}`
      : `at ${formatFrameTime(t)}: no result frame yet`;
  };

  const onFrame: VideoFrameRequestCallback = (_now, meta) => {
    mediaTimeMs = meta.mediaTime * 1000;
    draw();
    handle = video.requestVideoFrameCallback(onFrame);
  };
  if (hasFrameCallbacks) handle = video.requestVideoFrameCallback(onFrame);
  else {
    // Without requestVideoFrameCallback (older browsers): the element's clock, less exact.
    video.addEventListener('timeupdate', draw);
    video.addEventListener('seeked', draw);
  }
  video.addEventListener('loadedmetadata', draw);
  // Captions keep their screen size: draw again when the layout changes size (a paused video presents no frame).
  window.addEventListener('resize', draw);
  const stage = h('div', { class: 'stage video-stage' }, video, svg);
  return {
    el: h('div', { class: 'player-wrap' }, stage, info),
    stage,
    video,
    redraw: draw,
    dispose() {
      window.removeEventListener('resize', draw);
      if (handle !== undefined) video.cancelVideoFrameCallback(handle);
      video.removeAttribute('src');
      video.load();
    },
  };
}
