/**
 * Zones and lines end to end, through the gateway, in either mode: an uploaded parking-lot clip with a line that
 * a car crosses and a zone it drives through. The events come through the events pages, the SSE stream and signed
 * webhooks, all alike; the analytics agree with them and with the annotated result frames; the same rules replayed
 * over the stored frames give the same events, byte for byte.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseEventStream } from '../../packages/sdk/src/stream';
import type { Receiver } from '../../services/results/test/webhook-receiver';
import { CURB, LEFT_LANE, PARKING_LOT, taskEvents } from '../helpers/places';
import { type TestStack } from '../helpers/stack';
import { startWebhookStack, until } from '../helpers/webhooks';

const KEY = 'e2e-analytics-key-0123456789';
const CLIP = PARKING_LOT;
const TYPES = [
  'vision.zone.entered',
  'vision.zone.exited',
  'vision.zone.dwell_exceeded',
  'vision.zone.occupancy_exceeded',
  'vision.zone.occupancy_cleared',
  'vision.line.crossed',
];

const ZONES = [{ ...LEFT_LANE, name: 'left lane', occupancy: [{ label: '*', over: 0 }] }];
const LINES = [CURB];

type Event = Record<string, unknown> & { id: string; kind: string; seq: number; rule_id: string };

describe('zones and lines on a video task', () => {
  let stack: TestStack;
  let rx: Receiver;
  beforeAll(async () => {
    ({ stack, rx } = await startWebhookStack({
      keys: `${KEY}:places`,
      env: { RESULTS_WEBHOOK_POLL_MS: '100', TASKS_POLL_INTERVAL_MS: '300', RESULTS_STREAM_POLL_MS: '100' },
    }));
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  });

  const api = (method: string, p: string, body?: unknown) =>
    stack.api(method, p, {
      key: KEY,
      ...(body !== undefined
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });

  // Pages of five events: the paging itself is part of what agrees.
  const allEvents = async (taskId: string): Promise<{ events: Event[]; done: boolean }> => {
    const { items, ended } = await taskEvents<Event>(api, taskId, 5);
    return { events: items, done: ended };
  };

  it('counts, events, annotated frames, webhooks, SSE and replay agree', async () => {
    const reg = await api('POST', '/v1/vision/webhooks', { url: rx.url, event_types: TYPES });
    expect(reg.status).toBe(201);
    rx.secrets = [reg.body.secret];

    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('zones', JSON.stringify(ZONES));
    form.append('lines', JSON.stringify(LINES));
    form.append('file', new Blob([readFileSync(CLIP)]), 'lot.mp4');
    const created = await stack.api('POST', '/v1/vision/video-tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    expect(created.body.rules_version).toBe(1);
    const taskId = created.body.task_id as string;

    // Every event, once the task ended and results evaluated its every frame.
    const { events } = await until(
      'every event',
      async () => {
        const r = await allEvents(taskId);
        return r.done ? r : undefined;
      },
      240_000,
    );
    const raw = events.map((e) => JSON.stringify(e));
    const crossings = events.filter((e) => e.kind === 'line.crossed');
    expect(crossings.length).toBeGreaterThanOrEqual(1);
    expect(crossings.every((e) => e.direction === 'in' && e.label === 'car')).toBe(true);
    const entered = events.filter((e) => e.kind === 'zone.entered');
    expect(entered.length).toBeGreaterThanOrEqual(1);
    expect(events.some((e) => e.kind === 'zone.occupancy_exceeded')).toBe(true);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    // In the order decided: by frame.
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => a - b));

    const summary = await api('GET', `/v1/vision/tasks/${taskId}/analytics`);
    expect(summary.status).toBe(200);
    const zone = summary.body.rules.find((r: { id: string }) => r.id === 'lane');
    const line = summary.body.rules.find((r: { id: string }) => r.id === 'curb');
    expect(line.in_total).toBe(crossings.length);
    expect(line.out_total).toBe(0);
    expect(zone.visits.total).toBe(entered.length);
    expect(zone.name).toBe('left lane');

    // The result frames carry the zone's counts; the last one's are the analytics' occupancy.
    const page = await api('GET', `/v1/vision/tasks/${taskId}/results?limit=500&min_score=0`);
    const frames = page.body.items as {
      zones?: Record<string, { counts: Record<string, number> }>;
      objects: { zones?: string[]; label: string }[];
    }[];
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.every((f) => f.zones?.lane !== undefined)).toBe(true);
    expect(frames[frames.length - 1].zones?.lane.counts).toEqual(zone.occupancy);
    const inLane = frames.flatMap((f) => f.objects.filter((o) => o.zones?.includes('lane')));
    expect(inLane.length).toBeGreaterThan(0);
    expect(inLane.every((o) => o.label === 'car' || o.label === 'truck')).toBe(true);

    // Webhooks: each event once, signed, its data the event.
    const hooks = await until('a webhook per event', () => {
      const got = rx.received.filter((r) => r.event && TYPES.includes(r.event.type));
      return got.length >= events.length ? got : undefined;
    });
    expect(hooks.every((r) => r.verified)).toBe(true);
    expect(hooks.map((r) => r.event?.id).sort()).toEqual(events.map((e) => e.id).sort());
    for (const h of hooks) {
      const i = events.findIndex((e) => e.id === h.event?.id);
      expect(h.event?.type).toBe(`vision.${events[i].kind}`);
      expect(JSON.stringify(h.event?.data)).toBe(raw[i]);
    }

    // SSE: the same events in the same order, then `end`.
    const res = await fetch(`${stack.url}/v1/vision/tasks/${taskId}/events/stream`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.status).toBe(200);
    const streamed: string[] = [];
    for await (const ev of parseEventStream(res.body!)) {
      if (ev.event === 'end') break;
      expect(ev.event).toBe('zone_event');
      streamed.push(JSON.stringify(JSON.parse(ev.data)));
    }
    expect(streamed).toEqual(raw);

    // Replay: the rules in force (as stored) over the stored frames give the same events, byte for byte.
    const rules = await api('GET', `/v1/vision/tasks/${taskId}/rules`);
    expect(rules.body.rules_version).toBe(1);
    const replay = await api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
      zones: rules.body.zones,
      lines: rules.body.lines,
      max_events: 10_000,
    });
    expect(replay.status).toBe(200);
    expect(replay.body.frames).toBe(frames.length);
    expect((replay.body.events as unknown[]).map((e) => JSON.stringify(e))).toEqual(raw);
    expect(replay.body.analytics).toEqual(summary.body);

    // The task has ended: its rules and its events are final. A new version is refused, the feed still ends
    // with the same events, and no webhook follows.
    const put = await api('PUT', `/v1/vision/tasks/${taskId}/rules`, { zones: [], lines: LINES });
    expect(put.status).toBe(409);
    expect(put.body.error).toMatchObject({ code: 'OP-TASK-ENDED', details: { status: 'succeeded' } });
    expect((await api('GET', `/v1/vision/tasks/${taskId}/rules`)).body.rules_version).toBe(1);
    await new Promise((r) => setTimeout(r, 2_000));
    const again = await allEvents(taskId);
    expect(again.done).toBe(true);
    expect(again.events.map((e) => JSON.stringify(e))).toEqual(raw);
    expect((await api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body).toEqual(summary.body);
    expect(rx.received.filter((r) => r.event && TYPES.includes(r.event.type))).toHaveLength(hooks.length);
  }, 300_000);
});
