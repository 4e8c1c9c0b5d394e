/**
 * A task's tracks and their best shots: each tracked object the result frames name a best shot for
 * (`best_shot_path`), with the crop of its best frame, read lazily; a click shows that whole frame with the box.
 * Each tile says the track's label and times; a picture that is a fallback says so, and a track whose picture
 * cannot be shown says why in the tile's place: never an empty square.
 * The list grows with the frames (read incrementally from the feed). A best shot improves while its track
 * lasts: those read while the task ran are read again once it has ended.
 */
import { h } from './dom.js';
import {
  bestShotRuleText,
  collectTracks,
  cropPath,
  noBestShotText,
  trackTimes,
  type TrackShot,
} from './evidence-model.js';
import type { FrameFeed } from './feed.js';
import type { Frame } from './api.js';
import type { PictureOutcome, Pictures } from './pictures.js';
import { formatFrameTime } from './timeline.js';

export interface BestShots {
  el: HTMLElement;
  /** Reads the frames the feed added since the last call. */
  update(): void;
  /** Reads every best shot again (the task ended: they are final). */
  refresh(): void;
}

export function createBestShots(feed: FrameFeed, pictures: Pictures): BestShots {
  const tracks = new Map<string, TrackShot>();
  const items = new Map<string, { li: HTMLLIElement; path: string }>();
  const list = h('ul', { class: 'best-shots', 'aria-label': 'best shot of each track' });
  const empty = h('p', { class: 'muted best-shots-empty' }, 'No tracked object has a best shot yet.');
  let frames: readonly Frame[] | undefined;
  /** The last frame read (the feed drops its oldest frames past its cap, so indices shift). */
  let last: Frame | undefined;

  const itemOf = (t: TrackShot): HTMLLIElement => {
    const text = `${t.label} · track ${t.trackId}`;
    const img = h('img', {
      class: 'best-shot-img',
      // What shows until the picture is read: the track, not an empty square.
      alt: t.label,
      'data-alt': `best shot of ${text}`,
      width: 96,
      height: 96,
    });
    const open = h('button', { type: 'button', class: 'best-shot', title: 'show the frame' }, img);
    open.addEventListener('click', () => pictures.open(t.path, `best shot of ${text}`));
    const note = h('span', { class: 'muted best-shot-rule', hidden: true });
    const time = h('span', { class: 'muted best-shot-time' }, trackTimes(t, formatFrameTime));
    const li = h(
      'li',
      { 'data-track-id': t.trackId, 'data-label': t.label, 'data-state': 'waiting' },
      open,
      h('span', { class: 'muted' }, text),
      time,
      note,
    );
    const settled = (o: PictureOutcome) => {
      if (o.shown) {
        li.dataset.state = 'shown';
        const why = bestShotRuleText(o.rule);
        if (o.rule) li.dataset.rule = o.rule;
        if (why) {
          note.textContent = why;
          note.hidden = false;
        }
        return;
      }
      // No picture: the tile says the track and why, in the picture's place.
      li.dataset.state = 'none';
      const reason = h(
        'div',
        { class: 'no-picture', 'data-reason': o.reason ?? o.code, title: o.message },
        h('strong', {}, t.label),
        h('span', {}, noBestShotText(o.code, o.reason)),
      );
      open.replaceWith(reason);
    };
    pictures.lazy(img, cropPath(t.path), settled);
    return li;
  };

  /** Takes an item off the page (its picture no longer awaited), putting `by` in its place. */
  const replace = (old: HTMLLIElement, by?: HTMLLIElement) => {
    const img = old.querySelector('img');
    if (img) pictures.release(img);
    if (by) old.replaceWith(by);
    else old.remove();
  };

  const update = () => {
    // A new threshold re-reads every frame into a new list: the tracks are gathered again.
    if (feed.frames !== frames) {
      frames = feed.frames;
      last = undefined;
      tracks.clear();
    }
    const from = last === undefined ? 0 : frames.lastIndexOf(last) + 1;
    collectTracks(frames, from, tracks);
    last = frames[frames.length - 1];
    for (const t of tracks.values()) {
      const known = items.get(t.trackId);
      if (known && known.path === t.path) {
        // The track goes on: its tile's times follow it.
        const time = known.li.querySelector('.best-shot-time');
        if (time) time.textContent = trackTimes(t, formatFrameTime);
        continue;
      }
      const li = itemOf(t);
      if (known) replace(known.li, li);
      else list.append(li);
      items.set(t.trackId, { li, path: t.path });
    }
    for (const [id, item] of items)
      if (!tracks.has(id)) {
        replace(item.li);
        items.delete(id);
      }
    empty.hidden = items.size > 0;
    list.dataset.tracks = String(items.size);
  };

  const refresh = () => {
    for (const [id, item] of items) {
      const t = tracks.get(id);
      if (!t) continue;
      pictures.forget(cropPath(item.path));
      pictures.forget(item.path);
      const li = itemOf(t);
      replace(item.li, li);
      items.set(id, { li, path: t.path });
    }
  };

  return {
    el: h('section', { class: 'card tracks' }, h('h3', {}, 'Tracks'), empty, list),
    update,
    refresh,
  };
}
