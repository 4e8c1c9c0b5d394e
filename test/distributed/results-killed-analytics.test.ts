/**
 * Zones and lines survive a results process killed mid-task, on real Kafka and Postgres: a live task with a zone
 * and a line runs while results is SIGKILLed and started again. Afterwards its stored events are exactly those a
 * replay of the same rules over the stored frames gives (the uninterrupted evaluation): none lost, none twice,
 * same ids; every stored frame carries its zone annotations once.
 */
import { randomUUID } from 'node:crypto';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import { FLOOR } from '../helpers/places';
import { client, clip, describeDistributed, startFaultStack, waitFor } from './support';

const RULES = {
  zones: [{ ...FLOOR, occupancy: [{ label: '*', over: 2 }] }],
  lines: [
    { id: 'mid', start: [0.5, 0], end: [0.5, 1], labels: ['person'] },
    { id: 'across', start: [0, 0.6], end: [1, 0.6], labels: ['person'] },
  ],
};

describeDistributed(
  'fault: the results process is SIGKILLed while it evaluates a task’s zones and lines',
  () => {
    let stack: DistributedStack;
    let media: MediaServer;
    beforeAll(async () => {
      stack = await startFaultStack({
        // Ingested frames wait 2 s for others to share their INSERT: whenever results is killed, frames it has
        // read from the bus are not stored yet, and are lost unless their offsets wait for the write.
        env: {
          TASKS_POLL_INTERVAL_MS: '300',
          RESULTS_STREAM_POLL_MS: '100',
          RESULTS_INGEST_LINGER_MS: '2000',
        },
      });
      media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
    }, 180_000);
    afterAll(async () => {
      await media?.close();
      await stack?.close();
    });

    it('no event is lost or doubled: the stored events equal a replay of the same rules', async () => {
      const c = client(stack);
      const created = await c.api('POST', '/v1/vision/tasks', {
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({
          scene_code: 'person_vehicle',
          stream_url: `${media.url}/live/pedestrians.mov`,
          ...RULES,
        }),
      });
      expect(created.status).toBe(201);
      const taskId = created.body.task_id as string;
      const eventsNow = async (): Promise<Record<string, unknown>[]> => {
        const out: Record<string, unknown>[] = [];
        let cursor = '';
        for (;;) {
          const r = await c.api(
            'GET',
            `/v1/vision/tasks/${taskId}/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`,
          );
          expect(r.status).toBe(200);
          out.push(...r.body.items);
          if (r.body.next_cursor === '' || r.body.items.length === 0) return out;
          cursor = r.body.next_cursor;
        }
      };
      await waitFor(
        'the first events',
        async () => ((await eventsNow()).length >= 3 ? true : undefined),
        120_000,
      );
      await stack.kill('results', { signal: 'SIGKILL' });
      // Frames keep coming on the bus while results is down.
      await new Promise((r) => setTimeout(r, 3000));
      await stack.restart('results');
      const before = (await eventsNow()).length;
      await waitFor(
        'events after the restart',
        async () => ((await eventsNow()).length > before + 2 ? true : undefined),
        120_000,
      );
      expect((await c.api('POST', `/v1/vision/tasks/${taskId}/stop`)).status).toBe(200);
      await c.waitForStatus(taskId, ['stopped']);

      const finished = async (): Promise<boolean> => {
        let cursor = '';
        for (;;) {
          const r = await c.api(
            'GET',
            `/v1/vision/tasks/${taskId}/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`,
          );
          if (r.body.next_cursor === '') return true;
          if (r.body.items.length === 0) return false;
          cursor = r.body.next_cursor;
        }
      };
      const stored = await waitFor(
        'every frame evaluated',
        async () => ((await finished()) ? await eventsNow() : undefined),
        120_000,
      );

      const replay = await c.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...RULES, max_events: 10_000 }),
      });
      expect(replay.status).toBe(200);
      expect(replay.body.events_total).toBeLessThanOrEqual(10_000);
      expect(stored.length).toBeGreaterThan(before);
      expect(new Set(stored.map((e) => e.id)).size).toBe(stored.length);
      expect(stored.map((e) => JSON.stringify(e))).toEqual(
        (replay.body.events as unknown[]).map((e) => JSON.stringify(e)),
      );
      const summary = await c.api('GET', `/v1/vision/tasks/${taskId}/analytics`);
      expect(summary.body).toEqual(replay.body.analytics);
      const frames = await c.allFrames(taskId, 500);
      expect(frames.length).toBe(replay.body.frames);
      // No frame was lost across the kill: the stored seqs (frame ids end in them) run from 0 without a gap.
      expect(frames.map((f) => Number(f.frame_id.slice(f.frame_id.lastIndexOf(':') + 1)))).toEqual(
        frames.map((_, i) => i),
      );
      expect(frames.every((f) => (f as unknown as { zones?: unknown }).zones !== undefined)).toBe(true);
      // No event claims a picture the kill lost (docs/EVIDENCE.md): each one says it is stored.
      const pictured = stored.filter((e) => e.has_snapshot === true);
      expect(pictured.length).toBeGreaterThan(0);
      for (const e of pictured) {
        const res = await c.picture(String(e.snapshot_path));
        expect([e.id, res.status, res.bytes.subarray(0, 2).toString('hex')]).toEqual([e.id, 200, 'ffd8']);
      }
    }, 420_000);
  },
);
