import { REASON } from '@vision/shared';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { startMediaServer, waitFor, type MediaServer } from '../helpers/media-server';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const ACME = 'e2e-video-acme-0123456789';
const OTHER = 'e2e-video-other-0123456789';
const BURST = 'e2e-video-burst-0123456789';
const clip = (name: string) => path.join(MEDIA, 'videos', name);
const PEDESTRIANS_MOV = clip('pedestrians_vtest_opencv_10s.mov');
const PARKING_MP4 = clip('person_bicycle_car_parkinglot_intel.mp4');

interface Frame {
  frame_id: string;
  frame_time_ms: number;
  objects: { label: string; score: number; track_id?: string }[];
}

describe('video tasks end to end through the gateway', () => {
  let stack: TestStack;
  let media: MediaServer;

  beforeAll(async () => {
    stack = await startStack({
      keys: `${ACME}:acme,${OTHER}:other,${BURST}:burst`,
      env: {
        QUOTA_VIDEO_DAILY: '20',
        QUOTA_OVERRIDES: JSON.stringify({ burst: { video: 5 } }),
        TASKS_MAX_ACTIVE: '25',
        INFERENCE_MAX_JOBS: '16',
        TASKS_POLL_INTERVAL_MS: '300',
        GATEWAY_CONCURRENCY: '64',
        GATEWAY_BURST: '200',
      },
    });
    media = await startMediaServer({ 'parking.mp4': PARKING_MP4, 'pedestrians.mov': PEDESTRIANS_MOV });
  }, 120_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  const createByUrl = (key: string, idem: string, body: unknown) =>
    stack.api('POST', '/v1/vision/tasks', {
      key,
      headers: { 'content-type': 'application/json', 'idempotency-key': idem },
      body: JSON.stringify(body),
    });

  const upload = (key: string, idem: string, file: string, scene = 'person_vehicle') => {
    const form = new FormData();
    form.append('scene_code', scene);
    form.append('file', new Blob([readFileSync(file)]), path.basename(file));
    return stack.api('POST', '/v1/vision/video-tasks', {
      key,
      headers: { 'idempotency-key': idem },
      body: form,
    });
  };

  const task = (key: string, id: string) => stack.api('GET', `/v1/vision/tasks/${id}`, { key });

  const waitForStatus = (key: string, id: string, statuses: string[], timeoutMs = 90_000) =>
    waitFor(
      `task ${id} to reach ${statuses.join('|')}`,
      async () => {
        const r = await task(key, id);
        return statuses.includes(r.body.status) ? r.body : undefined;
      },
      timeoutMs,
    );

  /** Pages through every frame of an ended task; checks order, no repeats and the final empty cursor. */
  async function allFrames(key: string, id: string, limit = 7): Promise<Frame[]> {
    const frames: Frame[] = [];
    let cursor = '';
    for (let page = 0; page < 1000; page++) {
      const q = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
      const r = await stack.api('GET', `/v1/vision/tasks/${id}/results?${q}`, { key });
      expect(r.status).toBe(200);
      frames.push(...r.body.items);
      if (r.body.next_cursor === '') return frames;
      cursor = r.body.next_cursor;
    }
    throw new Error('too many pages');
  }

  const quota = async (key: string) => (await stack.api('GET', '/v1/vision/quota', { key })).body.video_tasks;

  it('runs a stream task over HTTP to the end and pages its frames', async () => {
    const idem = randomUUID();
    const created = await createByUrl(ACME, idem, {
      scene_code: 'person_vehicle',
      stream_url: `${media.url}/file/pedestrians.mov`,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ request_id: idem, scene_code: 'person_vehicle', status: 'running' });
    expect(created.headers.get('ratelimit-policy')).toBeTruthy();
    const id = created.body.task_id as string;

    // Replay with the same key and meaning: the original task, no second charge.
    const used = (await quota(ACME)).used;
    const replay = await createByUrl(ACME, idem, {
      scene_code: 'person_vehicle',
      stream_url: `${media.url}/file/pedestrians.mov`,
    });
    expect(replay.status).toBe(200);
    expect(replay.body.task_id).toBe(id);
    expect((await quota(ACME)).used).toBe(used);
    // Same key, other meaning.
    const mismatch = await createByUrl(ACME, idem, {
      scene_code: 'ship',
      stream_url: `${media.url}/file/pedestrians.mov`,
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe('OP-TASK-REQUEST-INVALID');

    const ended = await waitForStatus(ACME, id, ['succeeded', 'failed']);
    expect(ended.status).toBe('succeeded');
    const frames = await allFrames(ACME, id);
    expect(frames.length).toBeGreaterThan(20);
    const times = frames.map((f) => f.frame_time_ms);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(new Set(frames.map((f) => f.frame_id)).size).toBe(frames.length);

    // With a low min_score the pedestrians appear, tracked across frames.
    const low = await stack.api('GET', `/v1/vision/tasks/${id}/results?limit=50&min_score=0.3`, {
      key: ACME,
    });
    const people = (low.body.items as Frame[]).flatMap((f) => f.objects).filter((o) => o.label === 'person');
    expect(people.length).toBeGreaterThan(10);
    expect(people.every((p) => p.score >= 0.3)).toBe(true);
    // An id once its track is confirmed (3 frames): nearly every person of these first frames has one.
    expect(people.filter((p) => typeof p.track_id === 'string').length).toBeGreaterThanOrEqual(
      0.7 * people.length,
    );
    expect(low.body.items[0].objects_total).toBeGreaterThanOrEqual(low.body.items[0].objects.length);

    // Isolation: another subject sees nothing of it.
    expect((await task(OTHER, id)).status).toBe(404);
    expect((await stack.api('GET', `/v1/vision/tasks/${id}/results`, { key: OTHER })).status).toBe(404);
    expect((await stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key: OTHER })).status).toBe(404);

    // Stopping an ended task is refused.
    const stop = await stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key: ACME });
    expect(stop.status).toBe(409);
    expect(stop.body.error.code).toBe('OP-TASK-NOT-STOPPABLE');
  }, 180_000);

  it.each([
    ['MP4', PARKING_MP4],
    ['MOV', PEDESTRIANS_MOV],
  ])(
    'runs an uploaded %s to the end with PTS frame times',
    async (_kind, file) => {
      const before = (await quota(ACME)).used;
      const created = await upload(ACME, randomUUID(), file);
      expect(created.status).toBe(201);
      expect((await quota(ACME)).used).toBe(before + 1);
      const id = created.body.task_id as string;
      const ended = await waitForStatus(ACME, id, ['succeeded', 'failed']);
      expect(ended.status).toBe('succeeded');
      const frames = await allFrames(ACME, id, 500);
      expect(frames.length).toBeGreaterThan(10);
      // Sampled at 5 fps from the start of the file: PTS offsets 0, 200, 400 ms ...
      expect(frames[0].frame_time_ms).toBe(0);
      expect(frames[1].frame_time_ms).toBe(200);
    },
    180_000,
  );

  it('refuses a file that is not MP4/MOV by content and charges nothing', async () => {
    const before = (await quota(ACME)).used;
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('file', new Blob([Buffer.from('this is not a video at all, just text')]), 'clip.mp4');
    const r = await stack.api('POST', '/v1/vision/video-tasks', {
      key: ACME,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    expect((await quota(ACME)).used).toBe(before);
  });

  it('refuses invalid and unreachable stream addresses without a task or a charge', async () => {
    const before = (await quota(ACME)).used;
    const invalid = await createByUrl(ACME, randomUUID(), {
      scene_code: 'ship',
      stream_url: 'ftp://example.com/x',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details.reason).toBe(REASON.stream_url_invalid);
    const unreachable = await createByUrl(ACME, randomUUID(), {
      scene_code: 'ship',
      stream_url: `${media.url}/file/missing.mp4`,
    });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.error.details.reason).toBe(REASON.stream_unreachable);
    const unknownField = await createByUrl(ACME, randomUUID(), {
      scene_code: 'ship',
      stream_url: `${media.url}/file/parking.mp4`,
      extra: 1,
    });
    expect(unknownField.status).toBe(400);
    const badScene = await createByUrl(ACME, randomUUID(), {
      scene_code: 'nope',
      stream_url: `${media.url}/file/parking.mp4`,
    });
    expect(badScene.status).toBe(400);
    expect(badScene.body.error.code).toBe('OP-TASK-SCENE-UNAVAILABLE');
    const noKey = await stack.api('POST', '/v1/vision/tasks', {
      key: ACME,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ scene_code: 'ship', stream_url: `${media.url}/file/parking.mp4` }),
    });
    expect(noKey.status).toBe(400);
    expect((await quota(ACME)).used).toBe(before);
  }, 60_000);

  it('stops a live stream task', async () => {
    const created = await createByUrl(ACME, randomUUID(), {
      scene_code: 'person_vehicle',
      stream_url: `${media.url}/live/pedestrians.mov`,
    });
    expect(created.status).toBe(201);
    const id = created.body.task_id as string;
    // Frames flow while it runs; the last page keeps a cursor to resume from.
    const page = await waitFor('live frames', async () => {
      const r = await stack.api('GET', `/v1/vision/tasks/${id}/results?limit=500`, { key: ACME });
      return r.body.items.length > 0 ? r.body : undefined;
    });
    expect(page.next_cursor).not.toBe('');
    const live = page.items[0] as Frame;
    expect(Math.abs(live.frame_time_ms - Date.now())).toBeLessThan(120_000); // Unix ms at capture

    const stop = await stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key: ACME });
    expect(stop.status).toBe(200);
    expect(['stopping', 'stopped']).toContain(stop.body.status);
    const ended = await waitForStatus(ACME, id, ['stopped']);
    expect(ended.status).toBe('stopped');
    // The task list shows it, newest first.
    const list = await stack.api('GET', '/v1/vision/tasks?kind=video', { key: ACME });
    expect(list.status).toBe(200);
    expect(list.body.items[0].task_id).toBe(id);
  }, 120_000);

  it('accepts exactly the remaining quota among 20 concurrent creates with distinct keys', async () => {
    expect((await quota(BURST)).remaining).toBe(5);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => upload(BURST, randomUUID(), PARKING_MP4)),
    );
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => `${a.status} ${a.body.error?.code}`).sort()).toEqual(
      Array(15).fill('429 OP-QUOTA-DAILY-EXHAUSTED'),
    );
    expect(created).toHaveLength(5);
    expect(refused.every((a) => a.status === 429 && a.body.error.code === 'OP-QUOTA-DAILY-EXHAUSTED')).toBe(
      true,
    );
    const q = await quota(BURST);
    expect(q.used).toBe(5);
    expect(q.remaining).toBe(0);
    const list = await stack.api('GET', '/v1/vision/tasks?limit=100', { key: BURST });
    expect(list.body.items).toHaveLength(5);
    expect(new Set(list.body.items.map((t: { task_id: string }) => t.task_id))).toEqual(
      new Set(created.map((c) => c.body.task_id)),
    );
  }, 180_000);
});
