import { randomUUID } from 'node:crypto';
import { TOPICS } from '@vision/shared';
import { AnalyticsStore } from '../src/store/analytics-store';
import { jobGrantFor } from '../../../test/helpers/identity';
import { risingCarFrame } from './helpers';
import { Receiver } from './webhook-receiver';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

let h: WebhookHarness;
let rx: Receiver;

beforeAll(async () => {
  h = await startWebhookHarness({ RESULTS_STREAM_POLL_MS: '20' });
  rx = await new Receiver().start();
});
afterAll(async () => {
  await h.close();
  await rx.close();
});
afterEach(() => jest.restoreAllMocks());

const ZONE = {
  id: 'upper',
  polygon: [
    [0.2, 0.1],
    [0.8, 0.1],
    [0.8, 0.4],
    [0.2, 0.4],
  ],
  labels: ['car'],
};
const LINE = { id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5], labels: ['car'] };
const RULES = { zones: [ZONE], lines: [LINE] };

/**
 * Car 7 rising (helpers' risingCarFrame: its feet from y 0.85 by 0.08 a frame, gone from seq 10 on), with person 8
 * standing at y 0.25 while the car is in view.
 */
function frame(taskId: string, seq: number) {
  const message = risingCarFrame(taskId, seq);
  if (seq < 10)
    message.value.objects.push({
      label: 'person',
      score: 0.9,
      track_id: '8',
      bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.25, width: 0.1, height: 0.1 },
    });
  return message;
}

const publishFrames = (taskId: string, from: number, to: number) =>
  h.bus.publish(
    TOPICS.frames,
    Array.from({ length: to - from }, (_, i) => frame(taskId, from + i)),
  );

