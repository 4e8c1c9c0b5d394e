/**
 * Capacity and fair share (docs/OVERLOAD.md "Capacity and fair share"), through the gateway:
 * with INFERENCE_MAX_JOBS 4 and TASKS_MAX_ACTIVE 3, one key holding 3 live tasks no longer makes the
 * second key's file upload a 503: it is accepted (201, charged once) and waits in the queue as
 * `submitting`; it starts when a slot frees, survives a restart of the tasks and inference services,
 * and a queued task stopped is refunded. Runs on the standalone stack and, under
 * scripts/test-distributed.sh, on the distributed one (services killed and restarted there).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REASON } from '@vision/shared';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, waitFor, type MediaServer } from '../helpers/media-server';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

const A = 'e2e-share-a-0123456789abcdef';
const B = 'e2e-share-b-0123456789abcdef';
const C = 'e2e-share-c-0123456789abcdef';
const CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
const KEYS = `${A}:share-a,${B}:share-b,${C}:share-c`;
const ENV = {
  INFERENCE_MAX_JOBS: '4',
  TASKS_MAX_ACTIVE: '3',
  TASKS_POLL_INTERVAL_MS: '300',
  TASKS_RECONCILE_INTERVAL_MS: '500',
  TASKS_RECOVER_AFTER_MS: '2000',
  QUOTA_VIDEO_DAILY: '20',
  // The probe of a live stream on a busy test machine.
  TASKS_PROBE_TIMEOUT_MS: '45000',
};

jest.setTimeout(300_000);

describe('fair share of the inference slots', () => {
  let stack: TestStack;
  let media: MediaServer;

  beforeAll(async () => {
    stack = await startStack({ keys: KEYS, env: ENV });
    media = await startMediaServer({ 'ped.mov': CLIP });
  }, 180_000);
  // The cases compare quota before and after minutes of work: not across the quota day's turn.
  keepClearOfQuotaDayTurn();
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  const live = (key: string) =>
    stack.api('POST', '/v1/vision/tasks', {
      key,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: `${media.url}/live/ped.mov` }),
    });
  const upload = (key: string, idem = randomUUID()) => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('file', new Blob([readFileSync(CLIP)]), 'ped.mov');
    return stack.api('POST', '/v1/vision/video-tasks', {
      key,
      headers: { 'idempotency-key': idem },
      body: form,
    });
  };
  const get = (key: string, id: string) => stack.api('GET', `/v1/vision/tasks/${id}`, { key });
  const stop = (key: string, id: string) => stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key });
  const used = async (key: string): Promise<number> =>
    (await stack.api('GET', '/v1/vision/quota', { key })).body.video_tasks.used as number;
  const statusOf = (key: string, id: string, statuses: string[], ms = 120_000) =>
    waitFor(
      `task ${id} to reach ${statuses.join('|')}`,
      async () => {
        const r = await get(key, id);
        return statuses.includes(r.body.status) ? (r.body as { status: string; reason?: string }) : undefined;
      },
      ms,
    );

  async function restartBackend(): Promise<void> {
    if (stack.kind === 'distributed') {
      const d = stack as DistributedStack;
      await d.kill('tasks');
      await d.kill('inference');
      await d.restart('inference');
      await d.restart('tasks');
      return;
    }
    const dataDir = stack.dataDir;
    await stack.close({ keepData: true });
    stack = await startStack({ keys: KEYS, env: ENV, dataDir });
  }

  it('queues the second key’s upload instead of refusing it, runs it when a slot frees, refunds a stopped one', async () => {
    const a: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await live(A);
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { status: 'running' } });
      a.push(r.body.task_id as string);
    }
    // The fourth slot goes to the second key.
    const bLive = await live(B);
    expect(bLive.status).toBe(201);
    expect(bLive.body.status).toBe('running');

    // Backend full: B's upload is accepted and charged once, not running yet (SPEC 3: submitting).
    const usedB = await used(B);
    const idem = randomUUID();
    const queued = await upload(B, idem);
    expect(queued.status).toBe(201);
    expect(queued.body.status).toBe('submitting');
    const qid = queued.body.task_id as string;
    expect(await used(B)).toBe(usedB + 1);
    // A replay answers at once with the queued task, charging nothing.
    const replay = await upload(B, idem);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ task_id: qid, status: 'submitting' });
    expect(await used(B)).toBe(usedB + 1);

    // A third key's upload queues behind it; stopping it refunds it at once.
    const usedC = await used(C);
    const cq = await upload(C);
    expect(cq.status).toBe(201);
    expect(cq.body.status).toBe('submitting');
    const stopped = await stop(C, cq.body.task_id as string);
    expect(stopped.status).toBe(200);
    expect(stopped.body.status).toBe('refunded');
    expect(await used(C)).toBe(usedC);

    // A live task needs a slot now: the third key's is refused while the backend is full.
    const cLive = await live(C);
    expect(cLive.status).toBe(503);
    expect(cLive.body.error.code).toBe('OP-TASK-UPSTREAM-DOWN');
    expect(await used(C)).toBe(usedC);

    // Still waiting after 2 s (nothing freed a slot)...
    await new Promise((r) => setTimeout(r, 2000));
    expect((await get(B, qid)).body.status).toBe('submitting');
    // ...and after the tasks and inference services restart (the queue lives in the tasks database):
    // the task is still there, charged once. The restarted backend lost the live jobs, and tasks starts
    // them again; whatever still runs is stopped, which frees the slots: the queued task starts.
    await restartBackend();
    expect(['submitting', 'running', 'succeeded']).toContain((await get(B, qid)).body.status);
    expect(await used(B)).toBe(usedB + 1);
    for (const id of [...a]) {
      const t = await get(A, id);
      if (t.body.status === 'running') expect((await stop(A, id)).status).toBeLessThan(300);
    }
    const bl = await get(B, bLive.body.task_id as string);
    if (bl.body.status === 'running') await stop(B, bLive.body.task_id as string);
    const ended = await statusOf(B, qid, ['succeeded', 'failed', 'refunded', 'stopped']);
    expect(ended.status).toBe('succeeded');
    expect(await used(B)).toBe(usedB + 1); // the queued task: charged once, not again when it started

    // Its frames: present, each once.
    const frames: { frame_id: string }[] = [];
    let cursor = '';
    for (let page = 0; page < 100; page++) {
      const q = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
      const r = await stack.api('GET', `/v1/vision/tasks/${qid}/results?${q}`, { key: B });
      expect(r.status).toBe(200);
      frames.push(...(r.body.items as { frame_id: string }[]));
      cursor = r.body.next_cursor as string;
      if (!cursor) break;
    }
    expect(frames.length).toBeGreaterThan(5);
    expect(new Set(frames.map((f) => f.frame_id)).size).toBe(frames.length);
  });

  it('a key holding its share of the slots gets 429 fair_share for a live task while another key is owed one', async () => {
    // Now: nothing runs. A takes 2 live slots, B one: A's share is 2 of 4 and the free slot is B's.
    const ids: Array<[string, string]> = [];
    for (const key of [A, A, B]) {
      const r = await live(key);
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { status: 'running' } });
      ids.push([key, r.body.task_id as string]);
    }
    const refused = await live(A);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('OP-QUOTA-RATE-LIMITED');
    expect(refused.body.error.details.reason).toBe(REASON.fair_share);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    for (const [key, id] of ids) await stop(key, id);
  });
});
