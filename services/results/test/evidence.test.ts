/**
 * The pictures of events in the results service (docs/EVIDENCE.md), with a stand-in for inference's
 * pictures and the standalone object store: each event's picture is put before the row that names it, a step that
 * fails after the pictures were put is run again without taking them again, a frame that left the ring says so at
 * once, a backend that is down costs no wait, and retention leaves no object of the task behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import {
  closeServer,
  createServiceApp,
  DirectoryObjectStore,
  IDENTITY_HEADER,
  listen,
  TOPICS,
} from '@vision/shared';
import { AnalyticsStore } from '../src/store/analytics-store';
import { evidencePrefix } from '../src/domain/evidence/plan';
import { logger, risingCarFrame } from './helpers';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';
import { jobGrantFor, signFor, verifierOfAll } from '../../../test/helpers/identity';

const RULES = {
  zones: [
    {
      id: 'upper',
      polygon: [
        [0.2, 0.1],
        [0.8, 0.1],
        [0.8, 0.4],
        [0.2, 0.4],
      ],
      labels: ['car'],
    },
  ],
  lines: [{ id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5], labels: ['car'] }],
};

/** Inference's pictures, as a stand-in: a JPEG whose colour names the seq; seqs in `gone` have left the ring. */
class PicturesStub {
  readonly asked: { job: string; seq: number; body: Record<string, unknown> }[] = [];
  readonly armed: string[] = [];
  readonly gone = new Set<number>();
  private server?: Server;
  url = '';

  static async jpeg(seq: number, size = 16): Promise<Buffer> {
    const channels = 3 as const;
    return sharp({ create: { width: size, height: size, channels, background: { r: seq * 20, g: 0, b: 0 } } })
      .jpeg()
      .toBuffer();
  }

