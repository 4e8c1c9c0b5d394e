import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseEventStream } from '../../packages/sdk/src/stream';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { uploadVideoTask } from '../helpers/uploads';
import { streamServer, streamUrls, type StreamServer } from '../helpers/stream-servers';

const KEY = 'e2e-stream-key-0123456789';
const PEDESTRIANS_MOV = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');

interface Frame {
  frame_id: string;
}

describe('the results stream through the gateway', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({
      keys: `${KEY}:streamer`,
      // ffprobe needs ~3 s on a live source; the machine is shared and often loaded.
      env: { TASKS_POLL_INTERVAL_MS: '300', TASKS_PROBE_TIMEOUT_MS: '45000' },
    });
  }, 300_000);
  let rtsp: StreamServer | undefined;
  afterAll(async () => {
    await stack?.close();
    await rtsp?.stop();
  });

  /**
   * Reads `stopAfter` frames (or until the server closes, or for at most `maxMs`: a cut while the reader
   * waits for the next frame), then drops the connection.
   */
  async function readSome(
    taskId: string,
    lastEventId: string | undefined,
    stopAfter: number,
    maxMs = Infinity,
  ) {
    const ac = new AbortController();
    const timer = Number.isFinite(maxMs) ? setTimeout(() => ac.abort(), maxMs) : undefined;
    const res = await fetch(`${stack.url}/v1/vision/tasks/${taskId}/results/stream`, {
      headers: { authorization: `Bearer ${KEY}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: ac.signal,
    }).catch((err: unknown) => {
      // Cut before the answer came: nothing read.
      if (ac.signal.aborted) return undefined;
      throw err;
    });
    if (!res) return { frames: [], last: lastEventId, ended: false };
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames: string[] = [];
    let last = lastEventId;
    let ended = false;
    try {
      for await (const ev of parseEventStream(res.body!)) {
        if (ev.event === 'end') {
          ended = true;
          break;
        }
        frames.push((JSON.parse(ev.data) as Frame).frame_id);
        last = ev.id;
        if (frames.length >= stopAfter) break;
      }
    } catch (err) {
      if (!ac.signal.aborted) throw err;
    }
    clearTimeout(timer);
    ac.abort();
    return { frames, last, ended };
  }

  /** Every frame of an ended task from the page endpoint, the source of truth. */
  async function pagedFrames(taskId: string): Promise<string[]> {
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
    return paged;
  }

  it('a reader that disconnects at random during a live RTSP task gets every frame exactly once', async () => {
    rtsp = await streamServer('rtsp');
    await rtsp.start();
    const created = await stack.api('POST', '/v1/vision/tasks', {
      key: KEY,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: streamUrls(rtsp).rtsp }),
    });
    expect([created.status, (created.body as { status: string }).status]).toEqual([201, 'running']);
    const taskId = (created.body as { task_id: string }).task_id;

    // While the task runs: cuts after a few frames and cuts while waiting for the next one.
    const seen: string[] = [];
    let lastEventId: string | undefined;
    let liveReconnects = 0;
    const deadline = Date.now() + 150_000;
    while (seen.length < 40 || liveReconnects < 5) {
      expect(Date.now()).toBeLessThan(deadline);
      const r = await readSome(
        taskId,
        lastEventId,
        1 + Math.floor(Math.random() * 8),
        200 + Math.random() * 1500,
      );
      expect(r.ended).toBe(false);
      seen.push(...r.frames);
      lastEventId = r.last;
      liveReconnects += 1;
    }
    const stopped = await stack.api('POST', `/v1/vision/tasks/${taskId}/stop`, { key: KEY });
    expect(stopped.status).toBe(200);
    // Then on to the stream's end, still cut at random.
    for (let reconnects = 0; ; reconnects++) {
      expect(reconnects).toBeLessThan(2000);
      const r = await readSome(
        taskId,
        lastEventId,
        1 + Math.floor(Math.random() * 8),
        200 + Math.random() * 1500,
      );
      seen.push(...r.frames);
      lastEventId = r.last;
      if (r.ended) break;
    }

    const paged = await pagedFrames(taskId);
    expect(paged.length).toBeGreaterThanOrEqual(40);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(paged);
  }, 300_000);

  it('a reader that disconnects at random while a file task runs gets every frame exactly once', async () => {
    const taskId = await uploadVideoTask(stack, KEY, PEDESTRIANS_MOV, 'pedestrians.mov');

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
    const paged = await pagedFrames(taskId);
    expect(paged.length).toBeGreaterThan(5);
    expect(seen).toEqual(paged);
  }, 300_000);
});
