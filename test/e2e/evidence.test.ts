/**
 * The evidence of places end to end, through the gateway, in either mode (docs/EVIDENCE.md): an
 * uploaded parking-lot clip with a line a car crosses. Every `line.crossed` event has a picture that decodes as
 * JPEG, reads the same bytes twice, has the event's track box drawn on it and is the frame of the event's media
 * time (compared with a frame ffmpeg decodes there); tracks have best shots; a replay links the pictures and takes
 * none; malformed, unknown and foreign ids answer their documented codes.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import {
  expectBoxDrawn,
  expectCropOfFrameAt,
  pixelBox,
  rgb,
  type EvidenceEvent as Event,
  type EvidenceFrame as Frame,
} from '../helpers/evidence-pictures';
import { CURB, FLOOR, LEFT_LANE, PARKING_LOT, taskEvents } from '../helpers/places';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { streamServer, streamUrls, type StreamServer } from '../helpers/stream-servers';
import { until } from '../helpers/webhooks';

const KEY = 'e2e-evidence-key-0123456789';
const OTHER = 'e2e-evidence-other-0123456789';
const ZONES = [{ ...LEFT_LANE, occupancy: [{ label: '*', over: 0 }] }];
const LINES = [CURB];

describe('pictures of events and tracks', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      keys: `${KEY}:evidence,${OTHER}:someone-else`,
      env: { TASKS_POLL_INTERVAL_MS: '300' },
    });
  }, 300_000);
  afterAll(() => stack?.close());

  const api = (method: string, p: string, body?: unknown, key = KEY) =>
    stack.api(method, p, {
      key,
      ...(body !== undefined
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });
  const picture = async (p: string, key = KEY) => {
    const r = await fetch(`${stack.url}${p}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
  };

  /** Every event of the task once it has ended, else undefined. */
  const allEvents = async (taskId: string): Promise<Event[] | undefined> => {
    const { items, ended } = await taskEvents<Event>(api, taskId, 100);
    return ended ? items : undefined;
  };

  let taskId = '';
  let events: Event[] = [];
  let frames: Frame[] = [];
  let status = '';

  /** The vehicles' track, label and bottom-centre per frame: what a failed crossing check shows. */
  const vehicleTrail = () =>
    frames.map((f) =>
      [
        f.frame_id.split(':')[1],
        ...f.objects
          .filter((o) => o.label === 'car' || o.label === 'truck')
          .map(
            (o) =>
              `${o.track_id ?? '-'}/${o.label}@${o.bbox.cx.toFixed(3)},${(o.bbox.cy + o.bbox.height / 2).toFixed(3)}`,
          ),
      ].join(' '),
    );

  beforeAll(async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('zones', JSON.stringify(ZONES));
    form.append('lines', JSON.stringify(LINES));
    form.append('file', new Blob([readFileSync(PARKING_LOT)]), 'lot.mp4');
    const created = await stack.api('POST', '/v1/vision/video-tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    taskId = created.body.task_id as string;
    events = await until('every event', () => allEvents(taskId), 240_000);
    frames = (await api('GET', `/v1/vision/tasks/${taskId}/results?limit=500&min_score=0`)).body
      .items as Frame[];
    status = (await api('GET', `/v1/vision/tasks/${taskId}`)).body.status as string;
  }, 300_000);

  it('each line crossing has the JPEG of its frame, its track box drawn, the same bytes on every read', async () => {
    const crossings = events.filter((e) => e.kind === 'line.crossed');
    expect(status).toBe('succeeded');
    // A car crosses the curb; when none is found, the trail says whether detection or evaluation missed it.
    expect(crossings.length > 0 ? 'crossed' : vehicleTrail()).toBe('crossed');
    for (const e of events)
      if (e.has_snapshot) expect(e.snapshot_path).toBe(`/v1/vision/tasks/${taskId}/events/${e.id}/snapshot`);
    for (const e of crossings) {
      expect(e).toMatchObject({ has_snapshot: true });
      expect(e.snapshot_reason).toBeUndefined();
      const a = await picture(e.snapshot_path as string);
      expect(a.status).toBe(200);
      expect(a.headers.get('content-type')).toBe('image/jpeg');
      expect(a.headers.get('x-frame-seq')).toBe(String(e.seq));
      expect((await sharp(a.bytes).metadata()).format).toBe('jpeg');
      expect((await picture(e.snapshot_path as string)).bytes.equals(a.bytes)).toBe(true);

      // The drawing lies on the event's track box in the frame of its seq.
      const frame = frames.find((f) => f.frame_id === `${taskId}:${e.seq}`)!;
      const o = frame.objects.find((x) => x.track_id === e.track_id)!;
      const pic = await rgb(a.bytes);
      const { x1, y1, x2, y2 } = pixelBox(o, pic);
      expectBoxDrawn(pic, { x1, y1, x2, y2 });

      // The crop is the clean box, and it is the frame at the event's media time.
      const c = await picture(`${e.snapshot_path as string}?crop=true`);
      expect(c.status).toBe(200);
      await expectCropOfFrameAt(PARKING_LOT, e.media_ms, pic, { x1, y1, x2, y2 }, c.bytes);
    }
  }, 120_000);

  it('tracked objects name their best shot, a JPEG of a frame whose box passes the size rule', async () => {
    const tracked = frames.flatMap((f) => f.objects.filter((o) => o.track_id !== undefined));
    expect(tracked.length).toBeGreaterThan(0);
    for (const o of tracked)
      expect(o.best_shot_path).toBe(`/v1/vision/tasks/${taskId}/tracks/${o.track_id}/best_shot`);
    const crossing = events.find((e) => e.kind === 'line.crossed')!;
    const best = await picture(`/v1/vision/tasks/${taskId}/tracks/${String(crossing.track_id)}/best_shot`);
    expect(best.status).toBe(200);
    expect((await sharp(best.bytes).metadata()).format).toBe('jpeg');
    const seq = Number(best.headers.get('x-frame-seq'));
    const o = frames
      .find((f) => f.frame_id === `${taskId}:${seq}`)!
      .objects.find((x) => x.track_id === crossing.track_id)!;
    expect(o.bbox.width * o.bbox.height).toBeGreaterThanOrEqual(0.01);
    const crop = await picture(
      `/v1/vision/tasks/${taskId}/tracks/${String(crossing.track_id)}/best_shot?crop=true`,
    );
    expect(crop.status).toBe(200);
  });

  it('a replay links the pictures of its event ids and takes none for other rules', async () => {
    const rules = await api('GET', `/v1/vision/tasks/${taskId}/rules`);
    const same = await api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
      zones: rules.body.zones,
      lines: rules.body.lines,
      max_events: 10_000,
    });
    expect(same.status).toBe(200);
    expect(same.body.events).toEqual(events);
    const other = await api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
      lines: [{ ...CURB, id: 'curb2' }],
    });
    expect(other.status).toBe(200);
    expect(other.body.events.length).toBeGreaterThan(0);
    for (const e of other.body.events as Event[])
      expect(e).toMatchObject({ has_snapshot: false, snapshot_reason: 'not_captured' });
    const one = (other.body.events as Event[])[0];
    const r = await api('GET', `/v1/vision/tasks/${taskId}/events/${one.id}/snapshot`);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('OP-NOT-FOUND');
  });

  it('answers bad, unknown and foreign ids with their codes', async () => {
    const e = events[0];
    const base = `/v1/vision/tasks/${taskId}`;
    const cases: [string, number, string, string?][] = [
      [`${base}/events/NOT-AN-ID/snapshot`, 400, 'OP-TASK-REQUEST-INVALID', 'invalid_field'],
      [`${base}/events/${e.id}/snapshot?crop=yes`, 400, 'OP-TASK-REQUEST-INVALID', 'invalid_field'],
      [`${base}/events/${e.id}/snapshot?size=2`, 400, 'OP-TASK-REQUEST-INVALID', 'unknown_field'],
      [`${base}/tracks/${'x'.repeat(65)}/best_shot`, 400, 'OP-TASK-REQUEST-INVALID', 'invalid_field'],
      [`${base}/events/${'0'.repeat(32)}/snapshot`, 404, 'OP-NOT-FOUND'],
      [`/v1/vision/tasks/${randomUUID()}/events/${e.id}/snapshot`, 404, 'OP-NOT-FOUND'],
      [`/v1/vision/tasks/not-a-task/events/${e.id}/snapshot`, 404, 'OP-NOT-FOUND'],
      [`${base}/tracks/no-such-track/best_shot`, 404, 'OP-TASK-NO-SNAPSHOT'],
    ];
    for (const [p, status, code, reason] of cases) {
      const r = await api('GET', p);
      expect([p, r.status, r.body.error?.code]).toEqual([p, status, code]);
      if (reason) expect(r.body.error.details.reason).toBe(reason);
    }
    const none = await api('GET', `${base}/tracks/no-such-track/best_shot`);
    expect(none.body.error.details.snapshot_reason).toBe('not_captured');
    // Another subject's task answers as an unknown one, for an event and a track alike.
    for (const p of [`${base}/events/${e.id}/snapshot`, `${base}/tracks/1/best_shot`]) {
      const r = await api('GET', p, undefined, OTHER);
      expect([r.status, r.body.error.code]).toEqual([404, 'OP-NOT-FOUND']);
    }
  });

  it('a file longer than the ring: every event of a crowded scene has its picture', async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append(
      'lines',
      JSON.stringify([{ id: 'middle', start: [0.5, 0.02], end: [0.5, 0.98], labels: ['person'] }]),
    );
    form.append('zones', JSON.stringify([FLOOR]));
    form.append(
      'file',
      new Blob([readFileSync(path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov'))]),
      'walk.mov',
    );
    const created = await stack.api('POST', '/v1/vision/video-tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    const id = created.body.task_id as string;
    const all = await until('every event', () => allEvents(id), 240_000);
    const frames = await api('GET', `/v1/vision/tasks/${id}/results?limit=500`);
    expect(frames.body.items.length).toBeGreaterThan(32);
    expect(all.length).toBeGreaterThan(5);
    expect(all.filter((e) => !e.has_snapshot)).toEqual([]);
  }, 300_000);

  describe('a live RTSP task', () => {
    let rtsp: StreamServer;
    let live = '';
    let crossed: Event[] = [];
    // A line down the middle of the camera's pedestrian scene: people walking left or right cross it.
    const MIDDLE = { id: 'middle', start: [0.5, 0.02], end: [0.5, 0.98], labels: ['person'] };

    beforeAll(async () => {
      rtsp = await streamServer('rtsp');
      await rtsp.start();
      const r = await stack.api('POST', '/v1/vision/tasks', {
        key: KEY,
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({
          scene_code: 'person_vehicle',
          stream_url: streamUrls(rtsp).rtsp,
          lines: [MIDDLE],
        }),
      });
      expect(r.status).toBe(201);
      live = r.body.task_id as string;
      crossed = await until(
        'two crossings of the live stream',
        async () => {
          const page = await api('GET', `/v1/vision/tasks/${live}/events?limit=100`);
          const got = (page.body.items as Event[]).filter((e) => e.kind === 'line.crossed');
          return got.length >= 2 ? got : undefined;
        },
        180_000,
      );
      await api('POST', `/v1/vision/tasks/${live}/stop`);
    }, 300_000);
    afterAll(() => rtsp?.stop());

    it('each crossing has the picture of its frame, taken from the ring before the frame left it', async () => {
      const frames: Frame[] = [];
      let cursor = '';
      for (let i = 0; i < 50; i++) {
        const q = `limit=500&min_score=0${cursor ? `&cursor=${cursor}` : ''}`;
        const r = await api('GET', `/v1/vision/tasks/${live}/results?${q}`);
        frames.push(...(r.body.items as Frame[]));
        cursor = r.body.next_cursor as string;
        if (!cursor || r.body.items.length === 0) break;
      }
      for (const e of crossed) {
        expect(e).toMatchObject({ has_snapshot: true });
        const a = await picture(e.snapshot_path as string);
        expect([a.status, a.headers.get('content-type'), a.headers.get('x-frame-seq')]).toEqual([
          200,
          'image/jpeg',
          String(e.seq),
        ]);
        const pic = await rgb(a.bytes);
        const frame = frames.find((f) => f.frame_id === `${live}:${e.seq}`)!;
        const o = frame.objects.find((x) => x.track_id === e.track_id)!;
        expectBoxDrawn(pic, pixelBox(o, pic));
      }
    });
  });
});
