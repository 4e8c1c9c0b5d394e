/**
 * The pictures of a file task's events when its frames have left inference's ring before results asks for them
 * (docs/EVIDENCE.md), in either mode: with a ring of no frame at all, every picture of an uploaded
 * pedestrian clip comes from a re-decode of the stored upload. Every event still has its picture, and each line
 * crossing's is the frame of its seq (compared with a frame ffmpeg decodes at its media time), its box drawn.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import {
  expectBoxDrawn,
  expectPictureOfFrameAt,
  pixelBox,
  rgb,
  type EvidenceEvent as Event,
  type EvidenceFrame as Frame,
} from '../helpers/evidence-pictures';
import { FLOOR } from '../helpers/places';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { until } from '../helpers/webhooks';

const KEY = 'e2e-redecode-key-0123456789';
const CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
// 102 frames at 10 fps: the last at 10.1 s.
const LAST_INPUT_FRAME_MS = 10_100;
const MIDDLE = { id: 'middle', start: [0.5, 0.02], end: [0.5, 0.98], labels: ['person'] };

describe('pictures of a file task whose frames left the ring', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      keys: `${KEY}:redecode`,
      env: {
        TASKS_POLL_INTERVAL_MS: '300',
        INFERENCE_FRAME_RING: '0',
        // Which frame is drawn is the subject here, not how soon: beside other test files a frame decoded again
        // took longer than the default 2 s (an event said frame_gone), so both waits are longer.
        INFERENCE_REDECODE_TIMEOUT_MS: '8000',
        RESULTS_SNAPSHOT_TIMEOUT_MS: '10000',
      },
    });
  }, 300_000);
  afterAll(() => stack?.close());

  const get = (p: string) => stack.api('GET', p, { key: KEY });
  const picture = async (p: string) => {
    const r = await fetch(`${stack.url}${p}`, { headers: { authorization: `Bearer ${KEY}` } });
    return { status: r.status, seq: r.headers.get('x-frame-seq'), bytes: Buffer.from(await r.arrayBuffer()) };
  };

  async function allEvents(taskId: string): Promise<Event[] | undefined> {
    const events: Event[] = [];
    let cursor = '';
    for (;;) {
      const r = await get(`/v1/vision/tasks/${taskId}/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      events.push(...(r.body.items as Event[]));
      if (r.body.next_cursor === '') return events;
      if (r.body.items.length === 0) return undefined;
      cursor = r.body.next_cursor as string;
    }
  }

  it('every event has its picture: the frame of its seq, the box of its object drawn', async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('lines', JSON.stringify([MIDDLE]));
    form.append('zones', JSON.stringify([FLOOR]));
    form.append('file', new Blob([readFileSync(CLIP)]), 'walk.mov');
    const created = await stack.api('POST', '/v1/vision/video-tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    const taskId = created.body.task_id as string;
    const events = await until('every event', () => allEvents(taskId), 240_000);
    const frames = (await get(`/v1/vision/tasks/${taskId}/results?limit=500&min_score=0`)).body
      .items as Frame[];

    expect(events.filter((e) => e.kind === 'line.crossed').length).toBeGreaterThanOrEqual(1);
    expect(events.filter((e) => !e.has_snapshot)).toEqual([]);
    // Each event whose object is in its frame (a crossing, an entry): that object's box on the frame of its seq.
    const boxed = events.flatMap((e) => {
      const f = frames.find((x) => x.frame_id === `${taskId}:${e.seq}`);
      const o = f?.objects.find((x) => x.track_id !== undefined && x.track_id === e.track_id);
      return o ? [{ e, o }] : [];
    });
    expect(boxed.length).toBeGreaterThanOrEqual(3);
    // Some are late enough in the clip that their decoder seeks into the upload.
    expect(Math.max(...boxed.map(({ e }) => e.media_ms))).toBeGreaterThan(3000);
    for (const { e, o } of boxed) {
      const a = await picture(e.snapshot_path as string);
      expect([a.status, a.seq]).toEqual([200, String(e.seq)]);
      expect((await sharp(a.bytes).metadata()).format).toBe('jpeg');
      const pic = await rgb(a.bytes);
      const box = pixelBox(o, pic);
      expectBoxDrawn(pic, box);
      // Past the clip's last input frame (10.1 s) the sampler's slots repeat a frame at its end, which a decode
      // at that time cannot name: those pictures are only checked for their box.
      if (e.media_ms <= LAST_INPUT_FRAME_MS) expectPictureOfFrameAt(CLIP, e.media_ms, pic, box);
      const c = await picture(`${e.snapshot_path as string}?crop=true`);
      expect([c.status, (await sharp(c.bytes).metadata()).format]).toEqual([200, 'jpeg']);
    }
  }, 300_000);
});
