/**
 * How a read of results learns how far a task's evaluation has come (FramesStore.readable): nothing for a task
 * without rules; for one with rules, the `as_of_seq` each step writes beside its snapshot, or the snapshot itself
 * when the row's last step did not write it (a row from before that column, or from a release without it while a
 * new one rolls out).
 */
import { TOPICS } from '@vision/shared';
import {
  frameMessage,
  publishFrames,
  publishTaskEvent,
  startHarness,
  waitFor,
  type Harness,
} from './helpers';

jest.setTimeout(120_000);

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const RULES = {
  zones: [
    {
      id: 'all',
      polygon: [
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
      ],
    },
  ],
  lines: [],
};

async function withRules(taskId: string, frames: number): Promise<void> {
  await publishTaskEvent(h.bus, taskId, { rules: RULES });
  await waitFor('the rules known', async () =>
    Boolean(await h.svc.db.knex('analytics_tasks').where({ task_id: taskId }).first()),
  );
  await h.bus.publish(
    TOPICS.frames,
    Array.from({ length: frames }, (_, seq) => frameMessage(taskId, seq, [{ label: 'car', score: 0.9 }])),
  );
  await waitFor(
    'every frame evaluated',
    async () => (await h.svc.frames.readable(taskId, -1, 1)).asOfSeq === frames - 1,
  );
}

/** Rewrites the row as a step of a release that keeps no `as_of_seq` would: a snapshot and rev, nothing else. */
async function stepWithoutProgress(taskId: string, asOfSeq: number): Promise<void> {
  const row = (await h.svc.db
    .knex('analytics_tasks')
    .where({ task_id: taskId })
    .first('snapshot', 'rev')) as {
    snapshot: string;
    rev: string | number;
  };
  const snapshot = { ...(JSON.parse(row.snapshot) as Record<string, unknown>), as_of_seq: asOfSeq };
  await h.svc.db
    .knex('analytics_tasks')
    .where({ task_id: taskId })
    .update({ snapshot: JSON.stringify(snapshot), rev: Number(row.rev) + 1 });
}

test('a task without rules has no evaluation to wait for', async () => {
  await publishFrames(h.bus, 'plain', 0, 5);
  await waitFor('the frames stored', async () => (await h.svc.frames.lastSeq('plain')) === 4);
  const read = await h.svc.frames.readable('plain', -1, 10);
  expect(read.frames.map((f) => f.seq)).toEqual([0, 1, 2, 3, 4]);
  expect(read).not.toHaveProperty('asOfSeq');
});

test("a task with rules reads its progress from the column each step writes, and from the snapshot when the row's last step did not write it", async () => {
  await withRules('ruled', 6);
  const read = await h.svc.frames.readable('ruled', 1, 10);
  expect(read.frames.map((f) => f.seq)).toEqual([2, 3, 4, 5]);
  expect(read.asOfSeq).toBe(5);

  await stepWithoutProgress('ruled', 3);
  expect((await h.svc.frames.readable('ruled', 1, 10)).asOfSeq).toBe(3);
  const page = await h.get('ruled', 'alice', { limit: '10' });
  expect(page.body.items.map((f) => f.frame_id)).toEqual(['ruled-f0', 'ruled-f1', 'ruled-f2', 'ruled-f3']);
  expect(page.body.next_cursor).not.toBe('');

  // A row from before the column: both NULL.
  await h.svc.db
    .knex('analytics_tasks')
    .where({ task_id: 'ruled' })
    .update({ as_of_seq: null, as_of_rev: null });
  expect((await h.svc.frames.readable('ruled', -1, 10)).asOfSeq).toBe(3);
});
