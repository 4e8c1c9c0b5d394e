/**
 * A video task's zones and lines (docs/ANALYTICS.md): drawn over its picture (a file task's video, a live
 * stream's latest still) and edited there, saved with `PUT .../rules` (a new rules version; the task is not
 * restarted), their live counts from `GET .../analytics` and their events under the picture, each with its
 * picture (events-view.ts).
 */
import { api } from './api.js';
import { fill, h } from './dom.js';
import { createEventsView, type PlaceEvent, type PlacesTimebase } from './events-view.js';
import { createPlacesEditor, type DrawMode } from './places-editor.js';
import { countsText, freshId, type Rules } from './places-model.js';
import type { Pictures } from './pictures.js';

const POLL_MS = 2000;

interface TaskRules extends Rules {
  rules_version: number;
}
interface RuleSummary {
  kind: 'zone' | 'line';
  id: string;
  occupancy?: Record<string, number>;
  visits?: { total: number; open: number };
  in?: Record<string, number>;
  out?: Record<string, number>;
  in_total?: number;
  out_total?: number;
}
interface Analytics {
  as_of_seq: number | null;
  rules: RuleSummary[];
}

export interface PlacesPanel {
  el: HTMLElement;
  /** Lays the timeline out again (its span changed: a video's duration known, a live stream's new frames). */
  redraw(): void;
  /** The task has ended: its rules no longer change (PUT rules is refused), so they are shown, not edited. */
  lock(): void;
  dispose(): void;
}

const summaryText = (r: RuleSummary): string =>
  r.kind === 'line'
    ? `in ${r.in_total ?? 0}, out ${r.out_total ?? 0}`
    : `now ${countsText(r.occupancy ?? {})}; visits ${r.visits?.total ?? 0}`;

