/**
 * Stored stream URLs are sealed (store/stream-url-seal.ts): a new task's column holds no credential, its
 * job still gets the full URL, and rows an earlier release wrote in plain text still run and are sealed
 * at the next start.
 */
import { randomUUID } from 'node:crypto';
import { type Knex, isSealed } from '@vision/shared';
import { StreamUrlSeal, sealStoredStreamUrls } from '../src/store/stream-url-seal';
import { type NewTask, CreateTask } from '../src/use-cases/create-task';
import { sourceOf } from '../src/use-cases/submission';
import { recoverSubmitting } from '../src/workers/crash-recovery';
import { type FakeWorld, fakeWorld, plantCreate } from './fakes';

jest.setTimeout(120_000);

const URL = 'rtsp://admin:Cam3raPass@cam.example.com/live?user=a&pw=Cam3raPw2;password=Cam3raPw3';
const SECRETS = ['Cam3raPass', 'Cam3raPw2', 'Cam3raPw3', 'admin'];
const stream: NewTask = {
  scene_code: 'ship',
  business_threshold: 0.8,
  lower_bound: 0.3,
  source_type: 'stream',
  stream_url: URL,
  stream_url_redacted: 'rtsp://***@cam.example.com/live?user=a&pw=***;password=***',
  retention_days: 90,
};

const storedUrl = async (knex: Knex, taskId: string): Promise<string> =>
  (await knex('tasks').where({ task_id: taskId }).first<{ stream_url: string }>()).stream_url;

let w: FakeWorld;
beforeEach(async () => {
  w = await fakeWorld();
});
afterEach(() => w.db.close());

test('a new task stores its stream URL sealed; its job gets the full URL', async () => {
  const create = new CreateTask(w.ctx);
  const a = await create.create(
    { subject: 'ann', requestId: 'r1' },
    { key: randomUUID(), fingerprint: 'f' },
    async () => stream,
  );
  expect(a.task.status).toBe('running');
  expect(w.inference.sources.get(a.task.task_id)).toEqual({ type: 'stream', url: URL });
  const stored = await storedUrl(w.db.knex, a.task.task_id);
  expect(isSealed(stored)).toBe(true);
  for (const s of SECRETS) expect(stored).not.toContain(s);
  expect(w.ctx.streamUrls.open(stored)).toBe(URL);
});

test('a row written in plain text before sealing still runs, and the next start seals it', async () => {
  // What an earlier release left: a create that died after writing its task, stream URL in plain text.
  const taskId = await plantCreate(
    w.ctx.store,
    { ...stream, subject: 'ann' },
    { key: randomUUID(), fingerprint: 'f', leaseUntil: w.clock.now() },
  );
  const untouched = await plantCreate(
    w.ctx.store,
    { ...stream, subject: 'bob' },
    { key: randomUUID(), fingerprint: 'f', leaseUntil: new Date(w.clock.now().getTime() + 60_000) },
  );
  expect(await storedUrl(w.db.knex, taskId)).toBe(URL);
  await recoverSubmitting(w.ctx);
  expect(w.inference.sources.get(taskId)).toEqual({ type: 'stream', url: URL });

  expect(await sealStoredStreamUrls(w.db.knex, w.ctx.streamUrls, 1)).toBe(2);
  for (const id of [taskId, untouched]) {
    const stored = await storedUrl(w.db.knex, id);
    expect(isSealed(stored)).toBe(true);
    for (const s of SECRETS) expect(stored).not.toContain(s);
    const row = await w.ctx.store.get(id);
    expect(sourceOf(w.ctx, row!)).toEqual({ type: 'stream', url: URL });
  }
  // Sealed rows are left as they are.
  expect(await sealStoredStreamUrls(w.db.knex, w.ctx.streamUrls)).toBe(0);
});

test('a URL sealed under another key is refused, not sent as it is stored', async () => {
  const other = new StreamUrlSeal('another-stream-url-key');
  const row = await w.ctx.store.get(
    await plantCreate(
      w.ctx.store,
      { ...stream, subject: 'ann', stream_url: other.seal(URL) },
      { key: randomUUID(), fingerprint: 'f', leaseUntil: w.clock.now() },
    ),
  );
  expect(() => sourceOf(w.ctx, row!)).toThrow(/cannot be unsealed/);
  expect(() => new StreamUrlSeal('short')).toThrow(/TASKS_STREAM_URL_KEY must have at least 16 characters/);
});
