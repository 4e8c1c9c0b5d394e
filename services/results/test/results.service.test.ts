import { generateKeyPairSync } from 'node:crypto';
import {
  IDENTITY_HEADER,
  TOPICS,
  loadJobGrantKey,
  metrics,
  signIdentity,
  signJobGrant,
} from '@vision/shared';
import { identityDir, jobGrantFor } from '../../../test/helpers/identity';
import { FrameWriter } from '../src/workers/frame-writer';
import { framesBatchHandler } from '../src/workers/ingest';
import {
  endMessage,
  frameMessage,
  logger,
  publishFrames,
  publishTaskEvent,
  startHarness,
  taskBody,
  waitFor,
  type Harness,
  type Reply,
} from './helpers';

let h: Harness;

beforeEach(async () => {
  h = await startHarness({ RESULTS_DELETE_BATCH: '1000' });
});

afterEach(async () => {
  await h.close();
});

const count = (taskId: string) => h.svc.frames.count(taskId);
const known = async (taskId: string) => (await h.svc.tasks.get(taskId))?.meta !== undefined;

/** Pages through a task from its first frame until next_cursor is empty (or maxPages). */
async function readAll(taskId: string, subject: string, query: Record<string, string>, maxPages = 1000) {
  const ids: string[] = [];
  let cursor = '';
  for (let i = 0; i < maxPages; i++) {
    const r = await h.get(taskId, subject, cursor ? { ...query, cursor } : query);
    expect(r.status).toBe(200);
    ids.push(...r.body.items.map((f) => f.frame_id));
    if (r.body.next_cursor === '') return { ids, pages: i + 1 };
    cursor = r.body.next_cursor;
  }
  throw new Error('did not reach the last page');
}

const expectReason = (r: Reply, reason: string) => {
  expect(r.status).toBe(400);
  expect(r.body.error?.code).toBe('OP-TASK-REQUEST-INVALID');
  expect(r.body.error?.details?.reason).toBe(reason);
};