/** `stage`: the element the picture is shown in (the editor is laid over it); `pictures`: the events' pictures. */
export function createPlacesPanel(
  taskId: string,
  stage: HTMLElement,
  time: PlacesTimebase,
  pictures: Pictures,
  onError: (err: unknown) => void,
): PlacesPanel {
  const base = `/v1/vision/tasks/${encodeURIComponent(taskId)}`;
  const version = h('span', { class: 'muted rules-version' });
  const addZone = h('button', { type: 'button', class: 'add-zone' }, 'Add zone');
  const addLine = h('button', { type: 'button', class: 'add-line' }, 'Add line');
  const finish = h('button', { type: 'button', class: 'finish-zone', hidden: true }, 'Finish zone');
  const save = h('button', { type: 'button', class: 'save-rules', disabled: true }, 'Save rules');
  const hint = h('span', { class: 'muted draw-hint' });
  const list = h('ul', { class: 'places-list' });
  const eventsView = createEventsView(taskId, time, pictures);
  const events: PlaceEvent[] = [];
  let summaries: RuleSummary[] = [];
  let eventsCursor = '';
  let eventsEnded = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let gone = false;

  const renderList = () => {
    const byId = new Map(summaries.map((r) => [r.id, r]));
    const rules = [
      ...editor.rules.zones.map((z) => ({ kind: 'zone', id: z.id })),
      ...editor.rules.lines.map((l) => ({ kind: 'line', id: l.id })),
    ];
    fill(
      list,
      ...rules.map((r) => {
        const summary = byId.get(r.id);
        const locked = stage.classList.contains('rules-locked');
        const remove = h('button', { type: 'button', class: 'remove-rule', hidden: locked }, 'Delete');
        remove.addEventListener('click', () => editor.remove(r.id));
        return h(
          'li',
          { 'data-rule': r.id, 'data-kind': r.kind },
          h('strong', {}, `${r.kind} ${r.id}`),
          ' ',
          h('span', { class: 'counts' }, summary ? summaryText(summary) : 'not evaluated yet'),
          ' ',
          remove,
        );
      }),
    );
    editor.setCaptions(Object.fromEntries(summaries.map((r) => [r.id, summaryText(r)])));
  };

  const editor = createPlacesEditor((_rules, mode: DrawMode) => {
    save.disabled = false;
    finish.hidden = mode !== 'zone';
    hint.textContent =
      mode === 'zone'
        ? 'click each vertex on the picture, then Finish zone'
        : mode === 'line'
          ? 'click the start, then the end of the line'
          : '';
    stage.classList.toggle('drawing', mode !== 'idle');
    renderList();
  });
  stage.append(editor.svg, editor.layer);

  const renderEvents = () => eventsView.render(events, eventsEnded);

  const readEvents = async () => {
    for (;;) {
      const q = `limit=500${eventsCursor ? `&cursor=${encodeURIComponent(eventsCursor)}` : ''}`;
      const page = (await api<{ items: PlaceEvent[]; next_cursor: string }>('GET', `${base}/events?${q}`))
        .body;
      events.push(...page.items);
      if (page.next_cursor === '') eventsEnded = true;
      else eventsCursor = page.next_cursor;
      if (eventsEnded || page.items.length === 0) return;
    }
  };

  const readAnalytics = async () => {
    const a = (await api<Analytics>('GET', `${base}/analytics`)).body;
    summaries = a.rules;
    list.dataset.asOf = a.as_of_seq === null ? '' : String(a.as_of_seq);
    renderList();
  };

  /** Polls run one at a time; `reread` asks the next one to read every event again (after a save). */
  let polling = false;
  let reread = false;
  const poll = async () => {
    timer = undefined;
    polling = true;
    if (reread) {
      reread = false;
      events.length = 0;
      eventsCursor = '';
      eventsEnded = false;
    }
    try {
      const wasEnded = eventsEnded;
      if (!eventsEnded) await readEvents();
      await readAnalytics();
      if (gone) return;
      renderEvents();
      // Once every event is in, the counts are final: one more read, then none.
      if (!wasEnded || reread) timer = setTimeout(() => void poll(), POLL_MS);
    } catch (err) {
      if (gone) return;
      onError(err);
      timer = setTimeout(() => void poll(), POLL_MS * 3);
    } finally {
      polling = false;
    }
  };
  /** A saved rule set may end visits (events of their own): the events and counts are read again. */
  const readAgain = () => {
    reread = true;
    if (!polling && timer === undefined) void poll();
  };

  const showRules = (r: TaskRules) => {
    editor.set({ zones: r.zones, lines: r.lines });
    version.textContent = `rules version ${r.rules_version}`;
    version.dataset.version = String(r.rules_version);
    save.disabled = true;
    renderList();
  };

  addZone.addEventListener('click', () => editor.drawZone(freshId(editor.rules, 'zone')));
  addLine.addEventListener('click', () => editor.drawLine(freshId(editor.rules, 'line')));
  finish.addEventListener('click', () => editor.finish());
  save.addEventListener('click', () => {
    save.disabled = true;
    const { zones, lines } = editor.rules;
    void api<TaskRules>('PUT', `${base}/rules`, { json: { zones, lines } })
      .then((r) => {
        showRules(r.body);
        onError(undefined);
        readAgain();
      })
      .catch((err: unknown) => {
        save.disabled = false;
        onError(err);
      });
  });

  void api<TaskRules>('GET', `${base}/rules`)
    .then((r) => {
      if (gone) return;
      showRules(r.body);
      void poll();
    })
    .catch((err: unknown) => onError(err));

  return {
    el: h(
      'section',
      { class: 'card places' },
      h('div', { class: 'row spread' }, h('h3', {}, 'Zones and lines'), version),
      h('div', { class: 'row' }, addZone, addLine, finish, save, hint),
      list,
      h('h4', {}, 'Events'),
      ...eventsView.els,
    ),
    redraw: renderEvents,
    lock() {
      for (const b of [addZone, addLine, finish, save]) b.hidden = true;
      for (const b of list.querySelectorAll<HTMLButtonElement>('.remove-rule')) b.hidden = true;
      stage.classList.add('rules-locked');
      hint.textContent =
        'the task has ended: its rules no longer change (a replay evaluates others: docs/ANALYTICS.md)';
    },
    dispose() {
      gone = true;
      clearTimeout(timer);
      editor.svg.remove();
      editor.layer.remove();
    },
  };
}
