/**
 * A task's zone and line events under its picture: a timeline with a mark per event at its media time (on a
 * video, a click seeks there) and the list of events, each with its picture: a thumbnail (the crop of the object,
 * or the whole frame for an alert about a zone) read lazily, which opens the frame with the object's box when
 * clicked; an event without a picture says why.
 */
import { fill, h } from './dom.js';
import { cropPath, noSnapshotText, snapshotPath, type EventPicture } from './evidence-model.js';
import type { Pictures } from './pictures.js';
import { timelinePercent } from './places-model.js';
import { formatFrameTime } from './timeline.js';

/** An analytics event as the console shows it (docs/openapi.yaml, AnalyticsEvent). */
export interface PlaceEvent extends EventPicture {
  kind: string;
  rule_id: string;
  media_ms: number;
  label?: string;
  track_id?: string;
  direction?: string;
  dwell_ms?: number;
}

/** What the timeline spans and what a click on an event does. */
export interface PlacesTimebase {
  /**
   * The media time the timeline starts at: absent, 0 (a video); a live stream's media time is Unix ms, and its
   * timeline starts at its first frame (undefined before any: its first event).
   */
  startMs?(): number | undefined;
  /** The media time it ends at (a video's duration, a live stream's latest frame); 0: unknown. */
  endMs(): number;
  /** Shows the picture at a media time (a video seeks); absent where the picture is live. */
  seek?(ms: number): void;
}

export interface EventsView {
  /** The timeline and the list, in that order. */
  els: HTMLElement[];
  /** Lays out these events (all of the task's so far); `ended`: every event is in. */
  render(events: readonly PlaceEvent[], ended: boolean): void;
}

const describe = (e: PlaceEvent): string =>
  [
    formatFrameTime(e.media_ms),
    e.kind,
    e.rule_id,
    e.label,
    e.track_id !== undefined ? `track ${e.track_id}` : undefined,
    e.direction,
    e.dwell_ms !== undefined ? `(${(e.dwell_ms / 1000).toFixed(1)} s)` : undefined,
  ]
    .filter((x) => x !== undefined && x !== '')
    .join(' ');

export function createEventsView(taskId: string, time: PlacesTimebase, pictures: Pictures): EventsView {
  const timeline = h('div', { class: 'events-timeline', role: 'list', 'aria-label': 'zone and line events' });
  const list = h('ol', { class: 'events-list', 'aria-label': 'events and their pictures' });
  /** One item per event id, kept across renders so that a picture is read once. */
  const items = new Map<string, HTMLLIElement>();

  const itemOf = (e: PlaceEvent): HTMLLIElement => {
    const text = describe(e);
    const path = snapshotPath(taskId, e);
    let picture: HTMLElement;
    if (path) {
      const img = h('img', {
        class: 'event-thumb-img',
        alt: '',
        'data-alt': `picture of ${text}`,
        width: 96,
        height: 72,
      });
      // The crop of the object; an alert about a whole zone has no object: its frame, scaled.
      pictures.lazy(img, e.track_id !== undefined ? cropPath(path) : path);
      picture = h('button', { type: 'button', class: 'event-thumb', title: 'show the frame' }, img);
      picture.addEventListener('click', () => pictures.open(path, text));
    } else
      picture = h(
        'span',
        { class: 'no-snapshot muted', 'data-reason': e.snapshot_reason ?? '' },
        noSnapshotText(e.snapshot_reason),
      );
    const seek = time.seek;
    const when = seek
      ? h('button', { type: 'button', class: 'event-time link', title: 'show this moment' }, text)
      : h('span', { class: 'event-time' }, text);
    if (seek) when.addEventListener('click', () => seek(e.media_ms));
    return h(
      'li',
      {
        class: 'event-item',
        'data-event-id': e.id,
        'data-kind': e.kind,
        'data-has-snapshot': String(path !== undefined),
      },
      picture,
      when,
    );
  };

  const render = (events: readonly PlaceEvent[], ended: boolean) => {
    const times = events.map((e) => e.media_ms);
    const start = time.startMs ? Math.min(time.startMs() ?? Infinity, ...times) : 0;
    const from = Number.isFinite(start) ? start : 0;
    const known = time.endMs();
    const to = Math.max(known > from ? known : from + 1, ...times);
    fill(
      timeline,
      ...events.map((e) => {
        const mark = h('button', {
          type: 'button',
          class: `event-mark ${e.kind.replace('.', '-')}`,
          role: 'listitem',
          title: describe(e),
          'data-kind': e.kind,
          'data-rule': e.rule_id,
          'data-media-ms': e.media_ms,
        });
        // A style property, not a style attribute: the console's CSP refuses inline style attributes.
        mark.style.left = `${timelinePercent(e.media_ms - from, to - from).toFixed(3)}%`;
        const seek = time.seek;
        if (seek) mark.addEventListener('click', () => seek(e.media_ms));
        return mark;
      }),
    );
    timeline.dataset.events = String(events.length);
    timeline.dataset.startMs = String(from);
    timeline.dataset.endMs = String(to);
    timeline.dataset.ended = String(ended);

    const shown = new Set<string>();
    const ordered = events.map((e) => {
      shown.add(e.id);
      let li = items.get(e.id);
      if (!li) items.set(e.id, (li = itemOf(e)));
      return li;
    });
    for (const [id, li] of items)
      if (!shown.has(id)) {
        const img = li.querySelector('img');
        if (img) pictures.release(img);
        items.delete(id);
      }
    // Only what changed moves: the items already in place keep their pictures.
    if (ordered.length !== list.children.length || ordered.some((li, i) => list.children[i] !== li))
      list.replaceChildren(...ordered);
    list.dataset.events = String(events.length);
  };

  return { els: [timeline, list], render };
}