describe('ingest', () => {
  it('stores a redelivered frame once', async () => {
    await publishTaskEvent(h.bus, 'dup');
    await publishFrames(h.bus, 'dup', 0, 10);
    await publishFrames(h.bus, 'dup', 0, 15); // 0..9 again, then 10..14
    await h.bus.publish(TOPICS.frames, [endMessage('dup', 15)]);
    await waitFor('end marker', async () => (await h.svc.tasks.get('dup'))?.end !== undefined);
    expect(await count('dup')).toBe(15);
    const { ids } = await readAll('dup', 'alice', { limit: '4' });
    expect(ids).toEqual(Array.from({ length: 15 }, (_, i) => `dup-f${i}`));
  });

  it('a batch handled twice (redelivery after a failure) changes nothing the second time', async () => {
    const writer = new FrameWriter(h.svc.frames, h.svc.tasks, h.clock);
    const handle = framesBatchHandler({
      frames: h.svc.frames,
      tasks: h.svc.tasks,
      writer,
      clock: h.clock,
      logger,
      grantKey: loadJobGrantKey(identityDir()),
      fences: h.svc.fences,
    });
    const batch = [0, 1, 2, 1, 0].map((seq, i) => ({
      topic: TOPICS.frames,
      partition: 0,
      offset: String(i),
      headers: {},
      ...frameMessage('redeliver', seq, [{ label: 'person', score: 0.9 }]),
    }));
    await handle(batch);
    await handle(batch);
    expect(await count('redeliver')).toBe(3);
  });

  it("stores a frame or an end only under tasks' grant for its own task", async () => {
    await publishTaskEvent(h.bus, 'victim');
    const refused = async () =>
      (await metrics.framesRefused.family.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await refused();
    const forged = signJobGrant(
      { issuer: 'tasks', key: generateKeyPairSync('ed25519').privateKey },
      { task_id: 'victim', job_id: 'victim', subject: 'alice', scene_code: 'person_vehicle' },
    );
    const withGrant = (m: ReturnType<typeof frameMessage>, grant: string | undefined) => ({
      ...m,
      value: { ...m.value, grant },
    });
    await h.bus.publish(TOPICS.frames, [
      // The grant of a task this publisher was given, on a frame of another task.
      withGrant(frameMessage('victim', 0), jobGrantFor('other-task')),
      // No grant, a grant not signed by tasks, a grant that is not one.
      withGrant(frameMessage('victim', 1), undefined),
      withGrant(frameMessage('victim', 2), forged),
      withGrant(frameMessage('victim', 3), 'x.y'),
      {
        ...endMessage('victim', 9),
        value: { ...endMessage('victim', 9).value, grant: jobGrantFor('other-task') },
      },
      frameMessage('victim', 4),
    ]);
    await waitFor('the granted frame', async () => (await count('victim')) === 1);
    const page = await h.get('victim', 'alice', {});
    expect(page.body.items.map((f) => f.frame_id)).toEqual(['victim-f4']);
    expect((await h.svc.tasks.get('victim'))?.end).toBeUndefined();
    expect((await refused()) - before).toBe(5);
  });

  it('skips a malformed message without blocking the frames after it', async () => {
    await publishTaskEvent(h.bus, 'poison');
    await h.bus.publish(TOPICS.frames, [
      frameMessage('poison', 0),
      { key: 'poison', value: { schema: 1, type: 'frame', task_id: 'poison', seq: 'x' } },
      frameMessage('poison', 1),
    ]);
    await waitFor('frames after the bad one', async () => (await count('poison')) === 2);
  });
});

describe('paging', () => {
  it('pages 10,000 stored frames by 500: every frame once, in order, then an empty cursor', async () => {
    await publishTaskEvent(h.bus, 'big', { status: 'succeeded' });
    await publishFrames(h.bus, 'big', 0, 10_000, [{ label: 'person', score: 0.9 }]);
    await h.bus.publish(TOPICS.frames, [endMessage('big', 10_000)]);
    await waitFor('end marker', async () => (await h.svc.tasks.get('big'))?.end !== undefined, 60_000);
    const { ids, pages } = await readAll('big', 'alice', { limit: '500' });
    expect(pages).toBe(20);
    expect(ids).toEqual(Array.from({ length: 10_000 }, (_, i) => `big-f${i}`));

    // A page is an ordered primary-key range scan that stops at the limit, not a scan of the task.
    await h.svc.janitor.runOnce(); // refreshes planner statistics (PGlite has no autovacuum)
    const plan = (await h.svc.db.knex.raw(
      'EXPLAIN SELECT * FROM result_frames WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      ['big', 500, 501],
    )) as { rows: { 'QUERY PLAN': string }[] };
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Scan using result_frames_pkey/);
    expect(text).not.toMatch(/Sort|Seq Scan|Bitmap/);
  });

  it('uses 100 frames per page by default and keeps frame fields', async () => {
    await publishTaskEvent(h.bus, 'deflt');
    await publishFrames(h.bus, 'deflt', 0, 150, [{ label: 'car', score: 0.95, track_id: 't9' }]);
    await waitFor('frames', async () => (await count('deflt')) === 150);
    const r = await h.get('deflt', 'alice');
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(100);
    expect(r.body.items[7]).toEqual({
      frame_id: 'deflt-f7',
      frame_time_ms: 7000,
      image: { width: 640, height: 360 },
      objects: [
        {
          label: 'car',
          score: 0.95,
          bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.1, height: 0.2 },
          track_id: 't9',
        },
      ],
    });
  });

  it('polling a running task while frames keep arriving never misses or repeats a frame', async () => {
    // Seeded so a failure can be replayed.
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    await publishTaskEvent(h.bus, 'live');
    const seen: string[] = [];
    let cursor = '';
    const poll = async () => {
      const r = await h.get('live', 'alice', cursor ? { cursor, limit: '13' } : { limit: '13' });
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((f) => f.frame_id));
      return r;
    };

    let published = 0;
    for (let chunk = 1; published < 600; chunk++) {
      const n = 1 + rand(40);
      await publishFrames(h.bus, 'live', published, published + n);
      published += n;
      // Reads race with ingestion: some see part of what was just published.
      for (let i = rand(4); i > 0; i--) {
        const r = await poll();
        expect(r.body.next_cursor).not.toBe('');
        cursor = r.body.next_cursor;
      }
      if (chunk % 5 === 0) {
        // Caught up with a running task: an empty page that still carries a resumable cursor.
        const target = published;
        await waitFor('ingest', async () => (await count('live')) === target);
        for (;;) {
          const r = await poll();
          expect(r.body.next_cursor).not.toBe('');
          cursor = r.body.next_cursor;
          if (r.body.items.length === 0) break;
        }
        expect(seen).toHaveLength(published);
      }
    }
    await publishTaskEvent(h.bus, 'live', { status: 'succeeded', occurred_at: '2026-01-01T00:05:00.000Z' });
    await h.bus.publish(TOPICS.frames, [endMessage('live', published)]);
    for (let polls = 0; ; polls++) {
      expect(polls).toBeLessThan(10_000);
      const r = await poll();
      if (r.body.next_cursor === '') break;
      cursor = r.body.next_cursor;
      if (r.body.items.length === 0) await new Promise((res) => setTimeout(res, 5));
    }
    expect(seen).toEqual(Array.from({ length: published }, (_, i) => `live-f${i}`));
  });

  it('a running task with no frames yet answers an empty page with a cursor', async () => {
    await publishTaskEvent(h.bus, 'fresh');
    await waitFor('task event', () => known('fresh'));
    const r = await h.get('fresh', 'alice');
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([]);
    expect(r.body.next_cursor).not.toBe('');
    await publishFrames(h.bus, 'fresh', 0, 3);
    await waitFor('frames', async () => (await count('fresh')) === 3);
    const r2 = await h.get('fresh', 'alice', { cursor: r.body.next_cursor });
    expect(r2.body.items.map((f) => f.frame_id)).toEqual(['fresh-f0', 'fresh-f1', 'fresh-f2']);
  });

  it('a stopped task without an end marker ends after the grace period; a refunded task at once', async () => {
    await publishTaskEvent(h.bus, 'lost', { status: 'failed', occurred_at: '2026-01-01T00:00:00.000Z' });
    await publishFrames(h.bus, 'lost', 0, 2);
    await publishTaskEvent(h.bus, 'refund', { status: 'refunded' });
    await waitFor('events and frames', async () => (await known('refund')) && (await count('lost')) === 2);
    const early = await h.get('lost', 'alice');
    expect(early.body.items).toHaveLength(2);
    expect(early.body.next_cursor).not.toBe('');
    h.clock.advance(5 * 60 * 1000);
    const late = await h.get('lost', 'alice', { cursor: early.body.next_cursor });
    expect(late.body).toEqual({ items: [], next_cursor: '' });
    expect((await h.get('refund', 'alice')).body).toEqual({ items: [], next_cursor: '' });
  });
});