async function allEvents(taskId: string): Promise<{ items: Record<string, unknown>[]; raw: string[] }> {
  const items: Record<string, unknown>[] = [];
  let cursor = '';
  for (;;) {
    const r = await h.api(
      'GET',
      `/v1/vision/tasks/${taskId}/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(r.status).toBe(200);
    items.push(...(r.body.items as Record<string, unknown>[]));
    if (r.body.items.length === 0) break;
    cursor = r.body.next_cursor as string;
    if (cursor === '') break;
  }
  return { items, raw: items.map((e) => JSON.stringify(e)) };
}

const brief = (events: Record<string, unknown>[]) =>
  events.map(
    (e) =>
      `${String(e.kind)}@${String(e.seq)}${e.direction ? `/${String(e.direction)}` : ''}${e.reason ? `/${String(e.reason)}` : ''}`,
  );

describe('analytics of places in the results service', () => {
  it('evaluates frames stored before the rules arrived, annotates frames, pages events, signs webhooks, replays byte for byte', async () => {
    const reg = await h.api('POST', '/v1/vision/webhooks', {
      body: {
        url: rx.url,
        event_types: ['vision.line.crossed', 'vision.zone.entered', 'vision.zone.exited'],
      },
    });
    expect(reg.status).toBe(201);
    rx.secrets = [reg.body.secret as string];
    const taskId = randomUUID();
    await publishFrames(taskId, 0, 6);
    await waitFor('frames stored', async () => (await h.svc.frames.count(taskId)) === 6);
    await h.taskEvent(taskId, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
    await publishFrames(taskId, 6, 12);
    await h.bus.publish(TOPICS.frames, [
      {
        key: taskId,
        value: {
          schema: 1,
          type: 'end',
          task_id: taskId,
          frames: 12,
          status: 'succeeded',
          grant: jobGrantFor(taskId),
        },
      },
    ]);
    await h.taskEvent(taskId, 'succeeded', { rules_version: 1, rules: RULES });
    await waitFor('task known', async () => (await h.svc.tasks.get(taskId))?.meta?.status === 'succeeded');

    let events: Awaited<ReturnType<typeof allEvents>> = { items: [], raw: [] };
    await waitFor('every event', async () => {
      events = await allEvents(taskId);
      return events.items.length === 3;
    });
    expect(brief(events.items)).toEqual(['line.crossed@5/in', 'zone.entered@6', 'zone.exited@11/lost']);
    expect(events.items[2]).toMatchObject({
      rule_id: 'upper',
      rule_version: 1,
      track_id: '7',
      dwell_ms: 3000,
      label: 'car',
    });
    // The last page says there is nothing more, ever.
    const tail = await h.api('GET', `/v1/vision/tasks/${taskId}/events?limit=100`);
    expect(tail.body.next_cursor).toBe('');

    const summary = await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`);
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({ task_id: taskId, rules_version: 1, as_of_seq: 11 });
    const [zone, line] = summary.body.rules as Record<string, unknown>[];
    expect(line).toMatchObject({ kind: 'line', id: 'gate', in: { car: 1 }, in_total: 1, out_total: 0 });
    expect(zone).toMatchObject({
      kind: 'zone',
      id: 'upper',
      entered: { car: 1 },
      exited: { car: 1 },
      visits: { total: 1, open: 0 },
    });
    expect((zone.dwell_ms as { max: number }).max).toBe(3000);

    // Result frames carry each object's zones and each zone's counts.
    const page = await h.api('GET', `/v1/vision/tasks/${taskId}/results?limit=12`);
    const f7 = page.body.items[7];
    expect(f7.zones).toEqual({ upper: { counts: { car: 1, '*': 1 } } });
    expect(f7.objects.map((o: { track_id: string; zones: string[] }) => [o.track_id, o.zones])).toEqual([
      ['7', ['upper']],
      ['8', []],
    ]);
    expect(page.body.items[3].zones).toEqual({ upper: { counts: { '*': 0 } } });

    // Signed webhooks, one per event, the event as data and its id as the CloudEvents id.
    await waitFor(
      'webhooks',
      async () =>
        rx.received.filter(
          (r) => r.event?.type.startsWith('vision.z') || r.event?.type === 'vision.line.crossed',
        ).length === 3,
    );
    const hooks = rx.received.filter((r) => r.event && r.event.type !== 'vision.webhook.verification');
    expect(hooks.every((r) => r.verified)).toBe(true);
    expect(hooks.map((r) => r.event?.type)).toEqual([
      'vision.line.crossed',
      'vision.zone.entered',
      'vision.zone.exited',
    ]);
    expect(hooks.map((r) => r.event?.id)).toEqual(events.items.map((e) => e.id));
    expect(hooks.map((r) => JSON.stringify(r.event?.data))).toEqual(events.raw);

    // Replay: the same rules over the same frames give the same events, byte for byte.
    const replay = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, { body: RULES });
    expect(replay.status).toBe(200);
    expect(replay.body.frames).toBe(12);
    expect(replay.body.events_total).toBe(3);
    expect((replay.body.events as unknown[]).map((e) => JSON.stringify(e))).toEqual(events.raw);
    expect(replay.body.analytics).toEqual(summary.body);
    // Another line over the same footage; max_events keeps the first ones.
    const other = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
      body: { lines: [{ id: 'low', start: [0.9, 0.7], end: [0.1, 0.7] }], max_events: 0 },
    });
    expect(other.body).toMatchObject({ events: [], events_total: 1 });
    expect(other.body.analytics.rules[0]).toMatchObject({ id: 'low', out: { car: 1 }, in_total: 0 });
  });

  it('applies a new rules version from the next frame: a changed zone ends its visits, an unchanged line keeps its counts', async () => {
    const taskId = randomUUID();
    await h.taskEvent(taskId, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
    await publishFrames(taskId, 0, 8);
    await waitFor(
      'seq 7 evaluated',
      async () => (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body.as_of_seq === 7,
    );
    const moved = { ...ZONE, polygon: ZONE.polygon.map(([x, y]) => [x, y + 0.01]) };
    await h.taskEvent(taskId, 'running', {
      type: 'task.rules_changed',
      rules_version: 2,
      rules: { zones: [moved], lines: [LINE] },
    });
    await waitFor(
      'version 2',
      async () => (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body.rules_version === 2,
    );
    await publishFrames(taskId, 8, 12);
    await waitFor(
      'seq 11 evaluated',
      async () => (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body.as_of_seq === 11,
    );
    const { items } = await allEvents(taskId);
    expect(items.map((e) => [brief([e])[0], e.rule_version])).toEqual([
      ['line.crossed@5/in', 1],
      ['zone.entered@6', 1],
      ['zone.exited@7/rule_changed', 1],
      ['zone.entered@8', 2],
      ['zone.exited@11/lost', 2],
    ]);
    const summary = await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`);
    expect(summary.body.rules.map((r: { id: string; version: number }) => [r.id, r.version])).toEqual([
      ['upper', 2],
      ['gate', 1],
    ]);
    expect(summary.body.rules[1].in_total).toBe(1);
    // A version already applied, delivered again, changes nothing.
    await h.taskEvent(taskId, 'running', {
      type: 'task.rules_changed',
      rules_version: 2,
      rules: { zones: [moved], lines: [LINE] },
    });
    await h.taskEvent(taskId, 'stopped', { rules_version: 2, rules: { zones: [moved], lines: [LINE] } });
    await waitFor('stopped', async () => (await h.svc.tasks.get(taskId))?.meta?.status === 'stopped');
    expect((await allEvents(taskId)).items).toHaveLength(5);
  });

  it('a write that fails is done again from the last snapshot: no event lost, none twice', async () => {
    const taskId = randomUUID();
    await h.taskEvent(taskId, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
    await waitFor(
      'rules known',
      async () => (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body.rules_version === 1,
    );
    const write = jest.spyOn(AnalyticsStore.prototype, 'write');
    write.mockRejectedValueOnce(new Error('database went away'));
    await publishFrames(taskId, 0, 12);
    await waitFor(
      'seq 11 evaluated',
      async () => (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body.as_of_seq === 11,
    );
    expect(write.mock.calls.length).toBeGreaterThan(1);
    const { items } = await allEvents(taskId);
    expect(brief(items)).toEqual(['line.crossed@5/in', 'zone.entered@6', 'zone.exited@11/lost']);
    expect(new Set(items.map((e) => e.id)).size).toBe(3);
  });

  it('refuses bad rules, bad queries, and other subjects', async () => {
    const taskId = randomUUID();
    await h.taskEvent(taskId, 'running', { type: 'task.created' });
    await waitFor('task known', async () => (await h.svc.tasks.get(taskId))?.meta !== undefined);
    const empty = await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`);
    expect(empty.body).toEqual({
      task_id: taskId,
      rules_version: 0,
      as_of_seq: null,
      media_ms: null,
      rules: [],
    });
    // An unknown query parameter answers as on the events and results routes.
    for (const p of ['analytics?x=1', 'events?x=1', 'results?x=1']) {
      const r = await h.api('GET', `/v1/vision/tasks/${taskId}/${p}`);
      expect([r.status, r.body.error.details]).toEqual([400, { reason: 'unknown_field', field: 'x' }]);
    }

    const bow = {
      zones: [
        {
          id: 'z',
          polygon: [
            [0.1, 0.1],
            [0.9, 0.9],
            [0.9, 0.1],
            [0.1, 0.9],
          ],
        },
      ],
    };
    const r1 = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, { body: bow });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatchObject({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason: 'invalid_field', field: 'zones.0.polygon' },
    });
    const r2 = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
      body: { lines: [LINE], colour: 1 },
    });
    expect(r2.body.error.details).toMatchObject({ reason: 'unknown_field', fields: ['colour'] });
    const r3 = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
      body: { lines: [LINE], max_events: -1 },
    });
    expect(r3.body.error.details).toMatchObject({ reason: 'invalid_field', field: 'max_events' });
    const r4 = await h.api('GET', `/v1/vision/tasks/${taskId}/events?min_score=0.5`);
    expect(r4.body.error.details.reason).toBe('unknown_field');
    // A results cursor is no events cursor.
    await publishFrames(taskId, 0, 2);
    await waitFor('frames', async () => (await h.svc.frames.count(taskId)) === 2);
    const frames = await h.api('GET', `/v1/vision/tasks/${taskId}/results?limit=1`);
    const r5 = await h.api('GET', `/v1/vision/tasks/${taskId}/events?cursor=${frames.body.next_cursor}`);
    expect(r5.status).toBe(400);
    expect(r5.body.error.details.reason).toBe('invalid_cursor');

    for (const path of ['analytics', 'events'])
      expect((await h.api('GET', `/v1/vision/tasks/${taskId}/${path}`, { subject: 'mallory' })).status).toBe(
        404,
      );
    expect(
      (
        await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
          subject: 'mallory',
          body: RULES,
        })
      ).status,
    ).toBe(404);
  });

  it('streams events as Server-Sent Events that resume after Last-Event-ID', async () => {
    const taskId = randomUUID();
    await h.taskEvent(taskId, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
    await publishFrames(taskId, 0, 12);
    await h.bus.publish(TOPICS.frames, [
      {
        key: taskId,
        value: {
          schema: 1,
          type: 'end',
          task_id: taskId,
          frames: 12,
          status: 'succeeded',
          grant: jobGrantFor(taskId),
        },
      },
    ]);
    await h.taskEvent(taskId, 'succeeded', { rules_version: 1, rules: RULES });
    const text = await (await sse(taskId)).text();
    const blocks = text.split('\n\n').filter((b) => b.startsWith('event:'));
    expect(blocks.map((b) => b.split('\n')[0])).toEqual([
      'event: zone_event',
      'event: zone_event',
      'event: zone_event',
      'event: end',
    ]);
    const id1 = blocks[0].split('\n')[1].replace('id: ', '');
    const resumed = (await (await sse(taskId, id1)).text())
      .split('\n\n')
      .filter((b) => b.startsWith('event:'));
    expect(resumed).toEqual(blocks.slice(1));
  });
});

async function sse(taskId: string, lastEventId?: string): Promise<Response> {
  const { IDENTITY_HEADER } = await import('@vision/shared');
  const { signFor } = await import('../../../test/helpers/identity');
  const path = `/v1/vision/tasks/${taskId}/events/stream`;
  return fetch(`${h.svc.url}${path}`, {
    headers: {
      [IDENTITY_HEADER]: signFor({ subject: 'alice', requestId: randomUUID() }, 'results', {
        method: 'GET',
        target: path,
      }),
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
    },
  });
}