  async start(): Promise<void> {
    const app = createServiceApp(
      { name: 'inference-stub', audience: 'inference', logger, identity: verifierOfAll() },
      (a) => {
        a.post('/internal/v1/jobs/:id/ring', (req, res) => {
          this.armed.push(String(req.params.id));
          res.status(204).end();
        });
        a.post('/internal/v1/jobs/:id/pictures', async (req, res) => {
          const body = req.body as { seq: number };
          this.asked.push({ job: String(req.params.id), seq: body.seq, body });
          if (this.gone.has(body.seq)) {
            res.status(404).json({ error: { code: 'OP-NOT-FOUND', message: 'gone', request_id: 'x' } });
            return;
          }
          res.json({
            seq: body.seq,
            frame_time_ms: body.seq * 1000,
            width: 16,
            height: 16,
            jpeg_base64: (await PicturesStub.jpeg(body.seq)).toString('base64'),
            crop_base64: (await PicturesStub.jpeg(body.seq, 4)).toString('base64'),
          });
        });
      },
    );
    this.server = await listen(app, 0, '127.0.0.1');
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  async close(): Promise<void> {
    if (this.server) await closeServer(this.server);
    this.server = undefined;
  }
}

let dir: string;
let stub: PicturesStub;
let h: WebhookHarness;
let objects: DirectoryObjectStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'results-evidence-'));
  stub = new PicturesStub();
  await stub.start();
  h = await startWebhookHarness({ VISION_DATA_DIR: dir, INFERENCE_URL: stub.url });
  objects = new DirectoryObjectStore(path.join(dir, 'objects'));
}, 60_000);
afterAll(async () => {
  await h?.close();
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => jest.restoreAllMocks());

type Event = Record<string, unknown> & { id: string; kind: string; seq: number };

async function created(taskId: string, expiresAt = '2030-01-01T00:00:00.000Z'): Promise<void> {
  await h.taskEvent(taskId, 'running', {
    type: 'task.created',
    rules_version: 1,
    rules: RULES,
    result_expires_at: expiresAt,
  });
}

async function run(taskId: string, expiresAt = '2030-01-01T00:00:00.000Z'): Promise<Event[]> {
  await created(taskId, expiresAt);
  await h.bus.publish(
    TOPICS.frames,
    Array.from({ length: 12 }, (_, seq) => risingCarFrame(taskId, seq)),
  );
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
  let events: Event[] = [];
  await waitFor('every event', async () => {
    const r = await h.api('GET', `/v1/vision/tasks/${taskId}/events?limit=100`);
    events = (r.body?.items ?? []) as Event[];
    return events.length === 3;
  });
  return events;
}

type Tracked = { track_id?: string; best_shot_path?: string };

/** Publishes frames of a task, then waits until the evaluated ones number `evaluated` and returns them. */
async function framesEvaluated(taskId: string, frames: unknown[], evaluated: number) {
  await h.bus.publish(TOPICS.frames, frames as Parameters<typeof h.bus.publish>[1]);
  let items: { frame_id: string; zones?: unknown; objects: Tracked[] }[] = [];
  await waitFor('the frames evaluated', async () => {
    const r = await h.api('GET', `/v1/vision/tasks/${taskId}/results?limit=100&min_score=0`);
    items = (r.body?.items ?? []) as typeof items;
    return items.filter((f) => f.zones !== undefined).length >= evaluated;
  });
  return items;
}

/** A frame of a task with a person of `w` x `h` (of the frame) at `cx`, tracked as `track`, scoring `score`. */
function personFrame(
  taskId: string,
  seq: number,
  track: string,
  score: number,
  w: number,
  h: number,
  cx = 0.5,
) {
  const f = risingCarFrame(taskId, seq);
  f.value.objects = [
    {
      label: 'person',
      score,
      track_id: track,
      bbox: { format: 'cxcywh_normalized', cx, cy: 0.5, width: w, height: h },
    },
  ];
  return f;
}

interface ErrorBody {
  error: { code: string; details: { snapshot_reason?: string } };
}

async function picture(
  p: string,
): Promise<{ status: number; bytes: Buffer; headers: Headers; body?: ErrorBody }> {
  const res = await fetch(`${h.svc.url}${p}`, {
    headers: {
      [IDENTITY_HEADER]: signFor({ subject: 'alice', requestId: randomUUID() }, 'results', {
        method: 'GET',
        target: p,
      }),
    },
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = res.headers.get('content-type')?.includes('json')
    ? (JSON.parse(bytes.toString()) as ErrorBody)
    : undefined;
  return { status: res.status, bytes, headers: res.headers, body: json };
}

const keysOf = async (taskId: string) =>
  (await objects.listOlderThan(evidencePrefix(taskId), new Date(Date.now() + 86_400_000), 1000))
    .map((o) => o.key)
    .sort();

describe('pictures of events in the results service', () => {
  it('puts each picture before its row, serves it, and keeps a best shot per track', async () => {
    const taskId = randomUUID();
    const events = await run(taskId);
    expect(stub.armed).toContain(taskId);
    for (const e of events) {
      expect(e).toMatchObject({
        has_snapshot: true,
        snapshot_path: `/v1/vision/tasks/${taskId}/events/${e.id}/snapshot`,
      });
      const got = await picture(e.snapshot_path as string);
      expect(got.status).toBe(200);
      expect(got.bytes.equals(await PicturesStub.jpeg(e.seq))).toBe(true);
      expect(
        (await picture(`${e.snapshot_path as string}?crop=true`)).bytes.equals(
          await PicturesStub.jpeg(e.seq, 4),
        ),
      ).toBe(true);
    }
    // The crossing draws the car's box at seq 5; the lost visit (no car in its frame) the zone's polygon.
    const crossing = stub.asked.find((a) => a.job === taskId && a.seq === 5)!;
    expect(crossing.body.box).toEqual([0.45, expect.closeTo(0.35, 9), 0.55, expect.closeTo(0.45, 9)]);
    const lost = events.find((e) => e.reason === 'lost')!;
    expect(stub.asked.find((a) => a.job === taskId && a.seq === lost.seq)!.body.polygon).toEqual(
      RULES.zones[0].polygon,
    );
    // Car 7's best shot: its first frame (all score 0.9), at most one per step.
    const best = await picture(`/v1/vision/tasks/${taskId}/tracks/7/best_shot`);
    expect(best.status).toBe(200);
    // Every object under the task is named by a row: two per event and two for the best shot.
    expect(await keysOf(taskId)).toHaveLength(2 * events.length + 2);
  });

  it('a step that fails after its pictures were put is run again, linking the same objects without asking again', async () => {
    const taskId = randomUUID();
    const write = jest.spyOn(AnalyticsStore.prototype, 'write');
    write.mockRejectedValueOnce(new Error('the database went away mid-step'));
    const events = await run(taskId);
    expect(write.mock.calls.length).toBeGreaterThan(1);
    for (const e of events) expect(e.has_snapshot).toBe(true);
    // Asked once per picture: the second run found the objects the first put.
    const asked = stub.asked.filter((a) => a.job === taskId).map((a) => a.seq);
    expect(asked).toEqual([...new Set(asked)]);
    expect(await keysOf(taskId)).toHaveLength(2 * events.length + 2);
  });

  it('retention deletes the task’s pictures, a crash’s unnamed objects included', async () => {
    const taskId = randomUUID();
    const events = await run(taskId, new Date(Date.now() + 3_000).toISOString());
    // What a process killed between its pictures and its rows leaves: objects no row names.
    await objects.put(`${evidencePrefix(taskId)}events/${'f'.repeat(32)}.jpg`, Buffer.from('orphan'));
    expect((await keysOf(taskId)).length).toBe(2 * events.length + 3);
    await new Promise((r) => setTimeout(r, 3_500));
    await h.svc.janitor.runOnce();
    expect(await keysOf(taskId)).toEqual([]);
    const r = await picture(`/v1/vision/tasks/${taskId}/events/${events[0].id}/snapshot`);
    expect([r.status, r.body?.error.code]).toEqual([404, 'OP-NOT-FOUND']);
  }, 60_000);
  it('every tracked object of an evaluated frame names a best shot that answers a picture, the fallback saying so', async () => {
    const taskId = randomUUID();
    await created(taskId);
    // 640 x 360 is detected at 416 x 234: 0.01 x 0.03 is 4 x 7 px, too small; 0.03 x 0.15 is 12 x 35 px, 0.45 %
    // of the frame, which the size rule takes; a box at the left edge is the last resort.
    const frames = [
      personFrame(taskId, 0, '21', 0.5, 0.01, 0.03),
      personFrame(taskId, 1, '21', 0.8, 0.01, 0.03),
      personFrame(taskId, 2, '22', 0.9, 0.2, 0.3, 0.05),
      personFrame(taskId, 3, '23', 0.6, 0.03, 0.15),
    ];
    const items = await framesEvaluated(taskId, frames, 4);
    const tracked = items.flatMap((f) => f.objects.filter((o) => o.track_id !== undefined));
    expect(tracked).toHaveLength(4);
    const rules: Record<string, string | null> = {};
    for (const o of tracked) {
      expect(o.best_shot_path).toBe(`/v1/vision/tasks/${taskId}/tracks/${o.track_id}/best_shot`);
      const got = await picture(o.best_shot_path!);
      expect([o.track_id, got.status]).toEqual([o.track_id, 200]);
      rules[o.track_id!] = got.headers.get('x-best-shot-rule');
    }
    expect(rules).toEqual({ '21': 'too_small', '22': 'at_edge', '23': 'met' });
    // The tiny track's best-scoring box (seq 1), the others' only one.
    expect((await picture(`/v1/vision/tasks/${taskId}/tracks/21/best_shot`)).headers.get('x-frame-seq')).toBe(
      '1',
    );

    // A later box that passes replaces the fallback, whatever its score, and its objects go.
    await framesEvaluated(taskId, [personFrame(taskId, 4, '21', 0.35, 0.03, 0.15)], 5);
    const better = await picture(`/v1/vision/tasks/${taskId}/tracks/21/best_shot`);
    expect([better.headers.get('x-frame-seq'), better.headers.get('x-best-shot-rule')]).toEqual(['4', 'met']);
    const keys = await keysOf(taskId);
    expect(keys.filter((k) => k.includes(`/tracks/${Buffer.from('21').toString('hex')}/`))).toEqual([
      `${evidencePrefix(taskId)}tracks/3231/4.crop.jpg`,
      `${evidencePrefix(taskId)}tracks/3231/4.jpg`,
    ]);
  }, 60_000);

  it('a best shot whose frame is gone says so, and the next step that sees its track takes one', async () => {
    const taskId = randomUUID();
    await created(taskId);
    stub.gone.add(0);
    try {
      await framesEvaluated(taskId, [personFrame(taskId, 0, '31', 0.9, 0.05, 0.2)], 1);
    } finally {
      stub.gone.clear();
    }
    const gone = await picture(`/v1/vision/tasks/${taskId}/tracks/31/best_shot`);
    expect([gone.status, gone.body?.error.code, gone.body?.error.details.snapshot_reason]).toEqual([
      404,
      'OP-TASK-NO-SNAPSHOT',
      'frame_gone',
    ]);
    // A lower score than the failed one: a track without a picture takes its best box of the step.
    await framesEvaluated(taskId, [personFrame(taskId, 1, '31', 0.5, 0.05, 0.2)], 2);
    const taken = await picture(`/v1/vision/tasks/${taskId}/tracks/31/best_shot`);
    expect([taken.status, taken.headers.get('x-frame-seq'), taken.headers.get('x-best-shot-rule')]).toEqual([
      200,
      '1',
      'met',
    ]);
    // A failure never hides a stored picture: a better frame that is gone leaves the kept one.
    stub.gone.add(2);
    try {
      await framesEvaluated(taskId, [personFrame(taskId, 2, '31', 0.99, 0.05, 0.2)], 3);
    } finally {
      stub.gone.clear();
    }
    expect((await picture(`/v1/vision/tasks/${taskId}/tracks/31/best_shot`)).headers.get('x-frame-seq')).toBe(
      '1',
    );
  }, 60_000);

  it('a frame that left the ring says so, and a backend that is down costs no wait', async () => {
    stub.gone.add(5);
    const taskId = randomUUID();
    const events = await run(taskId);
    stub.gone.clear();
    const crossing = events.find((e) => e.kind === 'line.crossed')!;
    expect(crossing).toMatchObject({ has_snapshot: false, snapshot_reason: 'frame_gone' });
    expect(crossing.snapshot_path).toBeUndefined();
    const r = await picture(`/v1/vision/tasks/${taskId}/events/${crossing.id}/snapshot`);
    expect([r.status, r.body?.error.code, r.body?.error.details.snapshot_reason]).toEqual([
      404,
      'OP-TASK-NO-SNAPSHOT',
      'frame_gone',
    ]);

    await stub.close();
    const started = Date.now();
    const down = randomUUID();
    const more = await run(down);
    expect(Date.now() - started).toBeLessThan(15_000);
    for (const e of more) expect(e).toMatchObject({ has_snapshot: false, snapshot_reason: 'capture_failed' });
  }, 60_000);
});