describe('cursor checks', () => {
  beforeEach(async () => {
    await publishTaskEvent(h.bus, 'ca');
    await publishTaskEvent(h.bus, 'cb');
    await publishFrames(h.bus, 'ca', 0, 5);
    await publishFrames(h.bus, 'cb', 0, 5);
    await waitFor(
      'frames',
      async () => (await count('ca')) === 5 && (await count('cb')) === 5 && (await known('cb')),
    );
  });

  it('rejects a tampered, forged or garbage cursor', async () => {
    const first = await h.get('ca', 'alice', { limit: '2' });
    const c = first.body.next_cursor;
    const [payload, mac] = c.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ v: 1, t: 'ca', s: 0 })).toString('base64url');
    for (const bad of [
      `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `${forgedPayload}.${mac}`,
      'not-a-cursor',
      `${payload}`,
    ])
      expectReason(await h.get('ca', 'alice', { cursor: bad }), 'invalid_cursor');
    // The genuine cursor still works.
    const second = await h.get('ca', 'alice', { cursor: c, limit: '2' });
    expect(second.body.items.map((f) => f.frame_id)).toEqual(['ca-f2', 'ca-f3']);
  });

  it("rejects another task's cursor, even of the same owner", async () => {
    const other = await h.get('cb', 'alice', { limit: '2' });
    expectReason(await h.get('ca', 'alice', { cursor: other.body.next_cursor }), 'invalid_cursor');
  });

  it('rejects invalid limit, min_score and unknown parameters', async () => {
    expectReason(await h.get('ca', 'alice', { limit: '0' }), 'invalid_limit');
    expectReason(await h.get('ca', 'alice', { limit: '501' }), 'invalid_limit');
    expectReason(await h.get('ca', 'alice', { min_score: '1.5' }), 'invalid_min_score');
    expectReason(await h.get('ca', 'alice', { min_score: 'high' }), 'invalid_min_score');
    expectReason(await h.get('ca', 'alice', { offset: '3' }), 'unknown_field');
    expect((await h.get('ca', 'alice', { limit: '500' })).status).toBe(200);
  });
});

describe('score filter', () => {
  const objects = [
    { label: 'person', score: 0.2 }, // under the lower bound: not stored
    { label: 'person', score: 0.35 },
    { label: 'car', score: 0.5 },
    { label: 'car', score: 0.8 },
    { label: 'person', score: 0.95 },
  ];

  beforeEach(async () => {
    await publishTaskEvent(h.bus, 'sc', { business_threshold: 0.8, lower_bound: 0.3 });
    await publishTaskEvent(h.bus, 'sc70', { business_threshold: 0.7, lower_bound: 0.3 });
    await publishFrames(h.bus, 'sc', 0, 3, objects);
    await publishFrames(h.bus, 'sc70', 0, 1, objects);
    await waitFor(
      'frames',
      async () => (await count('sc')) === 3 && (await count('sc70')) === 1 && (await known('sc70')),
    );
  });

  const scores = (r: Reply) => r.body.items[0].objects.map((o) => o.score);

  it("applies the task's frozen business threshold when min_score is absent, without objects_total", async () => {
    const r = await h.get('sc', 'alice');
    expect(scores(r)).toEqual([0.8, 0.95]);
    expect(r.body.items[0]).not.toHaveProperty('objects_total');
    expect(r.headers.get('x-min-score-applied')).toBe('0.8');
    const r70 = await h.get('sc70', 'alice');
    expect(scores(r70)).toEqual([0.5, 0.8, 0.95].filter((s) => s >= 0.7));
  });

  it('selects among stored detections with min_score and reports objects_total', async () => {
    const r = await h.get('sc', 'alice', { min_score: '0.5' });
    expect(scores(r)).toEqual([0.5, 0.8, 0.95]);
    expect(r.body.items.every((f) => f.objects_total === 4)).toBe(true);
  });

  it('clamps a min_score under the lower bound to it, without an error', async () => {
    for (const min of ['0.1', '0']) {
      const r = await h.get('sc', 'alice', { min_score: min });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-min-score-applied')).toBe('0.3');
      expect(scores(r)).toEqual([0.35, 0.5, 0.8, 0.95]);
      expect(r.body.items[0].objects_total).toBe(4);
    }
  });

  it('keeps frames whose objects are all filtered out', async () => {
    const r = await h.get('sc', 'alice', { min_score: '1' });
    expect(r.body.items).toHaveLength(3);
    expect(r.body.items.every((f) => f.objects.length === 0 && f.objects_total === 4)).toBe(true);
  });
});

describe('ownership, lookup fallback and retention', () => {
  it("answers 404 for another subject's task and for an unknown id", async () => {
    await publishTaskEvent(h.bus, 'mine', { subject: 'alice' });
    await publishFrames(h.bus, 'mine', 0, 2);
    await waitFor('frames', async () => (await count('mine')) === 2 && (await known('mine')));
    const other = await h.get('mine', 'mallory');
    expect(other.status).toBe(404);
    expect(other.body.error?.code).toBe('OP-NOT-FOUND');
    expect((await h.get('nope', 'alice')).status).toBe(404);
    expect((await h.get('mine', 'alice')).status).toBe(200);
  });

  it('refuses a request without a valid identity', async () => {
    const res = await fetch(`${h.svc.url}/v1/vision/tasks/x/results`);
    expect(res.status).toBe(401);
    const forged = await fetch(`${h.svc.url}/v1/vision/tasks/x/results`, {
      headers: {
        [IDENTITY_HEADER]: signIdentity(
          { issuer: 'gateway', key: generateKeyPairSync('ed25519').privateKey },
          { subject: 'alice', requestId: 'r' },
          'results',
          { method: 'GET', target: '/v1/vision/tasks/x/results' },
        ),
      },
    });
    expect(forged.status).toBe(401);
  });

  it('asks tasks when a read arrives before the task event, once, as the caller', async () => {
    h.tasksStub.tasks.set('early', taskBody('early', { subject: 'bob', business_threshold: 0.6 }));
    await publishFrames(h.bus, 'early', 0, 3, [{ label: 'car', score: 0.65 }]);
    await waitFor('frames', async () => (await count('early')) === 3);
    const [a, b] = await Promise.all([h.get('early', 'bob'), h.get('early', 'bob')]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.items[0].objects).toHaveLength(1); // business threshold 0.6 from tasks
    expect(h.tasksStub.calls).toEqual([{ taskId: 'early', subject: 'bob' }]);
    expect((await h.get('early', 'mallory')).status).toBe(404);
    expect(h.tasksStub.calls).toHaveLength(1); // cached
    // A later event fills in the same record.
    await publishTaskEvent(h.bus, 'early', {
      subject: 'bob',
      business_threshold: 0.6,
      status: 'succeeded',
      occurred_at: '2026-01-01T00:01:00.000Z',
    });
    await h.bus.publish(TOPICS.frames, [endMessage('early', 3)]);
    await waitFor('end', async () => (await h.svc.tasks.get('early'))?.meta?.status === 'succeeded');
    await waitFor('end marker', async () => (await h.svc.tasks.get('early'))?.end !== undefined);
    expect((await h.get('early', 'bob')).body.next_cursor).toBe('');
  });

  it('answers 404 when neither an event nor tasks knows the task, and 503 when tasks is down', async () => {
    expect((await h.get('ghost', 'alice')).status).toBe(404);
    expect(h.tasksStub.calls).toHaveLength(1);
    await h.tasksStub.close();
    const down = await h.get('ghost2', 'alice');
    expect(down.status).toBe(503);
    expect(down.body.error?.code).toBe('OP-SYS-UNAVAILABLE');
  });

  it('the janitor deletes the frames of expired tasks in bounded batches; their results answer 404', async () => {
    await publishTaskEvent(h.bus, 'old', { result_expires_at: '2026-01-02T00:00:00.000Z' });
    await publishTaskEvent(h.bus, 'keep', { result_expires_at: '2026-04-01T00:00:00.000Z' });
    await publishFrames(h.bus, 'old', 0, 2_500);
    await publishFrames(h.bus, 'keep', 0, 10);
    await waitFor('frames', async () => (await count('old')) === 2_500 && (await count('keep')) === 10);
    await waitFor('events', async () => (await known('old')) && (await known('keep')));

    expect(await h.svc.janitor.runOnce()).toMatchObject({ tasksPurged: 0, framesDeleted: 0 });
    expect((await h.get('old', 'alice')).status).toBe(200);

    h.clock.set('2026-01-02T00:00:00Z');
    expect((await h.get('old', 'alice')).status).toBe(404); // expired even before the janitor ran
    const run = await h.svc.janitor.runOnce();
    expect(run).toMatchObject({ tasksPurged: 1, framesDeleted: 2_500 });
    expect(await count('old')).toBe(0);
    expect(await count('keep')).toBe(10);
    expect((await h.get('old', 'alice')).status).toBe(404);
    expect((await h.get('keep', 'alice')).status).toBe(200);
    expect(await h.svc.janitor.runOnce()).toMatchObject({ tasksPurged: 0, framesDeleted: 0 });
    expect(h.tasksStub.calls).toHaveLength(0); // the tombstone answers; no lookup
  });
});
