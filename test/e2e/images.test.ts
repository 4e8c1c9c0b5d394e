import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA, settledQuota, startStack, type TestStack } from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const ACME = 'e2e-images-acme-0123456789';
const OTHER = 'e2e-images-other-0123456789';
const image = (name: string) => path.join(MEDIA, 'images', name);

interface Entry {
  seq: number;
  status: string;
  objects?: { label: string; score: number; track_id?: string; bbox: { cx: number; cy: number } }[];
  error_code?: string;
}

describe('image detection end to end through the gateway', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ keys: `${ACME}:acme,${OTHER}:other` });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const detect = (key: string, idem: string, files: string[], scene?: string, zones?: unknown[]) => {
    const form = new FormData();
    if (scene) form.append('scene_code', scene);
    if (zones) form.append('zones', JSON.stringify(zones));
    for (const f of files) form.append('files', new Blob([readFileSync(f)]), path.basename(f));
    return stack.api('POST', '/v1/vision/image-detections', {
      key,
      headers: { 'idempotency-key': idem },
      body: form,
    });
  };
  const imagesUsed = async (key: string) => (await settledQuota(stack, key)).images.used;

  it('detects per image in upload order, charges per success, replays and keeps a task record', async () => {
    const idem = randomUUID();
    const files = [
      image('street_bus_pedestrians_coco2006.jpg'),
      image('none_bedroom_coco632.jpg'),
      image('none_brick_facade_kodim01.webp'),
      image('boat_sailboat_kodim06.png'),
    ];
    const before = await imagesUsed(ACME);
    const r = await detect(ACME, idem, files, 'person_vehicle');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ request_id: idem, status: 'succeeded' });
    expect(r.body.replayed).toBeUndefined();
    const results = r.body.results as Entry[];
    expect(results.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(results.every((e) => e.status === 'succeeded')).toBe(true);
    const labels = results[0].objects!.map((o) => o.label);
    expect(labels).toEqual(expect.arrayContaining(['person', 'bus']));
    expect(results.flatMap((e) => e.objects ?? []).every((o) => o.track_id === undefined)).toBe(true);
    expect(results[1].objects!.filter((o) => o.score >= 0.8)).toEqual([]);
    expect(await imagesUsed(ACME)).toBe(before + 4);

    const replay = await detect(ACME, idem, files, 'person_vehicle');
    expect(replay.status).toBe(200);
    expect(replay.body.replayed).toBe(true);
    expect(replay.body.task_id).toBe(r.body.task_id);
    expect(replay.body.results).toEqual(r.body.results);
    expect(await imagesUsed(ACME)).toBe(before + 4);

    const mismatch = await detect(ACME, idem, files, 'ship');
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe('OP-TASK-REQUEST-INVALID');

    const record = await stack.api('GET', `/v1/vision/tasks/${r.body.task_id}`, { key: ACME });
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({
      task_id: r.body.task_id,
      request_id: idem,
      scene_code: 'person_vehicle',
    });
    expect((await stack.api('GET', `/v1/vision/tasks/${r.body.task_id}`, { key: OTHER })).status).toBe(404);
  }, 120_000);

  it('defaults the scene to fire_smoke and finds fire', async () => {
    const r = await detect(OTHER, randomUUID(), [image('fire_forest_dfire_web10474.jpg')]);
    expect(r.status).toBe(201);
    const labels = (r.body.results[0].objects as { label: string }[]).map((o) => o.label);
    expect(labels.some((l) => l === 'fire' || l === 'smoke')).toBe(true);
    const record = await stack.api('GET', `/v1/vision/tasks/${r.body.task_id}`, { key: OTHER });
    expect(record.body.scene_code).toBe('fire_smoke');
  }, 60_000);

  it('rejects bad requests with the spec code and charges nothing', async () => {
    const before = await imagesUsed(ACME);
    const none = await detect(ACME, randomUUID(), []);
    expect(none.status).toBe(400);
    const eleven = await detect(ACME, randomUUID(), Array(11).fill(image('none_bedroom_coco632.jpg')));
    expect({ status: eleven.status, error: eleven.body.error?.code }).toEqual({
      status: 400,
      error: 'OP-TASK-REQUEST-INVALID',
    });
    const form = new FormData();
    form.append('file', new Blob([readFileSync(image('none_bedroom_coco632.jpg'))]), 'a.jpg');
    const wrongField = await stack.api('POST', '/v1/vision/image-detections', {
      key: ACME,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(wrongField.status).toBe(400);
    const text = new FormData();
    text.append('files', new Blob([Buffer.from('not an image')]), 'photo.jpg');
    const notImage = await stack.api('POST', '/v1/vision/image-detections', {
      key: ACME,
      headers: { 'idempotency-key': randomUUID() },
      body: text,
    });
    expect(notImage.status).toBe(400);
    expect(notImage.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    const noKey = await detect(ACME, 'not-a-uuid', [image('none_bedroom_coco632.jpg')]);
    expect(noKey.status).toBe(400);
    expect(await imagesUsed(ACME)).toBe(before);
  }, 60_000);

  it('counts the objects of each image per zone, and replays the counts as they were', async () => {
    const zones = [
      {
        id: 'frame',
        polygon: [
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
        ],
      },
      {
        id: 'left',
        labels: ['person'],
        min_score: 0.5,
        polygon: [
          [0, 0],
          [0.5, 0],
          [0.5, 1],
          [0, 1],
        ],
      },
    ];
    const files = [image('street_bus_pedestrians_coco2006.jpg'), image('none_bedroom_coco632.jpg')];
    const idem = randomUUID();
    const r = await detect(ACME, idem, files, 'person_vehicle', zones);
    expect(r.status).toBe(201);
    for (const entry of r.body.results as (Entry & { zones: unknown })[]) {
      const objects = entry.objects ?? [];
      // Every anchor lies in the whole frame; the left half holds the people whose bottom-center is left of 0.5.
      const byLabel: Record<string, number> = {};
      for (const o of objects) byLabel[o.label] = (byLabel[o.label] ?? 0) + 1;
      const left = objects.filter((o) => o.label === 'person' && o.score >= 0.5 && o.bbox.cx < 0.5).length;
      expect(entry.zones).toEqual([
        { zone_id: 'frame', counts: { ...byLabel, '*': objects.length } },
        { zone_id: 'left', counts: left > 0 ? { person: left, '*': left } : { '*': 0 } },
      ]);
    }
    expect((r.body.results as Entry[])[0].objects!.length).toBeGreaterThan(0);
    const replay = await detect(ACME, idem, files, 'person_vehicle', zones);
    expect(replay.status).toBe(200);
    expect(replay.body.results).toEqual(r.body.results);

    const bowtie = [
      {
        id: 'z',
        polygon: [
          [0, 0],
          [1, 1],
          [1, 0],
          [0, 1],
        ],
      },
    ];
    const bad = await detect(ACME, randomUUID(), files, 'person_vehicle', bowtie);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual({ reason: 'invalid_field', field: 'zones.0.polygon' });
  }, 60_000);
});
