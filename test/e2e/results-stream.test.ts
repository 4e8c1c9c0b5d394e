import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEventStream } from '../../packages/sdk/src/stream';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';

const KEY = 'e2e-stream-key-0123456789';
const PEDESTRIANS_MOV = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');

interface Frame {
  frame_id: string;
}

describe('the results stream through the gateway', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:streamer`, env: { TASKS_POLL_INTERVAL_MS: '300' } });
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
  });

  /** Reads `stopAfter` frames (or until the server closes), then drops the connection. */
  async function readSome(taskId: string, lastEventId: string | undefined, stopAfter: number) {
    const ac = new AbortController();
    const res = await fetch(`${stack.url}/v1/vision/tasks/${taskId}/results/stream`, {
      headers: { authorization: `Bearer ${KEY}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames: string[] = [];
    let last = lastEventId;
    let ended = false;
    for await (const ev of parseEventStream(res.body!)) {
      if (ev.event === 'end') {
        ended = true;
        break;
      }
      frames.push((JSON.parse(ev.data) as Frame).frame_id);
      last = ev.id;
      if (frames.length >= stopAfter) break;
    }
    ac.abort();
    return { frames, last, ended };
  }

  it('a reader that disconnects at random while a file task runs gets every frame exactly once', async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('file', new Blob([readFileSync(PEDESTRIANS_MOV)]), 'pedestrians.mov');
    const created = await stack.api('POST', '/v1/vision/video-tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    const taskId = (created.body as { task_id: string }).task_id;

    const seen: string[] = [];
    let lastEventId: string | undefined;
    let reconnects = 0;
    for (;;) {
      const r = await readSome(taskId, lastEventId, 1 + Math.floor(Math.random() * 15));
      seen.push(...r.frames);
      lastEventId = r.last;
      reconnects += 1;
      if (r.ended) break;
      expect(reconnects).toBeLessThan(2000);
    }
    expect(reconnects).toBeGreaterThan(1);

    // The page endpoint, the source of truth, holds the same frames in the same order.
    const paged: string[] = [];
    let cursor = '';
    do {
      const page = await stack.api('GET', `/v1/vision/tasks/${taskId}/results?limit=500&cursor=${cursor}`, {
        key: KEY,
      });
      expect(page.status).toBe(200);
      paged.push(...(page.body as { items: Frame[] }).items.map((f) => f.frame_id));
      cursor = (page.body as { next_cursor: string }).next_cursor;
    } while (cursor);
    expect(paged.length).toBeGreaterThan(5);
    expect(seen).toEqual(paged);
  }, 300_000);
});
