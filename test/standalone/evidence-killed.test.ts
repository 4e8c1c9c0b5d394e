/**
 * The pictures of events when `npm start`'s process is killed mid-task (docs/EVIDENCE.md, "Written once, never
 * orphaned"): an uploaded file task with a zone and a line; the process is SIGKILLed as soon as its first events
 * are stored, and started again on the same data directory, where the task's job is started again from the
 * file's start and the evaluation goes on from its last step. Afterwards every event that says it has a picture
 * has it, a JPEG of its own frame with its box drawn, the events seen before the kill among them; one without says
 * why, from the closed list.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SNAPSHOT_REASONS } from '@vision/shared';
import { callApi } from '../helpers/api-call';
import {
  expectBoxDrawn,
  expectPictureOfFrameAt,
  pixelBox,
  rgb,
  type EvidenceEvent as Event,
  type EvidenceFrame as Frame,
} from '../helpers/evidence-pictures';
import { FLOOR, taskEvents } from '../helpers/places';
import { MEDIA } from '../helpers/stack';
import { startStandaloneProcess, type StandaloneProcess } from '../helpers/standalone-process';
import { uploadVideoTask } from '../helpers/uploads';
import { until } from '../helpers/webhooks';

const KEY = 'standalone-evidence-killed-0123456789';
const CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
const LINE = { id: 'mid', start: [0.5, 0], end: [0.5, 1], labels: ['person'] };
const ENV = { VISION_API_KEYS: `${KEY}:acme`, LOG_LEVEL: 'warn', TASKS_POLL_INTERVAL_MS: '200' };

describe('standalone: the process is SIGKILLed while a task’s pictures are taken', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-evidence-killed-'));
  let svc: StandaloneProcess | undefined;
  afterAll(async () => {
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const api = (method: string, p: string) => callApi(svc!.url, method, p, { key: KEY });
  const events = async (taskId: string) => {
    const r = await taskEvents<Event>(api, taskId);
    return { items: r.items, done: r.ended };
  };
  const picture = async (p: string) => {
    const res = await fetch(`${svc!.url}${p}`, { headers: { authorization: `Bearer ${KEY}` } });
    return {
      status: res.status,
      seq: res.headers.get('x-frame-seq'),
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  };

  it('no event claims a picture that is not stored', async () => {
    svc = await startStandaloneProcess(ENV, { dataDir });
    const taskId = await uploadVideoTask(
      { api: (m, p, init) => callApi(svc!.url, m, p, init) },
      KEY,
      CLIP,
      'vtest.mov',
      {
        zones: JSON.stringify([FLOOR]),
        lines: JSON.stringify([LINE]),
      },
    );
    // Read again at once, without a pause: the kill comes right after the first step's transaction, while the
    // next steps take their pictures.
    let before: Event[] = [];
    for (const deadline = Date.now() + 60_000; before.length === 0;) {
      if (Date.now() > deadline) throw new Error('no event within 60 s');
      before = (await events(taskId)).items;
    }
    await svc.kill();
    svc = await startStandaloneProcess(ENV, { dataDir });

    const { items } = await until(
      'the task to end with every event',
      async () => {
        const r = await events(taskId);
        return r.done ? r : undefined;
      },
      90_000,
    );
    expect((await api('GET', `/v1/vision/tasks/${taskId}`)).body.status).toBe('succeeded');
    // What was claimed before the kill is still claimed, by the same events.
    const after = new Map(items.map((e) => [e.id, e]));
    for (const e of before) expect([e.id, after.get(e.id)?.has_snapshot]).toEqual([e.id, e.has_snapshot]);
    for (const e of items) if (!e.has_snapshot) expect(SNAPSHOT_REASONS).toContain(e.snapshot_reason);

    const pictured = items.filter((e) => e.has_snapshot);
    expect(pictured.length).toBeGreaterThan(0);
    expect(items.filter((e) => e.kind === 'line.crossed').length).toBeGreaterThan(0);
    const frames = (await api('GET', `/v1/vision/tasks/${taskId}/results?limit=500&min_score=0`)).body
      .items as Frame[];
    for (const e of pictured) {
      const a = await picture(e.snapshot_path as string);
      expect([e.id, a.status, a.seq, a.bytes.subarray(0, 2).toString('hex')]).toEqual([
        e.id,
        200,
        String(e.seq),
        'ffd8',
      ]);
      const pic = await rgb(a.bytes);
      const o = frames
        .find((f) => f.frame_id === `${taskId}:${e.seq}`)
        ?.objects.find((x) => x.track_id === e.track_id);
      if (!o) continue; // no track in that frame: the zone is drawn
      const box = pixelBox(o, pic);
      expectBoxDrawn(pic, box);
      if (e.kind === 'line.crossed') expectPictureOfFrameAt(CLIP, e.media_ms, pic, box);
    }
  }, 150_000);
});
