/**
 * The pictures of events on the distributed deployment (docs/EVIDENCE.md): two results replicas share a
 * live task's evaluation while one of them is SIGKILLed and started again, and then the inference backend is
 * SIGKILLed and started again (tasks starts the lost job anew). Afterwards every event that says it has a picture
 * has it: a JPEG of its own frame, the same bytes from either replica; one without says why, from the closed list.
 */
import { randomUUID } from 'node:crypto';
import { SNAPSHOT_REASONS } from '@vision/shared';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import { FLOOR } from '../helpers/places';
import { client, clip, describeDistributed, KEY, sleep, startFaultStack, waitFor } from './support';

const RULES = {
  zones: [FLOOR],
  lines: [{ id: 'mid', start: [0.5, 0], end: [0.5, 1], labels: ['person'] }],
};

type Event = Record<string, unknown> & { id: string; seq: number; has_snapshot: boolean };

describeDistributed('fault: results and inference are SIGKILLed while a task’s pictures are taken', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    stack = await startFaultStack({
      replicas: { results: 2 },
      env: { TASKS_POLL_INTERVAL_MS: '300', RESULTS_STREAM_POLL_MS: '100' },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
  }, 180_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  it('no event claims a picture that is not stored', async () => {
    const c = client(stack);
    const created = await c.api('POST', '/v1/vision/tasks', {
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        scene_code: 'person_vehicle',
        stream_url: `${media.url}/live/pedestrians.mov`,
        ...RULES,
      }),
    });
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    const taskId = created.body.task_id as string;
    const events = async (): Promise<{ items: Event[]; done: boolean }> => {
      const items: Event[] = [];
      let cursor = '';
      for (;;) {
        const r = await c.api(
          'GET',
          `/v1/vision/tasks/${taskId}/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`,
        );
        // A replica just killed answers the gateway's call in flight with 503: again, once it is back.
        if (r.status === 503) {
          await sleep(500);
          continue;
        }
        expect(r.status).toBe(200);
        items.push(...(r.body.items as Event[]));
        if (r.body.next_cursor === '') return { items, done: true };
        if (r.body.items.length === 0) return { items, done: false };
        cursor = r.body.next_cursor as string;
      }
    };
    const more = async (n: number) => {
      const before = (await events()).items.length;
      await waitFor(
        `${n} more events`,
        async () => ((await events()).items.length >= before + n ? true : undefined),
        120_000,
      );
    };
    await more(3);
    await stack.kill('results', { signal: 'SIGKILL', index: 0 });
    // Frames keep coming while it is down; the other replica takes its partitions over.
    await sleep(3000);
    await stack.restart('results', { index: 0 });
    await more(2);
    await stack.kill('inference', { signal: 'SIGKILL' });
    await stack.restart('inference');
    await more(2);
    expect((await c.api('POST', `/v1/vision/tasks/${taskId}/stop`)).status).toBe(200);
    await c.waitForStatus(taskId, ['stopped']);
    const { items } = await waitFor(
      'every frame evaluated',
      async () => {
        const r = await events();
        return r.done ? r : undefined;
      },
      120_000,
    );

    const pictured = items.filter((e) => e.has_snapshot);
    expect(pictured.length).toBeGreaterThan(0);
    for (const e of items) if (!e.has_snapshot) expect(SNAPSHOT_REASONS).toContain(e.snapshot_reason);
    // Read one after the other, each twice (the balancer spreads them over both replicas), within the key's rate.
    const read = async (p: string) => {
      for (;;) {
        const res = await fetch(`${stack.url}${p}`, { headers: { authorization: `Bearer ${KEY}` } });
        const bytes = Buffer.from(await res.arrayBuffer());
        if (res.status !== 429) return { status: res.status, seq: res.headers.get('x-frame-seq'), bytes };
        await sleep(1000);
      }
    };
    for (const e of pictured) {
      const reads = [await read(e.snapshot_path as string), await read(e.snapshot_path as string)];
      for (const r of reads)
        expect([e.id, r.status, r.seq, r.bytes.subarray(0, 2).toString('hex')]).toEqual([
          e.id,
          200,
          String(e.seq),
          'ffd8',
        ]);
      expect(reads[0].bytes.equals(reads[1].bytes)).toBe(true);
    }
  }, 480_000);
});
